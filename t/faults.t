#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Faults while commands are in flight: a reload while a command waits for
# a stopped worker, a worker killed while a dump waits for it, clients that
# go away while their requests wait, and a full dump directory.  Each ends
# with an answer by the deadline, no file left half-written, and nginx
# serving.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(poll_until json_decode alive);

sub fds {
    my ($pid) = @_;
    opendir my $d, "/proc/$pid/fd" or return -1;
    return scalar grep { /^\d+$/ } readdir $d;
}

# sends a request from a chosen local port and leaves it waiting
sub send_from {
    my ($t, $lport, $method, $path, $body) = @_;
    $body //= '';
    my $s = $t->connect_from($lport) or die "connect from $lport: $!";
    print $s "$method $path HTTP/1.0\r\nHost: localhost\r\n"
        . "Content-Length: " . length($body) . "\r\n\r\n$body";
    return $s;
}

# reads the answer of send_from, for at most $secs
sub answer {
    my ($s, $secs) = @_;
    my $text = '';
    my $rin = '';
    vec($rin, fileno($s), 1) = 1;
    my $end = time + $secs;
    while (time < $end) {
        my $rout = $rin;
        last unless select($rout, undef, undef, $end - time);
        my $n = sysread($s, my $chunk, 65536);
        last unless $n;
        $text .= $chunk;
    }
    close $s;
    my ($head, $content) = split /\r\n\r\n/, $text, 2;
    my ($status) = ($head // '') =~ m{^HTTP/1\.\d (\d+)};
    return { status => $status // 599, json => json_decode($content // '') };
}

# the workers of the master that are not in @old
sub new_workers {
    my ($t, @old) = @_;
    my %old = map { $_ => 1 } @old;
    return grep { !$old{$_} } $t->worker_pids(1);
}

# {pid => prof_active} as the workers @pids see it themselves
sub states_of {
    my ($t, @pids) = @_;
    my %want = map { $_ => 1 } @pids;
    my %seen;
    for (1 .. 400) {
        my $r = $t->get('/t/state');
        next unless $r->{json} && $want{$r->{json}{pid}};
        $seen{$r->{json}{pid}} = $r->{json}{prof_active} ? 1 : 0;
        last if keys %seen == keys %want;
    }
    return \%seen;
}

###########################################################################
# a reload while a command waits for a stopped worker

{
    my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=2s')
        ->start;
    my @old = $t->worker_pids;
    my @ports = $t->ports_to($old[0], 2);
    is(scalar @ports, 2, 'reload: ports to the live worker');

    kill 'STOP', $old[1];

    my $sock = send_from($t, $ports[0], 'POST', '/malloc/prof_active', 'true');
    ok(poll_until(2, sub {
        $t->http_from($ports[1], 'GET', '/malloc/prof_active')
            ->{json}{prof_active};
    }), 'reload: the command is pending');

    my $start = time;
    my ($rc, $out) = $t->run_nginx('-s', 'reload');
    is($rc, 0, 'reload: nginx -s reload') or diag $out;

    my $r = answer($sock, 8);
    my $took = time - $start;
    # the workers it waited for were replaced by the reload: they are
    # named as restarted, with their new pids, at once
    ok($r->{status} == 504 || $r->{status} == 200
       || ($r->{status} == 500
           && $r->{json}{error}{code} eq 'worker_restarted'),
       "reload: the pending request answered ($r->{status})")
        or diag explain $r->{json};
    ok($r->{json}{prof_active}, 'reload: the desired state was stored');
    ok($took < 4, sprintf 'reload: by its deadline (%.1f s)', $took);

    my @new;
    ok(poll_until(10, sub { (@new = new_workers($t, @old)) == 2 }),
       'reload: two new workers');

    is_deeply(states_of($t, @new), { map { $_ => 1 } @new },
              'reload: the new workers came up profiling');

    $r = $t->post('/malloc/prof_active', 'true');
    is($r->{status}, 200, 'reload: POST answered by the new generation');
    is_deeply([sort { $a <=> $b } map { $_->{pid} } @{$r->{json}{workers}}],
              [sort { $a <=> $b } @new], 'reload: it lists the new workers');
    ok(!grep({ !$_->{prof_active} } @{$r->{json}{workers}}),
       'reload: every new worker profiles');

    ok(poll_until(10, sub { !alive($old[0]) }),
       'reload: the live old worker exited');
    ok(alive($old[1]), 'reload: the stopped old worker waits');
    kill 'CONT', $old[1];
    ok(poll_until(10, sub { !alive($old[1]) }),
       'reload: the stopped old worker exits once continued');

    is($t->post('/malloc/prof_active', 'false')->{status}, 200,
       'reload: the board is free afterwards');
    is($t->get('/')->{status}, 200, 'reload: traffic served');

    $t->no_alerts;
    $t->stop;
}

###########################################################################
# a worker killed while a dump waits for it

{
    my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=2s')
        ->start;
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'kill: profiling on');
    my @old = $t->worker_pids;
    my @ports = $t->ports_to($old[0], 1);
    is(scalar @ports, 1, 'kill: a port to the live worker');

    kill 'STOP', $old[1];
    my $start = time;
    my $sock = send_from($t, $ports[0], 'POST', '/malloc/prof_dump',
                         '"kill.heap"');
    ok(poll_until(2, sub { -e $t->dump_dir . "/kill.$old[0].heap" }),
       'kill: the live worker dumped');
    kill 'KILL', $old[1];

    my $r = answer($sock, 6);
    my $took = time - $start;
    ok($took < 3.5, sprintf 'kill: answered by the deadline (%.1f s)', $took);
    ok(($r->{status} == 500
        && $r->{json}{error}{code} eq 'worker_restarted')
       || ($r->{status} == 504 && $r->{json}{error}{code} eq 'worker_timeout'),
       "kill: the answer names the failure ($r->{status})")
        or diag explain $r->{json};
    like($r->{json}{error}{text}, qr/^worker 1 /, 'kill: names worker 1');

    my ($w0, $w1) = @{$r->{json}{workers}};
    ok($w0->{bytes} && !$w0->{error}, 'kill: worker 0 reported its dump');
    ok($w1->{error} && !$w1->{bytes}, 'kill: worker 1 reported as failed');

    my @now;
    ok(poll_until(10, sub {
        @now = $t->worker_pids;
        @now == 2 && !grep { $_ == $old[1] } @now;
    }), 'kill: worker respawned');
    my ($respawned) = grep { $_ != $old[0] } @now;
    is_deeply($t->states_by_worker, { $old[0] => 1, $respawned => 1 },
              'kill: the respawned worker profiles');

    # no dump of the killed or the new worker, and no temporary file: the
    # killed worker was stopped before it saw the command
    my @files = sort map { s{.*/}{}r } glob($t->dump_dir . '/{.,}*');
    @files = grep { !/^\.\.?$/ } @files;
    is_deeply(\@files, ["kill.$old[0].heap"], 'kill: only the live dump');

    $r = $t->post('/malloc/prof_dump', '"after.heap"');
    is($r->{status}, 200, 'kill: the next dump works');

    $t->no_alerts(qr/exited on signal 9/);
    $t->stop;
}

###########################################################################
# a worker killed in the middle of writing its dump: a big heap (60000
# stacks, each sampled) makes the dump take long enough to catch its
# temporary file.  The file keeps its hidden temporary name, the answer
# reports no success for it, and a later profile request sweeps it once it
# is 5 minutes old.

{
    my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=3s')
        ->start;
    my @old = $t->worker_pids;
    my ($p0) = $t->ports_to($old[0], 1);
    my ($p1) = $t->ports_to($old[1], 1);
    is($t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}')
       ->{status}, 200, 'mid-dump: sample everything');
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'mid-dump: profiling on');
    is($t->http_from($p1, 'GET', '/t/alloc?stacks=60000&size=64')->{status},
       200, 'mid-dump: worker 1 holds 60000 stacks');
    is($t->post('/malloc/prof_active', 'false')->{status}, 200,
       'mid-dump: profiling off');

    my $start = time;
    my $sock = send_from($t, $p0, 'POST', '/malloc/prof_dump', '"mid.heap"');
    my $tmp = poll_until(5, sub {
        (glob($t->dump_dir . "/.malloc-$old[1]-*.tmp"))[0];
    });
    ok($tmp, 'mid-dump: caught worker 1 writing its dump');
    kill 'KILL', $old[1];

    my $r = answer($sock, 8);
    ok(time - $start < 5, 'mid-dump: answered by the deadline');
    ok(($r->{status} == 500
        && $r->{json}{error}{code} eq 'worker_restarted')
       || ($r->{status} == 504 && $r->{json}{error}{code} eq 'worker_timeout'),
       "mid-dump: the answer names the failure ($r->{status})")
        or diag explain $r->{json};
    my $w1 = $r->{json}{workers}[1];
    ok($w1->{error} && !$w1->{bytes}, 'mid-dump: no success for worker 1');
    ok(!-e $t->dump_dir . "/mid.$old[1].heap",
       'mid-dump: no dump under the name');

    my @now;
    poll_until(10, sub {
        @now = $t->worker_pids;
        @now == 2 && !grep { $_ == $old[1] } @now;
    });
    ok(!grep({ $_ == $old[1] } @now), 'mid-dump: worker respawned');

    SKIP: {
        skip 'the dump finished before the kill', 3 unless $tmp && -e $tmp;
        is($t->get('/malloc/pprof/heap')->{status}, 200,
           'mid-dump: a profile works');
        ok(-e $tmp, 'mid-dump: a fresh temporary file is kept');
        my $old_time = time - 600;
        utime $old_time, $old_time, $tmp;
        $t->get('/malloc/pprof/heap');
        ok(!-e $tmp, 'mid-dump: swept once 5 minutes old');
    }

    is($t->post('/malloc/prof_dump', '"mid2.heap"')->{status}, 200,
       'mid-dump: the next dump works');

    $t->no_alerts(qr/exited on signal 9/);
    $t->stop;
}

