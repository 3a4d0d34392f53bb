// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// A stand-in for the admin location, to work on the heap viewer without
// nginx: it serves ui/ at /malloc/ui with the module's CSP, and answers
// /malloc/, stats, prof_active, snapshots and pprof/heap.json (with
// ?snapshot and ?base) with made-up workers and a synthetic profile,
// and traffic with a real nginx's answer (traffic.json).
// page.test.js drives it; by hand:
//
//     node t/ui/serve.js [port] [stacks]    then open /malloc/ui

'use strict';

const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const UI = path.join(__dirname, '..', '..', 'ui');
// GET traffic of an nginx of two workers with ten requests held: the
// sample of traffic.test.js too
const TRAFFIC = JSON.parse(fs.readFileSync(path.join(__dirname,
                                                     'traffic.json'), 'utf8'));
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
            + "form-action 'none'; frame-ancestors 'none'";
const TYPES = { html: 'text/html; charset=utf-8',
                js: 'text/javascript; charset=utf-8',
                css: 'text/css; charset=utf-8' };

// a deterministic random source, so that a failure repeats: a 32-bit
// congruential one (in floats, a product past 2^53 rounds, and the
// sequence fell into a cycle of a few hundred stacks)
function prng(seed) {
    return () => {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        return seed / 4294967296;
    };
}

// The files of the synthetic profile and which names lie in them: the
// outer code in the binary, then a module, the library it calls and libc,
// and a few names at addresses no mapping holds.
const FILES = [
    { path: '/usr/sbin/nginx', kind: 'binary' },
    { path: '/usr/lib/nginx/modules/ngx_http_lua_module.so', kind: 'module' },
    { path: '/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2.1.0',
      kind: 'library' },
    { path: '/usr/lib/x86_64-linux-gnu/libc.so.6', kind: 'library' },
];
const fileOfName = (i) => (i < 2000 ? 0 : i < 2500 ? 1 : i < 2900 ? 2
                           : i < 2990 ? 3 : -1);

// count stacks over 3000 names, root first, sharing the prefixes that
// real code paths share; alloc adds the alloc_* types.  In the form of
// before nodes (stacks of names): nodeForm() makes heap.json of it.
function synthetic(count, alloc) {
    const rand = prng(42);
    const names = Array.from({ length: 3000 }, (_, i) => 'ngx_fn_' + i);
    const raw = names.map(() => null);
    const spines = Array.from({ length: 200 }, () =>
        Array.from({ length: 5 + Math.floor(rand() * 15) },
                   () => Math.floor(rand() * 300)));
    const stacks = [];
    const values = [];

    names[0] = 'main';
    // C++, demangled by the server, the symbol kept in raw
    names[2600] = 'RuleWithActions::evaluate(Transaction*)';
    raw[2600] = '_ZN11modsecurity15RuleWithActions8evaluateEPNS_11TransactionE';
    for (let s = 0; s < count; s++) {
        const stack = [0, ...spines[Math.floor(rand() * spines.length)]];

        for (let i = Math.floor(rand() * 25); i >= 0; i--) {
            stack.push(300 + Math.floor(rand() * 2700));
        }
        const bytes = Math.floor(rand() * rand() * 4e6) + 1;
        const objects = 1 + (bytes >> 12);

        stacks.push(stack);
        values.push(alloc ? [bytes, objects, bytes * 3, objects * 3]
                          : [bytes, objects]);
    }

    return { period: 524288, seconds: 0,
             types: ['inuse_space', 'inuse_objects'].concat(
                 alloc ? ['alloc_space', 'alloc_objects'] : []),
             names, raw, files: FILES, name_files: names.map((n, i) =>
                 fileOfName(i)), stacks, values };
}

