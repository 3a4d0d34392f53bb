#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# The heap viewer (GET <location>/ui): its files come from the module,
# under a Content-Security-Policy that allows nothing but the location;
# the committed ngx_http_malloc_assets.c is what ui/embed.pl makes of
# ui/; node's tests of the page pass; and Debian's chromium, headless,
# shows a real nginx's heap: the function that holds known memory with
# its share, the search, a snapshot compared with now, start/stop
# buttons only where the location has write=on, and the traffic view.
#
# TEST_SCREENSHOT=$PWD/docs/viewer.png saves the comparison as
# docs/profiling.md shows it (the holder hovered).

use strict;
use warnings;
use feature 'state';

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Temp qw(tempdir);
use JSON::PP qw(decode_json);
use Test::More;
use MallocTest qw(poll_until);
use MallocBrowser qw(chromium dom);

my $root = "$FindBin::Bin/..";

# the embedded files are those of ui/

my $tmp = tempdir('malloc-ui-XXXXXX', TMPDIR => 1, CLEANUP => 1);
system('perl', "$root/ui/embed.pl", "$tmp/assets.c") == 0
    or BAIL_OUT('ui/embed.pl failed');
is(slurp("$tmp/assets.c"),
   slurp("$root/core/ngx_http_malloc_assets.c"),
   'ngx_http_malloc_assets.c is current: make rebuilds it from ui/');

# node's tests of the pure parts and of the page against a stand-in

my $node = `sh -c 'command -v node' 2>/dev/null`;
chomp $node;

SKIP: {
    skip 'node not found: install Debian\'s nodejs package (make deps '
         . 'does)', 1 unless $node;
    # the files, not the directory: node 22 takes patterns, not folders
    my $out = `cd $root && $node --test t/ui/*.test.js 2>&1`;
    # on a failure, its reports again at the end: the output is long
    my @failed = $out =~ /^(\s*not ok .*?^\s*\.\.\.)$/msg;
    is($?, 0, 'node --test t/ui/*.test.js')
        or diag join("\n", $out, 'the failures:', @failed);
}

my $t = MallocTest->new(workers => 2,
                        http => 'malloc_snapshot interval=1s keep=30;')
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

