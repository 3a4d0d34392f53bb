#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# GET traffic: what in-flight traffic holds, walked from nginx's own
# connections and pools in every worker, with real clients of known
# sizes: requests that take a known part of their pool (exact to the
# byte on jemalloc, against a like request without it), slow uploads
# into a 1 MiB body buffer, a proxy's buffers held by a client that does
# not read, an upgraded (websocket-style) proxied connection, HTTP/2
# with 100 streams on one connection, 500 idle keepalive connections,
# another server; the sentence both ways; malloc_traffic's finished
# requests in GET traffic, GET stats and GET metrics; bad top= refused;
# 10,000 connections opened and closed while the walk is asked in a loop.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use Socket qw(SOL_SOCKET SO_RCVBUF inet_aton pack_sockaddr_in);
use POSIX ();
use Test::More;
use MallocTest qw(poll_until);

my $MIB = 1024 * 1024;

# "http2 on;" since nginx 1.25.1, where "listen ... http2" is deprecated
my ($version) = `$MallocTest::NGINX -v 2>&1` =~ m{nginx/(\d+\.\d+\.\d+)};
my $h2_new = sprintf('%03d%03d%03d', split /\./, $version // '0.0.0')
    >= 1025001;
my ($h2_listen, $h2_on) = $h2_new ? ('', 'http2 on;') : ('http2', '');

my $port2 = MallocTest::free_port();
my $port3 = MallocTest::free_port();
my $wsport = MallocTest::free_port();

my $t = MallocTest->new(workers => 2, connections => 1024,
                        http => <<"EOF", server => <<'EOF');
    malloc_traffic on;

    server {
        listen 127.0.0.1:$port2;
        server_name second.example;

        location /held2 {
            malloc_test;
        }
    }

    server {
        listen 127.0.0.1:$port3 $h2_listen;
        $h2_on

        location /t/ {
            malloc_test;
        }
    }
EOF
        location /held {
            malloc_test;
        }

        location /upload {
            client_body_buffer_size 1m;
            client_max_body_size 10m;
            proxy_pass http://127.0.0.1:%%PORT%%/t/state;
        }

        location /proxied {
            proxy_buffer_size 64k;
            proxy_buffers 16 64k;
            proxy_max_temp_file_size 0;
            proxy_pass http://127.0.0.1:%%PORT%%/big.bin;
        }

        location = /big.bin {
            root %%PREFIX%%/html;
        }

        location /ws {
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_pass http://127.0.0.1:%%WSPORT%%;
        }
EOF
$t->{server} =~ s/%%WSPORT%%/$wsport/g;

mkdir $t->prefix . '/html';
open my $fh, '>:raw', $t->prefix . '/html/big.bin' or die $!;
print $fh 'x' x (64 * $MIB);
close $fh;

$t->start;

sub traffic {
    my ($query) = @_;
    return $t->get('/malloc/traffic' . ($query // ''));
}

sub location_of {
    my ($j, $loc, $server) = @_;
    my ($l) = grep {
        $_->{location} eq $loc && (!defined $server || $_->{server} eq $server)
    } @{ $j->{locations} };
    return $l;
}

# nothing in flight but the question: the answer says so

my $r = traffic();
is($r->{status}, 200, 'GET traffic');
my $j = $r->{json};
is($j->{partial}, JSON::PP::false(), 'not partial');
is(scalar @{ $j->{workers} }, 2, 'both workers walked');
is($j->{totals}{requests}{n}, 1, 'idle: one request in flight, the question');
is($j->{top}[0]{location}, '/malloc/', 'idle: it is the admin location\'s');
is($j->{top}[0]{path}, '/malloc/traffic', 'idle: its path');
like($j->{text}, qr/^in-flight\ traffic\ holds\ [\d.]+\ [KM]iB\ of\ the
                   \ [\d.]+\ MiB\ allocated\ \(\d+\.\d%\);\ the\ rest\ is
                   \ kept\ outside\ requests:\ see\ the\ heap\ profile$/x,
     "idle: something kept ($j->{text})");
is($j->{totals}{allocator}, 'jemalloc', 'on jemalloc');
ok($j->{totals}{bytes} <= $j->{totals}{allocated},
   'no more than the allocated bytes');

# bad top=: refused, said

for my $bad ('x', '-1', '100000', '1001', '', '5%20') {
    $r = traffic("?top=$bad");
    is($r->{status}, 400, "top=$bad: 400");
    is($r->{json}{error}{code}, 'invalid_argument', "top=$bad: the code");
}
like($r->{json}{error}{text}, qr/from 0 to 1000/, 'top: the range said');
is(scalar @{ traffic('?top=0')->{json}{top} }, 0, 'top=0: no requests');

# requests of a known size: 1 MiB of their pool each, beside one without

my @held = map { $t->send('GET', '/held?pool=1024&hold=6000') } 1 .. 6;
push @held, $t->send('GET', '/held?hold=6000');

# the other server, on its own port
push @held, map {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $port2) or die $!;
    print $s "GET /held2?pool=2048&hold=6000 HTTP/1.0\r\n"
        . "Host: second.example\r\n\r\n";
    $s;
} 1 .. 2;

# slow uploads: 2 MB announced, a few bytes sent
my @uploads = map {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    print $s "POST /upload HTTP/1.1\r\nHost: localhost\r\n"
        . "Content-Length: 2000000\r\n\r\nsome";
    $s->flush;
    $s;
} 1 .. 4;

ok(poll_until(10, sub {
    my $l = location_of(traffic()->{json}, '/held');
    $l && $l->{requests} == 7;
}), 'the held requests are in flight');

$j = traffic('?top=100')->{json};

my @mine = grep { $_->{location} eq '/held' } @{ $j->{top} };
my @big = grep { $_->{bytes} > $MIB } @mine;
my ($small) = grep { $_->{bytes} < $MIB } @mine;
is(scalar @big, 6, 'six requests of more than 1 MiB');
ok($small, "and the one without ($small->{bytes} bytes)");
for my $b (@big) {
    is($b->{bytes} - $small->{bytes}, $MIB,
       "exact: 1 MiB of its pool, to the byte ($b->{bytes})");
    ok($b->{bytes} <= $MIB * 1.01 + 16384,
       'within 1% of 1 MiB and the pool\'s own');
}
is($big[0]{method}, 'GET', 'top: the method');
is($big[0]{path}, '/held', 'top: the path, no query string');
is($big[0]{client}, '127.0.0.1', 'top: the client');
is($big[0]{http_version}, 1000, 'top: HTTP/1.0');
is($big[0]{state}, 'processing', 'top: in its handler');
ok($big[0]{age_ms} >= 0 && $big[0]{age_ms} < 10000, 'top: its age');

my $held = location_of($j, '/held');
is($held->{requests}, 7, 'by location: /held, 7 requests');
ok($held->{bytes} >= 6 * $MIB && $held->{bytes} < 7 * $MIB,
   "by location: /held holds 6 MiB and the pools ($held->{bytes})");

my $other = location_of($j, '/held2', 'second.example');
is($other->{requests}, 2, 'the other server\'s location, by its name');
ok($other->{bytes} >= 4 * $MIB, 'with its 2 MiB each');
my ($srv) = grep { $_->{server} eq 'second.example' } @{ $j->{servers} };
is($srv->{bytes}, $other->{bytes}, 'by server: the same bytes');

my $up = location_of($j, '/upload');
is($up->{requests}, 4, 'uploads: 4 under /upload');
ok($up->{bytes} >= 4 * $MIB, "uploads: a 1 MiB body buffer each "
   . "($up->{bytes})");
is($j->{totals}{states}{reading_body}{n}, 4, 'uploads: reading the body');
ok($j->{totals}{states}{reading_body}{bytes} >= 4 * $MIB,
   'uploads: the state holds them');

# every form adds up: states and locations, workers and totals

my $states = 0;
$states += $_->{bytes} for values %{ $j->{totals}{states} };
is($states + $j->{totals}{http2}{bytes} + $j->{totals}{other}{bytes},
   $j->{totals}{bytes}, 'states, HTTP/2 and other make the total');
my $locs = 0;
$locs += $_->{bytes} for @{ $j->{locations} };
is($locs, $j->{totals}{requests}{bytes}, 'locations make the requests');
my $sum = 0;
$sum += $_->{bytes} for @{ $j->{workers} };
is($sum, $j->{totals}{bytes}, 'workers make the totals');
for my $w (@{ $j->{workers} }) {
    ok($w->{bytes} <= $w->{allocated},
       "worker $w->{worker}: no more than its allocated bytes");
}
like($j->{text}, qr/:\ the\ memory\ is\ the\ traffic,\ most\ of\ it\ in
                   \ location\ "\/held"\ of\ server\ ""\ \([\d.]+\ MiB\);
                   \ see\ the\ top\ requests$/x,
     "traffic: the sentence names the location ($j->{text})");

# and the exact counters agree: the held pools are in jemalloc's total

my $st = $t->get('/malloc/stats')->{json};
ok($st->{totals}{allocated} >= 14 * $MIB,
   'jemalloc\'s allocated holds the 14 MiB of pools');

$t->response($_, 10) for @held;
close $_ for @uploads;

# a proxy's buffers, held by a client that does not read

my $slow = IO::Socket::INET->new(Proto => 'tcp') or die $!;
setsockopt($slow, SOL_SOCKET, SO_RCVBUF, 4096);
connect($slow, pack_sockaddr_in($t->port, inet_aton('127.0.0.1'))) or die $!;
print $slow "GET /proxied HTTP/1.0\r\nHost: localhost\r\n\r\n";
$slow->flush;

ok(poll_until(10, sub {
    my $l = location_of(traffic()->{json}, '/proxied');
    $l && $l->{bytes} >= $MIB;
}), 'proxy: 16 buffers of 64 KiB held under /proxied');
$j = traffic()->{json};
my ($p) = grep { $_->{location} eq '/proxied' } @{ $j->{top} };
is($p->{state}, 'sending', 'proxy: sending, the client slow');
is($j->{totals}{other}{n}, 0, 'proxy: its upstream counted once, with it');
ok($p->{bytes} >= 17 * 64 * 1024, "proxy: its buffers and its upstream's "
   . "($p->{bytes})");
close $slow;

# an upgraded connection that lasts: a backend that switches protocols

my $ws = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $wsport,
                               Listen => 5, ReuseAddr => 1) or die $!;
my $child = fork // die $!;
if ($child == 0) {
    my $c = $ws->accept;
    local $/ = "\r\n\r\n";
    <$c>;
    print $c "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
        . "Connection: Upgrade\r\n\r\n";
    $c->flush;
    sleep 30;
    POSIX::_exit(0);
}
close $ws;

my $wc = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                               PeerPort => $t->port) or die $!;
print $wc "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
    . "Connection: Upgrade\r\n\r\n";