###########################################################################
# clients that go away while their requests wait for a stopped worker:
# the live worker closes everything it opened for them (t/timeout.t shows
# the board is released)

{
    my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=2s')
        ->start;
    my @w = $t->worker_pids;
    my @ports = $t->ports_to($w[0], 6);
    is(scalar @ports, 6, 'gone: ports to the live worker');

    # once of each first, so that what a worker sets up on first use
    # (threads, symbol tables) is in the count
    for my $req (['POST', '/malloc/prof_dump', '"warm.heap"'],
                 ['GET', '/malloc/pprof/heap.pb.gz'],
                 ['GET', '/malloc/stats'], ['GET', '/malloc/metrics'])
    {
        is($t->http_from($ports[0], @$req)->{status}, 200,
           "gone: warm-up $req->[1]");
    }
    my @before = map { fds($_) } @w;

    kill 'STOP', $w[1];
    my $n = 0;
    for my $req (['POST', '/malloc/prof_active', 'true'],
                 ['POST', '/malloc/prof_dump', '"gone.heap"'],
                 ['GET', '/malloc/pprof/heap'],
                 ['GET', '/malloc/pprof/heap.pb.gz'],
                 ['GET', '/malloc/stats'], ['GET', '/malloc/metrics'])
    {
        my $s = send_from($t, $ports[$n++], @$req);
        # the request reaches the worker and waits
        sleep 0.3;
        close $s;
    }
    kill 'CONT', $w[1];

    ok(poll_until(5, sub { fds($w[0]) == $before[0] }),
       "gone: the live worker's fds are back to $before[0]")
        or diag 'now ' . fds($w[0]);
    ok(poll_until(5, sub { fds($w[1]) == $before[1] }),
       "gone: the stopped worker's fds are back to $before[1]")
        or diag 'now ' . fds($w[1]);

    my $r = poll_until(5, sub {
        my $x = $t->post('/malloc/prof_active', 'false');
        $x->{status} == 200 ? $x : undef;
    });
    ok($r, 'gone: the board is free');
    ok(!-e $t->dump_dir . "/gone.$w[1].heap",
       'gone: the stopped worker did not dump late');
    my @hidden = grep { !/\/\.\.?$/ } glob($t->dump_dir . '/.*');
    is("@hidden", '', 'gone: no hidden dump left');
    my $old_time = time - 600;
    utime $old_time, $old_time, @hidden;
    is($t->get('/malloc/pprof/heap')->{status}, 200, 'gone: a profile works');
    @hidden = grep { !/\/\.\.?$/ } glob($t->dump_dir . '/.*');
    is("@hidden", '', 'gone: the sweep removes them once 5 minutes old');

    $t->no_alerts;
    $t->stop;
}

