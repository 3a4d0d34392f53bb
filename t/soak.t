#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Soak: wrk at full rate on an ordinary location of a 2-worker nginx while
# one loop toggles profiling, dumps, resets and purges, and another reads
# profiles, stats and metrics.  Afterwards: every wrk request got a 200,
# every admin request a 200 (writes are never refused for a read or
# another write in progress), no worker died, and the workers hold no more fds and no more resident memory than
# before, both measured with profiling off.
#
# SOAK_TIME seconds of load: 15 by default (make test), 120 for make soak.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use HTTP::Tiny;
use POSIX ();
use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(poll_until rss_kb);

my $secs = $ENV{SOAK_TIME} || 15;

system('wrk --version > /dev/null 2>&1');
plan skip_all => 'wrk is not installed' if $? == -1;

my $t = MallocTest->new(workers => 2, admin => 'write=on timeout=5s',
                        server => 'access_log off;')->start;
my $dir = $t->dump_dir;
my @w = $t->worker_pids;

# counts wrk's responses by status, and its socket errors
my $lua = $t->prefix . '/status.lua';
open my $fh, '>', $lua or die $!;
print $fh <<'EOL';
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {} end
function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
    for _, t in ipairs(threads) do
        for k, v in pairs(t:get("statuses")) do
            io.write(string.format("status %d %d\n", k, v))
        end
    end
    local e = summary.errors
    io.write(string.format("errors %d %d %d %d %d\n", e.connect, e.read,
                           e.write, e.status, e.timeout))
end
EOL
close $fh;

sub wrk {
    my ($d) = @_;
    my @cmd = ('wrk', '-t1', '-c16', "-d${d}s", '-s', $lua, $t->url('/'));
    open my $p, '-|', @cmd or die "wrk: $!";
    return $p;
}

sub fds {
    my ($pid) = @_;
    opendir my $d, "/proc/$pid/fd" or return -1;
    return scalar grep { /^\d+$/ } readdir $d;
}

my $ua = HTTP::Tiny->new(keep_alive => 0, timeout => 15);
my %answers;

sub call {
    my ($counts, $method, $path, $body) = @_;
    my $r = $ua->request($method, $t->url($path),
                         defined $body ? { content => $body } : {});
    $counts->{"$method $path $r->{status}"}++;
    # the first answer of each kind that is not 200, to show
    $answers{"$method $path $r->{status}"} //= $r->{content}
        if $r->{status} != 200;
    return $r;
}

# one round of writes; $i names the dump
sub writes {
    my ($counts, $i) = @_;
    call($counts, 'POST', '/malloc/prof_active', 'true');
    my $r = call($counts, 'POST', '/malloc/prof_dump', "\"soak-$i.heap\"");
    unlink glob("$dir/soak-$i.*.heap");
    call($counts, 'POST', '/malloc/prof_reset', '{"lg_sample": 19}');
    call($counts, 'POST', '/malloc/purge');
    call($counts, 'POST', '/malloc/prof_active', 'false');
}

sub reads {
    my ($counts) = @_;
    call($counts, 'GET', $_)
        for qw(/malloc/pprof/heap.pb.gz /malloc/stats /malloc/metrics
               /malloc/pprof/heap /malloc/);
}

# the state both measurements are taken in: profiling off, samples
# dropped, unused pages returned
sub settle {
    my %c;
    call(\%c, 'POST', '/malloc/prof_active', 'false');
    call(\%c, 'POST', '/malloc/prof_reset', '{}');
    call(\%c, 'POST', '/malloc/purge');
    return !grep { !/ 200$/ } keys %c;
}

# warm-up: the load and rounds of every admin request, so that what
# workers set up on first use is in the baseline: connections, symbol
# tables, and a jemalloc tcache (about 32 KB) for each of the 32 threads
# of nginx's default thread pool, which each take their first dump in turn

