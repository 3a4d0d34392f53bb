#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Configuration: directive errors that nginx -t reports, the dump
# directory, and a module that is loaded but not used.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use MallocTest;

sub conf_error {
    my (%opt) = @_;
    my $re = delete $opt{re};
    my $name = delete $opt{name};
    my $t = MallocTest->new(%opt);
    $t->{setup}->($t) if $t->{setup};
    my ($rc, $out) = $t->test_conf;
    isnt($rc, 0, "nginx -t fails: $name");
    like($out, $re, "message: $name");
}

conf_error(name => 'dump dir is a file',
           http => 'malloc_dump_dir %%PREFIX%%/conf/nginx.conf;',
           dump_dir => 0,
           re => qr/malloc_dump_dir ".*nginx\.conf" exists and is not a directory/);

conf_error(name => 'dump dir parent missing',
           http => 'malloc_dump_dir %%PREFIX%%/no/such/dir;', dump_dir => 0,
           re => qr/mkdir\(\) ".*no\/such\/dir" failed \(2: No such file/);

conf_error(name => 'bad malloc_admin parameter', admin => 'write=yes',
           re => qr/invalid parameter "write=yes"/);

conf_error(name => 'bad timeout', admin => 'timeout=soon',
           re => qr/invalid timeout "timeout=soon"/);

conf_error(name => 'zero timeout', admin => 'timeout=0',
           re => qr/invalid timeout/);

conf_error(name => 'regex location', admin => undef,
           server => 'location ~ ^/m/ { malloc_admin; }',
           re => qr/"malloc_admin" directive cannot be used in a regex location/);

conf_error(name => 'duplicate malloc_admin', admin => 'write=on; malloc_admin',
           re => qr/"malloc_admin" directive is duplicate/);

conf_error(name => 'duplicate malloc_dump_dir',
           http => 'malloc_dump_dir /tmp;',
           re => qr/"malloc_dump_dir" directive is duplicate/);

conf_error(name => 'malloc_dump_dir in server', dump_dir => 0,
           server => 'malloc_dump_dir /tmp;',
           re => qr/"malloc_dump_dir" directive is not allowed here/);

# docs/directives.md: the examples of malloc_watch, malloc_threads and
# malloc_export load, and each of their documented errors is nginx's,
# word for word, from the directive that the error quotes (a directive
# with nothing to watch: the second malloc_watch error; malloc_export
# without an admin location or without threads: its last two)

{
    open my $fh, '<', "$MallocTest::ROOT/docs/directives.md" or die $!;
    my $text = join '', <$fh>;

    my %bad = (
        malloc_watch => sub {
            $_[0] =~ /invalid parameter "([^"]+)"/ ? "malloc_watch $1;"
                                                   : 'malloc_watch peak=off;';
        },
        malloc_threads => sub {
            $_[0] =~ /invalid value "([^"]+)"/ && "malloc_threads $1;";
        },
        malloc_export => sub {
            my $url = 'http://127.0.0.1:4318';
            return $_[0] =~ /invalid URL "([^"]+)"/
                   ? "malloc_export $1;"
                 : $_[0] =~ /invalid parameter "([^"]+)"/
                   ? "malloc_export $url $1;"
                 : $_[0] =~ /malloc_admin/
                   ? { admin => undef, http => "malloc_export $url;" }
                 : "malloc_threads off; malloc_export $url;";
        },
    );

    for my $name (sort keys %bad) {
        my ($section) = $text =~ /^## \Q$name\E\n(.*?)(?=^## |\z)/ms;
        my ($example) = ($section // '') =~ /^Example:\n\n((?: {4}.*\n)+)/m;
        my @emerg = ($section // '')
            =~ /^ {4}nginx: \[emerg\] (.*) in \S+:\d+$/mg;
        ok($example && @emerg, "directives.md: $name has an example and "
                               . 'its errors');

        (my $http = $example // '') =~ s/^ {4}//mg;
        my ($rc, $out) = MallocTest->new(http => $http)->test_conf;
        is($rc, 0, "directives.md: the example of $name loads")
            or diag $out;

        for my $emerg (@emerg) {
            my $conf = $bad{$name}->($emerg);
            ($rc, $out) = MallocTest->new(ref $conf ? %$conf
                                                    : (http => $conf))
                ->test_conf;
            like($out, qr/\Q$emerg\E/,
                 "directives.md: \"$emerg\", word for word") or diag $out;
        }
    }
}

# make test-asan runs this file on no jemalloc: an endpoint that needs it
# answers 503 jemalloc_not_found once the request is routed to it

my $routed = MallocTest::asan() ? 503 : 200;

# a trailing slash is dropped; a relative path is under the prefix

my $t = MallocTest->new(dump_dir => 0, http => 'malloc_dump_dir dumps//;');
$t->start;
is($t->get('/malloc/')->{json}{dump_dir}, $t->prefix . '/dumps',
   'relative dump dir under the prefix, trailing slash dropped');
SKIP: {
    skip 'a dump needs jemalloc', 1 if MallocTest::asan();
    is($t->post('/malloc/prof_dump', '"' . $t->prefix . '/dumps/abs.heap"')
       ->{status}, 200, 'absolute path inside it');
}
$t->stop;

# the default dump directory sits beside the client body temp path

# (Debian's --http-client-body-temp-path is /var/lib/nginx/body; an
# nginx built with the default relative path has it under the prefix)

$t = MallocTest->new(dump_dir => 0);
my ($body_temp) = `$MallocTest::NGINX -V 2>&1`
    =~ /--http-client-body-temp-path=(\S+)/;
my $default = defined $body_temp && $body_temp =~ m{^/}
    ? $body_temp =~ s{[^/]+$}{malloc}r : $t->prefix . '/malloc';
$t->start;
is($t->get('/malloc/')->{json}{dump_dir}, $default,
   "default dump dir: $default");
ok(-d $default, 'default dump dir created');
is($t->get('/malloc/snapshots')->{status}, 200, 'default dump dir listed');
$t->stop;

# a nested malloc_admin does not inherit write=on or the timeout

$t = MallocTest->new(admin => undef, server => '
        location /a/ {
            malloc_admin write=on timeout=2s;
            location /a/ro/ { malloc_admin; }
        }')->start;
is($t->post('/a/prof_active', 'false')->{status}, $routed, 'outer writable');
my $ro = $t->post('/a/ro/prof_active', 'true');
is($ro->{status}, 403, 'nested location is read-only');
SKIP: {
    skip 'the state needs jemalloc', 1 if MallocTest::asan();
    ok(!$t->get('/a/ro/')->{json}{write}, 'and says so');
}
$t->stop;

# a prefix without a trailing slash only takes "/" after it

$t = MallocTest->new(admin => undef,
                     server => 'location /mc { malloc_admin; }')->start;
is($t->get('/mc')->{status}, $routed, 'the location itself');
is($t->get('/mc/prof_active')->{status}, $routed, 'an endpoint under it');
is($t->get('/mcprof_active')->{status}, 404, 'no endpoint glued to it');
$t->stop;

# an exact location works as well

$t = MallocTest->new(admin => undef,
                     server => 'location = /m { malloc_admin; }')->start;
is($t->get('/m')->{status}, $routed, 'exact location');
$t->stop;

# loaded but not used: no directory, no zone, responses unchanged, quiet

my $plain = MallocTest->new(admin => undef, dump_dir => 0,
                            conf => undef);
$plain->{conf} = $plain->conf_text;
$plain->{conf} =~ s/^load_module .*malloc_module\.so;\n//m;
$plain->start;

$t = MallocTest->new(admin => undef,
                     http => 'malloc_dump_dir %%PREFIX%%/unused;',
                     dump_dir => 0)->start;

for my $path ('/', '/t/state', '/malloc/', '/missing/') {
    my $a = $plain->get($path);
    my $b = $t->get($path);
    is($b->{status}, $a->{status}, "same status for $path");
    my ($ca, $cb) = ($a->{content}, $b->{content});
    s/"pid": \d+/"pid": N/ for $ca, $cb;
    is($cb, $ca, "same body for $path");
}

ok(!-e $t->prefix . '/unused', 'no dump directory created when unused');
is(scalar $t->log_lines(qr/\[(notice|warn|error)\].*(malloc|heap)/), 0,
   'nothing logged about the module');
$t->no_alerts;

done_testing;
