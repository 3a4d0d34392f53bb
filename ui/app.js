/*
 * The heap viewer's DOM glue: fetch the admin location's JSON, hand it to
 * MallocFlame (flame.js), draw what comes back.  Every URL is relative:
 * the page is <location>/ui, and the location is not known here.
 *
 * body[data-state] is "loading", then "ready" once the flame graph is
 * drawn, or "error" when the profile could not be had: tests wait for it.
 * With "ready", body[data-fetch-ms] and body[data-draw-ms] say how long
 * the profile took to come and to be drawn (make bench reads them).
 *
 * The URL's fragment holds the view, so that a link opens it again and a
 * test opens it without clicking; all keys are optional:
 *
 *   pid=P           one worker (the live heap or a growth, uncompared)
 *   seconds=N       the growth over N seconds, not the live heap
 *   snapshot=NAME   a scheduled snapshot, not the live heap: "snapshot-
 *                   <time>" for all its files, or one file's name
 *   base=NAME       compare with that snapshot (not with seconds)
 *   type=alloc      bytes allocated, not in use (with prof_accum only)
 *   zoom=NAME       repeated: the zoomed frame's path below the root
 *   search=TEXT     the functions to mark
 *
 * e.g. #snapshot=snapshot-20261201T031814Z&base=snapshot-20261201T021814Z
 */

