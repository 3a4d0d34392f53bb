#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# POST prof_active: every worker changes state, checked inside each worker
# by the test module; bad bodies change nothing; write=off refuses.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest;

my $t = MallocTest->new(workers => 4)->start;
my $url = $t->url('/malloc/prof_active');

# Lighthouse's admin API command, verbatim

my $out = `curl -s -X POST -d 'true' $url`;
my $j = MallocTest::json_decode($out);
ok($j && $j->{prof_active}, 'curl -d true turns profiling on')
    or diag $out;
is(scalar @{$j->{workers}}, 4, 'response lists 4 workers');
ok(!grep({ !$_->{prof_active} } @{$j->{workers}}),
   'every worker reports prof_active');

my $s = $t->states_by_worker;
is(scalar keys %$s, 4, 'all 4 workers reached');
is_deeply([values %$s], [1, 1, 1, 1], 'prof.active true in every worker');

my $r = $t->get('/malloc/prof_active');
ok($r->{json}{prof_active}, 'GET shows it on');

like(join("\n", $t->log_lines(qr/\[notice\]/)),
     qr/heap profiling turned on by client 127\.0\.0\.1/,
     'state change logged at notice with the client');

# {"active": false}, with a JSON content type

$r = $t->post('/malloc/prof_active', '{"active": false}',
              'Content-Type' => 'application/json');
is($r->{status}, 200, 'object body');
ok(!$r->{json}{prof_active}, 'off');
$s = $t->states_by_worker;
is_deeply([values %$s], [0, 0, 0, 0], 'prof.active false in every worker');

$out = `curl -s -X POST -d 'false' $url`;
ok(MallocTest::json_decode($out)->{workers}, 'off again is fine');

# bad bodies: 400, clear text, nothing changes

$t->post('/malloc/prof_active', 'true');

for my $bad ('', ' ', 'yes', 'True', '1', '"true"', 'null', '[true]',
             '{"active": "true"}', '{"active": true, "x": 1}', '{}',
             '{"active": true, "active": false}', 'true false',
             '{"active": tru', "\x00", '[' x 4000)
{
    $r = $t->post('/malloc/prof_active', $bad);
    my $shown = length($bad) > 20 ? substr($bad, 0, 20) . '...' : $bad;
    is($r->{status}, 400, "400 for '$shown'");
    is($r->{json}{error}{code}, 'invalid_body', "code for '$shown'");
    ok(length $r->{json}{error}{text} > 10, "text for '$shown'");
}

$s = $t->states_by_worker;
is_deeply([values %$s], [1, 1, 1, 1], 'bad bodies changed nothing');

# bodies: chunked, in a temp file, too large

$out = `curl -s -X POST -H 'Transfer-Encoding: chunked' -d 'false' $url`;
ok(!MallocTest::json_decode($out)->{prof_active}, 'chunked body');

$r = $t->post('/malloc/prof_active', ' ' x 5000 . 'true');
is($r->{status}, 413, 'body over 4096 bytes');
is($r->{json}{error}{code}, 'body_too_large', '413 code');

$out = `printf '%5000s' true | curl -s -X POST -H 'Transfer-Encoding: chunked' --data-binary \@- $url`;
is(MallocTest::json_decode($out)->{error}{code}, 'body_too_large',
   'chunked body over the limit');

$t->stop;

# a body buffered to a temp file

$t = MallocTest->new(workers => 2,
                     http => 'client_body_in_file_only clean;')->start;
$r = $t->post('/malloc/prof_active', 'true');
is($r->{status}, 200, 'body in a temp file');
ok($r->{json}{prof_active}, 'temp-file body read');
$t->no_alerts;
$t->stop;

# write=off: GET works, POST is refused and changes nothing

$t = MallocTest->new(workers => 2, admin => '')->start;
$r = $t->get('/malloc/prof_active');
is($r->{status}, 200, 'read-only GET');
$r = $t->post('/malloc/prof_active', 'true');
is($r->{status}, 403, 'read-only POST');
is($r->{json}{error}{code}, 'write_disabled', '403 code');
like($r->{json}{error}{text}, qr/write=on/, '403 names the fix');
$r = $t->post('/malloc/prof_dump', '"x.heap"');
is($r->{status}, 403, 'read-only dump');
$s = $t->states_by_worker;
is_deeply([values %$s], [0, 0], 'nothing changed');
ok(!-e $t->dump_dir . '/x.heap' && !glob($t->dump_dir . '/*'),
   'no dump written');
$t->no_alerts;
$t->stop;

$t = MallocTest->new(workers => 1, admin => 'write=off')->start;
is($t->post('/malloc/prof_active', 'true')->{status}, 403, 'write=off');
$t->stop;

# started with prof_active:true: that is the desired state, and a read
# (here a profile, which dumps every worker) never turns it off

$t = MallocTest->new(workers => 2,
                     malloc_conf => 'prof:true,prof_active:true')->start;
ok($t->get('/malloc/prof_active')->{json}{prof_active},
   'MALLOC_CONF prof_active:true is the desired state');
is($t->get('/malloc/heap')->{status}, 200, 'a profile');
is_deeply([values %{$t->states_by_worker}], [1, 1],
          'still profiling in every worker after it');
$t->no_alerts;
$t->stop;

done_testing;
