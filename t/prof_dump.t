#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# POST prof_dump: every worker writes its own heap_v2 dump inside
# malloc_dump_dir; names, escapes, symlinks and existing files.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest;

my $t = MallocTest->new(workers => 2)->start;
my $dir = $t->dump_dir;
my @pids = $t->worker_pids;

# the master made the directory for the worker user, as for temp paths

my @st = stat $dir;
is($st[4], $MallocTest::WORKER_UID, 'dump dir owned by the worker user');
is($st[2] & 07777, 0700, 'dump dir mode 0700');

$t->post('/malloc/prof_active', 'true');
$t->get("/t/alloc?mb=8") for 1 .. 4;

# Lighthouse's command, verbatim: an absolute path inside the directory

my $url = $t->url('/malloc/prof_dump');
my $out = `curl -s -X POST -d '"$dir/lh.heap"' $url`;
my $j = MallocTest::json_decode($out);
ok($j && $j->{workers}, 'curl -d \'"/path/file"\'') or diag $out;
is(scalar @{$j->{workers}}, 2, 'two dumps');

for my $w (@{$j->{workers}}) {
    is($w->{path}, "$dir/lh.$w->{pid}.heap", "worker $w->{worker} path");
    ok(-f $w->{path}, "worker $w->{worker} file exists");
    is($w->{bytes}, -s $w->{path}, "worker $w->{worker} bytes");
    my @fs = stat $w->{path};
    is($fs[2] & 07777, 0600, 'dump not world-readable');
    is($fs[4], $MallocTest::WORKER_UID, 'dump owned by the worker user');
    open my $fh, '<', $w->{path};
    my $first = <$fh>;
    like($first, qr{^heap_v2/524288}, 'heap_v2 header');
}

is_deeply([sort { $a <=> $b } map { $_->{pid} } @{$j->{workers}}], \@pids,
          'one dump per worker');

# jeprof reads it back and names nginx's functions

my $jeprof = `jeprof --text $MallocTest::NGINX $dir/lh.*.heap 2>/dev/null`;
like($jeprof, qr/^Total: [\d.]+ MB/m, 'jeprof totals the dumps');
like($jeprof, qr/ngx_http_core_content_phase/, 'jeprof names nginx code');
like($jeprof, qr/ngx_http_malloc_test_hold/, 'and the allocating function');

# other body forms

my $r = $t->post('/malloc/prof_dump', '{"path": "obj.heap"}');
is($r->{status}, 200, '{"path": ...}');
ok(-f "$dir/obj.$_.heap", "obj.$_.heap") for @pids;

$r = $t->post('/malloc/prof_dump', '"p-%p.prof"');
is($r->{status}, 200, '%p in the name');
ok(-f "$dir/p-$_.prof", "p-$_.prof") for @pids;

$r = $t->post('/malloc/prof_dump', '"noext"');
ok(-f "$dir/noext.$_", "noext.$_: pid appended") for @pids;

$r = $t->post('/malloc/prof_dump', '"pct%%.heap"');
ok(-f "$dir/pct%.$_.heap", "%% is a percent sign") for @pids;

for my $auto ('', 'null', '{}', '{"path": null}', "\n") {
    my @before = glob "$dir/heap-*";
    $r = $t->post('/malloc/prof_dump', $auto);
    is($r->{status}, 200, "automatic name for '$auto'");
    my @after = glob "$dir/heap-*";
    is(@after - @before, 2, 'two new automatic dumps');
    like($r->{json}{workers}[0]{path},
         qr{/heap-\d{8}T\d{6}\.\d{3}Z\.\d+\.heap$}, 'automatic name form');
    select undef, undef, undef, 0.002;
}

# existing files are never overwritten; nothing is written at all

my $before = join ',', sort glob "$dir/*";
$r = $t->post('/malloc/prof_dump', '"lh.heap"');
is($r->{status}, 409, 'existing file');
is($r->{json}{error}{code}, 'file_exists', '409 code');
like($r->{json}{error}{text}, qr/lh\.\d+\.heap/, '409 names the file');

open my $fh, '>', "$dir/one.$pids[1].heap";
print $fh "precious\n";
close $fh;
$r = $t->post('/malloc/prof_dump', '"one.heap"');
is($r->{status}, 409, 'one worker\'s file exists');
ok(!-e "$dir/one.$pids[0].heap", 'the other worker wrote nothing either');
is(`cat $dir/one.$pids[1].heap`, "precious\n", 'existing file intact');

# symlinks are never followed

