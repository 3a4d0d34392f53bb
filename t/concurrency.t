#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Concurrency (issue 13): three clients at once against a 4-worker nginx
# with profiling on, for MALLOC_CONCURRENCY_SECS seconds (30 by default).
# One fetches profiles, one scrapes the state page, prof_active, stats and
# metrics, one POSTs every command in turn.  Every read is answered 200,
# and so is every POST: no 409 busy, since reads must not hold commands
# up, and no 409 file_exists, since the dump names are unique.  Every
# dump is on disk under its name as soon as it is answered.  Afterwards
# the same workers run, all of them profiling, and no hidden file is left
# in the dump directory.  Counts and latencies are printed; timings are
# not asserted.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use HTTP::Tiny;
use POSIX ();
use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(json_decode);

my $WORKERS = 4;
my $secs = $ENV{MALLOC_CONCURRENCY_SECS} || 30;

my $t = MallocTest->new(workers => $WORKERS, admin => 'write=on')->start;
my $dir = $t->dump_dir;
my @pids = $t->worker_pids;
is(scalar @pids, $WORKERS, "$WORKERS workers");

my $r = $t->post('/malloc/prof_active', 'true');
ok($r->{status} == 200 && $r->{json}{prof_active},
   'profiling on at the start');

# what a 200 of each endpoint must hold, so that an answer cut short or
# mixed up with another one's is caught too; $path without its query

sub workers_ok {
    my ($json, $extra) = @_;
    return 0 unless ref $json eq 'HASH' && ref $json->{workers} eq 'ARRAY';
    my @w = @{$json->{workers}};
    return 0 unless @w == $WORKERS;
    return 0 if grep { exists $_->{error} || !$_->{pid} } @w;
    return !$extra || !grep { !$extra->($_) } @w;
}

