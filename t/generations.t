#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# What the generations say of how the master sampled as it read each
# configuration.  The master's sampling follows the desired state only
# after it has read a configuration: the reload that turns it on is not
# sampled, and one that resets it for a new interval drops the samples
# of its read, so those generations are partial.  Each generation names
# the interval of its read (lg_sample), and a growth across a change of
# it is flagged: jemalloc keeps each sampled small object in a 16 KiB
# extent, which costs the master memory at a fine interval.  prof_reset
# estimates that cost.  The master reads a configuration of many servers
# with a certificate each (OpenSSL's small objects) and leaks 4 MiB at
# each read, which says by its presence in a snapshot what was sampled.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest qw(free_port poll_until held);

$ENV{HOME} = '/tmp';

my $MB = 1024 * 1024;

my $t = MallocTest->new(workers => 2);
my $p = $t->prefix;

system("openssl req -x509 -newkey rsa:2048 -nodes -keyout $p/key.pem"
       . " -out $p/cert.pem -days 2 -subj /CN=localhost 2>/dev/null") == 0
    or plan skip_all => 'no openssl to make a certificate';

my $port = free_port();
$t->{http} = "malloc_test_leak 4m;\n" . join '', map {
    "server { listen 127.0.0.1:$port; server_name s$_;"
    . " ssl_certificate $p/cert.pem; ssl_certificate_key $p/key.pem; }\n"
} 1 .. ($ENV{TEST_SERVERS} || 200);
$t->start;

sub generations { $t->get('/malloc/')->{json}{generations} }

sub leak_in {
    my ($g) = @_;
    my $r = $t->get("/malloc/pprof/heap.json?process=master&generation=$g");
    is($r->{status}, 200, "generation $g: its snapshot");
    return held($r->{json}, 'ngx_http_malloc_test_leak');
}

my $gens = generations();
is($gens->[0]{lg_sample}, undef,
   'start: the master read without sampling: no lg_sample');
ok($gens->[0]{partial}, 'start: partial');
is($gens->[0]{sampling_changed}, undef, 'start: nothing to compare with');

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');

# 2: turned on in the master after the read; 3 and 4: sampled reads

$t->reload for 1 .. 3;

