#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# What keeps the admin location safe: allow/deny and auth_basic as
# docs/security.md configures them (the test reads its examples), bad
# requests of every kind, the read-only location, and the modes of the
# files the module writes.  Bad bodies and names covered elsewhere are in
# t/prof_active.t, t/prof_dump.t and t/reset.t.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use MIME::Base64 qw(encode_base64);
use POSIX qw(mkfifo);
use Test::More;
use Time::HiRes qw(time sleep);
use MallocTest qw(json_decode poll_until);

our $TODO;

$SIG{PIPE} = 'IGNORE';

my $WORKER = $MallocTest::WORKER_UID;

my %doc = MallocTest::doc_blocks("$MallocTest::ROOT/docs/security.md");

ok($doc{$_}, "docs/security.md has the $_ example")
    for qw(allow read-only htpasswd-openssl htpasswd-crypt auth);

# one request on its own connection, from a chosen local address:
#   from => '127.0.0.2', headers => {...}, body => '...',
#   chunked => 1 (HTTP/1.1, chunks of 1000 bytes),
#   send => N (send only N bytes of the body, then wait for the answer),
#   timeout => secs
sub req {
    my ($t, $method, $path, %o) = @_;

    my $s = IO::Socket::INET->new(
        PeerAddr => '127.0.0.1', PeerPort => $t->port,
        LocalAddr => $o{from} // '127.0.0.1', Proto => 'tcp', Timeout => 5)
        or return { status => 599, content => "connect: $!" };

    my $body = $o{body};
    my %h = (Host => 'localhost', %{ $o{headers} // {} });
    my $proto = 'HTTP/1.0';

    if ($o{chunked}) {
        $proto = 'HTTP/1.1';
        $h{'Connection'} = 'close';
        $h{'Transfer-Encoding'} = 'chunked';
        my $chunked = '';
        for (my $i = 0; $i < length $body; $i += 1000) {
            my $c = substr($body, $i, 1000);
            $chunked .= sprintf("%x\r\n%s\r\n", length $c, $c);
        }
        $body = $chunked . "0\r\n\r\n";

    } elsif (defined $body) {
        $h{'Content-Length'} //= length $body;
    }

    $body //= '';
    $body = substr($body, 0, $o{send}) if defined $o{send};

    my $text = "$method $path $proto\r\n"
        . join('', map { "$_: $h{$_}\r\n" } sort keys %h) . "\r\n" . $body;

    my $start = time;
    for (my $off = 0; $off < length $text; ) {
        my $n = syswrite($s, $text, 65536, $off);
        last unless $n;
        $off += $n;
    }

    my $out = '';
    my $rin = '';
    vec($rin, fileno($s), 1) = 1;
    my $end = $start + ($o{timeout} // 30);
    while (time() < $end) {
        my $rout = $rin;
        last unless select($rout, undef, undef, $end - time());
        my $n = sysread($s, my $chunk, 65536);
        last unless $n;
        $out .= $chunk;

        # once the answer is in: nginx may linger for the rest of a body
        my $at = index($out, "\r\n\r\n");
        next if $at < 0;
        my ($len) = substr($out, 0, $at) =~ /\r\ncontent-length: *(\d+)/i;
        last if $method eq 'HEAD'
                || (defined $len && length($out) >= $at + 4 + $len);
    }
    close $s;

    my ($head, $content) = split /\r\n\r\n/, $out, 2;
    my ($status) = ($head // '') =~ m{^HTTP/1\.\d (\d+)};
    my %headers;
    for (split /\r\n/, $head // '') {
        $headers{lc $1} = $2 if /^([^:]+):\s*(.*)$/;
    }

    my $r = { status => $status // 0, headers => \%headers,
              content => $content // '', secs => time() - $start };
    $r->{json} = json_decode($r->{content})
        if ($headers{'content-type'} // '') =~ m{^application/json};
    return $r;
}

sub basic {
    my ($user, $pass) = @_;
    return { Authorization => 'Basic ' . encode_base64("$user:$pass", '') };
}

sub code {
    my ($r) = @_;
    return $r->{json} ? $r->{json}{error}{code} // 'none' : 'not json';
}

sub nginx_page {
    my ($r, $status) = @_;
    return $r->{status} == $status
        && ($r->{headers}{'content-type'} // '') eq 'text/html'
        && $r->{content} =~ m{<title>$status };
}

sub desired {
    my ($t) = @_;
    my $j = req($t, 'GET', '/malloc/')->{json};
    return $j ? ($j->{prof_active} ? 'on' : 'off') : 'unknown';
}

###############################################################################

# allow and deny, as docs/security.md configures them; the read-only
# location is the scraper's, whose address stands for 127.0.0.2 here

(my $ro = $doc{'read-only'}) =~ s/192\.0\.2\.20/127.0.0.2/g;

my $t = MallocTest->new(workers => 2, admin => undef,
                        server => $doc{allow} . $ro)->start;

my $r = req($t, 'GET', '/malloc/');
is($r->{status}, 200, 'allow 127.0.0.1: the write=on location answers');
ok($r->{json} && $r->{json}{write}, 'allow 127.0.0.1: write=on');

$r = req($t, 'GET', '/malloc/', from => '127.0.0.2');
ok(nginx_page($r, 403), 'deny all: 127.0.0.2 gets nginx\'s 403 page')
    or diag "$r->{status} $r->{content}";

$r = req($t, 'POST', '/malloc/prof_active', from => '127.0.0.2',
         body => 'true');
ok(nginx_page($r, 403), 'deny all: POST prof_active from 127.0.0.2: 403');
$r = req($t, 'POST', '/malloc/prof_dump', from => '127.0.0.2',
         body => '"denied.heap"');
ok(nginx_page($r, 403), 'deny all: POST prof_dump from 127.0.0.2: 403');
is(desired($t), 'off', 'the refused POST changed nothing');
ok(!glob($t->dump_dir . '/denied*'), 'the refused dump wrote nothing');

$r = req($t, 'GET', '/malloc-ro/');
ok(nginx_page($r, 403),
   'allow 127.0.0.2; deny all: 127.0.0.1 gets nginx\'s 403 page');
$r = req($t, 'POST', '/malloc-ro/prof_active', body => 'true');
ok(nginx_page($r, 403), 'before the module: not its write_disabled JSON');

$r = req($t, 'GET', '/malloc-ro/', from => '127.0.0.2');
is($r->{status}, 200, 'the scraper reads the read-only location');
ok($r->{json} && !$r->{json}{write}, 'which says write false');
$r = req($t, 'GET', '/malloc-ro/metrics', from => '127.0.0.2');
like($r->{content}, qr/^nginx_malloc_worker_up\{/m, 'the scraper: metrics');
$r = req($t, 'GET', '/malloc-ro/pprof/heap.pb.gz', from => '127.0.0.2');
is($r->{status}, 200, 'the scraper: a profile');
$r = req($t, 'POST', '/malloc-ro/prof_active', from => '127.0.0.2',
         body => 'true');
is($r->{status}, 403, 'the scraper cannot write');
is(code($r), 'write_disabled', 'refused by the module: write_disabled');

# the location is chosen on the normalized URI: no path gets past deny

for my $path ('/malloc-ro/../malloc/prof_active',
              '/malloc-ro/..%2Fmalloc/prof_active',
              '/x/%2e%2e/malloc/prof_active', '//malloc/prof_active',
              '/malloc/./prof_active', '/t/../malloc/prof_active')
{
    $r = req($t, 'POST', $path, from => '127.0.0.2', body => 'true');
    ok(nginx_page($r, 403), "deny holds for POST $path");
}
is(desired($t), 'off', 'no path trick changed anything');

like($t->log_text, qr/access forbidden by rule, client: 127\.0\.0\.2/,
     'refusals logged by nginx');

$t->no_alerts;
$t->stop;

###############################################################################

# auth_basic, as docs/security.md configures it, with both ways the page
# gives to make the password file

$t = MallocTest->new(workers => 2, admin => undef,
                     server => $doc{auth})->start;
my $htpasswd = $t->prefix . '/conf/malloc.htpasswd';

sub htpasswd {
    my ($block, $pw) = @_;
    unlink $htpasswd;
    (my $sh = $block) =~ s{/etc/nginx/malloc\.htpasswd}{$htpasswd}g;
    $sh =~ s/\bwww-data\b/nogroup/g;
    # a user's nginx reads the file as that user: no owner to set
    $sh =~ s/ -o root -g nogroup//g if $> != 0;
    # "read" asks the operator; the test sets $pw itself
    $sh = join "\n", grep { !/^(read|unset) / } split /\n/, $sh;
    local $ENV{pw} = $pw;
    my $out = `set -e; $sh 2>&1`;
    is($?, 0, 'the commands of the page ran') or diag $out;
}

htpasswd($doc{'htpasswd-openssl'}, 'apr1 secret');
like(`cat $htpasswd`, qr/^ops:\$apr1\$/, 'openssl wrote an apr1 hash');
my @st = stat $htpasswd;
is(sprintf('%o', $st[2] & 07777), '640', 'password file mode 0640');

$r = req($t, 'GET', '/malloc/');
is($r->{status}, 401, 'no credentials: 401');
like($r->{headers}{'www-authenticate'} // '', qr/^Basic realm="/,
     'asks for Basic credentials');
ok(nginx_page($r, 401), 'nginx\'s 401 page, before the module');
$r = req($t, 'POST', '/malloc/prof_active', body => 'true');
is($r->{status}, 401, 'POST without credentials: 401');
$r = req($t, 'GET', '/malloc/', headers => basic('ops', 'wrong'));
is($r->{status}, 401, 'wrong password: 401');
$r = req($t, 'POST', '/malloc/prof_active', body => 'true',
         headers => basic('ops', 'wrong'));
is($r->{status}, 401, 'POST with a wrong password: 401');
$r = req($t, 'GET', '/malloc/', headers => basic('root', 'apr1 secret'));
is($r->{status}, 401, 'unknown user: 401');
$r = req($t, 'GET', '/malloc/', headers => basic('ops', 'apr1 secret'));
is($r->{status}, 200, 'GET with the password: 200');
ok(!$r->{json}{prof_active}, 'the refused POSTs changed nothing');

$r = req($t, 'POST', '/malloc/prof_active', body => 'true',
         headers => basic('ops', 'apr1 secret'));
is($r->{status}, 200, 'POST prof_active with the password: 200');
ok($r->{json} && $r->{json}{prof_active}, 'profiling turned on');

htpasswd($doc{'htpasswd-crypt'}, 'crypt secret');
like(`cat $htpasswd`, qr/^ops:\$6\$/, 'perl wrote a SHA-512 crypt hash');
$r = req($t, 'GET', '/malloc/', headers => basic('ops', 'apr1 secret'));
is($r->{status}, 401, 'the old password no longer works');
$r = req($t, 'POST', '/malloc/prof_active', body => 'false',
         headers => basic('ops', 'crypt secret'));
is($r->{status}, 200, 'POST prof_active with the crypt() password: 200');
ok($r->{json} && !$r->{json}{prof_active}, 'profiling turned off');

like($t->log_text, qr/user "ops": password mismatch/,
     'wrong passwords logged by nginx');

$t->no_alerts;
$t->stop;

###############################################################################

# bad requests to a write=on location

$t = MallocTest->new(workers => 2, http => 'client_body_timeout 1s;',
    server => 'location /big/ { malloc_admin; client_max_body_size 2m; }')
    ->start;
my $dir = $t->dump_dir;
my @pids = $t->worker_pids;

my %bodies_of = (
    prof_active => 'false', prof_dump => 'null', prof_reset => '{}',
    purge => '{}',
);
my @posts = sort keys %bodies_of;

# nesting: past jansson's depth limit (2048), and deep but within it

for my $ep (@posts) {
    for my $deep (['[' x 3000, 'unclosed [ x 3000'],
                  ['[' x 2000 . ']' x 2000, '[ x 2000 closed'],
                  ['{"a":' x 600 . '0' . '}' x 600, '{"a": x 600 closed'],
                  ['{"path":' x 400 . '"x"' . '}' x 400, '{"path": x 400'])
    {
        $r = req($t, 'POST', "/malloc/$ep", body => $deep->[0]);
        is($r->{status} . ' ' . code($r), '400 invalid_body',
           "$ep: $deep->[1]: 400 invalid_body");
    }
    $r = req($t, 'POST', "/malloc/$ep", body => '[' x 3000);
    like($r->{json}{error}{text}, qr/depth/, "$ep: the text says depth");
}

$r = req($t, 'POST', '/malloc/pprof/symbol', body => '[' x 3000);
is($r->{status}, 200, 'pprof/symbol: nesting is not an address: 200');
is($r->{content}, '', 'and no line');

# numbers that do not fit

for my $bad (['prof_reset', '{"lg_sample": 1e400}'],
             ['prof_reset', '{"lg_sample": 99999999999999999999}'],
             ['prof_reset', '{"lg_sample": 9223372036854775807}'],
             ['prof_reset', '{"lg_sample": -9223372036854775808}'],
             ['prof_reset', '{"lg_sample": 1' . '0' x 4000 . '}'],
             ['prof_reset', '{"lg_sample": 1e1}'],
             ['prof_active',
              '{"active": true, "duration": "99999999999999999999d"}'],
             ['prof_active',
              '{"active": true, "duration": "9223372036854775807"}'],
             ['prof_active',
              '{"active": true, "duration": "' . '1' x 40 . 's"}'],
             ['prof_active', '{"active": true, "duration": "1y"}'],
             ['prof_active', '{"active": true, "duration": 1e400}'],
             ['prof_dump', '1e400'],
             ['prof_dump', '{"path": 99999999999999999999}'],
             ['purge', '99999999999999999999'])
{
    my ($ep, $body) = @$bad;
    my $shown = length($body) > 50 ? substr($body, 0, 45) . '...' : $body;
    $r = req($t, 'POST', "/malloc/$ep", body => $body);
    is($r->{status} . ' ' . code($r), '400 invalid_body',
       "$ep $shown: 400 invalid_body");
}

for my $arg ('seconds=3601', 'seconds=99999999999999999999', 'seconds=-1',
             'seconds=1e3', 'seconds=0x10')
{
    $r = req($t, 'GET', "/malloc/pprof/heap?$arg");
    is($r->{status} . ' ' . code($r), '400 invalid_argument',
       "pprof/heap?$arg: 400 invalid_argument");
}
$r = req($t, 'GET', '/malloc/pprof/heap.pb.gz?pid=99999999999999999999');
is($r->{status} . ' ' . code($r), '404 no_such_worker',
   'pid=99999999999999999999: 404 no_such_worker');

$r = req($t, 'POST', '/malloc/pprof/symbol',
         body => '0x' . 'f' x 40 . '+ffffffffffffffffff+-1');
is($r->{status}, 200, 'pprof/symbol: addresses wider than 64 bits: 200');
is($r->{content}, '', 'and no line for them');

# wrong types, beyond those of t/prof_active.t, t/prof_dump.t, t/reset.t

for my $bad (['prof_reset', '{"lg_sample": [19]}'],
             ['prof_reset', '{"lg_sample": {"n": 19}}'],
             ['prof_reset', '{"force": null}'],
             ['prof_reset', '{"lg_sample": 19, "force": "true"}'],
             ['prof_reset', 'false'], ['prof_reset', '0'],
             ['purge', 'true'], ['purge', 'false'], ['purge', '0'],
             ['purge', '[]'], ['purge', '""'], ['purge', '"{}"'],
             ['purge', '{"force": true}'],
             ['prof_active', '{"active": true, "duration": true}'],
             ['prof_active', '{"active": true, "duration": ["1h"]}'],
             ['prof_active', '{"active": true, "duration": {"h": 1}}'],
             ['prof_active', '{"active": true, "duration": -1}'],
             ['prof_active', '{"active": true, "duration": "-1s"}'],
             ['prof_active', '{"active": true, "duration": "1h-"}'],
             ['prof_active', '{"active": 1, "duration": "1h"}'],
             ['prof_active', '{"active": null}'],
             ['prof_dump', '{"path": ["a"]}'],
             ['prof_dump', '{"path": {"a": 1}}'],
             ['prof_dump', '{"path": true}'], ['prof_dump', 'false'])
{
    my ($ep, $body) = @$bad;
    $r = req($t, 'POST', "/malloc/$ep", body => $body);
    is($r->{status} . ' ' . code($r), '400 invalid_body',
       "$ep $body: 400 invalid_body");
}

# bodies: the module takes 4096 bytes (1 MiB for pprof/symbol), nginx
# client_max_body_size (1m here, 2m in /big/)

for my $ep (@posts) {
    my $ok = ' ' x (4096 - length $bodies_of{$ep}) . $bodies_of{$ep};
    $r = req($t, 'POST', "/malloc/$ep", body => $ok);
    is($r->{status}, 200, "$ep: a body of 4096 bytes is taken");

    my $over = ' ' . $ok;
    $r = req($t, 'POST', "/malloc/$ep", body => $over);
    is($r->{status} . ' ' . code($r), '413 body_too_large',
       "$ep: 4097 bytes with Content-Length: 413 body_too_large");
    $r = req($t, 'POST', "/malloc/$ep", body => $over, chunked => 1);
    is($r->{status} . ' ' . code($r), '413 body_too_large',
       "$ep: 4097 bytes chunked: 413 body_too_large");

    $r = req($t, 'POST', "/malloc/$ep",
             headers => { 'Content-Length' => 2 * 1024 * 1024 });
    ok(nginx_page($r, 413),
       "$ep: Content-Length over client_max_body_size: nginx's 413");
    $r = req($t, 'POST', "/malloc/$ep", body => ' ' x (1024 * 1024 + 1000),
             chunked => 1);
    ok(nginx_page($r, 413),
       "$ep: chunked over client_max_body_size: nginx's 413");
}

my $addrs = '+' x (1024 * 1024);
$r = req($t, 'POST', '/big/pprof/symbol', body => $addrs);
is($r->{status}, 200, 'pprof/symbol: a body of 1 MiB is taken');
$r = req($t, 'POST', '/big/pprof/symbol', body => "+$addrs");
is($r->{status} . ' ' . code($r), '413 body_too_large',
   'pprof/symbol: 1 MiB + 1 with Content-Length: 413 body_too_large');
$r = req($t, 'POST', '/big/pprof/symbol', body => "+$addrs", chunked => 1);
is($r->{status} . ' ' . code($r), '413 body_too_large',
   'pprof/symbol: 1 MiB + 1 chunked: 413 body_too_large');
$r = req($t, 'POST', '/malloc/pprof/symbol', body => "+$addrs");
ok(nginx_page($r, 413),
   'pprof/symbol: over client_max_body_size 1m: nginx\'s 413');

is(desired($t), 'off', 'bad bodies left profiling off');
is(join(',', map { $_->{lg_sample} // $_->{lg_prof_sample} }
             @{req($t, 'GET', '/malloc/stats')->{json}{workers}}),
   '19,19', 'and the sampling rate as it was');

# a slow body: the client sends half and stops; client_body_timeout 1s
# ends the request with 408 (nginx closes without an answer) while other
# commands go on

my $log_before = () = $t->log_text('access.log') =~ / 408 /g;

my $slow = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                 PeerPort => $t->port) or die $!;
print $slow "POST /malloc/prof_active HTTP/1.0\r\nHost: localhost\r\n"
    . "Content-Length: 4\r\n\r\ntr";
sleep 0.2;
$r = req($t, 'POST', '/malloc/prof_dump', body => '"meanwhile.heap"');
is($r->{status}, 200, 'a slow body does not hold the workers');

$r = req($t, 'POST', '/malloc/prof_active', body => 'true', send => 2,
         timeout => 5);
is($r->{status}, 0, 'slow body: closed without an answer');
ok($r->{secs} >= 0.9 && $r->{secs} < 4,
   sprintf('after client_body_timeout (%.1f s)', $r->{secs}));
$r = req($t, 'POST', '/malloc/prof_dump', body => '"slow.heap"', send => 5,
         timeout => 5);
is($r->{status}, 0, 'slow dump body: closed without an answer');
$r = req($t, 'POST', '/malloc/prof_reset', body => '{"lg_sample": 14}',
         send => 5, chunked => 1, timeout => 5);
is($r->{status}, 0, 'slow chunked body: closed without an answer');
close $slow;

ok(poll_until(3, sub {
    (() = $t->log_text('access.log') =~ /"POST \S+ HTTP\/1\.\d" 408 /g)
        >= $log_before + 4
}), 'the access log has 408 for each slow body');
is(desired($t), 'off', 'slow bodies changed nothing');
ok(!glob("$dir/slow*"), 'and wrote no dump');
is(join(',', map { $_->{lg_sample} // $_->{lg_prof_sample} }
             @{req($t, 'GET', '/malloc/stats')->{json}{workers}}),
   '19,19', 'nor changed the sampling rate');

# every method every endpoint does not take: 405 and the right Allow

my %allow = (
    '' => 'GET, HEAD', prof_active => 'GET, HEAD, POST',
    prof_dump => 'POST', prof_reset => 'POST', purge => 'POST',
    stats => 'GET, HEAD', metrics => 'GET, HEAD', heap => 'GET, HEAD',
    'pprof/heap' => 'GET, HEAD', 'pprof/heap.pb.gz' => 'GET, HEAD',
    'pprof/symbol' => 'GET, HEAD, POST', 'pprof/cmdline' => 'GET, HEAD',
    snapshots => 'GET, HEAD', 'snapshots/snapshot-x.pb.gz' => 'GET, HEAD',
);

for my $ep (sort keys %allow) {
    my %takes = map { $_ => 1 } split /, /, $allow{$ep};
    for my $m (grep { !$takes{$_} }
               qw(GET HEAD POST PUT DELETE PATCH OPTIONS PROPFIND))
    {
        $r = req($t, $m, "/malloc/$ep",
                 $m =~ /^(POST|PUT|PATCH)$/ ? (body => 'true') : ());
        is(join(' ', $r->{status}, $r->{headers}{allow} // 'no Allow',
                $m eq 'HEAD' ? 'method_not_allowed' : code($r)),
           "405 $allow{$ep} method_not_allowed",
           "$m /malloc/$ep: 405, Allow: $allow{$ep}");
    }
}

$r = req($t, 'TRACE', '/malloc/prof_active');
ok(nginx_page($r, 405), 'TRACE: nginx\'s own 405, before the module');

for my $ep ('nope', 'PROF_ACTIVE', 'prof_active/', 'prof_active.json',
            'pprof', 'pprof/', 'pprof/heap/', 'pprof/heap.pb', 'pprof/cpu',
            'pprof/profile', 'stats/', 'prof_dump/x', '%00x', 'x%20y')
{
    for my $m ('GET', 'POST') {
        $r = req($t, $m, "/malloc/$ep",
                 $m eq 'POST' ? (body => 'true') : ());
        if ($ep =~ /%00/) {
            ok(nginx_page($r, 400), "$m /malloc/$ep: nginx's 400");
            next;
        }
        is($r->{status} . ' ' . code($r), '404 not_found',
           "$m /malloc/$ep: 404 not_found");
    }
}

$r = req($t, 'GET', '/malloc/snapshots/');
is($r->{status} . ' ' . code($r), '404 no_such_snapshot',
   'GET /malloc/snapshots/: 404, like any other trailing slash');

is(desired($t), 'off', 'refused methods changed nothing');

# snapshots/<name> never leaves the dump directory, nor follows a link

my $secret = $t->prefix . '/secret.pb.gz';
open my $fh, '>', $secret or die $!;
print $fh "SECRET\n";
close $fh;

my $real = 'snapshot-20260101T000000Z.pb.gz';
open $fh, '>', "$dir/$real" or die $!;
print $fh "REAL\n";
close $fh;
chown $WORKER, -1, "$dir/$real";
chmod 0600, "$dir/$real";

symlink $secret, "$dir/snapshot-x.pb.gz" or die $!;
symlink $t->prefix, "$dir/snapshot-linkdir" or die $!;
mkdir "$dir/snapshot-dir";
mkfifo("$dir/snapshot-fifo", 0600) or die $!;
chown $WORKER, -1, "$dir/snapshot-fifo";

$r = req($t, 'GET', "/malloc/snapshots/$real");
is($r->{status}, 200, 'a regular snapshot file is served');
is($r->{content}, "REAL\n", 'with its content');

my @list = map { $_->{name} }
           @{req($t, 'GET', '/malloc/snapshots')->{json}{snapshots}};
is("@list", $real, 'the list has the regular file only');

(my $abs = $secret) =~ s{/}{%2F}g;
(my $rel = $secret) =~ s{^/}{};

for my $name ('snapshot-x.pb.gz', 'snapshot-linkdir', 'snapshot-dir',
              'snapshot-fifo', 'snapshot-linkdir%2Fsecret.pb.gz',
              'snapshot-..%2F..%2Fsecret.pb.gz', $abs, "/$rel",
              'snapshot-' . 'a' x 300, 'snapshot-', "$real%20",
              "$real%22", "$real%0a", "$real%7f", "%20$real",
              "$real/", "$real%2F")
{
    $r = req($t, 'GET', "/malloc/snapshots/$name", timeout => 5);
    my $shown = length($name) > 40 ? substr($name, 0, 37) . '...' : $name;
    $shown = $name =~ /^%2F/ ? '%2F<absolute path, encoded>'
           : $name =~ m{^/} ? '/<absolute path>' : $shown;
    is($r->{status} . ' ' . code($r), '404 no_such_snapshot',
       "snapshots/$shown: 404 no_such_snapshot");
    unlike($r->{content}, qr/SECRET/, "snapshots/$shown: not the file");
}

# dot segments are resolved before any location is chosen: these leave
# the admin location altogether, for "location /" and its "ok"

for my $path ('../../secret.pb.gz', '..%2F..%2Fsecret.pb.gz',
              'snapshot-x%2F..%2F..%2F..%2Fsecret.pb.gz',
              "$real/../../../secret.pb.gz")
{
    $r = req($t, 'GET', "/malloc/snapshots/$path");
    is($r->{status} . ' ' . $r->{content}, "200 ok\n",
       "snapshots/$path: resolved out of the admin location");
}

for my $path ("$real%00", 'snapshot-x%00/../../x',
              '../../../../../secret.pb.gz')
{
    $r = req($t, 'GET', "/malloc/snapshots/$path");
    ok(nginx_page($r, 400), "snapshots/$path: nginx's 400");
}

$r = req($t, 'GET', '/malloc/snapshots/snapshot-' . 'a' x 10000);
ok(nginx_page($r, 414), 'a name of 10000 bytes: nginx\'s 414');

is(`cat $secret`, "SECRET\n", 'the file outside is untouched');
is_deeply([$t->worker_pids], \@pids, 'no worker died on the way');

$t->no_alerts;
$t->stop;

###############################################################################

# write=off: every command refused before its body is read, reads work

$t = MallocTest->new(workers => 2, admin => 'write=off')->start;
$dir = $t->dump_dir;

for my $ep (@posts) {
    for my $body ($bodies_of{$ep}, ' ' x 5000) {
        $r = req($t, 'POST', "/malloc/$ep", body => $body);
        is($r->{status} . ' ' . code($r), '403 write_disabled',
           "write=off: POST $ep (" . length($body) . ' bytes): 403');
    }
}
$r = req($t, 'POST', '/malloc/prof_dump', body => '"ro.heap"');
like($r->{json}{error}{text}, qr/write=on/,
     'write=off: the text names the fix');

for my $ep ('', 'prof_active', 'stats', 'metrics', 'snapshots', 'heap',
            'pprof/heap', 'pprof/heap.pb.gz', 'pprof/symbol', 'pprof/cmdline')
{
    is(req($t, 'GET', "/malloc/$ep")->{status}, 200,
       "write=off: GET /malloc/$ep: 200");
}
$r = req($t, 'POST', '/malloc/pprof/symbol', body => '0x1+0x2');
is($r->{status}, 200, 'write=off: POST pprof/symbol, a lookup: 200');

is(desired($t), 'off', 'write=off: profiling still off');
is(join(',', map { $_->{lg_sample} // $_->{lg_prof_sample} }
             @{req($t, 'GET', '/malloc/stats')->{json}{workers}}),
   '19,19', 'write=off: sampling rate unchanged');
is(join(' ', glob("$dir/*")), '', 'write=off: no file in the dump dir');
ok(!$t->log_lines(qr/turned on|samples reset|purge requested|dump ".*"/),
   'write=off: no command logged');

$t->no_alerts;
$t->stop;

###############################################################################

# files: the directory 0700, dumps and snapshots 0600, owned by the
# worker user, even under umask 0

{
    my $old = umask 0;
    $t = MallocTest->new(workers => 2,
        http => 'malloc_snapshot interval=1s keep=2;')->start;
    umask $old;
}
$dir = $t->dump_dir;

@st = stat $dir;
is(sprintf('%o', $st[2] & 07777), '700', 'umask 0: dump dir mode 0700');
is($st[4], $WORKER, 'dump dir owned by the worker user');

is(req($t, 'POST', '/malloc/prof_active', body => 'true')->{status}, 200,
   'profiling on, for the snapshots');
$r = req($t, 'POST', '/malloc/prof_dump', body => '"mode.heap"');
is($r->{status}, 200, 'a dump');

ok(poll_until(10, sub { glob "$dir/snapshot-*.pb.gz" }), 'a snapshot');
# stop the schedule, so that no file comes or goes while they are looked at
ok(poll_until(5, sub {
    req($t, 'POST', '/malloc/prof_active', body => 'false')->{status} == 200
}), 'profiling off');

my @files = grep { -f } glob("$dir/mode.*.heap"), glob("$dir/snapshot-*");
is(scalar @files, 3, 'two dumps and a snapshot');
for my $f (@files) {
    (my $name = $f) =~ s{.*/}{};
    @st = lstat $f;
    is(sprintf('%o', $st[2] & 07777), '600', "umask 0: $name mode 0600");
    is($st[4], $WORKER, "$name owned by the worker user");
}

$t->no_alerts;
$t->stop;

done_testing;
