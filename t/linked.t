#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# The third way of docs/operations.md: an nginx binary linked with
# jemalloc, started with MALLOC_CONF and no LD_PRELOAD.  Building nginx
# needs its full sources, which nginx-dev does not ship; patchelf gives a
# copy of Debian's nginx the same first DT_NEEDED entry that
# --with-ld-opt=-ljemalloc gives, which is what makes jemalloc the
# allocator.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Temp qw(tempdir);
use Test::More;
use MallocTest;

plan skip_all => 'patchelf is not installed'
    unless system('command -v patchelf >/dev/null 2>&1') == 0;

# readable and executable by the workers' user
my $dir = tempdir('malloc-linked-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $dir;
my $nginx = "$dir/nginx";
system('cp', $MallocTest::NGINX, $nginx) == 0 or die "cp: $?";
system('patchelf', '--add-needed', 'libjemalloc.so.2', $nginx) == 0
    or die "patchelf: $?";

my ($first) = `readelf -d $nginx` =~ /\(NEEDED\)\s+Shared library: \[(.*?)\]/;
is($first, 'libjemalloc.so.2', 'the binary needs jemalloc first');

local $MallocTest::NGINX = $nginx;

my $t = MallocTest->new(workers => 2, jemalloc => 0)->start;
my $r = $t->get('/malloc/');
is($r->{status}, 200, 'GET /malloc/ without LD_PRELOAD');
is($r->{json}{jemalloc}{state}, 'ok', 'jemalloc is the allocator');
like($r->{json}{jemalloc}{library}, qr{/libjemalloc\.so\.2$}, 'library');

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
my @pids = $t->worker_pids;
my ($port) = $t->ports_to($pids[0], 1);
is($t->http_from($port, 'GET', '/t/alloc?mb=8')->{json}{pid}, $pids[0],
   '8 MiB held in a worker');

$ENV{HOME} = $t->prefix;
my $url = $t->url('/malloc/pprof/heap');
my $jeprof = `jeprof --text $url 2>&1`;
like($jeprof, qr/\bngx_http_malloc_test_hold\b/, 'jeprof names the holder')
    or diag($jeprof);
like($jeprof, qr/\bngx_http_core_content_phase\b/,
     'jeprof names nginx functions of the linked binary');

$t->no_alerts;
$t->stop;

# linked is not enough: MALLOC_CONF must still turn profiling on

$t = MallocTest->new(workers => 1, jemalloc => 0, malloc_conf => undef)
    ->start;
$r = $t->get('/malloc/');
is($r->{status}, 503, 'without MALLOC_CONF: 503');
is($r->{json}{jemalloc}{state}, 'prof_not_enabled', 'prof_not_enabled');
like($r->{json}{error}{text}, qr/MALLOC_CONF/, 'the fix names MALLOC_CONF');
$t->stop;

done_testing;
