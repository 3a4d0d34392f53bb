#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# malloc_watch outside=: memory that grows outside the allocator (a
# library's own mmap, as LuaJIT's) fires the watch once per size of
# growth, logged at notice with the parts that grew, and shown on the
# state page; the allocator's own growth does not fire it, and nothing
# is logged again while nothing grows.

use strict;
use warnings;

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

my $o = outside();
is($o->{size}, 32 * $MB, 'GET /: watch.outside.size');
is($o->{firings}, 0, 'no firing yet');
is($o->{last_firing}, undef, 'no last firing');
is($o->{last_text}, undef, 'no text');

# the allocator's growth is the heap's: it does not fire outside=

is($t->http_from($to{$pids[1]}[0], 'GET', '/t/alloc?mb=64')->{status}, 200,
   '64 MiB allocated by malloc in worker 1');
sleep 3;
is(outside()->{firings}, 0, 'growth in the allocator: no outside firing');

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

my $log = $t->log_text;
like($log, qr/\[notice\] .*RSS outside malloc grew by \d+ bytes in worker 0 \(pid $pids[0]\): RSS grew by/,
     'logged at notice, naming the worker');
is(firings(), 1, 'logged once');

# nothing more grows: nothing more is logged

sleep 4;
is(outside()->{firings}, 1, 'no growth since: still one firing');
is(firings(), 1, 'and no line more');
is($t->get('/malloc/')->{json}{watch}{firings}, 0,
   'the heap watch did not fire');

# another 64 MiB: fires again, once

$t->http_from($to{$pids[0]}[1], 'GET', '/t/alloc?map=64');
ok(poll_until(10, sub { outside()->{firings} == 2 }), 'a second firing');
sleep 2;
is(firings(), 2, 'two lines in all');

opendir(my $d, $t->dump_dir);
is(join(' ', grep { !/^\.\.?$/ } readdir $d), '',
   'nothing written into the dump directory');
closedir $d;

$t->no_alerts;
$t->stop;

# outside=off: none

$t = MallocTest->new(workers => 1,
                     http => 'malloc_watch growth=1g outside=off;')->start;
is($t->get('/malloc/')->{json}{watch}{outside}, undef,
   'outside=off: watch.outside null');
$t->get('/t/alloc?map=64');
sleep 3;
unlike($t->log_text, qr/RSS outside malloc/, 'outside=off: no firing');
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

done_testing;
