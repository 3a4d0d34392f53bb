// The heap viewer's pure half (ui/flame.js), with node's own test runner:
//
//     node --test t/ui/*.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');

const F = require(path.join(__dirname, '..', '..', 'ui', 'flame.js'));
const { synthetic } = require('./serve.js');

// a profile as pprof/heap.json gives it: stacks root first
function profile(stacks, alloc) {
    const names = [];
    const at = new Map();
    const types = ['inuse_space', 'inuse_objects'];

    if (alloc) {
        types.push('alloc_space', 'alloc_objects');
    }

    const index = (name) => {
        if (!at.has(name)) {
            at.set(name, names.length);
            names.push(name);
        }
        return at.get(name);
    };

    return {
        period: 524288,
        seconds: 0,
        types,
        names,
        stacks: stacks.map(([frames]) => frames.split(' ').map(index)),
        values: stacks.map(([, bytes, objects]) =>
            alloc ? [bytes, objects, bytes * 2, objects * 2]
                  : [bytes, objects]),
    };
}

const SMALL = profile([
    ['main worker ngx_palloc', 600, 6],
    ['main worker ngx_palloc ngx_alloc', 100, 1],
    ['main worker ngx_pcalloc', 200, 2],
    ['main master ngx_palloc', 100, 1],
]);

test('tree totals add up from the leaves', () => {
    const tree = F.buildTree(SMALL, 0);

    assert.strictEqual(tree.name, 'all');
    assert.strictEqual(tree.total, 1000);
    assert.strictEqual(tree.count, 10);

    const main = F.find(tree, ['main']);
    assert.strictEqual(main.total, 1000);
    assert.strictEqual(main.self, 0);

    const worker = F.find(tree, ['main', 'worker']);
    assert.strictEqual(worker.total, 900);
    // widest child first
    assert.deepStrictEqual(worker.children.map((c) => c.name),
                           ['ngx_palloc', 'ngx_pcalloc']);

    const palloc = F.find(tree, ['main', 'worker', 'ngx_palloc']);
    assert.strictEqual(palloc.total, 700);
    assert.strictEqual(palloc.self, 600);
    assert.strictEqual(palloc.count, 7);
    assert.deepStrictEqual(F.pathOf(palloc), ['main', 'worker', 'ngx_palloc']);

    // every node: total is self plus the children's totals
    (function walk(n) {
        const sum = n.children.reduce((s, c) => s + c.total, n.self);
        assert.strictEqual(n.total, sum, n.name);
        n.children.forEach(walk);
    })(tree);
});

test('the alloc types and the objects that go with them', () => {
    const p = profile([['main a', 100, 1], ['main b', 300, 3]], true);
    const ti = p.types.indexOf('alloc_space');

    assert.strictEqual(F.countIndex(p, ti), p.types.indexOf('alloc_objects'));

    const tree = F.buildTree(p, ti);
    assert.strictEqual(tree.total, 800);
    assert.strictEqual(tree.count, 8);
});

test('a name listed twice makes one frame; bad data throws', () => {
    const p = {
        types: ['inuse_space', 'inuse_objects'],
        names: ['main', 'f', 'f'],
        stacks: [[0, 1], [0, 2]],
        values: [[10, 1], [30, 1]],
    };
    const tree = F.buildTree(p, 0);

    assert.strictEqual(tree.children[0].children.length, 1);
    assert.strictEqual(tree.children[0].children[0].total, 40);

    assert.throws(() => F.buildTree({ types: [] }, 0));
    assert.throws(() => F.buildTree({ ...p, stacks: [[0, 7], [0]] }, 0),
                  /names no function/);
});

test('values that are not positive are left out', () => {
    const p = profile([['main a', 100, 1], ['main b', 0, 0],
                       ['main c', -50, -1]]);
    const tree = F.buildTree(p, 0);

    assert.strictEqual(tree.total, 100);
    assert.deepStrictEqual(tree.children[0].children.map((c) => c.name),
                           ['a']);
    assert.deepStrictEqual(F.top(p, 0).map((r) => r.name), ['a', 'main']);
});

