#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# The desired state lives in shared memory: it survives a reload, a reload
# that changes worker_processes, and a worker killed with SIGKILL.  A
# growth profile whose window spans a reload is refused, never computed
# from the heaps of different processes; a profile or a dump under way
# across a reload is posted again to the new workers, and answered whole.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest qw(poll_until);

my $t = MallocTest->new(workers => 2)->start;

my $r = $t->post('/malloc/prof_active', 'true');
is($r->{status}, 200, 'profiling on');

$t->reload;
my $s = $t->states_by_worker;
is(scalar keys %$s, 2, 'two new workers');
is_deeply([values %$s], [1, 1], 'new workers profile after reload');

$r = $t->get('/malloc/prof_active');
ok($r->{json}{prof_active}, 'desired state kept');
is_deeply([sort { $a <=> $b } map { $_->{pid} } @{$r->{json}{workers}}],
          [$t->worker_pids], 'only the new generation is listed');

# more workers

$t->reload(workers => 4);
$s = $t->states_by_worker;
is(scalar keys %$s, 4, 'four workers after reload');
is_deeply([values %$s], [1, 1, 1, 1], 'all four profile');
$r = $t->get('/malloc/');
is(scalar @{$r->{json}{workers}}, 4, 'index lists four');

# fewer workers; commands answer without waiting for the gone ones

$t->reload(workers => 2);
$r = $t->post('/malloc/prof_active', 'false');
is($r->{status}, 200, 'command after shrinking');
is(scalar @{$r->{json}{workers}}, 2, 'two workers answer');
$r = $t->post('/malloc/prof_active', 'true');

# a worker killed: its replacement comes up profiling

my @before = $t->worker_pids;
kill 'KILL', $before[0];
poll_until(10, sub {
    my @now = $t->worker_pids;
    @now == 2 && !grep { $_ == $before[0] } @now;
}) or fail('worker respawned');

$s = $t->states_by_worker;
is(scalar keys %$s, 2, 'replacement worker serves');
is_deeply([values %$s], [1, 1], 'replacement worker profiles');

poll_until(5, sub {
    my $j = $t->get('/malloc/prof_active')->{json};
    !grep { $_->{pid} == $before[0] } @{$j->{workers}};
}) or fail('slot updated');
$r = $t->get('/malloc/prof_active');
ok(!grep({ !$_->{prof_active} } @{$r->{json}{workers}}),
   'slots report profiling');

$r = $t->post('/malloc/prof_dump', '"after-kill.heap"');
is($r->{status}, 200, 'dump after respawn');

# a sampling rate set by prof_reset survives a reload and a respawn

is($t->post('/malloc/prof_reset', '{"lg_sample": 14}')->{status}, 200,
   'lg_sample 14');
$t->reload;
is(join(',', map { $_->{lg_prof_sample} }
        @{$t->get('/malloc/stats')->{json}{workers}}), '14,14',
   'new workers sample at the reset rate');

# a growth window across a reload: the old worker that took the request
# finds other workers at the end, and says so

my @old = $t->worker_pids;
my ($port) = $t->ports_to($old[0], 1);
my $sock = $t->send_from($port, 'GET', '/malloc/pprof/heap.pb.gz?seconds=2');
select undef, undef, undef, 0.5;
$t->reload;
$r = $t->response($sock, 10);
is($r->{status}, 503, 'window across a reload: 503');
is($r->{json}{error}{code}, 'workers_changed', 'code workers_changed');
like($r->{json}{error}{text}, qr/reloaded .* during the 2 s growth window/,
     'the text says why');
is(scalar(my @hidden = glob($t->dump_dir . '/.profile-*')), 0,
   'no hidden dump left');

$r = $t->get('/malloc/pprof/heap.pb.gz?seconds=1');
is($r->{status}, 200, 'a window within one generation works');

# a profile and a dump in flight across a reload: the old worker that
# took each finds the new workers, posts the command again to them, and
# answers whole.  The other old worker is stopped, so that the reload
# surely comes before every answer.

for my $case (['GET', '/malloc/pprof/heap.pb.gz', undef, 'a profile'],
              ['POST', '/malloc/prof_dump', '"across-%p.heap"', 'a dump'])
{
    my ($method, $path, $body, $what) = @$case;
    my @old = $t->worker_pids;
    my ($port) = $t->ports_to($old[0], 1);
    kill 'STOP', $old[1];
    my $sock = $t->send_from($port, $method, $path, $body);
    select undef, undef, undef, 0.3;
    $t->run_nginx('-s', 'reload');
    ok(poll_until(10, sub {
        my %was = map { $_ => 1 } @old;
        2 == grep { !$was{$_} } $t->worker_pids(1);
    }), "$what across a reload: the new workers are up");
    kill 'CONT', $old[1];
    my $r = $t->response($sock, 10);
    is($r->{status}, 200, "$what across a reload: 200")
        or diag explain $r->{json};
    ok(!grep({ my $p = $_; grep { $_ == $p } @old }
             map { $_->{pid} } @{$r->{json}{workers} // []}),
       "$what across a reload: answered by the new workers")
        if $r->{json};
}
# (the old worker that took it may have written its own before the reload)
ok(!grep({ !-f $t->dump_dir . "/across-$_.heap" } $t->worker_pids),
   'the dump across a reload: a file for each new worker');
ok(poll_until(5, sub { !glob($t->dump_dir . '/.profile-*') }),
   'no hidden dump left behind by the old workers');

# what a killed worker, or an export cut by a reload, left more than five
# minutes ago: the next profile sweeps every hidden name of the module,
# and only those
{
    my $dir = $t->dump_dir;
    my @left = ('.profile-1-1.1.heap', '.profile-1-2-stats.1.json',
                '.snapshot-20000101T000000Z.1.heap',
                '.export-20000101T000000Z.1.heap', '.malloc-1-1.tmp');
    my @kept = ('.mine', 'kept.heap');
    for my $name (@left, @kept) {
        open my $fh, '>', "$dir/$name" or die "$name: $!";
        print $fh "x\n";
        close $fh;
        utime time - 600, time - 600, "$dir/$name";
    }
    is($t->get('/malloc/pprof/heap')->{status}, 200, 'a profile');
    is(join(' ', grep { -e "$dir/$_" } @left), '',
       'it swept the stale hidden files of every kind');
    is(join(' ', grep { -e "$dir/$_" } @kept), join(' ', @kept),
       'and nothing else');
    unlink map { "$dir/$_" } @kept;
}

$t->no_alerts(qr/exited on signal 9/);
$t->stop;

done_testing;