my $p = wrk(5);
my %warm;
my $warm_end = time + 4;
for (my $i = 0; $i < 80 || time < $warm_end; $i++) {
    writes(\%warm, "w$i");
    reads(\%warm) if $i % 4 == 0;
}
close $p;
ok(settle(), 'warm-up done, profiling off');
# wrk's connections closed: the fd counts hold still
my $last = '';
ok(poll_until(5, sub {
    my $now = join ',', map { fds($_) } @w;
    my $same = $now eq $last;
    $last = $now;
    sleep 0.2;
    $same;
}), "workers idle, fds $last");

my %fds0 = map { $_ => fds($_) } @w;
my %rss0 = map { $_ => rss_kb($_) } @w;
my $stats0 = $t->get('/malloc/stats')->{json};

# the soak: wrk in the background, writes here, reads in a child

my $end = time + $secs - 1;
$p = wrk($secs);

my $rfile = $t->prefix . '/reads.out';
my $child = fork // die "fork: $!";
if ($child == 0) {
    my %c;
    reads(\%c) while time < $end;
    open my $o, '>', $rfile or POSIX::_exit(1);
    print $o "$_\t$c{$_}\n" for keys %c;
    close $o;
    POSIX::_exit(0);
}

my %counts;
my $rounds = 0;
writes(\%counts, ++$rounds) while time < $end;

my $wrk_out = join '', <$p>;
close $p;
waitpid $child, 0;
is($?, 0, 'reader finished');

open my $in, '<', $rfile or die "$rfile: $!";
while (<$in>) {
    chomp;
    my ($k, $v) = split /\t/;
    $counts{$k} += $v;
}
close $in;

# wrk: only 200s, no socket errors

my %status = $wrk_out =~ /^status (\d+) (\d+)$/mg;
my ($errors) = $wrk_out =~ /^errors (.*)$/m;
my $total = 0;
$total += $_ for values %status;
note "wrk: $total responses in $secs s; admin: $rounds write rounds";
ok($total > 1000, "wrk got answers ($total)") or diag $wrk_out;
is_deeply([keys %status], [200], 'wrk: every response a 200')
    or diag $wrk_out;
is($errors, '0 0 0 0 0', 'wrk: no connect, read, write or timeout errors');
unlike($wrk_out, qr/Non-2xx/, 'wrk: no non-2xx responses');

# admin: every request answered 200

my @bad = grep { !/ 200$/ } keys %counts;
is("@bad", '', 'every admin request answered with 200')
    or diag explain { map { $_ => [$counts{$_}, $answers{$_}] } @bad };
my $all = 0;
$all += $_ for values %counts;
note "admin: $all requests";
note "  $_: $counts{$_}" for sort keys %counts;
for my $op ('POST /malloc/prof_dump', 'POST /malloc/prof_reset',
            'GET /malloc/pprof/heap.pb.gz', 'GET /malloc/metrics')
{
    ok($counts{"$op 200"}, "$op succeeded during the soak");
}
ok($all > 20, "admin requests made ($all)");

# afterwards: the same workers, no more fds, no more memory

is_deeply([$t->worker_pids], \@w, 'the same workers');
unlike($t->log_text, qr/exited on signal/, 'no worker died');
ok(settle(), 'profiling off again');

for my $pid (@w) {
    ok(poll_until(5, sub { fds($pid) <= $fds0{$pid} }),
       "worker $pid: fds back to $fds0{$pid}") or diag 'now ' . fds($pid);
    my $grew = rss_kb($pid) - $rss0{$pid};
    note "worker $pid: VmRSS $rss0{$pid} kB, then " . rss_kb($pid) . " kB";
    ok($grew < 2048 || $grew < $rss0{$pid} / 10,
       "worker $pid: resident memory did not grow ($grew kB)");
}

my $stats1 = $t->get('/malloc/stats')->{json};
for my $k (qw(allocated resident metadata)) {
    note "jemalloc $k: $stats0->{totals}{$k}, then $stats1->{totals}{$k}";
}
my $grew = $stats1->{totals}{allocated} - $stats0->{totals}{allocated};
ok($grew < 1024 * 1024, "jemalloc allocated: grew less than 1 MiB ($grew)");

opendir my $d, $dir or die $!;
my @left = grep { !/^\.\.?$/ } readdir $d;
is("@left", '', 'no file left in the dump directory');

$t->no_alerts;
$t->stop;

done_testing;
