#!/usr/bin/perl

# Without jemalloc, or with jemalloc but opt.prof false, every endpoint
# answers a JSON error naming the cause and the fix, and nginx serves
# traffic as usual.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest;

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
    ok(!glob($t->dump_dir . '/*'), "$what: no dump written");
}

# glibc malloc

my $t = MallocTest->new(jemalloc => 0, malloc_conf => undef)->start;
check_all($t, 'jemalloc_not_found',
          qr{LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc\.so\.2.*MALLOC_CONF=prof:true},
          'glibc');
my $j = $t->get('/malloc/')->{json}{jemalloc};
ok(!$j->{found}, 'found is false');
is($j->{state}, 'jemalloc_not_found', 'state');
$t->no_alerts;
$t->stop;

# jemalloc without prof:true

$t = MallocTest->new(malloc_conf => undef)->start;
check_all($t, 'prof_not_enabled', qr/MALLOC_CONF=prof:true,prof_active:false/,
          'opt.prof false');
$j = $t->get('/malloc/')->{json}{jemalloc};
ok($j->{found} && $j->{allocator}, 'jemalloc found and is the allocator');
ok($j->{config_prof} && !$j->{opt_prof}, 'config.prof on, opt.prof off');
$t->no_alerts;
$t->stop;

# jemalloc loaded into the process but not its malloc: the module must not
# profile a second, empty heap

SKIP: {
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
