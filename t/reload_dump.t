#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A reload in the first moments of a profile, while the workers dump: on
# two workers, with a small heap and with 50,000 stacks.  A reload is not
# a crash: the answer is a whole profile, or 503 workers_changed with
# Retry-After, never a 500 that says a worker was restarted; and no
# hidden dump is left in the directory once the old workers are gone.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(sleep);
use MallocTest qw(poll_until);

# a dump of 50,000 stacks takes seconds on a loaded machine: the bound
# under test is the answer, not the speed
my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=60s')
    ->start;
my $dir = $t->dump_dir;

sub hidden {
    opendir my $dh, $dir or return ();
    return sort grep { /^\.profile-/ } readdir $dh;
}

sub across {
    my ($what, $delay, $prepare) = @_;
    $prepare->() if $prepare;
    my @old = $t->worker_pids;
    my $sock = $t->send('GET', '/malloc/pprof/heap.pb.gz');
    sleep $delay;
    my ($rc, $out) = $t->run_nginx('-s', 'reload');
    is($rc, 0, "$what, reload after ${\ ($delay * 1000)} ms") or diag $out;
    my $r = $t->response($sock, 90);
    my $code = ($r->{json} // {})->{error}{code} // '';
    ok($r->{status} == 200
       || ($r->{status} == 503 && $code eq 'workers_changed'
           && $r->{head} =~ /^Retry-After: \d+\r?$/mi),
       "$what, reload after ${\ ($delay * 1000)} ms: a profile or 503 "
       . "workers_changed ($r->{status} $code)")
        or diag explain $r->{json};
    like($r->{content} // '', qr/\A\x1f\x8b/, "$what: the profile is gzip")
        if $r->{status} == 200;
    ok(poll_until(20, sub {
        my %was = map { $_ => 1 } @old;
        !grep { $was{$_} } $t->worker_pids(1);
    }), "$what: the old workers are gone");
    ok(poll_until(10, sub { !hidden() }),
       "$what: no hidden dump left") or diag join ' ', hidden();
}

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');

# a small heap: a dump takes a millisecond or two
across('small heap', $_) for 0, 0.01, 0.025, 0.05;

# 50,000 stacks in each worker, each sampled (the new workers of a
# reload sample at the rate set, and are given their stacks anew): a dump
# takes a while
is($t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}')
   ->{status}, 200, 'sample everything');
my $stacks = sub {
    for my $pid ($t->worker_pids) {
        my ($port) = $t->ports_to($pid, 1);
        my $r = $t->response($t->send_from($port, 'GET',
                                 '/t/alloc?stacks=50000&size=64'), 60);
        is($r->{status}, 200, "worker $pid holds 50,000 stacks");
    }
};
across('50,000 stacks', $_, $stacks) for 0, 0.01, 0.05;

$t->no_alerts;
$t->stop;

done_testing;
