#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Where the memory goes: each worker's RSS (and the master's) in parts
# that add up to it, read from /proc/self/smaps with jemalloc's figures,
# in GET stats, the state page and the metrics; a shared zone by its name
# and size; memory mapped outside malloc counted as other_anonymous, and
# said in words once a worker's growth is outside malloc.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use List::Util qw(sum0);
use Test::More;
use MallocTest qw(poll_until);

my $MB = 1024 * 1024;
my @PARTS = qw(allocated allocator_overhead shared_zones other_shared
               other_anonymous stack file);

# the parts' sum: the zones' resident bytes, and every other part
sub parts_sum {
    my ($p) = @_;
    return sum0(map {
        $_ eq 'shared_zones' ? sum0(map { $_->{resident} } @{$p->{$_}})
                             : $p->{$_}
    } @PARTS);
}

sub check_parts {
    my ($who, $x) = @_;
    my $p = $x->{rss_parts};
    ok($x->{rss} > 1 * $MB, "$who: rss ($x->{rss})");
    is(join(',', sort keys %$p), join(',', sort @PARTS),
       "$who: rss_parts has the seven parts");
    is(join(',', grep { $_ ne 'shared_zones' && ($p->{$_} // '') !~ /^\d+$/ }
                      @PARTS),
       '', "$who: each a byte count");
    my $sum = parts_sum($p);
    ok(abs($sum - $x->{rss}) <= $x->{rss} / 100,
       "$who: the parts add up to rss ($sum of $x->{rss})");
    ok($p->{file} > 0 && $p->{stack} > 0, "$who: code and stack are there");
    my ($zone) = grep { $_->{name} eq 'rsstest' } @{$p->{shared_zones}};
    ok($zone, "$who: the limit_req zone is listed by name");
    is($zone && $zone->{size}, 10 * $MB, "$who: with its size, 10m");
    ok($zone && $zone->{resident} =~ /^\d+$/
       && $zone->{resident} <= $zone->{size},
       "$who: and its resident bytes");
}

sub by_pid {
    my ($json) = @_;
    return { map { ($_->{pid} // 'none') => $_ } @{$json->{workers}} };
}

my $t = MallocTest->new(workers => 3, http =>
    'limit_req_zone $binary_remote_addr zone=rsstest:10m rate=1r/s;')
    ->start;
my @pids = $t->worker_pids;
my @to0 = $t->ports_to($pids[0], 1);

# every worker publishes its parts from its start on

my $s = poll_until(5, sub {
    my $x = $t->get('/malloc/stats')->{json};
    (grep { $_->{rss} } @{$x->{workers}}) == 3 ? $x : undef;
});
ok($s, 'stats: rss of all three workers');
$s //= $t->get('/malloc/stats')->{json};

for my $w (@{$s->{workers}}) {
    my $n = "worker $w->{worker}";
    check_parts($n, $w);
    ok($w->{rss_start} > 0, "$n: rss_start");
    ok(exists $w->{outside_malloc} && !defined $w->{outside_malloc},
       "$n: outside_malloc null before any growth");
    ok($w->{rss_parts}{allocated} <= $w->{allocated},
       "$n: allocated at most jemalloc's");
}

my $m = $s->{master};
ok($m, 'stats: the master');
is($m->{pid}, $t->master_pid, 'the master: its pid');
check_parts('master', $m);
ok(exists $m->{outside_malloc} && !defined $m->{outside_malloc},
   'master: outside_malloc null');

# the master's start as the daemon holds it, not as the process that read
# the configuration before it daemonized (which held file pages the
# daemon has not touched since): the kernel's figure, give or take what
# the master touched since its first workers started
{
    my ($vm) = (`cat /proc/$m->{pid}/status` =~ /^VmRSS:\s+(\d+) kB/m);
    ok(defined $vm && abs($m->{rss_start} - $vm * 1024) <= 1 * $MB,
       "master: rss_start $m->{rss_start} is the daemon's VmRSS "
       . ($vm // 0) * 1024);
    ok($m->{rss} <= $m->{rss_start} + 1 * $MB,
       'master: no growth since, before any reload');
}

my $index = $t->get('/malloc/')->{json};
ok(!grep({ defined $_->{outside_malloc} } @{$index->{workers}}),
   'state page: no growth outside malloc yet');
ok($index->{master} && $index->{master}{rss} > 0
   && !exists $index->{master}{rss_parts},
   'state page: the master\'s rss, without the parts');

# 64 MiB mapped and touched outside malloc, in worker 0

my $before = by_pid($s);
my $r = $t->http_from($to0[0], 'GET', '/t/alloc?map=64');
is($r->{json}{mapped}, 64, '64 MiB mapped in worker 0');

my $grew;
my $after = poll_until(5, sub {
    my $x = by_pid($t->get('/malloc/stats')->{json});
    $grew = $x->{$pids[0]}{rss_parts}{other_anonymous}
            - $before->{$pids[0]}{rss_parts}{other_anonymous};
    $grew >= 56 * $MB ? $x : undef;
}) || by_pid($t->get('/malloc/stats')->{json});
ok($grew >= 56 * $MB, "worker 0: other_anonymous grew by $grew bytes");
my $w0 = $after->{$pids[0]};
ok($w0->{allocated} - $before->{$pids[0]}{allocated} < 8 * $MB,
   'and jemalloc\'s allocated did not');
check_parts('worker 0 after the map', $w0);

my $o = $w0->{outside_malloc};
ok($o, 'worker 0: outside_malloc');
like($o && $o->{text}, qr/^RSS grew by [\d.]+ MiB since the worker started/,
     'its sentence says how much');
like($o && $o->{text},
     qr/the growth is outside malloc, and heap profiles cannot show it/,
     'and that heap profiles cannot show it');
like($o && $o->{text}, qr/Grew most: other_anonymous \+[\d.]+ MiB/,
     'naming the part that grew most');
is($o && $o->{grew}[0]{part}, 'other_anonymous', 'grew[0]: other_anonymous');
ok($o && $o->{rss_growth} >= 56 * $MB
   && $o->{allocator_growth} < $o->{rss_growth} / 2,
   'rss_growth, allocator_growth by the rule');
# by jemalloc's own resident, the 64 MiB beside its memory is not its own
ok($o && abs($o->{allocator_growth}) < 4 * $MB
   && $o->{grew}[0]{bytes} >= 63 * $MB,
   sprintf('the allocator grew by %.1f MiB by its own figure, '
           . 'other_anonymous by %.1f', ($o->{allocator_growth} // 0) / $MB,
           ($o && $o->{grew}[0]{bytes} // 0) / $MB)) or diag explain $o;
ok(!defined $after->{$pids[$_]}{outside_malloc}, "worker $_: not it")
    for 1, 2;

$index = $t->get('/malloc/')->{json};
my ($i0) = grep { ($_->{pid} // 0) == $pids[0] } @{$index->{workers}};
like($i0 && $i0->{outside_malloc} && $i0->{outside_malloc}{text},
     qr/outside malloc/, 'state page: the sentence for worker 0');
is(scalar(grep { defined $_->{outside_malloc} } @{$index->{workers}}), 1,
   'state page: for worker 0 only');

# metrics: a series per part, of each worker and of the master

my $text = $t->get('/malloc/metrics')->{content};
my (%series, %master);
while ($text =~ /^nginx_malloc_rss_bytes\{worker="(\d+)",pid="(\d+)",
                  part="(\w+)"\}[ ](\d+)$/mgx)
{
    $series{$2}{$3} = $4;
}
while ($text =~ /^nginx_malloc_master_rss_bytes\{part="(\w+)"\} (\d+)$/mg) {
    $master{$1} = $2;
}
like($text, qr/^# TYPE nginx_malloc_rss_bytes gauge$/m,
     'nginx_malloc_rss_bytes: a gauge');
like($text, qr/^# TYPE nginx_malloc_master_rss_bytes gauge$/m,
     'nginx_malloc_master_rss_bytes: a gauge');
is(join(',', sort { $a <=> $b } keys %series), join(',', @pids),
   'metrics: rss parts of every worker');
is(join(',', map { join '+', sort keys %{$series{$_}} } @pids),
   join(',', (join '+', sort @PARTS) x 3), 'each with the seven parts');
is(join(',', sort keys %master), join(',', sort @PARTS),
   'the master\'s seven parts');
ok($series{$pids[0]}{other_anonymous} >= 56 * $MB,
   'worker 0\'s other_anonymous counts the map');

# the growth since each worker started, in the allocator or outside it:
# the map is outside, in worker 0 only
my %growth;
while ($text =~ /^nginx_malloc_rss_growth_bytes\{worker="\d+",pid="(\d+)",
                  where="(\w+)"\}[ ](-?\d+)$/mgx)
{
    $growth{$1}{$2} = $3;
}
like($text, qr/^# TYPE nginx_malloc_rss_growth_bytes gauge$/m,
     'nginx_malloc_rss_growth_bytes: a gauge');
ok(($growth{$pids[0]}{outside} // 0) >= 56 * $MB,
   "worker 0: growth outside malloc $growth{$pids[0]}{outside}");
ok(abs($growth{$pids[0]}{allocator} // 1e12) < 8 * $MB,
   'worker 0: not in the allocator');
ok(abs($growth{$pids[$_]}{outside} // 1e12) < 8 * $MB,
   "worker $_: no growth outside malloc") for 1, 2;

# each shared zone by name, in every worker
my %zone;
while ($text =~ /^nginx_malloc_shared_zone_bytes\{worker="\d+",pid="(\d+)",
                  zone="([^"]+)"\}[ ](\d+)$/mgx)
{
    $zone{$1}{$2} = $3;
}
ok(exists $zone{$_}{ngx_http_malloc}, "worker pid $_: the module's zone")
    for @pids;

# reloads: the master reads again each time, new workers start afresh

$t->reload for 1 .. 3;
@pids = $t->worker_pids;
$s = poll_until(5, sub {
    my $x = $t->get('/malloc/stats')->{json};
    (grep { $_->{rss} } @{$x->{workers}}) == 3 ? $x : undef;
}) || $t->get('/malloc/stats')->{json};
check_parts('master after a reload', $s->{master});
is(scalar(grep { defined $_->{outside_malloc} } @{$s->{workers}}), 0,
   'the new workers: nothing outside malloc');

$t->no_alerts;
$t->stop;

done_testing;
