// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// The heap viewer in a real browser: Debian's chromium, headless, against
// serve.js's stand-in for the admin location, under the module's CSP.
// Skipped without chromium (TEST_CHROMIUM names another one).
//
//     node --test t/ui/*.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { serve } = require('./serve.js');
const { dumpDom } = require('./chromium.js');

const CHROMIUM = process.env.TEST_CHROMIUM || '/usr/bin/chromium';
const skip = fs.existsSync(CHROMIUM) ? false : CHROMIUM + ' not found';

// the DOM as the page left it, served by serve(opts); asked, if given,
// gets the queries of pprof/heap.json, posted the bodies of POST
// prof_active; before(server) runs before the page loads
async function dom(opts, hash = '', asked = [], posted = [], before) {
    const server = serve(opts);

    if (before) {
        before(server);
    }
    await new Promise((ok) => server.listen(0, '127.0.0.1', ok));

    const url = 'http://127.0.0.1:' + server.address().port
                + '/malloc/ui' + hash;

    try {
        return await dumpDom(url, '1200x900', 'malloc-ui-', 60000);
    } finally {
        asked.push(...server.asked);
        posted.push(...server.posted);
        server.close();
    }
}

// a RegExp from pieces of its source, for lines of a readable length
const re = (...parts) => new RegExp(parts.join(''));

const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>')
                         .replace(/&amp;/g, '&');

// what the canvas showed, as frames.js wrote it: [{kind, name, cls, title}]
const drawnFrames = (html) => JSON.parse(unescape(html.match(
    /<pre id="frames">([^<]*)<\/pre>/)[1]));