my %BODY = (
    '/malloc/pprof/heap.pb.gz' => sub { $_[0]{content} =~ /^\x1f\x8b/ },
    '/malloc/pprof/heap' => sub { $_[0]{content} =~ /^heap profile: / },
    '/malloc/heap' => sub { $_[0]{content} =~ m{^heap_v2/} },
    '/malloc/metrics' => sub {
        my @up = $_[0]{content} =~ /^nginx_malloc_worker_up\{.*\} 1$/mg;
        @up == $WORKERS;
    },
    '/malloc/stats' => sub {
        workers_ok($_[1], sub { ($_[0]{allocated} // 0) > 0 });
    },
    '/malloc/' => sub {
        ($_[1]{module} // '') eq 'ngx_http_malloc_module'
            && workers_ok($_[1]);
    },
    '/malloc/prof_active' => sub { workers_ok($_[1]) },
    '/malloc/prof_reset' => sub { workers_ok($_[1]) },
    '/malloc/purge' => sub { workers_ok($_[1]) },
    '/malloc/prof_dump' => sub {
        my ($n) = $_[0]{sent} =~ /^"conc-(\d+)\.heap"$/;
        workers_ok($_[1], sub {
            ($_[0]{path} // '') eq "$dir/conc-$n.$_[0]{pid}.heap";
        });
    },
);

# One request of a client, tallied in $rec: a count per "method path
# status" (and error code, when there is one), the latency per "method
# path", the first answer of each kind that is not 200, and the 200s
# whose body is not what the endpoint sends.

sub call {
    my ($rec, $ua, $method, $path, $body) = @_;
    my $start = time;
    my $res = $ua->request($method, $t->url($path),
                           defined $body ? { content => $body } : {});
    my $took = time - $start;
    my $key = "$method $path";
    my $json = json_decode($res->{content} // '');

    my $status = $res->{status};
    if ($status != 200) {
        my $code = ref $json eq 'HASH' && ref $json->{error} eq 'HASH'
            ? $json->{error}{code} // '?' : '-';
        $status .= " $code";
        ($rec->{text}{"$key $status"} //= substr($res->{content} // '', 0,
                                                  400)) =~ s/\s+/ /g;
    } else {
        (my $plain = $path) =~ s/\?.*//;
        $res->{sent} = $body;
        $rec->{bad}{$key}++ unless $BODY{$plain}->($res, $json);
    }
    $rec->{count}{"$key $status"}++;

    my $l = $rec->{latency}{$key} //= [0, 0];
    $l->[0] = $took if $took > $l->[0];
    $l->[1] += $took;
    return $res;
}

sub profiles {
    my ($rec, $ua, $end) = @_;
    for (my $i = 0; time < $end; $i++) {
        call($rec, $ua, 'GET', $_) for qw(/malloc/pprof/heap.pb.gz
                                          /malloc/pprof/heap /malloc/heap);
        call($rec, $ua, 'GET', '/malloc/pprof/heap.pb.gz?seconds=1')
            if $i % 5 == 4;
    }
}

sub scrapes {
    my ($rec, $ua, $end) = @_;
    while (time < $end) {
        call($rec, $ua, 'GET', $_) for qw(/malloc/metrics /malloc/stats
                                          /malloc/ /malloc/prof_active);
    }
}

# prof_active alternates, starting with false; the last one is true, and
# is repeated until it is a 200, so that the state afterwards does not
# depend on the fate of one request.  Each dump is looked for on disk
# as soon as it is answered, then removed: at full rate 30 s of them
# would take a hundred megabytes.
sub writes {
    my ($rec, $ua, $end) = @_;
    my $on = 1;
    for (my $n = 1; time < $end; $n++) {
        $on = !$on;
        call($rec, $ua, 'POST', '/malloc/prof_active',
             $on ? 'true' : 'false');
        call($rec, $ua, 'POST', '/malloc/prof_reset', '{}');
        call($rec, $ua, 'POST', '/malloc/purge', '{}');
        my $res = call($rec, $ua, 'POST', '/malloc/prof_dump',
                       "\"conc-$n.heap\"");
        dump_files($rec, $n, $res->{status} == 200);
    }
    for (1 .. 100) {
        last if call($rec, $ua, 'POST', '/malloc/prof_active', 'true')
                    ->{status} == 200;
        sleep 0.05;
    }
}

# after a 200, conc-N.<pid>.heap of every worker, none empty; after
# anything else, no conc-N file at all
sub dump_files {
    my ($rec, $n, $written) = @_;
    my @found = sort glob("$dir/conc-$n.*");
    my @want = $written ? map { "$dir/conc-$n.$_.heap" } @pids : ();
    my $tally = $written ? 'dumps' : 'refused';
    $rec->{files}{$tally}++;
    $rec->{files}{"$tally, files not as expected"}++
        if "@found" ne "@want" || grep { !-s $_ } @found;
    unlink @found;
}

# each client in a process of its own, with its own HTTP::Tiny; it writes
# its tally to a file, one "kind<TAB>key<TAB>value" a line.  _exit, so
# that the child never runs the harness's DESTROY, which stops nginx

my $start = time;
my $end = $start + $secs;
my %clients = (profiles => \&profiles, scrapes => \&scrapes,
               writes => \&writes);
my %child;

for my $name (sort keys %clients) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $ok = eval {
            my %rec;
            my $ua = HTTP::Tiny->new(keep_alive => 0, timeout => 30);
            $clients{$name}->(\%rec, $ua, $end);
            open my $o, '>', $t->prefix . "/$name.out" or die $!;
            print $o "count\t$_\t$rec{count}{$_}\n" for keys %{$rec{count}};
            print $o "text\t$_\t$rec{text}{$_}\n" for keys %{$rec{text}};
            print $o "bad\t$_\t$rec{bad}{$_}\n" for keys %{$rec{bad}};
            print $o "latency\t$_\t@{$rec{latency}{$_}}\n"
                for keys %{$rec{latency}};
            print $o "files\t$_\t$rec{files}{$_}\n"
                for keys %{$rec{files}};
            close $o or die $!;
            1;
        };
        print STDERR "# client $name: $@" unless $ok;
        POSIX::_exit($ok ? 0 : 1);
    }
    $child{$pid} = $name;
}

my %done;
while ((my $pid = wait) > 0) {
    $done{$child{$pid}} = $?;
}
my $took = time - $start;
is($done{$_}, 0, "client $_ finished") for sort keys %clients;

my (%count, %text, %bad, %latency, %files);
for my $name (sort keys %clients) {
    open my $in, '<', $t->prefix . "/$name.out" or next;
    while (<$in>) {
        chomp;
        my ($kind, $key, $v) = split /\t/, $_, 3;
        if ($kind eq 'count') {
            $count{$key} += $v;
        } elsif ($kind eq 'text') {
            $text{$key} = $v;
        } elsif ($kind eq 'bad') {
            $bad{$key} += $v;
        } elsif ($kind eq 'latency') {
            $latency{$key} = [split / /, $v];
        } elsif ($kind eq 'files') {
            $files{$key} += $v;
        }
    }
    close $in;
}

# counts and latencies

my (%total, %failed);
for my $k (keys %count) {
    my ($key, $status) = $k =~ /^(\S+ \S+) (.*)$/;
    $total{$key} += $count{$k};
    $failed{$key} += $count{$k} if $status ne '200';
}
my $all = 0;
$all += $_ for values %total;

note sprintf '%d requests in %.1f s (%d s of load), %d workers',
             $all, $took, $secs, $WORKERS;
note sprintf '  %-52s %6d', $_, $count{$_} for sort keys %count;
note 'latency, max and mean:';
for my $key (sort keys %latency) {
    my ($max, $sum) = @{$latency{$key}};
    note sprintf '  %-46s %7.3f s %7.3f s', $key, $max, $sum / $total{$key};
}
note sprintf 'metrics scrapes: %d, the slowest took %.3f s',
             $total{'GET /malloc/metrics'} // 0,
             ($latency{'GET /malloc/metrics'} // [0])->[0];

# every client worked

for my $key ('GET /malloc/pprof/heap.pb.gz', 'GET /malloc/pprof/heap',
             'GET /malloc/heap', 'GET /malloc/pprof/heap.pb.gz?seconds=1',
             'GET /malloc/metrics', 'GET /malloc/stats', 'GET /malloc/',
             'GET /malloc/prof_active', 'POST /malloc/prof_active',
             'POST /malloc/prof_reset', 'POST /malloc/purge',
             'POST /malloc/prof_dump')
{
    ok($total{$key}, "$key: sent " . ($total{$key} // 0) . ' times');
}

# every read and every POST answered 200

for my $key (sort keys %total) {
    my $what = $key =~ /^GET/ ? 'read' : 'command';
    is($failed{$key} // 0, 0,
       "$key: every $what answered 200 ($total{$key})")
        or diag explain { map { $_ => [$count{$_}, $text{$_}] }
                          grep { /^\Q$key\E (?!200$)/ } keys %count };
}
is(join(', ', map { "$_: $bad{$_}" } sort keys %bad), '',
   'every 200 has the body of its endpoint, with every worker');

# what failed, in short: status and error code, counted

my @failures = grep { !/ 200$/ } sort keys %count;
if (@failures) {
    my $posts = 0;
    my $posts_failed = 0;
    for (grep { /^POST / } keys %total) {
        $posts += $total{$_};
        $posts_failed += $failed{$_} // 0;
    }
    my $other = 0;
    $other += $count{$_} for grep { !/ 409 busy$/ } @failures;
    diag "failed: $posts_failed of $posts POSTs; answers neither 200 nor "
         . "409 busy: $other";
    diag sprintf '  %-52s %6d', $_, $count{$_} for @failures;
}

# every dump on disk under its name, one per worker; no file for a dump
# that was refused, and none left hidden

my $dumps = $files{dumps} // 0;
ok($dumps, "$dumps dumps written");
is($files{'dumps, files not as expected'} // 0, 0,
   "each one by the $WORKERS workers as conc-N.<pid>.heap, not empty");
is($files{'refused, files not as expected'} // 0, 0,
   'no file of a dump that was refused ('
   . ($files{refused} // 0) . ')');

opendir my $d, $dir or die "$dir: $!";
my @files = grep { !/^\.\.?$/ } readdir $d;
closedir $d;
is(join(' ', grep { /^\./ } @files), '',
   'no hidden file left in the dump directory');
is(join(' ', grep { !/^\./ } @files), '', 'every dump was removed');

# the same workers, all profiling

is_deeply([$t->worker_pids], \@pids, 'the same workers: none crashed');
unlike($t->log_text, qr/exited on signal/, 'no worker died');

$r = $t->get('/malloc/prof_active');
is($r->{status}, 200, 'GET prof_active afterwards');
ok($r->{json}{prof_active}, 'prof_active true');
is(join(',', sort { $a <=> $b } map { $_->{pid} }
             grep { $_->{prof_active} } @{$r->{json}{workers} // []}),
   join(',', @pids), 'true in every worker');
is_deeply($t->states_by_worker, { map { $_ => 1 } @pids },
          'and every worker says so itself');

$t->no_alerts;
$t->stop;

done_testing;
