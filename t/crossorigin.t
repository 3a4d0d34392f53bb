#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Web pages in the operator's browser must not drive the admin location:
# requests whose Sec-Fetch-Site or Origin say they come from another
# origin are refused with 403 cross_origin before any work, while clients
# that are not browsers (curl, jeprof, pprof, scrapers) work as before.
# The headers are checked one by one over plain HTTP (an Origin of the
# right host over https is another origin), the notice for an admin
# location that shares its server with other locations is read from
# nginx -t, then a real browser (Debian's chromium, headless) runs an
# attack page served from another port, a page of the admin location's
# own origin, a trusted dashboard, and a DNS rebinding against
# docs/security.md's configuration.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use MallocTest qw(json_decode poll_until free_port);
use MallocBrowser qw(chromium dom);

my $B = free_port();

my $t = MallocTest->new(
    workers => 2,
    server => <<"EOF",
        location /page/ {
            alias %%PREFIX%%/page/;
        }

        location /dash/ {
            malloc_admin write=on;
            malloc_trusted_origin http://127.0.0.1:$B;
            malloc_trusted_origin https://grafana.example.com;
        }
EOF
    http => <<"EOF",
    server {
        listen 127.0.0.1:$B;
        root %%PREFIX%%/evil;
    }
EOF
);

my $A = $t->port;
my $prefix = $t->prefix;

# what a test must find unchanged: every worker's state and the files
sub state_of {
    my $index = $t->get('/malloc/')->{json};
    my $stats = $t->get('/malloc/stats')->{json};
    opendir my $d, $t->dump_dir or die $!;
    my @files = sort grep { !/^\.\.?$/ } readdir $d;
    return join ' ',
        'desired=' . ($index->{prof_active} ? 'on' : 'off'),
        (map { "w$_->{worker}=" . ($_->{prof_active} ? 'on' : 'off') }
             @{ $index->{workers} }),
        (map { "lg$_->{worker}=$_->{lg_prof_sample}" }
             @{ $stats->{workers} }),
        'files=[' . join(',', @files) . ']';
}

sub access_lines {
    return split /\n/, $t->log_text('access.log');
}

# what a page wrote into its <div id="log">
sub page_log {
    my ($dom) = @_;
    my ($log) = $dom =~ m{<div id="log">(.*?)</div>}s;
    return $log // '';
}

sub write_page {
    my ($dir, $name, $html) = @_;
    mkdir "$prefix/$dir";
    open my $fh, '>', "$prefix/$dir/$name" or die $!;
    print $fh $html;
    close $fh;
}

$t->start;

my $before = state_of();
like($before, qr/^desired=off w0=off w1=off lg0=19 lg1=19 files=\[\]$/,
     "the state before: $before");

###############################################################################
# the headers, one by one

sub refused {
    my ($res, $what, $re) = @_;
    is($res->{status}, 403, "$what: 403");
    is($res->{json}{error}{code}, 'cross_origin', "$what: cross_origin");
    like($res->{json}{error}{text}, $re, "$what: the text names it")
        if $re;
}

my $xsite = { 'Sec-Fetch-Site' => 'cross-site' };
my $evil = { 'Origin' => 'http://evil.example' };

refused($t->get('/malloc/', undef, %$xsite),
        'GET / from another site', qr/Sec-Fetch-Site: cross-site/);
refused($t->get('/malloc/', undef, 'Sec-Fetch-Site' => 'same-site'),
        'GET / from the same site (another port)',
        qr/Sec-Fetch-Site: same-site/);
refused($t->get('/malloc/', undef, 'Sec-Fetch-Site' => 'whatever'),
        'an unknown Sec-Fetch-Site');
