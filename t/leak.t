#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Leaks that nobody is watching.  Reloads: the master samples too, and
# after each reload the first worker of the new generation writes the
# heap it inherited from the master; a module that leaks in its
# configuration handler shows there, (reloads - 1) times its leak, and in
# the generations' growth.  malloc_watch: a growth above the threshold
# with sampling off turns sampling on for a while and saves what grew as
# a snapshot, then turns it off again; memory that stays flat fires
# nothing; a spike that is freed leaves a peak snapshot that names it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest qw(poll_until held);

$ENV{HOME} = '/tmp';

my $MB = 1024 * 1024;

sub near {
    my ($got, $want, $name) = @_;
    ok(abs($got - $want) <= $want * 0.25 + 1,
       sprintf('%s: %.1f MiB, expected about %d', $name, $got, $want));
}

sub snapshots_of {
    my ($t, $reason) = @_;
    return grep { $_->{reason} eq $reason }
                @{$t->get('/malloc/snapshots')->{json}{snapshots}};
}

###########################################################################
# a module that leaks 4 MiB at each parse of the configuration

{
    my $t = MallocTest->new(workers => 2, http => 'malloc_test_leak 4m;')
        ->start;
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'reload: profiling on');

    $t->reload for 1 .. 4;

    like($t->log_text, qr/heap profiling turned on in the master/,
         'reload: the master samples from the first reload on');

    my $gens = $t->get('/malloc/')->{json}{generations};
    is(scalar @$gens, 5, 'reload: five generations listed');
    is($gens->[0]{generation}, 5, 'reload: newest first');
    ok(!grep({ !defined $_->{growth} || abs($_->{growth} - 4 * $MB) > $MB }
             @$gens[0 .. 3]),
       'reload: each reload grew the master by about 4 MiB: '
       . join(', ', map { sprintf '%.1f', ($_->{growth} // 0) / $MB }
                        @$gens[0 .. 3]));
    like($gens->[0]{snapshot} // '',
         qr/^snapshot-\d{8}T\d{6}Z\.reload\.5\.heap$/,
         'reload: the master\'s heap of the last reload, as a snapshot');
    is($gens->[4]{snapshot}, undef, 'reload: none at the start');

    my $r = $t->get('/malloc/pprof/heap.json?process=master');
    is($r->{status}, 200, 'reload: the master\'s heap');
    near(held($r->{json}, 'ngx_http_malloc_test_leak'), 12,
         'reload: 4 reloads sampled 3 leaks');

    $r = $t->get('/malloc/pprof/heap.json?process=master&since=3');
    near(held($r->{json}, 'ngx_http_malloc_test_leak')
         - held({ %{$r->{json}}, values => $r->{json}{base_values} },
                'ngx_http_malloc_test_leak'), 8,
         'reload: what the last two reloads kept');

    my $pb = $t->prefix . '/master.pb.gz';
    $r = $t->get('/malloc/pprof/heap.pb.gz?process=master&since=3');
    is($r->{status}, 200, 'reload: as profile.proto, since generation 3');
    open my $fh, '>', $pb;
    print $fh $r->{content};
    close $fh;
    my $top = `go tool pprof -top -sample_index=inuse_space $pb 2>&1`;
    my ($v, $unit) =
        $top =~ /^\s*([\d.]+)([kMG]B)\s.*\sngx_http_malloc_test_leak$/m;
    near(($v // 0) / ({ kB => 1024, MB => 1, GB => 1 / 1024 }->{$unit // 'MB'}),
         8, 'reload: go tool pprof names the leak')
        or diag $top;

    # jeprof reads the master's heap from a file, as operations.md says
    my %doc = MallocTest::doc_blocks("$MallocTest::ROOT/docs/operations.md");
    my $sh = $doc{'master-jeprof'} // '';
    like($sh, qr/^curl .*heap\?process=master/m,
         'operations.md shows the master\'s heap for jeprof');
    $sh =~ s/127\.0\.0\.1:8080/127.0.0.1:${\ $t->port}/g;
    $top = `cd ${\ $t->prefix} && (set -e; $sh) 2>&1`;
    ($v) = $top =~ /^\s*([\d.]+)\s.*\sngx_http_malloc_test_leak$/m;
    near($v // 0, 12, 'reload: jeprof on the downloaded file names the leak')
        or diag $top;
    my $url = $t->url('/malloc/pprof/heap?process=master');
    $top = `jeprof --text '$url' 2>&1`;
    like($top, qr{process=master/pprof/symbol doesn't exist},
         'reload: jeprof cannot take it as a URL');

    $r = $t->get('/malloc/metrics');
    like($r->{content}, qr/^nginx_malloc_reloads_total 4$/m,
         'reload: metrics count the reloads');
    like($r->{content}, qr/^nginx_malloc_master_allocated_bytes \d+$/m,
         'reload: and the master\'s heap');

    is(scalar(snapshots_of($t, 'reload')), 4,
       'reload: the snapshots say why they were taken');
    is($t->get('/malloc/pprof/heap.json?process=master&generation=1')
       ->{json}{error}{code}, 'no_such_generation',
       'reload: none for the start');
    is($t->get('/malloc/pprof/heap.json?process=worker')->{status}, 400,
       'reload: process=master only');
    is($t->get('/malloc/pprof/heap.json?process=master&pid=1')->{status},
       400, 'reload: process=master with a pid is a wrong mix, not 404');

    $t->no_alerts;
    $t->stop;

    # without the leak, reloads keep nothing

    $t = MallocTest->new(workers => 2)->start;
    $t->post('/malloc/prof_active', 'true');
    $t->reload for 1 .. 3;
    $gens = $t->get('/malloc/')->{json}{generations};
    ok(!grep({ abs($_->{growth} // 0) > $MB } @$gens),
       'no leak: the master does not grow: '
       . join(', ', map { sprintf '%.2f', ($_->{growth} // 0) / $MB }
                        @$gens));
    $r = $t->get('/malloc/pprof/heap.json?process=master');
    is(held($r->{json}, 'ngx_http_malloc_test_leak'), 0,
       'no leak: nothing of the test leak');
    $t->no_alerts;
    $t->stop;
}

###########################################################################
# growth: 32 MiB above the baseline with sampling off

{
    my $t = MallocTest->new(workers => 1,
        http => 'malloc_watch growth=32m sample=3s;')->start;

    # flat: below the threshold, nothing fires
    $t->get('/t/alloc?mb=8&block=8');
    sleep 3;
    is(scalar(snapshots_of($t, 'growth')), 0, 'flat: nothing fires');
    ok(!$t->get('/malloc/prof_active')->{json}{prof_active},
       'flat: sampling stays off');

    # past it in steps: sampling turns on, what grows then is saved
    $t->get('/t/alloc?mb=8&block=8') for 1 .. 4;
    ok(poll_until(5, sub {
        $t->get('/malloc/prof_active')->{json}{prof_active};
    }), 'growth: sampling turned on by itself');
    like($t->log_text, qr/\[notice\] .* heap\ grew\ by\ \d+\ bytes,\ \d+\ in
                          \ all:\ heap\ profiling\ turned\ on\ for\ 3000\ ms/x,
         'growth: logged at notice, with the figures');

    # halfway through the window the workers' heaps are recorded: what
    # grows after that is the window's growth
    ok(poll_until(5, sub {
        $t->log_text =~ /heap growth window: the workers' heaps recorded/;
    }), 'growth: the start of the window recorded, logged at info');
    $t->get('/t/alloc?mb=16&block=8');

    my @snap;
    ok(poll_until(10, sub { @snap = snapshots_of($t, 'growth') }),
       'growth: a snapshot saved');
    is(scalar @snap, 1, 'growth: one');
    like($snap[0]{name}, qr/\.growth\.\d+\.pb\.gz$/, 'growth: named for it');
    ok($snap[0]{grew} >= 32 * $MB,
       "growth: with the growth that fired it ($snap[0]{grew} bytes)");

    my $r = $t->get("/malloc/pprof/heap.json?snapshot=$snap[0]{name}");
    near(held($r->{json}, 'ngx_http_malloc_test_hold'), 16,
         'growth: the snapshot holds what grew while sampling');

    ok(poll_until(5, sub {
        !$t->get('/malloc/prof_active')->{json}{prof_active};
    }), 'growth: sampling off again');

    sleep 2;
    is(scalar(snapshots_of($t, 'growth')), 1,
       'growth: a new baseline: no second firing');

    $t->no_alerts;
    $t->stop;
}

###########################################################################
# growth with sampling on already: a snapshot at once

{
    my $t = MallocTest->new(workers => 1,
        http => 'malloc_watch growth=16m sample=1h;')->start;
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'growth, sampling on: profiling on');
    $t->get('/t/alloc?mb=24&block=8');
    my @snap;
    ok(poll_until(5, sub { @snap = snapshots_of($t, 'growth') }),
       'growth, sampling on: a snapshot at once');
    my $r = $t->get("/malloc/pprof/heap.json?snapshot=$snap[0]{name}");
    near(held($r->{json}, 'ngx_http_malloc_test_hold'), 24,
         'growth, sampling on: with what grew');
    ok($t->get('/malloc/prof_active')->{json}{prof_active},
       'growth, sampling on: sampling stays on');
    $t->no_alerts;
    $t->stop;
}

###########################################################################
# peak: a spike that is freed leaves a snapshot that names it

{
    my $t = MallocTest->new(workers => 1, http => 'malloc_watch peak=on;')
        ->start;
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'peak: profiling on');

    $t->get('/t/alloc?mb=64&block=8');
    my @snap;
    ok(poll_until(10, sub {
        @snap = grep { $_->{allocated} > 64 * $MB } snapshots_of($t, 'peak');
    }), 'peak: a snapshot at the new peak, with its allocated bytes');
    $t->get('/t/alloc?free=1');

    my $r = $t->get("/malloc/pprof/heap.json?snapshot=$snap[0]{name}");
    near(held($r->{json}, 'ngx_http_malloc_test_hold'), 64,
         'peak: it names the spike, freed since');

    $r = $t->get('/malloc/pprof/heap.json');
    ok(held($r->{json}, 'ngx_http_malloc_test_hold') < 1,
       'peak: the live heap has it no more');

    # the peak survives a reload: the same spike again is no new peak
    $t->reload;
    $t->get('/t/alloc?mb=64&block=8');
    sleep 3;
    is(scalar(snapshots_of($t, 'peak')), 1, 'peak: kept across a reload');

    $t->no_alerts;
    $t->stop;
}

# configuration

for my $bad ('growth=0', 'sample=1s', 'growth=1m sample=0', 'peak=maybe',
             'growth=1m x=1')
{
    my $c = MallocTest->new(http => "malloc_watch $bad;");
    my ($rc, $out) = $c->test_conf;
    isnt($rc, 0, "nginx -t refuses malloc_watch $bad");
}

done_testing;
