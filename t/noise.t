#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Comparisons that do not invent growth.  A heap profile rests on samples
# (one per 512 KiB on average), so two heaps of a module that rebuilds
# the same state differ by chance; a comparison keeps only the changes
# beyond that noise, and says what it rests on beside the exact figure.
# The master across reloads (since=), a worker's growth window
# (seconds=) and malloc_watch's growth snapshot: a churn that holds
# steady shows no growth, a leak beside it is named with what it leaked,
# and the churn is not.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use POSIX ();
use Time::HiRes qw(sleep);
use Test::More;
use MallocTest qw(frames);

$ENV{HOME} = '/tmp';

my $MB = 1024 * 1024;

# sampled 8 times as finely as the default, so that a leak of a few MiB
# rests on enough samples to be told from noise every time
my $FINE = "$MallocTest::MALLOC_CONF,lg_prof_sample:16";

# the bytes go tool pprof shows for $func, and in all, of a profile.proto
sub pprof_top {
    my ($t, $path, $name) = @_;
    my $file = $t->prefix . "/$name.pb.gz";
    my $r = $t->get($path);
    open my $fh, '>', $file or die;
    print $fh $r->{content};
    close $fh;
    my $top = `go tool pprof -top -sample_index=inuse_space $file 2>&1`;
    my $comments = `go tool pprof -comments $file 2>&1`;
    return ($r->{status}, $top, $comments);
}

sub bytes_of {
    my ($v, $unit) = @_;
    return 0 unless defined $v;
    return $v * { B => 1, kB => 1024, MB => $MB, GB => 1024 * $MB }->{$unit};
}

# what go tool pprof -top says a function holds (flat), in bytes
sub flat {
    my ($top, $func) = @_;
    my ($v, $unit) = $top =~ /^\s*([\d.]+)([kMG]?B)\s.*\s\Q$func\E$/m;
    return bytes_of($v, $unit);
}

sub total {
    my ($top) = @_;
    return 0 if $top =~ /^Showing nodes accounting for 0, 0% of 0 total/m;
    my ($v, $unit) = $top =~ /of ([\d.]+)([kMG]?B) total/;
    return bytes_of($v, $unit);
}

# bytes and significance of the stacks whose allocating function is $func
sub judged {
    my ($j, $func) = @_;
    my ($change, @sig) = (0);
    for my $i (0 .. $#{$j->{stacks}}) {
        next unless (frames($j, $i))[-1] eq $func;
        $change += $j->{values}[$i][0] - $j->{base_values}[$i][0];
        push @sig, $j->{significant}[$i];
    }
    return ($change, @sig);
}