$wc->flush;
{
    local $/ = "\r\n\r\n";
    like(scalar <$wc>, qr{^HTTP/1\.1 101}, 'upgrade: switched');
}
ok(poll_until(5, sub {
    grep { $_->{location} eq '/ws' && $_->{state} eq 'upgraded' }
        @{ traffic()->{json}{top} };
}), 'upgrade: the connection shows under /ws, upgraded');
close $wc;
kill 'TERM', $child;
waitpid $child, 0;

# HTTP/2: 100 streams on one connection, from a client of a few lines
# (HPACK's static table and literals: no library needed)

my $h2 = h2_open($port3, 100, '/t/alloc?pool=64&hold=4000');

ok(poll_until(10, sub {
    traffic()->{json}{totals}{http2}{streams} >= 100;
}), 'HTTP/2: 100 streams walked');
$j = traffic('?top=200')->{json};
is($j->{totals}{http2}{n}, 1, 'HTTP/2: on one connection');
my @h2 = grep { $_->{http_version} == 2000 } @{ $j->{top} };
is(scalar @h2, 100, 'HTTP/2: each stream\'s request in the top');
ok(!(grep { $_->{bytes} < 64 * 1024 } @h2), 'HTTP/2: each with its 64 KiB');
is($h2[0]{path}, '/t/alloc', 'HTTP/2: the path');
ok($j->{totals}{http2}{bytes} > 0, 'HTTP/2: the connection\'s own state');
is(h2_ended($h2, 100), 100, 'HTTP/2: every stream answered');
close $h2;