refused($t->post('/malloc/prof_active', 'true', %$evil),
        'POST prof_active with a foreign Origin',
        qr{Origin: http://evil\.example.*Host: 127\.0\.0\.1:$A});
refused($t->post('/malloc/prof_active', 'true', 'Origin' => 'null'),
        'POST prof_active with Origin null');
refused($t->post('/malloc/prof_active', 'true',
                 'Origin' => "http://127.0.0.1:$B"),
        'POST prof_active with Origin of another port');

# the right host and port over another scheme: a page served over https
# is of another origin than this location over plain http
refused($t->post('/malloc/prof_active', 'true',
                 'Origin' => "https://127.0.0.1:$A"),
        'POST prof_active with Origin https of the right host and port',
        qr{"Origin: https://127\.0\.0\.1:$A" on a request over http: });
refused($t->get('/malloc/', undef, 'Origin' => "https://127.0.0.1:$A"),
        'GET / with Origin https of the right host and port',
        qr{another scheme});
refused($t->post('/malloc/prof_active', 'true',
                 'Origin' => "https://127.0.0.1"),
        'POST prof_active with Origin https of the right host, no port');
refused($t->post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}',
                 %$xsite), 'POST prof_reset from another site');
refused($t->post('/malloc/prof_dump', '"csrf.heap"', %$xsite),
        'POST prof_dump from another site');
refused($t->post('/malloc/purge', '', %$xsite),
        'POST purge from another site');
refused($t->get('/malloc/pprof/heap.pb.gz', undef, %$xsite),
        'GET pprof/heap.pb.gz from another site');
refused($t->get('/malloc/stats?detail=full', undef, %$xsite),
        'GET stats?detail=full from another site');
refused($t->get('/malloc/no-such-endpoint', undef, %$xsite),
        'an unknown endpoint from another site');
refused($t->http('OPTIONS', '/malloc/prof_active', undef, %$xsite,
                 %$evil, 'Access-Control-Request-Method' => 'POST'),
        'a preflight from another site');

# before the body is read: a body over every limit changes nothing
refused($t->post('/malloc/prof_active', 'x' x 100000, %$xsite),
        'a large body from another site is refused, not read');

# before any work: a growth profile would hold the request for 30 s
my $start = time;
refused($t->get('/malloc/pprof/heap?seconds=30', undef, %$xsite),
        'a growth profile from another site');
ok(time - $start < 10, 'refused at once, not after the window');

# the same requests with Sec-Fetch-Site of the location's own origin, of
# the operator typing the address, or from a browser sending only Origin
is($t->get('/malloc/', undef, 'Sec-Fetch-Site' => 'same-origin')->{status},
   200, 'Sec-Fetch-Site: same-origin passes');
is($t->get('/malloc/', undef, 'Sec-Fetch-Site' => 'none')->{status},
   200, 'Sec-Fetch-Site: none (typed or bookmarked) passes');
is($t->post('/malloc/prof_active', 'false',
            'Origin' => "http://127.0.0.1:$A")->{status},
   200, 'an Origin equal to the Host passes');
is($t->get('/malloc/', undef, 'Origin' => "HTTP://127.0.0.1:$A")->{status},
   200, 'the scheme of the request, in capitals, passes');
is($t->post('/malloc/prof_active', 'false',
            'Origin' => "http://127.0.0.1:$A",
            'Sec-Fetch-Site' => 'same-origin')->{status},
   200, 'both headers of the own origin pass');

is(state_of(), $before, 'the refused requests changed nothing');

###############################################################################
# malloc_trusted_origin: the trusted origins read the answers

my $trusted = { 'Origin' => "http://127.0.0.1:$B",
                'Sec-Fetch-Site' => 'same-site' };

my $r = $t->get('/dash/', undef, %$trusted);
is($r->{status}, 200, 'a trusted origin reads');
is($r->{headers}{'access-control-allow-origin'}, "http://127.0.0.1:$B",
   'Access-Control-Allow-Origin names it');
is($r->{headers}{vary}, 'Origin', 'Vary: Origin');

$r = $t->get('/dash/', undef, 'Origin' => 'https://grafana.example.com',
             'Sec-Fetch-Site' => 'cross-site');
is($r->{status}, 200, 'the second directive adds an origin');

$r = $t->http('OPTIONS', '/dash/prof_active', undef, %$trusted,
              'Access-Control-Request-Method' => 'POST',
              'Access-Control-Request-Headers' => 'content-type');
