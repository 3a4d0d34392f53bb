#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# malloc_snapshot: one worker takes each snapshot while profiling is on,
# old ones rotate out by count and size, failures are logged once, and a
# reload keeps the schedule.  The heap viewer's JSON reads snapshots and
# compares the live heap with one.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use HTTP::Tiny;
use Test::More;
use MallocTest qw(poll_until held);

$ENV{HOME} = '/tmp';

sub snapshots {
    my ($t) = @_;
    return $t->get('/malloc/snapshots')->{json};
}

sub starts {
    my ($t) = @_;
    my @ts = $t->log_text =~ /heap snapshot (\d{8}T\d{6}Z) started/g;
    return @ts;
}

my $t = MallocTest->new(workers => 2,
    http => 'malloc_snapshot interval=1s keep=2 max_size=100k;')->start;
my $dir = $t->dump_dir;

# nothing while profiling is off

sleep 2;
my $j = snapshots($t);
is_deeply($j->{snapshots}, [], 'no snapshot while profiling is off');
is($j->{schedule}{interval}, 1, 'schedule: interval');
is($j->{schedule}{keep}, 2, 'schedule: keep');
is($j->{schedule}{max_size}, 102400, 'schedule: max_size');
is($j->{schedule}{format}, 'pprof', 'schedule: format');
is($j->{schedule}{next_in}, undef, 'no next snapshot while off');

$t->post('/malloc/prof_active', 'true');
$t->get('/t/alloc?mb=8');

# the listing, read all the while: never more than keep=2, never a file
# being written (snapshots were seen mid-write with 0 bytes, and 3 of them
# before the retention ran, on a loaded machine)
my ($most, @empty) = (0);
ok(poll_until(15, sub {
    my $list = snapshots($t)->{snapshots};
    $most = @$list if @$list > $most;
    push @empty, map { $_->{name} } grep { !$_->{bytes} } @$list;
    starts($t) >= 4;
}), 'snapshots are taken');
ok($most <= 2, "never more than keep=2 listed: at most $most");
is("@empty", '', 'never a snapshot listed with 0 bytes');
$j = snapshots($t);

my @names = map { $_->{name} } @{$j->{snapshots}};
ok(@names >= 1 && @names <= 2, 'at most keep=2 snapshots kept: '
   . scalar @names);
like($names[0], qr/^snapshot-\d{8}T\d{6}Z\.pb\.gz$/, 'pprof snapshot name');
is_deeply([sort { $b cmp $a } @names], \@names, 'newest first');
like($j->{snapshots}[0]{time}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
     'time');
is($j->{snapshots}[0]{path}, "$dir/$names[0]", 'path');
is($j->{snapshots}[0]{bytes}, -s "$dir/$names[0]", 'bytes');

my %seen;
my @dup = grep { $seen{$_}++ } starts($t);
is("@dup", '', 'each snapshot taken by exactly one worker');

# download, and read it without the binary

my $file = $t->prefix . '/snap.pb.gz';
my $r = $t->get("/malloc/snapshots/$names[0]");
is($r->{status}, 200, 'download');
like($r->{headers}{'content-disposition'}, qr/\Q$names[0]\E/, 'file name');
open my $fh, '>', $file;
print $fh $r->{content};
close $fh;
like(`cd / && go tool pprof -top $file 2>&1`, qr/ngx_http_malloc_test_hold/,
     'the snapshot is a symbolized profile');

for my $bad ('nope', 'snapshot-..', '.snapshot-x', 'snapshot-x%2Fy') {
    is($t->get("/malloc/snapshots/$bad")->{status}, 404, "404 for $bad");
}

# an empty file in the directory (a disk that filled, a hand's touch):
# answered at once, empty, not left hanging
{
    my $empty = 'snapshot-20000101T000000Z.pb.gz';
    open my $eh, '>', $t->dump_dir . "/$empty" or die;
    close $eh;
    my $ua = HTTP::Tiny->new(timeout => 5);
    my $er = $ua->get($t->url("/malloc/snapshots/$empty"));
    is($er->{status}, 200, 'an empty snapshot: answered');
    is($er->{content}, '', 'an empty snapshot: an empty body');
    unlink $t->dump_dir . "/$empty";
}

