/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */

/*
 * MallocTraffic: the traffic view's pure half, GET traffic's answer made
 * into the rows of its tables, with no DOM, so that node's test runner
 * checks it (t/ui/traffic.test.js).  A row is a list of cells, each a
 * string or {text, cls, title, colSpan}, and its own class in row.cls;
 * app.js puts them in the page as text.
 * Servers, locations and paths come from the configuration and from
 * clients: they are only ever text.
 *
 * A plain script like flame.js, whose formats it uses: the browser gets
 * a global MallocTraffic, node gets it from require().
 */

(function (global) {
    'use strict';

    const F = global.MallocFlame || require('./flame.js');

    /* as GET traffic names them, in its order, and what each means */
    const STATES = [
        ['reading_request', 'reading the request line and headers'],
        ['reading_body', 'reading the request body'],
        ['processing', 'in a handler, with no upstream'],
        ['upstream', 'waiting on the upstream'],
        ['sending', 'sending the response, its header sent'],
        ['upgraded', 'a proxied upgrade, such as a WebSocket'],
        ['keepalive', 'a connection idle between requests'],
        ['waiting', 'a connection accepted, no request yet'],
        ['closing', 'a lingering close'],
    ];

    const num = (text, title) => ({ text, cls: 'num', title });

    /* bytes, "-" for none (an allocator that does not say) */
    function bytes(n) {
        return typeof n === 'number' ? F.formatBytes(n) : '-';
    }

    /* 1001 -> "HTTP/1.1", 2000 -> "HTTP/2": r->http_version's numbers */
    function httpVersion(v) {
        if (typeof v !== 'number' || v <= 0) {
            return '-';
        }

        const major = Math.floor(v / 1000), minor = v % 1000;

        return 'HTTP/' + (major === 0 ? '0.' + minor
                          : major >= 2 && minor === 0 ? major
                          : major + '.' + minor);
    }

    /* the mean size of the finished requests, or null: none finished */
    function mean(finished) {
        return finished && finished.count > 0
               ? finished.sum / finished.count : null;
    }

    /* a request's age: "504 ms", "12.3 s", "4 min 10 s" */
    function formatAge(ms) {
        if (typeof ms !== 'number') {
            return '-';
        }
        return ms < 1000 ? Math.round(ms) + ' ms'
            : ms < 60000 ? (ms / 1000).toFixed(1) + ' s'
            : F.formatDuration(ms / 1000);
    }

    /* a server as written; a server block with no server_name has "" */
    function serverName(s) {
        return s === '' || s === undefined || s === null
               ? { text: '(no name)', title: 'a server with no server_name' }
               : String(s);
    }

    /* a walk's time, given in microseconds */
    function ms(us) {
        return (us / 1000).toFixed(1) + ' ms';
    }

    /* the figures above the tables: [what, how much] */
    function totalsRows(j) {
        const t = (j && j.totals) || {};
        const req = t.requests || { n: 0, bytes: 0 };
        const workers = (j && j.workers) || [];
        const answered = workers.filter((w) => !w.error).length;
        const walk = Math.max(0, ...workers.map((w) => w.walk_us || 0));
        const secure = [];

        if (t.tls_connections) {
            secure.push(F.formatCount(t.tls_connections) + ' TLS');
        }
        if (t.quic_connections) {
            secure.push(F.formatCount(t.quic_connections) + ' QUIC');
        }
        return [
            ['in-flight traffic', bytes(t.bytes) + (t.allocated > 0
                ? ', ' + F.formatShare(t.bytes, t.allocated)
                  + ' of the allocated bytes' : '')],
            ['allocated', bytes(t.allocated)
                + (t.allocator ? ' (' + t.allocator + ')' : '')],
            ['connections', F.formatCount(t.connections || 0)
                + (secure.length ? ', of them ' + secure.join(' and ') : '')],
            ['requests', F.formatCount(req.n) + ' in flight, holding '
                + bytes(req.bytes)],
            ['workers', answered + ' of ' + workers.length + ' answered'
                + (answered ? ', the longest walk ' + ms(walk) : '')],
        ];
    }

    /*
     * By state: the requests in each (an HTTP/2 stream is a request),
     * the idle connections, then HTTP/2 connections' own memory and the
     * connections that are not HTTP's.  Those rows add up to the bytes.
     */
    function stateRows(j) {
        const t = (j && j.totals) || {}, s = t.states || {};
        const all = t.bytes || 0;
        const line = (name, title, x) => {
            const tr = [{ text: name, cls: 'name', title },
                        num(F.formatCount(x.n || 0)),
                        num(bytes(x.bytes || 0)),
                        num(F.formatShare(x.bytes || 0, all))];

            tr.cls = x.n ? '' : 'none';     /* nothing in it: muted */
            return tr;
        };
        const h2 = t.http2 || {};

        return [
            ...STATES.map(([name, title]) => line(name, title,
                                                  s[name] || {})),
            line('http2', 'HTTP/2 connections\' own memory, '
                 + F.formatCount(h2.streams || 0) + ' streams on them '
                 + '(counted by their states above)', h2),
            line('other', 'connections of other modules (stream, mail) '
                 + 'and upstream connections no client holds', t.other || {}),
        ];
    }

    /* by location, as the answer sorts them: most bytes in flight first */
    function locationRows(j) {
        const all = (j && j.totals && j.totals.bytes) || 0;

        return ((j && j.locations) || []).map((l) => {
            const f = l.finished || { count: 0, sum: 0, max: 0 };
            const m = mean(f);

            return [serverName(l.server),
                    { text: String(l.location), cls: 'name' },
                    num(F.formatCount(l.requests || 0)),
                    num(bytes(l.bytes || 0)),
                    num(F.formatShare(l.bytes || 0, all)),
                    num(F.formatCount(f.count || 0)),
                    num(m === null ? '-' : F.formatBytes(m)),
                    num(f.count ? F.formatBytes(f.max) : '-')];
        });
    }

    /* whether a location counted finished requests (malloc_traffic on) */
    function finishedCounted(j) {
        return ((j && j.locations) || []).some((l) => l.finished
                                                      && l.finished.count);
    }

    /* the biggest requests in flight */
    function topRows(j) {
        return ((j && j.top) || []).map((r) => [
            num(bytes(r.bytes)),
            { text: String(r.state), cls: 'name', title: (STATES.find(
                ([n]) => n === r.state) || [, ''])[1] },
            String(r.method),
            serverName(r.server),
            { text: String(r.location), cls: 'name' },
            { text: String(r.path), cls: 'path' },
            String(r.client),
            num(formatAge(r.age_ms)),
            httpVersion(r.http_version),
            num(String(r.worker), 'pid ' + r.pid)]);
    }

    /* a worker's figures, or why it has none; its sentence beside them */
    function workerRows(j) {
        return ((j && j.workers) || []).map((w) => {
            const tr = w.error
                ? [String(w.worker), String(w.pid || '-'),
                   { text: w.error.text || w.error.code, colSpan: 6,
                     cls: 'why' }]
                : [String(w.worker), String(w.pid),
                   num(F.formatCount(w.connections || 0)),
                   num(F.formatCount((w.requests || {}).n || 0)),
                   num(bytes(w.bytes)), num(bytes(w.allocated)),
                   num(ms(w.walk_us || 0)), w.text || ''];

            tr.cls = w.error ? 'failed' : '';
            return tr;
        });
    }

    /* ?top=N, as typed; the default (20) left out, as is what is not N */
    function query(top) {
        const n = /^\s*\d+\s*$/.test(top) ? Number(top) : 20;

        return n <= 1000 && n !== 20 ? '?top=' + n : '';
    }

    const MallocTraffic = { STATES, httpVersion, mean, formatAge, serverName,
                            totalsRows, stateRows, locationRows,
                            finishedCounted, topRows, workerRows, query };

    if (typeof module !== 'undefined' && module.exports) {
        module.exports = MallocTraffic;
    } else {
        global.MallocTraffic = MallocTraffic;
    }
}(this));
