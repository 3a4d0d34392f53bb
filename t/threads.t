#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# The module's own threads (malloc_threads): none while idle, at most the
# configured number per worker once dumps and profiles run, never nginx's
# default pool of 32; "off" builds profiles in the event loop.  The
# threads stop when a worker exits, before the module is unloaded.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Test::More;
use MallocTest qw(poll_until);

sub threads_of {
    my ($pid) = @_;
    opendir my $d, "/proc/$pid/task" or return 0;
    return scalar grep { /^\d+$/ } readdir $d;
}

sub profile_all {
    my ($t) = @_;
    my $ok = 0;
    for my $path (qw(/malloc/pprof/heap.pb.gz /malloc/pprof/heap
                     /malloc/heap))
    {
        $ok++ if $t->get($path)->{status} == 200;
    }
    $ok++ if $t->post('/malloc/prof_dump', '"threads-%p.heap"')->{status}
             == 200;
    return $ok;
}

# the default: two per worker, started on first use

my $t = MallocTest->new(workers => 2)->start;
my @pids = $t->worker_pids;

is_deeply([map { threads_of($_) } @pids], [1, 1],
          'idle: no thread besides the event loop');

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
is(profile_all($t), 4, 'profiles and a dump served');

my @n = map { threads_of($_) } @pids;
ok(!grep({ $_ < 2 || $_ > 3 } @n),
   "after profiles: 1 or 2 threads beside the loop (@n)");

# one request at a time never needs more than one; two at once may

my @kids;
for (1 .. 4) {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        POSIX::_exit($t->get("/malloc/pprof/heap.pb.gz")->{status} == 200
                     ? 0 : 1);
    }
    push @kids, $pid;
}
my $failed = 0;
for (@kids) { waitpid $_, 0; $failed++ if $? }
is($failed, 0, 'four profiles at once: all 200');
@n = map { threads_of($_) } @pids;
ok(!grep({ $_ > 3 } @n), "never more than 2 threads per worker (@n)");

$t->no_alerts;

# a reload: the old workers stop their threads and exit cleanly

$t->reload;
ok(poll_until(10, sub { !grep { kill 0, $_ } @pids }),
   'reload: the old workers exited');
unlike($t->log_text, qr/exited on signal|open socket/,
       'reload: no crash, no socket left');

$t->no_alerts;
$t->stop;

# malloc_threads 1 and off

for my $value ('1', 'off') {
    $t = MallocTest->new(workers => 2, http => "malloc_threads $value;")
        ->start;
    @pids = $t->worker_pids;
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       "malloc_threads $value: profiling on");
    is(profile_all($t), 4, "malloc_threads $value: profiles served");
    is($t->get('/malloc/pprof/heap.pb.gz?seconds=1')->{status}, 200,
       "malloc_threads $value: a growth profile");
    my $want = $value eq 'off' ? 1 : 2;
    @n = map { threads_of($_) } @pids;
    ok(!grep({ $_ > $want } @n),
       "malloc_threads $value: at most $want thread(s) in all (@n)");
    $t->no_alerts;
    $t->stop;
}

# bad values

for my $bad ('0', '17', 'two', 'on') {
    $t = MallocTest->new(http => "malloc_threads $bad;");
    my ($rc, $out) = $t->test_conf;
    isnt($rc, 0, "malloc_threads $bad: nginx -t fails");
    like($out, qr/invalid value "\Q$bad\E": expected a number of threads from 1 to 16, or off/,
         "malloc_threads $bad: the message says what it takes");
}

$t = MallocTest->new(http => "malloc_threads 1; malloc_threads 2;");
my ($rc, $out) = $t->test_conf;
like($out, qr/"malloc_threads" directive is duplicate/, 'duplicate');

$t = MallocTest->new(server => "malloc_threads 1;");
($rc, $out) = $t->test_conf;
like($out, qr/"malloc_threads" directive is not allowed here/,
     'http level only');

done_testing;
