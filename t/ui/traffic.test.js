// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// The traffic view's pure half (ui/traffic.js) on a real nginx's answer
// of GET traffic (traffic.json: two workers, ten requests held):
//
//     node --test t/ui/*.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');

const T = require(path.join(__dirname, '..', '..', 'ui', 'traffic.js'));
const SAMPLE = require('./traffic.json');

// a row's cells as the page shows them: their text
const texts = (row) => row.map((c) => (typeof c === 'object' ? c.text : c));

test('HTTP versions as nginx numbers them', () => {
    assert.deepStrictEqual([9, 1000, 1001, 2000, 3000].map(T.httpVersion),
                           ['HTTP/0.9', 'HTTP/1.0', 'HTTP/1.1', 'HTTP/2',
                            'HTTP/3']);
    assert.strictEqual(T.httpVersion(undefined), '-');
    assert.strictEqual(T.httpVersion(0), '-');
});

test('the mean of finished requests; none finished: none', () => {
    assert.strictEqual(T.mean({ count: 4, sum: 10240, max: 4096 }), 2560);
    assert.strictEqual(T.mean({ count: 0, sum: 0, max: 0 }), null);
    assert.strictEqual(T.mean(undefined), null);
});

test('ages in ms, s, then min', () => {
    assert.deepStrictEqual([0, 504, 1500, 61000, 3 * 3600e3]
                               .map(T.formatAge),
                           ['0 ms', '504 ms', '1.5 s', '1 min 1 s', '3 h']);
    assert.strictEqual(T.formatAge(undefined), '-');
});

test('the figures: traffic, allocated, connections, requests', () => {
    assert.deepStrictEqual(T.totalsRows(SAMPLE), [
        ['in-flight traffic', '9.09 MiB, 82.8% of the allocated bytes'],
        ['allocated', '11.0 MiB (jemalloc)'],
        ['connections', '10'],
        ['requests', '10 in flight, holding 9.09 MiB'],
        ['workers', '2 of 2 answered, the longest walk 0.1 ms'],
    ]);

    // TLS and QUIC said; no allocator's figure: none made up
    const j = { totals: { bytes: 4096, allocated: null, connections: 3,
                          tls_connections: 2, quic_connections: 1,
                          requests: { n: 1, bytes: 4096 } },
                workers: [{ worker: 0, error: { text: 'x' } }] };
    assert.deepStrictEqual(T.totalsRows(j).map(([, v]) => v), [
        '4.00 KiB', '-', '3, of them 2 TLS and 1 QUIC',
        '1 in flight, holding 4.00 KiB', '0 of 1 answered']);
});

