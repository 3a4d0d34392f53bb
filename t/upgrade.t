#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A binary upgrade (USR2, WINCH, QUIT to the old master) on jemalloc: the
# `env LD_PRELOAD; env MALLOC_CONF;` lines of nginx.conf hand jemalloc to
# the new master, whose workers can profile; traffic is served throughout
# and no process is left behind.  The desired state lives in the shared
# zone of the old master and does not cross the upgrade (docs/api.md:
# "a binary upgrade or a restart goes back to ... MALLOC_CONF").

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(poll_until alive);

my $t = MallocTest->new(workers => 2)->start;
my $prefix = $t->prefix;

is($t->post('/malloc/prof_active', 'true')->{status}, 200,
   'profiling on before the upgrade');

my $old_master = $t->master_pid;
my @old_workers = $t->worker_pids;
is(scalar @old_workers, 2, 'old generation has two workers');

# children of a pid that are worker processes (shutting down or not)
sub children {
    my ($parent) = @_;
    my @pids;
    opendir my $d, '/proc' or return ();
    for my $pid (grep { /^\d+$/ } readdir $d) {
        open my $fh, '<', "/proc/$pid/stat" or next;
        my $stat = <$fh> // next;
        my ($ppid) = $stat =~ /^\d+ \(.*\) \S (\d+)/ or next;
        push @pids, $pid if $ppid == $parent;
    }
    return sort { $a <=> $b } @pids;
}

# traffic during the whole upgrade, from a child: one GET / after another,
# each on a new connection, so that every accept goes through the sockets
# that pass from the old master to the new one

my $stop_file = "$prefix/traffic.stop";
my $count_file = "$prefix/traffic.count";

my $child = fork // die "fork: $!";
if ($child == 0) {
    my ($ok, $bad, @why) = (0, 0);
    while (!-e $stop_file) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                      PeerPort => $t->port, Timeout => 5);
        my $text = '';
        if ($s) {
            print $s "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n";
            local $/;
            $text = <$s> // '';
            close $s;
        }
        if ($text =~ m{^HTTP/1\.1 200 .*\r\n\r\nok\n\z}s) {
            $ok++;
        } else {
            $bad++;
            push @why, $s ? substr($text, 0, 40) : "connect: $!"
                if @why < 5;
        }
    }
    open my $fh, '>', $count_file or die $!;
    print $fh join("\n", $ok, $bad, @why), "\n";
    close $fh;
    POSIX::_exit(0);
}

sleep 0.3;

# USR2: the old master renames its pid file and execs /usr/sbin/nginx

kill 'USR2', $old_master;

ok(poll_until(10, sub {
    my $m = $t->master_pid;
    -e "$prefix/logs/nginx.pid.oldbin" && $m && $m != $old_master;
}), 'new master started, old pid file renamed');

my $new_master = $t->master_pid;
open my $fh, '<', "$prefix/logs/nginx.pid.oldbin";
chomp(my $oldbin = <$fh> // '');
close $fh;
is($oldbin, $old_master, 'nginx.pid.oldbin holds the old master');

ok(poll_until(10, sub { $t->worker_pids == 2 }), 'new workers started');
my @new_workers = $t->worker_pids;
ok(!grep({ my $n = $_; grep { $_ == $n } @old_workers } @new_workers),
   'they are new processes');

# the new generation runs on jemalloc: LD_PRELOAD reached the new master

for my $pid ($new_master, @new_workers) {
    open my $m, '<', "/proc/$pid/maps";
    my $maps = do { local $/; <$m> // '' };
    like($maps, qr{/libjemalloc\.so\.2}, "pid $pid maps jemalloc");
}

sleep 0.5;

# WINCH: the old workers shut down gracefully; then QUIT the old master

kill 'WINCH', $old_master;
ok(poll_until(10, sub { !grep { alive($_) } @old_workers }),
   'old workers exited after WINCH');
ok(alive($old_master), 'old master still there after WINCH');

sleep 0.5;

kill 'QUIT', $old_master;
ok(poll_until(10, sub { !alive($old_master) }), 'old master exited');
ok(poll_until(5, sub { !-e "$prefix/logs/nginx.pid.oldbin" }),
   'nginx.pid.oldbin removed');
is($t->master_pid, $new_master, 'nginx.pid names the new master');

sleep 0.3;

open my $stop, '>', $stop_file or die $!;
close $stop;
waitpid $child, 0;

open $fh, '<', $count_file or die "no traffic count: $!";
my ($ok, $bad, @why) = map { chomp; $_ } <$fh>;
close $fh;
ok($ok > 50, "traffic served during the upgrade ($ok requests)");
is($bad, 0, 'no request failed during the upgrade')
    or diag explain \@why;

# every new worker: jemalloc.state ok, as it sees it itself

for my $pid (@new_workers) {
    my ($port) = $t->ports_to($pid, 1);
    ok($port, "found a port to worker $pid") or next;
    my $r = $t->http_from($port, 'GET', '/malloc/');
    is($r->{status}, 200, "worker $pid: state page 200");
    is($r->{json}{jemalloc}{state}, 'ok', "worker $pid: jemalloc state ok");
}

# profiling works in the new generation, which starts with it off

my $r = $t->get('/malloc/prof_active');
ok(!$r->{json}{prof_active}, 'desired state starts over after an upgrade');
is_deeply([sort { $a <=> $b } map { $_->{pid} } @{$r->{json}{workers}}],
          \@new_workers, 'the new workers are listed');

$r = $t->post('/malloc/prof_active', 'true');
is($r->{status}, 200, 'profiling on in the new generation');
my $s = $t->states_by_worker;
is_deeply([sort { $a <=> $b } keys %$s], \@new_workers,
          'both new workers answered');
is_deeply([values %$s], [1, 1], 'both new workers profile');

$r = $t->post('/malloc/prof_dump', '"upgrade.heap"');
is($r->{status}, 200, 'dump in the new generation');
for my $pid (@new_workers) {
    ok(-s $t->dump_dir . "/upgrade.$pid.heap", "worker $pid dumped");
}

$r = $t->get('/malloc/pprof/heap.pb.gz');
is($r->{status}, 200, 'profile in the new generation');

$t->no_alerts;

# stop() signals the master in logs/nginx.pid: the new one

$t->stop;
ok(poll_until(10, sub {
    !grep { alive($_) } $old_master, $new_master, @old_workers, @new_workers
}), 'every nginx process of both generations is gone');
# no shell: its own command line would hold the prefix
open my $pg, '-|', 'pgrep', '-f', "$prefix/" or die "pgrep: $!";
my $left = join '', <$pg>;
close $pg;
is($left, '', 'no process left with the test prefix');

done_testing;
