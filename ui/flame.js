/*
 * MallocFlame: the part of the heap viewer that knows no DOM, so that
 * node's test runner checks it (t/ui/flame.test.js).  A profile of
 * <location>/pprof/heap.json is merged into one call tree once; the flame
 * graph, the search and the zoom then walk only the part of that tree that
 * is wide enough to be seen, which keeps 50k stacks fast.
 *
 * A comparison (?base=) has "base_values" beside "values": the tree then
 * keeps both, widths go by now and colours by the change (changeClass()),
 * as a differential flame graph does.
 *
 * A plain script rather than an ES module: the browser gets a global
 * MallocFlame from <script src>, node gets it from require().
 */

(function (global) {
    'use strict';

    /* the first index of each name: two equal names make one frame */
    function nameIds(names) {
        const first = new Map(), ids = new Int32Array(names.length);

        names.forEach((name, i) => {
            if (!first.has(name)) {
                first.set(name, i);
            }
            ids[i] = first.get(name);
        });
        return ids;
    }

    /* a profile we cannot read is an error to show, not a broken graph */
    function check(p, ti) {
        if (!(p && Array.isArray(p.names) && Array.isArray(p.types)
              && Array.isArray(p.stacks) && Array.isArray(p.values)
              && p.stacks.length === p.values.length
              && ti >= 0 && ti < p.types.length)) {
            throw new Error('the profile is not in the form of '
                            + 'pprof/heap.json');
        }
        if (p.base_values !== undefined
            && !(Array.isArray(p.base_values)
                 && p.base_values.length === p.values.length)) {
            throw new Error('the profile has not a base row for each stack');
        }
    }

    /*
     * The bytes of stack s now and in the base (0 without one).  Below 0
     * counts as 0: a growth profile lists only what grew, and a negative
     * width breaks the graph.
     */
    function sides(p, s, ti) {
        const v = p.values[s][ti];
        const b = p.base_values ? p.base_values[s][ti] : 0;

        return [v > 0 ? v : 0, b > 0 ? b : 0];
    }

    /* "inuse_space" -> the index of "inuse_objects", or -1 */
    function countIndex(p, ti) {
        const t = (p.types[ti] || '').replace(/_space$/, '_objects');

        return p.types.indexOf(t);
    }

    /*
     * The merged call tree: a node per distinct path of names from the
     * root, with total (itself and below) and self (stacks ending in it)
     * of type ti, count, of the matching objects type, and base and
     * bself, total and self in the base of a comparison, and sig and
     * ssig, the part of total - base and self - bself that changed beyond
     * the sampling noise (all of it when the profile does not judge, as
     * "significant" in heap.json does).  Stacks come root first.  A
     * stack only in the base makes nodes of total 0: layout() leaves them
     * out, gone() lists them.
     */
    function buildTree(p, ti, ci) {
        check(p, ti);
        ci = ci === undefined ? countIndex(p, ti) : ci;

        const ids = nameIds(p.names), width = p.names.length + 1;
        const node = (name, parent, id) => ({ name, self: 0, total: 0,
                                              count: 0, base: 0, bself: 0,
                                              sig: 0, ssig: 0,
                                              children: [], parent, id });
        const root = node('all', null, 0);
        /* one map for the whole tree: a Map per node costs more */
        const children = new Map();
        let serial = 1;

        p.stacks.forEach((stack, s) => {
            const [v, b] = sides(p, s, ti);
            const c = v > 0 && ci >= 0 ? p.values[s][ci] : 0;
            const d = !p.significant || p.significant[s] !== 0 ? v - b : 0;
            let n = root;

            if (v === 0 && b === 0) {
                return;
            }
            n.total += v;
            n.count += c;
            n.base += b;
            n.sig += d;

            for (const f of stack) {
                if (!(f >= 0 && f < ids.length)) {
                    throw new Error('stack ' + s + ' names no function: ' + f);
                }
                const key = n.id * width + ids[f];
                let next = children.get(key);

                if (next === undefined) {
                    next = node(p.names[ids[f]], n, serial++);
                    n.children.push(next);
                    children.set(key, next);
                }
                next.total += v;
                next.count += c;
                next.base += b;
                next.sig += d;
                n = next;
            }
            n.self += v;
            n.bself += b;
            n.ssig += d;
        });

        sortTree(root);
        return root;
    }

    /*
     * Widest first, so that layout() stops at the first child too narrow
     * to draw; equal ones by name, so that a reload keeps the order.
     */
    function sortTree(node) {
        node.children.sort((a, b) => b.total - a.total
                                     || (a.name < b.name ? -1 : 1));
        node.children.forEach(sortTree);
    }

    /*
     * The node at the end of a path of names below the root.  A name that
     * the data no longer has ends the walk, so that a zoom survives a
     * reload as far as it still makes sense.
     */
    function find(tree, path) {
        let node = tree;

        for (const name of path || []) {
            const next = node.children.find((c) => c.name === name);

            if (next === undefined) {
                break;
            }
            node = next;
        }
        return node;
    }

    /* the names from below the root down to node: find()'s path */
    function pathOf(node) {
        const path = [];

        for (; node && node.parent; node = node.parent) {
            path.unshift(node.name);
        }
        return path;
    }

    /*
     * The frames to draw, {x, w, depth, node, ancestor}, zoomed into the
     * node at focusPath: it and its ancestors span the whole width (the
     * way back out), its descendants are scaled to it.  A frame narrower
     * than minPx is left out with all below it; past cap frames, the
     * narrowest go.
     */
    function layout(tree, focusPath, width, { minPx = 0.5, cap = 4000 } = {}) {
        const focus = find(tree, focusPath), frames = [], chain = [];
        const scale = focus.total > 0 ? width / focus.total : 0;

        for (let n = focus; n !== null; n = n.parent) {
            chain.unshift(n);
        }
        chain.forEach((node, depth) => frames.push({
            x: 0, w: width, depth, node, ancestor: node !== focus }));

        (function place(node, x, depth) {
            for (const child of node.children) {
                const w = child.total * scale;

                /* the rest are narrower still; 0 is gone, gone() lists it */
                if (w < minPx || child.total === 0) {
                    break;
                }
                frames.push({ x, w, depth, node: child, ancestor: false });
                place(child, x, depth + 1);
                x += w;
            }
        }(focus, 0, chain.length));

        if (frames.length > cap) {
            /* a parent is never narrower than its child: ties go by depth */
            frames.sort((a, b) => b.w - a.w || a.depth - b.depth);
            frames.length = cap;
        }
        return frames;
    }

    /*
     * Functions whose name holds text, case-insensitively: their names,
     * and the bytes of their frames.  A match below a match is not counted
     * again, so share is what the matched functions hold, at most 1.
     */
    function search(tree, text) {
        const q = String(text || '').toLowerCase(), names = new Set();
        const seen = new Map();     /* lowercase each name once */
        let total = 0;

        function walk(node, inside) {
            let hit = seen.get(node.name);

            if (hit === undefined) {
                hit = node.name.toLowerCase().includes(q);
                seen.set(node.name, hit);
            }
            if (hit) {
                names.add(node.name);
                total += inside ? 0 : node.total;
            }
            node.children.forEach((c) => walk(c, inside || hit));
        }

        if (q !== '') {
            tree.children.forEach((c) => walk(c, false));
        }
        return { total, share: tree.total > 0 ? total / tree.total : 0, names };
    }

    /*
     * One row per function, {name, flat, cum}: flat, the bytes of the
     * stacks it ends (it allocated them itself), and cum, those of the
     * stacks it is on.  A recursive function counts once per stack.  In a
     * comparison, dflat and dcum are their changes since the base: a
     * function that only the base has gets a row of 0 with its loss.
     */
    function top(p, ti) {
        check(p, ti);

        const ids = nameIds(p.names), rows = [], n = ids.length;
        const flat = new Float64Array(n), cum = new Float64Array(n);
        const bflat = new Float64Array(n), bcum = new Float64Array(n);
        const seen = new Int32Array(n).fill(-1);

        p.stacks.forEach((stack, s) => {
            const [v, b] = sides(p, s, ti);

            if ((v === 0 && b === 0) || stack.length === 0) {
                return;
            }
            flat[ids[stack[stack.length - 1]]] += v;
            bflat[ids[stack[stack.length - 1]]] += b;
            for (const f of stack) {
                if (seen[ids[f]] !== s) {
                    seen[ids[f]] = s;
                    cum[ids[f]] += v;
                    bcum[ids[f]] += b;
                }
            }
        });

        cum.forEach((c, id) => {
            if (!(c > 0 || bcum[id] > 0)) {
                return;
            }

            const r = { name: p.names[id], flat: flat[id], cum: c };

            if (p.base_values) {
                r.dflat = flat[id] - bflat[id];
                r.dcum = c - bcum[id];
            }
            rows.push(r);
        });
        return sortRows(rows, 'flat', true);
    }

    /*
     * The largest change of a node's own bytes beyond the noise, one
     * place that allocates:
     * the deepest colour.  Not of a total, or the root's would pale all
     * else; the callers of a change that large are as deep.
     */
    function largestChange(tree) {
        let most = 0;

        (function walk(node) {
            most = Math.max(most, Math.abs(node.ssig));
            node.children.forEach(walk);
        }(tree));
        return most;
    }

    /*
     * A frame's classes in a comparison: "grown" or "shrunk" with a depth
     * from d1 (faint) to d5 (the largest change or more), or "same".  The
     * depth goes by bytes, not by percent, as in the classic differential
     * flame graph: what matters is where the bytes went.
     */
    function changeClass(change, largest) {
        if (change === 0 || !(largest > 0)) {
            return 'same';
        }

        const d = Math.ceil(5 * Math.abs(change) / largest);

        return (change > 0 ? 'grown' : 'shrunk')
               + ' d' + Math.min(5, Math.max(1, d));
    }

    /*
     * What only the base had: the outermost nodes with nothing now, which
     * a graph of widths by now cannot show.  Largest loss first.
     */
    function gone(tree) {
        const out = [];

        (function walk(node) {
            for (const c of node.children) {
                if (c.total > 0) {
                    walk(c);
                } else if (c.base > 0) {
                    out.push(c);
                }
            }
        }(tree));
        return out.sort((a, b) => b.base - a.base
                                  || (a.name < b.name ? -1 : 1));
    }

    /* in place, by key, then by name so that equal rows keep their order */
    function sortRows(rows, key, desc) {
        const sign = desc ? -1 : 1;

        return rows.sort((a, b) => a[key] !== b[key]
            ? (a[key] < b[key] ? -sign : sign)
            : (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    }

    /* 1536 -> "1.50 KiB": binary units, as jemalloc and pprof count */
    function formatBytes(n) {
        const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
        let a = Math.abs(n), i = 0;

        for (; a >= 1024 && i < units.length - 1; i++) {
            a /= 1024;
        }
        return (n < 0 ? '-' : '')
               + (i === 0 ? String(Math.round(a))
                          : a.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0))
               + ' ' + units[i];
    }

    /* a change: "+1.50 KiB", "-2.00 MiB", "0 B" */
    function formatDelta(n) {
        return (n > 0 ? '+' : '') + formatBytes(n);
    }

    function formatShare(part, whole) {
        const p = whole > 0 ? 100 * part / whole : 0;

        return p > 0 && p < 0.1 ? '<0.1%' : p.toFixed(1) + '%';
    }

    function formatCount(n) {
        return String(Math.round(n)).replace(/\B(?=(\d{3})+$)/g, ',');
    }

    /* one of the eight colours of viewer.css, always the same for a name */
    function colorOf(name) {
        let h = 0;

        for (let i = 0; i < name.length; i++) {
            h = (h * 31 + name.charCodeAt(i)) | 0;
        }
        return 'c' + ((h >>> 0) % 8);
    }

    /*
     * The choices of the URL's fragment (a URLSearchParams), made into
     * what the endpoint takes: snapshots are of all workers, so neither
     * a snapshot nor a comparison has a pid; a snapshot has no seconds,
     * a growth no base, and a snapshot is no base to itself.  {pid,
     * seconds, snapshot, base}, "" or 0 for none.
     */
    function choices(h) {
        const snapshot = h.get('snapshot') || '';
        const seconds = snapshot ? 0
                        : Math.max(0, parseInt(h.get('seconds'), 10) || 0);
        const asked = h.get('base') || '';
        const base = seconds || asked === snapshot ? '' : asked;

        return { pid: snapshot || base ? '' : h.get('pid') || '', seconds,
                 snapshot, base };
    }

    /* {pid: 12, seconds: 0} -> "?pid=12": the profile endpoints' query */
    function query(c) {
        const q = [];

        for (const key of ['pid', 'seconds', 'snapshot', 'base']) {
            if (c[key]) {
                q.push(key + '=' + encodeURIComponent(c[key]));
            }
        }
        return q.length ? '?' + q.join('&') : '';
    }

    /*
     * GET snapshots' files as the snapshots to offer, newest first, each
     * {name: "snapshot-<time>", files}: format=heap writes a file per
     * worker of one time, and "snapshot-<time>" names them all.  A name
     * without a time (not the schedule's) stands for its file alone.
     */
    function snapshotTimes(list) {
        const by = new Map();

        for (const f of list || []) {
            const m = /^snapshot-\d{8}T\d{6}Z/.exec(f.name);

            /*
             * the schedule's files of one time are one snapshot; those of
             * a reload, a growth or a peak stand alone (and say why)
             */
            const name = m && (f.reason || 'schedule') === 'schedule'
                         ? m[0] : f.name;

            if (!by.has(name)) {
                by.set(name, { name, files: [] });
            }
            by.get(name).files.push(f.name);
        }
        return [...by.values()];
    }

    /*
     * "snapshot-20261201T031814Z" -> "2026-12-01 03:18:14 UTC", and
     * "snapshot-20261201T031814Z.reload.heap" -> "... UTC, reload"
     */
    function snapshotLabel(name) {
        const m = new RegExp('^snapshot-(\\d{4})(\\d\\d)(\\d\\d)T'
                             + '(\\d\\d)(\\d\\d)(\\d\\d)Z'
                             + '(?:\\.(reload|growth|peak)\\.)?').exec(name);

        return m ? m[1] + '-' + m[2] + '-' + m[3] + ' ' + m[4] + ':' + m[5]
                   + ':' + m[6] + ' UTC' + (m[7] ? ', ' + m[7] : '')
                 : name;
    }

    const MallocFlame = { buildTree, countIndex, find, pathOf, layout, search,
                          top, largestChange, changeClass, gone, sortRows,
                          formatBytes, formatDelta, formatShare, formatCount,
                          colorOf, choices, query, snapshotTimes,
                          snapshotLabel };

    if (typeof module !== 'undefined' && module.exports) {
        module.exports = MallocFlame;
    } else {
        global.MallocFlame = MallocFlame;
    }
}(this));