test('top: flat is the last frame, cum counts a function once per stack',
     () => {
    const p = profile([
        ['main parse parse parse alloc', 100, 1],
        ['main parse alloc', 50, 1],
        ['main other', 20, 1],
    ]);
    const rows = F.top(p, 0);
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));

    assert.deepStrictEqual(by.parse, { name: 'parse', flat: 0, cum: 150 });
    assert.deepStrictEqual(by.alloc, { name: 'alloc', flat: 150, cum: 150 });
    assert.deepStrictEqual(by.main, { name: 'main', flat: 0, cum: 170 });
    assert.deepStrictEqual(by.other, { name: 'other', flat: 20, cum: 20 });

    // flat, largest first, then by name
    assert.deepStrictEqual(rows.map((r) => r.name),
                           ['alloc', 'other', 'main', 'parse']);

    F.sortRows(rows, 'cum', true);
    assert.deepStrictEqual(rows.map((r) => r.name),
                           ['main', 'alloc', 'parse', 'other']);

    F.sortRows(rows, 'name', false);
    assert.deepStrictEqual(rows.map((r) => r.name),
                           ['alloc', 'main', 'other', 'parse']);
});

test('layout: root spans the width, tiny frames are left out', () => {
    const p = profile([
        ['main big', 999000, 1],
        ['main tiny', 100, 1],      // 0.1 px at 1000 px
        ['main tiny deeper', 100, 1],
    ]);
    const tree = F.buildTree(p, 0);
    const frames = F.layout(tree, [], 1000);
    const names = frames.map((f) => f.node.name);

    assert.deepStrictEqual(frames[0], { x: 0, w: 1000, depth: 0,
                                        node: tree, ancestor: false });
    assert.ok(names.includes('big'));
    assert.ok(!names.includes('tiny'));
    assert.ok(!names.includes('deeper'));
    assert.ok(frames.every((f) => f.w >= 0.5));

    const big = frames.find((f) => f.node.name === 'big');
    assert.strictEqual(big.depth, 2);
    assert.ok(Math.abs(big.w - 999000 / 999200 * 1000) < 1e-9);

    // at a larger width (or a lower minPx) they show
    assert.ok(F.layout(tree, [], 1000, { minPx: 0.05 })
        .some((f) => f.node.name === 'tiny'));

    // the cap keeps the widest, never a child without its parent
    const capped = F.layout(tree, [], 1000, { minPx: 0.01, cap: 3 });
    assert.deepStrictEqual(capped.map((f) => f.node.name),
                           ['all', 'main', 'big']);
});

test('zoom: the focus spans the width, its ancestors stay above it', () => {
    const tree = F.buildTree(SMALL, 0);
    const frames = F.layout(tree, ['main', 'worker', 'ngx_palloc'], 700);

    assert.deepStrictEqual(
        frames.map((f) => [f.node.name, f.depth, f.x, f.w, f.ancestor]),
        [['all', 0, 0, 700, true],
         ['main', 1, 0, 700, true],
         ['worker', 2, 0, 700, true],
         ['ngx_palloc', 3, 0, 700, false],
         ['ngx_alloc', 4, 0, 100, false]]);

    // pcalloc and the master's frames are outside the zoom
    assert.ok(!frames.some((f) => f.node.name === 'ngx_pcalloc'));

    // a path the data lost stops where it still exists
    assert.strictEqual(F.find(tree, ['main', 'gone', 'x']).name, 'main');
    assert.strictEqual(F.layout(tree, ['main', 'gone'], 100)[1].w, 100);
});

test('search: case-insensitive, share counts nested matches once', () => {
    const tree = F.buildTree(SMALL, 0);

    let r = F.search(tree, 'NGX_P');
    assert.deepStrictEqual([...r.names].sort(), ['ngx_palloc', 'ngx_pcalloc']);
    assert.strictEqual(r.total, 1000);   // 700 + 200 + 100
    assert.strictEqual(r.share, 1);

    // ngx_alloc (100) sits below ngx_palloc (700): 1000 in all, not 1100
    r = F.search(tree, 'alloc');
    assert.ok(r.names.has('ngx_alloc'));
    assert.strictEqual(r.total, 1000);

    r = F.search(tree, 'master');
    assert.strictEqual(r.total, 100);
    assert.strictEqual(r.share, 0.1);

    r = F.search(tree, 'nothing');
    assert.strictEqual(r.total, 0);
    assert.strictEqual(r.names.size, 0);

    // the root is no function
    const other = F.buildTree(profile([['main f', 10, 1]]), 0);
    assert.strictEqual(F.search(other, 'all').total, 0);
    assert.strictEqual(F.search(tree, '').names.size, 0);
});

// a comparison as pprof/heap.json?base= gives it: rows [now, then]
function compared(stacks) {
    const p = profile(stacks.map(([frames, now]) => [frames, now, 1]));

    p.base_values = stacks.map(([, , then]) => [then, 1]);
    return p;
}

