#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Without jemalloc, or with jemalloc but opt.prof false, every endpoint
# answers a JSON error naming the cause and the fix, and nginx serves
# traffic as usual.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest;

# a static file of every byte value, bigger than nginx's output buffers
my $blob = join '', map { chr(($_ * 7 + ($_ >> 8)) % 256) } 0 .. 300_000;

sub with_static {
    my ($t) = @_;
    mkdir $t->prefix . '/html';
    open my $fh, '>:raw', $t->prefix . '/html/blob.bin' or die $!;
    print $fh $blob;
    close $fh;
    $t->{server} = 'location = /blob.bin { root %%PREFIX%%/html; }';
    return $t;
}

sub check_all {
    my ($t, $code, $fix, $what) = @_;

    for my $req (['GET', '/malloc/'], ['GET', '/malloc/prof_active'],
                 ['POST', '/malloc/prof_active', 'true'],
                 ['POST', '/malloc/prof_dump', '"x.heap"'])
    {
        my $r = $t->http(@$req);
        is($r->{status}, 503, "$what: 503 for $req->[0] $req->[1]");
        is($r->{json}{error}{code}, $code, "$what: code $code");
        like($r->{json}{error}{text}, $fix, "$what: text names the fix");
    }

    my $r = $t->get('/malloc/');
    ok(exists $r->{json}{jemalloc}, "$what: index still shows the state");
    is(scalar @{$r->{json}{workers}}, 2, "$what: and the workers");

    for (1 .. 20) {
        my $ok = $t->get('/');
        is($ok->{status}, 200, "$what: traffic served") if $_ == 1;
    }
    # the endpoints that need the heap answer the same 503; snapshots only
    # lists the directory, and the symbol service and cmdline read the
    # worker's own mappings: those work without jemalloc

    for my $ep (qw(pprof/heap heap pprof/heap.pb.gz stats metrics)) {
        my $r = $t->get("/malloc/$ep");
        is($r->{status}, 503, "$what: 503 for GET $ep");
        is($r->{json}{error}{code}, $code, "$what: $ep code $code");
    }
    for my $ep (qw(prof_reset purge)) {
        my $r = $t->post("/malloc/$ep", '');
        is($r->{status}, 503, "$what: 503 for POST $ep");
        is($r->{json}{error}{code}, $code, "$what: $ep code $code");
    }
    $r = $t->get('/malloc/snapshots');
    is($r->{status}, 200, "$what: snapshots lists the directory");
    is_deeply($r->{json}{snapshots}, [], "$what: no snapshots");
    is($t->get('/malloc/snapshots/snapshot-x')->{status}, 404,
       "$what: no snapshot to download");
    is($t->get('/malloc/pprof/cmdline')->{status}, 200, "$what: cmdline");

    # static traffic is byte for byte what it is with the allocator in use
    my $same = grep {
        my $b = $t->get('/blob.bin');
        $b->{status} == 200 && $b->{content} eq $blob;
    } 1 .. 5;
    is($same, 5, "$what: static file byte-identical");

    ok(!glob($t->dump_dir . '/*'), "$what: no dump written");
}

# glibc malloc

my $t = with_static(MallocTest->new(jemalloc => 0, malloc_conf => undef))
    ->start;
check_all($t, 'jemalloc_not_found',
          qr{LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2.*MALLOC_CONF=prof:true},
          'glibc');
my $j = $t->get('/malloc/')->{json}{jemalloc};
ok(!$j->{found}, 'found is false');
is($j->{state}, 'jemalloc_not_found', 'state');

# what traffic holds needs no jemalloc: glibc's usable sizes, its total
my $tr = $t->get('/malloc/traffic');
is($tr->{status}, 200, 'glibc: GET traffic works');
is($tr->{json}{totals}{allocator}, 'glibc', 'glibc: and says so');
SKIP: {
    skip "ASan's malloc: glibc's mallinfo2 counts none of it", 1
        if MallocTest::asan();
    ok($tr->{json}{totals}{allocated} > 0,
       'glibc: its total, from mallinfo2');
}
is($tr->{json}{totals}{requests}{n}, 1, 'glibc: the request in flight');
ok($tr->{json}{top}[0]{bytes} > 0, 'glibc: its pools measured');
$t->no_alerts;
$t->stop;

# the rest needs jemalloc in the process (make test-asan: not there)

SKIP: {
    skip 'jemalloc cannot be preloaded with ASan', 1 if MallocTest::asan();

    # jemalloc without prof:true

    $t = with_static(MallocTest->new(malloc_conf => undef))->start;
    check_all($t, 'prof_not_enabled',
              qr/MALLOC_CONF=prof:true,prof_active:false/, 'opt.prof false');
    $j = $t->get('/malloc/')->{json}{jemalloc};
    ok($j->{found} && $j->{allocator},
       'jemalloc found and is the allocator');
    ok($j->{config_prof} && !$j->{opt_prof},
       'config.prof on, opt.prof off');
    $t->no_alerts;
    $t->stop;

    # the same file from nginx on jemalloc, profiling on

    $t = with_static(MallocTest->new)->start;
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'profiling on');
    my $same = grep { $t->get('/blob.bin')->{content} eq $blob } 1 .. 5;
    is($same, 5, 'profiling: static file byte-identical');
    $t->no_alerts;
    $t->stop;
}

# jemalloc loaded into the process but not its malloc: the module must not
# profile a second, empty heap

SKIP: {
    skip 'jemalloc cannot be loaded with ASan', 3 if MallocTest::asan();
    my $t = MallocTest->new(jemalloc => 0);
    my $shim = $t->prefix . '/dlopen_jemalloc.so';
    open my $fh, '>', $t->prefix . '/shim.c';
    print $fh <<'EOC';
#include <dlfcn.h>
__attribute__((constructor)) static void
load(void)
{
    (void) dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_GLOBAL);
}
EOC
    close $fh;
    system("cc -shared -fPIC -o $shim " . $t->prefix . "/shim.c -ldl") == 0
        or skip 'shim did not build', 3;
    # glibc refuses a dlopen()ed jemalloc for lack of static TLS space
    # unless it is told to keep more
    local $ENV{GLIBC_TUNABLES} = 'glibc.rtld.optional_static_tls=16777216';
    local $MallocTest::JEMALLOC = $shim;
    $t->{jemalloc} = 1;
    $t->start;
    my $r = $t->get('/malloc/');
    is($r->{status}, 503, 'dlopened jemalloc: 503');
    is($r->{json}{error}{code}, 'jemalloc_not_allocator', 'code');
    like($r->{json}{error}{text}, qr/not jemalloc's/, 'text');
    $t->stop;
}

done_testing;
