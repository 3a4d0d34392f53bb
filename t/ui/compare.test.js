// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// A comparison the server judged (serve.js's judged: significant,
// margins and comparison as heap.json has them): each changed stack's
// interval at the comparison's confidence, in the panel and the top
// table, checked against the JSON itself, in chromium (t/ui/browse.js).
//
//     node --test t/ui/compare.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { serve } = require('./serve.js');
const { drive, skip } = require('./browse.js');

// "+17.5 MiB, 99%: 9.0 to 26.0 MiB" -> [change, lo, hi] in bytes, and
// half the last digit's worth in that unit
function parse(text) {
    const m = /^([+-]?[\d.]+) (B|KiB|MiB|GiB), 99%: (-?[\d.]+) to (-?[\d.]+) \2$/
        .exec(text);

    assert.ok(m, 'an interval: ' + text);

    const unit = 1024 ** ['B', 'KiB', 'MiB', 'GiB'].indexOf(m[2]);

    return { values: [m[1], m[3], m[4]].map((v) => Number(v) * unit),
             slack: unit === 1 ? 0.5 : unit * 0.05 + 1 };
}

function near(text, [change, margin], what) {
    const { values, slack } = parse(text);

    [change, change - margin, change + margin].forEach((want, k) =>
        assert.ok(Math.abs(values[k] - want) <= slack,
                  what + ': ' + text + ' against ' + want));
}

test('a judged comparison: each stack\'s interval, panel and table',
     { skip }, async (t) => {
    const seen = await drive(serve({ stacks: 2000, judged: true }),
                             '#base=snapshot-20261201T021814Z', `
    const seen = {};

    await tables();
    // the JSON the page drew: each leaf function's stacks beyond the
    // noise, their change and margin summed; each stack's path
    const p = await (await fetch('./pprof/heap.json?base='
                                 + 'snapshot-20261201T021814Z')).json();
    const parent = [], name = [];
    for (let i = 0; i < p.nodes.length / 2; i++) {
        name.push(p.names[p.nodes[2 * i]]);
        parent.push(p.nodes[2 * i + 1] === 0 ? -1 : i - p.nodes[2 * i + 1]);
    }
    const pathOf = (i) => (i === -1 ? [] : [...pathOf(parent[i]), name[i]]);
    const flat = {};
    const stacks = {};
    p.stacks.forEach((node, s) => {
        const d = p.values[s][0] - p.base_values[s][0];

        stacks[pathOf(node).join(' \\u2192 ')] = [d, p.margins[s],
                                                  p.significant[s]];
        if (p.significant[s] !== 0) {
            const f = flat[name[node]] || [0, 0];
            flat[name[node]] = [f[0] + d, f[1] + p.margins[s]];
        }
    });

    // the table, sorted by it: the largest growth beyond the noise first
    const heads = () => [...$('#top').tHead.rows[0].cells]
        .filter((th) => !th.hidden).map((th) => th.textContent);
    seen.heads = heads();
    $('#top th[data-key="sflat"]').click();
    const col = seen.heads.indexOf('flat beyond the noise') + 1;
    seen.rows = [...$('#top').tBodies[0].rows].slice(0, 3).map((tr) => [
        tr.cells[0].textContent, tr.cells[col].textContent,
        tr.cells[col].className, flat[tr.cells[0].textContent]]);
    // by name: the outer functions, which end no stack, have none
    $('#top th[data-key="name"]').click();
    seen.quiet = [...$('#top').tBodies[0].rows]
        .filter((tr) => flat[tr.cells[0].textContent] === undefined)
        .slice(0, 3).map((tr) => tr.cells[col].textContent);

    // the panel: the frame that ends the stack that grew most, zoomed
    // into its caller, so that it is wide
    const [most] = Object.entries(stacks).filter(([, v]) => v[2] === 1)
        .sort((a, b) => b[1][0] - a[1][0]);
    const names = most[0].split(' \u2192 ');
    const zoomed = new URLSearchParams(location.hash.slice(1));
    names.slice(0, -1).forEach((n) => zoomed.append('zoom', n));
    location.hash = '#' + zoomed;
    await until(() => frames().some((f) => has(f, 'focus')
                                            && f.name === names.at(-2)));
    const leaf = frames().find((f) => f.kind === 'frame'
        && f.name === names.at(-1) && f.y === frames().find(
            (g) => has(g, 'focus')).y + 18);
    at(leaf, 'mousemove');
    seen.leaf = { interval: $('#d-interval').textContent,
                  shown: !$('#d-interval-row').hidden,
                  path: $('#d-path').textContent === most[0],
                  stack: most[1] };
    // and its caller: the stacks through it
    at(frames().find((f) => has(f, 'focus')), 'mousemove');
    seen.caller = $('#d-interval').textContent;
    $('#reset').click();
    const root = frames()[0];
    at(root, 'mousemove');
    seen.root = { interval: $('#d-interval').textContent,
                  sum: Object.values(flat).reduce((a, f) => [a[0] + f[0],
                                                             a[1] + f[1]],
                                                  [0, 0]) };
    // a frame within the noise: none
    const same = frames().find((f) => f.kind === 'frame' && has(f, 'same')
                                      && f.w > 4);
    at(same, 'mousemove');
    seen.same = same ? [$('#d-interval-row').hidden,
                        $('#d-interval').textContent] : null;

    // objects: the margins are of bytes, so no interval
    $('#type').value = 'inuse_objects';
    $('#type').dispatchEvent(new Event('change'));
    await tables();
    at(frames()[0], 'mousemove');
    seen.objects = { heads: heads(),
                     panel: $('#d-interval-row').hidden };
    return seen;`);

    t.diagnostic(JSON.stringify(seen));
    assert.strictEqual(seen.failed, undefined, seen.failed);

    assert.ok(seen.heads.includes('flat beyond the noise'), seen.heads);
    for (const [name, text, cls, want] of seen.rows) {
        assert.ok(want !== undefined, name + ' ends a judged stack');
        assert.ok(want[0] > 0, name + ' grew');
        near(text, want, name);
        assert.strictEqual(cls, 'num interval grown');
    }
    assert.deepStrictEqual(seen.quiet, ['', '', ''],
                           'nothing beyond the noise: no interval');

    const [change, margin, sig] = seen.leaf.stack;
    assert.strictEqual(sig, 1, 'the stack grew beyond the noise');
    assert.ok(seen.leaf.shown && seen.leaf.path);
    assert.match(seen.leaf.interval, /^self \+/);
    near(seen.leaf.interval.replace(/^self /, ''), [change, margin],
         'the stack');
    assert.match(seen.caller, /^(self [^;]+; )?total [+-]/);
    near(seen.root.interval.replace(/^total /, ''), seen.root.sum, 'all');
    if (seen.same !== null) {
        assert.deepStrictEqual(seen.same, [true, '']);
    }
    assert.ok(!seen.objects.heads.includes('flat beyond the noise'));
    assert.ok(seen.objects.panel, 'objects: no interval in the panel');
});
