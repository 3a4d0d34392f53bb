#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# GET endpoints of the admin location: the state page, prof_active,
# routing, methods and the JSON error shape.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest;

my $t = MallocTest->new(workers => 3)->start;
my @pids = $t->worker_pids;

my $r = $t->get('/malloc/');
is($r->{status}, 200, 'GET index');
like($r->{headers}{'content-type'}, qr{^application/json}, 'json type');

my $j = $r->{json};
is($j->{module}, 'ngx_http_malloc_module', 'module name');
like($j->{version}, qr/^\d+\.\d+\.\d+$/, 'module version');
my ($version) = `$MallocTest::NGINX -v 2>&1` =~ m{nginx/(\S+)};
is($j->{nginx}, $version, "the version of the nginx that runs: $version");
is($j->{jemalloc}{state}, 'ok', 'jemalloc state');
ok($j->{jemalloc}{found} && $j->{jemalloc}{allocator}, 'jemalloc found');
like($j->{jemalloc}{version}, qr/^5\./, 'jemalloc version');
ok($j->{jemalloc}{config_prof} && $j->{jemalloc}{opt_prof}, 'prof flags');
is($j->{jemalloc}{lg_prof_sample}, 19, 'default lg_prof_sample');
is($j->{jemalloc}{sample_bytes}, 524288, 'sample interval in bytes');
ok(JSON::PP::is_bool($j->{write}) && $j->{write}, 'write is on');
is($j->{dump_dir}, $t->dump_dir, 'dump dir');
ok(!$j->{prof_active}, 'profiling off at start');
is(scalar @{$j->{workers}}, 3, 'three workers listed');
is_deeply([sort { $a <=> $b } map { $_->{pid} } @{$j->{workers}}], \@pids,
          'worker pids are the real ones');
is_deeply([map { $_->{worker} } @{$j->{workers}}], [0, 1, 2],
          'worker numbers');
ok(!grep({ $_->{prof_active} } @{$j->{workers}}), 'no worker profiling');

$r = $t->get('/malloc/prof_active');
is($r->{status}, 200, 'GET prof_active');
ok(JSON::PP::is_bool($r->{json}{prof_active}), 'prof_active is a bool');
is(scalar @{$r->{json}{workers}}, 3, 'prof_active lists workers');
is_deeply([sort keys %{$r->{json}{workers}[0]}],
          [qw(age pid prof_active stale worker)], 'worker fields');
ok(!grep({ $_->{stale} || $_->{age} > 3 } @{$r->{json}{workers}}),
   'every worker published its state within the last seconds');

$r = $t->http('HEAD', '/malloc/');
is($r->{status}, 200, 'HEAD index');
is($r->{content} // '', '', 'HEAD has no body');
ok($r->{headers}{'content-length'} > 0, 'HEAD has the length');

# routing and methods

$r = $t->get('/malloc/nope');
is($r->{status}, 404, 'unknown endpoint');
is($r->{json}{error}{status}, 404, 'error status');
is($r->{json}{error}{code}, 'not_found', 'error code');
like($r->{json}{error}{text}, qr/nope/, 'error names the endpoint');

$r = $t->get('/malloc/prof_active/');
is($r->{status}, 404, 'trailing slash is another endpoint');

$r = $t->get('/malloc/prof_dump');
is($r->{status}, 405, 'GET prof_dump');
is($r->{headers}{allow}, 'POST', 'Allow: POST');
is($r->{json}{error}{code}, 'method_not_allowed', '405 code');

$r = $t->post('/malloc/', 'true');
is($r->{status}, 405, 'POST index');
is($r->{headers}{allow}, 'GET, HEAD', 'Allow on index');
is($r->{json}{error}{text}, '"/malloc/" takes GET, HEAD', '405 text');

$r = $t->http('DELETE', '/malloc/prof_active');
is($r->{status}, 405, 'DELETE prof_active');
is($r->{headers}{allow}, 'GET, HEAD, POST', 'Allow on prof_active');

$r = $t->http('PUT', '/malloc/prof_active', 'true');
is($r->{status}, 405, 'PUT prof_active');

# other locations are untouched

$r = $t->get('/');
is($r->{status}, 200, 'ordinary location');
is($r->{content}, "ok\n", 'ordinary response');

# reads never change state and log nothing above info

is(scalar $t->log_lines(qr/\[(notice|warn|error)\].*\*\d+/), 0,
   'reads log nothing at notice or above');

$t->no_alerts;
$t->stop;

done_testing;
