// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// pprof files opened in the page, in chromium: a Go program's heap
// profiles (t/ui/goprof.js, through `go tool pprof -proto`), chosen in
// the file picker through the DevTools protocol (t/ui/cdp.js) and
// dropped on the page as a user drags them there; one shown, then
// compared with the other.  Nothing of them goes to the server.  And
// the page at 800 px, which needs a real window: the panel in view.
//
//     node --test t/ui/*.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { serve } = require('./serve.js');
const { goProfiles } = require('./goprof.js');
const { drive, skip } = require('./browse.js');

test('a Go heap, opened by the picker and by a drop, and compared',
     { skip }, async (t) => {
    const go = goProfiles();

    if (go.skip) {
        t.skip(go.skip);
        return;
    }
    t.after(() => fs.rmSync(go.dir, { recursive: true, force: true }));

    const server = serve({ stacks: 50 });
    const b64 = (f) => fs.readFileSync(f).toString('base64');
    const seen = await drive(server, '', `
    const file = (b64, name, time) => new File(
        [Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name,
        { lastModified: time });
    const drop = async (target, files) => {
        const dt = new DataTransfer();

        files.forEach((f) => dt.items.add(f));
        const over = new DragEvent('dragover', { dataTransfer: dt,
            bubbles: true, cancelable: true });
        target.dispatchEvent(over);
        document.body.dataset.state = 'stale';
        target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt,
            bubbles: true, cancelable: true }));
        await until(() => ['ready', 'error'].includes(
            document.body.dataset.state)
            && document.body.dataset.tables === 'ready');
        return over.defaultPrevented;
    };
    const names = (cls) => frames()
        .filter((f) => f.kind === 'frame' && (!cls || has(f, cls)))
        .map((f) => f.name);
    const row = (name) => [...$('#top').tBodies[0].rows]
        .find((tr) => tr.cells[0].textContent === name);
    const cells = (name) => row(name)
        && [...row(name).cells].map((td) => td.textContent);
    const seen = {};
    const requests = performance.getEntriesByType('resource').length;

    await until(() => document.body.dataset.tables === 'ready');
    // chosen in the pickers (cdp.js): after.pb.gz against before.pb.gz
    seen.picked = { opened: document.body.dataset.opened,
                    summary: $('#summary').textContent,
                    legend: !$('#legend').hidden,
                    grown: names('grown'),
                    hold: cells('main.holdMemory'),
                    other: cells('main.otherSite'),
                    errors: $('#error').textContent };

    // one file dropped on the page: shown alone
    const after = file('${b64(go.after)}', 'after.pb.gz', 2000);
    const before = file('${b64(go.before)}', 'before.pb.gz', 1000);
    seen.taken = await drop($('#summary'), [before]);
    seen.one = { opened: document.body.dataset.opened,
                 summary: $('#summary').textContent,
                 base: !$('#open-base-choice').hidden,
                 frames: names().includes('main.holdMemory'),
                 hold: cells('main.holdMemory') };
    // and another on "Compare with": the base
    await drop($('#open-base-choice'), [after]);
    seen.based = { opened: document.body.dataset.opened,
                   summary: $('#summary').textContent };
    // two at once: the newer against the older
    await drop($('#flame'), [before, after]);
    seen.two = { opened: document.body.dataset.opened,
                 summary: $('#summary').textContent,
                 hold: cells('main.holdMemory') };
    // no profile at all
    await drop($('#flame'), [new File(['not a profile'], 'notes.txt')]);
    seen.bad = { state: document.body.dataset.state,
                 error: $('#error').textContent };
    // the live heap again, with Load
    $('#load').click();
    await until(() => document.body.dataset.state === 'ready');
    seen.live = { opened: document.body.dataset.opened === undefined,
                  base: $('#open-base-choice').hidden,
                  summary: $('#summary').textContent };
    seen.requests = performance.getEntriesByType('resource')
        .slice(requests).map((e) => new URL(e.name).pathname);
    return seen;`, { CDP_FILES: '#open=' + go.after + ';#open-base='
                           + go.before });

    t.diagnostic(JSON.stringify(seen));
    assert.strictEqual(seen.failed, undefined, seen.failed);

    const p = seen.picked;
    assert.strictEqual(p.opened, 'after.pb.gz against before.pb.gz');
    assert.strictEqual(p.errors, '');
    assert.match(p.summary, new RegExp(
        '^[\\d.]+ MiB live in after\\.pb\\.gz in [\\d,]+ objects; '
        + '\\+33\\.\\d+ MiB since the base, before\\.pb\\.gz '
        + '\\(32\\.\\d+ MiB then\\), \\d+ stacks; one sample per 1 B '
        + 'allocated on average\\.$'));
    assert.ok(p.legend, 'the legend of a comparison');
    assert.ok(p.grown.includes('main.holdMemory'), p.grown.join(' '));
    // flat, its share, its change; cum, its share, its change
    // and the objects beside them: 64 blocks, and at times a few of Go's
    // runtime charged to the goroutine (more on a loaded machine)
    assert.deepStrictEqual(p.hold.filter((c, k) => k !== 2 && k !== 5)
                           .slice(0, 5),
                           ['main.holdMemory', '64.0 MiB', '+32.0 MiB',
                            '64.0 MiB', '+32.0 MiB']);
    assert.match(p.hold.slice(7).join(' '), /^(6[4-9]) \1$/);
    assert.deepStrictEqual([p.other[1], p.other[3]],
                           ['1.00 MiB', '+1.00 MiB']);

    assert.ok(seen.taken, 'a drag of files is taken');
    assert.strictEqual(seen.one.opened, 'before.pb.gz');
    assert.match(seen.one.summary, /^3\d\.\d MiB live in before\.pb\.gz /);
    assert.ok(seen.one.base && seen.one.frames);
    assert.deepStrictEqual(seen.one.hold.slice(0, 2),
                           ['main.holdMemory', '32.0 MiB']);
    assert.strictEqual(seen.based.opened, 'before.pb.gz against after.pb.gz');
    assert.match(seen.based.summary, /; -33\.\d+ MiB since the base, after/);
    assert.strictEqual(seen.two.opened, 'after.pb.gz against before.pb.gz');
    assert.strictEqual(seen.two.hold[3], '+32.0 MiB');
    assert.strictEqual(seen.bad.state, 'error');
    assert.match(seen.bad.error, /^notes\.txt: not a pprof profile: /);
    assert.ok(seen.live.opened, 'no file named');
    assert.ok(seen.live.base, 'no file to compare with');
    assert.match(seen.live.summary, / live in [\d,]+ objects/);

    // nothing asked of the server for the files: only Load's requests
    assert.deepStrictEqual(seen.requests.filter((u) => u.includes('heap')),
                           ['/malloc/pprof/heap.json']);
    assert.deepStrictEqual(server.asked, ['', '']);
});

