#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Profiles served by the admin location, read by the real clients: jeprof
# and go tool pprof through the URL, go tool pprof on the downloaded
# profile.proto without the nginx binary, and the merged view of workers.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest qw(poll_until frames);
use Compress::Zlib ();

no warnings qw(portable);

my $go = `sh -c 'command -v go' 2>/dev/null`;
plan skip_all => 'go tool pprof is not installed (golang-go)' unless $go;

my $t = MallocTest->new(workers => 2)->start;
my @pids = $t->worker_pids;
my $port = $t->port;
my $url = "http://127.0.0.1:$port/malloc";

# clients keep their caches under $HOME
$ENV{HOME} = $t->prefix;
$ENV{PPROF_TMPDIR} = $t->prefix . '/pprof';

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');

# 48 MiB live in worker 0 and 16 MiB in worker 1, by a named function, in
# blocks of 8 MiB: at the default mean of 512 KiB between samples, each is
# sampled (1 MiB blocks are missed one time in seven, so small totals
# would stray from what the tests expect)

my @to0 = $t->ports_to($pids[0], 2);
my @to1 = $t->ports_to($pids[1], 2);
is($t->http_from($to0[0], 'GET', '/t/alloc?mb=48&block=8')->{json}{pid},
   $pids[0], '48 MiB held in worker 0');
is($t->http_from($to1[0], 'GET', '/t/alloc?mb=16&block=8')->{json}{pid},
   $pids[1], '16 MiB held in worker 1');

# the MiB that a text report credits to a function, flat
sub flat_mb {
    my ($text, $func) = @_;
    for my $line (split /\n/, $text) {
        next unless $line =~ /\s\Q$func\E\s*$/;
        my ($v, $unit) = $line =~ /^\s*([\d.]+)\s*([kKMG]?B)?/;
        next unless defined $v;
        $unit //= 'MB';
        return $v / 1024 if $unit =~ /^k/i;
        return $v * 1024 if $unit eq 'GB';
        return $v;
    }
    return undef;
}

