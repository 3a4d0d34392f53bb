/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */

/*
 * MallocFlame: the part of the heap viewer that knows no DOM, so that
 * node's test runner checks it (t/ui/flame.test.js).  pprof/heap.json
 * brings the call tree ready made ("nodes", parent before children):
 * the tree here is typed arrays indexed by node, summed in one backward
 * pass, so that 50k stacks are drawn in the time the profile takes to
 * come.  The views that the server's tree is not (allocators first,
 * callers and callees of a function, frames hidden) are built from the
 * nodes that end stacks, into the same form.
 *
 * A tree t has t.n nodes; node 0 is the root ("all"), t.name[i] the
 * index in the profile's names of node i (-1 for the root), t.parent[i]
 * (always < i); total, self, count (objects), cself, and, in a
 * comparison, base, bself (the base's total and self), sig and ssig (the
 * part of total - base and self - bself beyond the sampling noise: all
 * of it when the profile does not judge), and, where the server gave
 * each stack's margin (heap.json's margins, of bytes in use: t.margined),
 * marg and smarg: the margins of the stacks beyond the noise, summed as
 * sig is, so that sig +- marg holds their true change at the
 * comparison's confidence (the margins hold for all stacks at once).
 *
 * A plain script rather than an ES module: the browser gets a global
 * MallocFlame from <script src>, node gets it from require().
 */

