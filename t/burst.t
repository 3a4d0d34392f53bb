#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A burst of reads beside an operator's writes (issue 20, defect 1): 30
# profiles at once on a read-only location, with a purge, a prof_dump
# and a prof_reset sent in the middle of them, three times over.  Every
# write is answered 200 by every worker and the dump is on disk under
# its name; every read is a profile or a 503 "busy" with Retry-After;
# no worker is called restarted and no command is said to have timed out
# before a worker saw it; nothing hidden is left behind.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(json_decode poll_until);

my $WORKERS = 2;
my $READS = 30;

my $t = MallocTest->new(workers => $WORKERS,
    server => 'location /ro/ { malloc_admin; }')->start;
my $dir = $t->dump_dir;

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');

# every worker's answer of a write, without an error
sub all_ok {
    my ($r) = @_;
    my $w = ref $r->{json} eq 'HASH' ? $r->{json}{workers} : undef;
    return ref $w eq 'ARRAY' && @$w == $WORKERS
        && !grep { exists $_->{error} || !$_->{pid} } @$w;
}

my (%reads, @bad);

for my $round (1 .. 3) {
    my @r = map { $t->send('GET', '/ro/pprof/heap.pb.gz') } 1 .. $READS / 2;
    my $purge = $t->send('POST', '/malloc/purge');
    my $dump = $t->send('POST', '/malloc/prof_dump', "\"burst$round-%p.heap\"");
    push @r, map { $t->send('GET', '/ro/pprof/heap.pb.gz') } 1 .. $READS / 2;
    my $reset = $t->send('POST', '/malloc/prof_reset');

    for my $w ([purge => $purge], [prof_dump => $dump],
               [prof_reset => $reset])
    {
        my $r = $t->response($w->[1]);
        ok($r->{status} == 200 && all_ok($r),
           "round $round: $w->[0] answered by every worker")
            or diag explain $r->{json} // $r->{content};
    }

    for my $s (@r) {
        my $r = $t->response($s);
        if ($r->{status} == 200 && $r->{content} =~ /^\x1f\x8b/) {
            $reads{ok}++;
        } elsif ($r->{status} == 503 && ($r->{json}{error}{code} // '') eq
                 'busy' && $r->{head} =~ /^Retry-After: 1\r?$/mi)
        {
            $reads{busy}++;
        } else {
            $reads{other}++;
            push @bad, "$r->{status} " . substr($r->{content}, 0, 200);
        }
    }

    for my $pid ($t->worker_pids) {
        ok(-s "$dir/burst$round-$pid.heap",
           "round $round: worker ${pid}'s dump is on disk");
    }
}

diag sprintf "reads: %d profiles, %d busy, %d other",
    $reads{ok} // 0, $reads{busy} // 0, $reads{other} // 0;
is($reads{other} // 0, 0, 'every read is a profile or 503 busy')
    or diag join "\n", @bad[0 .. ($#bad < 4 ? $#bad : 4)];
ok(($reads{ok} // 0) > 0, 'reads were served in the burst');
unlike(join("\n", @bad), qr/worker_restarted|before this worker saw it/,
       'no live worker called restarted, no command missed');

# a read that was answered busy gets through when asked again
my $r = $t->get('/ro/pprof/heap.pb.gz');
is($r->{status}, 200, 'a read after the burst');

# the ring keeps nothing waiting: a write goes through at once
$r = $t->post('/malloc/purge');
ok($r->{status} == 200 && all_ok($r), 'a write after the burst');

ok(poll_until(5, sub { !grep { /^\.[^.]/ } do {
        opendir(my $d, $dir); readdir $d } }),
   'no hidden file left in the dump directory')
    or diag join ' ', do { opendir(my $d, $dir); grep { /^\.[^.]/ } readdir $d };

$t->no_alerts;
$t->stop;

done_testing;
