#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A production day, compressed: for SOAK_TIME seconds (180 in make test,
# 60 in make test-dists' roots, 600 for make soak), two workers and, all
# at once: a module that leaks 16 MiB at each configuration read, with a
# reload every 20 s (a leak that goes on, generation after generation),
# a small leak in the workers, malloc_watch with peak=on, malloc_snapshot,
# malloc_export to a loopback collector, bursts of reads, the operator's
# writes and wrk traffic.  Asserted throughout (each activity records what
# it saw, a watcher looks at the disk and the workers every second): every
# write answered 200 within its timeout; every read 200, or 503 with
# Retry-After and never for more than 10 s in a row; no hidden file older
# than 60 s; the dump directory within its max_size; worker RSS bounded.
# Afterwards: no [alert], no line the module logged by itself repeated more
# than once a minute, and each firing of the watch has its snapshot.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use HTTP::Tiny;
use IO::Socket::INET;
use POSIX ();
use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(poll_until rss_kb free_port);

$ENV{HOME} = '/tmp';

my $LONG = ($ENV{TEST_LONG} // '0') ne '0';
my $secs = $ENV{SOAK_TIME} ? ($ENV{SOAK_TIME} < 60 ? 60 : $ENV{SOAK_TIME})
                           : ($LONG ? 180 : 60);

my $MB = 1024 * 1024;
my $TIMEOUT = 5;            # malloc_admin timeout=
my $MAX_SIZE = 512 * $MB;   # malloc_dump_dir max_size=
my $RELOAD_EVERY = 20;
my $LEAK = 16;              # MiB at each configuration read

# two workers inherit the leak: 32 MiB more at each reload, so that the
# watch fires about once a minute however long the day
my $GROWTH = $secs >= 600 ? 128 : $secs >= 180 ? 96 : 48;

system('wrk --version > /dev/null 2>&1');
plan skip_all => 'wrk is not installed' if $? == -1;

###########################################################################
# the collector: answers 200 to every request and counts them

my @children;

END {
    local $?;
    kill 'KILL', @children if @children;
    waitpid $_, 0 for @children;
}

sub collector {
    my ($file) = @_;
    my $port = free_port();
    my $listen = IO::Socket::INET->new(
        LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp',
        Listen => 16, ReuseAddr => 1) or die "collector: $!";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        $SIG{PIPE} = 'IGNORE';
        my $n = 0;
        while (my $c = $listen->accept) {
            my $head = '';
            while (defined(my $l = <$c>)) {
                $head .= $l;
                last if $l eq "\r\n";
            }
            my ($len) = $head =~ /^content-length:\s*(\d+)/mi;
            my $body = '';
            read($c, $body, $len) if $len;
            print $c "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
                . "Connection: close\r\n\r\n";
            close $c;
            if ($head =~ m{^POST /v1development/profiles }) {
                open my $o, '>', "$file.tmp";
                print $o ++$n;
                close $o;
                rename "$file.tmp", $file;
            }
        }
        POSIX::_exit(0);
    }
    close $listen;
    push @children, $pid;
    return $port;
}

my $t = MallocTest->new(workers => 2, dump_dir => 0,
                        admin => "write=on timeout=${TIMEOUT}s",
                        server => 'access_log off;');
my $dir = $t->dump_dir;
my $cport = collector($t->prefix . '/collected');

$t->{http} = <<"EOF";
    malloc_dump_dir $dir max_size=512m;
    malloc_test_leak ${LEAK}m;
    malloc_watch growth=${GROWTH}m sample=3s peak=on;
    malloc_snapshot interval=15s keep=4 max_size=128m;
    malloc_export http://127.0.0.1:$cport interval=10s
                  sources=interval,watch,schedule,reload;
EOF
$t->start;

my $rss_start = 0;
$rss_start = rss_kb($_) > $rss_start ? rss_kb($_) : $rss_start
    for $t->worker_pids;

###########################################################################
# the activities, each a child that records a line per event

my $end = time + $secs;
my $out = $t->prefix;

sub activity {
    my ($name, $code) = @_;
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        open my $log, '>', "$out/$name.out" or POSIX::_exit(1);
        $log->autoflush(1);
        eval { $code->($log) };
        print $log "died $@\n" if $@;
        close $log;
        POSIX::_exit(0);
    }
    push @children, $pid;
    return $pid;
}

my $ua = HTTP::Tiny->new(keep_alive => 0, timeout => 30);