my $victim = $t->prefix . '/victim';
open $fh, '>', $victim;
print $fh "victim\n";
close $fh;
symlink $victim, "$dir/link.$_.heap" for @pids;
$r = $t->post('/malloc/prof_dump', '"link.heap"');
is($r->{status}, 409, 'symlink at the name');
is(`cat $victim`, "victim\n", 'symlink target untouched');

symlink '/nonexistent-target', "$dir/dangling.$_.heap" for @pids;
$r = $t->post('/malloc/prof_dump', '"dangling.heap"');
is($r->{status}, 409, 'dangling symlink at the name');
ok(!-e '/nonexistent-target', 'dangling target not created');

# names that escape or are not names

$before = join ',', sort glob "$dir/*";

for my $bad ('"../x.heap"', '"a/b.heap"', '".hidden"', '"."', '".."',
             '"/tmp/x.heap"', "\"$dir\"", "\"$dir/\"", "\"${dir}x/a\"",
             "\"$dir/../x\"", '"a\u0000b"', '"a\nb"', '"a\tb"',
             '"a\u007fb"', '"bad%s"', '"trail%"', '"' . ('n' x 250) . '"',
             '5', 'true', '["a"]', '{"file": "a"}', '{"path": 1}', '"a',
             '"snapshot-x.heap"')
{
    $r = $t->post('/malloc/prof_dump', $bad);
    my $shown = length($bad) > 24 ? substr($bad, 0, 24) . '...' : $bad;
    is($r->{status}, 400, "400 for $shown");
    like($r->{json}{error}{code}, qr/^invalid_(path|body)$/,
         "code for $shown");
}

is(join(',', sort glob "$dir/*"), $before, 'refused names wrote nothing');
ok(!-e $t->prefix . '/x.heap' && !-e '/tmp/x.heap', 'nothing escaped');
ok(!grep(/\.tmp$/, glob("$dir/.*")), 'no temporary files left');

# the directory gone: a clear error, nothing reported as written

rename $dir, "$dir.gone";
$r = $t->post('/malloc/prof_dump', '"gone.heap"');
is($r->{status}, 500, 'missing dump dir');
is($r->{json}{error}{code}, 'dump_dir_unusable', 'code');
like($r->{json}{error}{text}, qr/No such file or directory/, 'says why');
rename "$dir.gone", $dir;

chmod 0500, $dir;
chown $MallocTest::WORKER_UID, -1, $dir;
$r = $t->post('/malloc/prof_dump', '"ro.heap"');
is($r->{status}, 500, 'unwritable dump dir');
like($r->{json}{error}{text}, qr/Permission denied/, 'says why');
chmod 0700, $dir;

$r = $t->post('/malloc/prof_dump', '"after.heap"');
is($r->{status}, 200, 'works again once fixed');

like(join("\n", $t->log_lines(qr/\[notice\]/)),
     qr/heap dump ".*after\.%p\.heap" requested by client 127\.0\.0\.1/,
     'dump request logged at notice');

$t->no_alerts;
$t->stop;

# a cap on what the directory may hold: 507 once it is reached

$t = MallocTest->new(workers => 2, dump_dir => 0,
    http => 'malloc_dump_dir %%PREFIX%%/dumps max_size=15k;')->start;
$dir = $t->dump_dir;
$r = $t->post('/malloc/prof_dump', '"one.heap"');
is($r->{status}, 200, 'a dump under the cap');
$r = $t->post('/malloc/prof_dump', '"two.heap"');
is($r->{status}, 507, 'the cap reached: 507');
is($r->{json}{error}{code}, 'dump_dir_full', 'dump_dir_full');
like($r->{json}{error}{text}, qr/max_size is 15360/, 'names the cap');
ok(!glob("$dir/two.*"), 'nothing written');
unlink glob("$dir/one.*");
is($t->post('/malloc/prof_dump', '"three.heap"')->{status}, 200,
   'room again once old dumps are gone');
$t->stop;

(my $rc, $out) = MallocTest->new(dump_dir => 0,
    http => 'malloc_dump_dir %%PREFIX%%/d max_size=lots;')->test_conf;
like($out, qr/invalid max_size "max_size=lots"/, 'bad max_size');

# one worker: no pid is added

$t = MallocTest->new(workers => 1)->start;
$r = $t->post('/malloc/prof_dump', '"single.heap"');
is($r->{status}, 200, 'single worker');
is($r->{json}{workers}[0]{path}, $t->dump_dir . '/single.heap',
   'single worker keeps the name');
$t->stop;

done_testing;
