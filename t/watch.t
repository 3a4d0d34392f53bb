#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# malloc_watch when the leak goes on: every firing profiles its window
# and writes its snapshot, however many there are, and the admin location
# keeps answering throughout and after.  Two workers, growth=32m
# sample=4s, 8 MiB a second for 30 s: the case that once jammed the
# command ring from the third firing on (every write and read "busy", a
# firing logged every second with no snapshot).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(sleep time);
use Time::Local qw(timegm);
use MallocTest qw(poll_until held);

$ENV{HOME} = '/tmp';

my $MB = 1024 * 1024;

sub growth_snapshots {
    my ($t) = @_;
    return grep { $_->{reason} eq 'growth' }
                @{$t->get('/malloc/snapshots')->{json}{snapshots} // []};
}

my $t = MallocTest->new(workers => 2,
    http => 'malloc_watch growth=32m sample=4s;')->start;

my $idle = $t->get('/malloc/')->{json}{watch};
is($idle->{state}, 'armed', 'GET /: the watch is armed');
is($idle->{firings}, 0, 'GET /: no firing yet');
is($idle->{last_snapshot}, undef, 'GET /: no snapshot yet');

# the leak: 4 MiB every half second, in 1 MiB blocks, for 30 s; the
# admin location is asked all along, as an operator would

my (%status, @slow, $window_seen);
my $end = time() + 30;

while (time() < $end) {
    $t->get('/t/alloc?mb=4');

    my $t0 = time();
    my $r = $t->get('/malloc/prof_active');
    $status{"prof_active $r->{status}"}++;
    push @slow, $r->{status} if $r->{status} != 200;

    my $w = $t->get('/malloc/')->{json}{watch} // {};
    $window_seen++ if ($w->{state} // '') eq 'window';

    sleep 0.5 - (time() - $t0) if time() - $t0 < 0.5;
}

is(join(',', @slow), '', 'reads during the leak: every one 200');
ok($window_seen, 'GET /: the watch shown in its window');

# the last window ends, and its snapshot is written
ok(poll_until(15, sub {
    my $w = $t->get('/malloc/')->{json}{watch};
    $w->{state} eq 'armed' && $w->{snapshots} >= $w->{firings};
}), 'the last window over, each firing has its snapshot');

my $w = $t->get('/malloc/')->{json}{watch};
my @snap = growth_snapshots($t);
my $log = $t->log_text;
my @fired = $log =~ /heap\ grew\ by\ \d+\ bytes,\ \d+\ in\ all:\ heap
                     \ profiling\ turned\ on\ for\ 4000\ ms/xg;

ok($w->{firings} >= 3, "three firings at least: $w->{firings}");
is(scalar @fired, $w->{firings}, 'each firing logged once');
is($w->{snapshots}, $w->{firings}, 'a snapshot written for each firing');
is(scalar @snap, $w->{firings}, 'each listed among the snapshots');
is($w->{last_failure}, undef, 'no firing failed');
like($w->{last_snapshot} // '', qr/^snapshot-\d{8}T\d{6}Z\.growth\.\d+\./,
     "GET /: the last snapshot named: " . ($w->{last_snapshot} // 'none'));
ok(grep({ $_->{name} eq ($w->{last_snapshot} // '') } @snap),
   'GET /: the last snapshot is the newest listed');
like($w->{last_firing} // '', qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
     'GET /: the last firing, in ISO 8601');
ok($w->{last_grew} >= 32 * $MB, "GET /: it grew by $w->{last_grew} bytes");

# a window that ends after the leak stopped may have seen none of it in
# its second half, and a sampled share is an estimate: of the snapshots
# written while it went on, most must show it
my ($leaking, $holding) = (0, 0);
for my $s (@snap) {
    my ($y, $mo, $d, $h, $mi, $sec) =
        $s->{name} =~ /^snapshot-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z/;
    next unless defined $sec
        && timegm($sec, $mi, $h, $d, $mo - 1, $y) < $end - 1;
    $leaking++;
    my $r = $t->get("/malloc/pprof/heap.json?snapshot=$s->{name}");
    my $mb = $r->{json} ? held($r->{json}, 'ngx_http_malloc_test_hold') : 0;
    is($r->{status}, 200, "$s->{name}: read back");
    $holding++ if $mb > 0;
    note "$s->{name}: $mb MiB in the function that leaks";
}
ok($leaking >= 2, "$leaking snapshots written while the leak went on");
ok($holding >= 1 && $holding >= $leaking - 1,
   "$holding of them name the function that leaks");

is($log =~ /given up/ ? 1 : 0, 0, 'no command was given up');
unlike($log, qr/\[(warn|error)\].*malloc_watch/, 'nothing at warn');

# after the leak: the operator is answered at once, and sampling obeys

ok(!$t->get('/malloc/prof_active')->{json}{prof_active},
   'sampling off after the last window');

my $r = $t->post('/malloc/prof_active', 'true');
is($r->{status}, 200, 'after the leak: POST prof_active true, 200');
ok($t->get('/malloc/prof_active')->{json}{prof_active},
   'after the leak: GET prof_active says true');
is(join(',', sort values %{$t->states_by_worker}), '1,1',
   'after the leak: every worker samples');

$r = $t->post('/malloc/prof_dump', '"after-leak.%p.heap"');
is($r->{status}, 200, 'after the leak: POST prof_dump, 200');
is(scalar(my @d = glob($t->dump_dir . '/after-leak.*.heap')), 2,
   'after the leak: a dump per worker');

$r = $t->get('/malloc/pprof/heap.pb.gz');
is($r->{status}, 200, 'after the leak: GET pprof/heap.pb.gz, 200');

is($t->post('/malloc/prof_active', 'false')->{status}, 200,
   'after the leak: POST prof_active false, 200');

# no line repeated, as the jam repeated its firing every second
my %seen;
for my $l (split /\n/, $t->log_text) {
    (my $text = $l) =~ s/^\S+ \S+ \[\w+\] \d+#\d+: (\*\d+ )?//;
    $text =~ s/, client: .*//;
    $seen{$text}++ if $l =~ /\[(notice|warn|error)\]/;
}
# a firing's own lines come once a firing: "turned off" among them
my @repeated = grep {
    $seen{$_} > 1
    && !($seen{$_} <= $w->{firings} && /duration has elapsed/)
} keys %seen;
is(join("\n", @repeated), '', 'no line repeated, but once a firing');

$t->no_alerts;
$t->stop;

###########################################################################
# a firing that cannot write its snapshot says why once, and waits for
# the next growth: a dump directory at its max_size

{
    my $t = MallocTest->new(workers => 2,
        http => 'malloc_watch growth=16m sample=1s;',
        dump_dir => 0);
    $t->{http} .= ' malloc_dump_dir ' . $t->dump_dir . ' max_size=1k;';
    $t->start;

    # something there already fills the directory
    $t->post('/malloc/prof_active', 'true');
    is($t->post('/malloc/prof_dump', '"full.heap"')->{status}, 200,
       'max_size: a dump fills the directory');
    $t->post('/malloc/prof_active', 'false');

    for (1 .. 10) {
        $t->get('/t/alloc?mb=8');
        sleep 0.3;
    }

    ok(poll_until(10, sub {
        ($t->get('/malloc/')->{json}{watch}{last_failure} // '')
            =~ /max_size/;
    }), 'max_size: GET / says why the firing wrote no snapshot');

    my $w = $t->get('/malloc/')->{json}{watch};
    ok($w->{firings} >= 1, "max_size: fired $w->{firings} times");
    is($w->{snapshots}, 0, 'max_size: no snapshot');
    ok(defined $w->{last_failure_time}, 'max_size: with its time');

    my @skipped = $t->log_text =~ /heap snapshot for growth skipped/g;
    ok(@skipped <= 2 * $w->{firings},
       'max_size: said at most twice a firing (its start and its end), '
       . scalar(@skipped) . " times for $w->{firings}");

    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'max_size: writes still answered');

    $t->no_alerts;
    $t->stop;
}

done_testing;
