#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Runs the C unit programs (build/unit_*, from t/unit/unit_*.c) and turns
# each one's TAP into a subtest, so that prove -r t counts and shows them.

use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(basename);
use FindBin;

use Test::More;

our $TODO;

my $root = abs_path("$FindBin::Bin/..");

# UBSan only prints by default: make undefined behaviour fail the program
$ENV{UBSAN_OPTIONS} //= 'halt_on_error=1:print_stacktrace=1';

# the sources say which programs there should be, so a missing one shows
my @names = sort map { basename($_, '.c') } glob("$root/t/unit/unit_*.c");

plan skip_all => "no unit test sources in $root/t/unit" unless @names;

my @missing = grep { !-x "$root/build/$_" } @names;

plan skip_all => "unit binaries missing (@missing): build them with "
    . "'make unit'" if @missing == @names;

for my $name (@names) {
    subtest $name => sub {
        my $bin = "$root/build/$name";

        plan skip_all => "$bin is missing: build it with 'make unit'"
            unless -x $bin;

        run_tap($bin);
    };
}

done_testing();


# replays one program's TAP; its stderr (sanitizer reports) goes through
sub run_tap {
    my ($bin) = @_;

    my ($planned, $seen, $last_failed) = (undef, 0, 0);

    open(my $fh, '-|', $bin) or die "cannot run $bin: $!";

    while (my $line = <$fh>) {
        chomp $line;

        if ($line =~ /^1\.\.(\d+)/) {
            $planned = $1;

        } elsif ($line =~ /^(not )?ok (\d+)(?: - )?(.*)$/) {
            my ($failed, $desc) = (defined $1, $3);
            my $todo;

            $seen++;

            if ($desc =~ s/\s*#\s*TODO\s*(.*)$//) {
                $todo = $1 || 'TODO';
            }

            {
                local $TODO = $todo;
                ok(!$failed, $desc);
            }

            $last_failed = $failed && !defined $todo;

        } elsif ($line =~ /^#\s?(.*)$/) {
            if ($last_failed) {
                diag($1);
            } else {
                note($1);
            }

        } elsif ($line =~ /\S/) {
            note("unexpected output: $line");
        }
    }

    close($fh);

    my $status = $?;

    ok($status == 0, basename($bin) . ' exited with status 0')
        or diag(describe_status($status));

    ok(defined $planned, basename($bin) . ' printed a plan');

    is($seen, $planned // -1, basename($bin) . ' ran all planned tests')
        if defined $planned;
}


sub describe_status {
    my ($status) = @_;

    return "killed by signal " . ($status & 127) if $status & 127;
    return "exit status " . ($status >> 8);
}