# idle keepalive connections

my @idle = map {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    print $s "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
    $s->flush;
    sysread($s, my $buf, 4096);
    $s;
} 1 .. 500;

ok(poll_until(5, sub {
    traffic()->{json}{totals}{states}{keepalive}{n} >= 500;
}), '500 idle keepalive connections');
$j = traffic()->{json};
ok($j->{totals}{states}{keepalive}{bytes} > 0, 'keepalive: their pools');
close $_ for @idle;

# malloc_traffic: finished requests by location, in every form

my $before = location_of(traffic()->{json}, '/held');
$t->get('/held?pool=512') for 1 .. 20;
$j = traffic()->{json};
my $after = location_of($j, '/held');
is($after->{finished}{count} - $before->{finished}{count}, 20,
   'finished: 20 more under /held');
ok($after->{finished}{max} >= 512 * 1024, 'finished: the largest');
is(scalar @{ $after->{finished}{buckets} }, 9, 'finished: 9 buckets');

ok(poll_until(5, sub {
    my $m = $t->get('/malloc/metrics')->{content};
    my $n = 0;
    $n += $1 while $m =~ /^nginx_malloc_request_pool_bytes_count
                          \{worker="\d+",server="",location="\/held"\}
                          \ (\d+)$/mgx;
    $n == $after->{finished}{count};
}), 'metrics: the histogram\'s count is the same');
my $m = $t->get('/malloc/metrics')->{content};
like($m, qr/^# TYPE nginx_malloc_request_pool_bytes histogram$/m,
     'metrics: a histogram');