is($r->{status}, 204, 'a preflight of a trusted origin: 204');
is($r->{headers}{'access-control-allow-methods'}, 'GET, HEAD, POST',
   'the methods of the endpoint');
is($r->{headers}{'access-control-allow-headers'}, 'Content-Type',
   'Content-Type allowed');

refused($t->get('/dash/', undef, %$xsite, %$evil),
        'another origin on the trusted location');
refused($t->get('/malloc/', undef, %$trusted),
        'a trusted origin of another location');
is($t->get('/malloc/')->{headers}{'access-control-allow-origin'}, undef,
   'no CORS header for clients that are not browsers');

###############################################################################
# clients that are not browsers work as they are

for my $cmd (
    "curl -s -X POST -d 'true' http://127.0.0.1:$A/malloc/prof_active",
    "curl -s -X POST -d '\"lighthouse.heap\"' "
        . "http://127.0.0.1:$A/malloc/prof_dump",
    "curl -s -X POST -d 'false' http://127.0.0.1:$A/malloc/prof_active")
{
    (my $run = $cmd) =~ s/^curl -s /curl -s -o \/dev\/null -w '%{http_code}' /;
    is(`$run`, '200', "as Lighthouse does: $cmd");
}

is(scalar(() = glob($t->dump_dir . '/lighthouse.*.heap')), 2,
   'the curl dump wrote a file per worker');
unlink glob($t->dump_dir . '/lighthouse.*.heap');

###############################################################################
# configuration

for my $bad ('example.com', 'https://dash.example.com/', 'ftp://x',
             'http://x:0', 'https://x/path', '*')
{
    my $c = MallocTest->new(
        server => "location /d/ { malloc_admin; "
                . "malloc_trusted_origin $bad; }");
    my ($rc, $out) = $c->test_conf;
    isnt($rc, 0, "malloc_trusted_origin $bad: refused");
    like($out, qr/invalid origin "\Q$bad\E": \S/, 'with a reason')
        or diag $out;
}

# an admin location that shares its server with locations serving other
# content is of their origin: a notice names the server and the location.
# At nginx -t it goes to nginx's start-up log: stderr in Debian's build,
# logs/error.log of the prefix in nginx.org's
sub conf_notices {
    my ($c) = @_;
    my ($rc, $out) = $c->test_conf;
    is($rc, 0, 'the configuration loads') or diag $out;
    return grep { /\[notice\].*shares its server/ }
        split /\n/, $out . $c->log_text;
}

{
    my $P = free_port();
    my @n = conf_notices(MallocTest->new(admin => undef, http => <<"EOF"));
    server {
        listen 127.0.0.1:$P;
        server_name shared.test;

        location /malloc/ {
            malloc_admin write=on;
        }

        location / {
            return 200;
        }
    }
EOF
    is(scalar @n, 1, 'a server of the admin location and location /: '
       . 'one notice');
    my $want = join '',
        'the admin location "/malloc/" shares its server ',
        qq{(server_name "shared.test", listen 127.0.0.1:$P) },
        'with location "/" at ';
    my $why = 'same origin.*a server of its own.* in \S+nginx\.conf:\d+$';
    like($n[0] // '',
         qr{\Q$want\E\S+:\d+, which serves other content: .*$why},
         'it names the server, both locations and why') or diag "@n";

    # docs/security.md shows the notice as nginx logs it, names aside
    open my $fh, '<', "$MallocTest::ROOT/docs/security.md" or die $!;
    my ($doc) = grep { /\[notice\].*shares its server/ } <$fh>;
    my @both = map {
        (my $s = $_ // '') =~ s/^.*?\[notice\] \d+#\d+: //;
        $s =~ s/"[^"]*"/"N"/g;
        $s =~ s/listen \S+\)/listen A)/;
        $s =~ s{/\S+:\d+}{F}g;
        $s =~ s/\s+$//;
        $s;
    } $doc, $n[0];
    ok($doc, 'docs/security.md shows the notice');
    is($both[0], $both[1], 'the notice of security.md, word for word');

    # MallocTest's default server has /t/ and / beside /malloc/
    @n = conf_notices(MallocTest->new);
    is(scalar @n, 1, 'the default test server: one notice, for its /t/');
    like($n[0] // '', qr{"/malloc/" shares .* with location "/t/"},
         'the first other location is named');

    # admin locations alone in their servers, by name on the port of the
    # application or on a port of their own, with "if" and limit_except,
    # which belong to their location
    my $Q = free_port();
    @n = conf_notices(MallocTest->new(admin => undef, http => <<"EOF"));
    server {
        listen 127.0.0.1:%%PORT%%;
        server_name malloc.localhost;

        location /malloc/ {
            malloc_admin write=on;
            limit_except GET POST {
                deny all;
            }
        }

        location = /malloc-state {
            malloc_admin;
        }
    }

    server {
        listen 127.0.0.1:$Q;

        location /malloc/ {
            if (\$http_x_deny) {
                return 403;
            }
            malloc_admin;
        }
    }