sub request {
    my ($log, $method, $path, $body) = @_;
    my $t0 = time;
    my $r = $ua->request($method, $t->url($path),
                         defined $body ? { content => $body } : {});
    my ($code) = ($r->{content} // '') =~ /"code":\s*"(\w+)"/;
    printf $log "%.3f\t%.3f\t%s %s\t%d\t%s\t%s\n", $t0, time - $t0, $method,
           $path, $r->{status}, $r->{headers}{'retry-after'} // '-',
           $code // '-';
    return $r;
}

# reloads every 20 s: each reads the configuration, which leaks
activity('reloads', sub {
    my ($log) = @_;
    while (time + $RELOAD_EVERY < $end) {
        sleep $RELOAD_EVERY;
        my ($rc, $text) = $t->run_nginx('-s', 'reload');
        printf $log "%.3f\t%d\n", time, $rc;
    }
});

# the operator: a round of writes every 4 s
activity('writes', sub {
    my ($log) = @_;
    for (my $i = 1; time < $end; $i++) {
        request($log, 'POST', '/malloc/prof_active', $i % 2 ? 'true'
                                                            : 'false');
        request($log, 'POST', '/malloc/prof_dump', "\"day-$i.heap\"");
        unlink glob("$dir/day-$i.*");
        request($log, 'POST', '/malloc/prof_reset', '{}') if $i % 5 == 0;
        sleep 4;
    }
});

# bursts of reads: six at once every 3 s
activity('reads', sub {
    my ($log) = @_;
    my @paths = qw(/malloc/pprof/heap.pb.gz /malloc/stats?detail=full
                   /malloc/ /malloc/metrics /malloc/snapshots
                   /malloc/pprof/heap.json);
    while (time < $end) {
        my @pids;
        for my $p (@paths) {
            my $pid = fork // die "fork: $!";
            if ($pid == 0) {
                request($log, 'GET', $p);
                POSIX::_exit(0);
            }
            push @pids, $pid;
        }
        waitpid $_, 0 for @pids;
        sleep 3;
    }
});

# the workers' own leak, small
activity('drip', sub {
    my ($log) = @_;
    while (time < $end) {
        request($log, 'GET', '/t/alloc?drip=256');
        sleep 1;
    }
});

# the watcher: hidden files, the directory's size, the workers' RSS
activity('disk', sub {
    my ($log) = @_;
    while (time < $end) {
        my $size = 0;
        opendir my $d, $dir or next;
        for my $f (readdir $d) {
            next if $f eq '.' || $f eq '..';
            my @st = lstat "$dir/$f" or next;
            $size += $st[7];
            printf $log "old\t%s\t%d\n", $f, time - $st[9]
                if $f =~ /^\./ && time - $st[9] > 60;
        }
        closedir $d;
        my @rss = map { rss_kb($_) } $t->worker_pids;
        printf $log "size\t%d\trss\t%s\n", $size, join(',', @rss);
        sleep 1;
    }
});

# wrk on an ordinary location, all along
my @wrk = ('wrk', '-t1', '-c8', "-d${secs}s", $t->url('/'));
open my $wrk, '-|', @wrk or die "wrk: $!";
my $wrk_out = join '', <$wrk>;
close $wrk;

for my $pid (@children[1 .. $#children]) {
    waitpid $pid, 0;
}
@children = ($children[0]);

sub lines {
    my ($name) = @_;
    open my $fh, '<', "$out/$name.out" or return ();
    return map { chomp; [split /\t/] } <$fh>;
}

###########################################################################
# what the activities saw

my @died = grep { $_->[0] =~ /^died/ }
           map { lines($_) } qw(reloads writes reads drip disk);
is(scalar @died, 0, 'every activity ran to its end')
    or diag join "\n", map { $_->[0] } @died;

my @reloads = lines('reloads');
my $expect = int(($secs - 1) / $RELOAD_EVERY) - 1;
ok(@reloads >= $expect, scalar(@reloads) . " reloads (at least $expect)");
is(join(',', grep { $_ } map { $_->[1] } @reloads), '',
   'every reload signalled');

my @writes = lines('writes');
ok(@writes >= $secs / 4, scalar(@writes) . ' writes');
my @bad_writes = grep { $_->[3] != 200 || $_->[1] > $TIMEOUT + 1 } @writes;
is(scalar @bad_writes, 0, "every write 200 within its ${TIMEOUT} s timeout")
    or diag explain [@bad_writes[0 .. ($#bad_writes > 9 ? 9 : $#bad_writes)]];

my @reads = lines('reads');
ok(@reads >= $secs, scalar(@reads) . ' reads');
my @bad_reads = grep {
    $_->[3] != 200 && !($_->[3] == 503 && $_->[4] ne '-')
} @reads;
is(scalar @bad_reads, 0, 'every read 200, or 503 with Retry-After')
    or diag explain [@bad_reads[0 .. ($#bad_reads > 9 ? 9 : $#bad_reads)]];

# the longest run of refusals of each path
my (%since, %longest);
for my $r (sort { $a->[0] <=> $b->[0] } @reads) {
    my $p = $r->[2];
    if ($r->[3] == 200) {
        delete $since{$p};
        next;
    }
    $since{$p} //= $r->[0];
    my $run = $r->[0] + $r->[1] - $since{$p};
    $longest{$p} = $run if $run > ($longest{$p} // 0);
}
my @long = grep { $longest{$_} > 10 } keys %longest;
is(join(', ', map { sprintf '%s %.1f s', $_, $longest{$_} } @long), '',
   'no read refused for more than 10 s in a row');
my %refused;
$refused{"$_->[3] $_->[5]"}++ for grep { $_->[3] != 200 } @reads;
note "reads refused: " . join(', ', map { "$_: $refused{$_}" }
                                        sort keys %refused);

my @drips = lines('drip');
is(scalar(grep { $_->[3] != 200 } @drips), 0, 'every leak request 200');

my @disk = lines('disk');
my @old = grep { $_->[0] eq 'old' } @disk;
is(join(', ', map { "$_->[1] ($_->[2] s)" } @old[0 .. ($#old > 9 ? 9
                                                                  : $#old)]),
   '', 'no hidden file older than 60 s');
my @sizes = map { $_->[1] } grep { $_->[0] eq 'size' } @disk;
my ($biggest) = sort { $b <=> $a } @sizes;
ok(@sizes >= $secs / 2, scalar(@sizes) . ' looks at the disk');
ok(($biggest // 0) <= $MAX_SIZE,
   sprintf('the dump directory within max_size: %.1f MiB at most',
           ($biggest // 0) / $MB));

# each generation inherits the master's leak: the bound grows with them
my ($rss_max) = sort { $b <=> $a }
                map { split /,/, $_->[3] } grep { $_->[0] eq 'size' } @disk;
my $rss_bound = $rss_start + (@reloads + 1) * $LEAK * 1024 * 1.5 + 128 * 1024;
ok(($rss_max // 0) < $rss_bound,
   sprintf('worker RSS bounded: %d kB at most, under %d kB',
           $rss_max // 0, $rss_bound));

my ($requests) = $wrk_out =~ /(\d+) requests in/;
ok(($requests // 0) > 1000, 'wrk: ' . ($requests // 0) . ' requests');
unlike($wrk_out, qr/Non-2xx/, 'wrk: every answer a 2xx') or diag $wrk_out;

# a reload closes the old workers' idle keep-alive connections, as nginx
# does with or without the module: wrk counts those as read errors
my ($connect, $read, $write, $timeout) = $wrk_out =~
    /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/;
is(($connect // 0) + ($write // 0) + ($timeout // 0), 0,
   'wrk: no connect, write or timeout error');
ok(($read // 0) <= 8 * (@reloads + 1),
   'wrk: read errors only as reloads close connections: ' . ($read // 0));

###########################################################################
# afterwards: the watch's firings and their snapshots, the collector, the
# log

ok(poll_until(30, sub {
    my $w = $t->get('/malloc/')->{json}{watch};
    $w && $w->{state} eq 'armed';
}), 'the watch armed again');

my $w = $t->get('/malloc/')->{json}{watch};
my $log = $t->log_text;
my @grew = $log =~ /heap grew by \d+ bytes/g;
my @peaks = $log =~ /heap at a new peak/g;
my @written = $log =~ /heap snapshot \S+ for (?:growth|peak) written/g;
diag "watch: $w->{firings} firings (" . scalar(@grew) . ' growths, '
    . scalar(@peaks) . " peaks), $w->{snapshots} snapshots";
ok(@grew >= 1, 'the leak fired the watch: ' . scalar(@grew) . ' times');
is($w->{firings}, @grew + @peaks, 'GET /: every firing counted');
is($w->{snapshots}, $w->{firings}, 'each firing has its snapshot')
    or diag "last failure: " . ($w->{last_failure} // 'none');
is(scalar @written, $w->{firings}, 'each logged as written');

my %listed;
$listed{$_->{reason}}++
    for @{$t->get('/malloc/snapshots')->{json}{snapshots}};
is($listed{growth} // 0, @grew > 8 ? 8 : scalar @grew,
   'the growth snapshots kept (the last 8)');

my $collected = do {
    open my $fh, '<', $t->prefix . '/collected';
    <$fh> // 0;
};
ok($collected >= $secs / 10 - 2, "the collector got $collected pushes");
my $export = $t->get('/malloc/')->{json}{export};
is($export->{dropped}, 0, 'export: nothing dropped');

# the module's own lines (not nginx's, not those an operator's request
# caused), each at most once a minute
my %seen;
for my $l (split /\n/, $log) {
    next unless $l =~ /\[(notice|warn|error|crit|alert)\]/;
    # a request's, or the configuration's (nginx says those at each read)
    next if $l =~ /, client: / || $l =~ / in \S+:\d+$/;
    (my $text = $l) =~ s/^\S+ \S+ \[\w+\] \d+#\d+: (\*\d+ )?//;
    next if $text =~ /^(?:signal\ |reconfiguring|using\ the\ |start\ worker
                          |gracefully\ shutting|exiting|exit$|worker\ process
                          \ |using\ inherited|cache\ (?:manager|loader))/x;
    $seen{$text}++;
}
my $minutes = int($secs / 60) + 1;
my @spam = grep { $seen{$_} > $minutes } keys %seen;
is(join("\n", @spam), '', "no line of the module's repeated more than "
   . "once a minute ($minutes in all)");

$t->no_alerts;
$t->stop;

diag sprintf "day: %d s, %d reloads, %d writes, %d reads, %d firings, "
    . "%d pushes", $secs, scalar @reloads, scalar @writes, scalar @reads,
    $w->{firings}, $collected;

done_testing;