// A profile whose stacks are lists of names (root first) in heap.json's
// form: the merged tree as "nodes", parent before children, each stack
// its last node.  Equal stacks become one, their rows added up, as the
// server merges them; the rows beside "values" follow.
function nodeForm(profile) {
    const nodes = [];
    const byKey = new Map();        // parent node * names + name -> node
    const width = profile.names.length + 1;
    const rows = ['values', 'base_values', 'samples', 'base_samples']
        .filter((k) => profile[k]);
    const out = { ...profile, nodes: [], stacks: [] };
    const index = new Map();        // node -> index in out.stacks
    const tree = [{ kids: [] }];    // a trie first, then depth first

    rows.forEach((k) => { out[k] = []; });
    profile.stacks.forEach((stack, s) => {
        let n = 0;

        for (const f of stack) {
            const key = n * width + f;
            let next = byKey.get(key);

            if (next === undefined) {
                next = tree.length;
                tree.push({ name: f, kids: [] });
                tree[n].kids.push(next);
                byKey.set(key, next);
            }
            n = next;
        }
        if (!index.has(n)) {
            index.set(n, out.stacks.length);
            out.stacks.push(n);
            rows.forEach((k) => out[k].push(profile[k][s].slice
                ? profile[k][s].map(() => 0) : 0));
        }
        const at = index.get(n);
        rows.forEach((k) => {
            if (Array.isArray(profile[k][s])) {
                profile[k][s].forEach((v, j) => { out[k][at][j] += v; });
            } else {
                out[k][at] += profile[k][s];
            }
        });
    });

    // depth first, children in reverse order of making: "no order"
    const at = new Int32Array(tree.length);
    const todo = tree[0].kids.map((c) => [c, -1]).reverse();
    while (todo.length > 0) {
        const [n, parent] = todo.pop();
        const i = nodes.length / 2;

        at[n] = i;
        nodes.push(tree[n].name, parent === -1 ? 0 : i - parent);
        for (const c of tree[n].kids) {
            todo.push([c, i]);
        }
    }
    out.nodes = nodes;
    out.stacks = out.stacks.map((n) => at[n]);
    if (profile.significant) {
        out.significant = out.stacks.map(() => 1);
    }
    return out;
}

// Two scheduled snapshots, newest first: the live profile as it was then,
// with less below every third function called by main (so that grew
// since) and, in the older one, more below every fifth (so that shrank
// since) and a stack that the live heap has no more.  By function, as
// real changes go by code path.  The older one is format=heap: a file
// per worker.
const SNAPSHOTS = [
    { time: '20261201T031814Z', files: ['.pb.gz'], gone: 0,
      scale: (f) => (f % 3 === 0 ? 0.5 : 1) },
    { time: '20261201T021814Z', files: ['.2051.heap', '.2052.heap'],
      gone: 3 << 20, scale: (f) => (f % 3 === 0 ? 0.25 : f % 5 ? 1 : 2) },
];
const LIVE = { gone: 0, scale: () => 1 };

// the snapshot that a name of ?snapshot or ?base means, as the module
// takes them: a file's name, or "snapshot-<time>" for all its files
function snapshotOf(name) {
    return SNAPSHOTS.find((snap) => name === 'snapshot-' + snap.time
        || snap.files.some((f) => name === 'snapshot-' + snap.time + f));
}

// what pprof/heap.json answers for now (LIVE or a snapshot) against base
// (or none): the stacks of both, a row of 0 where one side has none
function sides(profile, now, base) {
    const rows = (snap) => profile.values.map((v, s) =>
        v.map((x) => Math.round(x * snap.scale(profile.stacks[s][1]))));
    const gone = (snap) => profile.types.map((t) => (snap.gone === 0 ? 0
        : t.endsWith('_space') ? snap.gone : 3));
    const out = { ...profile, values: rows(now) };

    if (base) {
        out.base_values = rows(base);
    }
    if (now.gone || (base && base.gone)) {
        out.names = [...profile.names, 'ngx_gone_site'];
        out.raw = [...profile.raw, null];
        out.name_files = [...profile.name_files, 0];
        out.stacks = [...profile.stacks, [0, profile.names.length]];
        out.values.push(gone(now));
        if (base) {
            out.base_values.push(gone(base));
        }
    }
    return out;
}

// A comparison judged as the module judges it, in its form (heap.json's
// significant, margins and comparison), with made-up margins: a quarter
// of each stack's change and 64 KiB, so that the large changes pass and
// the small ones are noise.
function judged(p) {
    const significant = [], margins = [];
    const c = { level: 0.99, z: 4.2, compared: p.stacks.length,
                testable: p.stacks.length, grew: 0, shrank: 0,
                samples: 0, base_samples: 0, net: 0, grown: 0, shrunk: 0,
                floor: 5126042, limit: 14659658 };

    p.values.forEach((v, s) => {
        const d = v[0] - p.base_values[s][0];
        const margin = Math.round(Math.abs(d) / 4) + 65536;
        const sig = Math.abs(d) > margin ? Math.sign(d) : 0;

        significant.push(sig);
        margins.push(margin);
        c.net += d;
        c.samples += Math.ceil(v[0] / p.period);
        c.base_samples += Math.ceil(p.base_values[s][0] / p.period);
        if (sig > 0) {
            c.grew++;
            c.grown += d;
        } else if (sig < 0) {
            c.shrank++;
            c.shrunk -= d;
        }
    });
    c.detection = 'with ' + c.samples + ' samples now and '
        + c.base_samples + ' in the base, a change of small blocks under '
        + '4.9 MiB cannot be told from noise; growth is seen from 4.9 MiB '
        + 'in a stack that held nothing, from 14.0 MiB in one that held '
        + 'them all';
    return { significant, margins, comparison: c };
}