for my $f (qw(app.js flame.js pprof.js traffic.js viewer.css)) {
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
# off again, so that what the page reads and caches while it runs (and
# the snapshots every second) is never sampled: one stack, as asserted
is($t->post('/malloc/prof_active', 'false')->{status}, 200, 'profiling off');

my ($chromium, $why) = chromium();

SKIP: {
    skip $why, 62 unless $chromium;

    my $url = $t->url('/malloc/ui');
    my ($dom, $drawn) = page($url);
    like($dom, qr/<body[^>]*data-state="ready"/, 'browser: the page drew');

    my %frame = frames($drawn);
    ok($frame{ngx_http_malloc_test_hold},
       'browser: the holding function is a frame, as text');
    # sampled: another stack caught once is half a MiB, 1% of the heap
    like($frame{ngx_http_malloc_test_hold} // '',
         qr/4[789]\.\d MiB, (100(\.0)?|9[89]\.\d)%/,
         'browser: with its bytes and share');
    like($dom, qr/<button[^>]*id="start"/, 'browser: write=on: start');
    like($dom, qr/<button[^>]*id="stop"/, 'browser: write=on: stop');
    unlike($dom, qr/id="error"[^>]*>\s*<p/, 'browser: no error shown');

    # the traffic view, opened through the fragment: the sentence, and
    # the location of GET traffic itself, in flight while it is walked

    $dom = dom("$url#view=traffic", budget => 15000);
    like($dom, qr/<body[^>]*data-traffic="ready"/, 'traffic: the page drew');
    like($dom, qr{<p id="traffic-text">in-flight traffic holds [^<]+ (?#
                 )allocated \(\d+\.\d%\)[:;] [^<]+</p>},
         'traffic: the sentence, prominent');
    like($dom, qr{<table id="traffic-locations">.*?<tbody>.*?(?#
                 )<td class="name">/malloc/</td>.*?</tbody>}s,
         'traffic: by location, its own request in flight');

    # the search, opened through the fragment as a link would

    (undef, $drawn) = page("$url#search=test_hold");
    my @match = sort keys %{{ frames($drawn, 'match') }};
    is("@match", 'ngx_http_malloc_test_hold', 'browser: search highlights it');

    # a user's paths, in real time through the DevTools protocol
    # (t/ui/cdp.js): hover, the allocators first, the modules, keys and
    # history, focus, ignore and hide

    my $seen = drive($url, <<'JS');
async () => {
    const names = (y) => frames().filter((f) => f.y === y)
        .map((f) => f.name);
    const zoomed = () => (frames().find((f) => has(f, 'focus')) || {}).name;
    const key = (k) => $('#flame').dispatchEvent(
        new KeyboardEvent('keydown', { key: k, bubbles: true }));
    const back = () => new Promise((ok) => {
        addEventListener('popstate', () => setTimeout(ok, 50),
                         { once: true });
        history.back();
    });
    // the page's filter runs on a timer (a burst of typing, one redraw):
    // its note, marked stale first, says it ran, the tables that it drew
    const filter = async (id, value) => {
        const note = $(id + '-note');
        note.textContent = '\u0000stale';
        $(id).value = value;
        $(id).dispatchEvent(new Event('input'));
        for (const end = Date.now() + 5000; Date.now() < end;) {
            if (note.textContent !== '\u0000stale'
                && document.body.dataset.tables === 'ready') {
                break;
            }
            await new Promise((ok) => setTimeout(ok, 20));
        }
        return note.textContent;
    };
    const seen = {};

    hover(frame('ngx_http_malloc_test_hold'));
    seen.hover = [$('#d-name').textContent, $('#d-total').textContent,
                  $('#d-self').textContent, $('#d-file').textContent,
                  $('#d-file').title, $('#d-raw').textContent];

    seen.modules = [...$('#modules').tBodies[0].rows].map((tr) =>
        [...tr.cells].map((td) => td.textContent.trim()));
    seen.rule = $('#modules-rule').textContent;

    $('#view').value = 'allocators';
    $('#view').dispatchEvent(new Event('change'));
    seen.allocators = { top: names(18), hash: location.hash };
    await back();
    seen.allocators.back = [$('#view').value, names(18)];

    // down the chain to the third frame, Enter, then Escape one up
    $('#flame').focus();
    key('ArrowDown');
    key('ArrowDown');
    key('ArrowDown');
    const third = $('#d-name').textContent;
    key('Enter');
    seen.keys = { third, zoomed: zoomed(), hash: location.hash,
                  summary: $('#summary').textContent };
    key('Escape');
    seen.keys.escaped = zoomed();
    await back();
    seen.keys.back = zoomed();
    $('#reset').click();

    seen.focus = await filter('#focus', 'test_hold$');
    seen.focused = frames().length;
    seen.bad = await filter('#focus', 'test_(');
    seen.badFrames = frames().length;
    await filter('#focus', '');
    seen.ignore = await filter('#ignore', 'test_hold');
    seen.ignored = frames().map((f) => f.name);
    await filter('#ignore', '');
    seen.hide = await filter('#hide', 'test_hold');
    hover(frame('ngx_http_malloc_test_handler'));
    seen.hidden = [frame('ngx_http_malloc_test_hold') === undefined,
                   $('#d-self').textContent];
    return seen;
}
JS

    is($seen->{failed}, undef, 'user: the page drove');
    my ($name, $total, $self, $file, $path, $raw) = @{ $seen->{hover} };
    is($name, 'ngx_http_malloc_test_hold', 'hover: the panel names it');
    like($total, qr/^4[789]\.\d MiB, \d+ objects$/, 'hover: its bytes');
    like($self, qr/^4[789]\.\d MiB/, 'hover: its own');
    is($file, 'ngx_http_malloc_test_module.so (module)', 'hover: its file');
    like($path, qr{/ngx_http_malloc_test_module\.so$}, 'hover: the path');
    is($raw, 'ngx_http_malloc_test_hold', 'hover: the symbol to copy');

    my ($mod) = @{ $seen->{modules} // [] };
    is($mod->[0], 'ngx_http_malloc_test_module.so',
       'modules: the test module holds the bytes');
    like("$mod->[1] $mod->[2]", qr/^4[789]\.\d MiB 100\.0%$/,
         'modules: all of them');
    like($seen->{rule}, qr/innermost frame in an nginx module's file/,
         'modules: the rule said');

    is($seen->{allocators}{top}[0], 'ngx_http_malloc_test_hold',
       'allocators first: the allocating function on the top row');
    is($seen->{allocators}{hash}, '#view=allocators', 'allocators: the URL');
    is($seen->{allocators}{back}[0], 'callers', 'back: the callers again');

    my $k = $seen->{keys};
    is($k->{zoomed}, $k->{third}, 'keys: Enter zooms into the selection');
    like($k->{hash}, qr/^#(zoom=[^&]+&)+zoom=\Q$k->{third}\E$/,
         'keys: the zoom in the URL');
    like($k->{summary}, qr/^\Q$k->{third}\E: 4[789]\.\d MiB/,
         'keys: the summary follows the zoom');
    isnt($k->{escaped}, $k->{third}, 'keys: Escape zooms one step up');
    ok(!defined $k->{back}, 'history.back() leaves the zoom at once');

    like($seen->{focus}, qr/^focus keeps 1 of 1 stacks?, 4[789]\.\d MiB of /,
         'focus: what it keeps');
    is($seen->{bad}, 'not a regular expression: Unterminated group',
       'focus: a bad one said');
    is($seen->{badFrames}, $seen->{focused}, 'focus: and the graph kept');
    like($seen->{ignore}, qr/^ignore keeps 0 of 1 stacks?, 0 B of /,
         'ignore: what it keeps');
    is("@{ $seen->{ignored} }", 'all', 'ignore: nothing left');
    is($seen->{hide}, 'hide takes 1 function out of 1 stack',
       'hide: what it takes');
    ok($seen->{hidden}[0], 'hide: the frame is gone');
    like($seen->{hidden}[1], qr/^4[789]\.\d MiB/,
         'hide: its caller holds the bytes');

    # a snapshot compared with now: what was held since grew (snapshots
    # are taken while profiling is on)
    is($t->post('/malloc/prof_active', 'true')->{status}, 200,
       'profiling on again');

    my $snap = poll_until(10, sub {
        my $s = $t->get('/malloc/snapshots')->{json}{snapshots};
        @$s ? $s->[0]{name} : undef;
    });
    ok($snap, "browser: a snapshot was taken ($snap)");
    $snap =~ s/^(snapshot-\w{16}).*/$1/;
    is($t->get('/t/alloc?mb=16&block=8')->{status}, 200, '16 MiB more');

    (my $compared, $drawn) = page("$url#base=$snap");
    %frame = frames($drawn, 'grown');
    like($frame{ngx_http_malloc_test_hold} // '', qr/\+1[5-7]\.\d MiB/,
         'browser: compared with the snapshot, the holder grew by 16 MiB');
    like($compared, qr/with \d+ samples now and \d+ in the base, a change of small blocks under [\d.]+ \w+ cannot be told from noise/,
         'browser: the comparison states its detection limit');
    like($compared, qr{<td\ class="name">ngx_http_malloc_test_hold</td>
                       (?:<td[^>]*>[^<]*</td>)*?
                       <td\ class="num\ interval\ grown">\+1[5-7]\.\d\ MiB,
                       \ 99%:\ [\d.]+\ to\ [\d.]+\ MiB</td>}x,
         'browser: the holder\'s growth with its 99% interval, in the table');

    # Save page: the live heap as one file, opened from file:// with no
    # server: the same graph, and no request but the file's own (the
    # live heap: the snapshots of every second are kept for 30 s only,
    # and t/ui/save.test.js saves a comparison)
    my $saves = tempdir('malloc-save-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $saving = do {
        local $ENV{CDP_DOWNLOADS} = $saves;
        drive($url, <<'JS');
async () => {
    $('#save').click();
    for (const end = Date.now() + 20000;
         !/^saved /.test($('#status').textContent);) {
        if (Date.now() > end) {
            return { status: $('#status').textContent,
                     error: $('#error').textContent };
        }
        await new Promise((ok) => setTimeout(ok, 20));
    }
    return { status: $('#status').textContent };
}
JS
    };
    like(join(' ', grep { defined } @$saving{qw(status failed error)}),
         qr/^saved nginx-heap-\d{8}T\d{6}Z\.html, [\d.]+ \w+$/,
         'save: one file, its scripts and style fetched from the location');
    my ($saved) = glob "$saves/*.html";
    my $opened = do {
        local $ENV{CDP_REQUESTS} = "$saves/requests";
        drive('file://' . ($saved // 'none'), <<'JS');
async () => ({ holder: (frame('ngx_http_malloc_test_hold') || {}).title,
               summary: $('#summary').textContent,
               errors: $('#error').textContent })
JS
    };
    # 64 MiB held, sampled
    like($opened->{holder} // $opened->{failed},
         qr/^ngx_http_malloc_test_hold\n[5-7]\d\.\d MiB/,
         'saved: the holder, drawn from the file with its bytes');
    like($opened->{summary} // '', qr/^[5-7]\d\.\d MiB live in \d+ objects/,
         'saved: the summary');
    is(slurp("$saves/requests"), 'file://' . ($saved // 'none'),
       'saved: no request but the file\'s own');

    if ($ENV{TEST_SCREENSHOT}) {
        # the comparison, the holder hovered: its panel filled
        local $ENV{CDP_SCREENSHOT} = $ENV{TEST_SCREENSHOT};
        my $shot = drive("$url#base=$snap", <<'JS', '1200x900');
async () => {
    hover(frame('ngx_http_malloc_test_hold'));
    return true;
}
JS
        diag "screenshot: $shot->{failed}"
            if ref $shot eq 'HASH' && $shot->{failed};
    }

    # each process's RSS as a bar of its parts; memory mapped outside
    # malloc said in words under its worker

    # (the allocator's 64 MiB above may be that worker's: 128 MiB)
    is($t->get('/t/alloc?map=128')->{status}, 200, '128 MiB mapped');
    # the figures are published once a second: on a loaded machine the
    # page may read them a publish early, and is loaded again
    my $outside = qr{<tr\ class="outside"><td\ colspan="8">RSS\ grew\ by
                     \ [^<]*the\ growth\ is\ outside\ malloc[^<]*
                     other_anonymous}x;
    ok(poll_until(20, sub {
        grep { (($_->{outside_malloc} // {})->{text} // '')
                   =~ /other_anonymous/ }
            @{$t->get('/malloc/stats')->{json}{workers}};
    }), 'stats: the growth outside malloc said');
    for (1 .. 3) {
        $dom = dom($url, budget => 15000);
        last if $dom =~ $outside;
    }
    is(scalar(() = $dom =~ /<div class="rss-bar">/g), 3,
       'browser: an RSS bar per worker and the master\'s');
    like($dom, $outside, 'browser: the sentence under the worker that mapped');

    # start with a duration: 10 min, the server's time left counted down

    $seen = drive($url, <<'JS');
async () => {
    const $ = (s) => document.querySelector(s);
    const until = async (test) => {
        for (const end = Date.now() + 10000; !test();) {
            if (Date.now() > end) {
                return false;
            }
            await new Promise((ok) => setTimeout(ok, 50));
        }
        return true;
    };
    const left = () => Number($('#sampling').dataset.left);
    const seen = { chosen: $('#duration').selectedOptions[0].textContent };

    $('#start').click();
    await until(() => left() > 0);
    seen.first = [$('#sampling').textContent, left()];
    await until(() => left() <= seen.first[1] - 2);
    seen.later = [$('#sampling').textContent, left()];
    return seen;
}
JS
    is($seen->{chosen}, '10 min', 'start: 10 min by default');
    like($seen->{first}[0], qr/^sampling on, (10 min|9 min 5\d s) left$/,
         'start: the time left, in min and s');
    my $left = $t->get('/malloc/')->{json}{prof_active_remaining} // 0;
    ok($left > 585 && $left <= 600, "start: GET / says $left s left");
    ok(($seen->{later}[1] // 1e9) <= $seen->{first}[1] - 2,
       "start: the timer counts down ($seen->{later}[0])");

    # a duration set through the API: shown, and kept
    is($t->post('/malloc/prof_active', '{"active": true, "duration": "3h"}')
       ->{status}, 200, 'through the API: on for 3 h');
    $dom = dom($url, budget => 5000);
    like($dom, qr/<span id="sampling"[^>]*>sampling on, 2 h 59 min left</,
         'page: the API\'s duration, in h and min');
    $left = $t->get('/malloc/')->{json}{prof_active_remaining} // 0;
    ok($left > 10700, "page: and it was kept ($left s left)");

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

# many small stacks, every allocation sampled: the frames too narrow
# to draw are marked, and a click on the mark draws them

SKIP: {
    skip $why, 5 unless $chromium;

    my $n = MallocTest->new(workers => 1,
        malloc_conf => 'prof:true,prof_active:true,lg_prof_sample:0')
        ->start;
    is($n->get('/t/alloc?stacks=4096&size=64&mb=8')->{status}, 200,
       'narrow: 4096 stacks of 64 bytes beside 8 MiB');

    my $seen = drive($n->url('/malloc/ui'), <<'JS');
async () => {
    const below = (f) => frames().filter((e) => e.y > f.y && e.x >= f.x
                                           && e.x < f.x + f.w).length;
    const marks = drawn().filter((f) => f.kind === 'more');
    /* the mark of the most frames */
    const count = (m) => Number(m.title.replace(/,/g, '').split(' ')[0]);
    const mark = marks.sort((a, b) => count(b) - count(a))[0];
    const parent = mark.title.match(/ below (\S+)(?: and \d+ others?)?,/)[1];
    const p = frames().find((e) => e.name === parent && e.y === mark.y - 18);
    const seen = { marks: marks.length, title: mark.title, parent,
                   before: below(p) };

    click(mark);
    const focus = frames().find((f) => has(f, 'focus'));
    seen.zoomed = focus.name;
    seen.after = below(focus);
    return seen;
}
JS
    ok(($seen->{marks} // 0) > 0, 'narrow: marked')
        or diag explain $seen;
    like($seen->{title} // '', qr/^[\d,]+ frames below \S+(?# the block's
                                 )(?: and \d+ others?)?, [\d.]+ \w+, (?#
                                 )too narrow to draw: click/,
         "narrow: how many and what ($seen->{title})");
    is($seen->{zoomed}, $seen->{parent}, 'narrow: the click zooms there');
    ok($seen->{after} > $seen->{before},
       "narrow: and draws them ($seen->{before} then $seen->{after} frames)");

    $n->no_alerts;
    $n->stop;
}

# the master's heap after 12 reloads of a module that rebuilds 16 MiB of
# small blocks at each, compared in the page with generation 3: the
# churn is drawn, and painted as nothing, for it is within the noise

SKIP: {
    skip $why, 8 unless $chromium;

    my $m = MallocTest->new(workers => 1,
                            http => 'malloc_test_churn 16m 128;')->start;
    $m->post('/malloc/prof_active', 'true');
    $m->reload for 1 .. 12;

    my %gen = map { $_->{generation} => $_->{snapshot} }
                  @{$m->get('/malloc/')->{json}{generations}};
    ok($gen{3} && $gen{13}, "reloads: generations 3 and 13 ($gen{13})");

    my ($dom, $drawn) = page($m->url("/malloc/ui#snapshot=$gen{13}"
                                     . "&base=$gen{3}"));
    my %all = frames($drawn);
    ok(exists $all{ngx_http_malloc_test_churn},
       'reloads: the churn is drawn');
    is(join(' ', sort keys %{{ frames($drawn, 'grown') }}), '',
       'reloads: nothing painted as grown');
    # grey is within the noise, and the legend says so; what is new
    # within it has a colour of its own
    like($dom, qr{<span id="legend-same">within the sampling noise, (?#
                 )or unchanged</span>}, 'reloads: the legend: grey is noise');
    like($dom, qr{<span id="legend-new">}, 'reloads: and new within it');
    is(scalar(grep { $_->{kind} eq 'frame' && $_->{cls} !~ /\b(same|new)\b/
                     && $_->{name} ne 'all' } @{ $drawn // [] }), 0,
       'reloads: every frame grey, or new within the noise');
    # nothing grew, the summary says; the 1 MiB array of the churn's
    # blocks, sampled in one snapshot only (one time in seven), is noise
    like($dom, qr/(no stack changed|; 0 B grew and [^;]* shrank) beyond (?#
                 )the sampling noise.*? at 99% confidence, on [\d,]+ (?#
                 )samples now/,
         'reloads: the summary says nothing grew beyond the noise');
    like($dom, qr/the master's allocated bytes from generation 3 to 13: (?#
                 )[-+][\d.]+ (?:[KMG]i)?B \(exact\)/,
         'reloads: and the exact change of the master beside it');

    $m->no_alerts;
    $m->stop;
}

# a C++ function, read as its source names it, found by that name; its
# symbol in the panel, to copy; and ui/ with the slash, which moves to ui
# (its fragment kept, as a bookmark would have it)

my $cx = MallocTest->new(workers => 1,
                         server => 'location /t/cxx { malloc_test_cxx; }')
    ->start;
is($cx->post('/malloc/prof_active', 'true')->{status}, 200,
   'C++: profiling on');
is($cx->get('/t/cxx?mb=16&block=8')->{status}, 200,
   'C++: 16 MiB held through malloc_test::Holder::grow');

SKIP: {
    skip $why, 7 unless $chromium;

    my $seen = drive($cx->url('/malloc/ui/#search=Holder::grow'), <<'JS');
async () => {
    const hit = frames().filter((f) => has(f, 'match'));

    if (hit.length) {
        hover(hit[0]);
        await new Promise((ok) => setTimeout(ok, 100));
    }
    return { path: location.pathname, hash: decodeURIComponent(location.hash),
             state: document.body.dataset.state,
             matches: hit.map((f) => f.name),
             name: $('#d-name').textContent, raw: $('#d-raw').textContent,
             file: $('#d-file').textContent };
}
JS
    is($seen->{path}, '/malloc/ui', 'ui/: the page moved to ui')
        or diag explain $seen;
    is($seen->{hash}, '#search=Holder::grow', 'ui/: its fragment kept');
    is($seen->{state}, 'ready', 'ui/: and drawn');
    ok(grep({ /^malloc_test::Holder::grow\(unsigned long\)$/ }
            @{$seen->{matches} // []}),
       'C++: a search for Holder::grow finds the demangled frame');
    like($seen->{name} // '', qr/^malloc_test::Holder::grow/,
         'C++: the panel names it as the source does');
    is($seen->{raw}, '_ZN11malloc_test6Holder4growEm',
       'C++: with its symbol to copy');
    like($seen->{file} // '', qr/ngx_http_malloc_test_module\.so/,
         'C++: in the test module\'s file');
}

$cx->no_alerts;
$cx->stop;

done_testing;


# {function => title} of the frames the canvas shows (page()'s list;
# with a class, those that have it)
sub frames {
    my ($drawn, $class) = @_;
    my %f;
    for my $f (@{ $drawn // [] }) {
        next if $f->{kind} ne 'frame';
        next if $class && $f->{cls} !~ /\b\Q$class\E\b/;
        $f{$f->{name}} //= $f->{title} // '';
    }
    return %f;
}

# the page at url once it drew: its HTML, and what its canvas shows
# (MallocViewer.frames(): kind, name, cls, title, x, y, w, h of each)
sub page {
    my ($url) = @_;
    # the graph may be drawn before GET ./ (the workers, the controls) is
    # answered: the page asks both at once, and under load either comes
    # first
    my $seen = drive($url, <<'JS');
async () => {
    for (const end = Date.now() + 10000;
         Date.now() < end && $('#sampling').textContent === '';) {
        await new Promise((ok) => setTimeout(ok, 20));
    }
    return { html: document.documentElement.outerHTML, frames: drawn() };
}
JS
    return ($seen->{html} // "failed: $seen->{failed}", $seen->{frames});
}

# What the page saw: t/ui/cdp.js runs the script (an async function) in
# the page at url once it drew, in chromium, in real time.  The script
# has helpers: drawn(id) and frames(id), what a canvas shows (frames
# only); frame(name); has(f, class); hover(f) and click(f), the pointer
# on where it is drawn.
sub drive {
    my ($url, $js, $size) = @_;
    state $n = 0;
    my $file = "$tmp/drive-" . ++$n . '.js';
    open my $fh, '>', $file or die "$file: $!";
    print $fh <<"JS";
async () => {
    const \$ = (s) => document.querySelector(s);
    const drawn = (id = 'flame') => MallocViewer.frames(id);
    const frames = (id) => drawn(id).filter((f) => f.kind === 'frame');
    const frame = (name) => frames().find((f) => f.name === name);
    const has = (f, cls) => f.cls.split(' ').includes(cls);
    const at = (f, type, id = 'flame') => {
        const c = document.querySelector('#' + id + ' canvas');
        const r = c.getBoundingClientRect();

        c.dispatchEvent(new MouseEvent(type, {
            clientX: Math.ceil(r.left + f.x
                             + Math.max(0, Math.min(f.w / 2, 8) - 1)),
            clientY: r.top + f.y + f.h / 2, bubbles: true }));
    };
    const hover = (f, id) => at(f, 'mousemove', id);
    const click = (f, id) => at(f, 'click', id);

    return await ($js)();
}
JS
    close $fh;
    my $out = `timeout 120 node $root/t/ui/cdp.js '$url' $file @{[
        $size // '1200x900' ]} 2>&1`;
    my $seen = eval { decode_json($out) };
    return $seen // { failed => $out };
}

sub slurp {
    my ($path) = @_;
    open my $fh, '<', $path or return '';
    local $/;
    return <$fh>;
}