const COMPARED = compared([
    ['main worker grows', 700, 100],
    ['main worker shrinks', 100, 400],
    ['main worker same', 200, 200],
    ['main new', 50, 0],
    ['main worker old', 0, 300],    // gone: only the base has it
    ['main old2 deeper', 0, 30],    // gone, a whole branch
]);

test('a comparison: widths by now, each node knows its base', () => {
    const tree = F.buildTree(COMPARED, 0);

    assert.strictEqual(tree.total, 1050);
    assert.strictEqual(tree.base, 1030);
    // objects count now only: a gone stack adds none
    assert.strictEqual(tree.count, 4);

    const worker = F.find(tree, ['main', 'worker']);
    assert.strictEqual(worker.total, 1000);
    assert.strictEqual(worker.base, 1000);
    assert.strictEqual(F.find(tree, ['main', 'new']).base, 0);

    // a gone node is in the tree with nothing now, and sorts last
    const old = F.find(tree, ['main', 'worker', 'old']);
    assert.strictEqual(old.name, 'old');
    assert.strictEqual(old.total, 0);
    assert.strictEqual(old.base, 300);
    assert.strictEqual(worker.children[worker.children.length - 1], old);

    // ... and is never drawn, at any width or zoom
    for (const path of [[], ['main'], ['main', 'worker']]) {
        const names = F.layout(tree, path, 1000, { minPx: 0 })
            .map((f) => f.node.name);
        assert.ok(!names.includes('old') && !names.includes('old2'));
        assert.ok(!names.includes('deeper'));
    }

    // every node: total and base add up from the children
    (function walk(n) {
        const sum = (key) => n.children.reduce((s, c) => s + c[key], 0);
        assert.ok(n.total >= sum('total') && n.base >= sum('base'), n.name);
        n.children.forEach(walk);
    })(tree);

    assert.throws(() => F.buildTree({ ...COMPARED, base_values: [[1, 1]] },
                                    0), /base row/);
    assert.throws(() => F.buildTree({ ...COMPARED, base_values: 7 }, 0),
                  /base row/);
});

test('a comparison: grown, shrunk and the same, by the largest change',
     () => {
    const tree = F.buildTree(COMPARED, 0);
    const largest = F.largestChange(tree);
    const cls = (path) => {
        const n = F.find(tree, path);
        return F.changeClass(n.total - n.base, largest);
    };

    // grows: +600, the largest change of a function's own bytes
    assert.strictEqual(largest, 600);
    assert.strictEqual(cls(['main', 'worker', 'grows']), 'grown d5');
    assert.strictEqual(cls(['main', 'worker', 'shrinks']), 'shrunk d3');
    assert.strictEqual(cls(['main', 'worker', 'same']), 'same');
    assert.strictEqual(cls(['main', 'new']), 'grown d1');
    // worker: +600 -300 -300 = 0, though much changed below it
    assert.strictEqual(cls(['main', 'worker']), 'same');
    assert.strictEqual(cls([]), 'grown d1');          // +20

    // a caller of two changes is as deep as the largest, not paler
    const two = F.buildTree(compared([['main a', 200, 100],
                                      ['main b', 150, 100]]), 0);
    const main = F.find(two, ['main']);
    assert.strictEqual(F.largestChange(two), 100);
    assert.strictEqual(F.changeClass(main.total - main.base,
                                     F.largestChange(two)), 'grown d5');
    assert.strictEqual(F.find(two, ['main', 'b']).bself, 100);

    // the depth: 1 to 5, never 0 for a change however small
    assert.strictEqual(F.changeClass(1, 1e9), 'grown d1');
    assert.strictEqual(F.changeClass(-1e9, 1e9), 'shrunk d5');
    assert.strictEqual(F.changeClass(-4e8, 1e9), 'shrunk d2');
    assert.strictEqual(F.changeClass(0, 1e9), 'same');
    assert.strictEqual(F.changeClass(5, 0), 'same');  // nothing changed
});

test('a comparison judged: only changes beyond the noise are painted',
     () => {
    const p = profile([
        ['main conf churn', 3000, 30],
        ['main conf leak', 900, 9],
    ]);

    p.base_values = [[2000, 20], [100, 1]];
    p.significant = [0, 1];

    const tree = F.buildTree(p, 0);
    const conf = F.find(tree, ['main', 'conf']);
    const churn = conf.children.find((n) => n.name === 'churn');
    const leak = conf.children.find((n) => n.name === 'leak');

    assert.strictEqual(churn.total - churn.base, 1000);
    assert.strictEqual(churn.sig, 0, 'the churn is noise: not painted');
    assert.strictEqual(F.changeClass(churn.sig, F.largestChange(tree)),
                       'same');
    assert.strictEqual(leak.sig, 800);
    assert.strictEqual(conf.sig, 800, 'callers carry only the leak');
    assert.strictEqual(F.largestChange(tree), 800);
    assert.match(F.changeClass(leak.sig, F.largestChange(tree)), /^grown d5$/);

    /* without a judgement, every change counts, as before */
    delete p.significant;
    assert.strictEqual(F.largestChange(F.buildTree(p, 0)), 1000);
});

