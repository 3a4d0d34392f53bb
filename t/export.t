#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# malloc_export: while sampling is on, nginx pushes its merged heap to an
# OTLP collector every interval, as one ExportProfilesServiceRequest per
# nginx.  The collector here is a receiver on a loopback port that records
# each request and answers as the test tells it: 200, 503, late, or not
# at all (killed).  The bodies are read with the protobuf reader of
# t/lib/MallocOtlp.pm, and once with protoc --decode_raw; every request
# any receiver here gets is checked, at the end, against the rules of
# sig-profiling's profcheck and what Pyroscope and protobuf refuse.  A
# collector that fails is retried, logged once per interval, shown in
# the state and the metrics, and costs neither the other requests' time
# nor memory.  Over https the collector's certificate is checked.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Digest::MD5 qw(md5_hex);
use File::Basename qw(basename);
use File::Copy qw(copy);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use POSIX ();
use Time::Local qw(timegm);
use Sys::Hostname qw(hostname);
use Test::More;
use Time::HiRes qw(sleep time);
use MallocTest qw(poll_until free_port held rss_kb);
use MallocOtlp qw(pb_message one all ints zero_entry decode_request leaf
                  leaf_sum profcheck receivers @TABLES);

my $MB = 1024 * 1024;
my $HOLD = 'ngx_http_malloc_test_hold';
my $PATH = '/v1development/profiles';

# TEST_LONG set, and not to 0: the collector is down for 100 intervals of
# 1 s, as the issue asks, instead of 20; make test sets it, make
# test-dists does not (unset keeps the file near half a minute)
my $LONG = ($ENV{TEST_LONG} // '0') ne '0';

###########################################################################
# the collector: a forked process on a free loopback port.  Each request
# is recorded as N.head (time, the mode it was answered in, method, path,
# headers) and N.body (gunzipped), the head written last; the answer is
# chosen by the file "mode": ok, 503 or slow.

my (@receivers, @every_receiver);

END {
    local $?;
    for my $rcv (@receivers) {
        kill 'KILL', $rcv->{pid};
        waitpid $rcv->{pid}, 0;
    }
}

sub receiver {
    my ($dir) = @_;
    mkdir $dir;
    my $port = free_port();
    my $listen = IO::Socket::INET->new(
        LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp',
        Listen => 16, ReuseAddr => 1) or die "receiver: $!";
    my $rcv = { dir => $dir, port => $port };
    set_mode($rcv, 'ok');

    my $parent = $$;
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        $SIG{PIPE} = 'IGNORE';
        eval { serve($listen, $dir, $parent) };
        POSIX::_exit(0);
    }
    close $listen;
    $rcv->{pid} = $pid;
    push @receivers, $rcv;
    push @every_receiver, $rcv;
    return $rcv;
}

sub set_mode {
    my ($rcv, $mode) = @_;
    spew("$rcv->{dir}/mode", $mode);
}

# the port closed: connections are refused
sub kill_receiver {
    my ($rcv) = @_;
    kill 'KILL', $rcv->{pid};
    waitpid $rcv->{pid}, 0;
    @receivers = grep { $_ != $rcv } @receivers;
}

sub spew {
    my ($file, $data) = @_;
    open my $fh, '>:raw', "$file.tmp" or die "$file: $!";
    print $fh $data;
    close $fh;
    rename "$file.tmp", $file or die "$file: $!";
}

sub serve {
    my ($listen, $dir, $parent) = @_;
    my $n = 0;
    while (getppid() == $parent) {
        my $rin = '';
        vec($rin, fileno($listen), 1) = 1;
        next unless select(my $rout = $rin, undef, undef, 1);
        my $c = $listen->accept or next;
        my $req = read_request($c);
        if ($req) {
            my $mode = 'ok';
            if (open my $fh, '<', "$dir/mode") {
                $mode = <$fh> // 'ok';
            }
            record($dir, ++$n, $req, $mode);
            answer($c, $mode);
        }
        close $c;
    }
}

# appends what the peer sends to $$buf; false at its end or the deadline
sub read_more {
    my ($c, $buf, $end) = @_;
    my $rin = '';
    vec($rin, fileno($c), 1) = 1;
    my $left = $end - time();
    return 0 if $left <= 0 || !select(my $rout = $rin, undef, undef, $left);
    return sysread($c, $$buf, 65536, length $$buf);
}

