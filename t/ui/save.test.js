// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// Save page: one HTML file with the profile inside, saved in chromium
// from serve.js's stand-in (a judged comparison, a view chosen), then
// opened from file:// with no server: the same graph, views and tables,
// and not one request but the file's own (t/ui/cdp.js watches the
// network from the start).
//
//     node --test t/ui/save.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { serve } = require('./serve.js');
const { drive, skip } = require('./browse.js');

// what the page shows, the same in both
const LOOK = `
    const look = () => ({
        summary: $('#summary').textContent,
        view: $('#view').value,
        search: $('#search').value,
        match: $('#match').textContent,
        frames: frames().filter((f) => f.kind === 'frame').length,
        names: frames().filter((f) => f.kind === 'frame').slice(0, 40)
            .map((f) => f.name + ' ' + f.cls),
        top: [...$('#top').tBodies[0].rows].slice(0, 5)
            .map((tr) => tr.textContent),
        title: frames()[0].title });
`;

test('Save page: one file, opened from file:// with no server',
     { skip }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'malloc-save-'));
    const requests = path.join(dir, 'requests');
    const hash = '#base=snapshot-20261201T021814Z&view=allocators'
                 + '&search=ngx_fn_2';

    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));

    const saved = await drive(serve({ stacks: 2000, judged: true }), hash, `
    ${LOOK}
    await tables();
    const seen = { look: look(), enabled: !$('#save').disabled };
    $('#save').click();
    await until(() => /^saved /.test($('#status').textContent));
    seen.status = $('#status').textContent;
    return seen;`, { CDP_DOWNLOADS: dir });

    t.diagnostic(JSON.stringify(saved).slice(0, 2000));
    assert.strictEqual(saved.failed, undefined, saved.failed);
    assert.ok(saved.enabled, 'Save page, once a profile is drawn');

    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.html'));
    assert.strictEqual(files.length, 1, 'one file: ' + files);
    assert.match(files[0], /^nginx-heap-\d{8}T\d{6}Z\.html$/);
    assert.match(saved.status, new RegExp('^saved ' + files[0] + ', '));

    const file = path.join(dir, files[0]);
    const html = fs.readFileSync(file, 'utf8');

    // one file: no reference to another
    assert.doesNotMatch(html, /<script[^>]* src=|<link /);
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-[^']+' 'sha256-[^']+' 'sha256-[^']+' 'sha256-[^']+'; style-src 'sha256-[^']+';/);

    // opened from the file, with no server: the same view
    const opened = await drive(null, 'file://' + file, `
    ${LOOK}
    await tables();
    const seen = { look: look(), saved: document.body.dataset.saved,
                   note: $('#saved-note').textContent,
                   hash: location.hash,
                   errors: $('#error').textContent,
                   resources: performance.getEntriesByType('resource')
                       .map((e) => e.name),
                   live: [...document.querySelectorAll('.live, '
                       + '#seconds-choice, #snapshot-choice, #base-choice')]
                       .filter((e) => e.offsetParent !== null).length,
                   canvas: $('#flame canvas').width > 0 };
    // it works there: another view, a filter
    $('#view').value = 'callers';
    $('#view').dispatchEvent(new Event('change'));
    seen.callers = frames()[1].name;
    await typed('#focus', '^ngx_fn_2$');
    seen.focus = $('#focus-note').textContent;
    // the traffic needs the server: a fragment that asks for it is
    // the heap still
    location.hash = '#view=traffic';
    await new Promise((ok) => setTimeout(ok, 200));
    seen.traffic = [$('#traffic').hidden, $('#flame').hidden,
                    document.body.dataset.traffic || ''];
    return seen;`, { CDP_REQUESTS: requests });

    t.diagnostic(JSON.stringify(opened).slice(0, 2000));
    assert.strictEqual(opened.failed, undefined, opened.failed);
    assert.deepStrictEqual(opened.look, saved.look, 'the same view');
    assert.ok(opened.look.frames > 100 && opened.canvas, 'the graph drew');
    assert.match(opened.look.summary, / since the base, /);
    assert.ok(opened.look.names.some((n) => / grown d\d/.test(n)),
              'a comparison, painted');
    assert.match(opened.saved, /^\d{4}-\d\d-\d\dT/);
    assert.match(opened.note, /^A saved page: the profile as the heap viewer showed it on \d{4}-\d\d-\d\d \d\d:\d\d UTC\. It asks no server/);
    assert.strictEqual(opened.hash, hash);
    assert.strictEqual(opened.errors, '');
    assert.strictEqual(opened.live, 0, 'nothing that needs the server');
    assert.deepStrictEqual(opened.resources, []);
    assert.strictEqual(opened.callers, 'main');
    assert.match(opened.focus, /^focus keeps [\d,]+ of 2,001 stacks, /);
    assert.deepStrictEqual(opened.traffic, [true, false, '']);

    // the network saw the file itself and nothing else
    const asked = fs.readFileSync(requests, 'utf8').split('\n')
        .filter((u) => u !== '');
    assert.deepStrictEqual(asked, ['file://' + file]);
});