test('a comparison: what is gone, outermost first, largest first', () => {
    const tree = F.buildTree(COMPARED, 0);
    const gone = F.gone(tree);

    assert.deepStrictEqual(gone.map((n) => [F.pathOf(n), n.base]),
                           [[['main', 'worker', 'old'], 300],
                            [['main', 'old2'], 30]]);     // not "deeper"
    assert.deepStrictEqual(F.gone(F.buildTree(SMALL, 0)), []);
});

test('a comparison: the top table has the changes', () => {
    const rows = F.top(COMPARED, 0);
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));

    assert.deepStrictEqual(by.grows, { name: 'grows', flat: 700, cum: 700,
                                       dflat: 600, dcum: 600 });
    assert.deepStrictEqual(by.worker, { name: 'worker', flat: 0, cum: 1000,
                                        dflat: 0, dcum: 0 });
    assert.deepStrictEqual(by.main, { name: 'main', flat: 0, cum: 1050,
                                      dflat: 0, dcum: 20 });
    // gone: a row of nothing now, and its loss
    assert.deepStrictEqual(by.old, { name: 'old', flat: 0, cum: 0,
                                     dflat: -300, dcum: -300 });
    assert.deepStrictEqual(by.deeper, { name: 'deeper', flat: 0, cum: 0,
                                        dflat: -30, dcum: -30 });

    F.sortRows(rows, 'dflat', false);
    assert.deepStrictEqual(rows.slice(0, 3).map((r) => r.name),
                           ['old', 'shrinks', 'deeper']);   // -300 both
    F.sortRows(rows, 'dcum', true);
    assert.deepStrictEqual(rows.slice(0, 2).map((r) => r.name),
                           ['grows', 'new']);

    // without a base, rows have no changes
    assert.deepStrictEqual(Object.keys(F.top(SMALL, 0)[0]),
                           ['name', 'flat', 'cum']);
});

test('the choices of the fragment, and their query', () => {
    const c = (hash) => F.choices(new URLSearchParams(hash));
    const none = { pid: '', seconds: 0, snapshot: '', base: '' };

    assert.deepStrictEqual(c(''), none);
    assert.deepStrictEqual(c('pid=12&seconds=30'),
                           { ...none, pid: '12', seconds: 30 });
    // snapshots are of all workers: a comparison takes no pid
    assert.deepStrictEqual(c('base=snapshot-20261201T031814Z&pid=7'),
        { ...none, base: 'snapshot-20261201T031814Z' });
    // a snapshot takes no pid and no seconds; a growth no base
    assert.deepStrictEqual(c('snapshot=s1&base=s0&pid=7&seconds=5'),
                           { ...none, snapshot: 's1', base: 's0' });
    assert.deepStrictEqual(c('seconds=5&base=s0'), { ...none, seconds: 5 });
    assert.deepStrictEqual(c('snapshot=s0&base=s0'),
                           { ...none, snapshot: 's0' });
    assert.deepStrictEqual(c('seconds=x'), none);
    assert.deepStrictEqual(c('seconds=-3'), none);

    assert.strictEqual(F.query(none), '');
    assert.strictEqual(F.query({ snapshot: 'snapshot-a b', base: 's0' }),
                       '?snapshot=snapshot-a%20b&base=s0');
    assert.strictEqual(F.query(c('pid=7&base=s0')), '?base=s0');
});