(function () {
    'use strict';

    const F = window.MallocFlame;
    const ROW = 18;         /* px per row of the flame graph, as viewer.css */
    const TOP_ROWS = 500;   /* more rows cost more than anyone reads */

    const state = {
        choices: F.choices(new URLSearchParams()),  /* as the fragment */
        snapshots: [],      /* GET snapshots, by time (snapshotTimes) */
        profile: null,      /* GET pprof/heap.json */
        shown: null,        /* the choices it was loaded with */
        tree: null,
        based: false,       /* a comparison: the tree has base totals */
        largest: 0,         /* the largest change, the deepest colour */
        counted: false,     /* the profile has objects beside the bytes */
        rows: [],           /* the top table, sorted */
        sort: { key: 'flat', desc: true },
        focus: [],          /* the zoom: names from below the root */
        frames: [],         /* #flame's child i shows frames[i] */
        loads: 0,           /* a newer load makes older answers moot */
        abort: null         /* and ends their wait: a growth takes long */
    };

    const $ = (id) => document.getElementById(id);

    function el(tag, text, cls) {
        const e = document.createElement(tag);

        e.textContent = text === undefined ? '' : String(text);
        if (cls) {
            e.className = cls;
        }
        return e;
    }

    function row(cells) {
        const tr = el('tr');

        cells.forEach((c) => tr.append(c instanceof Node ? c : el('td', c)));
        return tr;
    }

    /*
     * The JSON of an answer.  An error throws with the module's error.text;
     * err.body keeps the JSON, which often still lists the workers (a 503
     * without jemalloc, a 504 from one stopped worker).
     */
    async function getJSON(url, init) {
        const res = await fetch(url, init), text = await res.text();
        let body = null;

        try {
            body = JSON.parse(text);
        } catch (e) {
            /* nginx's own HTML error pages: a deny, a 413 */
        }
        if (res.ok && body !== null) {
            return body;
        }

        const err = new Error((body && body.error && body.error.text)
                              || url + ': HTTP ' + res.status);
        err.body = body;
        throw err;
    }

    function showError(text) {
        $('error').appendChild(el('p', text));
        $('error').hidden = false;
    }

    function clearErrors() {
        $('error').replaceChildren();
        $('error').hidden = true;
    }

    /* GET ./: the workers to choose from, and whether we may write */
    async function loadIndex() {
        let index;

        try {
            index = await getJSON('./');
        } catch (e) {
            showError(e.message);
            index = e.body;
        }
        if (!index) {
            return;
        }

        const select = $('worker'), keep = select.value;

        select.replaceChildren(new Option('all', ''));
        for (const w of index.workers || []) {
            if (w.pid) {    /* null: no process in that slot to ask */
                select.appendChild(new Option('worker ' + w.worker
                                              + ' (pid ' + w.pid + ')', w.pid));
            }
        }
        /* a pid that a reload took away falls back to "all" */
        select.value = keep;
        if (select.value !== keep) {
            select.value = '';
        }

        $('sampling').textContent = 'sampling '
            + (index.prof_active ? 'on' : 'off')
            + (index.prof_active_remaining
               ? ' for ' + index.prof_active_remaining + ' s more' : '');
        showControls(index.write === true);
    }

    /* the buttons exist only where the location has write=on */
    function showControls(write) {
        if (!write) {
            $('controls').replaceChildren();
            return;
        }
        if ($('start') !== null) {
            return;
        }
        for (const [id, text, on] of [['start', 'Start sampling', true],
                                       ['stop', 'Stop sampling', false]]) {
            const b = el('button', text);

            b.id = id;
            b.type = 'button';
            b.addEventListener('click', () => setActive(on));
            $('controls').appendChild(b);
        }
    }

    async function setActive(on) {
        const buttons = [$('start'), $('stop')];

        buttons.forEach((b) => { b.disabled = true; });
        clearErrors();
        try {
            /* same-origin: the location refuses what other sites send */
            await getJSON('./prof_active',
                          { method: 'POST', body: on ? 'true' : 'false' });
        } catch (e) {
            showError(e.message);
        }
        await Promise.all([loadIndex(), loadStats()]);
        buttons.forEach((b) => { b.disabled = false; });
    }

    /* GET ./stats: a row per worker, even when some did not answer */
    async function loadStats() {
        let stats;

        try {
            stats = await getJSON('./stats');
        } catch (e) {
            showError(e.message);
            stats = e.body;
        }

        $('workers').tBodies[0].replaceChildren(
            ...((stats && stats.workers) || []).flatMap(statsRows),
            ...(stats && stats.master ? masterRows(stats.master) : []));
    }

    /* a worker's row, and a row with the sentence if it grew outside malloc */
    function statsRows(w) {
        return [statsRow(w), ...outsideRow(w)];
    }

    function masterRows(m) {
        const tr = row(['master', m.pid, el('td', 'reads the configuration')]);

        tr.cells[2].colSpan = 4;
        tr.append(rssCell(m), el('td', 'at the last read'));
        tr.className = 'master';
        return [tr, ...outsideRow(m)];
    }

    function outsideRow(x) {
        if (!x.outside_malloc) {
            return [];
        }
        const td = el('td', x.outside_malloc.text), tr = row([td]);

        td.colSpan = 8;
        tr.className = 'outside';
        return [tr];
    }

    /*
     * RSS as a bar of its parts (rss_parts, which add up to it), the
     * zones together; each part says its name and bytes on hover.
     */
    const PARTS = ['allocated', 'allocator_overhead', 'shared_zones',
        'other_shared', 'other_anonymous', 'stack', 'file'];

    function rssCell(x) {
        const td = el('td'), box = el('div', '', 'rss'),
            bar = el('div', '', 'rss-bar'), p = x.rss_parts;

        if (!x.rss || !p) {
            td.textContent = '-';
            return td;
        }
        for (const name of PARTS) {
            const bytes = name === 'shared_zones'
                ? (p.shared_zones || []).reduce((a, z) => a + z.resident, 0)
                : p[name] || 0;
            const part = el('span', '', 'part ' + name);
            let title = name + ': ' + F.formatBytes(bytes);

            if (name === 'shared_zones') {
                title += (p.shared_zones || []).map((z) => '\n  ' + z.name
                    + ': ' + F.formatBytes(z.resident) + ' of '
                    + F.formatBytes(z.size)).join('');
            }
            part.style.width = (100 * bytes / x.rss) + '%';
            part.title = title;
            part.dataset.part = name;
            part.dataset.bytes = bytes;
            bar.append(part);
        }
        box.append(bar, el('span', F.formatBytes(x.rss), 'num'));
        td.append(box);
        return td;
    }

    function statsRow(w) {
        let tr;

        if (w.allocated === undefined) {
            /* no figures: it failed, or no process runs in the slot */
            const why = el('td', w.error ? w.error.text : 'no process');

            why.colSpan = 6;
            tr = row([w.worker, w.pid || '-', why]);
            tr.className = 'failed';
        } else {
            tr = row([w.worker, w.pid, w.prof_active ? 'on' : 'off',
                el('td', w.sample_bytes ? F.formatBytes(w.sample_bytes)
                                        : 'never', 'num'),
                el('td', F.formatBytes(w.allocated), 'num'),
                el('td', F.formatBytes(w.resident), 'num'),
                rssCell(w),
                w.stale ? 'stale, ' + Math.round(w.age || 0) + ' s old'
                        : 'current']);
            if (w.stale) {
                tr.className = 'stale';
            }
            tr.cells[3].title = '2^' + w.lg_prof_sample + ' bytes';
        }
        tr.dataset.pid = w.pid || '';
        return tr;
    }

    /*
     * GET ./snapshots: the snapshots to offer, a choice per time.  Both
     * lists are made anew, with the choice at hand kept even when no
     * longer listed: its load then says why it failed.
     */
    async function loadSnapshots() {
        let list = [];

        try {
            list = F.snapshotTimes((await getJSON('./snapshots')).snapshots);
        } catch (e) {
            showError(e.message);
        }
        state.snapshots = list;

        const options = () => list.map((s) => new Option(
            F.snapshotLabel(s.name)
            + (s.files.length > 1 ? ' (' + s.files.length + ' files)' : ''),
            s.name));

        $('snapshot').replaceChildren(...options());
        $('base').replaceChildren(new Option('nothing', ''), ...options());
        showChoices(state.choices);
        showDownloads();
    }

    /* a select's value; an option for it if the list has none (yet) */
    function pick(select, value, text) {
        value = String(value);
        if (!Array.from(select.options).some((o) => o.value === value)) {
            select.appendChild(new Option(text, value));
        }
        select.value = value;
    }

    /* the form as the choices say; a select not yet filled gets the value */
    function showChoices(c) {
        pick($('worker'), c.pid, 'pid ' + c.pid);
        $('mode').value = c.snapshot ? 'snapshot'
                          : c.seconds ? 'growth' : 'live';
        if (c.seconds) {
            $('seconds').value = c.seconds;
        }
        if (c.snapshot) {
            pick($('snapshot'), c.snapshot, F.snapshotLabel(c.snapshot));
        }
        pick($('base'), c.base, F.snapshotLabel(c.base));
        sync();
    }

    /* the choices as the form says, consistent as sync() keeps it */
    function formChoices() {
        const mode = $('mode').value;

        const base = mode === 'growth' ? '' : $('base').value;

        return { pid: mode === 'snapshot' || base ? '' : $('worker').value,
                 seconds: mode === 'growth' ? $('seconds').value : 0,
                 snapshot: mode === 'snapshot' ? $('snapshot').value : '',
                 base };
    }

    /*
     * What goes with what, as the endpoint takes it: snapshots are of
     * all workers, so a snapshot or a comparison has no worker; a growth
     * has no base.  No snapshots: nothing to offer.
     */
    function sync() {
        const mode = $('mode').value;
        const listed = $('snapshot').options.length > 0;

        $('seconds').disabled = mode !== 'growth';
        $('worker').disabled = mode === 'snapshot'
                               || (mode !== 'growth' && $('base').value !== '');
        $('snapshot').disabled = mode !== 'snapshot';
        $('base').disabled = mode === 'growth';
        $('mode').querySelector('[value=snapshot]').disabled = !listed;
        $('snapshot-choice').hidden = !listed;
        $('base-choice').hidden = $('base').options.length < 2;

        /* a snapshot against itself shows nothing */
        for (const o of $('base').options) {
            o.disabled = o.value !== '' && mode === 'snapshot'
                         && o.value === $('snapshot').value;
        }
        if ($('base').selectedOptions[0].disabled) {
            $('base').value = '';
        }
    }

    /*
     * The files of the snapshots chosen, for pprof (-diff_base takes the
     * base's); the live heap's downloads would mislead beside a snapshot.
     */
    function showDownloads() {
        const c = state.choices, li = $('download-snapshots');
        const files = (name) => (state.snapshots.find((s) => s.name === name)
                                 || { files: [name] }).files;

        li.replaceChildren();
        for (const [what, name] of [['the snapshot: ', c.snapshot],
                                    ['the base: ', c.base]]) {
            if (name) {
                li.append(li.childNodes.length ? '; ' + what : what);
                files(name).forEach((file, i) => {
                    const a = el('a', file);

                    a.href = './snapshots/' + encodeURIComponent(file);
                    li.append(i ? ', ' : '', a);
                });
            }
        }
        li.hidden = li.childNodes.length === 0;
        for (const id of ['download-pprof', 'download-heap']) {
            $(id).parentNode.hidden = c.snapshot !== '';
        }
    }

    /* GET ./pprof/heap.json with the choices made, then draw it */
    async function loadProfile() {
        const id = ++state.loads, c = state.choices;

        if (state.abort !== null) {
            state.abort.abort();
        }
        state.abort = new AbortController();

        document.body.dataset.state = 'loading';
        $('status').textContent = c.seconds ? 'measuring growth for '
                                              + c.seconds + ' s\u2026'
                                            : 'loading\u2026';
        /* these take no snapshot or base; heap takes no seconds either */
        $('download-pprof').href = './pprof/heap.pb.gz'
                                   + F.query({ pid: c.pid,
                                               seconds: c.seconds });
        $('download-heap').href = './heap' + F.query({ pid: c.pid });

        try {
            const asked = performance.now();
            const profile = await getJSON('./pprof/heap.json' + F.query(c),
                                          { signal: state.abort.signal });
            const got = performance.now();

            if (id === state.loads) {
                state.profile = profile;
                state.shown = c;
                build();

                /* make bench reads how long the profile and the drawing took */
                document.body.dataset.fetchMs = Math.round(got - asked);
                document.body.dataset.drawMs = Math.round(performance.now()
                                                          - got);
                document.body.dataset.state = 'ready';
            }
        } catch (e) {
            if (id === state.loads) {
                /* old data under new choices would mislead: clear it */
                state.profile = state.tree = null;
                state.based = false;
                state.rows = [];
                showError(e.message);
                draw();
                renderTop();
                showGone();
                document.body.dataset.state = 'error';
            }
        }
        if (id === state.loads) {
            $('status').textContent = '';
        }
    }

    /* the tree and table of the chosen type, from the profile at hand */
    function build() {
        const p = state.profile, alloc = p.types.includes('alloc_space');

        /* alloc_* exist only with prof_accum: offer them only then */
        $('type-choice').hidden = !alloc;
        if (!alloc) {
            $('type').value = 'inuse';
        }

        let ti = p.types.indexOf($('type').value + '_space');

        ti = ti !== -1 ? ti : Math.max(0, p.types.indexOf('inuse_space'));
        state.tree = F.buildTree(p, ti);
        state.based = Array.isArray(p.base_values);
        state.largest = state.based ? F.largestChange(state.tree) : 0;
        state.counted = F.countIndex(p, ti) !== -1;
        if (!state.based && ['dflat', 'dcum'].includes(state.sort.key)) {
            state.sort = { key: 'flat', desc: true };
        }
        state.rows = F.sortRows(F.top(p, ti), state.sort.key, state.sort.desc);
        $('summary').textContent = summary(p, state.tree,
                                           p.types[ti].startsWith('alloc'));
        draw();
        renderTop();
        showGone();
    }

    /* 1 -> "1 object", 1234 -> "1,234 objects" */
    function count(n, what) {
        return F.formatCount(n) + ' ' + what + (n === 1 ? '' : 's');
    }

    function summary(p, tree, alloc) {
        const c = state.shown, tail = ', ' + count(p.stacks.length, 'stack')
            + '; one sample per ' + F.formatBytes(p.period)
            + ' allocated on average.';
        /* a window compares its end with its start, as a base */
        const what = p.seconds ? (state.based ? ' live after a window of '
                                  : ' grew over ') + p.seconds + ' s'
            : c.snapshot ? (alloc ? ' allocated' : ' live') + ' as of '
                           + F.snapshotLabel(c.snapshot)
            : alloc ? ' allocated since sampling began' : ' live';
        const since = !state.based ? ''
            : p.seconds ? '; ' + F.formatDelta(tree.total - tree.base)
                          + ' over the window' + judged(p.comparison)
            : '; ' + F.formatDelta(tree.total - tree.base)
              + ' since the base, ' + F.snapshotLabel(c.base) + ' ('
              + F.formatBytes(tree.base) + ' then)' + judged(p.comparison);

        if (tree.total === 0) {
            return 'No sampled bytes' + what + since
                   + (c.snapshot || state.based ? '.'
                      : ': start sampling, let nginx work, then load again.');
        }
        return F.formatBytes(tree.total) + what
               + (state.counted ? ' in ' + count(tree.count, 'object') : '')
               + since + tail;
    }

    /*
     * What a comparison rests on: the changes beyond the noise (the only
     * ones painted), the samples, and the exact figure when known.
     */
    function judged(c) {
        if (!c) {
            return '';
        }
        return '; ' + (c.grew + c.shrank === 0
                       ? 'no stack changed beyond the sampling noise'
                       : F.formatDelta(c.grown) + ' grew and '
                         + F.formatDelta(-c.shrunk) + ' shrank beyond the '
                         + 'sampling noise, in ' + (c.grew + c.shrank)
                         + ' stacks (painted; the rest is grey)')
               + ' at ' + Math.round(c.level * 100) + '% confidence, on '
               + F.formatCount(c.samples) + ' samples now and '
               + F.formatCount(c.base_samples) + ' then'
               + (c.exact ? '; ' + c.exact.of + ': '
                            + F.formatDelta(c.exact.change) + ' (exact)'
                          : '')
               + (c.caveat ? '; ' + c.caveat : '');
    }

    /* the change of a frame, for its title */
    function change(node) {
        const d = node.total - node.base;

        return d === 0 ? 'unchanged since the base'
            : F.formatDelta(d) + ' since the base'
              + (node.base > 0 ? ' (' + F.formatBytes(node.base) + ' then)'
                               : ' (new)')
              + (node.sig === 0 ? ', within the sampling noise'
                 : node.sig !== d ? ', ' + F.formatDelta(node.sig)
                                    + ' of it beyond the sampling noise'
                 : '');
    }

    /*
     * What only the base had cannot be drawn where widths are bytes now:
     * the largest of it is named here, the rest summed.
     */
    function showGone() {
        const gone = state.based ? F.gone(state.tree) : [], most = 5;
        const rest = gone.slice(most).reduce((sum, n) => sum + n.base, 0);

        $('legend').hidden = !state.based;
        $('gone').hidden = gone.length === 0;
        $('gone').replaceChildren(gone.length === 0 ? ''
                                  : 'Gone since the base, so not drawn: ');
        gone.slice(0, most).forEach((n, i) => {
            const name = el('code', n.name);

            name.title = F.pathOf(n).join(' \u2192 ');
            $('gone').append(i ? ', ' : '', name,
                             ' ' + F.formatDelta(-n.base));
        });
        if (rest > 0) {
            $('gone').append(', and ' + (gone.length - most) + ' more '
                             + F.formatDelta(-rest));
        }
    }

    function tooltip(f, focus) {
        const node = f.node, all = state.tree.total;

        return node.name + '\n' + F.formatBytes(node.total) + ', '
            + F.formatShare(node.total, all) + ' of all'
            + (focus !== state.tree && !f.ancestor
               ? ', ' + F.formatShare(node.total, focus.total) + ' of '
                 + focus.name : '')
            + (state.based ? '\n' + change(node) : '')
            + (state.counted ? '\n' + count(node.count, 'object') : '')
            + (node.self > 0 ? '\nallocated here: ' + F.formatBytes(node.self)
                             : '');
    }

    /* the flame graph: only the frames that layout() keeps get an element */
    function draw() {
        const box = $('flame'), width = box.clientWidth || 800;
        const focus = state.tree && F.find(state.tree, state.focus);
        let depth = 0;

        state.frames = state.tree
            ? F.layout(state.tree, state.focus, width, { minPx: 0.5,
                                                          cap: 4000 })
            : [];
        box.replaceChildren(...state.frames.map((f, i) => {
            const e = el('div', f.node.name, 'frame '
                         + (state.based
                            ? F.changeClass(f.node.sig, state.largest)
                            : F.colorOf(f.node.name))
                         + (f.ancestor ? ' ancestor' : '')
                         + (f.node === focus ? ' focus' : '')
                         /* the name stays in the DOM, for find and readers */
                         + (f.w < 24 ? ' narrow' : ''));

            e.title = tooltip(f, focus);
            e.dataset.i = i;
            /* CSSOM, not a style attribute: the CSP allows only this */
            e.style.left = f.x + 'px';
            e.style.width = f.w + 'px';
            e.style.top = f.depth * ROW + 'px';
            depth = Math.max(depth, f.depth + 1);
            return e;
        }));
        box.style.height = depth * ROW + 'px';
        $('reset').disabled = focus === state.tree;
        mark();
    }

    /* the search: frames and table rows of matching functions get "match" */
    function mark() {
        const text = $('search').value.trim();
        const found = text && state.tree ? F.search(state.tree, text) : null;
        const hit = (name) => found !== null && found.names.has(name);

        Array.from($('flame').children).forEach((e, i) =>
            e.classList.toggle('match', hit(state.frames[i].node.name)));
        Array.from($('top').tBodies[0].rows).forEach((tr) =>
            tr.classList.toggle('match', hit(tr.cells[0].textContent)));
        $('match').textContent = found === null ? ''
            : 'matched ' + F.formatBytes(found.total) + ', '
              + F.formatShare(found.total, state.tree.total) + ' of all';
    }

    function renderTop() {
        const all = state.tree ? state.tree.total : 0;
        const more = state.rows.length - TOP_ROWS;
        /* a comparison's change columns, as their heads in index.html */
        const delta = (d) => (state.based ? [el('td', F.formatDelta(d),
            'num' + (d > 0 ? ' grown' : d < 0 ? ' shrunk' : ''))] : []);

        $('top').tBodies[0].replaceChildren(...state.rows.slice(0, TOP_ROWS)
            .map((r) => row([el('td', r.name, 'name'),
                             el('td', F.formatBytes(r.flat), 'num'),
                             el('td', F.formatShare(r.flat, all), 'num'),
                             ...delta(r.dflat),
                             el('td', F.formatBytes(r.cum), 'num'),
                             el('td', F.formatShare(r.cum, all), 'num'),
                             ...delta(r.dcum)])));
        $('top-more').textContent = more > 0
            ? more + ' more functions, each smaller: search to find one' : '';

        for (const th of $('top').tHead.rows[0].cells) {
            if (th.classList.contains('delta')) {
                th.hidden = !state.based;
            }
            if (th.dataset.key === state.sort.key) {
                th.setAttribute('aria-sort', state.sort.desc ? 'descending'
                                                             : 'ascending');
            } else {
                th.removeAttribute('aria-sort');
            }
        }
        mark();
    }

    /*
     * A burst of events (typing, resizing) makes one redraw.  A timer, not
     * requestAnimationFrame, which never fires where nothing is painted:
     * headless browsers in tests.
     */
    function later(fn) {
        let queued = false;

        return () => {
            if (!queued) {
                queued = true;
                setTimeout(() => { queued = false; fn(); }, 30);
            }
        };
    }

    /* the view from the URL's fragment: its keys are at the top */
    function readHash() {
        const h = new URLSearchParams(location.hash.slice(1));

        state.choices = F.choices(h);
        state.focus = h.getAll('zoom');
        $('search').value = h.get('search') || '';
        $('type').value = h.get('type') === 'alloc' ? 'alloc' : 'inuse';
        showChoices(state.choices);
    }

    function writeHash() {
        const h = new URLSearchParams(), c = state.choices;

        for (const key of ['pid', 'seconds', 'snapshot', 'base']) {
            if (c[key]) {
                h.set(key, c[key]);
            }
        }
        if ($('type').value !== 'inuse') {
            h.set('type', $('type').value);
        }
        state.focus.forEach((name) => h.append('zoom', name));
        if ($('search').value !== '') {
            h.set('search', $('search').value);
        }
        history.replaceState(null, '', h.toString() === '' ? location.pathname
                             + location.search : '#' + h);
    }

    function zoom(path) {
        state.focus = path;
        writeHash();
        draw();
    }

    function refresh() {
        clearErrors();
        loadIndex();
        loadStats();
        loadSnapshots();
        loadProfile();
    }

    /* the form's choices into the fragment, and what they show */
    function apply() {
        sync();
        state.choices = formChoices();
        writeHash();
        refresh();
    }

    $('flame').addEventListener('click', (ev) => {
        const e = ev.target.closest('.frame');

        if (e !== null) {
            zoom(F.pathOf(state.frames[e.dataset.i].node));
        }
    });
    $('reset').addEventListener('click', () => zoom([]));
    document.addEventListener('keydown', (ev) => {
        if (ev.key === 'Escape' && !ev.target.closest('input, select')) {
            zoom([]);
        }
    });
    $('search').addEventListener('input', later(() => {
        writeHash();
        mark();
    }));
    /* a fragment edited by hand: a load if the choices changed */
    window.addEventListener('hashchange', () => {
        const was = F.query(state.choices), type = $('type').value;

        readHash();
        if (F.query(state.choices) !== was) {
            refresh();
        } else if ($('type').value !== type && state.profile !== null) {
            build();
        } else {
            draw();
        }
    });
    window.addEventListener('resize', later(draw));

    $('top').tHead.addEventListener('click', (ev) => {
        const th = ev.target.closest('th[data-key]');

        if (th !== null) {
            /* again on the same head turns the order; names go A to Z */
            const key = th.dataset.key;

            state.sort = { key, desc: key === state.sort.key
                                      ? !state.sort.desc : key !== 'name' };
            F.sortRows(state.rows, key, state.sort.desc);
            renderTop();
        }
    });
    /* a function of the table: show it in the graph */
    $('top').tBodies[0].addEventListener('click', (ev) => {
        const td = ev.target.closest('td.name');

        if (td !== null) {
            $('search').value = td.textContent;
            writeHash();
            mark();
        }
    });

    $('choices').addEventListener('submit', (ev) => {
        ev.preventDefault();
        apply();
    });
    for (const id of ['worker', 'snapshot', 'base']) {
        $(id).addEventListener('change', apply);
    }
    /* no load yet: a growth waits its seconds, which may need setting */
    $('mode').addEventListener('change', () => {
        sync();
        if (!$('seconds').disabled) {
            $('seconds').focus();
        }
    });
    $('type').addEventListener('change', () => {
        writeHash();
        if (state.profile !== null) {
            build();
        }
    });

    readHash();
    refresh();
}());