# a snapshot dated in the future (written before the clock stepped
# back) does not stay forever at the head of the list: it goes first
{
    # a copy of the one downloaded: the retention may have taken it from
    # the directory since (keep=2, a snapshot a second)
    my $future = "$dir/snapshot-20991231T235959Z.pb.gz";
    system('cp', $file, $future) == 0 or die;
    chmod 0644, $future;
    my $n = starts($t);
    ok(poll_until(10, sub { starts($t) >= $n + 2 && !-e $future }),
       'a snapshot from the future goes at the next retention');
    my @now = map { $_->{name} } @{snapshots($t)->{snapshots}};
    ok(@now && $now[0] ne $names[0], 'and the newest snapshots stay: '
       . "@now");
}

# a reload keeps the schedule: no second snapshot for the same second

$t->reload;
my $before = () = starts($t);
ok(poll_until(10, sub { starts($t) >= $before + 2 }),
   'snapshots go on after a reload');
%seen = ();
@dup = grep { $seen{$_}++ } starts($t);
is("@dup", '', 'still one snapshot per time after the reload');

# an unwritable directory: logged once, retried, recovered.  It is made
# unwritable between snapshots, with profiling off: a dump that it caught
# between creating its temporary file and linking it could remove that
# file no more, and the sweep takes it only once it is 5 minutes old

$t->post('/malloc/prof_active', 'false');
sleep 1;
ok(poll_until(5, sub { !grep(/\.tmp$/, glob("$dir/.*")) }),
   'profiling off: no dump under way');
chmod 0500, $dir;
$t->post('/malloc/prof_active', 'true');
my $count = () = starts($t);
ok(poll_until(10, sub { starts($t) >= $count + 3 }), 'retried');
my @failed = $t->log_text =~ /heap snapshot \S+ failed/g;
is(scalar @failed, 1, 'a failure is logged once');
chmod 0700, $dir;
ok(poll_until(10, sub { $t->log_text =~ /heap snapshot \S+ written again/ }),
   'the recovery is logged');

# profiling off: the schedule stops

ok(poll_until(5, sub {
    $t->post('/malloc/prof_active', 'false')->{status} == 200
}), 'profiling off, between snapshots');
sleep 1;
$count = () = starts($t);
sleep 2;
is(scalar(() = starts($t)), $count, 'no snapshot once profiling is off');
ok(!grep(/\.tmp$/, glob("$dir/.*")), 'no temporary file left');

$t->no_alerts;
$t->stop;

# MiB of the test module's holder in an answer's values or base_values
sub hold {
    my ($r, $key) = @_;
    return held($r->{json}, 'ngx_http_malloc_test_hold', $key);
}

{
my $t = MallocTest->new(workers => 2,
    http => 'malloc_snapshot interval=1s keep=50;')->start;
$t->post('/malloc/prof_active', 'true');
$t->get('/t/alloc?mb=8&block=8');
my $first;
ok(poll_until(10, sub {
    my $list = snapshots($t)->{snapshots};
    $first = @$list ? $list->[-1]{name} : undef;
}), 'viewer: a snapshot');
my @names = ($first);
my $pid = ($t->worker_pids)[0];

my $r = $t->get("/malloc/pprof/heap.json?snapshot=$names[0]");
is($r->{status}, 200, 'heap.json?snapshot=<file>');
ok(abs(hold($r, 'values') - 8) < 2,
   'the snapshot holds the 8 MiB: ' . hold($r, 'values'));
my ($group) = $names[0] =~ /^(snapshot-\w{16})/;
is($t->get("/malloc/pprof/heap.json?snapshot=$group")->{status}, 200,
   'heap.json?snapshot=<time>');
$t->get('/t/alloc?mb=16&block=8');
$r = $t->get("/malloc/pprof/heap.json?base=$group");
is($r->{status}, 200, 'heap.json?base=');
ok(abs(hold($r, 'base_values') - 8) < 2
   && abs(hold($r, 'values') - 24) < 4,
   sprintf('base 8 MiB, now 24: %.1f and %.1f',
           hold($r, 'base_values'), hold($r, 'values')));
$r = $t->get("/malloc/pprof/heap.json?snapshot=$group&base=$group");
ok(hold($r, 'values') == hold($r, 'base_values'),
   'a snapshot against itself: no change');
for my $bad ("pprof/heap.json?snapshot=$group&pid=$pid",
             "pprof/heap.json?base=$group&pid=$pid",
             "pprof/heap.json?base=$group&seconds=2",
             "pprof/heap.pb.gz?snapshot=$group")
{
    $r = $t->get("/malloc/$bad");
    is($r->{json}{error}{code}, 'invalid_argument', "$bad: 400");
}
for my $bad ('snapshot-nope', '../conf/nginx.conf', 'snapshot-x/../..',
             '.snapshot-x')
{
    $r = $t->get("/malloc/pprof/heap.json?snapshot=$bad");
    is($r->{json}{error}{code}, 'no_such_snapshot', "snapshot=$bad: 404");
}

$t->no_alerts;
$t->stop;
}

