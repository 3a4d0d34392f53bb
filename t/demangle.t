#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# C++ names in the profiles: a frame of the test module under a C++
# symbol (malloc_test::Holder::grow, ngx_http_malloc_test_cxx_grow in
# t/testmod) keeps its mangled symbol in what the module serves, as pprof
# and jeprof expect, and the clients print it demangled.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest;

my $go = `sh -c 'command -v go' 2>/dev/null`;
plan skip_all => 'go tool pprof is not installed (golang-go)' unless $go;

my $mangled = '_ZN11malloc_test6Holder4growEm';
my $readable = 'malloc_test::Holder::grow';

my $t = MallocTest->new(workers => 1,
    server => 'location /t/cxx { malloc_test_cxx; }')->start;
my $url = $t->url('/malloc');

# clients keep their caches under $HOME
$ENV{HOME} = $t->prefix;
$ENV{PPROF_TMPDIR} = $t->prefix . '/pprof';

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');

# blocks of 8 MiB: each is sampled at the default mean of 512 KiB
is($t->get('/t/cxx?mb=16&block=8')->{json}{kept}, 16,
   '16 MiB held through the C++ function');

my $pb = $t->prefix . '/heap.pb.gz';
system("curl -s -o $pb $url/pprof/heap.pb.gz") == 0 or fail('download');

my $raw = `cd / && go tool pprof -raw -symbolize=none $pb 2>&1`;
like($raw, qr/\Q$mangled\E/, 'heap.pb.gz keeps the mangled name');
unlike($raw, qr/\Q$readable\E/, 'and not a demangled one');

my $top = `cd / && go tool pprof -top -sample_index=inuse_space $pb 2>&1`;
like($top, qr/\Q$readable\E/, 'go tool pprof -top demangles it');

my $heap = $t->prefix . '/nginx.heap';
my $r = $t->get('/malloc/heap');
is($r->{status}, 200, 'GET heap');
open my $fh, '>', $heap or die "$heap: $!";
print $fh $r->{content};
close $fh;

my $jeprof = `cd / && jeprof --text $MallocTest::NGINX $heap 2>/dev/null`;
like($jeprof, qr/\Q$readable\E/, 'jeprof --text demangles it');

$t->no_alerts;
$t->stop;

done_testing;
