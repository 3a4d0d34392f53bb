// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// The page's reader of pprof files (ui/pprof.js): profile.proto as
// written here field by field, and as Go writes it (t/ui/goprof.js),
// into the form of pprof/heap.json that flame.js draws.
//
//     node --test t/ui/*.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const zlib = require('node:zlib');
const P = require('../../ui/pprof.js');
const F = require('../../ui/flame.js');
const { goProfiles } = require('./goprof.js');

// protobuf's wire format, just enough to write profiles: a varint of a
// Number or a BigInt (two's complement for a negative int64)
function varint(n) {
    let v = BigInt.asUintN(64, BigInt(n));
    const out = [];

    do {
        let b = Number(v & 0x7fn);

        v >>= 7n;
        if (v !== 0n) {
            b |= 0x80;
        }
        out.push(b);
    } while (v !== 0n);
    return out;
}
const tag = (field, wire) => varint(field * 8 + wire);
const num = (field, n) => [...tag(field, 0), ...varint(n)];
const bytes = (field, b) => [...tag(field, 2), ...varint(b.length), ...b];
const msg = (field, ...parts) => bytes(field, parts.flat());
const packed = (field, list) => bytes(field, list.flatMap(varint));
const str = (field, s) => bytes(field, [...Buffer.from(s, 'utf8')]);

// strings: 0 "", 1 inuse_objects, 2 count, 3 inuse_space, 4 bytes,
// 5 main, 6 hold, 7 inlined, 8 /usr/sbin/nginx, 9 libc.so.6, 10 space,
// 11 _Z4holdv, 12 ngx_http_lua_module.so
const STRINGS = ['', 'inuse_objects', 'count', 'inuse_space', 'bytes',
                 'main', 'hold', 'inlined', '/usr/sbin/nginx',
                 '/lib/libc.so.6', 'space', '_Z4holdv',
                 '/usr/lib/nginx/modules/ngx_http_lua_module.so'];

// main -> hold (with "inlined" inlined into it) -> an address no
// function names; a second stack main -> hold; a negative value
// (pprof -diff_base writes them) on a third.  Samples in both
// encodings of a repeated number: packed, and one by one.
function profile({ scale = 1, strings = STRINGS } = {}) {
    return Uint8Array.from([
        ...msg(1, num(1, 1), num(2, 2)),
        ...msg(1, num(1, 3), num(2, 4)),
        ...msg(2, packed(1, [3, 2, 1]), packed(2, [2, 1024 * scale])),
        ...msg(2, num(1, 2), num(1, 1), num(2, 1), num(2, 2 ** 40)),
        ...msg(2, packed(1, [4]), packed(2, [-1, -512])),
        ...msg(3, num(1, 1), num(2, 0x400000), num(5, 8), num(7, 1)),
        ...msg(3, num(1, 2), num(2, 2 ** 47 + 0x1000), num(5, 9)),
        ...msg(3, num(1, 3), num(2, 0x7f0000000000), num(5, 12)),
        ...msg(4, num(1, 1), num(2, 1), num(3, 0x401000),
               msg(4, num(1, 1), num(2, 10))),
        ...msg(4, num(1, 2), num(2, 1), num(3, 0x402000),
               msg(4, num(1, 3)), msg(4, num(1, 2))),
        ...msg(4, num(1, 3), num(2, 2), num(3, 2 ** 47 + 0x1234)),
        ...msg(4, num(1, 4), num(2, 3), msg(4, num(1, 4))),
        ...msg(5, num(1, 1), num(2, 5)),
        ...msg(5, num(1, 2), num(2, 6), num(3, 11)),
        ...msg(5, num(1, 3), num(2, 7)),
        ...msg(5, num(1, 4), num(2, 0), num(3, 6)),
        ...strings.flatMap((s) => str(6, s)),
        ...num(9, 1764633600n * 1000000000n),
        ...msg(11, num(1, 10), num(2, 4)),
        ...num(12, 524288),
        ...num(14, 3),
    ]);
}

test('profile.proto: samples, locations, functions, mappings, strings',
     () => {
    const p = P.decode(profile());

    assert.deepStrictEqual(p.sampleType, [{ type: 1, unit: 2 },
                                          { type: 3, unit: 4 }]);
    assert.deepStrictEqual(p.samples.map((s) => s.loc), [[3, 2, 1], [2, 1],
                                                         [4]]);
    // past 2^32, and negative: ten bytes of two's complement
    assert.deepStrictEqual(p.samples.map((s) => s.value),
                           [[2, 1024], [1, 2 ** 40], [-1, -512]]);
    assert.deepStrictEqual(p.locations[2].address, '800000001234');
    assert.deepStrictEqual(p.locations[1].lines, [3, 2]);
    assert.strictEqual(p.period, 524288);
    assert.strictEqual(p.strings[12], STRINGS[12]);
});

