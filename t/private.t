#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Modules that the worker user may not read: a checkout under a home of
# mode 0700, a vendor directory of mode 0750.  The master, as root, reads
# their symbols before it forks the workers, so profiles still name their
# code, through jeprof (which asks pprof/symbol) and go tool pprof (which
# reads the names in heap.pb.gz).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Copy qw(copy);
use Test::More;
use MallocTest;

plan skip_all => 'needs root: the workers must run as another user'
    if $> != 0;

my $go = `sh -c 'command -v go' 2>/dev/null`;
plan skip_all => 'go tool pprof is not installed (golang-go)' unless $go;

my $t = MallocTest->new(workers => 2);

# a directory that only root may enter, holding both modules
my $private = $t->prefix . '/private';
mkdir $private, 0700 or die "$private: $!";
chmod 0700, $private;

for my $so (qw(ngx_http_malloc_module.so ngx_http_malloc_test_module.so)) {
    copy("$MallocTest::MODULE_DIR/$so", "$private/$so") or die "$so: $!";
}

$t->{module_dir} = $private;
$t->start;

my $user = getpwuid((stat "/proc/" . ($t->worker_pids)[0])[4]);
isnt($user, 'root', "the workers run as $user");
ok(system('su', '-s', '/bin/sh', '-c', "test -r $private/"
          . 'ngx_http_malloc_test_module.so', $user) != 0,
   "$user cannot read the test module");

# clients keep their caches under $HOME
$ENV{HOME} = $t->prefix;
$ENV{PPROF_TMPDIR} = $t->prefix . '/pprof';

my $url = 'http://127.0.0.1:' . $t->port . '/malloc';

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
is($t->get('/t/alloc?mb=16&block=8')->{status}, 200, '16 MiB held');

my $jeprof = `jeprof --text $url/pprof/heap 2>&1`;
like($jeprof, qr/ngx_http_malloc_test_hold/,
     'jeprof names the function of the unreadable module') or diag $jeprof;
unlike($jeprof, qr/ngx_http_malloc_test_module\.so\+0x/,
       'no file+offset for it');

my $pprof = `go tool pprof -top $url/pprof/heap.pb.gz 2>&1`;
like($pprof, qr/ngx_http_malloc_test_hold/, 'go tool pprof names it')
    or diag $pprof;

is($t->post('/malloc/prof_active', 'false')->{status}, 200, 'profiling off');

unlike($t->log_text, qr/cannot read the symbols/,
       'the master read every file: nothing to report');

$t->no_alerts;
$t->stop;

done_testing;
