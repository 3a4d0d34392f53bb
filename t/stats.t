#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# GET stats and metrics: jemalloc's figures for every worker, as JSON and
# as Prometheus text that promtool accepts, answered from what each worker
# publishes about every second.  A stopped worker is never waited for: it
# shows as stale with the age of its figures, metrics shows it down.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use MallocTest qw(poll_until);

my @FIGURES = qw(allocated active resident mapped retained metadata);
my @SERIES = ((map { "nginx_malloc_${_}_bytes" } @FIGURES),
              qw(nginx_malloc_prof_active nginx_malloc_sample_interval_bytes
                 nginx_malloc_worker_up));
my $CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
my $MB = 1024 * 1024;

my $promtool = `sh -c 'command -v promtool' 2>/dev/null`;
chomp $promtool;

sub by_pid {
    my ($json) = @_;
    return { map { ($_->{pid} // 'none') => $_ } @{$json->{workers}} };
}

# {name => {pid => value}}, {pid => worker label}, and the sample lines
# that are not of the form name{worker="N",pid="P"} value
sub parse_metrics {
    my ($text) = @_;
    my (%m, %worker, @odd);
    for my $line (split /\n/, $text // '') {
        next if $line =~ /^# (HELP|TYPE) /;
        if ($line =~ /^(\w+)\{worker="(\d+)",pid="(\d+)"\} (\d+)$/) {
            $m{$1}{$3} = $4;
            $worker{$3} = $2;
        } else {
            push @odd, $line;
        }
    }
    return (\%m, \%worker, \@odd);
}

sub promtool_ok {
    my ($t, $text, $what) = @_;
    SKIP: {
        skip 'promtool is not installed (Debian package prometheus, '
             . 'which make test installs)', 2 unless $promtool;
        my $file = $t->prefix . '/metrics.txt';
        open my $fh, '>', $file or die $!;
        print $fh $text;
        close $fh;
        my $out = `$promtool check metrics < $file 2>&1`;
        is($?, 0, "$what: promtool check metrics accepts it");
        is($out, '', "$what: with no lint warning");
    }
}

my $t = MallocTest->new(workers => 2)->start;
my @pids = $t->worker_pids;
my @to0 = $t->ports_to($pids[0], 1);

# stats

my $r = $t->get('/malloc/stats');
is($r->{status}, 200, 'GET stats');
like($r->{headers}{'content-type'}, qr{^application/json}, 'as JSON');
my $s = $r->{json};
ok(JSON::PP::is_bool($s->{prof_active}) && !$s->{prof_active},
   'prof_active false');
is(scalar @{$s->{workers}}, 2, 'two workers listed');
is(join(',', sort { $a <=> $b } map { $_->{pid} } @{$s->{workers}}),
   join(',', @pids),
   'with their pids');
is(join(',', map { $_->{worker} } @{$s->{workers}}), '0,1',
   'numbered from 0');

for my $w (@{$s->{workers}}) {
    my $n = "worker $w->{worker}";
    ok(JSON::PP::is_bool($w->{prof_active}) && !$w->{prof_active},
       "$n: prof_active false");
    is($w->{lg_prof_sample}, 19, "$n: lg_prof_sample, jemalloc's default");
    is($w->{sample_bytes}, 524288, "$n: sample_bytes 2^19");
    is(join(',', grep { ($w->{$_} // '') !~ /^\d+$/ } @FIGURES), '',
       "$n: every figure is a byte count");
    ok($w->{allocated} > 0 && $w->{allocated} <= $w->{active}
       && $w->{active} <= $w->{resident} && $w->{active} <= $w->{mapped},
       "$n: 0 < allocated <= active <= resident, mapped");
    ok(!exists $w->{detail}, "$n: no detail unless asked");
    ok(!exists $w->{error}, "$n: no error");
}

for my $f (@FIGURES) {
    my $sum = 0;
    $sum += $_->{$f} for @{$s->{workers}};
    is($s->{totals}{$f}, $sum, "totals.$f is the workers' sum");
}

# memory held by one worker shows in that worker's figures only

my $before = by_pid($s);
is($t->http_from($to0[0], 'GET', '/t/alloc?mb=32')->{json}{kept}, 32,
   '32 MiB held in worker 0');
# figures are published about every second
my $after = poll_until(5, sub {
    my $x = by_pid($t->get('/malloc/stats')->{json});
    $x->{$pids[0]}{allocated} - $before->{$pids[0]}{allocated} >= 31 * $MB
        ? $x : undef;
}) || by_pid($t->get('/malloc/stats')->{json});
my $grew0 = $after->{$pids[0]}{allocated} - $before->{$pids[0]}{allocated};
my $grew1 = $after->{$pids[1]}{allocated} - $before->{$pids[1]}{allocated};
ok($grew0 >= 31 * $MB, "worker 0's allocated grew by $grew0 bytes");
ok(abs($grew1) < 4 * $MB, "worker 1's by $grew1 bytes only");
ok($after->{$pids[0]}{resident} >= 32 * $MB, "worker 0's resident too");

# the real state of profiling, worker by worker

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
$s = $t->get('/malloc/stats')->{json};
ok($s->{prof_active}, 'stats: prof_active true');
is(scalar(grep { $_->{prof_active} } @{$s->{workers}}), 2,
   'stats: true in both workers');

$r = $t->http('HEAD', '/malloc/stats');
is($r->{status}, 200, 'HEAD stats');
is($r->{content} // '', '', 'HEAD: no body');

$r = $t->post('/malloc/stats', '{}');
is($r->{status}, 405, 'POST stats: 405');
is($r->{headers}{allow}, 'GET, HEAD', 'Allow header');

# ?detail=full: jemalloc's own report, per worker, and no file left behind

$r = $t->get('/malloc/stats?detail=full');
is($r->{status}, 200, 'stats?detail=full');
for my $w (@{$r->{json}{workers}}) {
    my $n = "detail of worker $w->{worker}";
    my $je = $w->{detail}{jemalloc};
    like($je->{version} // '', qr/^5\.\d+\.\d+-/, "$n: jemalloc's version");
    ok($je->{opt}{prof}, "$n: opt.prof true");
    ok(($je->{stats}{allocated} // 0) > 0
       && $je->{stats}{allocated} <= ($je->{stats}{active} // 0),
       "$n: its stats");
    ok(ref $je->{'stats.arenas'} eq 'HASH', "$n: per-arena stats");
    is($w->{lg_prof_sample}, 19, "$n: the figures are still there");
}
ok(by_pid($r->{json})->{$pids[0]}{detail}{jemalloc}{stats}{allocated}
   >= 32 * $MB, 'the report of worker 0 counts its 32 MiB');

opendir my $dir, $t->dump_dir or die $!;
is(join(',', grep { !/^\.\.?$/ } readdir $dir), '',
   'the reports were removed from the dump directory');
closedir $dir;

$r = $t->get('/malloc/stats?detail=yes');
is($r->{status}, 200, 'detail=yes');
ok(!grep({ exists $_->{detail} } @{$r->{json}{workers}}),
   'detail=yes adds no detail');

# metrics

$r = $t->get('/malloc/metrics');
is($r->{status}, 200, 'GET metrics');
is($r->{headers}{'content-type'}, $CONTENT_TYPE,
   'Prometheus text format 0.0.4');
my $text = $r->{content};
my ($m, $labels, $odd) = parse_metrics($text);

# the master's two series have no worker
my @master = grep { /^nginx_malloc_(master_allocated_bytes|reloads_total) \d+$/ }
             @$odd;
is(scalar @master, 2, 'the master\'s allocated bytes and the reloads');
like("@master", qr/nginx_malloc_reloads_total 0/, 'no reload yet');

# the parts of RSS (t/rss.t checks them): a part label beside the others
my $RSS = qr/^nginx_malloc_rss_bytes\{worker="\d+",pid="\d+",part="\w+"\} \d+$/;
my $MASTER_RSS = qr/^nginx_malloc_master_rss_bytes\{part="\w+"\} \d+$/;
my $GROWTH = qr/^nginx_malloc_rss_growth_bytes\{worker="\d+",pid="\d+",
                 where="(allocator|outside)"\}[ ]-?\d+$/x;
my $ZONE = qr/^nginx_malloc_shared_zone_bytes\{worker="\d+",pid="\d+",
               zone="[^"]+"\}[ ]\d+$/x;
is(scalar(grep { /$RSS/ } @$odd), 7 * 2, 'seven parts of RSS per worker');
is(scalar(grep { /$MASTER_RSS/ } @$odd), 7, 'seven of the master\'s');
is(scalar(grep { /$GROWTH/ } @$odd), 2 * 2,
   'RSS growth in the allocator and outside it, per worker');
ok(scalar(grep { /$ZONE/ } @$odd) >= 2, 'shared zones by name, per worker');
is(join("\n", grep { !/^nginx_malloc_(master_allocated_bytes|reloads_total) /
                      && !/$RSS/ && !/$MASTER_RSS/ && !/$GROWTH/
                      && !/$ZONE/ } @$odd),
   '', 'every other sample is name{worker="N",pid="P"} value');
is(join(',', sort keys %$m), join(',', sort @SERIES), 'the nine series');
for my $name (@SERIES) {
    like($text, qr/^# HELP $name \S.*\n# TYPE $name gauge\n/m,
         "$name: HELP and TYPE gauge");
    is(join(',', sort { $a <=> $b } keys %{$m->{$name}}), join(',', @pids),
       "$name: one sample per worker");
}
my %workers = map { $_->{pid} => $_->{worker} } @{$s->{workers}};
is_deeply($labels, \%workers, 'worker labels as numbered by stats');

is($m->{nginx_malloc_worker_up}{$_}, 1, "worker_up 1 for pid $_") for @pids;
is($m->{nginx_malloc_prof_active}{$_}, 1, "prof_active 1 for pid $_")
    for @pids;
is($m->{nginx_malloc_sample_interval_bytes}{$_}, 524288,
   "sample_interval_bytes 524288 for pid $_") for @pids;
ok($m->{nginx_malloc_allocated_bytes}{$pids[0]} >= 32 * $MB,
   'allocated_bytes of worker 0 counts its 32 MiB');
ok($m->{nginx_malloc_allocated_bytes}{$pids[1]} < 32 * $MB,
   'allocated_bytes of worker 1 does not');
ok($m->{nginx_malloc_resident_bytes}{$pids[0]}
   >= $m->{nginx_malloc_active_bytes}{$pids[0]},
   'resident_bytes >= active_bytes');

promtool_ok($t, $text, 'metrics');

$r = $t->http('HEAD', '/malloc/metrics');
is($r->{status}, 200, 'HEAD metrics');
is($r->{content} // '', '', 'HEAD: no body');

$r = $t->post('/malloc/metrics', '');
is($r->{status}, 405, 'POST metrics: 405');

$t->no_alerts;
$t->stop;

# read-only: both are reads

$t = MallocTest->new(workers => 1, admin => 'write=off')->start;
is($t->get('/malloc/stats')->{status}, 200, 'write=off: stats');
is($t->get('/malloc/metrics')->{status}, 200, 'write=off: metrics');
$t->no_alerts;
$t->stop;

# no jemalloc: a JSON 503 naming the cause

$t = MallocTest->new(jemalloc => 0, malloc_conf => undef)->start;
for my $path ('/malloc/stats', '/malloc/stats?detail=full',
              '/malloc/metrics')
{
    $r = $t->get($path);
    is($r->{status}, 503, "no jemalloc: 503 for $path");
    is($r->{json}{error}{code}, 'jemalloc_not_found', "no jemalloc: code");
}
$t->no_alerts;
$t->stop;

# a stopped worker: requests go only to worker 0, as in timeout.t

$t = MallocTest->new(workers => 2, admin => 'write=on timeout=1s')->start;
@pids = $t->worker_pids;
my @ports = $t->ports_to($pids[0], 4);
is(scalar @ports, 4, 'found local ports that reach worker 0');

my $next = 0;
my $ask = sub { $t->http_from($ports[$next++ % @ports], @_) };

kill 'STOP', $pids[1];

# its figures age; after 3 s without news it is stale
$r = poll_until(8, sub {
    my $x = $ask->('GET', '/malloc/stats');
    $x->{json}{stale_workers} ? $x : undef;
});
ok($r, 'stats: the stopped worker turns stale');

my $start = time;
$r = $ask->('GET', '/malloc/stats');
my $took = time - $start;
is($r->{status}, 200, 'stats with a stopped worker: 200');
ok($took < 0.5, sprintf('answered at once (%.2f s), not after a timeout',
                        $took));
is($r->{json}{stale_workers}, 1, 'one stale worker counted');

my $w = by_pid($r->{json});
ok($w->{$pids[1]}{stale}, 'the stopped worker is marked stale');
ok($w->{$pids[1]}{age} >= 3, "with the age of its figures "
   . "($w->{$pids[1]}{age} s)");
ok($w->{$pids[1]}{allocated} > 0, 'and its last figures');
ok(!$w->{$pids[0]}{stale} && $w->{$pids[0]}{age} < 3
   && $w->{$pids[0]}{allocated} > 0, 'the live worker is fresh');
is($r->{json}{totals}{resident}, $w->{$pids[0]}{resident},
   'totals leave the stale worker out');

$start = time;
$r = $ask->('GET', '/malloc/metrics');
$took = time - $start;
is($r->{status}, 200, 'metrics with a stopped worker: still 200');
ok($took < 0.5, sprintf('metrics at once too (%.2f s)', $took));
($m) = parse_metrics($r->{content});
is($m->{nginx_malloc_worker_up}{$pids[1]}, 0, 'worker_up 0 for it');
is($m->{nginx_malloc_worker_up}{$pids[0]}, 1, 'worker_up 1 for the other');
is(join(',', grep { exists $m->{$_}{$pids[1]} } sort keys %$m),
   'nginx_malloc_worker_up', 'the stopped worker is in no other series');
ok($m->{nginx_malloc_allocated_bytes}{$pids[0]} > 0,
   'the live worker has its figures');
promtool_ok($t, $r->{content}, 'metrics with a worker down');

kill 'CONT', $pids[1];

$r = poll_until(5, sub {
    my $x = $ask->('GET', '/malloc/stats');
    $x->{json}{stale_workers} == 0 ? $x : undef;
});
ok($r, 'resumed: no stale worker any more');
is(scalar(grep { $_->{allocated} && !$_->{stale} } @{$r->{json}{workers}}),
   2, 'with both workers\' fresh figures');

$t->no_alerts;
$t->stop;

done_testing;