test('by state: every state in order, then HTTP/2 and the others', () => {
    const rows = T.stateRows(SAMPLE);

    assert.deepStrictEqual(rows.map((r) => r[0].text), [
        'reading_request', 'reading_body', 'processing', 'upstream',
        'sending', 'upgraded', 'keepalive', 'waiting', 'closing', 'http2',
        'other']);
    assert.deepStrictEqual(texts(rows[1]), ['reading_body', '3', '3.03 MiB',
                                            '33.3%']);
    assert.deepStrictEqual(texts(rows[2]), ['processing', '7', '6.06 MiB',
                                            '66.7%']);
    assert.strictEqual(rows[2][0].title, 'in a handler, with no upstream');
    // an empty state is muted; figures right-aligned
    assert.deepStrictEqual(rows.map((r) => r.cls),
                           ['none', '', '', 'none', 'none', 'none', 'none',
                            'none', 'none', 'none', 'none']);
    assert.ok(rows.every((r) => r.slice(1).every((c) => c.cls === 'num')));
    assert.match(rows[9][0].title, /^HTTP\/2 connections' own memory, 0 /);

    // they add up to the traffic's bytes
    const sum = T.STATES.reduce((a, [s]) => a + SAMPLE.totals.states[s].bytes,
                                SAMPLE.totals.http2.bytes
                                + SAMPLE.totals.other.bytes);
    assert.strictEqual(sum, SAMPLE.totals.bytes);
});

test('by location: in flight, then what finished there', () => {
    const rows = T.locationRows(SAMPLE);

    assert.deepStrictEqual(rows.map(texts), [
        ['(no name)', '/held', '6', '6.06 MiB', '66.6%', '0', '-', '-'],
        ['(no name)', '/upload', '3', '3.03 MiB', '33.3%', '0', '-', '-'],
        ['(no name)', '/malloc/', '1', '9.50 KiB', '0.1%', '0', '-', '-']]);
    assert.strictEqual(rows[0][0].title, 'a server with no server_name');
    assert.strictEqual(T.finishedCounted(SAMPLE), false);

    // malloc_traffic on: the count, the mean (sum / count) and the max
    const j = { totals: { bytes: 8192 }, locations: [
        { server: 'example.com', location: '/api/', requests: 2, bytes: 8192,
          finished: { count: 3, sum: 3 * 1536 + 1, max: 2048,
                      buckets: [3, 0, 0, 0, 0, 0, 0, 0, 0] } }] };
    assert.deepStrictEqual(T.locationRows(j).map(texts), [
        ['example.com', '/api/', '2', '8.00 KiB', '100.0%', '3', '1.50 KiB',
         '2.00 KiB']]);
    assert.strictEqual(T.finishedCounted(j), true);
});

test('the top requests: as the answer lists them, every column', () => {
    const rows = T.topRows(SAMPLE);

    assert.strictEqual(rows.length, 5);
    assert.deepStrictEqual(texts(rows[0]), [
        '1.01 MiB', 'processing', 'GET', '(no name)', '/held', '/held',
        '127.0.0.1', '504 ms', 'HTTP/1.0', '0']);
    assert.deepStrictEqual(texts(rows[2]), [
        '1.01 MiB', 'reading_body', 'POST', '(no name)', '/upload',
        '/upload', '127.0.0.1', '502 ms', 'HTTP/1.1', '0']);
    assert.strictEqual(rows[4][9].title, 'pid 22653');
    assert.strictEqual(rows[0][5].cls, 'path');
});

test('what clients send stays text: a path is not markup', () => {
    const j = { top: [{ bytes: 1, state: 'processing', method: 'GET',
                        server: '<b>x</b>', location: '/', client: '::1',
                        path: '/<img src=x onerror=alert(1)>', age_ms: 1,
                        http_version: 2000, worker: 0, pid: 1 }] };
    const row = T.topRows(j)[0];

    assert.strictEqual(row[3], '<b>x</b>');
    assert.strictEqual(row[5].text, '/<img src=x onerror=alert(1)>');
    assert.strictEqual(row[8], 'HTTP/2');
});

test('workers: figures and sentence, or why there are none', () => {
    const j = { workers: [SAMPLE.workers[0],
                          { worker: 1, pid: 22653, error: { status: 504,
                            code: 'worker_timeout', text: 'worker 1 (pid '
                            + '22653) did not answer within 10000 ms' } }] };
    const rows = T.workerRows(j);

    assert.deepStrictEqual(texts(rows[0]), [
        '0', '22652', '4', '4', '4.04 MiB', '4.97 MiB', '0.1 ms',
        SAMPLE.workers[0].text]);
    assert.strictEqual(rows[0].cls, '');
    assert.deepStrictEqual(texts(rows[1]), [
        '1', '22653', 'worker 1 (pid 22653) did not answer within 10000 ms']);
    assert.strictEqual(rows[1][2].colSpan, 6);
    assert.strictEqual(rows[1].cls, 'failed');
});

test('the query: top=N, 0 to 1000, the default left out', () => {
    assert.deepStrictEqual(['20', '', '0', '100', '1000', '1001', '-1',
                            '2.5', 'x'].map(T.query),
                           ['', '', '?top=0', '?top=100', '?top=1000',
                            '', '', '', '']);
});

test('nothing to show: empty tables, no throw', () => {
    for (const j of [null, {}, { totals: {} }]) {
        assert.deepStrictEqual(T.locationRows(j), []);
        assert.deepStrictEqual(T.topRows(j), []);
        assert.deepStrictEqual(T.workerRows(j), []);
        assert.strictEqual(T.stateRows(j).length, 11);
        assert.strictEqual(T.totalsRows(j).length, 5);
    }
});
