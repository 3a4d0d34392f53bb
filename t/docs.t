#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Runs every curl example of docs/api.md, in order, against a real nginx
# with 2 workers and write=on: a "# status: NNN" line before a command
# states its expected status (default 200); answers that are JSON must
# parse.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest qw(json_decode);

my $doc = "$MallocTest::ROOT/docs/api.md";
open my $fh, '<', $doc or plan skip_all => "no $doc";
my @lines = <$fh>;
close $fh;

my (@examples, $in_sh, $status);

for my $line (@lines) {
    if ($line =~ /^```sh\s*$/) {
        $in_sh = 1;
        next;
    }
    if ($line =~ /^```/) {
        $in_sh = 0;
        next;
    }
    next unless $in_sh;

    if ($line =~ /^# status: (\d{3})\s*$/) {
        $status = $1;
        next;
    }
    if ($line =~ /^curl /) {
        chomp $line;
        push @examples, [$line, $status // 200];
        undef $status;
    }
}

ok(@examples >= 8, 'docs/api.md has curl examples') or diag scalar @examples;

my $t = MallocTest->new(workers => 2)->start;
my $port = $t->port;
my $dir = $t->dump_dir;

for my $ex (@examples) {
    my ($cmd, $want) = @$ex;
    like($cmd, qr{http://127\.0\.0\.1:8080/malloc/}, "example uses the "
         . "documented URL: $cmd");

    (my $run = $cmd) =~ s/127\.0\.0\.1:8080/127.0.0.1:$port/g;
    $run =~ s{/var/lib/nginx/malloc}{$dir}g;
    $run =~ s/^curl /curl -w '\\n%{http_code}' /;

    my $out = `$run 2>&1`;
    my ($body, $code) = $out =~ /^(.*)\n(\d{3})$/s;
    is($code, $want, "status $want: $cmd") or diag $out;

    if (defined $body && $body =~ /^\s*\{/) {
        ok(defined json_decode($body), "JSON answer: $cmd") or diag $body;
    }
}

$t->no_alerts;
$t->stop;

done_testing;