# the stacks judged beyond the noise, for diagnostics
sub significant {
    my ($j) = @_;
    return [map {
        my $i = $_;
        join(' ', frames($j, $i),
             "$j->{base_values}[$i][0] -> $j->{values}[$i][0]",
             "($j->{base_samples}[$i] -> $j->{samples}[$i] samples)")
    } grep { $j->{significant}[$_] } 0 .. $#{$j->{stacks}}];
}

sub within {
    my ($got, $want, $name) = @_;
    ok($got >= $want * 0.5 && $got <= $want * 1.5,
       sprintf('%s: %.2f MiB, exact %.2f MiB', $name, $got / $MB,
               $want / $MB));
}

###########################################################################
# the master: a module rebuilds 16 MiB of 128-byte blocks at every read

for my $case ([default => undef], [fine => $FINE]) {
    my ($rate, $conf) = @$case;

    my $t = MallocTest->new(workers => 1,
        defined $conf ? (malloc_conf => $conf) : (),
        http => 'malloc_test_churn 16m 128;')->start;
    $t->post('/malloc/prof_active', 'true');
    $t->reload for 1 .. 12;

    # A judgement at 99% names a stack that did not grow in 1 comparison
    # of 100 by design.  So the churn is judged in three comparisons of
    # disjoint generations (each rebuilt, so sampled anew): naming it in
    # one may be chance, in two of three (3 in 10^4) it is invented.

    my (@invented, $first);

    for my $pair ([3, 6], [7, 10], [11, 13]) {
        my ($m, $n) = @$pair;
        my $q = "process=master&since=$m&generation=$n";
        my ($status, $top, $comments) = pprof_top($t,
            "/malloc/pprof/heap.pb.gz?$q", "churn-$rate-$m");
        my $r = $t->get("/malloc/pprof/heap.json?$q");
        my $c = $r->{json}{comparison};
        my $exact = $c->{exact}{change} // 0;
        my $real = $exact > 0 ? $exact : 0;
        my ($change, @sig) = judged($r->{json},
                                    'ngx_http_malloc_test_churn');

        $first //= { status => $status, comments => $comments, c => $c,
                     pair => "$m to $n" };

        # growth the master really had (its exact figure) is no invention
        my @wrong = (
            total($top) > $MB + $real
                ? sprintf('go tool pprof: %.2f MiB grew, exact %+.2f MiB',
                          total($top) / $MB, $exact / $MB) : (),
            flat($top, 'ngx_http_malloc_test_churn') != 0
                ? 'go tool pprof names the churn' : (),
            $c->{grew} != 0 && $c->{grown} > $real + $MB
                ? "heap.json: $c->{grown} bytes grew" : (),
            !@sig || grep({ $_ == 1 } @sig)
                ? sprintf('heap.json: the churn, %+.2f MiB, beyond the '
                          . 'noise', $change / $MB) : ());

        if (@wrong) {
            push @invented, "$m to $n: " . join('; ', @wrong);
            diag "$m to $n: $_" for @wrong, explain significant($r->{json});
        }
    }

    ok(@invented <= 1,
       "no leak ($rate rate): nothing grew beyond the noise in 2 of 3 "
       . 'comparisons or more (' . scalar(@invented) . ' of 3 named it)')
        or diag explain \@invented;

    my $c = $first->{c};
    is($first->{status}, 200, "no leak ($rate rate): $first->{pair}");
    like($first->{comments},
         qr/only the stacks that grew beyond sampling noise/,
         "no leak ($rate rate): the profile says how it was compared")
        or diag $first->{comments};
    like($first->{comments}, qr/the master's allocated bytes from generation 3 to 6 changed by [-+]\d+ bytes \(exact\)/,
         "no leak ($rate rate): and the exact change beside it");
    ok($c->{samples} > 0 && $c->{base_samples} > 0 && $c->{z} > 2,
       "no leak ($rate rate): the samples and the level: "
       . "$c->{samples} and $c->{base_samples} samples, |z| >= $c->{z}");
    ok(defined $c->{exact}{change},
       "no leak ($rate rate): the exact change: "
       . "$c->{exact}{change} bytes");

    $t->no_alerts;
    $t->stop;
}

# a leak of 1 MiB per read in 1 KiB blocks beside the churn

{
    my $t = MallocTest->new(workers => 1, malloc_conf => $FINE,
        http => "malloc_test_churn 16m 128;\nmalloc_test_leak 1m 1k;")
        ->start;
    $t->post('/malloc/prof_active', 'true');
    $t->reload for 1 .. 12;

    my $r = $t->get('/malloc/pprof/heap.json?process=master&since=3');
    my $c = $r->{json}{comparison};
    my $exact = $c->{exact}{change};
    # the leak, and the sampler's 16 KiB extents of its samples
    ok($exact > 8 * $MB && $exact < 16 * $MB,
       sprintf('leak: the master grew by %.2f MiB (exact)', $exact / $MB));

    my ($change, @sig) = judged($r->{json}, 'ngx_http_malloc_test_leak');
    within($change, $exact, 'leak: heap.json names the leak');
    ok(@sig && !grep({ $_ != 1 } @sig), 'leak: beyond the noise');
    ($change, @sig) = judged($r->{json}, 'ngx_http_malloc_test_churn');
    ok(!grep({ $_ == 1 } @sig), 'leak: the churn beside it is not');

    my ($status, $top) = pprof_top($t,
        '/malloc/pprof/heap.pb.gz?process=master&since=3', 'leak');
    within(flat($top, 'ngx_http_malloc_test_leak'), $exact,
           'leak: go tool pprof names it') or diag $top;
    is(flat($top, 'ngx_http_malloc_test_churn'), 0,
       'leak: and not the churn');

    $t->no_alerts;
    $t->stop;
}

###########################################################################
# a worker's growth window under traffic: 1 MiB of 128-byte blocks
# replaced at every request, and beside it a leak of 64 KiB a request