$gens = generations();
my %g = map { $_->{generation} => $_ } @$gens;
is(join(',', map { $_->{lg_sample} // 'null' } @g{1 .. 4}),
   'null,null,19,19', 'the intervals of the reads: none, none, 19, 19');
is(join(',', map { $_->{partial} ? 1 : 0 } @g{1 .. 4}), '1,1,0,0',
   'partial: the start and the reload that turned the master on');
ok(JSON::PP::is_bool($g{3}{partial}), 'partial is a boolean');

# the master's allocated bytes, one figure in every form: as its workers
# inherited them, the previous configuration of 200 servers freed (the
# master read its smaps with both allocated)
{
    my $m = $t->get('/malloc/metrics')->{content};
    my ($gen) = $m =~ /^nginx_malloc_master_allocated_bytes (\d+)$/m;
    my ($part) = $m =~ /^nginx_malloc_master_rss_bytes\{part="allocated"\} (\d+)$/m;
    my $master = $t->get('/malloc/stats')->{json}{master};
    is($master->{rss_parts}{allocated}, $gen,
       "stats: master.rss_parts.allocated is nginx_malloc_master_allocated_bytes, $gen");
    is($part, $gen, 'and nginx_malloc_master_rss_bytes{part="allocated"}');
    is($g{4}{allocated}, $gen, 'and the generation\'s allocated');
    my $sum = 0;
    $sum += $_ for map { ref $_ ? 0 : $_ } values %{$master->{rss_parts}};
    $sum += $_->{resident} for @{$master->{rss_parts}{shared_zones}};
    is($sum, $master->{rss}, 'the master\'s parts still add up to its rss');
}

# a comparison with a generation sampled in part is refused in every form,
# naming the first whole one; nothing is made of it
for my $ep ('pprof/heap.json', 'pprof/heap.pb.gz', 'pprof/heap', 'heap') {
    my $r = $t->get("/malloc/$ep?process=master&since=2");
    is($r->{status}, 409, "$ep since=2 (partial): 409");
    is($r->{json}{error}{code}, 'partial_generation',
       "$ep since=2: partial_generation");
    like($r->{json}{error}{text} // '',
         qr/^generation 2 was sampled only in part .* compare with since=3, /,
         "$ep since=2: names since=3");
    is($t->get("/malloc/$ep?process=master&since=3")->{status}, 200,
       "$ep since=3 (whole): 200");
}
my $r = $t->get("/malloc/pprof/heap.json?snapshot=$g{4}{snapshot}"
             . "&base=$g{2}{snapshot}");
is($r->{status}, 409, 'the same two snapshots as the viewer compares: 409');
my $snap3 = $g{3}{snapshot};
like($r->{json}{error}{text} // '',
     qr/compare with base=\Q$snap3\E, the snapshot of generation 3/,
     'the viewer\'s form names the snapshot of generation 3');
opendir(my $dd, $t->dump_dir);
is(join(' ', grep { /^\.[^.]/ } readdir $dd), '',
   'the refusals left no hidden file');
closedir $dd;
ok(leak_in(2) < 1, 'generation 2 holds none of its read\'s leak');
my $leak = leak_in(3);
ok($leak > 2 && $leak < 6,
   sprintf 'generation 3 holds its own read\'s leak: %.1f MiB', $leak);
like($g{3}{sampling_changed} // '', qr/from no sampling to 2\^19 bytes/,
     'generation 3: the sampling came on, said');
is($g{4}{sampling_changed}, undef, 'generation 4: the same interval');

# a finer interval

# 5.3.0 promotes a sampled small object to a 16 KiB extent; 5.3.1 (Debian
# testing) keeps it in its slab, and costs nothing
my ($v) = $t->get('/malloc/')->{json}{jemalloc}{version} =~ /^(\d+\.\d+\.\d+)/;
my $promotes = sprintf('%03d%03d%03d', split /\./, $v) lt '005003001';

$r = $t->post('/malloc/prof_reset', '{"lg_sample": 14}');
is($r->{status}, 200, 'prof_reset to 14');
my $s = $r->{json}{sampler};
is($s->{lg_sample}, 14, 'the estimate is for 2^14');
is($s->{extent_bytes}, $promotes ? 16384 : 0,
   "a sampled small object takes 16 KiB on 5.3.0, nothing later ($v)");
ok($promotes ? $s->{master_bytes} > $MB : $s->{master_bytes} == 0,
   "the master's share of the estimate: $s->{master_bytes} bytes");
is(scalar(grep { ($_->{sampler_bytes} // 0) > 0 } @{$r->{json}{workers}}),
   $promotes ? 2 : 0, 'each worker\'s share');
my $sum = 0;
$sum += $_->{sampler_bytes} for @{$r->{json}{workers}};
is($s->{workers_bytes}, $sum, 'the workers\' shares add up');
is($s->{total_bytes}, $s->{workers_bytes} + $s->{master_bytes},
   'and the total with the master');
like($s->{text}, $promotes
     ? qr/^at one sample per 2\^14 bytes, .* $s->{total_bytes} bytes/
     : qr/^at one sample per 2\^14 bytes, no memory of its own/,
     'in words');

# 5: read at 19, then reset to 14: partial; 6: the first read at 14

$t->reload for 1 .. 2;

$gens = generations();
%g = map { $_->{generation} => $_ } @$gens;
is(join(',', map { $_->{lg_sample} } @g{5, 6}), '19,14',
   'the reload after the reset still read at 19, the next at 14');
is(join(',', map { $_->{partial} ? 1 : 0 } @g{5, 6}), '1,0',
   'the reset dropped the samples of generation 5\'s read');
ok(leak_in(5) < 1, 'generation 5 holds none of its read\'s leak');
$leak = leak_in(6);
ok($leak > 2 && $leak < 6,
   sprintf 'generation 6 holds its own: %.1f MiB', $leak);
is($g{5}{sampling_changed}, undef, 'generation 5: read at 19 as before');
$r = $t->get('/malloc/pprof/heap.json?process=master&generation=5&since=4');
is($r->{status}, 409, 'generation=5 (partial) since=4 (whole): 409');
like($r->{json}{error}{text} // '',
     qr/^generation 5 was .* compare with generation=6, /,
     'generation=5 since=4: names generation=6');
like($g{6}{sampling_changed} // '', $promotes
     ? qr/from 2\^19 bytes to 2\^14 bytes: growth across it .*not a leak/
     : qr/from 2\^19 bytes to 2\^14 bytes: its samples do not compare/,
     'generation 6: the growth across the change is flagged');

# both grew by the leak; 6 by the sampler's extents too
my $cost = $g{6}{growth} - $g{5}{growth};
ok(near_estimate($cost, $s->{master_bytes}, 1.15),
   sprintf 'the master grew by %.1f MiB more at the change, against an '
           . 'estimate of %.1f MiB', $cost / $MB, $s->{master_bytes} / $MB);

$t->no_alerts;
$t->stop;

# a worker's share: small objects allocated anew at the new interval

$t = MallocTest->new(workers => 1)->start;
$t->post('/malloc/prof_active', 'true');

sub allocated {
    my ($above) = @_;
    my $a;
    poll_until(5, sub {
        $a = $t->get('/malloc/stats')->{json}{workers}[0]{allocated};
        $a > $above;
    });
    return $a;
}

my $base = allocated(0);
$t->get('/t/alloc?stacks=40000&size=256');
my $before = allocated($base + 8 * $MB);
$r = $t->post('/malloc/prof_reset', '{"lg_sample": 14}');
my $est = $r->{json}{workers}[0]{sampler_bytes};
$t->get('/t/alloc?free=1');
$t->get('/t/alloc?stacks=40000&size=256');
$cost = allocated($before + $est / 2) - $before;
ok(near_estimate($cost, $est, 1.3),
   sprintf 'a worker grew by %.1f MiB allocating 40000 objects of 256 bytes '
           . 'anew at 2^14, against an estimate of %.1f MiB',
           $cost / $MB, $est / $MB);

$t->get('/t/alloc?free=1');
$t->no_alerts;
$t->stop;

# from half to $most times the estimate; an estimate of nothing: within
# 2 MiB of nothing
sub near_estimate {
    my ($cost, $est, $most) = @_;
    return abs($cost) < 2 * $MB if $est == 0;
    return $cost / $est > 0.5 && $cost / $est < $most;
}

done_testing;
