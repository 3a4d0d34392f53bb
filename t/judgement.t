#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# One judgement of a comparison, in every form of the answer.  The
# master's heap since a generation, asked as heap.json (the viewer's),
# pprof/heap.pb.gz (go tool pprof -comments and -raw), pprof/heap (the
# legacy text) and heap (heap_v2, for jeprof): the same stacks grew, by
# the same bytes, with the same detection limit, and the profiles keep
# the call sites of what grew with its growth between them, which go
# tool pprof and jeprof read from the text forms, past their comments.
#
# The case is a WAF's rule parser: many small blocks through one
# function reached from eight call sites (libmodsecurity's
# acmp_add_pattern), each call site too thinly sampled to be judged
# alone.  Once it leaks at every read; once it rebuilds the same blocks
# at every read and holds steady, which must be judged no change by
# every form alike, on as many samples.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest qw(frames);

$ENV{HOME} = '/tmp';

my $MB = 1024 * 1024;
my $QUERY = 'process=master&since=3';
my $PATTERN = 'ngx_http_malloc_test_pattern';

# what a comparison says in comments: its figures, its sentence and the
# interval of each stack that grew, by its allocating function
sub said {
    my ($text) = @_;
    my %c;
    ($c{grew}, $c{compared}) = $text =~ /; (\d+) of (\d+) stacks, \|z\| >=/;
    ($c{net}, $c{grown}) =
        $text =~ /nets ([-+]\d+) bytes; shown: (\d+) bytes grown/;
    ($c{detection}) = $text =~ /^\s*(?:# )?detection: (.*?)\s*$/m;
    for my $line ($text =~ /^\s*(?:# )?(grew: .*?)\s*$/mg) {
        my ($leaf, $change, $margin) =
            $line =~ /^grew: (\S+).*\(([-+]\d+) \+- (\d+) bytes;/ or next;
        $c{stacks}{$leaf} = [$change, $margin];
    }
    $c{net} += 0 if defined $c{net};
    return \%c;
}

# the same from heap.json
sub json_said {
    my ($j) = @_;
    my $c = $j->{comparison};
    my %c = (grew => $c->{grew}, compared => $c->{compared},
             net => $c->{net}, grown => $c->{grown},
             detection => $c->{detection});
    for my $i (0 .. $#{$j->{stacks}}) {
        next unless $j->{significant}[$i] == 1;
        my $leaf = (frames($j, $i))[-1];
        $c{stacks}{$leaf} = [$j->{values}[$i][0] - $j->{base_values}[$i][0],
                             $j->{margins}[$i]];
    }
    return \%c;
}

# go tool pprof -raw: each sample's inuse_space and whether its stack
# runs through $func, as [bytes, frames]
sub raw_samples {
    my ($file) = @_;
    my $raw = `go tool pprof -raw $file 2>&1`;
    my ($samples) = $raw =~ /^Samples:\n(.*?)^Locations/ms;
    my @out;
    my $index;
    for my $line (split /\n/, $samples // '') {
        if ($line =~ /^\s*(?:alloc|inuse|objects|space)/) {
            my @types = split ' ', $line;
            ($index) = grep { $types[$_] =~ /^inuse_space/ } 0 .. $#types;
            $index //= $#types;
            next;
        }
        my ($values, $stack) = $line =~ /^\s*([\d\s]+):\s*(.*)$/ or next;
        my @v = split ' ', $values;
        push @out, [$v[$index], $stack];
    }
    my ($locations) = $raw =~ /^Locations\n(.*?)^Mappings/ms;
    my %loc = ($locations // '') =~ /^\s*(\d+): 0x[0-9a-f]+ M=\d+ (\S+)/mg;
    for my $s (@out) {
        $s->[1] = [map { $loc{$_} // "?" } split ' ', $s->[1]];
    }
    return \@out;
}

sub save {
    my ($t, $path, $name) = @_;
    my $r = $t->get($path);
    my $file = $t->prefix . "/$name";
    open my $fh, '>', $file or die;
    print $fh $r->{content};
    close $fh;
    return ($r, $file);
}

# every form of the same comparison, and what each says
sub forms {
    my ($t, $case) = @_;
    my %f;

    my $r = $t->get("/malloc/pprof/heap.json?$QUERY");
    is($r->{status}, 200, "$case: heap.json") or diag $r->{content};
    $f{json} = json_said($r->{json});
    $f{raw_json} = $r->{json};

    ($r, my $pb) = save($t, "/malloc/pprof/heap.pb.gz?$QUERY",
                        "$case.pb.gz");
    is($r->{status}, 200, "$case: heap.pb.gz");
    $f{comments} = `go tool pprof -comments $pb 2>&1`;
    $f{pprof} = said($f{comments});
    $f{samples} = raw_samples($pb);

    ($r, my $legacy) = save($t, "/malloc/pprof/heap?$QUERY", "$case.txt");
    is($r->{status}, 200, "$case: pprof/heap");
    $f{legacy_text} = $r->{content};
    $f{legacy} = said($r->{content});
    $f{top} = `go tool pprof -top -sample_index=inuse_space $legacy 2>&1`;

    ($r, my $v2) = save($t, "/malloc/heap?$QUERY", "$case.heap");
    is($r->{status}, 200, "$case: heap");
    $f{v2_text} = $r->{content};
    $f{v2} = said($r->{content});

    # jeprof reads both text forms, their comment lines passed over
    $f{jeprof_legacy} = `jeprof --text /usr/sbin/nginx $legacy 2>&1`;
    $f{jeprof_v2} = `jeprof --text /usr/sbin/nginx $v2 2>&1`;

    return \%f;
}

# every form says what heap.json says
sub same_judgement {
    my ($f, $case) = @_;
    my $j = $f->{json};

    ok(defined $j->{detection} && $j->{detection}
           =~ /^with \d+ samples now and \d+ in the base, a change of small blocks under [\d.]+ [KMG]?i?B cannot be told from noise/,
       "$case: heap.json states its detection limit")
        or diag explain $j;

    for my $form (qw(pprof legacy v2)) {
        my $c = $f->{$form};
        is($c->{grew}, $j->{grew}, "$case: $form: as many stacks grew")
            or diag $form eq 'pprof' ? $f->{comments}
                                     : $f->{"${form}_text"} =~ /^(#.*)$/mg;
        is($c->{compared}, $j->{compared}, "$case: $form: of as many");
        is($c->{grown}, $j->{grown}, "$case: $form: the same bytes grown");
        is($c->{net}, $j->{net}, "$case: $form: the same net");
        is($c->{detection}, $j->{detection},
           "$case: $form: the same detection limit");
        is_deeply([sort keys %{$c->{stacks} // {}}],
                  [sort keys %{$j->{stacks} // {}}],
                  "$case: $form: the same stacks grew");
        # heap.json's values are whole bytes a call site, summed
        ok(!grep({ my $s = $c->{stacks}{$_}; my $w = $j->{stacks}{$_};
                   !$w || $s->[1] != $w->[1] || abs($s->[0] - $w->[0]) > 16 }
                 keys %{$c->{stacks} // {}}),
           "$case: $form: each with the same change and margin")
            or diag explain [$c->{stacks}, $j->{stacks}];
    }
}

###########################################################################
# the leak: 3 MiB of 64-byte blocks at every read, through eight call
# sites; since generation 3 (about 12 samples of it at the default rate)
# ten reads more leaked 30 MiB (about 60 more), some 7 samples a site

{
    my $t = MallocTest->new(workers => 1,
        http => 'malloc_test_rules 3m 64 kept;')->start;
    $t->post('/malloc/prof_active', 'true');
    $t->reload for 1 .. 12;

    my $f = forms($t, 'leak');
    my $j = $f->{json};

    ok($j->{grew} >= 1 && $j->{stacks}{$PATTERN},
       "leak: heap.json: the pattern store grew")
        or diag explain $j;
    my ($change, $margin) = @{$j->{stacks}{$PATTERN} // [0, 0]};
    my $exact = $f->{raw_json}{comparison}{exact}{change} // 0;
    ok($change > 15 * $MB && $change < 45 * $MB,
       sprintf('leak: by %.1f MiB +- %.1f (exact %.1f MiB, all of the '
               . 'master)', $change / $MB, $margin / $MB, $exact / $MB));
    ok($change - $margin > 0, 'leak: its interval lies above zero');

    same_judgement($f, 'leak');

    like($f->{comments},
         qr/grew: \Q$PATTERN\E < ngx_http_malloc_test_rule[^:]*: \+[\d.]+ MiB, 99%: [-\d.]+ to [\d.]+ MiB/,
         'leak: go tool pprof -comments gives its interval')
        or diag $f->{comments};

    # the call sites kept, with the growth between them

    my @sites = grep { grep { $_ eq $PATTERN } @{$_->[1]} }
                @{$f->{samples}};
    my $total = 0;
    $total += $_->[0] for @{$f->{samples}};
    my $sites = 0;
    $sites += $_->[0] for @sites;
    is(scalar @sites, 8, 'leak: heap.pb.gz keeps the eight call sites')
        or diag explain $f->{samples};
    ok(abs($sites - $change) <= 1,
       "leak: holding the pattern store's growth: $sites bytes");
    ok(abs($total - $j->{grown}) <= @{$f->{samples}},
       "leak: the profile holds what grew: $total of $j->{grown} bytes");

    # the legacy text's whole samples, as go tool pprof reads them

    my ($top) = $f->{top} =~ /^\s*([\d.]+)MB\s.*\s\Q$PATTERN\E$/m;
    ok(defined $top && abs($top * $MB - $change) < $MB,
       sprintf('leak: the legacy text, to go tool pprof: %.2f MB',
               $top // 0)) or diag $f->{top};

    for my $form (qw(legacy v2)) {
        my ($mb) = $f->{"jeprof_$form"}
                   =~ /^\s*([\d.]+)\s+[\d.]+%.*\s\Q$PATTERN\E$/m;
        ok(defined $mb && abs($mb * $MB - $change) < $MB,
           sprintf('leak: the %s text, to jeprof: %.1f MB', $form,
                   $mb // 0)) or diag $f->{"jeprof_$form"};
    }

    $t->no_alerts;
    $t->stop;
}

###########################################################################
# no leak, on as many samples: 30 MiB of 64-byte blocks through the same
# eight call sites, rebuilt at every read

{
    my $t = MallocTest->new(workers => 1,
        http => 'malloc_test_rules 30m 64;')->start;
    $t->post('/malloc/prof_active', 'true');
    $t->reload for 1 .. 12;

    my $f = forms($t, 'steady');
    my $j = $f->{json};
    my $c = $f->{raw_json}{comparison};

    ok(!$j->{stacks}{$PATTERN},
       'steady: heap.json: the pattern store did not grow')
        or diag explain $j;
    # 30 MiB at one sample per 512 KiB: 60 samples on average each side;
    # fewer than 25 comes once in 10^7 runs (Poisson), 39 came on trixie
    ok($c->{samples} >= 25 && $c->{base_samples} >= 25,
       "steady: on $c->{samples} samples now and $c->{base_samples} in "
       . 'the base');
    ok($c->{limit} > $c->{floor} && $c->{floor} > 0,
       sprintf('steady: seen from %.1f MiB in a new stack, from %.1f MiB '
               . 'in one that held them all', $c->{floor} / $MB,
               $c->{limit} / $MB));

    same_judgement($f, 'steady');

    my @sites = grep { grep { $_ eq $PATTERN } @{$_->[1]} }
                @{$f->{samples}};
    is(scalar @sites, 0, 'steady: heap.pb.gz keeps none of its call sites')
        or diag explain \@sites;
    unlike($f->{legacy_text}, qr/^# grew: \Q$PATTERN\E/m,
           'steady: nor does the legacy text name it');

    # the last generation against itself: nothing can have grown, and
    # every form that carries text says so, and why
    my $last = $t->get('/malloc/')->{json}{generations}[0]{generation};
    my $self = "process=master&since=$last";
    for my $ep ('pprof/heap', 'heap') {
        my $r = $t->get("/malloc/$ep?$self");
        is($r->{status}, 200, "empty: $ep");
        like($r->{content},
             qr/^# empty: no stack grew beyond the sampling noise, of \d+ compared/m,
             "empty: $ep says so, and why") or diag $r->{content};
    }
    my (undef, $pb) = save($t, "/malloc/pprof/heap.pb.gz?$self",
                           'empty.pb.gz');
    like(`go tool pprof -comments $pb 2>&1`,
         qr/^empty: no stack grew beyond the sampling noise/m,
         'empty: heap.pb.gz\'s comments say so');
    is($t->get("/malloc/pprof/heap.json?$self")->{json}{comparison}{grew},
       0, 'empty: heap.json: grew 0');

    $t->no_alerts;
    $t->stop;
}

done_testing;