sub read_request {
    my ($c) = @_;
    my $end = time() + 10;
    my $buf = '';
    until ($buf =~ /\r\n\r\n/) {
        read_more($c, \$buf, $end) or return undef;
    }
    my ($head, $body) = split /\r\n\r\n/, $buf, 2;
    my ($line, @lines) = split /\r\n/, $head;
    my ($method, $path) = split / /, $line;
    my %header = map { /^([^:]+):\s*(.*)$/ ? (lc $1 => $2) : () } @lines;

    if (($header{'transfer-encoding'} // '') =~ /chunked/i) {
        until ($body =~ /(^|\r\n)0\r\n\r\n/) {
            read_more($c, \$body, $end) or return undef;
        }
        my $plain = '';
        while ($body =~ s/^([0-9a-f]+)[^\r]*\r\n//i && hex $1) {
            $plain .= substr($body, 0, hex($1) + 2, '');
            substr($plain, -2) = '';
        }
        $body = $plain;
    } else {
        while (length $body < ($header{'content-length'} // 0)) {
            read_more($c, \$body, $end) or return undef;
        }
    }

    return { method => $method, path => $path, header => \%header,
             body => $body };
}

sub record {
    my ($dir, $n, $req, $mode) = @_;
    my $plain;
    my $gz = gunzip(\$req->{body} => \$plain, Transparent => 0)
        ? 'ok' : "failed: $GunzipError";
    spew("$dir/$n.body", $gz eq 'ok' ? $plain : $req->{body});
    spew("$dir/$n.head", join '',
         "time " . time() . "\n", "mode $mode\n", "method $req->{method}\n",
         "path $req->{path}\n", "gunzip $gz\n",
         map { "header $_: $req->{header}{$_}\n" }
             sort keys %{$req->{header}});
}

sub answer {
    my ($c, $mode) = @_;
    if ($mode eq '503') {
        print $c "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
            . "Content-Length: 0\r\nConnection: close\r\n\r\n";
        return;
    }
    sleep 5 if $mode eq 'slow';
    print $c "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
        . "Content-Length: 0\r\nConnection: close\r\n\r\n";
}

# the parent's side: the requests recorded so far, oldest first
sub requests {
    my ($rcv) = @_;
    opendir my $d, $rcv->{dir} or return ();
    my @n = sort { $a <=> $b } map { /^(\d+)\.head$/ ? $1 : () } readdir $d;
    return map { $rcv->{seen}{$_} //= read_head($rcv, $_) } @n;
}

sub read_head {
    my ($rcv, $n) = @_;
    my %r = (n => $n, header => {});
    open my $fh, '<', "$rcv->{dir}/$n.head" or die $!;
    while (my $line = <$fh>) {
        chomp $line;
        if ($line =~ /^header ([^:]+): (.*)$/) {
            $r{header}{$1} = $2;
        } elsif ($line =~ /^(\w+) (.*)$/) {
            $r{$1} = $2;
        }
    }
    open $fh, '<:raw', "$rcv->{dir}/$n.body" or die $!;
    local $/;
    $r{body} = <$fh> // '';
    $r{md5} = md5_hex($r{body});
    return \%r;
}

# the request decoded, undef (and the reason in {error}) if it is not
sub profile_of {
    my ($r) = @_;
    return $r->{profile} if exists $r->{profile};
    $r->{profile} = eval { decode_request($r->{body}) };
    $r->{error} = $@;
    return $r->{profile};
}

sub source_of {
    my ($o) = @_;
    return $o->{profiles}[0]{attr}{'nginx.malloc.source'}{s} // '';
}

# the requests decoded, oldest first; one that is not: no profiles
sub pushed {
    my ($rcv) = @_;
    return map { profile_of($_) // { profiles => [] } } requests($rcv);
}

sub pushed_as {
    my ($rcv, $source) = @_;
    return grep { source_of($_) eq $source } pushed($rcv);
}

# the first profile's original_payload (payload=pprof), gzipped
sub original_payload {
    my ($body) = @_;
    my $rp = pb_message(one(pb_message($body), 1));
    my $sp = pb_message(one($rp, 2));
    return one(pb_message((all($sp, 2))[0]), 10);
}

# the sum of a value over a gzipped profile.proto's samples
sub pprof_total {
    my ($gz, $type) = @_;
    my $pb;
    return undef unless defined $gz && gunzip(\$gz => \$pb);
    my $p = pb_message($pb);
    my @s = all($p, 6);
    my @types = map { $s[one(pb_message($_), 1) // 0] } all($p, 1);
    my ($k) = grep { $types[$_] eq $type } 0 .. $#types;
    return undef unless defined $k;
    my $sum = 0;
    $sum += (ints(pb_message($_), 2))[$k] // 0 for all($p, 2);
    return $sum;
}

###########################################################################
# what nginx says

# an API time, "2026-12-01T03:43:08Z", in seconds; 0: none or not one
sub iso_time {
    my ($text) = @_;
    my @f = ($text // '') =~ /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z$/
        or return 0;
    return timegm($f[5], $f[4], $f[3], $f[2], $f[1] - 1, $f[0]);
}

sub export_state {
    my ($t) = @_;
    return $t->get('/malloc/')->{json}{export} // {};
}

# a started nginx of two workers that pushes $sources to $rcv every second,
# with $http before it, and samples
sub exporting {
    my ($rcv, $http, $sources) = @_;
    my $t = MallocTest->new(workers => 2, http => $http
        . "malloc_export http://127.0.0.1:$rcv->{port} interval=1s "
        . "sources=$sources;")->start;
    is_deeply(export_state($t)->{sources}, [split /,/, $sources],
              "state: the sources, $sources");
    $t->post('/malloc/prof_active', 'true');
    return $t;
}

sub metric {
    my ($t, $name) = @_;
    my ($v) = $t->get('/malloc/metrics')->{content} =~ /^\Q$name\E (\S+)$/m;
    return $v;
}

# the seconds another location takes to answer (99: not a 200)
sub answer_time {
    my ($t) = @_;
    my $start = time();
    my $r = $t->get('/');
    return $r->{status} == 200 ? time() - $start : 99;
}

sub sleep_until {
    my ($when) = @_;
    sleep $when - time() if $when > time();
}

sub warn_lines {
    my ($text) = @_;
    return scalar(() = $text =~ /^.*\[warn\].*malloc export.*$/mg);
}

my $tmp = tempdir('export-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{TEST_KEEP});

###########################################################################
# configuration errors

# each [emerg] quotes what it refuses: its hint lists every parameter, so
# "interval" alone would be found in any of them
for my $case (
    ['ftp://x', 'ftp://x'],
    ['http://', 'http://'],
    ['http://127.0.0.1:4318 interval=0', 'interval=0'],
    ['http://127.0.0.1:4318 interval=500ms', 'interval=500ms'],
    ['http://127.0.0.1:4318 bogus=1', 'bogus=1'],
    ['http://127.0.0.1:4318 header=NoColon', 'header=NoColon'],
    ['http://127.0.0.1:4318 attribute=novalue', 'attribute=novalue'],
    ['http://127.0.0.1:4318 sources=bogus', 'sources=bogus'],

    # what would go into the request as it is: CR/LF and spaces into the
    # request line (nginx reads \r and \n in quotes; the [emerg] shows
    # them so), a query the signal's path would follow, a UNIX socket's
    # path as the Host, credentials
    ['"http://127.0.0.1:4318/a\\r\\nX-Injected: 1"',
     'http://127.0.0.1:4318/a\\r\\nX-Injected: 1', 'control character'],
    ['"http://127.0.0.1:4318/a b"', 'http://127.0.0.1:4318/a b', 'space'],
    ['http://127.0.0.1:4318/base?tok=1', 'http://127.0.0.1:4318/base?tok=1',
     'query'],
    ['http://unix:/run/otel.sock', 'http://unix:/run/otel.sock', 'UNIX'],
    ['http://user:pw@127.0.0.1:4318', 'http://user:pw@127.0.0.1:4318',
     'credentials'],
    ['http://127.0.0.1:4318 "header=X Token:1"', 'header=X Token:1',
     'header name'],
    ["http://127.0.0.1:4318 \"header=X-A:a\x01b\"", 'header=X-A:a\\x01b',
     'control character'],
    ['http://127.0.0.1:4318 header=Host:evil.example',
     'header=Host:evil.example', 'the Host header itself'],
    ['http://127.0.0.1:4318 header=content-length:0',
     'header=content-length:0', 'the Content-Length header itself'],
    ['http://127.0.0.1:4318 header=Transfer-Encoding:chunked',
     'header=Transfer-Encoding:chunked', 'never with a Transfer-Encoding'],
    ['http://127.0.0.1:4318 sources=interval,', 'sources=interval,',
     'empty item'],
    ['http://127.0.0.1:4318 sources=,watch', 'sources=,watch', 'empty item'],
    ['http://127.0.0.1:4318 sources=interval,,watch',
     'sources=interval,,watch', 'empty item'],

    # a key twice in the resource, or in a profile's attributes
    ['http://127.0.0.1:4318 attribute=nginx.malloc.source=x',
     'attribute=nginx.malloc.source=x', 'module\'s own'],
    ['http://127.0.0.1:4318 attribute=nginx.malloc.snapshot=x',
     'attribute=nginx.malloc.snapshot=x', 'module\'s own'],
    ['http://127.0.0.1:4318 attribute=team=a attribute=team=b',
     'attribute=team=b', 'given twice'],
    ["http://127.0.0.1:4318 attribute=te\xffam=a", "attribute=te\xffam=a",
     'not UTF-8'])
{
    my ($args, $bad, $why) = @$case;
    my ($rc, $out) = MallocTest->new(http => "malloc_export $args;")
        ->test_conf;
    isnt($rc, 0, "nginx -t refuses malloc_export $args");
    like($out, qr/\[emerg\] .*invalid.*"\Q$bad\E"/,
         "malloc_export $args: the [emerg] names $bad") or diag $out;
    like($out, qr/\[emerg\] .*\Q$why\E/, "and says why: $why")
        if defined $why;
}

# the module's resource keys are the operator's to replace: no key twice
{
    my ($rc, $out) = MallocTest->new(http => 'malloc_export '
        . 'http://127.0.0.1:4318 attribute=service.name=edge '
        . 'attribute=host.name=node-7 "header=Authorization:Bearer x";')
        ->test_conf;
    is($rc, 0, 'nginx -t takes attribute=service.name= and host.name=, '
       . 'and a header with a space in its value') or diag $out;
}

{
    my ($rc, $out) = MallocTest->new(http =>
        "malloc_threads off; malloc_export http://127.0.0.1:4318;")
        ->test_conf;
    isnt($rc, 0, 'nginx -t refuses malloc_export with malloc_threads off');
    like($out, qr/\[emerg\] .*malloc_export.*malloc_threads/,
         'malloc_threads off: the [emerg] says malloc_export needs it')
        or diag $out;
}

{
    my $t = MallocTest->new(workers => 1)->start;
    my $j = $t->get('/malloc/')->{json};
    ok($j && exists $j->{export} && !defined $j->{export},
       'without malloc_export the state has "export": null');
    $t->stop;
}

###########################################################################
# a collector that is down: retried, logged once per interval, and no
# memory grows.  Its nginx runs beside the cases below, which take about
# as long as its first intervals; the checks come last.

my $down = receiver("$tmp/b");
my $td = MallocTest->new(workers => 2, http =>
    "malloc_export http://127.0.0.1:$down->{port}/otlp/ interval=1s "
    . "timeout=2s;")->start;
$td->post('/malloc/prof_active', 'true');
$td->get('/t/alloc?mb=8&block=8');
ok(poll_until(10, sub { scalar requests($down) }),
   'base path: a request arrives');
is((requests($down))[0]{path}, "/otlp$PATH",
   'base path: the OTLP path is appended to the URL\'s');
is(export_state($td)->{url}, "http://127.0.0.1:$down->{port}/otlp$PATH",
   'base path: state has the whole URL');

kill_receiver($down);
my $start = time();
my $offset = length $td->log_text;
ok(poll_until(5, sub {
    (export_state($td)->{last_error}{reason} // '') =~ /connect|refused/i;
}), 'down: last_error.reason says the connection was refused');

my @w = $td->worker_pids;
my ($failed, %rss0);

# its figures after 10 intervals, whichever case runs then
sub down_after_10 {
    return if %rss0 || time() < $start + 10;
    $failed = export_state($td)->{failed} // 0;
    %rss0 = map { $_ => rss_kb($_) } @w;
}

###########################################################################
# a collector that works

my $rcv = receiver("$tmp/a");
my $port = $rcv->{port};
my $url = "http://127.0.0.1:$port$PATH";

my $t = MallocTest->new(workers => 2, http => <<"EOF")->start;
malloc_export http://127.0.0.1:$port interval=2s timeout=2s
              "header=X-Scope-OrgID:tenant1"
              attribute=deployment.environment=test;
EOF
my $master = $t->master_pid;

# sampling off: nothing is sent

ok(!poll_until(5, sub { scalar requests($rcv) }),
   'sampling off: the collector gets nothing for 5 s');
my $e = export_state($t);
is($e->{url}, $url, 'state: the URL with the OTLP path');
is($e->{interval}, 2, 'state: the interval');
is_deeply($e->{sources}, ['interval'], 'state: the sources by default');
ok(defined $e->{sent} && $e->{sent} == 0 && $e->{failed} == 0,
   'sampling off: nothing sent, nothing failed');
ok(exists $e->{last_success} && !defined $e->{last_success},
   'sampling off: no last success');

down_after_10();

# sampling on, 32 MiB held: the merged heap arrives

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'sampling on');
is($t->get('/t/alloc?mb=32&block=8')->{json}{kept}, 32, '32 MiB held');

ok(poll_until(10, sub { scalar requests($rcv) }),
   'sampling on: a request arrives within 10 s');
my $r;
ok(poll_until(10, sub {
    ($r) = grep { my $o = profile_of($_); $o && leaf_sum($o,
                  'inuse_space/bytes', $HOLD) } requests($rcv);
}), "and one whose heap has what $HOLD holds") or $r = (requests($rcv))[-1];
$r //= { header => {}, body => '' };

is($r->{method}, 'POST', 'POST');
is($r->{path}, $PATH, "path $PATH");
is($r->{header}{'content-type'}, 'application/x-protobuf',
   'Content-Type: application/x-protobuf');
is($r->{header}{'content-encoding'}, 'gzip', 'Content-Encoding: gzip');
is($r->{gunzip}, 'ok', 'the body gunzips');
is($r->{header}{'x-scope-orgid'}, 'tenant1', 'the header= header is sent');
like($r->{header}{'user-agent'} // '', qr{^ngx_http_malloc_module/\d},
     'User-Agent names the module');

my $o = profile_of($r);
ok($o && @{$o->{profiles}}, 'the body decodes as protobuf, with profiles')
    or diag $r->{error};
$o //= { resource => {}, scope => {}, profiles => [], dict => {} };
is($o->{resource_profiles}, 1, 'one resource_profiles');

my $res = $o->{resource};
is($res->{'service.name'}{s}, 'nginx', 'resource: service.name nginx');
is($res->{'host.name'}{s}, hostname(), 'resource: host.name');
is($res->{'process.pid'}{i}, $master,
   'resource: process.pid is the master\'s, an integer');
is($res->{'process.executable.name'}{s}, 'nginx',
   'resource: process.executable.name');
my ($version) = `$MallocTest::NGINX -v 2>&1` =~ m{nginx/(\S+)};
is($res->{'process.runtime.version'}{s}, $version,
   'resource: process.runtime.version is nginx\'s');
is($res->{'deployment.environment'}{s}, 'test',
   'resource: the attribute= attribute');
is($o->{scope}{name}, 'ngx_http_malloc_module', 'scope: the module');
like($o->{scope}{version} // '', qr/^\d+\.\d+\.\d+/, 'scope: its version');

is_deeply([map { $_->{type} } @{$o->{profiles}}],
          ['inuse_space/bytes', 'inuse_objects/count'],
          'profiles: inuse_space/bytes, inuse_objects/count');
ok(!grep({ $_->{period_type} ne 'space/bytes' || !$_->{period} }
         @{$o->{profiles}}), 'profiles: period type space/bytes, a period');
ok(!grep({ abs(($_->{time} // 0) / 1e9 - time()) > 60 } @{$o->{profiles}}),
   'profiles: the time is now');
is_deeply([map { $_->{attr}{'nginx.malloc.source'}{s} // '' }
           @{$o->{profiles}}],
          ['interval', 'interval'],
          'profiles: nginx.malloc.source = interval');

my $held = leaf_sum($o, 'inuse_space/bytes', $HOLD) / $MB;
my $heap = held($t->get('/malloc/pprof/heap.json')->{json}, $HOLD);
ok($held >= 16 && $held <= 64, sprintf('a stack whose leaf is %s holds '
   . '%.1f MiB of the 32 (heap.json says %.1f)', $HOLD, $held, $heap));
my $objects = leaf_sum($o, 'inuse_objects/count', $HOLD);
ok($objects >= 2 && $objects <= 8, "in $objects objects, of 4 blocks");

for my $table (@TABLES) {
    my $first = $o->{dict}{$table} ? $o->{dict}{$table}[0] : undef;
    ok($table eq 'string' ? defined $first && $first eq ''
                          : zero_entry($first),
       "dictionary: the $table table's entry 0 is the zero value");
}

SKIP: {
    skip 'protoc is missing (protobuf-compiler): the body is not read by '
         . 'protoc --decode_raw', 3
        unless `sh -c 'command -v protoc'`;
    spew("$tmp/body.pb", $r->{body});
    my $raw = `protoc --decode_raw < $tmp/body.pb 2>&1`;
    is($?, 0, 'protoc --decode_raw reads the body') or diag $raw;
    like($raw, qr/"\Q$HOLD\E"/, 'protoc: the string table has the held '
         . 'function');
    like($raw, qr/"ngx_http_malloc_module"/, 'protoc: and the scope name');
}

down_after_10();

# one request per interval for the whole nginx, not one per worker

my $before = () = requests($rcv);
sleep 6;
my @all = requests($rcv);
my @six = @all[$before .. $#all];
ok(@six >= 2 && @six <= 4, 'interval=2s with 2 workers: '
   . scalar(@six) . ' requests in 6 s, one per interval');
ok(!grep({ my $p = profile_of($_);
           !$p || ($p->{resource}{'process.pid'}{i} // 0) != $master } @six),
   'each with the master\'s pid: one series per nginx');

$e = export_state($t);
ok(($e->{sent} // 0) >= 1, "state: sent $e->{sent}");
ok(abs(iso_time($e->{last_success}) - time()) < 30,
   "state: last_success now, as the API writes times: $e->{last_success}");
ok(exists $e->{last_error} && !defined $e->{last_error},
   'state: last_error null');
ok(($e->{bytes} // 0) > 0, 'state: bytes sent');
ok((metric($t, 'nginx_malloc_export_sent_total') // 0) >= 1,
   'metrics: nginx_malloc_export_sent_total');
ok((metric($t, 'nginx_malloc_export_last_success_timestamp_seconds') // 0)
   > time() - 30, 'metrics: the last success\'s time');

down_after_10();

# 503: the same request again, after Retry-After; nginx serves meanwhile

set_mode($rcv, '503');
my $slowest = 0;
ok(poll_until(10, sub {
    my $d = answer_time($t);
    $slowest = $d if $d > $slowest;
    my $e = export_state($t);
    $e->{failed} && ($e->{last_error}{reason} // '') =~ /503/;
}), '503: failed counted, last_error.reason says 503');
ok(poll_until(10, sub {
    my %tries;
    push @{$tries{$_->{md5}}}, $_ for grep { $_->{mode} eq '503' }
                                         requests($rcv);
    grep { @$_ >= 2 } values %tries;
}), '503: the collector sees the same request retried');
my %tries;
push @{$tries{$_->{md5}}}, $_->{time}
    for grep { $_->{mode} eq '503' } requests($rcv);
my ($again) = grep { @$_ >= 2 } values %tries;
ok($again && $again->[1] - $again->[0] >= 0.8,
   sprintf('503: retried after Retry-After: 1 (%.1f s later)',
           $again ? $again->[1] - $again->[0] : 0));
ok($slowest < 1, sprintf('503: another location answers at once '
   . '(%.3f s at most)', $slowest));
ok((metric($t, 'nginx_malloc_export_failed_total') // 0) > 0,
   'metrics: nginx_malloc_export_failed_total');
like($t->log_text, qr/\[warn\] .*malloc export to "[^"]*" failed: .*503/,
     '503: logged at warn');

my $sent = export_state($t)->{sent} // 0;
set_mode($rcv, 'ok');
ok(poll_until(10, sub { (export_state($t)->{sent} // 0) > $sent }),
   'the collector back: sent grows');
like($t->log_text, qr/\[notice\] .*malloc export to "[^"]*" works again/,
     'the collector back: logged at notice');

down_after_10();

# slower than timeout=2s: a timeout, and nginx serves meanwhile

my $from = time();
set_mode($rcv, 'slow');
$slowest = 0;
ok(poll_until(12, sub {
    my $d = answer_time($t);
    $slowest = $d if $d > $slowest;
    my $err = export_state($t)->{last_error};
    $err && iso_time($err->{time}) >= int($from)
        && ($err->{reason} // '') =~ /time/i;
}), 'slow collector: last_error.reason says it timed out');
ok(grep({ $_->{mode} eq 'slow' } requests($rcv)),
   'slow collector: the request reached it');
ok($slowest < 1, sprintf('slow collector: another location answers at '
   . 'once (%.3f s at most)', $slowest));

# stopped with a request in flight
$t->stop;
$t->no_alerts;
kill_receiver($rcv);

down_after_10();

###########################################################################
# sources=schedule: malloc_snapshot's snapshots, and not the live heap

my $sched = receiver("$tmp/c");
$t = exporting($sched, "malloc_snapshot interval=1s keep=10;\n", 'schedule');
$t->get('/t/alloc?mb=8&block=8');

ok(poll_until(10, sub {
    my @r = grep { profile_of($_) } requests($sched);
    @r >= 2;
}), 'sources=schedule: requests arrive');
my @snaps = pushed($sched);
is(join(',', grep { $_ ne 'schedule' } map { source_of($_) } @snaps), '',
   'sources=schedule: every request has nginx.malloc.source = schedule');
my $name = $snaps[0]{profiles}[0]{attr}{'nginx.malloc.snapshot'}{s} // '';
like(basename($name), qr/^snapshot-\d{8}T\d{6}Z\.pb\.gz$/,
     "and nginx.malloc.snapshot names the snapshot: $name");
ok(grep({ $_->{name} eq basename($name) }
        @{$t->get('/malloc/snapshots')->{json}{snapshots} // []}),
   'a snapshot that /malloc/snapshots lists');

$t->stop;
$t->no_alerts;

down_after_10();

###########################################################################
# sources=watch,reload: malloc_watch's snapshot of a growth and the
# master's heap after a reload, each pushed once it is written; the live
# heap is not, though its interval is short

my $kinds = receiver("$tmp/d");
$t = exporting($kinds, "malloc_test_leak 4m;\n"
               . "malloc_watch growth=16m sample=1h;\n", 'watch,reload');
ok(!poll_until(3, sub { scalar requests($kinds) }),
   'sources=watch,reload: no live heap, with sampling on');

$t->get('/t/alloc?mb=24&block=8');
my @watch;
ok(poll_until(10, sub { @watch = pushed_as($kinds, 'watch') }),
   'sources=watch: the growth snapshot is pushed');
my $grew = leaf_sum($watch[0], 'inuse_space/bytes', $HOLD) / $MB;
ok($grew >= 12 && $grew <= 48,
   sprintf('and holds the growth: %.1f MiB in %s, of 24', $grew, $HOLD));
$name = $watch[0]{profiles}[0]{attr}{'nginx.malloc.snapshot'}{s} // '';
like(basename($name), qr/\.growth\.\d+\.pb\.gz$/,
     "and nginx.malloc.snapshot names it: $name");

# the first reload turns the master's sampling on, the second is sampled
# and keeps the test module's 4 MiB
$t->reload for 1 .. 2;
my @reload;
ok(poll_until(15, sub {
    @reload = grep { ($_->{profiles}[0]{attr}{'nginx.malloc.snapshot'}{s}
                      // '') =~ /\.reload\.3\.heap$/ }
                   pushed_as($kinds, 'reload');
}), 'sources=reload: the master\'s heap after the reload is pushed');
my $leak = leaf_sum($reload[0], 'inuse_space/bytes',
                    'ngx_http_malloc_test_leak') / $MB;
ok($leak >= 2 && $leak <= 8,
   sprintf('and holds what the reload leaked: %.1f MiB, of 4', $leak));
is($reload[0] && $reload[0]{resource}{'process.pid'}{i}, $t->master_pid,
   'with the master\'s pid');
is(scalar(pushed_as($kinds, 'interval')), 0, 'and no live heap was sent');

$t->stop;
$t->no_alerts;

# reloads in the middle of the intervals' collections: the old worker 0
# goes at once, its command is closed, and no dump of it stays behind
{
    my $rr = receiver("$tmp/r");
    my $t = exporting($rr, '', 'interval');
    # dumps that take a while: a reload comes in the middle of one
    $t->get('/t/alloc?stacks=60000&size=64');
    # a slow collector: the intervals' dumps wait in worker 0's queue
    set_mode($rr, 'slow');
    sleep 4;
    for (1 .. 6) {
        $t->reload;
        sleep 0.7;
    }
    set_mode($rr, 'ok');
    sleep 8;
    my $dir = $t->dump_dir;
    opendir(my $d, $dir) or die "$dir: $!";
    my @old = grep { /^\.export-/ && -M "$dir/$_" > 5 / 86400 } readdir $d;
    closedir $d;
    is(join(' ', @old), '', 'reloads mid-collection: no export dump left');
    ok(scalar(requests($rr)) > 0, 'and the pushes went on');
    $t->stop;
    $t->no_alerts;
}

down_after_10();

###########################################################################
# strings that are not UTF-8 (an attribute= value, the path of a module
# and so of its symbols' mapping) and alloc_* in the heap (prof_accum):
# every string arrives as UTF-8, each bad byte as U+FFFD, and no alloc_*
# profile is sent, while pprof/heap.pb.gz keeps them

SKIP: {
    my $mods = "$tmp/mod\xffules";
    mkdir $mods or die "$mods: $!";
    chmod 0755, $tmp, $mods;
    for my $so (qw(ngx_http_malloc_module.so
                   ngx_http_malloc_test_module.so)) {
        copy("$MallocTest::MODULE_DIR/$so", "$mods/$so")
            or skip "cannot copy $so: $!", 9;
    }

    my $utf = receiver("$tmp/e");
    $t = MallocTest->new(workers => 1, module_dir => $mods,
        malloc_conf => "$MallocTest::MALLOC_CONF,prof_accum:true",
        http => "malloc_export http://127.0.0.1:$utf->{port} interval=1s "
              . "attribute=deployment.environment=te\xffst;")->start;
    $t->post('/malloc/prof_active', 'true');
    $t->get('/t/alloc?mb=8&block=8');

    my $u;
    ok(poll_until(10, sub {
        ($u) = grep { my $o = profile_of($_);
                      $o && leaf_sum($o, 'inuse_space/bytes', $HOLD) }
               requests($utf);
    }), 'not UTF-8: a request with the held function arrives');
    my $o = ($u && profile_of($u))
        // { resource => {}, profiles => [], dict => { string => [] } };
    my @strings = @{$o->{dict}{string}};

    is($o->{resource}{'deployment.environment'}{s}, "te\xef\xbf\xbdst",
       'attribute=: its bad byte arrives as U+FFFD');
    ok(grep({ m{/mod\xef\xbf\xbdules/ngx_http_malloc_test_module\.so$} }
            @strings), 'a module\'s path: its bad byte as U+FFFD')
        or diag explain [grep { /module\.so/ } @strings];
    ok(!grep({ /\xff/ } @strings), 'no string has the bad byte');
    is_deeply([map { $_->{type} } @{$o->{profiles}}],
              ['inuse_space/bytes', 'inuse_objects/count'],
              'prof_accum:true: no alloc_* profile is sent');
    ok(!grep({ /^alloc_/ } @strings), 'nor an alloc_* string');
    ok(!grep({ $_->{duration} } @{$o->{profiles}}),
       'each profile is one moment\'s: no duration');

    my $gz = $t->get('/malloc/pprof/heap.pb.gz')->{content};
    ok(defined pprof_total($gz, 'alloc_space'),
       'pprof/heap.pb.gz keeps alloc_space');

    $t->stop;
    $t->no_alerts;
}

down_after_10();

###########################################################################
# a heap of more stacks than Pyroscope takes samples in one profile
# (16,000), every allocation sampled: the 16,000th sample is the smallest
# stacks folded into one, the totals are those of the same heap as pprof
# (payload=pprof), and the state says so

{
    my $big = receiver("$tmp/f");
    $t = MallocTest->new(workers => 1, http => 'malloc_export '
        . "http://127.0.0.1:$big->{port} interval=2s timeout=10s "
        . 'payload=pprof;')->start;
    my $e = export_state($t);
    is($e->{max_samples}, 16000, 'state: max_samples 16000');
    ok(defined $e->{capped} && $e->{capped} == 0
       && exists $e->{last_capped} && !defined $e->{last_capped},
       'state: none capped yet, last_capped null');

    $t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}');
    $t->post('/malloc/prof_active', 'true');

    # a thread's countdown to its next sample was drawn at the old rate
    # (512 KiB on average): 16 MiB use it up, and are freed by stacks=
    $t->get('/t/alloc?mb=16');
    is($t->get('/t/alloc?stacks=17000&size=64')->{status}, 200,
       'the worker holds 17000 blocks of their own stacks');

    # the cap needs more than 16,000 stacks as the push names them: where
    # jemalloc sampled fewer (the first of a thread's samples is drawn at
    # the old rate, whatever this test allocates first), there is nothing
    # to cap, and it is said
    my $named = scalar @{$t->get('/malloc/pprof/heap.json')->{json}{stacks}
                         // []};
    SKIP: {
    skip "jemalloc sampled $named stacks, not more than 16,000: "
         . 'nothing to cap', 8 if $named <= 16000;

    my ($r, $o);
    ok(poll_until(60, sub {
        ($r) = grep { my $p = profile_of($_);
                      $p && grep { /stacks folded\)$/ }
                                 @{$p->{dict}{string}} } requests($big);
    }), "a request with stacks folded arrives ($named stacks)");
    $o = ($r && profile_of($r)) // { profiles => [], dict => {} };

    my ($space) = grep { $_->{type} eq 'inuse_space/bytes' }
                       @{$o->{profiles}};
    my @samples = @{$space ? $space->{samples} : []};
    is(scalar @samples, 16000, 'inuse_space: 16000 samples, the cap');
    my ($name) = grep { /^\(\d+ smaller stacks folded\)$/ }
                      @{$o->{dict}{string} // []};
    my ($folded) = ($name // '') =~ /(\d+)/;
    ok(($folded // 0) >= 17000 - 15999,
       "one is the function \"$name\"") or diag explain $name;
    ok(leaf_sum($o, 'inuse_space/bytes', $name // '') > 0,
       'the folded stack holds their bytes');

    my $total = 0;
    $total += $_->[1][0] for @samples;
    my $pprof = $r && pprof_total(original_payload($r->{body}),
                                  'inuse_space');
    is($total, $pprof, "totals: the samples sum to the pprof form's "
       . ($pprof // 'none'));

    ok(poll_until(5, sub { (export_state($t)->{capped} // 0) >= 1 }),
       'state: capped counts the request');
    $e = export_state($t)->{last_capped} // {};
    ok(abs(iso_time($e->{time}) - time()) < 60, 'state: last_capped.time');
    ok(($e->{folded} // 0) >= 17000 - 15999
       && ($e->{stacks} // 0) == 15999 + $e->{folded},
       "state: last_capped: $e->{folded} of $e->{stacks} stacks folded")
        or diag explain $e;
    }

    $t->stop;
    $t->no_alerts;
}

down_after_10();

###########################################################################
# https: nginx's own TLS, a certificate checked against ca= and the URL's
# host.  The collector is this receiver behind a TLS server of the same
# nginx (proxy_pass), so the exchange is nginx's TLS client against
# nginx's TLS server.

SKIP: {
    skip 'https: no openssl command to make a certificate', 11
        unless `sh -c 'command -v openssl'`;
    skip 'https: this nginx has no http_ssl_module', 11
        unless `$MallocTest::NGINX -V 2>&1` =~ /--with-http_ssl_module/;

    # a certificate for 127.0.0.1 (the name nginx checks), and one for
    # another name
    for my $cn ('127.0.0.1', 'other.example') {
        system("openssl req -x509 -newkey rsa:2048 -nodes -days 2 "
               . "-subj /CN=$cn -addext subjectAltName=DNS:$cn "
               . "-keyout $tmp/$cn.key -out $tmp/$cn.pem >/dev/null 2>&1")
            == 0 or die "openssl req for $cn failed";
    }

    my $tls = receiver("$tmp/tls");
    my %case = (
        trusted => ['127.0.0.1', " ca=$tmp/127.0.0.1.pem"],
        system => ['127.0.0.1', ''],
        name => ['other.example', " ca=$tmp/other.example.pem"],
    );
    my %n;
    for my $k (sort keys %case) {
        my ($cn, $ca) = @{$case{$k}};
        my $sport = free_port();
        $n{$k} = MallocTest->new(workers => 1, http => <<"EOF")->start;
malloc_export https://127.0.0.1:$sport interval=1s timeout=2s$ca;
server {
    listen 127.0.0.1:$sport ssl;
    ssl_certificate $tmp/$cn.pem;
    ssl_certificate_key $tmp/$cn.key;
    location / {
        proxy_pass http://127.0.0.1:$tls->{port};
    }
}
EOF
        $n{$k}->post('/malloc/prof_active', 'true');
        $n{$k}->get('/t/alloc?mb=8&block=8');
    }

    ok(poll_until(10, sub { (export_state($n{trusted})->{sent} // 0) >= 1 }),
       'https: the collector whose certificate ca= trusts gets the heap');
    my $req;
    ok(poll_until(10, sub {
        ($req) = grep { profile_of($_)
                        && leaf_sum(profile_of($_), 'inuse_space/bytes',
                                    'ngx_http_malloc_test_hold') > 0 }
                 requests($tls);
        $req;
    }), 'https: a request holds the test module\'s function');
    is($req && $req->{path}, $PATH, 'https: at the OTLP path, through TLS');
    like(export_state($n{trusted})->{url}, qr{^https://127\.0\.0\.1:\d+$PATH$},
         'https: the state shows the https URL');

    ok(poll_until(10, sub {
        (export_state($n{system})->{last_error}{reason} // '')
            =~ /certificate is not trusted/;
    }), 'https: a self-signed certificate without ca= is not trusted')
        or diag explain export_state($n{system});
    is(export_state($n{system})->{sent}, 0, 'https: and nothing is sent');

    ok(poll_until(10, sub {
        (export_state($n{name})->{last_error}{reason} // '')
            =~ /certificate is not for "127\.0\.0\.1"/;
    }), 'https: a trusted certificate for another name is refused')
        or diag explain export_state($n{name});
    is(export_state($n{name})->{sent}, 0, 'https: and nothing is sent');

    for my $t (values %n) {
        $t->stop;
        $t->no_alerts;
    }
    kill_receiver($tls);
}

###########################################################################
# the collector that was down, its intervals over

my $intervals = $LONG ? 100 : 20;
sleep_until($start + 10);
down_after_10();
sleep_until($start + $intervals);
my %rss1 = map { $_ => rss_kb($_) } @w;
my $secs = time() - $start;

$e = export_state($td);
ok(($e->{failed} // 0) > $failed, "down: failed grows ($failed, then "
   . ($e->{failed} // 'none') . ')');
ok(defined $e->{queued} && $e->{queued} <= 4,
   'down: at most 4 requests wait (' . ($e->{queued} // 'none') . ')');
ok(($e->{dropped} // 0) > 0, 'down: older ones dropped ('
   . ($e->{dropped} // 'none') . ')');
for my $pid (@w) {
    note "down for $intervals intervals of 1 s: worker $pid VmRSS "
         . "$rss0{$pid} kB after 10, $rss1{$pid} kB after $intervals";
    ok($rss1{$pid} > 0 && $rss1{$pid} - $rss0{$pid} < 2048,
       "down: worker $pid does not grow over $intervals intervals ("
       . ($rss1{$pid} - $rss0{$pid}) . ' kB)');
}
ok(answer_time($td) < 1, 'down: another location answers at once');

my $log = substr($td->log_text, $offset);
my $warns = warn_lines($log);
ok($warns >= 1 && $warns <= $secs + 2, sprintf('down: %d [warn] lines in '
   . '%.0f s, at most one per interval', $warns, $secs));
is(join("\n", grep { /\[(error|alert|crit)\]/ } split /\n/, $log), '',
   'down: nothing at [error] or above');

$td->stop;
$td->no_alerts;

###########################################################################
# every request that every receiver here got, as profcheck reads it
# (t/lib/MallocOtlp.pm) and as protobuf and Pyroscope would

for my $rcv (@every_receiver) {
    my (@bad, %seen);
    my $n = 0;
    for my $r (requests($rcv)) {
        next if $r->{gunzip} ne 'ok' || $seen{$r->{md5}}++;
        $n++;
        push @bad, map { "request $r->{n}: $_" }
                       profcheck($r->{body}), receivers($r->{body});
    }
    my $dir = basename($rcv->{dir});
    is(scalar @bad, 0, "receiver $dir: none of its $n distinct requests "
       . 'breaks a rule of profcheck, protobuf or Pyroscope')
        or diag join "\n", @bad[0 .. ($#bad > 19 ? 19 : $#bad)];
}


done_testing;
