#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A reload and a quit while a profile is being built on the module's
# thread (issue 20, defect 2): the client gets its profile, the old
# worker finishes the request before it exits (no "[alert] open socket
# left"), and no hidden file of the profile is left behind.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(json_decode poll_until);

# a heap of 60000 stacks, each sampled: its profile takes a while to build
sub big_heap {
    my ($t) = @_;
    is($t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}')
       ->{status}, 200, 'sample everything');
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'profiling on');
    is($t->get('/t/alloc?stacks=60000&size=64')->{status}, 200,
       'the worker holds 60000 stacks');
    is($t->post('/malloc/prof_active', 'false')->{status}, 200,
       'profiling off');
}

# the workers' hidden dumps of the profile are written: the poster
# reads them back on its thread now
sub in_build {
    my ($t) = @_;
    return poll_until(10, sub {
        opendir(my $d, $t->dump_dir);
        grep { /^\.profile-/ } readdir $d;
    });
}

sub hidden {
    my ($t) = @_;
    opendir(my $d, $t->dump_dir);
    return grep { /^\.[^.]/ } readdir $d;
}

for my $how ('reload', 'quit') {
    my $t = MallocTest->new(workers => 1)->start;
    big_heap($t);
    my ($old) = $t->worker_pids;

    my $s = $t->send('GET', '/malloc/pprof/heap.pb.gz');
    ok(in_build($t), "$how: the profile is being built");

    if ($how eq 'reload') {
        $t->reload;
    } else {
        my ($rc, $out) = $t->run_nginx('-s', 'quit');
        is($rc, 0, 'quit sent') or diag $out;
    }

    my $r = $t->response($s);
    is($r->{status}, 200, "$how: the profile is answered");
    like($r->{content}, qr/^\x1f\x8b/, "$how: and it is the gzipped profile");

    ok(poll_until(20, sub { !kill 0, $old }), "$how: the old worker exits");
    is(join(' ', hidden($t)), '', "$how: no hidden file left");
    unlike($t->log_text, qr/open socket #\d+ left|aborting/,
           "$how: no socket left open at the worker's exit");
    $t->no_alerts;

    if ($how eq 'reload') {
        is($t->get('/malloc/pprof/heap.pb.gz')->{status}, 200,
           'reload: the new worker profiles');
        $t->stop;
    }
}

done_testing;
