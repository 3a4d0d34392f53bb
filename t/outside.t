#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# malloc_watch outside=: memory that grows outside the allocator (a
# library's own mmap, as LuaJIT's) fires the watch once per size of
# growth, logged at notice with the parts that grew and the mappings
# that grew most (their ranges, as the worker's smaps has them), and
# shown on the state page; the allocator's own growth does not fire it
# and names no mapping, and nothing is logged again while nothing grows.

use strict;
use warnings;
no warnings qw(portable);

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(sleep);
use MallocTest qw(poll_until);

my $MB = 1024 * 1024;

my $t = MallocTest->new(workers => 2, log_level => 'notice',
                        http => 'malloc_watch outside=32m;')->start;
my @pids = $t->worker_pids;
my %to = map { $_ => [$t->ports_to($_, 2)] } @pids;

sub outside { $t->get('/malloc/')->{json}{watch}{outside} }
sub firings { scalar(() = $t->log_text =~ /RSS outside malloc grew/g) }

# a worker as GET /malloc/ shows it
sub worker_of {
    my ($pid) = @_;
    my ($w) = grep { ($_->{pid} // 0) == $pid }
        @{$t->get('/malloc/')->{json}{workers} || []};
    return $w || {};
}

# the ranges of a process's mappings now, "start-end" in hex as numbers
sub ranges_of {
    my ($pid) = @_;
    my %r;
    open(my $f, '<', "/proc/$pid/smaps") or return \%r;
    while (<$f>) {
        $r{sprintf('%x-%x', hex $1, hex $2)} = 1
            if /^([0-9a-f]+)-([0-9a-f]+) /;
    }
    return \%r;
}

sub range { sprintf('%x-%x', hex $_[0]{start}, hex $_[0]{end}) }

my $o = outside();
is($o->{size}, 32 * $MB, 'GET /: watch.outside.size');
is($o->{firings}, 0, 'no firing yet');
is($o->{last_firing}, undef, 'no last firing');
is($o->{last_text}, undef, 'no text');
is($o->{last_mappings}, undef, 'no mappings');

# the allocator's growth is the heap's: it does not fire outside=

is($t->http_from($to{$pids[1]}[0], 'GET', '/t/alloc?mb=64')->{status}, 200,
   '64 MiB allocated by malloc in worker 1');
sleep 3;
is(outside()->{firings}, 0, 'growth in the allocator: no outside firing');
is(worker_of($pids[1])->{outside_malloc}, undef,
   'GET /: nothing outside malloc in worker 1, no mapping named');

# 64 MiB mapped and touched outside malloc in worker 0: one firing

is($t->http_from($to{$pids[0]}[0], 'GET', '/t/alloc?map=64')->{json}{mapped},
   64, '64 MiB mapped in worker 0');
$o = poll_until(10, sub { my $x = outside(); $x->{firings} ? $x : undef });
is($o && $o->{firings}, 1, 'one firing');
ok($o && $o->{last_grew} >= 32 * $MB, "it grew by $o->{last_grew} bytes");
is($o && $o->{last_pid}, $pids[0], 'worker 0 named by its pid');
is($o && $o->{last_worker}, 0, 'and its number');
like($o && $o->{last_firing}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
     'the time of the firing');
like($o && $o->{last_text},
     qr/the growth is outside malloc, and heap profiles cannot show it/,
     'the text: a heap profile cannot show it');
like($o && $o->{last_text}, qr/Grew most: other_anonymous \+[\d.]+ MiB/,
     'the text names the part that grew most');

# the mappings that grew: the test module's 64 MiB first, with its range

my $maps = $o && ref $o->{last_mappings} eq 'ARRAY' ? $o->{last_mappings}
                                                    : [];
my $m = $maps->[0] || {};
ok(@$maps >= 1 && @$maps <= 5, 'GET /: ' . @$maps . ' mappings named');
ok(($m->{grew} // 0) >= 63 * $MB,
   "the first grew by $m->{grew} bytes, about the 64 MiB mapped");
is($m->{kind}, 'anonymous', 'an anonymous mapping');
is($m->{name}, '', 'with no name');
like($m->{start} // '', qr/^0x[0-9a-f]+$/, "its start, $m->{start}");
like($m->{end} // '', qr/^0x[0-9a-f]+$/, "its end, $m->{end}");
ok(hex($m->{end} // 0) - hex($m->{start} // 0) >= 64 * $MB,
   'its range holds the 64 MiB');
ok(!grep({ $_->{grew} < $MB || $_->{grew} > $_->{rss} } @$maps),
   'each grew by a MiB or more, and by no more than it holds');
ok(!grep({ $maps->[$_ - 1]{grew} < $maps->[$_]{grew} } 1 .. $#$maps),
   'most first');

SKIP: {
    skip 'not root: another user\'s smaps', 1 if $> != 0;
    my $ranges = ranges_of($pids[0]);
    is(join(' ', grep { !$ranges->{range($_)} } @$maps), '',
       'every range named is a mapping of worker 0 as its smaps has it');
}

my $w0 = worker_of($pids[0]);
my $wmaps = $w0->{outside_malloc} && $w0->{outside_malloc}{mappings} || [];
ok(grep({ range($_) eq range($m) } @$wmaps),
   'GET /: worker 0\'s outside_malloc names the same mapping');
is(worker_of($pids[1])->{outside_malloc}, undef,
   'and worker 1, grown in malloc only, none');

my $log = $t->log_text;
like($log, qr/\[notice\] .*RSS outside malloc grew by \d+ bytes in worker 0 \(pid $pids[0]\): RSS grew by/,
     'logged at notice, naming the worker');
my ($ls, $le, $lmib) = $log =~ /heap profiles cannot show it\. .* Mappings that grew most since the worker started: anonymous ([0-9a-f]+)-([0-9a-f]+) \+(\d+)\.\d MiB/;
is(defined $ls && sprintf('%x-%x', hex $ls, hex $le), range($m),
   'the line names the mapping by its range, as smaps writes it');
ok(($lmib // 0) >= 63, "and its growth, +$lmib MiB");
note(grep { /RSS outside malloc grew/ } split /\n/, $log);
is(firings(), 1, 'logged once');

# nothing more grows: nothing more is logged

sleep 4;
is(outside()->{firings}, 1, 'no growth since: still one firing');
is(firings(), 1, 'and no line more');
is($t->get('/malloc/')->{json}{watch}{firings}, 0,
   'the heap watch did not fire');

# another 64 MiB: fires again, once

$t->http_from($to{$pids[0]}[1], 'GET', '/t/alloc?map=64');
$o = poll_until(10, sub { my $x = outside(); $x->{firings} == 2 ? $x : undef });
ok($o, 'a second firing');

# since the worker started: both maps, merged by the kernel or apart

my $grew = 0;
$grew += $_->{grew} for @{$o && $o->{last_mappings} || []};
ok($grew >= 127 * $MB, "its mappings grew by $grew bytes, both 64 MiB");

sleep 2;
is(firings(), 2, 'two lines in all');

# a worker silent for a while (stopped here; on a loaded machine, starved
# of the CPU) keeps its baseline: a silence alone fires nothing, and what
# it maps as it wakes, published with its first figures, fires

sub from0 { $t->http_from($to{$pids[0]}[0], 'GET', '/malloc/')->{json} }
sub stale1 {
    my ($w) = grep { ($_->{pid} // 0) == $pids[1] } @{from0()->{workers}};
    return $w && $w->{stale} ? 1 : 0;
}
sub silence {
    my ($what, $path) = @_;
    kill 'STOP', $pids[1];
    ok(poll_until(10, sub { stale1() }), "$what: worker 1 stopped, stale");
    # a request it finds when it wakes, before its figures: both at once
    my $s = $path && $t->send_from($to{$pids[1]}[0], 'GET', $path);
    kill 'CONT', $pids[1];
    is($t->response($s, 10)->{json}{mapped}, 64, "$what: mapped") if $s;
    ok(poll_until(10, sub { !stale1() }), "$what: resumed, fresh again");
}

silence('grown nowhere');
sleep 3;
is(from0()->{watch}{outside}{firings}, 2,
   'a silence alone: no firing');

silence('64 MiB mapped as it wakes', '/t/alloc?map=64');
$o = poll_until(10, sub {
    my $x = from0()->{watch}{outside};
    $x->{firings} == 3 ? $x : undef;
});
ok($o, 'what it mapped as it woke fires: a third firing');
is($o && $o->{last_pid}, $pids[1], 'in worker 1');
ok($o && $o->{last_grew} >= 32 * $MB, "by $o->{last_grew} bytes");

opendir(my $d, $t->dump_dir);
is(join(' ', grep { !/^\.\.?$/ } readdir $d), '',
   'nothing written into the dump directory');
closedir $d;

$t->no_alerts;
$t->stop;

# the configuration's errors

for my $bad ('outside=0', 'outside=x', 'outside=') {
    my ($rc, $out) = MallocTest->new(http => "malloc_watch $bad;")->test_conf;
    like($out, qr/invalid parameter "\Q$bad\E"/, "$bad refused");
}
my ($rc, $out) = MallocTest->new(http => 'malloc_watch outside=off;')
    ->test_conf;
like($out, qr/needs growth=<size>, peak=on or outside=<size>/,
     'outside=off alone watches nothing: refused');
($rc, $out) = MallocTest->new(http => 'malloc_watch outside=1g;')->test_conf;
is($rc, 0, 'outside= alone loads');

# outside=off: none

$t = MallocTest->new(workers => 1,
                     http => 'malloc_watch growth=1g outside=off;')->start;
is($t->get('/malloc/')->{json}{watch}{outside}, undef,
   'outside=off: watch.outside null');
$t->get('/t/alloc?map=64');
sleep 3;
unlike($t->log_text, qr/RSS outside malloc/, 'outside=off: no firing');

$t->no_alerts;
$t->stop;

done_testing;