###########################################################################
# a full dump directory: a 64 KiB tmpfs mounted on it (tests run as root).
# Without mount there is no stand-in: RLIMIT_FSIZE would reach the workers
# only as SIGXFSZ, which kills them, and nginx has no directive to set it.

my @mounted;
END { system('umount', $_) for @mounted }

SKIP: {
    my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=2s');
    my $dir = $t->dump_dir;
    mkdir $dir or die "$dir: $!";
    my $out = `mount -t tmpfs -o size=64k,mode=0700 tmpfs $dir 2>&1`;
    skip "full: cannot mount a small tmpfs here ($out)", 20 if $? != 0;
    push @mounted, $dir;

    $t->start;
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'full: profiling on');
    my $r = $t->post('/malloc/prof_dump', '"room.heap"');
    is($r->{status}, 200, 'full: a dump fits at first');
    unlink glob("$dir/room.*");

    # fill it up
    open my $fh, '>', "$dir/fill" or die $!;
    binmode $fh;
    my $chunk = "\0" x 4096;
    1 while syswrite $fh, $chunk;
    close $fh;
    ok(-s "$dir/fill" > 32768, 'full: the directory is full');

    my $ls = sub {
        opendir my $d, $dir or return '?';
        return join ' ', sort grep { !/^\.\.?$/ } readdir $d;
    };

    $r = $t->post('/malloc/prof_dump', '"full.heap"');
    is($r->{status}, 507, 'full: dump answers 507');
    is($r->{json}{error}{code}, 'no_space',
       "full: error code $r->{json}{error}{code}");
    note "full: $r->{json}{error}{text}";
    like($r->{json}{error}{text}, qr/no space left on the device/,
         'full: the error names the failed step');
    like($r->{json}{error}{text}, qr/space|full/i,
         'full: the error says the file system is full');
    is(scalar(grep { $_->{error} } @{$r->{json}{workers}}), 2,
       'full: every worker failed');
    is($ls->(), 'fill', 'full: no partial dump file left');

    for my $ep (qw(pprof/heap pprof/heap.pb.gz heap)) {
        $r = $t->get("/malloc/$ep");
        is($r->{status}, 507, "full: $ep answers 507");
        is($r->{json}{error}{code}, 'no_space', "full: $ep no_space");
    }
    is($ls->(), 'fill', 'full: no hidden profile dump left');

    $r = $t->get('/malloc/stats');
    note "full: stats answers $r->{status}";
    ok($r->{status} == 200 || $r->{status} == 500, 'full: stats answers');
    is($ls->(), 'fill', 'full: nothing left by stats');

    is($t->get('/')->{status}, 200, 'full: traffic served');

    # room again: the same name works, since nothing was left under it
    unlink "$dir/fill";
    $r = $t->post('/malloc/prof_dump', '"full.heap"');
    is($r->{status}, 200, 'full: dump works once there is room');
    ok(!grep({ !-s "$dir/full.$_->{pid}.heap" } @{$r->{json}{workers}}),
       'full: both dumps written');
    is($t->get('/malloc/pprof/heap.pb.gz')->{status}, 200,
       'full: profile works once there is room');

    $t->no_alerts;
    $t->stop;
    is(system('umount', $dir), 0, 'full: unmounted');
    @mounted = ();
}

done_testing;