# profiling off and on again within a second starts the interval afresh,
# as off for longer does (the schedule's tick runs once a second and may
# never see it off)

{
my $t = MallocTest->new(workers => 1,
    http => 'malloc_snapshot interval=10s keep=5;')->start;
$t->post('/malloc/prof_active', 'true');
my $next = sub { snapshots($t)->{schedule}{next_in} };
ok(poll_until(5, sub { defined $next->() }), 'schedule: started');
sleep 4;
my $before = $next->();
ok(defined $before && $before <= 7, "schedule: $before s to go");
$t->post('/malloc/prof_active', 'false');
$t->post('/malloc/prof_active', 'true');
my $after;
ok(poll_until(5, sub { $after = $next->(); defined $after && $after >= 8 }),
   'schedule: off and on within a second starts a fresh interval ('
   . ($after // 'null') . ' s)');
$t->no_alerts;
$t->stop;
}

# format=heap: one file per worker; max_size bounds the total

$t = MallocTest->new(workers => 2,
    http => 'malloc_snapshot interval=1s keep=10 format=heap max_size=40k;')
    ->start;
$dir = $t->dump_dir;
$t->post('/malloc/prof_active', 'true');
$t->get('/t/alloc?mb=8');
ok(poll_until(15, sub { starts($t) >= 4 }), 'heap snapshots are taken');

# a snapshot in progress gets its names and the retention right after
poll_until(5, sub {
    $t->post('/malloc/prof_active', 'false')->{status} == 200
});
sleep 2;

$j = snapshots($t);
my %groups;
$groups{$_->{time}}++ for @{$j->{snapshots}};
ok(!grep({ $_ != 2 } values %groups), 'two files, one per worker, each time');
like($j->{snapshots}[0]{name}, qr/^snapshot-\d{8}T\d{6}Z\.\d+\.heap$/,
     'heap snapshot name');
my $total = 0;
$total += $_->{bytes} for @{$j->{snapshots}};
ok($total <= 40 * 1024, "max_size keeps the total under 40k: $total");
ok(keys %groups >= 1, 'and keeps what fits');

my ($ts) = $j->{snapshots}[0]{name} =~ /^(snapshot-\w+)\./;
like(`jeprof --text $MallocTest::NGINX $dir/$ts.*.heap 2>&1`,
     qr/Total: .*\n.*ngx_http_malloc_test_hold/,
     'jeprof reads the workers\' heap snapshots together');

$r = $t->get("/malloc/pprof/heap.json?snapshot=$ts");
is($r->{status}, 200, 'heap.json of a heap snapshot: the workers\' files');
ok(grep({ $_ eq 'ngx_http_malloc_test_hold' } @{$r->{json}{names}}),
   'named from the dumps\' own mappings');

$t->no_alerts;
$t->stop;

# configuration errors

for my $bad ('interval=0', 'keep=2', 'interval=1s keep=0', 'interval=1s x=1',
             'interval=1s format=svg', 'interval=1s max_size=big')
{
    my $c = MallocTest->new(http => "malloc_snapshot $bad;");
    my ($rc, $out) = $c->test_conf;
    isnt($rc, 0, "nginx -t refuses malloc_snapshot $bad");
}

done_testing;