EOF
    is(scalar @n, 0, 'admin locations with servers of their own: no notice')
        or diag "@n";

    # nested, regex or named: each serves the origin all the same
    for my $other ('location /malloc/x/ { }',
                   'location ~ \.html$ { }',
                   'location @fallback { return 200; }')
    {
        (my $loc = $other) =~ s/ \{.*//;
        my $nested = $other =~ m{/malloc/x/} ? $other : '';
        my $beside = $nested ? '' : $other;
        @n = conf_notices(MallocTest->new(admin => undef, http => <<"EOF"));
    server {
        listen 127.0.0.1:$Q;
        location /malloc/ { malloc_admin; $nested }
        $beside
    }
EOF
        is(scalar @n, 1, "$loc in the admin server: one notice")
            or diag "@n";
    }
}

# docs/directives.md: its example loads, and its error is nginx's
{
    open my $fh, '<', "$MallocTest::ROOT/docs/directives.md" or die $!;
    my $text = join '', <$fh>;
    my ($section) = $text =~ /^## malloc_trusted_origin\n(.*?)^## /ms;
    my ($example) = $section =~ /^Example:\n\n((?: {4}.*\n|\n)+)/m;
    my ($emerg) = $section
        =~ /^ {4}nginx: \[emerg\] (invalid origin .*) in \S+:\d+$/m;
    ok($example && $emerg, 'directives.md has the example and the error');

    (my $loc = $example // '') =~ s/^ {4}//mg;
    $loc =~ s{location /malloc/}{location /docs/};
    my ($rc, $out) = MallocTest->new(server => $loc)->test_conf;
    is($rc, 0, 'the example of directives.md loads') or diag $out;

    my ($bad) = ($emerg // '') =~ /^invalid origin "([^"]+)"/;
    ($rc, $out) = MallocTest->new(
        server => "location /d/ { malloc_admin; "
                . "malloc_trusted_origin $bad; }")->test_conf;
    like($out, qr/\Q$emerg\E/, 'the error of directives.md, word for word')
        or diag $out;
}

###############################################################################
# a real browser

my ($chromium, $why) = chromium();

SKIP: {
skip "no browser: $why", 1 unless $chromium;

# an attack page on another port, as any web site the operator opens
write_page('evil', 'attack.html', <<"EOF");
<!doctype html>
<html><body>
<div id="log"></div>
<iframe name="f1"></iframe><iframe name="f2"></iframe>
<form id="plain" method="post" enctype="text/plain" target="f1"
      action="http://127.0.0.1:$A/malloc/prof_dump">
<input name='"csrf.heap' value='"'></form>
<form id="urlenc" method="post" target="f2"
      action="http://127.0.0.1:$A/malloc/prof_active">
<input name="true" value=""></form>
<img src="http://127.0.0.1:$A/malloc/pprof/heap.pb.gz?via=img">
<img src="http://127.0.0.1:$A/malloc/heap?seconds=1&via=img">
<script>
const A = 'http://127.0.0.1:$A/malloc/';
const log = (s) => {
    const p = document.createElement('p');
    p.textContent = s;
    document.getElementById('log').appendChild(p);
};
document.getElementById('plain').submit();
document.getElementById('urlenc').submit();
const tries = [
    ['prof_active', {method: 'POST', mode: 'no-cors', body: 'true'}],
    ['prof_reset', {method: 'POST', mode: 'no-cors',
                    body: '{"lg_sample": 0, "force": true}'}],
    ['prof_dump', {method: 'POST', mode: 'no-cors', body: '"csrf.heap"'}],
    ['pprof/heap?seconds=2', {mode: 'no-cors'}],
    ['stats?detail=full', {mode: 'no-cors'}],
];
Promise.allSettled(tries.map(([p, o]) => fetch(A + p, o)))
    .then(() => fetch(A, {mode: 'cors'}))
    .then((r) => r.text()).then((s) => log('READ ' + s),
                                (e) => log('unreadable: ' + e))
    .finally(() => log('done'));
</script>
</body></html>
EOF

my $dom = page_log(dom("http://127.0.0.1:$B/attack.html", budget => 8000));
like($dom, qr/done/, 'the attack page ran') or diag $dom;
like($dom, qr/unreadable: TypeError/, 'it could not read the answer');
unlike($dom, qr/READ/, 'it read nothing');

# every request reached nginx and was refused there
my @want = (
    'POST /malloc/prof_dump', 'POST /malloc/prof_dump',
    'POST /malloc/prof_active', 'POST /malloc/prof_active',
    'POST /malloc/prof_reset', 'GET /malloc/pprof/heap.pb.gz?via=img',
    'GET /malloc/heap?seconds=1&via=img', 'GET /malloc/pprof/heap?seconds=2',
    'GET /malloc/stats?detail=full', 'GET /malloc/ ');

my %sent;
poll_until(10, sub {
    %sent = ();
    for (access_lines()) {
        next unless m{"Mozilla[^"]*Chrome} && m{"(\S+ \S+) HTTP/1\.1" (\d+)};
        push @{ $sent{$1} }, $2;
    }
    my $n = 0;
    $n += @$_ for values %sent;
    $n >= @want;
});

my %count;
$count{$_}++ for @want;

for my $req (sort keys %count) {
    (my $key = $req) =~ s/ $//;
    my @st = @{ $sent{$key} // [] };
    is(scalar @st, $count{$req}, "the browser sent $req");
    is_deeply([grep { $_ ne '403' } @st], [], "$req: refused with 403");
}

is(state_of(), $before, 'after the attack page: nothing changed, '
   . 'nothing written');

# a page of the admin location's own origin may drive it
write_page('page', 'same.html', <<'EOF');
<!doctype html>
<html><body><div id="log"></div>
<script>
fetch('/malloc/prof_active', {method: 'POST', body: 'true'})
    .then((r) => r.json().then((j) => {
        document.getElementById('log').textContent =
            'same-origin ' + r.status + ' prof_active ' + j.prof_active;
    }), (e) => {
        document.getElementById('log').textContent = 'failed ' + e;
    });
</script>
</body></html>
EOF

$dom = page_log(dom("http://127.0.0.1:$A/page/same.html"));
like($dom, qr/same-origin 200 prof_active true/,
     'a page of the same origin turns profiling on') or diag $dom;
like(state_of(), qr/^desired=on w0=on w1=on /, 'in every worker');
is($t->post('/malloc/prof_active', 'false')->{status}, 200, 'and off');

# a trusted dashboard reads answers and sends JSON (with a preflight)
write_page('evil', 'dash.html', <<"EOF");
<!doctype html>
<html><body><div id="log"></div>
<script>
const log = (s) => {
    const p = document.createElement('p');
    p.textContent = s;
    document.getElementById('log').appendChild(p);
};
fetch('http://127.0.0.1:$A/dash/')
    .then((r) => r.json()).then((j) => log('read ' + j.module))
    .then(() => fetch('http://127.0.0.1:$A/dash/prof_active', {
        method: 'POST', headers: {'Content-Type': 'application/json'},
        body: '{"active": false}'}))
    .then((r) => r.json().then((j) => log('posted ' + r.status + ' '
                                          + j.prof_active)))
    .then(() => fetch('http://127.0.0.1:$A/malloc/'))
    .then(() => log('untrusted location read'),
          (e) => log('untrusted location: ' + e))
    .finally(() => log('done'));
</script>
</body></html>
EOF

$dom = page_log(dom("http://127.0.0.1:$B/dash.html"));
like($dom, qr/read ngx_http_malloc_module/,
     'the trusted dashboard reads the state') or diag $dom;
like($dom, qr/posted 200 false/, 'and posts JSON after a preflight');
like($dom, qr/untrusted location: TypeError/,
     'but not through a location that does not trust it');
like($t->log_text('access.log'),
     qr{"OPTIONS /dash/prof_active HTTP/1\.1" 204},
     'the browser asked first');

is(state_of(), $before, 'after the pages: as before');
}

###############################################################################
# DNS rebinding: a name of the attacker's resolves to 127.0.0.1, so the
# browser takes the admin location for the page's own origin; the
# configuration of docs/security.md refuses hosts it does not know

my %doc = MallocTest::doc_blocks("$MallocTest::ROOT/docs/security.md");
ok($doc{names}, 'docs/security.md has the names example');
(my $names = $doc{names} // '') =~ s/127\.0\.0\.1:8080/127.0.0.1:%%PORT%%/g;

my $n = MallocTest->new(workers => 1, conf => <<"EOF");
%%MODULES%%
worker_processes 1;
error_log %%PREFIX%%/logs/error.log info;
pid %%PREFIX%%/logs/nginx.pid;

events {
    worker_connections 64;
}

http {
    access_log %%PREFIX%%/logs/access.log;
    client_body_temp_path %%PREFIX%%/body;
    proxy_temp_path %%PREFIX%%/proxy;
    fastcgi_temp_path %%PREFIX%%/fastcgi;
    uwsgi_temp_path %%PREFIX%%/uwsgi;
    scgi_temp_path %%PREFIX%%/scgi;
    malloc_dump_dir %%PREFIX%%/dumps;

$names
}
EOF
$n->start;

my $N = $n->port;

# HTTP::Tiny will not send another Host: curl does
sub status_for_host {
    my ($host) = @_;
    my @h = defined $host ? ('-H', "Host: $host") : ();
    open my $fh, '-|', 'curl', '-s', '-o', '/dev/null', '-w',
        '%{http_code}', @h, "http://127.0.0.1:$N/malloc/" or die $!;
    return scalar <$fh>;
}

is(status_for_host("rebind.example:$N"), 421,
   'foreign Host: 421 from the default server');
is(status_for_host('rebind.example'), 421,
   'foreign Host without a port: 421');
is(status_for_host(undef), 200, 'the operator\'s names work: 127.0.0.1');
is(status_for_host("localhost:$N"), 200, 'and localhost');

SKIP: {
skip "no browser: $why", 3 unless $chromium;

my @rules = ('--host-resolver-rules=MAP rebind.test 127.0.0.1');

my $page = dom("http://rebind.test:$N/malloc/", args => \@rules);
unlike($page, qr/ngx_http_malloc_module/,
       'Chromium with rebind.test resolving to 127.0.0.1 gets 421');
like($n->log_text('access.log'), qr{"GET /malloc/ HTTP/1\.1" 421},
     'the browser reached the default server');

# without the names, the same browser reads the admin location
$page = dom("http://rebind.test:$A/malloc/", args => \@rules);
like($page, qr/ngx_http_malloc_module/,
     'the threat is real: without them the rebound page reads the state');
}

$n->no_alerts;
$n->stop;

###############################################################################

# refusals are logged at info only: an attempt is no operator's action
my @refusals = $t->log_lines(qr/refused "(Sec-Fetch-Site|Origin):/);
ok(@refusals, 'refusals are logged');
is_deeply([grep { !/\[info\]/ } @refusals], [], 'at info');

$t->no_alerts;
$t->stop;

done_testing;