like($m, qr/^nginx_malloc_request_pool_bytes_bucket\{worker="\d",server="",
             location="\/held",le="\+Inf"\}\ \d+$/mx,
     'metrics: its +Inf bucket');
like($m, qr/^nginx_malloc_traffic_bytes\{worker="\d",server="second.example",
             location="\/held2"\}\ \d+$/mx,
     'metrics: bytes by server and location');
unlike($m, qr/traffic_bytes\{[^}]*(path|client|127\.0\.0\.1)/,
       'metrics: no path, no client in the labels');

$st = $t->get('/malloc/stats')->{json};
like($st->{traffic}{text}, qr/^in-flight traffic holds /,
     'stats: the sentence');
like($t->get('/malloc/')->{json}{traffic}{text},
     qr/^in-flight traffic holds /, 'GET /: the sentence');
ok(ref $st->{workers}[0]{traffic} eq 'HASH', 'stats: per worker');

# 10,000 connections opened and closed while the walk is asked in a loop

my $churn = fork // die $!;
if ($churn == 0) {
    for (1 .. 10000) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                      PeerPort => $t->port) or next;
        print $s "GET /t/state HTTP/1.0\r\n\r\n" if $_ % 2;
        close $s;
    }
    POSIX::_exit(0);
}
my $ok = 0;
$ok += (traffic('?top=1000')->{status} == 200) for 1 .. 40;
waitpid $churn, 0;
is($ok, 40, 'churn: every walk answered');

# a reload while the workers walk: a whole answer, or 503 with
# Retry-After; a reload is not a restart

for (1 .. 3) {
    my $pid = open(my $kid, '-|') // die $!;
    if ($pid == 0) {
        my $a = $t->get('/malloc/traffic');
        print "$a->{status} " . ($a->{headers}{'retry-after'} // '-')
            . ' ' . (($a->{json}{error} // {})->{code} // '-') . "\n";
        POSIX::_exit(0);
    }
    select undef, undef, undef, 0.01;
    $t->reload;
    chomp(my $line = <$kid> // "");
    close $kid;
    like($line, qr/^(200 - -|503 1 workers_changed)$/,
         "reload mid-walk: whole, or 503 workers_changed ($line)");
}

# nothing left behind

ok(poll_until(5, sub { !glob($t->dump_dir . '/.profile-*') }),
   'no hidden file left');
$t->no_alerts;
$t->stop;

done_testing;


sub h2_frame {
    my ($type, $flags, $stream, $payload) = @_;
    my $len = length $payload;
    return pack('CnCCN', $len >> 16, $len & 0xffff, $type, $flags, $stream)
        . $payload;
}

sub h2_open {
    my ($port, $n, $path) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port)
        or die $!;
    my $out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" . h2_frame(4, 0, 0, '');

    # :method GET, :scheme http (indexed); :path, :authority (literal,
    # indexed name, not added to the table)
    my $block = "\x82\x86" . pack('CC', 0x04, length $path) . $path
        . pack('CC', 0x01, 9) . 'localhost';

    $out .= h2_frame(1, 0x05, 2 * $_ + 1, $block) for 0 .. $n - 1;
    print $s $out;
    $s->flush;
    return $s;
}

# the streams that ended (END_STREAM on HEADERS or DATA) within 10 s
sub h2_ended {
    my ($s, $n) = @_;
    my ($buf, $ended) = ('', 0);
    my $end = time + 10;
    while ($ended < $n && time < $end) {
        my $rin = '';
        vec($rin, fileno($s), 1) = 1;
        last unless select($rin, undef, undef, 1) >= 0;
        next unless vec($rin, fileno($s), 1);
        sysread($s, $buf, 65536, length $buf) or last;
        while (length $buf >= 9) {
            my ($hi, $lo, $type, $flags) = unpack('CnCC', $buf);
            my $len = ($hi << 16) | $lo;
            last if length $buf < 9 + $len;
            $ended++ if ($type == 0 || $type == 1) && ($flags & 1);
            substr($buf, 0, 9 + $len) = '';
        }
    }
    return $ended;
}