// a body of POST prof_active as the module takes it: {active, seconds}
// (seconds 0: no end), or null
function activeBody(body) {
    let j;

    try {
        j = JSON.parse(body);
    } catch (e) {
        return null;
    }
    if (typeof j === 'boolean') {
        return { active: j, seconds: 0 };
    }
    if (!j || typeof j.active !== 'boolean'
        || Object.keys(j).some((k) => k !== 'active' && k !== 'duration')) {
        return null;
    }
    if (j.duration === undefined || j.duration === null) {
        return { active: j.active, seconds: 0 };
    }

    const unit = { s: 1, m: 60, h: 3600, d: 86400 };
    const parts = String(j.duration).trim().split(/\s+/);
    let seconds = 0;

    for (const part of parts) {
        const m = /^(\d+)([smhd]?)$/.exec(part);
        if (!m || typeof j.duration !== 'string' || !j.active) {
            return null;
        }
        seconds += Number(m[1]) * unit[m[2] || 's'];
    }
    return seconds >= 1 && seconds <= 30 * 86400
        ? { active: true, seconds } : null;
}

// GET traffic: the sample, its top cut to "top"; failed, worker 1 gave
// no answer and the figures are worker 0's alone, as the module adds up
function trafficAnswer(res, top, failed) {
    const j = JSON.parse(JSON.stringify(TRAFFIC));

    j.top = j.top.slice(0, top);
    if (!failed) {
        return send(res, 200, j);
    }

    const w = j.workers[0];
    const text = 'worker 1 (pid 22653) did not answer within 10000 ms';

    j.partial = true;
    j.error = { status: 504, code: 'worker_timeout', text };
    j.text = w.text;
    Object.assign(j.totals, { allocated: w.allocated, bytes: w.bytes,
                              connections: w.connections,
                              requests: w.requests });
    j.top = j.top.filter((r) => r.worker === 0);
    j.workers = [w, { worker: 1, pid: 22653, error: j.error }];
    return send(res, 504, j);
}

function error(res, status, code, text) {
    send(res, status, { error: { status, code, text } });
}

function send(res, status, json) {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(json) + '\n');
}

