#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# What concurrent reads may take of a worker (issue 20, defect 5): at
# most 4 profiles built and 4 growth windows open at once per worker, the
# rest answered 503 busy with Retry-After at once, before they take any
# memory; builds never take the last of the module's threads, so an
# operator's prof_dump gets through beside any number of heavy reads.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Copy qw(copy);
use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(json_decode poll_until);

# the bounds are what is tested, not the machine's speed: a dump of 60000
# stacks beside four builds can take more than the default 5 s on a
# loaded machine, so the location waits up to a minute
my $t = MallocTest->new(workers => 1, admin => 'write=on timeout=60s')
    ->start;
my $dir = $t->dump_dir;

sub busy {
    my ($r) = @_;
    return $r->{status} == 503 && ($r->{json}{error}{code} // '') eq 'busy'
        && $r->{head} =~ /^Retry-After: 1\r?$/mi;
}

# a snapshot of 60000 stacks, each sampled: seconds to build

is($t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}')
   ->{status}, 200, 'sample everything');
is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
is($t->get('/t/alloc?stacks=60000&size=64')->{status}, 200,
   'the worker holds 60000 stacks');
is($t->post('/malloc/prof_active', 'false')->{status}, 200, 'profiling off');
is($t->post('/malloc/prof_dump', '"big.heap"')->{status}, 200, 'a dump');
my ($big) = glob("$dir/big*.heap");
my $snap = 'snapshot-20000101T000000Z.heap';
ok(copy($big, "$dir/$snap"), 'kept as a snapshot');
diag sprintf 'the snapshot: %.1f MB', (-s "$dir/$snap") / 1e6;

# six builds of it at once, and a prof_dump in the middle

my @r = map { $t->send('GET', "/malloc/pprof/heap.json?snapshot=$snap") }
            1 .. 6;
sleep 0.2;
my $dump = $t->response($t->send('POST', '/malloc/prof_dump', '"beside.heap"'));
is($dump->{status}, 200, 'prof_dump beside six builds: 200')
    or diag explain $dump->{json};
ok(!grep({ exists $_->{error} } @{$dump->{json}{workers} // []}),
   'prof_dump: no worker error');
ok(glob("$dir/beside*.heap"), 'prof_dump: the file is on disk');

my (%n, @other);
for my $s (@r) {
    my $r = $t->response($s);
    if ($r->{status} == 200 && $r->{json} && $r->{json}{stacks}) {
        $n{ok}++;
    } elsif (busy($r)) {
        $n{busy}++;
    } else {
        push @other, "$r->{status} " . substr($r->{content}, 0, 200);
    }
}
is($n{ok}, 4, 'four builds at once were served');
is($n{busy}, 2, 'the fifth and sixth: 503 busy with Retry-After');
is(join("\n", @other), '', 'nothing else');

# once they are done, a build is admitted again

is($t->get("/malloc/pprof/heap.json?snapshot=$snap")->{status}, 200,
   'a build after them');

# growth windows: four at once, the fifth refused at once

my @w = map { $t->send('GET', '/malloc/pprof/heap.pb.gz?seconds=2') } 1 .. 4;
sleep 0.5;
my $fifth = $t->response($t->send('GET', '/malloc/pprof/heap.pb.gz?seconds=2'));
ok(busy($fifth), 'a fifth growth window: 503 busy')
    or diag "$fifth->{status} $fifth->{content}";
# "at once": before any of the four has answered, whose windows are open
my $bits = '';
vec($bits, fileno($_), 1) = 1 for @w;
is(select(my $ready = $bits, undef, undef, 0), 0,
   'refused at once, while the four windows are still open');
is(scalar(grep { $t->response($_)->{status} == 200 } @w), 4,
   'the four windows answered');
is($t->get('/malloc/pprof/heap.pb.gz?seconds=1')->{status}, 200,
   'a window after them');

# the bound is per worker and lets nothing leak: many refusals later, the
# worker still admits four

my @more = map { $t->response($t->send('GET', '/malloc/pprof/heap.pb.gz')) }
               1 .. 20;
is(scalar(grep { $_->{status} == 200 } @more), 20,
   'one at a time, every profile is served');

opendir(my $d, $dir);
is(join(' ', grep { /^\.[^.]/ } readdir $d), '', 'no hidden file left');

$t->no_alerts;
$t->stop;

done_testing;