(function (global) {
    'use strict';

    const FORM = 'the profile is not in the form of pprof/heap.json';

    /* a profile we cannot read is an error to show, not a broken graph */
    function check(p, ti) {
        if (!(p && Array.isArray(p.names) && Array.isArray(p.types)
              && Array.isArray(p.nodes) && p.nodes.length % 2 === 0
              && Array.isArray(p.stacks) && Array.isArray(p.values)
              && p.stacks.length === p.values.length
              && ti >= 0 && ti < p.types.length)) {
            throw new Error(FORM);
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

    /*
     * The other measure of the same allocations: "inuse_space" -> the
     * index of "inuse_objects", and back; -1 for none.  The tree counts
     * it beside the type shown (count, cself), the tables show both.
     */
    function countIndex(p, ti) {
        const t = p.types[ti] || '';
        const other = /_space$/.test(t) ? t.replace(/_space$/, '_objects')
            : /_objects$/.test(t) ? t.replace(/_objects$/, '_space') : '';

        return other === '' ? -1 : p.types.indexOf(other);
    }

    /*
     * The unit of type ti: a file's own (pprof's sample_type), else the
     * server's: "bytes" for *_space, "count" for *_objects.
     */
    function unitOf(p, ti) {
        const u = p.units ? p.units[ti] : '';

        return u || (/_space$/.test(p.types[ti]) ? 'bytes'
                     : /_objects$/.test(p.types[ti]) ? 'count' : '');
    }

    /*
     * A type as pprof's sample menu lists it, in words: "bytes in use",
     * "objects allocated"; another tool's as it names it, with its unit.
     */
    function typeLabel(p, ti) {
        const t = p.types[ti] || '', u = unitOf(p, ti);
        const m = /^(inuse|alloc)_(space|objects)$/.exec(t);

        return m ? (m[2] === 'space' ? 'bytes' : 'objects')
                   + (m[1] === 'inuse' ? ' in use' : ' allocated')
            : t + (u && u !== 'count' ? ' (' + u + ')' : '');
    }

    /*
     * A value in its unit: bytes in binary units, time in s or ms, a
     * count with separators, anything else with its unit after it.
     */
    function formatValue(n, unit) {
        const time = { nanoseconds: 1e-9, microseconds: 1e-6,
                       milliseconds: 1e-3, seconds: 1 }[unit];

        if (unit === 'bytes') {
            return formatBytes(n);
        }
        if (time !== undefined) {
            const sec = n * time, a = Math.abs(sec);

            return a >= 1 ? sec.toFixed(a < 10 ? 2 : 1) + ' s'
                : a >= 1e-3 ? (sec * 1e3).toFixed(a < 1e-2 ? 2 : 1) + ' ms'
                : (sec * 1e6).toFixed(0) + ' us';
        }
        return formatCount(n) + (unit && unit !== 'count' ? ' ' + unit : '');
    }

    /* a change in its unit: "+1.50 KiB", "-3", "0 B" */
    function formatValueDelta(n, unit) {
        return (n > 0 ? '+' : '') + formatValue(n, unit);
    }

    /*
     * A Uint8Array of n for one use at a time (which), reused: a fresh
     * one the size of 50k stacks' tree (280 kB), paged in for each search
     * and filter, took milliseconds.  It holds what the last use left.
     */
    const scratches = new Map();

    function scratch(which, n) {
        if (!scratches.has(which) || scratches.get(which).length < n) {
            scratches.set(which, new Uint8Array(n));
        }
        return scratches.get(which).subarray(0, n);
    }

    /*
     * The server's tree as {n, name, parent, leaf}: node i + 1 is the
     * profile's node i (0 is the root), leaf[s] the node that ends stack
     * s.  Made once per profile: a change of type or filter reuses it.
     */
    function skeleton(p) {
        if (p.skeleton !== undefined) {
            return p.skeleton;
        }

        const nodes = p.nodes, n = nodes.length / 2 + 1, names = p.names.length;
        const name = new Int32Array(n), parent = new Int32Array(n);
        const leaf = new Int32Array(p.stacks.length);

        name[0] = -1;
        parent[0] = -1;
        for (let i = 1; i < n; i++) {
            const f = nodes[2 * i - 2], up = nodes[2 * i - 1];

            if (!(f >= 0 && f < names && up >= 0 && up < i)) {
                throw new Error(FORM + ': node ' + (i - 1) + ' is ['
                                + f + ', ' + up + ']');
            }
            name[i] = f;
            parent[i] = up === 0 ? 0 : i - up;
        }
        p.stacks.forEach((node, s) => {
            if (!(node >= 0 && node < n - 1)) {
                throw new Error('stack ' + s + ' ends in no node: ' + node);
            }
            leaf[s] = node + 1;
        });
        Object.defineProperty(p, 'skeleton', { value: { n, name, parent, leaf },
                                               enumerable: false });
        return p.skeleton;
    }

    /*
     * n zeros, read only: a tree without a base (or margins) has them for
     * its base values.  Shared by every tree, made once for the largest:
     * fresh memory costs a page fault per 4 KiB on first touch, most of
     * the time of a tree of 50k stacks.
     */
    let zeroes = new Float64Array(0);

    function zeros(n) {
        if (zeroes.length < n) {
            zeroes = new Float64Array(n);
        }
        return zeroes.subarray(0, n);
    }

    /*
     * What the page makes ready while it is idle, for what a user does
     * next at 50k stacks: warming(p, ti) yields after each step of some
     * milliseconds, for the page to go on where a step ended when it is
     * idle again.
     * - The engine's code for a layout, a search and a filter, once a
     *   page (again for a tree four times larger): the first of each,
     *   not yet compiled, took two or three times as long (a search and
     *   a focus that find nothing walk the whole tree all the same).
     * - Memory for the next trees that sum() and without() make: an
     *   array's page costs a fault when first touched (in chromium on a
     *   virtual machine some 7 ms a MiB, most of a focus's time).  Two
     *   blocks the worth of p's whole tree (total and count, size, first
     *   and kids, sorted), their pages touched; a tree takes one (of at
     *   most twice its nodes) and no other tree shares it, until
     *   release() gives it back.  Two: a filter's tree is made while the
     *   one it replaces is still shown, and typing in a filter's box
     *   makes one after another.
     * - The children of every node of the whole tree sorted, that a zoom
     *   would otherwise sort as it lays out.
     */
    const SPARES = 2, SLICE = 1 << 16, NODES = 1 << 14;
    let spares = [];
    let primed = 0;         /* nodes of the tree it was made on */

    function* warming(p, ti) {
        const n = skeleton(p).n, whole = buildTree(p, ti);

        /* again for a tree much larger than the one it was made on */
        if (n > 4 * primed) {
            primed = n;
            for (const path of [[], pathOf(whole, Math.min(1, n - 1))]) {
                layout(whole, path, 1200, { collapse: true });
                yield;
            }
            search(whole, /(?!)/);
            yield;
            filter(p, ti, { focus: /(?!)/ });
            yield;
        }
        spares = spares.filter((b) => b.n >= n);
        while (spares.length < SPARES) {
            const b = { n, f64: new Float64Array(2 * n),
                        i32: new Int32Array(3 * n + 1), u8: new Uint8Array(n) };

            /* zero already: written to page them in */
            for (const a of [b.f64, b.i32, b.u8]) {
                for (let at = 0; at < a.length; at += SLICE) {
                    a.fill(0, at, at + SLICE);
                    yield;
                }
            }
            spares.push(b);
        }
        for (let at = 0; at < n; at += NODES) {
            for (let i = at; i < Math.min(n, at + NODES); i++) {
                ordered(whole, i);
            }
            yield;
        }
    }

    function take(n) {
        /* a tree of a few nodes would waste one */
        const k = spares.findIndex((b) => b.n >= n && 2 * n > b.n);

        return k === -1 ? null : spares.splice(k, 1)[0];
    }

    /*
     * Tree t given up (a filter's tree that the next one replaced): the
     * block it took, zeroed, is a spare again, so that the next filter
     * pages in nothing.  t is never read again.  A profile's whole tree
     * is kept (buildTree() keeps no block for it).
     */
    function release(t) {
        const b = t ? t.block : null;

        if (b && spares.length < SPARES) {
            b.f64.fill(0);
            b.i32.fill(0);
            b.u8.fill(0);
            spares.push(b);
        }
        if (t) {
            t.block = null;
        }
    }

    /*
     * A tree of skeleton sk with its arrays zero (a warmed block's, if
     * one fits), for sum() or without() to fill
     */
    function blank(sk, names, based, margined) {
        const n = sk.n, ready = take(n);
        const f64 = (want) => (want ? new Float64Array(n) : zeros(n));
        const made = { self: null, cself: null };
        /* one literal, accessors too: an object given them afterwards
           becomes a dictionary, each t.total in a loop a look-up */
        const t = { n, names, name: sk.name, parent: sk.parent, based,
                    margined,
                    total: ready ? ready.f64.subarray(0, n) : f64(true),
                    count: ready ? ready.f64.subarray(n, 2 * n) : f64(true),
                    base: f64(based), bself: f64(based),
                    sig: f64(based), ssig: f64(based),
                    marg: f64(margined), smarg: f64(margined),
                    size: ready ? ready.i32.subarray(0, n) : new Int32Array(n),
                    first: ready ? ready.i32.subarray(n, 2 * n + 1)
                                 : new Int32Array(n + 1),
                    kids: ready ? ready.i32.subarray(2 * n + 1, 3 * n)
                                : new Int32Array(Math.max(0, n - 1)),
                    sorted: ready ? ready.u8.subarray(0, n)
                                  : new Uint8Array(n),
                    /* the spare it took, for release() */
                    block: ready,
                    get self() {
                        return made.self || (made.self = ownOf(t, t.total));
                    },
                    get cself() {
                        return made.cself || (made.cself = ownOf(t, t.count));
                    } };

        return t;
    }

    /*
     * The totals of a skeleton whose own values add() has set (in total
     * and count, bself, ssig and smarg): one backward pass, for a parent
     * comes before its children.  Children are listed per node (first,
     * kids), in no order until children() sorts them; size[i] counts the
     * nodes with bytes in i's subtree.  self and cself are made from the
     * totals when first read: the graph needs none of them, and at 50k
     * stacks their memory, paged in, took 30 ms before it was drawn.
     */
    function sum(sk, names, add, based, margined = false) {
        const t = blank(sk, names, based, margined), n = t.n;
        const { parent, total, count, base, sig, marg, size, first, kids } = t;

        add(t);
        if (based) {
            base.set(t.bself);
            sig.set(t.ssig);
        }
        if (margined) {
            marg.set(t.smarg);
        }
        /* first[q] counts q's children, then ends their run in kids */
        for (let i = n - 1; i > 0; i--) {
            const q = parent[i];

            total[q] += total[i];
            count[q] += count[i];
            if (based) {
                base[q] += base[i];
                sig[q] += sig[i];
            }
            if (margined) {
                marg[q] += marg[i];
            }
            size[i] += total[i] > 0 ? 1 : 0;
            size[q] += size[i];
            first[q]++;
        }
        size[0] += total[0] > 0 ? 1 : 0;
        for (let i = 1; i < n; i++) {
            first[i] += first[i - 1];
        }
        first[n] = n - 1;
        /* filled from the ends back: first[q] is then where q's begin */
        for (let i = n - 1; i > 0; i--) {
            kids[--first[parent[i]]] = i;
        }
        return t;
    }

    /*
     * Node i's own value of tot (t.total, or t.count for its objects): its
     * total less its children's.  Whole numbers, as profiles have: exact.
     */
    function own(t, i, tot = t.total) {
        let v = tot[i];

        for (let k = t.first[i]; k < t.first[i + 1]; k++) {
            v -= tot[t.kids[k]];
        }
        return v;
    }

    /* own() of every node, as an array: t.self and t.cself when read */
    function ownOf(t, tot) {
        const out = Float64Array.from(tot), parent = t.parent;

        for (let i = 1; i < t.n; i++) {
            out[parent[i]] -= tot[i];
        }
        return out;
    }

    /*
     * The children of node i, widest first, so that layout() stops at
     * the first one too narrow to draw; equal ones by name, so that a
     * reload keeps the order.  Sorted when first asked for.
     */
    function children(t, i) {
        ordered(t, i);
        return t.kids.subarray(t.first[i], t.first[i + 1]);
    }

    /*
     * Node i's children sorted, where children() lists them: from
     * t.first[i] up to t.first[i + 1] in t.kids.  layout() reads them
     * there, without a view made for each of thousands of frames.
     */
    function ordered(t, i) {
        if (!t.sorted[i] && t.first[i + 1] - t.first[i] > 1) {
            const { total, base, name } = t, rank = ranks(t.names);

            t.kids.subarray(t.first[i], t.first[i + 1])
                .sort((a, b) => total[b] - total[a] || base[b] - base[a]
                                || rank[name[a]] - rank[name[b]]);
        }
        t.sorted[i] = 1;
    }

    /*
     * Each name's place in the names sorted, made once per profile: the
     * children of equal size (many, where allocations are alike) are
     * ordered by it, not by comparing their strings again and again
     */
    function ranks(names) {
        if (names.ranks === undefined) {
            const order = names.map((s, k) => k)
                .sort((a, b) => (names[a] < names[b] ? -1
                                 : names[a] > names[b] ? 1 : a - b));
            const rank = new Int32Array(names.length);

            order.forEach((k, at) => { rank[k] = at; });
            Object.defineProperty(names, 'ranks', { value: rank,
                                                    enumerable: false });
        }
        return names.ranks;
    }

    /* the function of a node; the root is "all" */
    function label(t, i) {
        return i === 0 ? 'all' : t.names[t.name[i]];
    }

    /*
     * What stack s adds to each of a tree's arrays, into out: [bytes,
     * objects, base, change, margin]: the base's bytes, and of the
     * change and its margin what the judgement kept (with a base)
     */
    function stackOwn(p, ti, ci, margins, s, out) {
        const row = p.values[s], v = row[ti] > 0 ? row[ti] : 0;

        out[0] = v;
        out[1] = v > 0 && ci >= 0 ? row[ci] : 0;
        if (Array.isArray(p.base_values)) {
            const b = sides(p, s, ti)[1];

            out[2] = b;
            out[3] = !p.significant || p.significant[s] !== 0 ? v - b : 0;
            out[4] = margins !== null && p.significant[s] !== 0
                     && margins[s] > 0 ? margins[s] : 0;
        }
        return out;
    }

    /*
     * The self values of the stacks that keep (a Uint8Array by stack, or
     * none for all) on the leaves of the server's tree.
     */
    function stackValues(p, ti, ci, leaf, keep) {
        const margins = margined(p, ti) ? p.margins : null;
        const own = new Float64Array(5);

        return (t) => {
            /* the own values, in what sum() makes the totals */
            const { total: self, count: cself } = t;

            for (let s = 0; s < leaf.length; s++) {
                if (keep !== undefined && !keep[s]) {
                    continue;
                }

                const i = leaf[s];

                stackOwn(p, ti, ci, margins, s, own);
                self[i] += own[0];
                cself[i] += own[1];
                if (t.based) {
                    t.bself[i] += own[2];
                    t.ssig[i] += own[3];
                }
                if (t.margined) {
                    t.smarg[i] += own[4];
                }
            }
        };
    }

    /*
     * The tree of the stacks that keep keeps, as the whole tree (whole)
     * less the others: a filter that drops a few of many stacks walks
     * their paths back to the root, instead of summing every node again
     * and sorting every list of children again.  The lists are the whole
     * tree's, in its order; only those along the walked paths are sorted
     * again, when asked for.
     */
    function without(whole, p, ti, keep) {
        const sk = skeleton(p), leaf = sk.leaf, parent = sk.parent;
        const t = blank(sk, p.names, whole.based, whole.margined);
        const ci = countIndex(p, ti), own = new Float64Array(5);
        const margins = margined(p, ti) ? p.margins : null;
        const { total, count, base, sig, marg, size, sorted } = t;

        /* the arrays of zeros (no base, no margins) are shared: not set */
        for (const k of ['total', 'count', 'size', 'kids', 'sorted']
                 .concat(t.based ? ['base', 'bself', 'sig', 'ssig'] : [],
                         t.margined ? ['marg', 'smarg'] : [])) {
            t[k].set(whole[k]);
        }
        t.first = whole.first;
        for (let s = 0; s < leaf.length; s++) {
            if (keep[s]) {
                continue;
            }
            stackOwn(p, ti, ci, margins, s, own);
            if (t.based) {
                t.bself[leaf[s]] -= own[2];
                t.ssig[leaf[s]] -= own[3];
            }
            if (t.margined) {
                t.smarg[leaf[s]] -= own[4];
            }

            /* nodes whose last bytes these were: out of size, up to the root */
            let gone = 0;

            for (let i = leaf[s]; i !== -1; i = parent[i]) {
                const had = total[i] > 0;

                total[i] -= own[0];
                count[i] -= own[1];
                if (t.based) {
                    base[i] -= own[2];
                    sig[i] -= own[3];
                }
                if (t.margined) {
                    marg[i] -= own[4];
                }
                gone += had && total[i] <= 0 ? 1 : 0;
                size[i] -= gone;
                sorted[i] = 0;
            }
        }
        return t;
    }

    /*
     * The call tree of type ti (bytes in use, or allocated) from the
     * profile's nodes: the root first, the functions that allocated at
     * the ends.  keep, a Uint8Array by stack, leaves the others out.  A
     * stack only in the base makes nodes of total 0: layout() leaves
     * them out, gone() lists them.
     */
    function buildTree(p, ti, keep) {
        check(p, ti);

        if (keep !== undefined) {
            return treeOf(p, ti, kept(skeleton(p), keep), keep);
        }

        /*
         * the whole tree of a type, built once per profile: while the
         * arrays it was built from are the profile's (the page never
         * changes a profile; a test may build one up)
         */
        if (p.wholeTrees === undefined) {
            Object.defineProperty(p, 'wholeTrees', { value: new Map(),
                                                     enumerable: false });
        }

        const from = [p.values, p.base_values, p.significant, p.margins,
                      p.types];
        const was = p.wholeTrees.get(ti);

        if (was !== undefined && was.from.every((a, k) => a === from[k])) {
            return was.tree;
        }

        const tree = treeOf(p, ti, skeleton(p));

        tree.block = null;
        p.wholeTrees.set(ti, { tree, from });
        return tree;
    }

    /* the tree of skeleton sk with the values of type ti of keep's stacks */
    function treeOf(p, ti, sk, keep) {
        return sum(sk, p.names, stackValues(p, ti, countIndex(p, ti),
                                            sk.leaf, keep),
                   Array.isArray(p.base_values), margined(p, ti));
    }

    /*
     * The server's judgement gives each stack's margin of its change in
     * bytes in use (heap.json's margins): only that type has intervals.
     */
    function margined(p, ti) {
        return Array.isArray(p.base_values) && Array.isArray(p.margins)
               && Array.isArray(p.significant)
               && p.margins.length === p.stacks.length
               && p.types[ti] === 'inuse_space';
    }

    /*
     * The skeleton of only the nodes on the stacks that keep keeps, in
     * the same order (a parent still before its children): a focus that
     * keeps a few stacks of 50k sums and lays out a small tree, not one
     * of 650k nodes mostly zero.
     */
    function kept(sk, keep) {
        const on = scratch('kept', sk.n).fill(0), leaf = sk.leaf;
        let m = 1;

        on[0] = 1;
        for (let s = 0; s < leaf.length; s++) {
            for (let i = keep[s] ? leaf[s] : 0; on[i] === 0;
                 i = sk.parent[i]) {
                on[i] = 1;
                m++;
            }
        }
        /*
         * most of the nodes kept: the whole skeleton, its other nodes of
         * no bytes (layout() leaves them out), and no copy of it made
         */
        if (2 * m > sk.n) {
            return sk;
        }

        const used = new Int32Array(sk.n);
        const name = new Int32Array(m), parent = new Int32Array(m);
        const out = new Int32Array(leaf.length);

        name[0] = -1;
        parent[0] = -1;
        for (let i = 1, k = 1; i < sk.n; i++) {
            if (on[i] === 1) {
                used[i] = k;
                name[k] = sk.name[i];
                parent[k] = used[sk.parent[i]];
                k++;
            }
        }
        for (let s = 0; s < leaf.length; s++) {
            out[s] = keep[s] ? used[leaf[s]] : 0;
        }
        return { n: m, name, parent, leaf: out };
    }

    /*
     * Nodes made one path at a time, merged where the names agree: the
     * views that the server's tree is not.  The child of (parent, name)
     * is found in a table of open addressing on typed arrays: a Map of
     * numbers past 2^31 took half a second for 50k stacks.
     */
    function builder() {
        let name = new Int32Array(1024), parent = new Int32Array(1024), n = 1;
        let slots = new Int32Array(2048).fill(-1), mask = 2047;

        const slot = (q, f) => {
            let h = (Math.imul(q, 0x9e3779b1) ^ Math.imul(f, 0x85ebca77))
                    & mask;

            for (;;) {
                const id = slots[h];

                if (id === -1 || (parent[id] === q && name[id] === f)) {
                    return h;
                }
                h = (h + 1) & mask;
            }
        };
        const grow = () => {
            const a = new Int32Array(2 * n), b = new Int32Array(2 * n);

            a.set(name);
            b.set(parent);
            name = a;
            parent = b;
            slots = new Int32Array(4 * n).fill(-1);
            mask = 4 * n - 1;
            for (let id = 1; id < n; id++) {
                slots[slot(parent[id], name[id])] = id;
            }
        };

        name[0] = -1;
        parent[0] = -1;
        return {
            child(q, f) {
                let h = slot(q, f);

                if (slots[h] !== -1) {
                    return slots[h];
                }
                if (n === name.length) {
                    grow();
                    h = slot(q, f);
                }
                name[n] = f;
                parent[n] = q;
                slots[h] = n;
                return n++;
            },
            skeleton: () => ({ n, name: name.subarray(0, n),
                               parent: parent.subarray(0, n) })
        };
    }

    /* the functions of node i, from it out to the outermost caller */
    function outwards(t, i) {
        const out = [];

        for (; i > 0; i = t.parent[i]) {
            out.push(t.name[i]);
        }
        return out;
    }

    /*
     * A tree of the same stacks along other paths: path(frames) gets the
     * functions of each stack's end, innermost first, and returns those
     * of the new path root first, or null to leave the stack out.
     */
    function derive(src, path) {
        const b = builder(), ends = [], at = [], mine = [];

        for (let i = 1; i < src.n; i++) {
            const self = own(src, i), cself = own(src, i, src.count);

            if (self === 0 && src.bself[i] === 0 && cself === 0) {
                continue;
            }

            const names = path(outwards(src, i));

            if (names === null) {
                continue;
            }

            let node = 0;

            for (const f of names) {
                node = b.child(node, f);
            }
            ends.push(i);
            at.push(node);
            mine.push(self, cself);
        }
        return sum(b.skeleton(), src.names, (d) => ends.forEach((i, k) => {
            d.total[at[k]] += mine[2 * k];
            d.count[at[k]] += mine[2 * k + 1];
            if (d.based) {
                d.bself[at[k]] += src.bself[i];
                d.ssig[at[k]] += src.ssig[i];
            }
            if (d.margined) {
                d.smarg[at[k]] += src.smarg[i];
            }
        }), src.based, src.margined);
    }

    /* the allocating functions below the root, their callers below them */
    function invert(t) {
        return derive(t, (frames) => frames);
    }

    /*
     * A function's sandwich, as speedscope's: {callers, callees}, trees
     * of the stacks through f (an index of names) rooted in f, one of its
     * callers outwards, the other of what it calls.  A recursive f is
     * taken at its outermost frame, so that each stack counts once.
     */
    function sandwich(t, f) {
        return {
            callers: derive(t, (frames) => {
                const k = frames.lastIndexOf(f);

                return k === -1 ? null : frames.slice(k);
            }),
            callees: derive(t, (frames) => {
                const k = frames.lastIndexOf(f);

                return k === -1 ? null : frames.slice(0, k + 1).reverse();
            })
        };
    }

    /*
     * A case-insensitive RegExp of text: {re} or {error} to show; an
     * empty text is no filter ({re: null}).
     */
    function regex(text) {
        text = String(text || '').trim();
        if (text === '') {
            return { re: null };
        }
        try {
            return { re: new RegExp(text, 'i') };
        } catch (e) {
            /* "Invalid regular expression: /(/i: Unterminated group" */
            return { error: 'not a regular expression: '
                            + String(e.message).replace(/^.*: /, '') };
        }
    }

    /* a Uint8Array by name: 1 where re matches the name */
    function matching(names, re) {
        const hit = new Uint8Array(names.length);

        if (re) {
            names.forEach((name, i) => { hit[i] = re.test(name) ? 1 : 0; });
        }
        return hit;
    }

    /*
     * pprof's focus, ignore and hide (RegExps or null): focus keeps the
     * stacks with a frame that matches, ignore drops them, hide takes the
     * matching frames out of the stacks (the rest merge).  {tree, kept}:
     * the callers' tree of what is left, and what each filter kept:
     * kept.focus and kept.ignore {stacks, bytes}, kept.hide {functions,
     * stacks}, kept.all {stacks, bytes} of the whole profile.
     */
    function filter(p, ti, { focus = null, ignore = null, hide = null } = {}) {
        check(p, ti);

        const sk = skeleton(p), { n, leaf, name, parent } = sk;
        const stacks = leaf.length, kept = {};
        const onPath = (re) => {
            const hit = matching(p.names, re), on = scratch('path', n);

            on[0] = 0;
            for (let i = 1; i < n; i++) {
                on[i] = hit[name[i]] | on[parent[i]];
            }
            return on;
        };
        const values = p.values, whole = buildTree(p, ti);
        /* sides(p, s, ti)[0], with no array made for each of 50k stacks */
        const bytes = (s) => (values[s][ti] > 0 ? values[s][ti] : 0);
        let keep, dropped = 0;

        kept.all = { stacks, bytes: whole.total[0] };
        for (const [what, re, want] of [['focus', focus, 1],
                                        ['ignore', ignore, 0]]) {
            if (re === null) {
                continue;
            }

            const on = onPath(re), k = { stacks: 0, bytes: 0 };

            keep = keep || new Uint8Array(stacks).fill(1);
            for (let s = 0; s < stacks; s++) {
                if (on[leaf[s]] === want) {
                    k.stacks++;
                    k.bytes += bytes(s);
                } else {
                    dropped += keep[s];
                    keep[s] = 0;
                }
            }
            kept[what] = k;
        }

        /*
         * a focus or an ignore that kept every stack: the whole tree; one
         * that dropped at most half of them: the whole less those
         */
        let tree = dropped === 0 ? whole
            : 2 * dropped <= stacks ? without(whole, p, ti, keep)
                                    : buildTree(p, ti, keep);

        if (hide !== null) {
            const hit = matching(p.names, hide), on = onPath(hide);
            const k = { functions: 0, stacks: 0 };
            const seen = new Uint8Array(p.names.length);

            for (let i = 1; i < n; i++) {
                if (hit[sk.name[i]] && !seen[sk.name[i]]) {
                    seen[sk.name[i]] = 1;
                    k.functions++;
                }
            }
            for (let s = 0; s < stacks; s++) {
                k.stacks += (keep === undefined || keep[s]) && on[leaf[s]];
            }
            kept.hide = k;
            tree = derive(tree, (frames) =>
                frames.filter((f) => !hit[f]).reverse());
        }
        return { tree, kept };
    }

    /*
     * The node at the end of a path of names below the root.  A name that
     * the data no longer has ends the walk, so that a zoom survives a
     * reload as far as it still makes sense.
     */
    function find(t, path) {
        let node = 0;

        for (const name of path || []) {
            const next = children(t, node).find((c) => label(t, c) === name);

            if (next === undefined) {
                break;
            }
            node = next;
        }
        return node;
    }

    /* the names from below the root down to node i: find()'s path */
    function pathOf(t, i) {
        return outwards(t, i).reverse().map((f) => t.names[f]);
    }

    /*
     * The frames to draw, {x, w, depth, id, ancestor, up}, zoomed into
     * the node at focusPath: it and its ancestors span the whole width
     * (the way back out), its descendants are scaled to it.  A frame
     * narrower than minPx is left out with all below it; of the others,
     * the cap widest are drawn (a parent is never narrower than its
     * child: ties go to the shallower, then to the left).  They are
     * found widest first, so that no frame past the cap is made nor its
     * children sorted, and returned in the order of a walk of the tree
     * (a frame before its children, left to right); up is the index of
     * the frame's parent frame.  collapse folds runs of callers (run())
     * into one frame, but in the row right below the zoom, and the
     * ancestors but the first fixed (the root) and the last into
     * another.  frames.marks says where frames were left out:
     * {x, w, depth, parent, widest, frames, bytes}, in the row below the
     * parent whose children they are: how many frames (with all below
     * them) and bytes, and the widest of them.
     */
    function layout(t, focusPath, width,
                    { minPx = 0.5, cap = 4000, collapse = false,
                      fixed = 1 } = {}) {
        const focus = find(t, focusPath), chain = [];
        const scale = t.total[focus] > 0 ? width / t.total[focus] : 0;
        const left = new Map();     /* item -> what it left out */
        /* every frame made, by number; the numbers of the children of
           each, left to right; 1 for those drawn */
        const items = [], kidsOf = [], drawn = [];
        const make = (f, up, shown) => {
            const k = items.push(f) - 1;

            kidsOf.push(null);
            drawn.push(shown);
            if (up !== -1) {
                kidsOf[up].push(k);
            }
            return k;
        };
        const next = heap((a, b) => {
            const f = items[a], g = items[b];

            return f.w > g.w || (f.w === g.w && (f.depth < g.depth
                || (f.depth === g.depth && f.x < g.x)));
        });

        for (let i = focus; i !== -1; i = t.parent[i]) {
            chain.unshift(i);
        }
        /* folded: the root, the callers but the last, the last, the focus */
        const rows = collapse && chain.length >= fixed + 4
            ? [...chain.slice(0, fixed).map((id) => [id]),
               chain.slice(fixed, -2), [chain[chain.length - 2]], [focus]]
            : chain.map((id) => [id]);

        rows.forEach((ids, depth) => {
            kidsOf[make(Object.assign({
                x: 0, w: width, depth, id: ids[ids.length - 1],
                ancestor: depth < rows.length - 1, up: depth - 1 },
                ids.length > 1 ? { chain: ids } : {}), depth - 1, 1)] = [];
        });

        const out = (k, at, c, w) => {
            let m = left.get(k);

            if (m === undefined) {
                m = { x: at, end: at, frames: 0, bytes: 0, widest: c };
                left.set(k, m);
            }
            m.x = Math.min(m.x, at);
            m.end = Math.max(m.end, at + w);
            m.frames += t.size[c];
            m.bytes += t.total[c];
            if (t.total[c] > t.total[m.widest]) {
                m.widest = c;
            }
        };

        /* item k's children: the wide ones to draw, the others marked */
        const { total, kids } = t;
        const expand = (k) => {
            const id = items[k].id, depth = items[k].depth + 1;
            const end = t.first[id + 1];
            let x = items[k].x;

            kidsOf[k] = kidsOf[k] || [];
            ordered(t, id);
            for (let j = t.first[id]; j < end && total[kids[j]] > 0; j++) {
                const c = kids[j], w = total[c] * scale;

                if (w < minPx) {
                    for (; j < end && total[kids[j]] > 0; j++) {
                        out(k, x, kids[j], total[kids[j]] * scale);
                        x += total[kids[j]] * scale;
                    }
                    break;
                }
                /* the row below the zoom stays: the allocators' top */
                const ids = collapse && depth > rows.length ? run(t, c) : [];

                next.push(make(ids.length >= 3
                    ? { x, w, depth, id: ids[ids.length - 1], ancestor: false,
                        up: k, chain: ids }
                    : { x, w, depth, id: c, ancestor: false, up: k }, k, 0));
                x += w;
            }
        };

        expand(rows.length - 1);
        for (let count = rows.length; next.size() > 0 && count < cap;
             count++) {
            const k = next.pop();

            drawn[k] = 1;
            expand(k);
        }
        /* past the cap: marked below their parents */
        for (let k = next.pop(); k !== undefined; k = next.pop()) {
            const f = items[k];

            out(f.up, f.x, f.chain ? f.chain[0] : f.id, f.w);
        }

        /* in the order of a walk, a frame before its children; up is
           then the parent's place in it */
        const shown = [], marks = [];
        const walk = (k, up) => {
            const f = items[k], at = shown.push(f) - 1, m = left.get(k);

            f.up = up;
            if (m !== undefined) {
                marks.push({ x: m.x, w: m.end - m.x, depth: f.depth + 1,
                             parent: f.id, widest: m.widest,
                             frames: m.frames, bytes: m.bytes });
            }
            for (const c of kidsOf[k] || []) {
                if (drawn[c]) {
                    walk(c, at);
                }
            }
        };

        walk(0, -1);
        shown.marks = marks;
        shown.focus = focus;
        return shown;
    }

    /*
     * A binary heap of the items that better(a, b) puts first: push,
     * pop (undefined when empty) and size
     */
    function heap(better) {
        const a = [];

        return {
            size: () => a.length,
            push(item) {
                let k = a.length;

                a.push(item);
                while (k > 0 && better(item, a[(k - 1) >> 1])) {
                    a[k] = a[(k - 1) >> 1];
                    k = (k - 1) >> 1;
                }
                a[k] = item;
            },
            pop() {
                const top = a[0], last = a.pop();

                if (a.length > 0) {
                    let k = 0;

                    for (;;) {
                        let c = 2 * k + 1;

                        if (c >= a.length) {
                            break;
                        }
                        if (c + 1 < a.length && better(a[c + 1], a[c])) {
                            c++;
                        }
                        if (!better(a[c], last)) {
                            break;
                        }
                        a[k] = a[c];
                        k = c;
                    }
                    a[k] = last;
                }
                return top;
            }
        };
    }

    /*
     * The callers from node i down that have nothing of their own and one
     * callee with bytes (main -> ngx_master_process_cycle -> ...): with
     * collapse, layout() draws three or more of them as one frame,
     * {chain}, whose id is the last; chainLabel() names it.
     */
    function run(t, i) {
        const out = [];

        /* one callee of all its bytes: none are its own */
        while (t.total[i] > 0) {
            ordered(t, i);

            const c = t.kids[t.first[i]];

            if (t.first[i + 1] === t.first[i] || t.total[c] !== t.total[i]) {
                break;
            }
            out.push(i);
            i = c;
        }
        return out;
    }

    /* "main \u2192 \u2026 \u2192 ngx_worker_process_cycle (5 frames)" */
    function chainLabel(t, ids) {
        const first = label(t, ids[0]), last = label(t, ids[ids.length - 1]);

        return ids.length === 2 ? first + ' \u2192 ' + last
            : first + ' \u2192 \u2026 \u2192 ' + last + ' (' + ids.length
              + ' frames)';
    }

    /*
     * The nodes of functions that re matches (a RegExp): {names, total,
     * share, matches, count}: their indexes of names, their bytes (a match below
     * a match is not counted again, so share is at most 1) and their
     * nodes with bytes, widest first, for next and previous.
     */
    function search(t, re) {
        const hit = matching(t.names, re), inside = scratch('inside', t.n);
        const names = new Set(), matches = [];
        const { n, parent, name, total: tot } = t;
        let total = 0;

        inside[0] = 0;
        for (let i = 1; i < n; i++) {
            const q = parent[i], h = hit[name[i]];

            inside[i] = inside[q] | (q > 0 ? hit[name[q]] : 0);
            if (h && tot[i] > 0) {
                names.add(name[i]);
                matches.push(i);
                total += inside[i] ? 0 : tot[i];
            }
        }
        /*
         * sorted when next or previous first asks: a search that matches
         * tens of thousands of nodes spent most of its time sorting them
         */
        let sorted = false;

        return { total, share: t.total[0] > 0 ? total / t.total[0] : 0,
                 names, count: matches.length,
                 get matches() {
                     if (!sorted) {
                         matches.sort((a, b) => t.total[b] - t.total[a]
                                                || a - b);
                         sorted = true;
                     }
                     return matches;
                 } };
    }

    /*
     * One row per function, {name, flat, cum, fn, pflat, pcum}: flat,
     * the bytes of the stacks it ends (it allocated them itself), and
     * cum, those of the stacks it is on; fn its index in names; pflat
     * and pcum the same of the other measure (objects beside bytes).  A recursive function
     * counts once per stack.  In a comparison, dflat and dcum are their
     * changes since the base: a function that only the base has gets a
     * row of 0 with its loss.  Of a callers' tree, or of a profile and
     * a type.
     */
    function top(t, ti) {
        if (t.types !== undefined) {
            t = buildTree(t, ti);
        }

        const m = t.names.length, rows = [], based = t.based;
        const flat = new Float64Array(m), cum = new Float64Array(m);
        const bflat = new Float64Array(m), bcum = new Float64Array(m);
        const pflat = new Float64Array(m), pcum = new Float64Array(m);
        const sflat = new Float64Array(m), mflat = new Float64Array(m);
        const on = new Int32Array(m), { total, count, first, kids } = t;
        /* the nodes to visit: a path's and its siblings', grown as needed */
        let todo = new Int32Array(1024), sp = 0;

        /* depth first: a function on the path already is not counted */
        todo[sp++] = 0;
        while (sp > 0) {
            const i = todo[--sp];

            if (i < 0) {
                on[t.name[~i]]--;
                continue;
            }
            if (sp + 1 + first[i + 1] - first[i] > todo.length) {
                const more = new Int32Array(2 * (todo.length + first[i + 1]
                                                 - first[i]));

                more.set(todo.subarray(0, sp));
                todo = more;
            }

            /* its own: its total less its children's (t.self unmade) */
            let mine = total[i], cmine = count[i];

            /* below its children: its function off the path after them */
            if (i > 0) {
                todo[sp++] = ~i;
            }
            for (let k = first[i]; k < first[i + 1]; k++) {
                mine -= total[kids[k]];
                cmine -= count[kids[k]];
                todo[sp++] = kids[k];
            }
            if (i > 0) {
                const f = t.name[i];

                flat[f] += mine;
                pflat[f] += cmine;
                /* a tree without a base has zeros there: not read, not
                   paged in */
                if (based) {
                    bflat[f] += t.bself[i];
                    sflat[f] += t.ssig[i];
                }
                if (t.margined) {
                    mflat[f] += t.smarg[i];
                }
                if (on[f]++ === 0) {
                    cum[f] += total[i];
                    pcum[f] += count[i];
                    bcum[f] += based ? t.base[i] : 0;
                }
            }
        }
        cum.forEach((c, f) => {
            if (!(c > 0 || bcum[f] > 0)) {
                return;
            }

            const r = { name: t.names[f], flat: flat[f], cum: c, fn: f,
                        pflat: pflat[f], pcum: pcum[f] };

            if (based) {
                r.dflat = flat[f] - bflat[f];
                r.dcum = c - bcum[f];
            }
            if (t.margined) {
                /* the stacks it ends beyond the noise, and their margin */
                r.sflat = sflat[f];
                r.mflat = mflat[f];
            }
            rows.push(r);
        });
        return sortRows(rows, 'flat', true);
    }

    /* "/usr/lib/nginx/modules/ngx_http_lua_module.so" -> its base name */
    function baseName(path) {
        return String(path).replace(/^.*\//, '');
    }

    /*
     * The file a function lies in: {path, kind, label} (label names it
     * in the modules' table: the base name, "nginx" for the binary), or
     * null when not known.
     */
    function fileOf(p, f) {
        const k = p.name_files ? p.name_files[f] : -1;
        const file = k >= 0 && p.files ? p.files[k] : undefined;

        if (file === undefined) {
            return null;
        }
        return { path: file.path, kind: file.kind,
                 label: file.kind === 'binary' ? 'nginx' : baseName(file.path) };
    }

    const MODULE_RULE = 'A stack\'s bytes go to the innermost frame in an '
        + 'nginx module\'s file (ngx_*_module.so); without one, to nginx '
        + 'if a frame lies in the nginx binary; else to the library of its '
        + 'innermost frame with a known file; else to "unknown".';

    /*
     * Which loaded module or library holds the bytes of a callers' tree:
     * rows {module, kind, bytes, objects}, most first, by MODULE_RULE.
     * Each node takes it from its path, one forward pass.
     */
    function modules(t, p) {
        const n = t.n, files = p.files || [];
        const nameFile = p.name_files || [];
        /*
         * per node, packed: the innermost module's file + 1 (bits 0-14),
         * the innermost known file + 1 (15-29), a frame in nginx (30);
         * past 32,766 files (none has so many), a file counts as unknown
         */
        const FILE = 0x7fff, BIN = 1 << 30;
        const nf = Math.min(files.length, FILE - 1);
        const kind = files.slice(0, nf).map((file) => file.kind);
        const at = new Int32Array(n), rows = new Map(), { total, count } = t;
        /* by row: a file's (0 to nf - 1), nginx's (nf), unknown (nf + 1) */
        const bytes = new Float64Array(nf + 2);
        const objects = new Float64Array(nf + 2);
        /* a module's, else nginx's, else a file's, else unknown */
        const row = (c) => ((c & FILE) > 0 ? (c & FILE) - 1 : c & BIN ? nf
                            : ((c >> 15) & FILE) > 0 ? ((c >> 15) & FILE) - 1
                            : nf + 1);

        for (let i = 1; i < n; i++) {
            const f = t.name[i], k = f < nameFile.length ? nameFile[f] : -1;
            let c = at[t.parent[i]];

            if (k >= 0 && k < nf) {
                c = (c & ~(FILE << 15)) | ((k + 1) << 15)
                    | (kind[k] === 'binary' ? BIN : 0);
                c = kind[k] === 'module' ? (c & ~FILE) | (k + 1) : c;
            }
            at[i] = c;

            /*
             * its own bytes to its row: its total there, and taken from
             * its parent's (t.self unmade)
             */
            const r = row(c), q = t.parent[i];

            bytes[r] += total[i];
            objects[r] += count[i];
            if (q > 0) {
                bytes[row(at[q])] -= total[i];
                objects[row(at[q])] -= count[i];
            }
        }
        for (let r = 0; r < nf + 2; r++) {
            if (bytes[r] === 0 && objects[r] === 0) {
                continue;
            }

            const name = r === nf ? 'nginx' : r === nf + 1 ? 'unknown'
                       : baseName(files[r].path);
            const entry = rows.get(name) || { module: name, kind: r === nf
                ? 'binary' : r === nf + 1 ? 'unknown' : files[r].kind,
                bytes: 0, objects: 0 };

            entry.bytes += bytes[r];
            entry.objects += objects[r];
            rows.set(name, entry);
        }
        return [...rows.values()].sort((a, b) => b.bytes - a.bytes
                                       || (a.module < b.module ? -1 : 1));
    }

    /*
     * The largest change of a node's own bytes beyond the noise, one
     * place that allocates: the deepest colour.  Not of a total, or the
     * root's would pale all else; the callers of a change that large are
     * as deep.
     */
    function largestChange(t) {
        let most = 0;

        for (let i = 0; i < t.n; i++) {
            most = Math.max(most, Math.abs(t.ssig[i]));
        }
        return most;
    }

    /*
     * A frame's classes in a comparison: "grown" or "shrunk" with a depth
     * from d1 (faint) to d5 (the largest change or more), or, grey,
     * "same": unchanged, or changed within the sampling noise.  The
     * depth goes by bytes, not by percent, as in the classic differential
     * flame graph: what matters is where the bytes went.  fresh: the
     * frame is new since the base (it had nothing then), so that within
     * the noise it is "new", apart from the unchanged.
     */
    function changeClass(change, largest, fresh = false) {
        if (change === 0 || !(largest > 0)) {
            return fresh ? 'new' : 'same';
        }

        const d = Math.ceil(5 * Math.abs(change) / largest);

        return (change > 0 ? 'grown' : 'shrunk')
               + ' d' + Math.min(5, Math.max(1, d));
    }

    /*
     * What only the base had: the outermost nodes with nothing now, which
     * a graph of widths by now cannot show.  Largest loss first.
     */
    function gone(t) {
        const out = [];

        for (let i = 1; i < t.n; i++) {
            if (t.total[i] === 0 && t.base[i] > 0 && t.total[t.parent[i]] > 0) {
                out.push(i);
            }
        }
        return out.sort((a, b) => t.base[b] - t.base[a]
                                  || (label(t, a) < label(t, b) ? -1 : 1));
    }

    /* in place, by key, then by name so that equal rows keep their order */
    function sortRows(rows, key, desc, by = 'name') {
        const sign = desc ? -1 : 1;

        return rows.sort((a, b) => a[key] !== b[key]
            ? (a[key] < b[key] ? -sign : sign)
            : (a[by] < b[by] ? -1 : a[by] > b[by] ? 1 : 0));
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

    /*
     * A change and its margin as the server words them (noise.c's
     * interval): "+17.5 MiB, 99%: 9.0 to 26.0 MiB", one unit for the
     * three, that of the largest.
     */
    function formatInterval(change, margin, level = 0.99) {
        const lo = change - margin, hi = change + margin;
        const big = Math.max(Math.abs(lo), Math.abs(hi), Math.abs(change));
        const k = big < 1024 ? 0 : big < 1024 * 1024 ? 1
            : big < 1024 * 1024 * 1024 ? 2 : 3;
        const div = Math.pow(1024, k), digits = k === 0 ? 0 : 1;
        const unit = ['B', 'KiB', 'MiB', 'GiB'][k];
        const fix = (n) => {
            const v = (n / div).toFixed(digits);

            /* "-0.0" is 0 */
            return Number(v) === 0 ? (0).toFixed(digits) : v;
        };

        return (change >= 0 ? '+' : '') + fix(change) + ' ' + unit + ', '
               + Math.round(level * 100) + '%: ' + fix(lo) + ' to '
               + fix(hi) + ' ' + unit;
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
     * Seconds as an operator reads them: "45 s", "9 min 58 s",
     * "2 h 59 min", "3 d 4 h"; the smaller unit left out past an hour.
     */
    function formatDuration(s) {
        s = Math.max(0, Math.round(s));

        const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600);
        const m = Math.floor(s % 3600 / 60), r = s % 60;
        const two = (a, ua, b, ub) => a + ' ' + ua + (b ? ' ' + b + ' ' + ub
                                                        : '');

        return d ? two(d, 'd', h, 'h') : h ? two(h, 'h', m, 'min')
               : m ? two(m, 'min', r, 's') : r + ' s';
    }

    /*
     * The colours of the modules' scheme: one per file label, in the
     * order of the modules' table (most bytes first), then the rest; past
     * the eight colours, one grey for all.  {label -> class}
     */
    function moduleColors(rows, p) {
        const colors = new Map();
        const labels = rows.map((r) => r.module).concat(
            (p.files || []).map((f) => (f.kind === 'binary' ? 'nginx'
                                                           : baseName(f.path))));

        for (const name of labels) {
            if (!colors.has(name)) {
                colors.set(name, colors.size < 8 ? 'm' + colors.size : 'mx');
            }
        }
        return colors;
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

    const MallocFlame = { buildTree, countIndex, unitOf, typeLabel,
                          formatValue, formatValueDelta, children, own,
                          warming, release,
                          label, chainLabel,
                          invert, sandwich, regex, filter, find, pathOf, layout,
                          search, top, fileOf, modules, MODULE_RULE,
                          largestChange, changeClass, gone, sortRows,
                          formatBytes, formatDelta, formatInterval,
                          formatShare, formatCount,
                          formatDuration, colorOf, moduleColors, choices,
                          query, snapshotTimes, snapshotLabel };

    if (typeof module !== 'undefined' && module.exports) {
        module.exports = MallocFlame;
    } else {
        global.MallocFlame = MallocFlame;
    }
}(this));