// opts: write (POSTs allowed), stacks (profile size), alloc (alloc types),
// fail (the profile's error text), drive (the page also runs drive.js),
// frames (it runs frames.js, which writes what the canvas shows),
// snapshots (false: none listed), judged (a comparison comes judged, with
// margins, as the module's), trafficFail (worker 1 did not answer
// GET traffic: a 504 with worker 0's figures).  The server's "asked"
// lists the queries of pprof/heap.json, in order; "traffic" those of
// GET traffic.
function serve(opts = {}) {
    const pids = [2051, 2052];
    let active = false;
    const profile = synthetic(opts.stacks || 2000, opts.alloc);
    const made = new Map();     // heap.json by what it shows, made once
    let duration = null;        // the end of sampling, ms, or null
    const workers = () => pids.map((pid, worker) => (
        { worker, pid, prof_active: active, age: 0.5, stale: false }));
    const snapshots = opts.snapshots === false ? [] : SNAPSHOTS;
    const asked = [];
    const traffic = [];
    const posted = [];              // the bodies of POST prof_active

    const server = http.createServer((req, res) => {
        const url = new URL(req.url, 'http://x');
        const p = url.pathname;
        const m = p.match(/^\/malloc\/ui(?:\/([\w.-]+\.(html|js|css)))?$/);

        if (m) {
            const drive = (opts.drive && m[1] === 'drive.js')
                          || (opts.frames && m[1] === 'frames.js');
            const file = drive ? path.join(__dirname, m[1])
                               : path.join(UI, m[1] || 'index.html');

            if (!fs.existsSync(file)) {
                return error(res, 404, 'not_found', 'no such file');
            }
            let body = fs.readFileSync(file, 'utf8');
            for (const helper of ['drive', 'frames']) {
                if (opts[helper] && !m[1]) {
                    body = body.replace('</head>', '<script src="ui/'
                                        + helper + '.js" defer></script>\n'
                                        + '</head>');
                }
            }
            res.writeHead(200, { 'Content-Type': TYPES[m[2] || 'html'],
                                 'Content-Security-Policy': CSP });
            return res.end(body);
        }

        // as the module: other sites' pages get nothing
        const site = req.headers['sec-fetch-site'];
        if (site && site !== 'same-origin' && site !== 'none') {
            return error(res, 403, 'cross_origin', 'refused ' + site);
        }

        if (p === '/malloc/' || p === '/malloc/prof_active') {
            const remaining = () => {
                if (duration !== null && Date.now() >= duration) {
                    active = false;
                    duration = null;
                }
                return duration === null ? null
                    : Math.ceil((duration - Date.now()) / 1000);
            };

            if (req.method !== 'POST') {
                const left = remaining();
                return send(res, 200, { write: !!opts.write,
                                        prof_active: active,
                                        prof_active_remaining: left,
                                        workers: workers() });
            }
            if (!opts.write) {
                return error(res, 403, 'write_disabled', 'read-only');
            }
            let body = '';
            req.on('data', (d) => { body += d; });
            return req.on('end', () => {
                const set = activeBody(body);

                if (set === null) {
                    return error(res, 400, 'invalid_body', 'not ' + body);
                }
                posted.push(body);
                active = set.active;
                duration = set.seconds ? Date.now() + set.seconds * 1000
                                       : null;
                send(res, 200, { prof_active: active,
                                 prof_active_remaining: remaining(),
                                 workers: workers() });
            });
        }

        if (p === '/malloc/stats') {
            return send(res, 200, { prof_active: active, workers:
                workers().map((w) => ({ ...w, lg_prof_sample: 19,
                    sample_bytes: 524288, allocated: 1009952,
                    resident: 3981312 })) });
        }

        if (p === '/malloc/snapshots') {
            const t = (ts) => ts.replace(
                /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/,
                '$1-$2-$3T$4:$5:$6Z');

            return send(res, 200, {
                schedule: snapshots.length === 0 ? null
                    : { interval: 3600, keep: 24, max_size: 0,
                        format: 'pprof', next_in: 1790 },
                snapshots: snapshots.flatMap((snap) => snap.files.map((f) => (
                    { name: 'snapshot-' + snap.time + f, time: t(snap.time),
                      path: '/var/lib/nginx/malloc/snapshot-' + snap.time + f,
                      bytes: 1592 }))) });
        }

        if (p === '/malloc/pprof/heap.json') {
            const pid = url.searchParams.get('pid');
            const seconds = url.searchParams.get('seconds');
            const snapshot = url.searchParams.get('snapshot');
            const base = url.searchParams.get('base');

            asked.push(url.search);
            if ((snapshot !== null || base !== null)
                && (seconds !== null || (snapshot !== null && pid !== null))) {
                return error(res, 400, 'invalid_argument',
                             '"snapshot" and "base" are taken by '
                             + 'pprof/heap.json, without "seconds", and '
                             + '"snapshot" without "pid"');
            }
            for (const [arg, name] of [['snapshot', snapshot],
                                       ['base', base]]) {
                if (name !== null && !snapshots.includes(snapshotOf(name))) {
                    return error(res, 404, 'no_such_snapshot', 'no snapshot "'
                                 + name + '" ("' + arg + '"): GET snapshots '
                                 + 'lists them');
                }
            }
            if (pid !== null && !pids.includes(Number(pid))) {
                return error(res, 404, 'no_such_worker',
                             '"pid" must be the pid of a worker of this nginx');
            }
            if (seconds !== null && !(seconds >= 1 && seconds <= 3600)) {
                return error(res, 400, 'invalid_argument',
                             '"seconds" takes 1 to 3600');
            }
            if (opts.fail) {
                return error(res, 503, 'jemalloc_not_found', opts.fail);
            }
            const key = snapshot + ' ' + base;
            if (!made.has(key)) {
                made.set(key, nodeForm(sides(profile, snapshot
                    ? snapshotOf(snapshot) : LIVE, base && snapshotOf(base))));
            }
            return send(res, 200, { ...made.get(key),
                                    ...(opts.judged && base
                                        ? judged(made.get(key)) : {}),
                                    seconds: Number(seconds) });
        }

        if (p === '/malloc/traffic') {
            const top = url.searchParams.get('top');

            traffic.push(url.search);
            if (top !== null
                && (!/^\d+$/.test(top) || Number(top) > 1000)) {
                return error(res, 400, 'invalid_argument', 'top takes a '
                             + 'number of requests from 0 to 1000');
            }
            return trafficAnswer(res, top === null ? 20 : Number(top),
                                 opts.trafficFail);
        }

        error(res, 404, 'not_found', 'no endpoint "' + p + '" here');
    });

    server.asked = asked;
    server.traffic = traffic;
    server.posted = posted;
    // as a POST through the API: sampling on for seconds
    server.sample = (seconds) => {
        active = true;
        duration = Date.now() + seconds * 1000;
    };
    return server;
}

module.exports = { serve, synthetic, nodeForm };

if (require.main === module) {
    const port = Number(process.argv[2] || 8080);

    serve({ write: true, alloc: true, stacks: Number(process.argv[3]) || 2000 })
        .listen(port, '127.0.0.1', () => console.log(
            'http://127.0.0.1:' + port + '/malloc/ui'));
}
