#!/usr/bin/perl

# The heap viewer (GET <location>/ui): its files come from the module,
# under a Content-Security-Policy that allows nothing but the location;
# the committed ngx_http_malloc_assets.c is what ui/embed.pl makes of
# ui/; node's tests of the page pass; and Debian's chromium, headless,
# shows a real nginx's heap: the function that holds known memory with
# its share, the search, a snapshot compared with now, and start/stop
# buttons only where the location has write=on.
#
# TEST_SCREENSHOT=$PWD/docs/viewer.png saves the comparison as
# docs/profiling.md shows it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Temp qw(tempdir);
use Test::More;
use MallocTest qw(poll_until);
use MallocBrowser qw(chromium dom);

my $root = "$FindBin::Bin/..";

# the embedded files are those of ui/

my $tmp = tempdir('malloc-ui-XXXXXX', TMPDIR => 1, CLEANUP => 1);
system('perl', "$root/ui/embed.pl", "$tmp/assets.c") == 0
    or BAIL_OUT('ui/embed.pl failed');
is(slurp("$tmp/assets.c"),
   slurp("$root/ngx_http_malloc_module/ngx_http_malloc_assets.c"),
   'ngx_http_malloc_assets.c is current: make rebuilds it from ui/');

# node's tests of the pure parts and of the page against a stand-in

my $node = `sh -c 'command -v node' 2>/dev/null`;
chomp $node;

SKIP: {
    skip 'node not found: install Debian\'s nodejs package (make deps '
         . 'does)', 1 unless $node;
    # the files, not the directory: node 22 takes patterns, not folders
    my $out = `cd $root && $node --test t/ui/*.test.js 2>&1`;
    is($?, 0, 'node --test t/ui/*.test.js') or diag $out;
}

my $t = MallocTest->new(workers => 2,
                        http => 'malloc_snapshot interval=1s keep=5;')
    ->start;

# the files and their headers

my $r = $t->get('/malloc/ui');
is($r->{status}, 200, 'GET ui');
like($r->{headers}{'content-type'}, qr{^text/html}, 'ui: HTML');
like($r->{content}, qr{<script src="ui/app\.js"}, 'ui: its script, relative');
my $csp = $r->{headers}{'content-security-policy'} // '';
like($csp, qr/default-src 'none'/, 'CSP: nothing by default');
like($csp, qr/script-src 'self';/, 'CSP: scripts of the location only');
like($csp, qr/connect-src 'self';/, 'CSP: requests to it only');
like($csp, qr/frame-ancestors 'none'/, 'CSP: never in a frame');
is($r->{headers}{'x-content-type-options'}, 'nosniff', 'nosniff');

for my $f (qw(app.js flame.js viewer.css)) {
    $r = $t->get("/malloc/ui/$f");
    is($r->{status}, 200, "ui/$f");
    is($r->{headers}{'content-security-policy'}, $csp, "ui/$f: the CSP");
    is(length $r->{content}, -s "$root/ui/$f", "ui/$f: the file");
}

$r = $t->get('/malloc/ui/embed.pl');
is($r->{status}, 404, 'only the page\'s files');
is($r->{json}{error}{code}, 'not_found', 'not_found');
is($t->get('/malloc/ui/../stats')->{status}, 200,
   'dot segments are nginx\'s (merged before the location)');
