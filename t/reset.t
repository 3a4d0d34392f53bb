#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# The commands that act on every worker's allocator besides on/off:
# POST prof_reset (samples dropped, sampling rate changed), POST purge
# (dirty pages returned), and POST prof_active with a duration, after
# which profiling turns itself off.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(poll_until);

our $TODO;

my $MB = 1024 * 1024;

my $t = MallocTest->new(workers => 2)->start;
my @pids = $t->worker_pids;
my %to = map { $_ => ($t->ports_to($_, 1))[0] } @pids;
is(scalar(grep { defined } values %to), 2, 'a local port to each worker');

# the header of the merged legacy text profile:
# "heap profile: OBJECTS: BYTES [..] @ heap_v2/PERIOD"
sub heap_header {
    my $r = $t->get('/malloc/pprof/heap');
    my ($objects, $bytes, $period) = ($r->{content} // '')
        =~ m{^heap profile: *(\d+): *(\d+) \[ *\d+: *\d+\] \@ heap_v2/(\d+)\n};
    return { status => $r->{status}, objects => $objects, bytes => $bytes,
             period => $period, shown => $bytes // 'no' };
}

sub lg_by_worker {
    my ($json) = @_;
    return join ',', map { $_->{lg_sample} // $_->{lg_prof_sample} // 'none' }
                     @{$json->{workers}};
}

# prof_reset: what was sampled is gone, what is still held stays held

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
for my $pid (@pids) {
    is($t->http_from($to{$pid}, 'GET', '/t/alloc?mb=16&block=8')
           ->{json}{kept}, 16, "16 MiB held in worker pid $pid");
}

my $h = heap_header();
is($h->{status}, 200, 'pprof/heap');
is($h->{period}, 524288, 'sampled every 512 KiB on average');
ok(($h->{bytes} // 0) >= 16 * $MB,
   "the 32 MiB held are in the profile ($h->{shown} bytes sampled)");

my $r = $t->post('/malloc/prof_reset');
is($r->{status}, 200, 'prof_reset with no body');
is(join(',', sort { $a <=> $b } map { $_->{pid} } @{$r->{json}{workers}}),
   join(',', @pids), 'both workers answered');
is(lg_by_worker($r->{json}), '19,19', 'the sampling rate is kept');
like(join("\n", $t->log_lines(qr/\[notice\]/)),
     qr/heap profile samples reset .*by client 127\.0\.0\.1/,
     'logged at notice with the client');

$h = heap_header();
ok(defined $h->{bytes} && $h->{bytes} < $MB,
   "after the reset the profile no longer shows them ($h->{shown} bytes)");
is($h->{period}, 524288, 'same period');
is($t->http_from($to{$pids[0]}, 'GET', '/t/state')->{json}{kept}, 16,
   'though worker 0 still holds its 16 MiB');

is($t->http_from($to{$pids[0]}, 'GET', '/t/alloc?mb=16&block=8')
       ->{json}{kept}, 32, '16 MiB more in worker 0');
$h = heap_header();
ok(($h->{bytes} // 0) >= 8 * $MB && $h->{bytes} < 24 * $MB,
   "the profile shows what came after the reset ($h->{shown} bytes)");

$r = $t->post('/malloc/prof_reset', '{}');
is($r->{status}, 200, 'prof_reset with {}');
is(lg_by_worker($r->{json}), '19,19', '{} keeps the rate too');

# a new sampling rate, in every worker

$r = $t->post('/malloc/prof_reset', '{"lg_sample": 14}',
              'Content-Type' => 'application/json');
is($r->{status}, 200, 'lg_sample 14');
is(lg_by_worker($r->{json}), '14,14', 'both workers answer 14');
like($t->log_text,
     qr/heap profile samples reset, lg_sample 14, by client 127\.0\.0\.1/,
     'the new rate is logged');

for my $pid (@pids) {
    my $j = $t->http_from($to{$pid}, 'GET', '/malloc/')->{json};
    is($j->{jemalloc}{lg_prof_sample}, 14, "GET / in worker $pid: 14");
    is($j->{jemalloc}{sample_bytes}, 16384, "GET / in worker $pid: 16 KiB");
}

my $s = $t->get('/malloc/stats')->{json};
is(lg_by_worker($s), '14,14', 'stats: lg_prof_sample 14 in every worker');
is(join(',', map { $_->{sample_bytes} } @{$s->{workers}}), '16384,16384',
   'stats: sample_bytes 16384');
my $series =
    qr/^nginx_malloc_sample_interval_bytes\{worker="\d+",pid="(\d+)"\}/;
is(join(',', sort { $a <=> $b } map { /$series 16384$/ ? $1 : () }
             split /\n/, $t->get('/malloc/metrics')->{content}),
   join(',', @pids), 'metrics: sample_interval_bytes 16384 for both');
is(heap_header()->{period}, 16384, 'the profile header says heap_v2/16384');

# below one sample per 4 KiB needs force

$r = $t->post('/malloc/prof_reset', '{"lg_sample": 11}');
is($r->{status}, 400, 'lg_sample 11: 400');
is($r->{json}{error}{code}, 'lg_sample_too_low', 'code lg_sample_too_low');
like($r->{json}{error}{text}, qr/"force": true/, 'the text names the fix');
$r = $t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": false}');
is($r->{json}{error}{code}, 'lg_sample_too_low', 'force false: refused too');
is(lg_by_worker($t->get('/malloc/stats')->{json}), '14,14',
   'a refused reset changes nothing');

$r = $t->post('/malloc/prof_reset', '{"lg_sample": 12}');
is($r->{status}, 200, 'lg_sample 12, the floor, needs no force');
is(lg_by_worker($r->{json}), '12,12', 'applied');

$r = $t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}');
is($r->{status}, 200, 'lg_sample 0 with force');
is(lg_by_worker($r->{json}), '0,0', 'every allocation sampled');
is(join(',', map { $_->{sample_bytes} } @{$t->get('/malloc/stats')
   ->{json}{workers}}), '1,1', 'stats: sample_bytes 1');

$r = $t->post('/malloc/prof_reset', '{"lg_sample": 63}');
is($r->{status}, 200, 'lg_sample 63, the ceiling');
is(lg_by_worker($r->{json}), '63,63', 'applied');
$s = $t->get('/malloc/stats')->{json};
# 2^63 does not fit a JSON integer: null says sampling has stopped
ok(!grep({ defined $_->{sample_bytes} } @{$s->{workers}}),
   'stats: sample_bytes null at lg_sample 63');
is($t->get('/malloc/')->{json}{jemalloc}{sample_bytes}, undef,
   'GET /: sample_bytes null at lg_sample 63');

# jemalloc writes heap_v2/9223372036854775808 then: every profile still
# reads it
for my $uri ('/malloc/pprof/heap.pb.gz', '/malloc/pprof/heap.json',
             '/malloc/pprof/heap')
{
    $r = $t->get($uri);
    is($r->{status}, 200, "lg_sample 63: $uri 200")
        or diag substr($r->{content}, 0, 300);
}
is($t->post('/malloc/prof_dump', '"at63.heap"')->{status}, 200,
   'lg_sample 63: prof_dump 200');

# bad bodies: 400, nothing changes

for my $bad ('{"lg_sample": 64}', '{"lg_sample": -1}',
             '{"lg_sample": 64, "force": true}', '{"lg_sample": 14.0}',
             '{"lg_sample": 14.5}', '{"lg_sample": "14"}',
             '{"lg_sample": true}', '{"lg_sample": null}', '14', 'true',
             'null', '[]', '"x"', '{"lg": 14}', '{"lg_sample": 14, "x": 1}',
             '{"lg_sample": 14, "lg_sample": 15}', '{"force": "yes"}',
             '{"force": 1}', '{', "{}\x00")
{
    $r = $t->post('/malloc/prof_reset', $bad);
    (my $shown = $bad) =~ s/\x00/\\0/;
    is($r->{status}, 400, "400 for '$shown'");
    is($r->{json}{error}{code}, 'invalid_body', "invalid_body for '$shown'");
    ok(length($r->{json}{error}{text} // '') > 10, "text for '$shown'");
}

is(lg_by_worker($t->get('/malloc/stats')->{json}), '63,63',
   'bad bodies changed nothing');

$r = $t->post('/malloc/prof_reset', '{"lg_sample": 19}');
is(lg_by_worker($r->{json}), '19,19', 'back to 2^19');

$r = $t->get('/malloc/prof_reset');
is($r->{status}, 405, 'GET prof_reset: 405');
is($r->{headers}{allow}, 'POST', 'Allow: POST');

# purge: memory freed by worker 0 goes back to the system

is($t->http_from($to{$pids[0]}, 'GET', '/t/alloc?mb=64')->{json}{kept}, 96,
   '64 MiB more in worker 0');
is($t->http_from($to{$pids[0]}, 'GET', '/t/alloc?free=1')->{json}{kept}, 0,
   'all of it freed');

$r = $t->post('/malloc/purge');
is($r->{status}, 200, 'purge with no body');
my %w = map { $_->{pid} => $_ } @{$r->{json}{workers}};
is(join(',', sort { $a <=> $b } keys %w), join(',', @pids),
   'both workers answered');
for my $pid (@pids) {
    ok(($w{$pid}{resident_after} // -1) >= 0
       && $w{$pid}{resident_after} <= ($w{$pid}{resident_before} // -1),
       "worker $pid: resident_after <= resident_before");
}
my $drop = $w{$pids[0]}{resident_before} - $w{$pids[0]}{resident_after};
ok($drop >= 32 * $MB, sprintf('worker 0 returned %.1f MiB', $drop / $MB));
my ($after) = grep { $_->{pid} == $pids[0] }
                @{$t->get('/malloc/stats')->{json}{workers}};
ok($after->{resident} < $w{$pids[0]}{resident_before} - 32 * $MB,
   'stats show the lower resident');

like($t->log_text, qr/allocator purge requested by client 127\.0\.0\.1/,
     'purge logged with the client');

$r = $t->post('/malloc/purge', '{}');
is($r->{status}, 200, 'purge with {}');

$r = $t->post('/malloc/purge', 'x');
is($r->{status}, 400, 'purge with a body: 400');
is($r->{json}{error}{code}, 'invalid_body', 'invalid_body');

for my $bad ('{"x": 1}', '{x', "\n[") {
    (my $shown = $bad) =~ s/\n/\\n/;
    is($t->post('/malloc/purge', $bad)->{status}, 400,
       "purge with '$shown': 400");
}

# prof_active with a duration: on now, off by itself in every worker

is($t->post('/malloc/prof_active', 'false')->{status}, 200, 'profiling off');

my $start = time;
$r = $t->post('/malloc/prof_active', '{"active": true, "duration": "3s"}');
is($r->{status}, 200, 'on for 3s');
ok($r->{json}{prof_active}, 'prof_active true');
ok(($r->{json}{prof_active_remaining} // 0) >= 2
   && $r->{json}{prof_active_remaining} <= 3,
   "prof_active_remaining $r->{json}{prof_active_remaining}");
like($t->log_text,
     qr/heap profiling turned on for 3 s by client 127\.0\.0\.1/,
     'logged with its duration');

my $states = $t->states_by_worker;
is(join(',', map { $states->{$_} } @pids), '1,1', 'on in both workers');

$r = $t->get('/malloc/prof_active');
ok($r->{json}{prof_active}, 'GET prof_active: on');
ok(($r->{json}{prof_active_remaining} // 0) >= 1
   && $r->{json}{prof_active_remaining} <= 3,
   "GET prof_active: $r->{json}{prof_active_remaining} s remaining");
$r = $t->get('/malloc/');
ok(($r->{json}{prof_active_remaining} // 0) >= 1, 'GET /: remaining too');

my $off = poll_until(8, sub {
    my $st = $t->states_by_worker;
    return (keys %$st == 2 && !grep { $_ } values %$st);
});
my $took = time - $start;
ok($off, sprintf('off by itself in every worker, after %.1f s', $took));
ok($took >= 2.8, 'not before its time');

$r = $t->get('/malloc/prof_active');
ok(JSON::PP::is_bool($r->{json}{prof_active}) && !$r->{json}{prof_active},
   'GET prof_active: off');
ok(exists $r->{json}{prof_active_remaining}
   && !defined $r->{json}{prof_active_remaining}, 'remaining null');
is(scalar(grep { $_->{prof_active} } @{$t->get('/malloc/stats')
   ->{json}{workers}}), 0, 'stats: off in every worker');

my $elapsed =
    qr/\[notice\].*heap profiling turned off: its duration has elapsed/;
ok(poll_until(2, sub { $t->log_lines($elapsed) }), 'the end is logged');

# a plain "true" cancels a running duration

$r = $t->post('/malloc/prof_active', '{"active": true, "duration": "1s"}');
is($r->{json}{prof_active_remaining}, 1, 'on for 1s');
$r = $t->post('/malloc/prof_active', 'true');
ok(!defined $r->{json}{prof_active_remaining},
   'then true: remaining null');
# waiting for something not to happen: past the 1s and the 1s poll
sleep 2.5;
$states = $t->states_by_worker;
is(join(',', map { $states->{$_} } @pids), '1,1',
   'still on in both workers after the second');
is(scalar($t->log_lines($elapsed)), 1, 'the end was logged once only');

# "1h 30m", the longest and none

$r = $t->post('/malloc/prof_active', '{"active": true, "duration": "1h 30m"}');
is($r->{json}{prof_active_remaining}, 5400, '"1h 30m": 5400 s');
$r = $t->post('/malloc/prof_active', '{"active": true, "duration": "30d"}');
is($r->{status}, 200, '"30d", the longest');
is($r->{json}{prof_active_remaining}, 30 * 86400, '"30d": 2592000 s');
$r = $t->post('/malloc/prof_active', '{"active": true, "duration": null}');
is($r->{status}, 200, 'duration null');
ok(!defined $r->{json}{prof_active_remaining}, 'null: no duration');
is($t->post('/malloc/prof_active', 'false')->{status}, 200, 'off');

for my $bad ('"abc"', '"0s"', '"500ms"', '"40d"', '"31d"', '""', '600',
             '"1.5h"', '"1h\t30m"')
{
    my $body = qq({"active": true, "duration": $bad});
    $r = $t->post('/malloc/prof_active', $body);
    is($r->{status}, 400, "duration $bad: 400");
    is($r->{json}{error}{code}, 'invalid_body', "duration $bad: code");
}
$r = $t->post('/malloc/prof_active',
              '{"active": false, "duration": "10m"}');
is($r->{status}, 400, 'duration with active false: 400');
like($r->{json}{error}{text}, qr/"active": true/, 'the text says why');

$states = $t->states_by_worker;
is(join(',', map { $states->{$_} } @pids), '0,0',
   'refused durations changed nothing');
ok(!defined $t->get('/malloc/prof_active')->{json}{prof_active_remaining},
   'and started no timer');

$t->no_alerts;
$t->stop;

# read-only: refused, nothing applied

$t = MallocTest->new(workers => 2, admin => 'write=off')->start;
for my $ep ('prof_reset', 'purge') {
    $r = $t->post("/malloc/$ep", '{}');
    is($r->{status}, 403, "write=off: $ep 403");
    is($r->{json}{error}{code}, 'write_disabled', "write=off: $ep code");
}
is($t->get('/malloc/stats')->{status}, 200, 'write=off: stats still read');
ok(!$t->log_lines(qr/samples reset|purge requested/), 'nothing logged');
$t->no_alerts;
$t->stop;

# no jemalloc: 503 naming the cause

$t = MallocTest->new(jemalloc => 0, malloc_conf => undef)->start;
for my $req (['prof_reset', ''], ['prof_reset', '{"lg_sample": 14}'],
             ['purge', ''],
             ['prof_active', '{"active": true, "duration": "1m"}'])
{
    $r = $t->post("/malloc/$req->[0]", $req->[1]);
    is($r->{status}, 503, "no jemalloc: $req->[0] '$req->[1]': 503");
    is($r->{json}{error}{code}, 'jemalloc_not_found', 'code');
}
$t->no_alerts;
$t->stop;

done_testing;