test('the page draws, zooms, searches, sorts and starts sampling',
     { skip }, async (t) => {
    const posted = [];
    let traffic;
    const html = await dom({ write: true, alloc: true, stacks: 50000,
                             drive: true }, '', [], posted,
                           (server) => { traffic = server.traffic; });
    const m = html.match(/<pre id="drive">([^<]*)<\/pre>/);

    assert.ok(m, 'drive.js wrote its findings');
    const seen = JSON.parse(unescape(m[1]));
    t.diagnostic(JSON.stringify(seen));

    assert.strictEqual(seen.failed, undefined);
    assert.deepStrictEqual(seen.violations, []);
    assert.deepStrictEqual(seen.errors, []);
    assert.ok(seen.styled, 'viewer.css applies');
    assert.ok(seen.frames > 100 && seen.frames <= 4000);
    // one canvas, nothing else: no element per frame
    assert.strictEqual(seen.canvases, 1);
    assert.strictEqual(seen.elements, 1);
    // what each action took in the page: its data, then its painting (ms)
    for (const [took, what] of [[seen.zoomTook, 'zoom'],
                                [seen.keys.took, 'key Escape'],
                                [seen.searchTook, 'search'],
                                [seen.filters.took, 'focus']]) {
        assert.match(took, new RegExp('^' + what + ' \\d+\\.\\d \\d+\\.\\d$'));
    }
    t.diagnostic('took (data, paint ms): ' + [seen.zoomTook, seen.keys.took,
        seen.searchTook, seen.filters.took].join('; '));
    assert.strictEqual(seen.root, 'all');
    assert.match(seen.title,
                 /^all\n[\d.]+ GiB, 100\.0% of all\n[\d,]+ objects/);
    // live: no seconds, no snapshot menu
    assert.strictEqual(seen.hidden, '#seconds-choice #snapshot-choice');

    // a narrow frame, hovered: the panel names it, with figures and file
    assert.strictEqual(seen.hover.name, seen.hover.text);
    // its tooltip, as the element's title was
    assert.ok(seen.hover.tooltip.startsWith(seen.hover.text + '\n'));
    assert.match(seen.hover.total, /^[\d.]+ [KMG]iB, [\d,]+ objects$/);
    assert.match(seen.hover.share, /^[\d.<]+% of all$/);
    assert.strictEqual(seen.hover.file, 'nginx (binary)');
    assert.deepStrictEqual(seen.left, [false, seen.hover.name],
                           'leaving the graph: the panel keeps the frame');
    // the hovered function's other frames, marked; its self and total
    const same = seen.same;
    assert.strictEqual(same.same.length, same.drawn - 1);
    assert.ok(same.same.length > 0 && same.same.every((n) => n === same.name
        || new RegExp('\u2192 ' + same.name + '( \\(|$)').test(n)),
              same.same.join(', '));
    assert.match(same.tooltip, re(String.raw`^the function, in all its `,
                                  String.raw`[\d,]+ frames: self [\d.]+ \w+, `,
                                  String.raw`total [\d.]+ \w+$`));
    assert.match(same.panel, /, in all its [\d,]+ frames, dashed in the graph/);
    assert.strictEqual(same.after, 0, 'unmarked when the pointer leaves');
    // the C++ name found as written, the symbol beside it
    assert.strictEqual(seen.cpp.name,
                       'RuleWithActions::evaluate(Transaction*)');
    assert.strictEqual(seen.cpp.raw, '_ZN11modsecurity15RuleWithActions8'
                                     + 'evaluateEPNS_11TransactionE');
    assert.strictEqual(seen.cpp.file, 'libluajit-5.1.so.2.1.0 (library)');

    // the search is a regex; Enter goes from match to match
    assert.match(seen.matchText,
                 /^matched [\d.]+ \w+, [\d.]+% of all; \d+ frames$/);
    assert.match(seen.hash, /&search=NGX_FN_12%24$/);
    assert.strictEqual(seen.firstMatch[0], 'ngx_fn_12');
    assert.match(seen.firstMatch[1], /; 1 of \d+ frames$/);
    assert.match(seen.secondMatch[1], /; 2 of \d+ frames$/);
    assert.ok(seen.secondMatch[2], 'the match selected is drawn');

    assert.deepStrictEqual(seen.clicked, { selected: [seen.zoomName],
                                           zoomed: null,
                                           hash: '#search=NGX_FN_12%24',
                                           steps: 0, panel: seen.zoomName },
                           'a click selects, without zooming');
    assert.deepStrictEqual(seen.zoom, { name: seen.zoomName, full: true,
                                        ancestors: 2, reset: false,
                                        summary: true });
    // keys: down, right, Enter, Escape, Backspace, Escape twice, Home
    const k = seen.keys;
    assert.ok(k.moved, 'right: the next frame in the row');
    assert.strictEqual(k.zoomed, k.down);
    // down may enter a folded run of single callers: its last is zoomed
    assert.match(k.hash, new RegExp('^#zoom=main&zoom=' + seen.zoomName
                                    + '&(zoom=[^&]+&)*zoom=' + k.down + '&'));
    assert.strictEqual(k.escaped, seen.zoomName);
    assert.strictEqual(k.backspace, 'main');
    assert.strictEqual(k.steps, 1, 'a zoom is one step of the history');
    assert.deepStrictEqual(k.back, [null, '#search=NGX_FN_12%24', true],
                           'back: out of the zoom at once');
    assert.ok(k.once !== undefined, 'Escape: a step out, still zoomed');
    assert.deepStrictEqual(k.twice, [null, '#search=NGX_FN_12%24'],
                           'Escape again: the root');
    assert.deepStrictEqual(k.home, [null, true], 'Home: the root');
    assert.strictEqual(seen.unzoomed, 'all');

    // a mark of what is too narrow: clicked, it is drawn
    const below = seen.more.title.match(re(
        String.raw`^[\d,]+ frames? below (\S+)(?: and \d+ others?)?, `,
        String.raw`[\d.]+ \w+, too narrow to draw: click to zoom into them$`));
    assert.ok(below, seen.more.title);
    assert.strictEqual(seen.more.tooltip, seen.more.title);
    // one block per run: none touches another in its row; the wide
    // ones say how many frames and bytes
    const blocks = seen.blocks.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    blocks.forEach((b, k) => assert.ok(k === 0 || blocks[k - 1][0] !== b[0]
                                       || blocks[k - 1][1] + blocks[k - 1][2]
                                          + 1 < b[1], JSON.stringify(b)));
    assert.ok(blocks.some((b) => /^[\d,]+ frames?, [\d.]+ \w+$/.test(b[3])),
              JSON.stringify(blocks));
    assert.ok(blocks.length < 100, blocks.length + ' blocks');
    assert.strictEqual(seen.more.zoomed, below[1]);
    assert.strictEqual(seen.more.selected, below[1]);
    assert.ok(seen.more.frames > seen.frames, 'more of them drawn');

    const f = seen.filters;
    assert.match(f.focus, /^focus keeps [\d,]+ of 49,998 stacks, [\d.]+ GiB of 46\.4 GiB$/);
    // the summary (and the tables) follow it
    assert.strictEqual(f.focusSummary.split(' live')[0],
                       f.focus.match(/, ([\d.]+ GiB) of/)[1]);
    assert.strictEqual(f.bad, 'not a regular expression: Unterminated group');
    assert.strictEqual(f.badClass, 'note invalid');
    assert.strictEqual(f.badFrames, f.focusFrames, 'the graph unchanged');
    assert.match(f.ignore, /^ignore keeps [\d,]+ of 49,998 stacks, /);
    assert.match(f.hide, /^hide takes \d+ functions out of [\d,]+ stacks$/);
    assert.match(f.hash, /&hide=%5Engx_fn_%5B0-9%5D%24$/);

    // the allocators first: the top row allocated itself
    assert.strictEqual(seen.allocators.hash, '#view=allocators');
    assert.ok(seen.allocators.top > 10);
    assert.match(seen.allocators.function,
                 /^[\d.]+ MiB allocated by it, [\d.]+ MiB by it and what/);
    assert.ok(seen.allocators.self, 'no self row: the bytes are on top');
    const s = seen.sandwich;
    assert.strictEqual(s.hash, '#view=sandwich&fn=' + seen.allocators.name);
    assert.strictEqual(s.view, 'sandwich');
    assert.ok(s.callers > 10, 'its callers, above');
    assert.strictEqual(s.root, seen.allocators.name);
    assert.strictEqual(s.back, 'allocators');

    assert.deepStrictEqual(seen.modules.rows, ['ngx_http_lua_module.so',
                                               'nginx']);
    assert.deepStrictEqual(seen.modules.byName, ['nginx',
                                                 'ngx_http_lua_module.so']);
    assert.match(seen.modules.rule, /^A stack's bytes go to the innermost /);
    assert.ok(seen.modules.colored > 100);
    assert.strictEqual(seen.modules.legend, 'ngx_http_lua_module.so nginx '
                       + 'libluajit-5.1.so.2.1.0 libc.so.6');

    assert.deepStrictEqual(seen.byName, [...seen.byName].sort());
    assert.strictEqual(seen.sortAttr, 'ascending');
    assert.match(seen.allocSummary, /^[\d.]+ GiB allocated since sampling/);
    // objects as pprof's sample menu has them: every type of the profile
    assert.deepStrictEqual(seen.types, [
        'inuse_space bytes in use', 'inuse_objects objects in use',
        'alloc_space bytes allocated', 'alloc_objects objects allocated']);
    const o = seen.objects;
    assert.match(o.hash, /^#(.*&)?type=inuse_objects$/);
    assert.match(o.summary, /^[\d,]+ objects live in [\d.]+ GiB, /);
    assert.deepStrictEqual(o.heads, ['function', 'flat', 'cum', 'flat bytes',
                                     'cum bytes']);
    assert.match(o.first.join(' '),
                 /^\S+ [\d,]+ [\d.<]+% [\d,]+ [\d.<]+% [\d.]+ \w+ [\d.]+ \w+$/);
    assert.deepStrictEqual(o.modules, ['module or library', 'objects',
                                       'bytes']);

    // a duration, as docs/api.md has it; the timer runs
    assert.deepStrictEqual(seen.durations, ['10m 10 min', '1h 1 h',
                                            ' until stopped']);
    assert.strictEqual(seen.sampling, 'sampling on, 10 min left');
    assert.strictEqual(seen.countdown, 'sampling on, 9 min 59 s left');
    assert.strictEqual(seen.forever, 'sampling on until stopped');
    assert.deepStrictEqual(posted, ['{"active":true,"duration":"10m"}',
                                    '{"active":true}']);

    assert.deepStrictEqual(seen.disabled, { growth: '#snapshot #base',
                                            snapshot: '#worker #seconds',
                                            live: '#seconds #snapshot' });
    assert.strictEqual(seen.liveHidden, '#seconds-choice #snapshot-choice');
    // a snapshot per time, whatever its files
    assert.deepStrictEqual(seen.snapshots, [
        'snapshot-20261201T031814Z 2026-12-01 03:18:14 UTC',
        'snapshot-20261201T021814Z 2026-12-01 02:18:14 UTC (2 files)']);

    const c = seen.compare;
    assert.strictEqual(c.hash, '#base=snapshot-20261201T021814Z&type=alloc');
    assert.ok(c.grown > 20 && c.shrunk > 20, c.grown + " " + c.shrunk);
    assert.strictEqual(c.colored, 0, 'no colour by name in a comparison');
    assert.match(c.root, re(String.raw`^all\n[\d.]+ GiB, 100\.0% of all\n`,
                            String.raw`\+[\d.]+ \w+ since the base `,
                            String.raw`\([\d.]+ GiB then\)\n`));
    assert.match(c.summary, re(
        String.raw`^[\d.]+ GiB allocated since sampling began in [\d,]+ `,
        String.raw`objects; \+[\d.]+ \w+ since the base, 2026-12-01 `,
        String.raw`02:18:14 UTC \([\d.]+ GiB then\), 49,999 stacks;`));
    assert.strictEqual(c.gone,
                       'Gone since the base, so not drawn: ngx_gone_site '
                       + '-3.00 MiB');
    assert.ok(c.legend);
    assert.deepStrictEqual(c.heads, ['function', 'flat', 'flat change', 'cum',
                                     'cum change', 'flat objects',
                                     'cum objects']);
    assert.match(c.first[3], /^num grown \+[\d.]+ \w+$/);

    // the traffic: its link keeps the heap's view for the way back
    const tr = seen.traffic;
    assert.deepStrictEqual(tr.current, [null, 'page']);
    assert.strictEqual(tr.hash, c.hash + '&view=traffic');
    assert.ok(tr.hidden && tr.shown && tr.heap, 'one view at a time');
    assert.match(tr.text, /^in-flight traffic holds 9\.0 MiB of the 10\.9/);
    assert.deepStrictEqual(tr.locations, ['/held', '/upload', '/malloc/']);
    assert.deepStrictEqual(tr.top, ['HTTP/1.0', 'HTTP/1.0', 'HTTP/1.1',
                                    'HTTP/1.0', 'HTTP/1.0']);
    assert.deepStrictEqual(tr.top2, ['1.01 MiB', '1.01 MiB']);
    assert.deepStrictEqual(tr.back, { hash: c.hash, hidden: true, heap: true,
                                      frames: tr.back.frames, asked: 0,
                                      current: 'page' });
    assert.ok(tr.back.frames > 100, 'the graph drawn again');
    // never asked while the heap showed
    assert.deepStrictEqual(traffic, ['', '?top=2']);
});

test('a comparison of two snapshots, opened from the URL',
     { skip }, async () => {
    const asked = [];
    const html = await dom({ stacks: 2000, frames: true },
                           '#snapshot=snapshot-20261201T031814Z&pid=2051'
                           + '&base=snapshot-20261201T021814Z', asked);
    const frames = drawnFrames(html).filter((f) => f.kind === 'frame')
        .map((f) => f.cls);

    // the pid goes: a snapshot is of all workers
    assert.deepStrictEqual(asked, ['?snapshot=snapshot-20261201T031814Z'
                                   + '&base=snapshot-20261201T021814Z']);
    assert.match(html, /<body data-state="ready"[ >]/);
    assert.ok(frames.some((f) => / grown d\d/.test(f)));
    assert.ok(frames.some((f) => / shrunk d\d/.test(f)));
    assert.ok(frames.every((f) => / (grown d[1-5]|shrunk d[1-5]|same)\b/
                                  .test(f)));
    assert.match(html, re(
        String.raw`<p id="summary">[\d.]+ GiB live as of 2026-12-01 `,
        String.raw`03:18:14 UTC in [\d,]+ objects; -[\d.]+ MiB since the `,
        String.raw`base, 2026-12-01 02:18:14 UTC`));
    assert.match(html, re(
        '<p id="gone">Gone since the base, so not drawn: <code title="main ',
        '→ ngx_gone_site">ngx_gone_site</code> -3.00 MiB</p>'));
    assert.match(html, /<select id="worker" disabled="">/);
    assert.match(html,
                 /<option value="snapshot-20261201T031814Z" disabled="">/);
    assert.match(html, /<td class="num (grown|shrunk)">[+-]/);
    // the downloads: the snapshots' own files, not the live heap's
    assert.match(html, re(
        '<li id="download-snapshots">the snapshot: <a href="./snapshots/',
        'snapshot-20261201T031814Z.pb.gz">[^;]*; the base: <a href="',
        './snapshots/snapshot-20261201T021814Z.2051.heap">.*2052.heap</a>',
        '</li>'));
    assert.match(html, /<li hidden="">[^<]*<a id="download-pprof"/);
});

test('no snapshots: none offered; one not listed: its error',
     { skip }, async () => {
    let html = await dom({ stacks: 50, snapshots: false });

    assert.match(html, /<body data-state="ready"[ >]/);
    assert.match(html, /<label id="snapshot-choice" hidden="">/);
    assert.match(html, /<label id="base-choice" hidden="">/);
    assert.match(html, /<option value="snapshot"[^>]* disabled="">/);
    assert.match(html, /<p id="legend" hidden="">/);

    const asked = [];
    html = await dom({ stacks: 50 }, '#base=snapshot-20991231T000000Z',
                     asked);
    assert.deepStrictEqual(asked, ['?base=snapshot-20991231T000000Z']);
    assert.match(html, /<body data-state="error">/);
    assert.match(html,
                 /<p>no snapshot "snapshot-20991231T000000Z" \("base"\)/);
    // kept in the form, so that what failed shows
    assert.match(html, re('<option value="snapshot-20991231T000000Z">',
                          '2099-12-31 00:00:00 UTC</option></select>'));
});

test('sampling started through the API: its time left, kept',
     { skip }, async () => {
    const posted = [];
    const html = await dom({ write: true, stacks: 50 }, '', [], posted,
                           (server) => server.sample(10743));

    // "2 h 59 min", never "10743 s"; and nothing posted over it
    assert.match(html, /<span id="sampling"[^>]*>sampling on, 2 h 5[89] min left</);
    assert.deepStrictEqual(posted, []);
    assert.match(html, /<select id="duration"><option value="10m">10 min/);
});

test('a read-only location: no buttons; a zoom from the URL',
     { skip }, async () => {
    const html = await dom({ stacks: 50, frames: true },
                           '#zoom=main&search=main');
    const frames = drawnFrames(html);

    assert.match(html, /<body data-state="ready"[ >]/);
    assert.doesNotMatch(html, /id="start"/);
    // no alloc_* without prof_accum: bytes and objects in use
    assert.match(html, re('<select id="type"><option value="inuse_space">',
                          'bytes in use</option><option value="inuse_',
                          'objects">objects in use</option></select>'));
    assert.match(frames[0].cls + ' ' + frames[0].name,
                 /^frame root ancestor[^"]* all$/);
    assert.match(frames[1].cls + ' ' + frames[1].name,
                 /^frame c\d focus\b.*\bmatch\b.* main$/);
    assert.match(html, /<table id="workers">[^]*<tr data-pid="2052">/);
});

test('an error of the profile shows its text', { skip }, async () => {
    const html = await dom({ fail: 'nginx is not running on jemalloc',
                             frames: true });

    assert.match(html, /<body data-state="error">/);
    assert.match(html, new RegExp('<div id="error" role="alert">'
                                  + '<p>nginx is not running on jemalloc</p>'));
    assert.deepStrictEqual(drawnFrames(html), [], 'no graph drawn');
});

test('the traffic, opened from the URL: the sentence and its tables',
     { skip }, async () => {
    const asked = [];
    let traffic;
    const html = await dom({ stacks: 50, frames: true }, '#view=traffic',
                           asked, [], (server) => { traffic = server.traffic; });
    const body = (id) => html.match(new RegExp('<table id="' + id
        + '">[^]*?<tbody>([^]*?)</tbody>'))[1];

    // the traffic asked once; the heap's profile, hidden, not at all
    assert.deepStrictEqual(traffic, ['']);
    assert.deepStrictEqual(asked, []);
    assert.match(html, /<body [^>]*data-traffic="ready"/);
    assert.match(html, /<form id="choices" class="heap" hidden="">/);
    assert.match(html, /<section id="traffic">/);
    assert.match(html, re('<a id="to-traffic" href="#view=traffic"[^>]* ',
                          'aria-current="page">'));
    assert.match(html, /<a id="to-heap" href="#"(?![^>]*aria-current)/);
    assert.match(html, re('<p id="traffic-text">in-flight traffic holds ',
                          '9.0 MiB of the 10.9 MiB allocated \\(82.7%\\): ',
                          'the memory is the traffic, most of it in ',
                          'location "/held" of server "" \\(6.0 MiB\\)'));
    assert.match(body('traffic-totals'), re(
        '<tr><th scope="row">in-flight traffic</th><td>9.09 MiB, 82.8% of ',
        'the allocated bytes</td></tr><tr><th scope="row">allocated</th>',
        '<td>11.0 MiB \\(jemalloc\\)</td></tr><tr><th scope="row">',
        'connections</th><td>10</td></tr><tr><th scope="row">requests</th>',
        '<td>10 in flight, holding 9.09 MiB</td></tr>'));
    assert.match(body('traffic-states'), re(
        '<tr><td class="name" title="in a handler, with no upstream">',
        'processing</td><td class="num">7</td><td class="num">6.06 MiB</td>',
        '<td class="num">66.7%</td></tr>'));
    assert.match(body('traffic-states'),
                 /<tr class="none"><td class="name"[^>]*>upstream</);
    assert.match(body('traffic-locations'), re(
        '^<tr><td title="a server with no server_name">\\(no name\\)</td>',
        '<td class="name">/held</td><td class="num">6</td><td class="num">',
        '6.06 MiB</td><td class="num">66.6%</td><td class="num">0</td>',
        '<td class="num">-</td><td class="num">-</td></tr>'));
    assert.match(body('traffic-locations'), /<td class="name">\/malloc\/</);
    assert.strictEqual((body('traffic-requests').match(/<tr>/g) || []).length,
                       5);
    assert.match(body('traffic-requests'), re(
        '<tr><td class="num">1.01 MiB</td><td class="name" title="reading ',
        'the request body">reading_body</td><td>POST</td><td title="a ',
        'server with no server_name">\\(no name\\)</td><td class="name">',
        '/upload</td>',
        '<td class="path">/upload</td><td>127.0.0.1</td><td class="num">',
        '502 ms</td><td>HTTP/1.1</td><td class="num" title="pid 22652">0',
        '</td></tr>'));
    assert.match(html, /<p id="traffic-finished" class="note">No finished /);
    assert.match(html, re('<p id="traffic-not-measured" class="note">Not ',
                          'measured: TLS state'));
    assert.deepStrictEqual(drawnFrames(html), [], 'no graph drawn');
    assert.match(html, /<div id="error" role="alert" hidden="">/);
});

test('a worker that failed the traffic: its error, the others\' figures',
     { skip }, async () => {
    const html = await dom({ stacks: 50, trafficFail: true },
                           '#view=traffic');

    assert.match(html, /<body [^>]*data-traffic="error"/);
    assert.match(html, re('<div id="error" role="alert"><p data-page=',
                          '"traffic">worker 1 \\(pid 22653\\) did not ',
                          'answer within 10000 ms</p></div>'));
    assert.match(html, /<p id="traffic-text">in-flight traffic holds 4\.0 /);
    assert.match(html, re('<tr class="failed"><td>1</td><td>22653</td>',
                          '<td class="why" colspan="6">worker 1 '));
    assert.strictEqual((html.match(/<td class="num" title="pid 22652">/g)
                        || []).length, 4);
});