is($t->http('HEAD', '/malloc/ui')->{content} // '', '', 'HEAD: no body');
is($t->post('/malloc/ui', '')->{status}, 405, 'POST ui: 405');

# a known heap: 48 MiB held by one function, sampled every 512 KiB

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
is($t->get('/t/alloc?mb=48&block=8')->{status}, 200, '48 MiB held');

my ($chromium, $why) = chromium();

SKIP: {
    skip $why, 16 unless $chromium;

    my $url = $t->url('/malloc/ui');
    my $dom = dom($url, budget => 15000);
    like($dom, qr/<body[^>]*data-state="ready"/, 'browser: the page drew');

    my %frame = frames($dom);
    ok($frame{ngx_http_malloc_test_hold},
       'browser: the holding function is a frame, as text');
    like($frame{ngx_http_malloc_test_hold} // '', qr/4[789]\.\d MiB, 100(\.0)?%/,
         'browser: with its bytes and share');
    like($dom, qr/<button[^>]*id="start"/, 'browser: write=on: start');
    like($dom, qr/<button[^>]*id="stop"/, 'browser: write=on: stop');
    unlike($dom, qr/id="error"[^>]*>\s*<p/, 'browser: no error shown');

    # the search, opened through the fragment as a link would

    $dom = dom("$url#search=test_hold", budget => 15000);
    my @match = $dom =~ /<div class="frame[^"]*\bmatch\b[^"]*"[^>]*>([^<]*)</g;
    is("@match", 'ngx_http_malloc_test_hold', 'browser: search highlights it');

    # a snapshot compared with now: what was held since grew

    my $snap = poll_until(10, sub {
        my $s = $t->get('/malloc/snapshots')->{json}{snapshots};
        @$s ? $s->[0]{name} : undef;
    });
    ok($snap, "browser: a snapshot was taken ($snap)");
    $snap =~ s/^(snapshot-\w{16}).*/$1/;
    is($t->get('/t/alloc?mb=16&block=8')->{status}, 200, '16 MiB more');

    $dom = dom("$url#base=$snap", budget => 20000);
    %frame = frames($dom, 'grown');
    like($frame{ngx_http_malloc_test_hold} // '', qr/\+1[5-7]\.\d MiB/,
         'browser: compared with the snapshot, the holder grew by 16 MiB');

    if ($ENV{TEST_SCREENSHOT}) {
        system($chromium, qw(--headless --no-sandbox --disable-gpu
                             --hide-scrollbars --virtual-time-budget=15000),
               '--window-size=1200,900',
               "--screenshot=$ENV{TEST_SCREENSHOT}", "$url#base=$snap");
    }

    # each process's RSS as a bar of its parts; memory mapped outside
    # malloc said in words under its worker

    # (the allocator's 64 MiB above may be that worker's: 128 MiB)
    is($t->get('/t/alloc?map=128')->{status}, 200, '128 MiB mapped');
    poll_until(5, sub {
        grep { (($_->{outside_malloc} // {})->{text} // '')
                   =~ /other_anonymous/ }
            @{$t->get('/malloc/stats')->{json}{workers}};
    });
    $dom = dom($url, budget => 15000);
    is(scalar(() = $dom =~ /<div class="rss-bar">/g), 3,
       'browser: an RSS bar per worker and the master\'s');
    like($dom, qr{<tr\ class="outside"><td\ colspan="8">RSS\ grew\ by\ [^<]*
                  the\ growth\ is\ outside\ malloc[^<]*other_anonymous}x,
         'browser: the sentence under the worker that mapped');

    # read-only: no buttons, and nothing the page can change

    my $ro = MallocTest->new(workers => 1, admin => undef,
        server => 'location /ro/ { malloc_admin; }')->start;
    $dom = dom($ro->url('/ro/ui'), budget => 15000);
    like($dom, qr/data-state="(ready|error)"/, 'read-only: the page drew');
    unlike($dom, qr/id="(start|stop)"/, 'read-only: no start or stop button');
    $ro->no_alerts;
    $ro->stop;

    # no request of the page was refused as cross-origin

    unlike($t->log_text, qr/malloc admin refused/,
           'browser: the page\'s requests are same-origin');
}

$t->no_alerts;
$t->stop;

# the master's heap after 12 reloads of a module that rebuilds 16 MiB of
# small blocks at each, compared in the page with generation 3: the
# churn is drawn, and painted as nothing, for it is within the noise

SKIP: {
    skip $why, 5 unless $chromium;

    my $m = MallocTest->new(workers => 1,
                            http => 'malloc_test_churn 16m 128;')->start;
    $m->post('/malloc/prof_active', 'true');
    $m->reload for 1 .. 12;

    my %gen = map { $_->{generation} => $_->{snapshot} }
                  @{$m->get('/malloc/')->{json}{generations}};
    ok($gen{3} && $gen{13}, "reloads: generations 3 and 13 ($gen{13})");

    my $dom = dom($m->url("/malloc/ui#snapshot=$gen{13}&base=$gen{3}"),
                  budget => 20000);
    my %all = frames($dom);
    ok(exists $all{ngx_http_malloc_test_churn},
       'reloads: the churn is drawn');
    is(join(' ', sort keys %{{ frames($dom, 'grown') }}), '',
       'reloads: nothing painted as grown');
    # nothing grew, the summary says; the 1 MiB array of the churn's
    # blocks, sampled in one snapshot only (one time in seven), is noise
    like($dom, qr/(no stack changed|; 0 B grew and [^;]* shrank) beyond (?#
                 )the sampling noise.*? at 99% confidence, on [\d,]+ (?#
                 )samples now/,
         'reloads: the summary says nothing grew beyond the noise');
    like($dom, qr/the master's allocated bytes from generation 3 to 13: (?#
                 )[-+][\d.]+ [KM]iB \(exact\)/,
         'reloads: and the exact change of the master beside it');

    $m->no_alerts;
    $m->stop;
}

done_testing;


# {function => title} of the frames (with a class, those that have it)
sub frames {
    my ($dom, $class) = @_;
    my %f;
    while ($dom =~ /<div class="frame([^"]*)"([^>]*)>([^<]*)</g) {
        my ($classes, $attrs, $name) = ($1, $2, $3);
        next if $class && $classes !~ /\b\Q$class\E\b/;
        my ($title) = $attrs =~ /title="([^"]*)"/;
        $f{$name} //= $title // '';
    }
    return %f;
}

sub slurp {
    my ($path) = @_;
    open my $fh, '<', $path or return '';
    local $/;
    return <$fh>;
}