sub window {
    my ($t, $query, $path) = @_;

    my $pid = fork // die;

    if ($pid == 0) {
        # not at the same moment as the window's first dump
        sleep 0.5;
        my $end = time + 4;
        while (time < $end) {
            $t->get("/t/alloc?$query");
            # a dump that meets a request half-way through its rotation
            # sees a real, passing change: keep such meetings rare
            sleep 0.05;
        }
        # not exit: the child's destructors would stop nginx
        POSIX::_exit(0);
    }

    my $r = $t->get($path);
    waitpid $pid, 0;
    return $r;
}

{
    my $t = MallocTest->new(workers => 1, malloc_conf => $FINE)->start;
    $t->post('/malloc/prof_active', 'true');
    $t->get('/t/alloc?rotate=1024');

    my ($r, $change, @sig);
    for my $try (1 .. 2) {
        $r = window($t, 'rotate=1024', '/malloc/pprof/heap.json?seconds=3');
        ($change, @sig) = judged($r->{json}, 'ngx_http_malloc_test_rotate');
        last unless grep { $_ == 1 } @sig;
        diag "window, churn: a false alarm, measured again";
    }
    is($r->{status}, 200, 'window, churn: heap.json over 3 s');
    ok(@sig && !grep({ $_ == 1 } @sig),
       sprintf('window, churn: %+.2f MiB, within the noise',
               $change / $MB));
    like($r->{json}{comparison}{exact}{of} // '', qr/allocated bytes in the window/,
         'window, churn: the exact change of the window beside it');

    my $top;
    for my $try (1 .. 2) {
        $r = window($t, 'rotate=1024',
                    '/malloc/pprof/heap.pb.gz?seconds=3');
        open my $fh, '>', $t->prefix . '/window.pb.gz' or die;
        print $fh $r->{content};
        close $fh;
        my $pb = $t->prefix . '/window.pb.gz';
        $top = `go tool pprof -top -sample_index=inuse_space $pb 2>&1`;
        last if flat($top, 'ngx_http_malloc_test_rotate') == 0;
        diag "window, churn: a false alarm, measured again:\n$top";
    }
    is(flat($top, 'ngx_http_malloc_test_rotate'), 0,
       'window, churn: go tool pprof shows no growth of it') or diag $top;

    # the leak comes with each request: under load fewer come in the 3 s
    # (a CI root leaked 1.67 MiB with 64 KB each), so 128 KB each, and a
    # window that leaked no more than 2 MiB is measured again
    for my $try (1 .. 2) {
        $r = window($t, 'rotate=1024&drip=128',
                    '/malloc/pprof/heap.json?seconds=3');
        (undef, @sig) = judged($r->{json}, 'ngx_http_malloc_test_rotate');
        my $grew = $r->{json}{comparison}{exact}{change} // 0;
        last unless grep({ $_ == 1 } @sig) || $grew <= 2 * $MB;
        diag sprintf("window, leak: a false alarm of the churn, or %.2f "
                     . "MiB leaked, measured again", $grew / $MB);
    }
    is($r->{status}, 200, 'window, leak: heap.json over 3 s')
        or diag $r->{content};
    my $exact = $r->{json}{comparison}{exact}{change};
    ok($exact > 2 * $MB, sprintf('window, leak: the worker grew by %.2f '
                                 . 'MiB (exact)', $exact / $MB));
    ($change, @sig) = judged($r->{json}, 'ngx_http_malloc_test_drip');
    within($change, $exact, 'window, leak: named with what it leaked');
    ok(@sig && !grep({ $_ != 1 } @sig), 'window, leak: beyond the noise');
    ($change, @sig) = judged($r->{json}, 'ngx_http_malloc_test_rotate');
    ok(!grep({ $_ == 1 } @sig), 'window, leak: the churn is not named')
        or diag explain [$r->{json}{comparison}, significant($r->{json})];

    $t->no_alerts;
    $t->stop;
}

###########################################################################
# malloc_watch: a step of 24 MiB fires it with sampling off; its window
# then saves what grew beyond the noise in its second half