test('snapshots are offered by time, a file per worker in one', () => {
    const list = [
        { name: 'snapshot-20261201T031814Z.pb.gz' },
        { name: 'snapshot-20261201T021814Z.2051.heap' },
        { name: 'snapshot-20261201T021814Z.2052.heap' },
        { name: 'snapshot-by-hand.pb.gz' },
    ];

    assert.deepStrictEqual(F.snapshotTimes(list), [
        { name: 'snapshot-20261201T031814Z',
          files: ['snapshot-20261201T031814Z.pb.gz'] },
        { name: 'snapshot-20261201T021814Z',
          files: ['snapshot-20261201T021814Z.2051.heap',
                  'snapshot-20261201T021814Z.2052.heap'] },
        { name: 'snapshot-by-hand.pb.gz',
          files: ['snapshot-by-hand.pb.gz'] }]);
    assert.deepStrictEqual(F.snapshotTimes(undefined), []);
    // a reload's, a growth's or a peak's snapshot stands alone
    assert.deepStrictEqual(F.snapshotTimes([
        { name: 'snapshot-20261201T031814Z.pb.gz', reason: 'schedule' },
        { name: 'snapshot-20261201T031814Z.reload.heap', reason: 'reload' }]),
        [{ name: 'snapshot-20261201T031814Z',
           files: ['snapshot-20261201T031814Z.pb.gz'] },
         { name: 'snapshot-20261201T031814Z.reload.heap',
           files: ['snapshot-20261201T031814Z.reload.heap'] }]);
    assert.strictEqual(F.snapshotLabel('snapshot-20261201T031814Z.peak.pb.gz'),
                       '2026-12-01 03:18:14 UTC, peak');

    assert.strictEqual(F.snapshotLabel('snapshot-20261201T031814Z'),
                       '2026-12-01 03:18:14 UTC');
    assert.strictEqual(F.snapshotLabel('snapshot-20261201T031814Z.pb.gz'),
                       '2026-12-01 03:18:14 UTC');
    assert.strictEqual(F.snapshotLabel('snapshot-by-hand.pb.gz'),
                       'snapshot-by-hand.pb.gz');
});

test('formats and the query string', () => {
    assert.strictEqual(F.formatBytes(0), '0 B');
    assert.strictEqual(F.formatBytes(1023), '1023 B');
    assert.strictEqual(F.formatBytes(1536), '1.50 KiB');
    assert.strictEqual(F.formatBytes(524288), '512 KiB');
    assert.strictEqual(F.formatBytes(66623724), '63.5 MiB');
    assert.strictEqual(F.formatBytes(-2048), '-2.00 KiB');
    assert.strictEqual(F.formatShare(1, 3), '33.3%');
    assert.strictEqual(F.formatShare(1, 100000), '<0.1%');
    assert.strictEqual(F.formatShare(5, 0), '0.0%');
    assert.strictEqual(F.formatCount(1234567), '1,234,567');
    assert.strictEqual(F.formatCount(12), '12');
    assert.match(F.colorOf('ngx_palloc'), /^c[0-7]$/);
    assert.strictEqual(F.colorOf('x'), F.colorOf('x'));
    assert.strictEqual(F.formatDelta(1536), '+1.50 KiB');
    assert.strictEqual(F.formatDelta(-2048), '-2.00 KiB');
    assert.strictEqual(F.formatDelta(0), '0 B');
    assert.strictEqual(F.query({}), '');
    assert.strictEqual(F.query({ pid: '12', seconds: 0 }), '?pid=12');
    assert.strictEqual(F.query({ pid: '', seconds: 30 }), '?seconds=30');
    assert.strictEqual(F.query({ pid: 7, seconds: 5 }), '?pid=7&seconds=5');
});

test('50k stacks: built, laid out and searched quickly', (t) => {
    const p = synthetic(50000);
    const t0 = process.hrtime.bigint();
    const tree = F.buildTree(p, 0);
    const t1 = process.hrtime.bigint();
    const frames = F.layout(tree, [], 1200);
    const t2 = process.hrtime.bigint();
    const rows = F.top(p, 0);
    const t3 = process.hrtime.bigint();
    const found = F.search(tree, 'fn_12');
    const t4 = process.hrtime.bigint();
    const ms = (a, b) => (Number(b - a) / 1e6).toFixed(1) + ' ms';

    t.diagnostic(`buildTree ${ms(t0, t1)}, layout ${ms(t1, t2)} `
                 + `(${frames.length} frames), top ${ms(t2, t3)}, `
                 + `search ${ms(t3, t4)}`);

    const sum = p.values.reduce((s, v) => s + v[0], 0);
    assert.strictEqual(tree.total, sum);
    assert.ok(frames.length > 0 && frames.length <= 4000);
    assert.ok(frames.every((f) => f.w >= 0.5 && f.x + f.w <= 1200 + 1e-6));
    assert.ok(rows.length > 1000);
    assert.ok(found.share > 0 && found.share <= 1);

    // zoomed into the widest path, the frames stay within the width
    const path = F.pathOf(tree.children[0].children[0]);
    const zoomed = F.layout(tree, path, 1200);
    assert.ok(zoomed.every((f) => f.x + f.w <= 1200 + 1e-6));
    assert.strictEqual(zoomed[path.length].node, F.find(tree, path));
});