test('at 800 px the panel stays beside a tall graph, in view',
     { skip }, async (t) => {
    const seen = await drive(serve({ stacks: 2000 }), '', `
    const box = (e) => e.getBoundingClientRect();

    // every frame its row: the graph as tall as its deepest stack
    $('#collapse').checked = false;
    $('#collapse').dispatchEvent(new Event('change'));
    // a scroll bar came: the graph is drawn again at its new width
    await new Promise((ok) => setTimeout(ok, 200));
    const f = MallocViewer.frames().find((x) => x.kind === 'frame'
                                                && x.y > 500);
    const c = $('#flame canvas');

    // a frame low in the graph, the page scrolled down to it
    scrollTo(0, scrollY + box(c).top + f.y - innerHeight / 2);
    c.dispatchEvent(new MouseEvent('mousemove', { bubbles: true,
        clientX: Math.ceil(box(c).left + f.x
                           + Math.max(0, Math.min(f.w / 2, 8) - 1)),
        clientY: box(c).top + f.y + 8 }));
    const d = box($('#detail')), g = box($('#flame'));
    return { width: innerWidth, graph: [g.left, g.right, g.height],
             detail: [d.left, d.right, d.top, d.bottom], height: innerHeight,
             name: $('#d-name').textContent, frame: f.name };`, {},
                             '800x900');

    t.diagnostic(JSON.stringify(seen));
    assert.strictEqual(seen.failed, undefined, seen.failed);
    const [gl, gr, gh] = seen.graph, [dl, dr, dt, db] = seen.detail;
    assert.ok(seen.width <= 800, 'an 800 px window');
    assert.ok(gh > seen.height / 2, 'a graph taller than half the window');
    assert.ok(dl >= gr && dr <= seen.width, 'the panel beside the graph');
    assert.ok(dt >= 0 && db <= seen.height, 'and in view');
    assert.strictEqual(seen.name, seen.frame, 'naming the frame hovered');
});