test('into heap.json\'s form: inlined frames, addresses, files', () => {
    const h = P.toHeap(P.decode(profile()));

    assert.deepStrictEqual(h.types, ['inuse_objects', 'inuse_space']);
    assert.deepStrictEqual(h.units, ['count', 'bytes']);
    assert.deepStrictEqual(h.period_type, { type: 'space', unit: 'bytes' });
    assert.strictEqual(h.default_type, 'inuse_space');
    // the inlined function below the one it is inlined into; an
    // address that no function names, as pprof shows it; a function
    // with no name but its symbol
    assert.deepStrictEqual([...h.names].sort(), ['0x800000001234', 'hold',
                                                 'inlined', 'main']);
    assert.strictEqual(h.raw[h.names.indexOf('hold')], '_Z4holdv');
    assert.deepStrictEqual(h.files, [
        { path: '/usr/sbin/nginx', kind: 'binary' },
        { path: '/lib/libc.so.6', kind: 'library' },
        { path: '/usr/lib/nginx/modules/ngx_http_lua_module.so',
          kind: 'module' }]);
    assert.strictEqual(h.name_files[h.names.indexOf('0x800000001234')], 1);

    const t = F.buildTree(h, 1);
    const at = (...path) => F.find(t, path);

    assert.strictEqual(t.total[0], 1024 + 2 ** 40, 'the negative is 0');
    assert.strictEqual(t.self[at('main', 'hold', 'inlined',
                                 '0x800000001234')], 1024);
    assert.strictEqual(t.self[at('main', 'hold', 'inlined')], 2 ** 40);
    assert.strictEqual(t.count[0], 3);
    assert.deepStrictEqual(F.pathOf(t, at('main', 'hold', 'inlined')),
                           ['main', 'hold', 'inlined']);
});

test('two files: the second is the base, stacks matched by names', () => {
    const h = P.toHeap(P.decode(profile({ scale: 3 })),
                       P.decode(profile()));
    const t = F.buildTree(h, 1);
    const leaf = F.find(t, ['main', 'hold', 'inlined', '0x800000001234']);

    assert.strictEqual(h.base_values.length, h.values.length);
    assert.strictEqual(t.total[leaf] - t.base[leaf], 2048);
    assert.strictEqual(t.sig[leaf], 2048, 'no noise test: all of it counts');
    assert.strictEqual(t.total[0] - t.base[0], 2048);
});

test('what is not a profile says so', async () => {
    assert.throws(() => P.decode(Uint8Array.from([0x0a, 0x05, 1])),
                  /^Error: not a pprof profile: a message cut short/);
    assert.throws(() => P.decode(profile({ strings: ['x'] })),
                  /string table does not start with ""/);
    assert.throws(() => P.decode(Uint8Array.from([0x07])),
                  /not a pprof profile: field 0/);
    // gzip's own check: a cut .pb.gz
    const gz = zlib.gzipSync(profile());
    await assert.rejects(P.read(new Blob([gz.subarray(0, gz.length - 9)])),
                         /not a pprof profile: its gzip is broken/);
    assert.strictEqual(P.decode(await P.bytesOf(new Blob([gz]))).period,
                       524288);
    // a plain .pb as it is
    assert.strictEqual((await P.read(new Blob([profile()]))).period, 524288);
});

test('a Go program\'s heap, through go tool pprof -proto', (t) => {
    const go = goProfiles();

    if (go.skip) {
        t.skip(go.skip);
        return;
    }
    t.after(() => fs.rmSync(go.dir, { recursive: true, force: true }));

    const read = (file) => P.decode(zlib.gunzipSync(fs.readFileSync(file)));
    const h = P.toHeap(read(go.after));
    const space = h.types.indexOf('inuse_space');
    const objects = h.types.indexOf('inuse_objects');
    const row = (rows, name) => rows.find((r) => r.name === name);

    assert.deepStrictEqual(h.types, ['alloc_objects', 'alloc_space',
                                     'inuse_objects', 'inuse_space']);
    // the program first; a newer Go maps libraries too (the vDSO, libc)
    assert.strictEqual(h.files[0].kind, 'program');
    assert.ok(h.files.slice(1).every((f) => f.kind === 'library'),
              h.files.map((f) => f.kind).join(' '));
    // every allocation sampled: 64 blocks of 1 MiB (and, at times, a
    // few bytes that Go's runtime credits to the function)
    const near = (v, n) => assert.ok(v >= n && v < n + 1024, v + ' ' + n);

    near(row(F.top(h, space), 'main.holdMemory').flat, 64 << 20);
    assert.ok(row(F.top(h, objects), 'main.holdMemory').flat >= 64);
    assert.ok(F.pathOf(F.buildTree(h, space),
                       F.buildTree(h, space).n - 1).length > 0);

    // the second against the first: 32 MiB more, the other site new
    const d = P.toHeap(read(go.after), read(go.before));
    const rows = F.top(F.buildTree(d, space));

    near(row(rows, 'main.holdMemory').dflat, 32 << 20);
    near(row(rows, 'main.otherSite').dflat, 1 << 20);
});
