#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Writes core/ngx_http_malloc_assets.c from the files of
# ui/ (index.html, *.js, *.css): the heap viewer is built into the module,
# so that nothing is installed beside it.  make runs it when a file
# changes; t/ui.t checks that the committed file is current.
#
#     perl ui/embed.pl [OUT]

use strict;
use warnings;

use FindBin;

my $dir = $FindBin::Bin;
my $out = shift // "$dir/../core/ngx_http_malloc_assets.c";

my %TYPES = (
    html => 'text/html; charset=utf-8',
    js   => 'text/javascript; charset=utf-8',
    css  => 'text/css; charset=utf-8',
);

opendir my $d, $dir or die "$dir: $!";
my @files = sort grep { /^[\w.-]+\.(html|js|css)$/ } readdir $d;
closedir $d;

my $c = "\n/*\n * Copyright (C) 2026 ngx_http_malloc_module maintainers\n"
    . " * BSD 2-Clause licence: see LICENSE.\n */\n\n"
    . "\n/* made by ui/embed.pl from ui/: edit those files, not this one */"
        . "\n\n\n#include \"ngx_http_malloc_assets.h\"\n\n\n";

my @table;

for my $i (0 .. $#files) {
    my $name = $files[$i];
    open my $fh, '<:raw', "$dir/$name" or die "$name: $!";
    local $/;
    my $data = <$fh> // '';
    close $fh;

    my @bytes = map { sprintf '0x%02x', $_ } unpack 'C*', $data;
    my $body = '';
    while (my @line = splice @bytes, 0, 12) {
        $body .= '    ' . join(', ', @line) . ",\n";
    }

    $c .= "static const unsigned char  ngx_http_malloc_asset_$i\[] = {\n"
          . $body . "    0x00\n};\n\n";

    my ($ext) = $name =~ /\.(\w+)$/;
    push @table, sprintf "    { \"%s\", \"%s\",\n      ngx_http_malloc_asset_%d, %d },\n",
                         $name, $TYPES{$ext}, $i, length $data;
}

$c .= "\nconst ngx_http_malloc_asset_t  ngx_http_malloc_assets[] = {\n"
      . join('', @table) . "    { NULL, NULL, NULL, 0 }\n};\n";

open my $fh, '>', "$out.tmp" or die "$out.tmp: $!";
print $fh $c;
close $fh or die "$out.tmp: $!";
rename "$out.tmp", $out or die "$out: $!";