# At the level of 99%, a stack that did not change is called grown by
# chance about once in a hundred tries: a case that must show no growth
# of the churn (here and in the windows above) is measured again after
# such a false alarm, and fails only on a second one (one in ten
# thousand).  A biased judgement fails both.
sub calm_watch {
    my ($query) = @_;
    my @got = watch_snapshot($query);
    return @got if flat($got[2], 'ngx_http_malloc_test_rotate') == 0;
    diag "watch ($query): a false alarm of the churn, measured again:\n"
         . $got[2];
    $got[0]->stop;
    return watch_snapshot($query);
}

sub watch_snapshot {
    my ($query) = @_;

    my $t = MallocTest->new(workers => 1, malloc_conf => $FINE,
        http => 'malloc_watch growth=16m sample=4s;')->start;
    $t->get('/t/alloc?rotate=1024');

    my $pid = fork // die;

    if ($pid == 0) {
        my $end = time + 12;
        while (time < $end) {
            $t->get("/t/alloc?$query");
            sleep 0.05;
        }
        POSIX::_exit(0);
    }

    sleep 1;
    $t->get('/t/alloc?mb=24&block=8');

    my @snap;
    MallocTest::poll_until(15, sub {
        @snap = grep { $_->{reason} eq 'growth' }
                     @{$t->get('/malloc/snapshots')->{json}{snapshots}};
    });
    waitpid $pid, 0;

    # a window the leak fired again ends too, and takes its files along
    my @hidden;
    MallocTest::poll_until(15, sub {
        @hidden = glob($t->dump_dir . '/.snapshot-*');
        !@hidden && !$t->get('/malloc/prof_active')->{json}{prof_active};
    });

    my ($top, $comments) = ('', '');

    if (@snap) {
        my $file = $t->prefix . '/watch.pb.gz';
        my $r = $t->get("/malloc/snapshots/$snap[0]{name}");
        open my $fh, '>', $file or die;
        print $fh $r->{content};
        close $fh;
        $top = `go tool pprof -top -sample_index=inuse_space $file 2>&1`;
        $comments = `go tool pprof -comments $file 2>&1`;
    }

    return ($t, scalar @snap, $top, $comments, scalar @hidden);
}

{
    my ($t, $n, $top, $comments, $hidden) =
        calm_watch('rotate=1024');
    is($n, 1, 'watch, churn: a growth snapshot');
    is(flat($top, 'ngx_http_malloc_test_rotate'), 0,
       'watch, churn: the churn is not growth') or diag $top;
    is(flat($top, 'ngx_http_malloc_test_hold'), 0,
       'watch, churn: nor the step before the window');
    like($comments, qr/over the second half of the window changed by/,
         'watch, churn: the exact change beside it') or diag $comments;
    is($hidden, 0, 'watch, churn: no hidden dump left');
    $t->no_alerts;
    $t->stop;
}

# The leak is a growth near the judgement's detection limit: under load
# the requests that drip come slower, the window holds less of it, and at
# times it cannot be told from the noise (a CI root, 2.74 MiB against a
# limit of 0.6 to 3.1 MiB).  A miss is measured again, and fails only
# when the second misses too; a judgement that never names it fails both.
sub named_watch {
    my ($query) = @_;
    my @got = calm_watch($query);
    return @got if flat($got[2], 'ngx_http_malloc_test_drip') > 0;
    diag "watch ($query): the leak not told from the noise, measured "
         . "again:\n" . $got[3];
    $got[0]->stop;
    return calm_watch($query);
}

{
    my ($t, $n, $top, $comments, $hidden) =
        named_watch('rotate=1024&drip=128');
    is($n, 1, 'watch, leak: a growth snapshot');
    my ($exact) = $comments =~ /changed by \+?(-?\d+) bytes \(exact\)/;
    ok(($exact // 0) > $MB, sprintf('watch, leak: the workers grew by '
                                    . '%.2f MiB in the second half (exact)',
                                    ($exact // 0) / $MB)) or diag $comments;
    within(flat($top, 'ngx_http_malloc_test_drip'), $exact // 0,
           'watch, leak: named with what it leaked') or diag $top;
    is(flat($top, 'ngx_http_malloc_test_rotate'), 0,
       'watch, leak: and not the churn');
    is($hidden, 0, 'watch, leak: no hidden dump left');
    $t->no_alerts;
    $t->stop;
}

done_testing;