sub near {
    my ($got, $want, $name) = @_;
    ok(defined $got && abs($got - $want) <= $want * 0.25,
       "$name: " . ($got // 'none') . " MiB, expected about $want");
}

# jeprof, given nothing but the URL

my $jeprof = `jeprof --text $url/pprof/heap 2>&1`;
near(flat_mb($jeprof, 'ngx_http_malloc_test_hold'), 64,
     'jeprof remote: both workers merged');
like($jeprof, qr/ngx_http_core_content_phase/, 'jeprof remote: nginx names');
unlike($jeprof, qr/\bngx_dlerror\b|\bngx_os_specific_status\b/,
       'jeprof remote: no static function credited to an export');
unlike($jeprof, qr/\b(je_|prof_backtrace|imalloc|ialloc)\w*/,
       'jeprof remote: jemalloc frames dropped');

# go tool pprof, given nothing but the URL

my $pprof = `go tool pprof -top -sample_index=inuse_space $url/pprof/heap 2>&1`;
near(flat_mb($pprof, 'ngx_http_malloc_test_hold'), 64,
     'go tool pprof remote');
like($pprof, qr/ngx_http_core_content_phase/, 'go tool pprof remote: names');

# the proto, downloaded and read without the binary

my $pb = $t->prefix . '/heap.pb.gz';
system("curl -s -o $pb $url/pprof/heap.pb.gz") == 0 or fail('download');
is(`head -c 2 $pb | od -An -tx1`, " 1f 8b\n", 'gzip magic');

$pprof = `cd / && go tool pprof -top -sample_index=inuse_space $pb 2>&1`;
near(flat_mb($pprof, 'ngx_http_malloc_test_hold'), 64, 'offline .pb.gz');
like($pprof, qr/ngx_http_core_content_phase/, 'offline: nginx names');
unlike($pprof, qr/\bngx_dlerror\b|\bngx_os_specific_status\b/,
       'offline: no static function credited to an export');
# Debian's nginx is stripped: its static functions have no name; an
# nginx built from source keeps its symbol table and names them all
if (`nm $MallocTest::NGINX 2>&1` =~ /no symbols/) {
    like($pprof, qr/\bnginx\+0x[0-9a-f]+/,
         'offline: code without a symbol shown as nginx+0xoffset');
} else {
    unlike($pprof, qr/\bnginx\+0x[0-9a-f]+/,
           'offline: an nginx with its symbol table: every frame named');
}
unlike($pprof, qr/\b(je_|prof_backtrace|imalloc)\w*/,
       'offline: jemalloc frames dropped');

my $raw = `go tool pprof -raw $pb 2>&1`;
like($raw, qr/^PeriodType: space bytes$/m, 'raw: period type');
like($raw, qr/^Period: 524288$/m, 'raw: period');
like($raw, qr/inuse_objects\/count\s+inuse_space\/bytes/,
     'raw: sample types');
unlike($raw, qr/warning|error|unrecognized/i, 'raw: no warnings');
like($raw, qr/^Mappings\n.*\Q$MallocTest::NGINX\E\s*\[?.*[0-9a-f]{40}/ms,
     'raw: nginx mapping with its build id');

my $traces = `go tool pprof -traces $pb 2>&1`;
unlike($traces, qr/warning|error/i, 'traces: no warnings');
like($traces, qr/ngx_http_malloc_test_hold\n\s+ngx_http_malloc_test_handler/,
     'traces: leaf first, static function of an unstripped module named');

# one worker at a time

for my $i (0, 1) {
    system("curl -s -o $pb '$url/pprof/heap.pb.gz?pid=$pids[$i]'");
    $pprof = `go tool pprof -top -sample_index=inuse_space $pb 2>&1`;
    near(flat_mb($pprof, 'ngx_http_malloc_test_hold'), $i ? 16 : 48,
         "?pid= of worker $i");
}

my $r = $t->get('/malloc/pprof/heap.pb.gz?pid=1');
is($r->{status}, 404, 'pid of no worker');
is($r->{json}{error}{code}, 'no_such_worker', 'code');

# the raw heap_v2 download

my $heap = $t->prefix . '/nginx.heap';
$r = $t->get('/malloc/heap');
is($r->{status}, 200, 'GET heap');
like($r->{headers}{'content-disposition'}, qr/attachment; filename=/,
     'a download');
like($r->{content}, qr{^heap_v2/524288\n}, 'heap_v2 header');
like($r->{content}, qr/\nMAPPED_LIBRARIES:\n/, 'with the mappings');
open my $fh, '>', $heap;
print $fh $r->{content};
close $fh;
$jeprof = `jeprof --text $MallocTest::NGINX $heap 2>/dev/null`;
near(flat_mb($jeprof, 'ngx_http_malloc_test_hold'), 64, 'offline jeprof');

# symbols and cmdline, as the clients ask for them

$r = $t->get('/malloc/pprof/symbol');
is($r->{content}, "num_symbols: 1\n", 'GET pprof/symbol');

# nginx is position-independent: its first mapping (file offset 0) is its
# load bias
my ($bias) = `grep -m1 $MallocTest::NGINX /proc/$pids[0]/maps`
    =~ /^([0-9a-f]+)-[0-9a-f]+ \S+ 0+ /;
my ($sym) = `nm -D --defined-only $MallocTest::NGINX`
    =~ /^([0-9a-f]+) T ngx_http_core_content_phase$/m;
my $addr = hex($bias) + hex($sym) + 4;
$r = $t->post('/malloc/pprof/symbol', sprintf('0x%x+0x1', $addr));
like($r->{content}, qr/^0x0*\Q${\ sprintf('%x', $addr)}\E\tngx_http_core_content_phase$/m,
     'POST pprof/symbol names an address');

$r = $t->get('/malloc/pprof/cmdline');
is($r->{content}, "$MallocTest::NGINX\n", 'pprof/cmdline');

# the heap viewer's JSON: names once, stacks root first, unbiased values

$r = $t->get('/malloc/pprof/heap.json');
is($r->{status}, 200, 'pprof/heap.json served');
is($r->{headers}{'content-type'}, 'application/json', 'as JSON');
my $j = $r->{json};
is_deeply($j->{types}, [qw(inuse_space inuse_objects)],
          'heap.json: inuse types');
is(scalar @{$j->{stacks}}, scalar @{$j->{values}},
   'heap.json: a value row per stack');
my %names;
$names{$_}++ for @{$j->{names}};
ok(!grep({ $_ > 1 } values %names), 'heap.json: each name once');
my ($held, $rooted) = (0, 1);
for my $i (0 .. $#{$j->{stacks}}) {
    my @f = frames($j, $i);
    next unless @f && $f[-1] eq 'ngx_http_malloc_test_hold';
    $held += $j->{values}[$i][0];
    $rooted = 0 unless grep { $_ eq 'ngx_http_core_content_phase' } @f;
}
near($held / 1024 / 1024, 64, 'heap.json: the holding function, leaf last');
ok($rooted, 'heap.json: its callers above it');
$r = $t->get("/malloc/pprof/heap.json?pid=$pids[1]");
$held = 0;
for my $i (0 .. $#{$r->{json}{stacks}}) {
    my $leaf = (frames($r->{json}, $i))[-1];
    $held += $r->{json}{values}[$i][0] if $leaf eq 'ngx_http_malloc_test_hold';
}
near($held / 1024 / 1024, 16, 'heap.json?pid: one worker');

# each name's file: the test module's, a module; main in the binary

my %file_of;
for my $i (0 .. $#{$j->{names}}) {
    my $f = $j->{files}[$j->{name_files}[$i]] if $j->{name_files}[$i] >= 0;
    $file_of{$j->{names}[$i]} = $f;
}
like($file_of{ngx_http_malloc_test_hold}{path} // '',
     qr{/ngx_http_malloc_test_module\.so$},
     'heap.json: the holding function lies in the test module\'s file');
is($file_of{ngx_http_malloc_test_hold}{kind} // '', 'module',
   'heap.json: a module');
is($file_of{ngx_http_core_content_phase}{kind} // '', 'binary',
   'heap.json: nginx\'s own function in the binary');
is($file_of{ngx_http_core_content_phase}{path} // '', $MallocTest::NGINX,
   'heap.json: the binary is nginx');
is(scalar(grep { defined } @{$j->{raw}}), 0,
   'heap.json: C names are their symbols: no raw ones');

# gzipped for a client that takes it: the same JSON, a tenth of the size

my $plain = $t->get('/malloc/pprof/heap.json');
my $gz = $t->get('/malloc/pprof/heap.json', undef,
                 'Accept-Encoding' => 'gzip');
is($gz->{status}, 200, 'heap.json gzipped: 200');
is($gz->{headers}{'content-encoding'} // '', 'gzip',
   'heap.json: Content-Encoding gzip when accepted');
is($gz->{headers}{vary} // '', 'Accept-Encoding', 'heap.json: Vary');
is($plain->{headers}{'content-encoding'}, undef,
   'heap.json: plain when not accepted');
my $json = Compress::Zlib::memGunzip($gz->{content});
ok(defined $json && MallocTest::json_decode($json)->{names},
   'heap.json: the gzipped answer is the JSON');
ok(length($gz->{content}) * 3 < length($plain->{content}),
   sprintf('heap.json: gzip makes it smaller (%d of %d bytes)',
           length($gz->{content}), length($plain->{content})));
$gz = $t->get('/malloc/pprof/heap.json', undef,
              'Accept-Encoding' => 'gzip;q=0');
is($gz->{headers}{'content-encoding'}, undef,
   'heap.json: gzip;q=0 refuses it');

# a growth profile: what was allocated during the window; the request is
# sent before the allocation, and the window opens as it arrives

my $growth = $t->prefix . '/growth.pb.gz';
my $s = $t->send_from($to0[1], 'GET', '/malloc/pprof/heap.pb.gz?seconds=3');
sleep 1;
$t->http_from($to1[1], 'GET', '/t/alloc?mb=8&block=8');
$r = $t->response($s);
is($r->{status}, 200, 'growth profile served');
open $fh, '>', $growth;
print $fh $r->{content} // '';
close $fh;
$pprof = `go tool pprof -top -sample_index=inuse_space $growth 2>&1`;
near(flat_mb($pprof, 'ngx_http_malloc_test_hold'), 8, '?seconds=3 growth');
like(`go tool pprof -raw $growth 2>&1`, qr/^Duration: 3/m,
     'growth profile has its duration');

$r = $t->get('/malloc/pprof/heap.json?seconds=1');
is($r->{status}, 200, 'heap.json growth');
is($r->{json}{seconds}, 1, 'heap.json growth: its window');

is($t->get('/malloc/pprof/heap?seconds=0')->{status}, 400, 'seconds=0');
is($t->get('/malloc/heap?seconds=5')->{status}, 400, 'seconds on heap');

# hygiene: building profiles leaves nothing in the heap or on disk

$t->get('/malloc/pprof/heap.pb.gz') for 1 .. 5;
system("curl -s -o $pb $url/pprof/heap.pb.gz");
# a thread the pool starts keeps its TLS block (ld.so's, through
# pthread_create) while it lives: the pool's, not a profile's; one sample
# of it named a profile's functions once in a CI root
$pprof = `go tool pprof -top -sample_index=inuse_space -focus='ngx_http_malloc_(profile|heap|pprof|symbols|arena)' -ignore='^pthread_create\$' $pb 2>&1`;
unlike($pprof, qr/ngx_http_malloc_(profile|heap|pprof|symbols|arena)\w*\s*$/m,
       'profiles hold no memory of their own making');

my @hidden = glob($t->dump_dir . '/.*');
@hidden = grep { !m{/\.\.?$} } @hidden;
is("@hidden", '', 'no hidden dump left in the directory');

# read-only locations serve profiles

$t->stop;
$t = MallocTest->new(workers => 2, admin => 'write=off')->start;
$r = $t->get('/malloc/pprof/heap');
is($r->{status}, 200, 'write=off serves profiles');
like($r->{content}, qr/^heap profile: /, 'legacy text header');
is($t->post('/malloc/pprof/symbol', '0x1')->{status}, 200,
   'write=off takes symbol lookups');
$t->no_alerts;
$t->stop;

done_testing;
