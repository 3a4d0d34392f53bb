/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */

/*
 * The heap viewer's DOM glue: fetch the admin location's JSON, hand it to
 * MallocFlame (flame.js), draw what comes back.  Every URL is relative:
 * the page is <location>/ui, and the location is not known here.
 *
 * body[data-state] is "loading", then "ready" once the flame graph is
 * drawn, or "error" when the profile could not be had: tests wait for it;
 * body[data-tables] is "ready" once the tables below it are filled too.
 * With "ready", body[data-fetch-ms] and body[data-draw-ms] say how long
 * the profile took to come and to be drawn (make bench reads them).
 * The traffic view (GET traffic, asked when shown and never while
 * hidden; the heap's profile is not asked while it shows) has its own:
 * body[data-traffic] is "loading", then "ready" or "error".
 *
 * The URL's fragment holds the view, so that a link opens it again and a
 * test opens it without clicking; all keys are optional:
 *
 *   pid=P           one worker (the live heap or a growth, uncompared)
 *   seconds=N       the growth over N seconds, not the live heap
 *   snapshot=NAME   a scheduled snapshot, not the live heap: "snapshot-
 *                   <time>" for all its files, or one file's name
 *   base=NAME       compare with that snapshot (not with seconds)
 *   type=T          the sample type shown, as pprof's sample menu: alloc
 *                   (bytes allocated, with prof_accum only),
 *                   inuse_objects, alloc_objects, or a file's own type;
 *                   bytes in use (inuse_space) if none
 *   view=V          allocators (the allocating functions at the top),
 *                   sandwich (fn's callers and callees); callers if none;
 *                   traffic: not the heap but what traffic holds (the
 *                   heap's keys kept, for the way back)
 *   fn=NAME         the function of the sandwich
 *   color=module    frames in the colours of their files, not by name
 *   collapse=0      every frame its row: runs of single callers unfolded
 *   focus=RE        keep the stacks with a frame that matches
 *   ignore=RE       drop the stacks with a frame that matches
 *   hide=RE         take the matching frames out of the stacks
 *   zoom=NAME       repeated: the zoomed frame's path below the root
 *   search=RE       the functions to mark, next and previous
 *
 * A change of view is a step of the browser's history: back goes to
 * the one before; a zoom is one step however deep it goes.
 *
 * A pprof file opened (the picker, or dropped on the page) is read here
 * by MallocPprof (pprof.js) and drawn as the server's profile is; it is
 * not in the fragment, which keeps the view's other keys.  Nothing of
 * it is sent: body[data-opened] names what is shown ("a.pb.gz", or
 * "b.pb.gz against a.pb.gz"), absent for the server's profiles.
 *
 * e.g. #snapshot=snapshot-20261201T031814Z&base=snapshot-20261201T021814Z
 *
 * Save page writes one HTML file: this page's markup, style and scripts
 * inline, and the profile shown (the JSON drawn, with the view's
 * fragment) in <script type="application/json" id="saved-profile">.
 * Opened from a file, the page finds it there and draws it as it would
 * the server's, asking nothing of anyone (its CSP allows no request):
 * body[data-saved] is the time it was saved, and what needs the server
 * is not shown.
 */

(function () {
    'use strict';

    const F = window.MallocFlame;
    const T = window.MallocTraffic;
    const P = window.MallocPprof;

    /* a saved page's profile, or null: the server's page */
    const SAVED = (function () {
        const e = document.getElementById('saved-profile');

        return e === null ? null : JSON.parse(e.textContent);
    }());
    /* the page's markup as it came, before it is filled: Save page's */
    const MARKUP = (function () {
        const body = document.body.cloneNode(true);

        body.querySelectorAll('script').forEach((e) => e.remove());
        return body.innerHTML.trim();
    }());
    /* the scripts a saved page holds, in their order */
    const SCRIPTS = ['flame.js', 'pprof.js', 'traffic.js', 'app.js'];
    const ROW = 18;         /* px per row of the flame graph, as viewer.css */
    /* the top table's rows at first, and more at each ask: 500 took 200 ms */
    const TOP_ROWS = 100;

    const state = {
        choices: F.choices(new URLSearchParams()),  /* as the fragment */
        snapshots: [],      /* GET snapshots, by time (snapshotTimes) */
        profile: null,      /* GET pprof/heap.json */
        loaded: null,       /* the choices it was loaded with */
        file: null,         /* or the files shown: {name, now, base, was} */
        ti: 0,              /* the type shown, an index of types */
        type: 'inuse_space',    /* the type asked for (the fragment's) */
        unit: 'bytes',      /* of the type shown */
        pairUnit: '',       /* of the other measure (objects by bytes) */
        filters: null,      /* focus, ignore and hide as the tree has them */
        tree: null,         /* the callers' tree of what the filters keep */
        view: 'callers',    /* or allocators, or sandwich (of fn) */
        fn: '',
        shown: null,        /* the tree the graph draws */
        callers: null,      /* a sandwich: fn's callers, drawn above it */
        based: false,       /* a comparison: the tree has base totals */
        largest: 0,         /* the largest change, the deepest colour */
        counted: false,     /* the profile has the other measure too */
        rows: [],           /* the top table, sorted */
        byFn: new Map(),    /* its rows by function */
        sort: { key: 'flat', desc: true },
        modules: [],        /* the bytes by module (F.modules) */
        msort: { key: 'bytes', desc: true },
        colors: new Map(),  /* module -> its colour's class */
        focus: [],          /* the zoom: names from below the root */
        zoomed: 0,          /* the node it ends in */
        frames: [],         /* #flame's frame k shows frames[k] */
        at: new Map(),      /* a node's index in frames */
        folded: new Map(),  /* a node of a folded run -> the run's frame */
        selected: -1,       /* the node selected (click, keys), or -1 */
        detailed: '',       /* the function in the panel */
        found: null,        /* the search: F.search() */
        matchAt: -1,        /* the match selected, in found.matches */
        searchError: '',
        searched: '',       /* the search's text that found is of */
        searchedIn: null,   /* and the tree it was found in */
        drawn: 0,           /* ms: the last layout of the graphs */
        pointing: false,    /* the pointer is on a frame: the panel's */
        escaped: false,     /* the last key was Escape: again, the root */
        painted: 0,         /* ms: their painting since act() began */
        acting: false,      /* in act(): the graph is painted at its end */
        dirty: false,       /* in act(): a repaint was asked for */
        warming: null,      /* the steps of warmLater() under way */
        sampling: { on: false, until: null },
        ticker: null,
        loads: 0,           /* a newer load makes older answers moot */
        abort: null,        /* and ends their wait: a growth takes long */
        page: 'heap',       /* or traffic: the view shown */
        trafficLoads: 0,    /* as loads, of GET traffic */
        topRows: TOP_ROWS   /* the top table's, until asked for more */
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
    async function getJSON(url, init, sent) {
        const res = await (sent || fetch(url, init));
        /* a profile of 50k stacks read as bytes, then decoded: 50 ms less */
        const text = new TextDecoder().decode(await res.arrayBuffer());
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

    /*
     * An error of a view (the heap's, or the traffic's), shown while that
     * view is: the other's wait for it, kept until it loads again.
     */
    function showError(text, page = 'heap') {
        const p = el('p', text);

        if (page !== 'heap') {
            p.dataset.page = page;
        }
        $('error').appendChild(p);
        showErrors();
    }

    function clearErrors(page = 'heap') {
        for (const p of Array.from($('error').children)) {
            if ((p.dataset.page || 'heap') === page) {
                p.remove();
            }
        }
        showErrors();
    }

    function showErrors() {
        let any = false;

        for (const p of $('error').children) {
            p.hidden = (p.dataset.page || 'heap') !== state.page;
            any = any || !p.hidden;
        }
        $('error').hidden = !any;
    }

    /* GET ./: the workers to choose from, whether we may write, sampling */
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

        showSampling(index);
        showControls(index.write === true);
    }

    /*
     * The state of sampling as the server reports it, kept running: the
     * end comes from prof_active_remaining (a duration set here or
     * through the API), counted down here, asked again once it is up.
     */
    function showSampling(s) {
        const left = s.prof_active_remaining;

        state.sampling = { on: s.prof_active === true,
                           until: s.prof_active && left > 0
                                  ? Date.now() + left * 1000 : null };
        tick();
        /* a clock only while there is an end to count down to */
        if (state.sampling.until !== null && state.ticker === null) {
            state.ticker = setInterval(tick, 1000);
        } else if (state.sampling.until === null && state.ticker !== null) {
            clearInterval(state.ticker);
            state.ticker = null;
        }
    }

    function tick() {
        const s = state.sampling;
        const left = s.until === null ? 0 : (s.until - Date.now()) / 1000;

        if (s.until !== null && left <= 0) {
            s.until = null;
            loadIndex();    /* turned off by itself, or a new state */
        }
        $('sampling').textContent = !s.on ? 'sampling off'
            : s.until !== null ? 'sampling on, ' + F.formatDuration(
                Math.ceil(left)) + ' left'
            : 'sampling on until stopped';
        $('sampling').dataset.left = s.until !== null ? Math.ceil(left) : '';
    }

    /*
     * The controls exist only where the location has write=on.  Bounded
     * by default, as docs/operations.md advises for production: sampling
     * left on by mistake turns itself off.
     */
    const DURATIONS = [['10m', '10 min'], ['1h', '1 h'],
                       ['', 'until stopped']];

    function showControls(write) {
        if (!write) {
            $('controls').replaceChildren();
            return;
        }
        if ($('start') !== null) {
            return;
        }

        const label = el('label', 'Sample for '), select = el('select');

        select.id = 'duration';
        DURATIONS.forEach(([value, text]) => select.append(new Option(text,
                                                                      value)));
        label.append(select);
        $('controls').append(label);
        for (const [id, text, on] of [['start', 'Start sampling', true],
                                       ['stop', 'Stop sampling', false]]) {
            const b = el('button', text);

            b.id = id;
            b.type = 'button';
            b.addEventListener('click', () => setActive(on));
            $('controls').appendChild(b);
        }
    }

    /* POST prof_active as docs/api.md has it: {"active", "duration"} */
    async function setActive(on) {
        const buttons = [$('start'), $('stop')], d = $('duration').value;
        const body = on && d ? { active: true, duration: d } : { active: on };

        buttons.forEach((b) => { b.disabled = true; });
        clearErrors();
        try {
            /* same-origin: the location refuses what other sites send */
            showSampling(await getJSON('./prof_active', {
                method: 'POST', body: JSON.stringify(body) }));
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

        /* in live mode, neither the seconds nor the snapshots show */
        $('seconds').disabled = mode !== 'growth';
        $('seconds-choice').hidden = mode !== 'growth';
        $('worker').disabled = mode === 'snapshot'
                               || (mode !== 'growth' && $('base').value !== '');
        $('snapshot').disabled = mode !== 'snapshot';
        $('base').disabled = mode === 'growth';
        $('mode').querySelector('[value=snapshot]').disabled = !listed;
        $('snapshot-choice').hidden = !listed || mode !== 'snapshot';
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
            const asked = performance.now(), url = './pprof/heap.json'
                                                  + F.query(c);
            const early = window.mallocEarly;

            /* ui/early.js asked it already, once */
            window.mallocEarly = null;
            const profile = await getJSON(url, { signal: state.abort.signal },
                                          early && early.url === url
                                          ? early.response : null);
            const got = performance.now();

            if (id === state.loads) {
                state.profile = profile;
                state.loaded = c;
                showFile(null);
                build();
                mark();

                /* make bench reads how long the profile and the drawing took */
                document.body.dataset.fetchMs = Math.round(got - asked);
                document.body.dataset.drawMs = Math.round(performance.now()
                                                          - got);
                document.body.dataset.state = 'ready';
            }
        } catch (e) {
            if (id === state.loads) {
                showFile(null);
                failed(e.message);
            }
        }
        if (id === state.loads) {
            $('status').textContent = '';
        }
    }

    /* old data under new choices would mislead: cleared, the error shown */
    function failed(text) {
        $('save').disabled = true;
        state.profile = state.tree = state.shown = null;
        state.callers = null;
        state.based = false;
        state.rows = [];
        state.modules = [];
        showError(text);
        draw();
        renderTop();
        renderModules();
        $('gone').hidden = true;
        document.body.dataset.state = 'error';
    }

    /*
     * pprof files opened in the page: one to show, or, with asBase, a
     * base to compare what is open with.  Of two at once, the newer
     * (by its time) is shown against the older.  Read here, sent nowhere.
     */
    async function openFiles(list, asBase) {
        let files = Array.from(list || []);

        if (files.length === 0) {
            return;
        }

        const id = ++state.loads, keep = asBase && state.file !== null
                                         ? state.file : null;

        /* a live load on its way is moot */
        if (state.abort !== null) {
            state.abort.abort();
            state.abort = null;
        }
        if (keep === null && files.length > 1) {
            files = files.slice(0, 2).sort((a, b) => b.lastModified
                                                     - a.lastModified);
        }
        clearErrors();
        document.body.dataset.state = 'loading';
        $('status').textContent = 'reading ' + files.map((f) => f.name)
            .join(' and ') + '\u2026';

        const started = performance.now();
        let file;

        try {
            const read = (f) => P.read(f).catch((e) => {
                throw new Error(f.name + ': ' + e.message);
            });
            const [now, was] = keep !== null
                ? [keep.now, await read(files[0])]
                : await Promise.all(files.map(read));

            file = { name: keep !== null ? keep.name : files[0].name, now,
                     base: was ? (keep !== null ? files[0] : files[1]).name
                               : null,
                     was: was || null };
            if (id === state.loads) {
                state.profile = P.toHeap(file.now, file.was);
            }
        } catch (e) {
            if (id === state.loads) {
                showFile(null);
                failed(e.message);
                $('status').textContent = '';
            }
            return;
        }
        if (id !== state.loads) {
            return;
        }

        const got = performance.now();

        state.loaded = { pid: '', seconds: 0, snapshot: '', base: '' };
        showFile(file);
        build();
        mark();
        document.body.dataset.readMs = Math.round(got - started);
        document.body.dataset.drawMs = Math.round(performance.now() - got);
        document.body.dataset.state = 'ready';
        $('status').textContent = '';
    }

    /* the files shown, or null: the live choices again */
    function showFile(file) {
        state.file = file;
        $('open-base-choice').hidden = file === null;
        if (file === null) {
            delete document.body.dataset.opened;
        } else {
            document.body.dataset.opened = file.name + (file.base !== null
                                                        ? ' against '
                                                          + file.base : '');
        }
        $('choices').classList.toggle('from-file', file !== null);
    }


    /*
     * GET ./traffic: what the requests and connections in flight hold.
     * An answer with a worker that failed still has the others' figures:
     * they are shown under its error.
     */
    async function loadTraffic() {
        const id = ++state.trafficLoads;
        let t = null, failed = false;

        clearErrors('traffic');
        document.body.dataset.traffic = 'loading';
        $('traffic-status').textContent = 'walking the connections\u2026';
        try {
            t = await getJSON('./traffic' + T.query($('traffic-top').value));
        } catch (e) {
            failed = true;
            if (id === state.trafficLoads) {
                showError(e.message, 'traffic');
            }
            t = e.body && e.body.totals ? e.body : null;
        }
        if (id !== state.trafficLoads) {
            return;
        }
        if (!failed && t.error && t.error.text) {
            showError(t.error.text, 'traffic');
        }
        renderTraffic(t);
        $('traffic-status').textContent = '';
        document.body.dataset.traffic = failed ? 'error' : 'ready';
    }

    /* a row of MallocTraffic's cells, as text */
    function cellsRow(cells) {
        const tr = row(cells.map((c) => {
            if (typeof c !== 'object' || c === null) {
                return el('td', c);
            }

            const td = el('td', c.text, c.cls);

            if (c.title) {
                td.title = c.title;
            }
            if (c.colSpan) {
                td.colSpan = c.colSpan;
            }
            return td;
        }));

        if (cells.cls) {
            tr.className = cells.cls;
        }
        return tr;
    }

    /* the traffic's sentence, figures and tables; none for null */
    function renderTraffic(t) {
        const fill = (id, rows) => $(id).tBodies[0].replaceChildren(
            ...rows.map(cellsRow));

        $('traffic-text').textContent = t ? t.text || '' : '';
        $('traffic-totals').tBodies[0].replaceChildren(...(t ? T.totalsRows(t)
            : []).map(([what, value]) => {
            const th = el('th', what);

            th.scope = 'row';
            return row([th, value]);
        }));
        fill('traffic-states', t ? T.stateRows(t) : []);
        fill('traffic-locations', t ? T.locationRows(t) : []);
        fill('traffic-requests', t ? T.topRows(t) : []);
        fill('traffic-workers', t ? T.workerRows(t) : []);
        $('traffic-finished').textContent = !t ? ''
            : T.finishedCounted(t)
            ? 'Finished: the requests that ended in the location, with '
              + 'the mean and the largest of what they held.'
            : 'No finished requests counted: malloc_traffic on counts '
              + 'them by location.';
        $('traffic-not-measured').textContent = t && t.not_measured
            ? 'Not measured: ' + t.not_measured + '.' : '';
    }

    /*
     * The type shown: its index in the profile's types, the one asked
     * for if the profile has it, else bytes in use, else what the file
     * says is its default (pprof: the last).  The menu lists the
     * profile's types; alloc_* exist only with prof_accum.
     */
    function typeIndex(p) {
        const want = [state.type, 'inuse_space', p.default_type];
        const ti = want.map((t) => p.types.indexOf(t)).find((i) => i !== -1);

        $('type').replaceChildren(...p.types.map((t, i) => new Option(
            F.typeLabel(p, i), t)));
        $('type-choice').hidden = p.types.length < 2;
        $('type').value = p.types[ti === undefined ? p.types.length - 1 : ti];
        return $('type').selectedIndex;
    }

    /* a value of the type shown, or of the other measure, in words */
    function say(n, unit = state.unit) {
        return unit === 'count' ? count(n, 'object') : F.formatValue(n, unit);
    }

    function sayPair(n) {
        return say(n, state.pairUnit);
    }

    const val = (n) => F.formatValue(n, state.unit);
    const dval = (n) => F.formatValueDelta(n, state.unit);

    /* "bytes", "objects": the name of a unit in a table's head */
    function unitName(unit) {
        return unit === 'bytes' ? 'bytes' : unit === 'count' ? 'objects'
                                                             : unit;
    }

    /* the tree and tables of the chosen type, from the profile at hand */
    function build() {
        const p = state.profile;

        $('save').disabled = false;
        state.ti = typeIndex(p);
        state.unit = F.unitOf(p, state.ti);
        state.based = Array.isArray(p.base_values);
        state.counted = F.countIndex(p, state.ti) !== -1;
        state.pairUnit = state.counted ? F.unitOf(p, F.countIndex(p, state.ti))
                                       : '';
        if (!state.based && ['dflat', 'dcum', 'sflat']
            .includes(state.sort.key)) {
            state.sort = { key: 'flat', desc: true };
        }
        state.filters = null;
        filter();
    }

    const FILTERS = ['focus', 'ignore', 'hide'];

    /*
     * Focus, ignore and hide, as typed: the tree of what they keep, and
     * a note by each box of what it keeps.  A box that holds no regular
     * expression says so, and the graph stays as it was.
     */
    function filter() {
        const p = state.profile, res = {};
        let bad = false;

        for (const key of FILTERS) {
            const r = F.regex($(key).value);

            res[key] = r.re || null;
            $(key + '-note').textContent = r.error || '';
            $(key + '-note').classList.toggle('invalid', !!r.error);
            $(key).setAttribute('aria-invalid', r.error ? 'true' : 'false');
            bad = bad || !!r.error;
        }

        const key = FILTERS.map((k) => $(k).value.trim()).join('\n');

        if (bad || p === null || (state.filters === key)) {
            return;
        }
        state.filters = key;

        const { tree, kept } = F.filter(p, state.ti, res);
        const all = kept.all;
        const of = (k) => F.formatCount(k.stacks) + ' of '
            + F.formatCount(all.stacks) + ' stacks, '
            + val(k.bytes) + ' of ' + val(all.bytes);

        for (const k of ['focus', 'ignore']) {
            if (kept[k]) {
                $(k + '-note').textContent = k + ' keeps ' + of(kept[k]);
            }
        }
        if (kept.hide) {
            $('hide-note').textContent = 'hide takes '
                + count(kept.hide.functions, 'function') + ' out of '
                + count(kept.hide.stacks, 'stack');
        }
        /* a focus or an ignore that keeps every stack: nothing to draw */
        if (tree === state.tree) {
            return;
        }

        const old = state.tree;

        state.tree = tree;
        state.modules = null;
        if ($('color').value === 'module') {
            byModule();
        }
        views();
        /* no view reads the tree it replaced: its memory is the next's */
        F.release(old);
        /* the graph first: the tables come once it is drawn */
        document.body.dataset.tables = 'loading';
        setTimeout(() => tables(tree), 0);
    }

    /* the top functions and the modules of tree, if still the one shown */
    function tables(tree) {
        if (tree !== state.tree) {
            return;
        }
        if (state.sort.key === 'sflat' && !tree.margined) {
            state.sort = { key: 'flat', desc: true };
        }
        state.rows = F.sortRows(F.top(tree), state.sort.key, state.sort.desc);
        state.byFn = new Map(state.rows.map((r) => [r.fn, r]));
        if (state.modules === null) {
            byModule();
        }
        renderTop();
        renderModules();
        showGone();
        detail(state.selected);
        document.body.dataset.tables = 'ready';
        warmLater();
    }

    /*
     * What the next action at 50k stacks needs (F.warming(): the
     * engine's code, memory for a focus's tree, the children sorted),
     * made ready while the page is idle after the tables, in steps (of a
     * few ms; the first ones, that compile, up to some 40 ms at 50k
     * stacks): an action waits behind one step at most
     */
    function warmLater() {
        const p = state.profile;
        const steps = p === null ? null : F.warming(p, state.ti);
        const idle = window.requestIdleCallback || ((fn) => setTimeout(() => {
            const end = performance.now() + 10;

            fn({ timeRemaining: () => end - performance.now() });
        }, 0));
        const step = (deadline) => {
            /* another profile, or newer tables: these steps end */
            while (state.warming === steps && state.profile === p) {
                if (steps.next().done) {
                    document.body.dataset.warmed = 'yes';
                    return;
                }
                if (deadline.timeRemaining() < 2) {
                    idle(step);
                    return;
                }
            }
        };

        state.warming = steps;
        document.body.dataset.warmed = '';
        if (p !== null) {
            idle(step);
        }
    }

    /* the bytes by module, and the colours of that scheme */
    function byModule() {
        state.modules = F.modules(state.tree, state.profile);
        state.colors = F.moduleColors(state.modules, state.profile);
    }

    /*
     * The trees the view draws: the callers' (today's flame graph), the
     * allocators' (inverted), or a function's callers (above) and
     * callees (the graph).
     */
    function views() {
        const fn = state.fn === '' ? -1 : state.profile.names.indexOf(state.fn);

        state.view = state.view === 'sandwich' && fn === -1 ? 'callers'
                                                            : state.view;
        $('view').value = state.view;
        $('view').querySelector('[value=sandwich]').disabled = fn === -1;
        state.callers = null;
        if (state.view === 'allocators') {
            state.shown = F.invert(state.tree);
        } else if (state.view === 'sandwich') {
            const s = F.sandwich(state.tree, fn);

            state.shown = s.callees;
            state.callers = s.callers;
        } else {
            state.shown = state.tree;
        }
        state.largest = state.based ? F.largestChange(state.shown) : 0;
        state.selected = -1;
        $('sandwich-head').hidden = state.callers === null;
        $('sandwich-head').textContent = state.callers === null ? ''
            : state.fn + ' once in the middle: its callers above it, '
              + 'outwards to the top, what it calls below it. Click a '
              + 'caller for its own callers and callees.';
        draw();
    }

    /* 1 -> "1 object", 1234 -> "1,234 objects" */
    function count(n, what) {
        return F.formatCount(n) + ' ' + what + (n === 1 ? '' : 's');
    }

    /*
     * The summary line: the profile, and, zoomed, the frame zoomed into
     * first, with its share.
     */
    function showSummary() {
        const p = state.profile, t = state.tree;

        if (p === null || t === null) {
            $('summary').textContent = '';
            return;
        }

        const alloc = p.types[state.ti].startsWith('alloc');
        const z = state.zoomed, s = state.shown;
        const zoomed = z > 0 ? F.label(s, z) + ': ' + say(s.total[z])
            + (state.counted ? ' in ' + sayPair(s.count[z]) : '')
            + ', ' + F.formatShare(s.total[z], s.total[0]) + ' of '
            + val(s.total[0]) + ' (zoomed). All: ' : '';

        $('summary').textContent = zoomed + summary(p, t, alloc);
    }

    function summary(p, tree, alloc) {
        const c = state.shown === null ? state.choices : state.loaded;
        const file = state.file;
        const pt = p.period_type;
        /* the server's are bytes; a file says what its period counts */
        const period = !(p.period > 0) ? ''
            : !pt || pt.unit === 'bytes' ? '; one sample per '
              + F.formatBytes(p.period) + ' allocated on average'
            : '; a sample every ' + F.formatCount(p.period) + ' '
              + (pt.unit || pt.type);
        const tail = ', ' + count(p.stacks.length, 'stack') + period + '.';
        /* a window compares its end with its start, as a base */
        const what = file !== null ? (alloc ? ' allocated' : ' live')
                                     + ' in ' + file.name
            : p.seconds ? (state.based ? ' live after a window of '
                                  : ' grew over ') + p.seconds + ' s'
            : c.snapshot ? (alloc ? ' allocated' : ' live') + ' as of '
                           + F.snapshotLabel(c.snapshot)
            : alloc ? ' allocated since sampling began' : ' live';
        const total = tree.total[0], base = tree.base[0];
        const since = !state.based ? ''
            : file !== null ? '; ' + dval(total - base)
              + ' since the base, ' + file.base + ' ('
              + val(base) + ' then)'
            : p.seconds ? '; ' + dval(total - base)
                          + ' over the window' + judged(p.comparison)
            : '; ' + dval(total - base)
              + ' since the base, ' + F.snapshotLabel(c.base) + ' ('
              + val(base) + ' then)' + judged(p.comparison);

        if (total === 0) {
            return 'No samples' + what + since
                   + (c.snapshot || state.based || file !== null ? '.'
                      : ': start sampling, let nginx work, then load again.');
        }
        return say(total) + what
               + (state.counted ? ' in ' + sayPair(tree.count[0]) : '')
               + since + tail;
    }

    function judged(c) {
        if (!c) {
            return '';
        }
        return '; ' + (c.grew + c.shrank === 0
                       ? 'no stack changed beyond the sampling noise'
                       : F.formatDelta(c.grown) + ' grew and '
                         + F.formatDelta(-c.shrunk) + ' shrank beyond the '
                         + 'sampling noise, in ' + (c.grew + c.shrank)
                         + ' stacks (painted; grey is within the noise)')
               + ' at ' + Math.round(c.level * 100) + '% confidence, on '
               + F.formatCount(c.samples) + ' samples now and '
               + F.formatCount(c.base_samples) + ' then'
               + (c.exact ? '; ' + c.exact.of + ': '
                            + F.formatDelta(c.exact.change) + ' (exact)'
                          : '')
               + (c.detection ? '; ' + c.detection : '')
               + (c.caveat ? '; ' + c.caveat : '');
    }

    /* the change of node i of tree t since the base, in words */
    function change(t, i) {
        const d = t.total[i] - t.base[i];

        return d === 0 ? 'unchanged since the base'
            : dval(d) + ' since the base'
              + (t.base[i] > 0 ? ' (' + val(t.base[i]) + ' then)'
                               : ' (new)')
              + (t.sig[i] === 0 ? ', within the sampling noise'
                 : t.sig[i] !== d ? ', ' + dval(t.sig[i])
                                    + ' of it beyond the sampling noise'
                 : '');
    }

    /* the confidence of the server's judgement: 0.99 */
    function level() {
        const c = state.profile && state.profile.comparison;

        return c && c.level > 0 ? c.level : 0.99;
    }

    /*
     * Where the change of node i's stacks beyond the noise lies, from
     * the server's margins: "self +17.5 MiB, 99%: 9.0 to 26.0 MiB" for
     * the stacks it ends, "total ..." for all through it when more; ""
     * when none changed beyond the noise, or no margins came.
     */
    function interval(t, i) {
        if (!t.margined || t.sig[i] === 0) {
            return '';
        }

        const self = t.ssig[i] !== 0 ? 'self ' + F.formatInterval(
            t.ssig[i], t.smarg[i], level()) : '';
        const total = t.sig[i] !== t.ssig[i] || t.marg[i] !== t.smarg[i]
            ? 'total ' + F.formatInterval(t.sig[i], t.marg[i], level()) : '';

        return [self, total].filter((x) => x !== '').join('; ');
    }

    /*
     * What only the base had cannot be drawn where widths are bytes now:
     * the largest of it is named here, the rest summed.
     */
    function showGone() {
        const t = state.tree, gone = state.based ? F.gone(t) : [], most = 5;
        const rest = gone.slice(most).reduce((sum, i) => sum + t.base[i], 0);

        $('legend').hidden = !state.based;
        /* the server judges its comparisons; two files are not judged */
        const judged = !!(state.profile && state.profile.comparison);

        $('legend-same').textContent = judged
            ? 'within the sampling noise, or unchanged' : 'unchanged';
        $('legend-noise').hidden = !judged;
        $('legend-new').hidden = !judged;
        $('legend-unit').textContent = unitName(state.unit);
        $('gone').hidden = gone.length === 0;
        $('gone').replaceChildren(gone.length === 0 ? ''
                                  : 'Gone since the base, so not drawn: ');
        gone.slice(0, most).forEach((i, k) => {
            const name = el('code', F.label(t, i));

            name.title = F.pathOf(t, i).join(' \u2192 ');
            $('gone').append(k ? ', ' : '', name,
                             ' ' + dval(-t.base[i]));
        });
        if (rest > 0) {
            $('gone').append(', and ' + (gone.length - most) + ' more '
                             + dval(-rest));
        }
    }

    /* a frame's native title: its name and figures, for a quick look */
    function title(t, i, focus) {
        const all = t.total[0];

        return F.label(t, i) + '\n' + say(t.total[i]) + ', '
            + F.formatShare(t.total[i], all) + ' of all'
            + (focus > 0 && i !== focus && t.total[i] <= t.total[focus]
               ? ', ' + F.formatShare(t.total[i], t.total[focus]) + ' of '
                 + F.label(t, focus) : '')
            + (state.based ? '\n' + change(t, i) : '')
            + (state.counted ? '\n' + sayPair(t.count[i]) : '')
            + (F.own(t, i) > 0 ? '\nallocated here: ' + say(F.own(t, i))
                               : '')
            + (i > 0 ? overAll(t, t.name[i], '\nthe function, in ') : '');
    }

    /*
     * how many nodes of tree t with a value are of function fn: every
     * function's count in one pass, the first time one is asked for
     */
    function frameCount(t, fn) {
        if (t.fnCount === undefined) {
            t.fnCount = new Int32Array(t.names.length);
            for (let i = 1; i < t.n; i++) {
                t.fnCount[t.name[i]] += t.total[i] > 0 ? 1 : 0;
            }
        }
        return t.fnCount[fn];
    }

    /*
     * A function's self and total over all its frames, as the hover
     * marks them: "all its 12 frames: self 3.00 MiB, total 40.0 MiB"
     * (the top table's flat and cum), or "" before the tables come.
     */
    function overAll(t, fn, lead) {
        const r = state.byFn.get(fn), n = frameCount(t, fn);

        return r === undefined ? ''
            : lead + (n === 1 ? 'its one frame' : 'all its ' + count(n, 'frame'))
              + ': self ' + say(r.flat) + ', total ' + say(r.cum);
    }

    /*
     * the class of a frame's colour: by change, by module or by name (the
     * colour menu's scheme, which a paint reads once for all its frames)
     */
    function colorClass(t, i, scheme = $('color').value) {
        if (state.based) {
            return F.changeClass(t.sig[i], state.largest,
                                 t.base[i] === 0 && t.total[i] > 0);
        }
        if (i === 0) {
            return 'root';
        }
        if (scheme === 'module') {
            const file = F.fileOf(state.profile, t.name[i]);

            return state.colors.get(file ? file.label : 'unknown') || 'mx';
        }
        return nameColor(t.names, t.name[i]);
    }

    /* the colour by name of function f of names, hashed once per name */
    function nameColor(names, f) {
        if (names.colors === undefined) {
            Object.defineProperty(names, 'colors', { value: [],
                                                     enumerable: false });
        }
        if (names.colors[f] === undefined) {
            names.colors[f] = F.colorOf(names[f]);
        }
        return names.colors[f];
    }

    /*
     * The colours of viewer.css's classes, read once from a probe in the
     * page: the stylesheet keeps the palette, the canvas paints with it.
     */
    const colors = new Map();

    function colorOf(cls, prop = 'backgroundColor') {
        const key = cls + ' ' + prop;

        if (!colors.has(key)) {
            const probe = el('span', '', 'frame ' + cls);

            probe.hidden = false;
            probe.style.visibility = 'hidden';
            $('flame').append(probe);
            colors.set(key, getComputedStyle(probe)[prop]);
            probe.remove();
        }
        return colors.get(key);
    }

    /* the hatching of frames too narrow to draw */
    let hatch = null;

    function hatching(ctx) {
        if (hatch === null) {
            const c = document.createElement('canvas'), g = c.getContext('2d');

            c.width = c.height = 4;
            g.strokeStyle = '#6b6b70';
            g.lineWidth = 1.5;
            g.beginPath();
            g.moveTo(0, 4);
            g.lineTo(4, 0);
            g.stroke();
            hatch = ctx.createPattern(c, 'repeat');
        }
        return hatch;
    }

    /*
     * One graph into box: the frames that layout() keeps, drawn on the
     * box's one canvas by paint(), and a hatched mark where it left
     * frames out.  In a sandwich, the function's callers are laid out
     * too and drawn above it (sandwiched()).  box.graph keeps what was
     * laid out, for paint(), the pointer (hit()) and
     * MallocViewer.frames(); a frame or block of another tree than
     * g.t (the callers') names it in its t.
     */
    function graph(box, t, path) {
        const width = box.clientWidth || 800;
        const opts = { minPx: 0.5, cap: 4000,
                       collapse: $('collapse').checked };
        /* a sandwich's function never folds into the row of another */
        let frames = F.layout(t, path, width, Object.assign(
            { fixed: state.callers !== null ? 2 : 1 }, opts));
        let blocks = runs(frames.marks, width), heads = [];

        if (state.callers !== null) {
            ({ frames, blocks, heads } = sandwiched(t, frames, blocks,
                                                    width, opts));
        }

        /* the marks of what is too narrow may take a row below the last */
        const rows = frames.concat(blocks, heads)
            .reduce((d, f) => Math.max(d, f.depth + 1), 1);
        const byRow = Array.from({ length: rows }, () => []);
        const labels = frames.map((f) => (f.chain ? chainLabel(f, t)
                                                  : F.label(f.t || t, f.id)));

        frames.forEach((f, k) => byRow[f.depth].push(k));
        box.graph = { t, frames, labels, blocks, heads, rows, width, byRow,
                      height: (rows + 1) * ROW, hover: null };
        return frames;
    }

    /*
     * A folded run's name; a caller's run goes outwards, so that it is
     * named as it calls: the outermost first.
     */
    function chainLabel(f, t) {
        return f.t ? F.chainLabel(f.t, f.chain.slice().reverse())
                   : F.chainLabel(t, f.chain);
    }

    /*
     * A sandwich as one graph: the function once, in the middle; its
     * callers (state.callers, laid out from it) above it, each row a
     * caller's callers, outwards to the top; what it calls (t) below
     * it.  Neither tree's root ("all", the function's bytes again) is
     * drawn: the function stands for both.  A label row on each side of
     * it says which half is which.  Frames and blocks get depth as the
     * row they are drawn in, from the top.
     */
    function sandwiched(t, frames, blocks, width, opts) {
        const c = state.callers, up = F.layout(c, [], width, opts);
        const upBlocks = runs(up.marks, width);
        /* callers at depth 2 (1 is the function) and down */
        const n = up.concat(upBlocks)
            .reduce((d, f) => Math.max(d, f.depth), 1) - 1;
        const above = (f) => Object.assign({}, f, { depth: n - f.depth + 1,
                                                    t: c });
        const below = (f) => Object.assign(f, {
            depth: n + f.depth + (f.depth > 1 ? 1 : 0) });
        const out = frames.filter((f) => f.id !== 0).map(below)
            .concat(up.filter((f) => f.depth >= 2).map(above));
        const fn = F.children(t, 0)[0];
        const heads = [
            { depth: n, text: '\u25b2 callers of ' + state.fn
                               + (n === 0 ? ': none, it is an outermost caller'
                                          : ', outwards') },
            { depth: n + 2, text: '\u25bc callees of ' + state.fn
                + (fn !== undefined && t.total[fn] === F.own(t, fn)
                   ? ': none, it allocated all of it itself' : '') }];

        out.focus = frames.focus;
        return { frames: out, heads,
                 blocks: blocks.map(below).concat(upBlocks.map(above)) };
    }

    /*
     * The marks of layout() (frames left out below a parent) as blocks,
     * one per run of marks that touch in a row: at 50k stacks a row
     * had hundreds of slivers that merged into one dark strip.  Each
     * {x, w, depth, frames, bytes, parents, parent, widest}: at least 4
     * px wide, so that a pointer finds it; parent and widest are those
     * of its mark of the most bytes, which a click zooms into.
     */
    function runs(marks, width) {
        const out = [];
        const sorted = marks.slice().sort((a, b) => a.depth - b.depth
                                                    || a.x - b.x);

        for (const m of sorted) {
            const x = Math.max(0, Math.min(m.x, width - 4));
            const end = Math.min(width, Math.max(x + 4, m.x + m.w));
            const b = out[out.length - 1];

            if (b !== undefined && b.depth === m.depth && x <= b.end + 1) {
                b.end = Math.max(b.end, end);
                b.frames += m.frames;
                b.bytes += m.bytes;
                b.parents++;
                if (m.bytes > b.most) {
                    Object.assign(b, { most: m.bytes, parent: m.parent,
                                       widest: m.widest });
                }
            } else {
                out.push({ x, end, depth: m.depth, frames: m.frames,
                           bytes: m.bytes, parents: 1, most: m.bytes,
                           parent: m.parent, widest: m.widest });
            }
        }
        out.forEach((b) => { b.w = b.end - b.x; });
        return out;
    }

    /* a block's label where it fits: "271 frames, 3.2 MiB", or less */
    function blockLabel(b) {
        return count(b.frames, 'frame') + ', ' + val(b.bytes);
    }

    /* the tooltip of a block of frames too narrow to draw */
    function markTitle(g, b) {
        return count(b.frames, 'frame') + ' below '
            + F.label(b.t || g.t, b.parent)
            + (b.parents > 1 ? ' and ' + (b.parents - 1) + ' other'
                               + (b.parents > 2 ? 's' : '') : '')
            + ', ' + val(b.bytes) + ', too narrow to draw: '
            + (b.t ? 'click for the callers of ' + F.label(b.t, b.parent)
                   : 'click to zoom into them');
    }

    /* the top of a row in px */
    function rowTop(g, depth) {
        return depth * ROW;
    }

    /* the classes a frame had as an element: what colours it */
    function frameClass(g, k) {
        const f = g.frames[k], t = f.t || g.t, i = f.id, found = state.found;

        return colorClass(t, i)
            + (f.ancestor ? ' ancestor' : '')
            + (i === g.frames.focus && i > 0 && !f.t ? ' focus' : '')
            + (found && i > 0 && g === $('flame').graph
               && found.names.has(t.name[i]) ? ' match' : '')
            + (g === $('flame').graph && i === state.selected && !f.t
               ? ' selected' : '')
            + (k !== g.hover && i > 0 && t.name[i] === hovered(g)
               ? ' same' : '')
            + (f.w < 24 ? ' narrow' : '');
    }

    /* the function of the frame the pointer is on in g, or -1 */
    function hovered(g) {
        const f = g.hover !== null && g.hover >= 0 ? g.frames[g.hover] : null;

        return f !== null && f.id > 0 ? (f.t || g.t).name[f.id] : -1;
    }

    /*
     * Draw box's graph as laid out: a rectangle per frame, its name
     * where it fits (cut with an ellipsis), the selected one outlined,
     * the hovered one too, and the other frames of its function dashed.  No layout here: a hover or a selection
     * repaints in a few milliseconds.
     */
    function paint(box) {
        const g = box.graph;
        let canvas = box.querySelector('canvas');

        if (canvas === null) {
            canvas = document.createElement('canvas');
            canvas.setAttribute('aria-hidden', 'true');
            box.replaceChildren(canvas);
        }
        if (!g) {
            canvas.width = canvas.height = 0;
            canvas.style.height = '0px';
            box.style.height = '';
            return;
        }

        const dpr = window.devicePixelRatio || 1;
        const w = Math.ceil(g.width * dpr), h = Math.ceil(g.height * dpr);

        /* resizing clears it; a canvas of the same size is only cleared */
        if (canvas.width !== w || canvas.height !== h) {
            canvas.width = w;
            canvas.height = h;
            canvas.style.width = g.width + 'px';
            canvas.style.height = g.height + 'px';
        }
        box.style.height = g.height + 'px';

        const ctx = canvas.getContext('2d');
        const font = getComputedStyle(box).getPropertyValue('--frame-font')
                     || '12px monospace';

        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        ctx.clearRect(0, 0, g.width, g.height);
        ctx.font = font.trim() || '12px monospace';
        ctx.textBaseline = 'middle';

        const cw = ctx.measureText('M').width || 7;
        const text = colorOf('', 'color'), onMatch = colorOf('match', 'color');
        const outlined = [];

        const main = g === $('flame').graph, found = state.found;
        const fn = hovered(g), same = [], scheme = $('color').value;

        /* the frames by colour, each colour set once: 4000 frames */
        const fills = new Map(), matched = new Uint8Array(g.frames.length);

        g.frames.forEach((f, k) => {
            const i = f.id, t = f.t || g.t;

            matched[k] = main && found !== null && i > 0
                         && found.names.has(t.name[i]) ? 1 : 0;

            const fill = colorOf(matched[k] ? 'match'
                                            : colorClass(t, i, scheme));

            if (!fills.has(fill)) {
                fills.set(fill, []);
            }
            fills.get(fill).push(f);
        });
        fills.forEach((list, fill) => {
            ctx.fillStyle = fill;
            for (const f of list) {
                /* the way back out, paler */
                ctx.globalAlpha = f.ancestor ? 0.55 : 1;
                /* a pixel of gap on the right, but for frames under 2 px */
                ctx.fillRect(f.x, rowTop(g, f.depth),
                             f.w >= 2 ? f.w - 1 : f.w, ROW - 1);
            }
        });
        ctx.globalAlpha = 1;

        let ink = null;

        g.frames.forEach((f, k) => {
            const y = rowTop(g, f.depth), i = f.id, t = f.t || g.t;
            /* the selection is a node of g.t's: not one of the callers' */
            const chosen = main && i === state.selected && !f.t;

            if (f.w >= 24) {
                const n = Math.floor((f.w - 6) / cw);
                const label = g.labels[k];

                if (ink !== (matched[k] ? onMatch : text)) {
                    ink = matched[k] ? onMatch : text;
                    ctx.fillStyle = ink;
                }
                ctx.fillText(label.length <= n ? label
                             : label.slice(0, Math.max(1, n - 1)) + '\u2026',
                             f.x + 3, y + (ROW - 1) / 2);
            }
            if (chosen || g.hover === k) {
                outlined.push([f, y, chosen ? 2 : 1]);
            } else if (fn !== -1 && i > 0 && t.name[i] === fn) {
                same.push([f, y]);
            }
        });
        /* a sandwich's halves, named on a plain ground */
        for (const h of g.heads) {
            const y = rowTop(g, h.depth);

            ctx.fillStyle = colorOf('more', 'color');
            ctx.fillRect(0, y, g.width, ROW - 1);
            ctx.fillStyle = text;
            ctx.fillText(h.text, 3, y + (ROW - 1) / 2);
        }
        g.blocks.forEach((b, k) => {
            const y = rowTop(g, b.depth);

            ctx.fillStyle = g.hover === ~k ? colorOf('match')
                                            : colorOf('more');
            ctx.fillRect(b.x, y, b.w, ROW - 1);
            ctx.fillStyle = hatching(ctx);
            ctx.fillRect(b.x, y, b.w, ROW - 1);

            /* the label on a plain ground where it fits */
            const label = [blockLabel(b), F.formatCount(b.frames)]
                .find((l) => l.length * cw + 8 <= b.w);

            b.label = label || '';
            if (label !== undefined) {
                ctx.fillStyle = colorOf('more', 'color');
                ctx.fillRect(b.x + 2, y + 2, label.length * cw + 4, ROW - 5);
                ctx.fillStyle = text;
                ctx.fillText(label, b.x + 4, y + (ROW - 1) / 2);
            }
        });
        ctx.strokeStyle = colorOf('', 'color');
        /* the other frames of the hovered function, dashed */
        ctx.lineWidth = 1;
        ctx.setLineDash([3, 2]);
        for (const [f, y] of same) {
            ctx.strokeRect(f.x + 0.5, y + 0.5, Math.max(1, f.w - 1), ROW - 2);
        }
        ctx.setLineDash([]);
        for (const [f, y, lw] of outlined) {
            ctx.lineWidth = lw;
            ctx.strokeRect(f.x + lw / 2, y + lw / 2,
                           Math.max(1, f.w - lw), ROW - 1 - lw);
        }
    }

    /*
     * What the pointer is on in box (offsetX, offsetY): {k} a frame,
     * {m} a mark of frames too narrow to draw, or null.
     */
    function hit(box, x, y) {
        const g = box.graph;

        if (!g) {
            return null;
        }

        const depth = Math.floor(y / ROW);

        if (depth < 0 || depth >= g.rows) {
            return null;
        }
        /* the last drawn is on top */
        for (let k = g.blocks.length - 1; k >= 0; k--) {
            const b = g.blocks[k];

            if (b.depth === depth && x >= b.x && x < b.x + b.w) {
                return { m: k };
            }
        }
        for (const k of g.byRow[depth]) {
            const f = g.frames[k];

            if (x >= f.x && x < f.x + Math.max(f.w, 1)) {
                return { k };
            }
        }
        return null;
    }

    /*
     * For tests and the console: what a canvas shows, as the elements
     * of the page before it drew on one: {kind ("frame" or "more"),
     * name, title, cls, x, y, w, h}, in the canvas's px from its corner.
     */
    window.MallocViewer = {
        frames(id = 'flame') {
            const g = $(id).graph;

            if (!g) {
                return [];
            }
            return g.frames.map((f, k) => ({
                kind: 'frame', name: g.labels[k],
                cls: 'frame ' + frameClass(g, k) + (f.t ? ' caller' : ''),
                title: (f.chain ? g.labels[k] + ', then ' : '')
                       + title(f.t || g.t, f.id, g.frames.focus),
                x: f.x, y: rowTop(g, f.depth), w: f.w, h: ROW - 1 }))
                .concat(g.blocks.map((b) => ({
                    kind: 'more', name: b.label || '', cls: 'more',
                    title: markTitle(g, b), x: b.x, y: rowTop(g, b.depth),
                    w: b.w, h: ROW - 1 })), g.heads.map((h) => ({
                    kind: 'label', name: h.text, cls: 'label', title: '',
                    x: 0, y: rowTop(g, h.depth), w: g.width,
                    h: ROW - 1 })));
        }
    };

    /* the flame graph, in a sandwich with a function's callers above it */
    function draw() {
        const t = state.shown, started = performance.now();

        if (t === null) {
            state.frames = [];
            $('flame').graph = null;
            paint($('flame'));
            $('reset').disabled = true;
            detail(-1);
            showSummary();
            return;
        }
        research();
        state.frames = graph($('flame'), t, state.focus);
        state.zoomed = state.frames.focus;
        /* the nodes of t drawn: not the callers' of a sandwich */
        state.at = new Map();
        state.frames.forEach((f, k) => {
            if (!f.t) {
                state.at.set(f.id, k);
            }
        });
        state.folded = new Map(state.frames.filter((f) => f.chain && !f.t)
            .flatMap((f) => f.chain.map((i) => [i, f.id])));
        $('reset').disabled = state.zoomed === 0;
        document.body.dataset.frames = state.frames.length;
        state.drawn = performance.now() - started;
        select(state.at.has(state.selected) ? state.selected : -1);
        showSummary();
        showMatch();
    }

    /*
     * How long a user's action took in the page, which make bench
     * reads: its data (the tree, filtered, searched, laid out) and its
     * painting, in ms, kept in body[data-took] as "what data paint".
     */
    function act(what, fn) {
        const started = performance.now();

        state.painted = 0;
        state.acting = true;
        try {
            fn();
        } finally {
            state.acting = false;
        }
        /* once, however many steps asked (a zoom, then its selection) */
        if (state.dirty) {
            repaint();
        }

        const took = performance.now() - started;

        document.body.dataset.took = what + ' ' + (took - state.painted)
            .toFixed(1) + ' ' + state.painted.toFixed(1);
    }

    /* the frame node i is drawn in (its own, or a folded run's), or -1 */
    function drawn(i) {
        return state.at.has(i) ? i : state.folded.has(i) ? state.folded.get(i)
                                                          : -1;
    }

    /* the selected frame: marked, and in the panel when nothing is hovered */
    function select(i) {
        state.selected = i;
        repaint();
        /* the panel shows what the pointer is on, while it is on one */
        if (!state.pointing) {
            detail(i);
        }
    }

    /* the graphs painted again as they are laid out; the time it took */
    function repaint() {
        state.dirty = state.acting;
        if (state.acting) {
            return;
        }

        const started = performance.now();

        paint($('flame'));
        state.painted += performance.now() - started;
    }

    /*
     * The search box's matches in the tree shown, found again only when
     * its text or that tree changed (a zoom, a focus that kept every
     * stack: what was found holds).  True when the graph as painted no
     * longer shows them: draw() finds them before it paints, so that a
     * new tree is painted once.
     */
    function research() {
        const r = F.regex($('search').value), was = state.found;

        $('search').setAttribute('aria-invalid', r.error ? 'true' : 'false');
        if (state.searched === $('search').value
            && state.searchedIn === state.shown) {
            return false;
        }
        state.searched = $('search').value;
        state.searchedIn = state.shown;
        state.found = r.re && state.shown ? F.search(state.shown, r.re)
                                          : null;
        state.matchAt = -1;
        state.searchError = r.error || '';
        /* no search before or now: the graph as painted is right */
        return was !== null || state.found !== null;
    }

    /*
     * The panel of a frame (node i of tree t, the graph's by default):
     * its name in full with the symbol to copy, its bytes and objects,
     * its share of all and of the zoomed frame, and the file it lies in.
     */
    function detail(i, t = state.shown) {
        const p = state.profile, none = i === -1 || t === null;

        $('d-body').hidden = none;
        $('d-hint').hidden = !none;
        $('d-name').textContent = none ? '\u00a0' : F.label(t, i);
        if (none) {
            return;
        }

        const f = t.name[i], z = t === state.shown ? state.zoomed : 0;
        const file = i > 0 ? F.fileOf(p, f) : null;
        const objects = (n) => (state.counted ? ', ' + sayPair(n) : '');

        $('d-raw').textContent = i === 0 ? ''
            : (p.raw && p.raw[f]) || p.names[f];
        $('d-raw-line').hidden = i === 0;
        $('d-total').textContent = say(t.total[i])
                                   + objects(t.count[i]);
        $('d-self').textContent = say(F.own(t, i))
                                  + objects(F.own(t, i, t.count));
        $('d-share').textContent = F.formatShare(t.total[i], t.total[0])
            + ' of all' + (z > 0 && i !== z && t.total[i] <= t.total[z]
                           ? ', ' + F.formatShare(t.total[i], t.total[z])
                             + ' of ' + F.label(t, z) + ' (zoomed)' : '');
        /* the allocators' view has the bytes at the top: no self there */
        $('d-self-row').hidden = state.view === 'allocators';

        const r = i > 0 ? state.byFn.get(f) : undefined;

        $('d-function').textContent = r === undefined ? ''
            : say(r.flat) + ' allocated by it, '
              + say(r.cum) + ' by it and what it calls (flat and '
              + 'cum, in ' + (frameCount(t, f) === 1 ? 'its one frame'
                              : 'all its ' + count(frameCount(t, f), 'frame')
                                + ', dashed in the graph on hover') + ')';
        $('d-function-row').hidden = r === undefined;
        $('d-change-row').hidden = !state.based;
        $('d-change').textContent = state.based ? change(t, i) : '';
        $('d-interval').textContent = interval(t, i);
        $('d-interval-row').hidden = $('d-interval').textContent === '';
        $('d-file').textContent = i === 0 ? '' : file === null ? 'unknown'
            : file.label + ' (' + file.kind + ')';
        $('d-file').title = file === null ? '' : file.path;
        /* the callers' tree goes outwards: its path read as calls */
        $('d-path').textContent = (t === state.callers
            ? F.pathOf(t, i).reverse() : F.pathOf(t, i)).join(' \u2192 ');
        $('d-sandwich').hidden = i === 0;
        $('d-focus').hidden = i === 0;
        state.detailed = i === 0 ? '' : p.names[f];
    }

    /* the search: frames and table rows of matching functions get "match" */
    function mark() {
        if (research()) {
            repaint();
        }
        Array.from($('top').tBodies[0].rows).forEach((tr) =>
            tr.classList.toggle('match', state.found !== null
                && state.found.names.has(Number(tr.dataset.fn))));
        showMatch();
    }

    function showMatch() {
        const found = state.found, n = found ? found.count : 0;

        $('prev').disabled = $('next').disabled = n === 0;
        $('match').textContent = state.searchError ? state.searchError
            : found === null ? ''
            : 'matched ' + val(found.total) + ', '
              + F.formatShare(found.total, state.shown.total[0]) + ' of all'
              + (n === 0 ? ''
                 : state.matchAt >= 0 ? '; ' + (state.matchAt + 1) + ' of '
                                        + count(n, 'frame')
                 : '; ' + count(n, 'frame'));
        $('match').classList.toggle('invalid', state.searchError !== '');
    }

    /*
     * The next (1) or previous (-1) matching frame, widest first,
     * selected; zoomed into its caller if too narrow to be drawn.
     */
    function nextMatch(dir) {
        const found = state.found, t = state.shown;

        if (found === null || found.count === 0) {
            return;
        }

        const n = found.count;
        const k = state.matchAt === -1 ? (dir > 0 ? 0 : n - 1)
                                       : (state.matchAt + dir + n) % n;
        const i = found.matches[k];

        if (!state.at.has(i)) {
            zoom(F.pathOf(t, t.parent[i]));
            if (!state.at.has(i)) {
                zoom(F.pathOf(t, i));
            }
        }
        state.matchAt = k;
        select(i);
        showMatch();
    }

    /*
     * The keys of the graph: arrows move the selection (up: the caller,
     * down: the widest callee, left and right: the frame beside it in
     * its row), Enter zooms into it, Escape or Backspace one step out
     * (past callers that only pass all their bytes on), Escape again
     * or Home to the root.
     */
    function key(ev) {
        const t = state.shown, frames = state.frames;
        const again = state.escaped;
        let i = state.selected === -1 ? state.zoomed : state.selected;

        if (t === null || ev.altKey || ev.ctrlKey || ev.metaKey) {
            return;
        }
        state.escaped = false;
        if (ev.key === 'ArrowUp') {
            /* out of a folded run: above its first */
            const f = frames[state.at.get(i)];

            if (i > 0) {
                i = t.parent[f && f.chain ? f.chain[0] : i];
                i = drawn(i) !== -1 ? drawn(i) : i;
            }
        } else if (ev.key === 'ArrowDown') {
            const c = F.children(t, i);

            if (c.length > 0 && t.total[c[0]] > 0) {
                if (drawn(c[0]) === -1) {
                    zoom(F.pathOf(t, i));
                }
                i = drawn(c[0]) !== -1 ? drawn(c[0]) : c[0];
            }
        } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
            const f = frames[state.at.get(i)];

            if (f === undefined) {
                return;     /* not drawn: nothing beside it */
            }

            const row = frames.filter((g) => g.depth === f.depth)
                .sort((a, b) => a.x - b.x);
            const k = row.indexOf(f) + (ev.key === 'ArrowLeft' ? -1 : 1);

            i = k >= 0 && k < row.length ? row[k].id : i;
        } else if (ev.key === 'Enter') {
            zoom(F.pathOf(t, i));
        } else if (ev.key === 'Escape' || ev.key === 'Backspace'
                   || ev.key === 'Home') {
            /* up to where the view changes: past a run of single callers */
            let up = state.zoomed > 0 ? t.parent[state.zoomed] : 0;

            while (up > 0 && F.own(t, up) === 0
                   && t.total[F.children(t, up)[0]] === t.total[up]) {
                up = t.parent[up];
            }
            /* Home, or Escape again at once: out to the root */
            if (ev.key === 'Home' || (ev.key === 'Escape' && again)) {
                up = 0;
            }
            if (state.zoomed > 0) {
                zoom(F.pathOf(t, up));
            }
            /* after zoom(), which forgets it */
            state.escaped = ev.key === 'Escape';
            i = up;
        } else if (ev.key === 'n' || ev.key === 'N') {
            nextMatch(ev.key === 'n' ? 1 : -1);
            ev.preventDefault();
            return;
        } else if (ev.key === 'm' || ev.key === 'ContextMenu'
                   || (ev.key === 'F10' && ev.shiftKey)) {
            ev.preventDefault();
            keyMenu();
            return;
        } else {
            return;
        }
        ev.preventDefault();
        /* a sandwich draws no root: its function stands for it */
        if (state.callers !== null && i === 0 && F.children(t, 0).length) {
            i = F.children(t, 0)[0];
        }
        select(i);
    }

    function renderTop() {
        const all = state.tree ? state.tree.total[0] : 0;
        const shown = Math.min(state.rows.length, state.topRows);
        const more = state.rows.length - shown;
        /* a comparison's change columns, as their heads in index.html */
        const delta = (d) => (state.based ? [el('td', dval(d),
            'num' + (d > 0 ? ' grown' : d < 0 ? ' shrunk' : ''))] : []);
        /* the interval of the stacks it ends beyond the noise */
        const margined = state.tree !== null && state.tree.margined;
        const sure = (r) => (margined ? [el('td', r.sflat !== 0
            ? F.formatInterval(r.sflat, r.mflat, level()) : '',
            'num interval' + (r.sflat > 0 ? ' grown'
                              : r.sflat < 0 ? ' shrunk' : ''))] : []);
        /* the other measure's flat and cum: objects beside bytes */
        const pair = (r) => (state.counted
            ? [el('td', F.formatValue(r.pflat, state.pairUnit), 'num pair'),
               el('td', F.formatValue(r.pcum, state.pairUnit), 'num pair')]
            : []);

        $('top').tBodies[0].replaceChildren(...state.rows.slice(0, shown)
            .map((r) => {
                const tr = row([el('td', r.name, 'name'),
                                el('td', val(r.flat), 'num'),
                                el('td', F.formatShare(r.flat, all), 'num'),
                                ...delta(r.dflat), ...sure(r),
                                el('td', val(r.cum), 'num'),
                                el('td', F.formatShare(r.cum, all), 'num'),
                                ...delta(r.dcum), ...pair(r)]);

                tr.dataset.fn = r.fn;
                return tr;
            }));
        $('top-more-text').textContent = more > 0
            ? more + ' more functions, each smaller: search to find one, or'
            : '';
        $('top-more-rows').hidden = more === 0;
        $('top-more-rows').textContent = 'show ' + (more > 5 * TOP_ROWS
            ? F.formatCount(5 * TOP_ROWS) + ' more' : 'them');
        sortHeads($('top'), state.sort, (th) => {
            if (th.classList.contains('delta')) {
                th.hidden = !state.based;
            }
            if (th.classList.contains('interval')) {
                th.hidden = !margined;
            }
            if (th.classList.contains('pair')) {
                th.hidden = !state.counted;
                th.textContent = th.dataset.key.slice(1) + ' '
                                 + unitName(state.pairUnit);
            }
        });
        mark();
    }

    function sortHeads(table, sort, each) {
        for (const th of table.tHead.rows[0].cells) {
            each(th);
            if (th.dataset.key === sort.key) {
                th.setAttribute('aria-sort', sort.desc ? 'descending'
                                                       : 'ascending');
            } else {
                th.removeAttribute('aria-sort');
            }
        }
    }

    /* the bytes by module or library, and the colours of that scheme */
    function renderModules() {
        const all = state.tree ? state.tree.total[0] : 0;
        const rows = F.sortRows((state.modules || []).slice(), state.msort.key,
                                state.msort.desc, 'module');

        $('modules').tBodies[0].replaceChildren(...rows.map((r) => {
            const name = el('td', '', 'name');
            const swatch = el('span', '', 'swatch '
                              + (state.colors.get(r.module) || 'mx'));
            const tr = row([name, el('td', val(r.bytes), 'num'),
                            el('td', F.formatShare(r.bytes, all), 'num'),
                            el('td', state.counted
                                     ? F.formatValue(r.objects,
                                                     state.pairUnit) : '-',
                               'num')]);

            name.append(swatch, ' ' + r.module);
            name.title = r.kind;
            return tr;
        }));
        $('modules-rule').textContent = F.MODULE_RULE + ' Colour by module '
            + 'paints each frame in the colour of the file it lies in.';
        /* the type shown, then the other measure */
        sortHeads($('modules'), state.msort, (th) => {
            if (th.dataset.key === 'bytes' || th.dataset.key === 'objects') {
                th.textContent = unitName(th.dataset.key === 'bytes'
                    ? state.unit : state.pairUnit || 'count');
            }
        });
        showLegend();
    }

    function showLegend() {
        const by = $('color').value === 'module' && !state.based;

        $('legend-modules').hidden = !by;
        $('legend-modules').replaceChildren(...(by ? [...state.colors]
            .filter(([, c]) => c !== 'mx')
            .flatMap(([name, c]) => [el('span', '', 'swatch ' + c),
                                     ' ' + name + ' ']) : []),
            by && [...state.colors.values()].includes('mx')
                ? el('span', '', 'swatch mx') : '',
            by && [...state.colors.values()].includes('mx') ? ' the rest' : '');
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
        /* a saved page has no server to ask for the traffic */
        state.page = h.get('view') === 'traffic' && SAVED === null
                     ? 'traffic' : 'heap';
        /* the traffic's fragment has none: the heap's view stays */
        if (state.page === 'heap') {
            state.view = ['allocators', 'sandwich'].includes(h.get('view'))
                         ? h.get('view') : 'callers';
            state.fn = h.get('fn') || '';
        }
        for (const key of ['search', ...FILTERS]) {
            $(key).value = h.get(key) || '';
        }
        /* "alloc" as links made before the menu had every type */
        state.type = { alloc: 'alloc_space', inuse: 'inuse_space' }[
            h.get('type')] || h.get('type') || 'inuse_space';
        $('color').value = h.get('color') === 'module' ? 'module' : 'name';
        $('collapse').checked = h.get('collapse') !== '0';
        showChoices(state.choices);
    }

    /*
     * The view into the fragment; push makes it a step of the history
     * (a zoom, a view), so that back goes to the one before.
     */
    function writeHash(push) {
        const h = fragment(state.page);
        const url = h === '' ? location.pathname + location.search : h;

        if (push && url !== location.pathname + location.search
                            + location.hash) {
            history.pushState(null, '', url);
        } else {
            history.replaceState(null, '', url);
        }
        links();
    }

    /* the fragment of a page (heap or traffic) as the view stands, or "" */
    function fragment(page) {
        const h = new URLSearchParams(), c = state.choices;
        const view = page === 'traffic' ? 'traffic' : state.view;

        for (const key of ['pid', 'seconds', 'snapshot', 'base']) {
            if (c[key]) {
                h.set(key, c[key]);
            }
        }
        if (state.type !== 'inuse_space') {
            h.set('type', state.type === 'alloc_space' ? 'alloc' : state.type);
        }
        if (view !== 'callers') {
            h.set('view', view);
        }
        if (view === 'sandwich') {
            h.set('fn', state.fn);
        }
        if ($('color').value !== 'name') {
            h.set('color', $('color').value);
        }
        if (!$('collapse').checked) {
            h.set('collapse', '0');
        }
        state.focus.forEach((name) => h.append('zoom', name));
        for (const key of ['search', ...FILTERS]) {
            if ($(key).value !== '') {
                h.set(key, $(key).value);
            }
        }
        return h.toString() === '' ? '' : '#' + h;
    }

    /* the links to the views: where each goes, which one is shown */
    function links() {
        for (const page of ['heap', 'traffic']) {
            const a = $('to-' + page);

            a.href = fragment(page) || '#';
            if (page === state.page) {
                a.setAttribute('aria-current', 'page');
            } else {
                a.removeAttribute('aria-current');
            }
        }
    }

    /* the view's parts shown, the other's hidden */
    function showPage() {
        const traffic = state.page === 'traffic';

        for (const e of document.querySelectorAll('.heap')) {
            e.hidden = traffic;
        }
        $('traffic').hidden = !traffic;
        showErrors();
        links();
    }

    /* a view just shown: what it needs loaded or drawn */
    function shown() {
        showPage();
        if (state.page === 'traffic') {
            loadTraffic();
        } else if (state.loads === 0) {
            refresh();
        } else if (state.profile !== null) {
            draw();     /* laid out while hidden, at no width */
            mark();
        }
    }

    /* a link to the other view, followed here: no reload, a history step */
    function toPage(page) {
        if (page !== state.page) {
            state.page = page;
            writeHash(true);
            shown();
        }
    }

    /*
     * One entry of the history for a zoom, however many steps it took:
     * the first zoom from the root is a step, the others replace it, so
     * that Back leaves the zoom at once.
     */
    function zoom(path) {
        const fromRoot = state.focus.length === 0;

        state.escaped = false;
        state.focus = path;
        writeHash(fromRoot && path.length > 0);
        draw();
    }

    /* the view of another function's callers and callees */
    function sandwich(name) {
        state.view = 'sandwich';
        state.fn = name;
        state.focus = [];
        writeHash(true);
        if (state.tree !== null) {
            views();
            mark();
        }
    }

    /* the profile asked first: the workers take it before the rest */
    function refresh() {
        if (SAVED !== null) {
            showSaved();
            return;
        }
        clearErrors();
        loadProfile();
        loadIndex();
        loadStats();
        loadSnapshots();
    }

    /*
     * A saved page's profile, drawn as the server's would be, with the
     * choices and the files it was loaded with (the summary's words).
     */
    function showSaved() {
        const when = new Date(SAVED.saved);

        clearErrors();
        state.loads++;
        state.profile = SAVED.profile;
        state.loaded = SAVED.loaded;
        showFile(null);
        state.file = SAVED.file;
        document.body.dataset.saved = SAVED.saved;
        $('saved-note').hidden = false;
        $('saved-note').textContent = 'A saved page: the profile as the '
            + 'heap viewer showed it on ' + when.toISOString().slice(0, 16)
                .replace('T', ' ') + ' UTC. It asks no server: the views, '
            + 'filters and search work on the profile inside it.';
        build();
        mark();
        document.body.dataset.state = 'ready';
    }

    /*
     * The page's style and scripts: the server's files, or, in a saved
     * page, its own inline ones.
     */
    async function sources() {
        const get = async (file) => {
            if (SAVED !== null) {
                return document.querySelector('[data-file="' + file + '"]')
                    .textContent;
            }

            const res = await fetch('ui/' + file);

            if (!res.ok) {
                throw new Error('ui/' + file + ': HTTP ' + res.status);
            }
            return res.text();
        };

        return Promise.all(['viewer.css', ...SCRIPTS].map(get));
    }

    /* the CSP source of an inline text: its SHA-256, or null */
    async function digest(text) {
        if (!(window.crypto && crypto.subtle)) {
            return null;    /* plain http from another host */
        }

        const d = new Uint8Array(await crypto.subtle.digest('SHA-256',
            new TextEncoder().encode(text)));

        return "'sha256-" + btoa(String.fromCharCode(...d)) + "'";
    }

    /*
     * Save page: one HTML file of this page, its style and scripts
     * inline, with the profile shown and the view's fragment inside, to
     * open with no server (attached to a ticket).  Its CSP lets only
     * those scripts and that style run, by their hashes, and no request
     * go anywhere.
     */
    async function savePage() {
        const data = { saved: new Date().toISOString(),
                       hash: fragment('heap'), loaded: state.loaded,
                       file: state.file === null ? null
                           : { name: state.file.name,
                               base: state.file.base },
                       profile: state.profile };
        const end = '</' + 'script>';
        const [css, ...js] = await sources();
        /* "</script" in a script would end it: "<\/" is the same there */
        const scripts = js.map((t) => t.replace(/<\/(script)/gi, '<\\/$1'));
        const style = css.replace(/<\//g, '<\\/');
        const sums = await Promise.all([style, ...scripts].map(digest));
        const allow = (list) => (list.includes(null) ? "'unsafe-inline'"
                                                      : list.join(' '));
        const csp = "default-src 'none'; script-src "
            + allow(sums.slice(1)) + '; style-src ' + allow(sums.slice(0, 1))
            + "; img-src data:; base-uri 'none'; form-action 'none'";
        const name = 'nginx-heap-' + data.saved.slice(0, 19)
            .replace(/[-:]/g, '') + 'Z.html';
        const html = '<!DOCTYPE html>\n<html lang="en">\n<head>\n'
            + '<meta charset="utf-8">\n'
            + '<meta http-equiv="Content-Security-Policy" content="' + csp
            + '">\n<meta name="viewport" content="width=device-width, '
            + 'initial-scale=1">\n<meta name="referrer" content="no-referrer">'
            + '\n<title>nginx heap, saved ' + data.saved.slice(0, 16)
                .replace('T', ' ') + ' UTC</title>\n'
            + '<style data-file="viewer.css">' + style + '</style>\n'
            + '</head>\n<body data-state="loading">\n' + MARKUP
            + '\n<script type="application/json" id="saved-profile">'
            /* "<" only in strings: escaped, the JSON cannot end early */
            + JSON.stringify(data).replace(/</g, '\\u003c') + end
            + scripts.map((t, k) => '\n<script data-file="' + SCRIPTS[k]
                                    + '">' + t + end).join('')
            + '\n</body>\n</html>\n';
        const a = el('a'), blob = new Blob([html], { type: 'text/html' });

        a.href = URL.createObjectURL(blob);
        a.download = name;
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 60000);
        $('status').textContent = 'saved ' + name + ', '
            + F.formatBytes(blob.size);
    }

    /* the form's choices into the fragment, and what they show */
    function apply() {
        sync();
        state.choices = formChoices();
        writeHash(false);
        refresh();
    }

    /* back, forward, or a fragment edited by hand: as little as changed */
    function fromHash() {
        const was = F.query(state.choices), type = state.type;
        const view = state.view + '\n' + state.fn, page = state.page;
        const filters = FILTERS.map((k) => $(k).value).join('\n');

        readHash();
        if (state.page === 'traffic') {
            /* popstate and hashchange both come: one load */
            if (page !== 'traffic') {
                shown();
            }
            return;
        }
        showPage();
        if (F.query(state.choices) !== was || state.loads === 0) {
            refresh();
        } else if (state.profile === null) {
            return;
        } else if (state.type !== type) {
            build();
        } else if (FILTERS.map((k) => $(k).value).join('\n') !== filters) {
            filter();
        } else if (state.view + '\n' + state.fn !== view) {
            views();
        } else {
            draw();
        }
        mark();
        showLegend();
    }

    /* what the pointer of ev is on in box: hit()'s, in the canvas's px */
    function pointed(box, ev) {
        const canvas = box.querySelector('canvas');

        if (canvas === null || !box.graph) {
            return null;
        }

        const r = canvas.getBoundingClientRect();

        return hit(box, ev.clientX - r.left, ev.clientY - r.top);
    }

    /* the tree and frame of a hit in box */
    function frameOf(box, h) {
        return h !== null && h.k !== undefined ? box.graph.frames[h.k] : null;
    }

    /*
     * A click selects a frame, without zooming, so that the panel's
     * Copy, Callers and callees and Focus act on it; a double click (or
     * Enter) zooms into it.  A block of frames too narrow to draw has
     * nothing to select: a click zooms into it.
     */
    $('flame').addEventListener('click', (ev) => {
        const h = pointed($('flame'), ev), t = state.shown;
        const g = $('flame').graph;
        /* a sandwich's caller: its own callers and callees */
        const other = h === null ? null
            : h.m !== undefined ? g.blocks[h.m] : g.frames[h.k];

        if (h === null) {
            return;
        }
        if (other.t) {
            sandwich(F.label(other.t, h.m !== undefined ? other.parent
                                                        : other.id));
        } else if (h.m !== undefined) {
            act('zoom', () => {
                /* into their caller; if it is zoomed already, the widest */
                const m = $('flame').graph.blocks[h.m];
                const i = m.parent === state.zoomed ? m.widest : m.parent;

                zoom(F.pathOf(t, i));
                select(i);
            });
        } else {
            act('select', () => {
                state.escaped = false;
                state.pointing = false;
                select(state.frames[h.k].id);
            });
        }
        $('flame').focus();
    });
    $('flame').addEventListener('dblclick', (ev) => {
        const h = pointed($('flame'), ev);

        if (h !== null && h.k !== undefined
            && !$('flame').graph.frames[h.k].t) {
            act('zoom', () => {
                const i = state.frames[h.k].id;

                zoom(F.pathOf(state.shown, i));
                select(i);
            });
        }
    });
    $('flame').addEventListener('keydown', (ev) => act('key ' + ev.key,
                                                       () => key(ev)));
    /*
     * hover fills the panel and outlines the frame; the canvas's title
     * is its tooltip; leaving the graph shows the selection again
     */
    {
        const box = $('flame');

        box.addEventListener('mousemove', (ev) => {
            const h = pointed(box, ev), g = box.graph;
            const key = h === null ? null : h.k !== undefined ? h.k : ~h.m;

            if (!g || key === g.hover) {
                return;
            }
            g.hover = key;
            paint(box);

            const f = frameOf(box, h), canvas = box.querySelector('canvas');

            canvas.style.cursor = h === null ? '' : f ? 'pointer' : 'zoom-in';
            canvas.title = f ? (f.chain ? chainLabel(f, g.t) + ', then ' : '')
                               + title(f.t || g.t, f.id, g.frames.focus)
                : h !== null ? markTitle(g, g.blocks[h.m]) : '';
            if (f) {
                state.pointing = true;
                detail(f.id, f.t || g.t);
            }
        });
        /*
         * the panel keeps the last frame hovered, so that the pointer
         * can go to its buttons; a selection shows there again
         */
        box.addEventListener('mouseleave', () => {
            state.pointing = false;
            if (box.graph && box.graph.hover !== null) {
                box.graph.hover = null;
                paint(box);
            }
        });
    }
    $('d-sandwich').addEventListener('click', () => {
        if (state.detailed !== '') {
            sandwich(state.detailed);
        }
    });
    /* a regular expression of one name and nothing else */
    function exactly(name) {
        return '^' + name.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&') + '$';
    }

    /*
     * A function into a filter, by its name as a regular expression: a
     * focus replaces the one there, an ignore or a hide adds it to what
     * is there already.  A step of the history, as a view is.
     */
    function addFilter(key, name) {
        const re = exactly(name), was = $(key).value.trim();

        $(key).value = key === 'focus' || was === '' ? re : was + '|' + re;
        writeHash(true);
        filter();
        mark();
    }

    $('d-focus').addEventListener('click', () => {
        if (state.detailed !== '') {
            addFilter('focus', state.detailed);
        }
    });

    /*
     * A frame's menu: a right click on a frame, or m (or the menu key,
     * or Shift+F10) on the selected one.  It acts on the frame's
     * function: {t, i, name} while it is open.  The arrows move in it,
     * Enter takes an entry, Escape closes it and the graph has the keys
     * again.
     */
    let menuOf = null;

    const menuItems = () => Array.from($('menu-items').children)
        .filter((b) => !b.hidden);

    /* x, y: where it opens, in the window's px */
    function openMenu(t, i, x, y) {
        const menu = $('frame-menu');

        menuOf = { t, i, name: t.names[t.name[i]] };
        $('menu-name').textContent = menuOf.name;
        $('menu-name').title = menuOf.name;
        /* a caller of a sandwich is not in the graph's tree: no zoom */
        menu.querySelector('[data-act=zoom]').hidden = t !== state.shown;
        menu.hidden = false;

        const r = menu.getBoundingClientRect();

        menu.style.left = Math.max(0, Math.min(x, innerWidth - r.width - 4))
                          + 'px';
        menu.style.top = Math.max(0, y + r.height > innerHeight
                                     ? y - r.height : y) + 'px';
        menuItems()[0].focus({ preventScroll: true });
    }

    /* back: the graph takes the keys again (Escape, an entry taken) */
    function closeMenu(back) {
        if ($('frame-menu').hidden) {
            return;
        }
        $('frame-menu').hidden = true;
        menuOf = null;
        if (back) {
            $('flame').focus({ preventScroll: true });
        }
    }

    /* the menu of the selected frame (or the zoomed one), by the keys */
    function keyMenu() {
        const i = state.selected > 0 ? state.selected : state.zoomed;
        const k = state.at.get(i), canvas = $('flame').querySelector('canvas');

        if (i > 0 && k !== undefined && canvas !== null) {
            const f = state.frames[k], r = canvas.getBoundingClientRect();

            openMenu(state.shown, i, r.left + f.x + Math.min(f.w / 2, 16),
                     r.top + rowTop($('flame').graph, f.depth) + ROW);
        }
    }

    function menuAct(what, { t, i, name }) {
        if (what === 'zoom') {
            act('zoom', () => {
                zoom(F.pathOf(t, i));
                select(i);
            });
        } else if (what === 'sandwich') {
            sandwich(name);
        } else if (what === 'copy') {
            copyName(name, t, i);
        } else {
            act(what, () => addFilter(what, name));
        }
    }

    /*
     * The name to the clipboard; where the browser refuses (plain http
     * from another host, no permission), the name selected in the
     * panel, for Ctrl+C.
     */
    function copyName(name, t, i) {
        const said = (text) => { $('status').textContent = text; };
        const selectName = () => {
            detail(i, t);
            const r = document.createRange();

            r.selectNodeContents($('d-name'));
            getSelection().removeAllRanges();
            getSelection().addRange(r);
            said('the name is selected in the panel: Ctrl+C copies it');
        };

        if (navigator.clipboard && navigator.clipboard.writeText) {
            navigator.clipboard.writeText(name)
                .then(() => said('copied ' + name), selectName);
        } else {
            selectName();
        }
    }

    $('flame').addEventListener('contextmenu', (ev) => {
        const h = pointed($('flame'), ev), g = $('flame').graph;
        const f = h !== null && h.k !== undefined ? g.frames[h.k] : null;

        /* the root or a block: the browser's own menu */
        if (f === null || f.id === 0) {
            return;
        }
        ev.preventDefault();
        if (!f.t) {
            state.pointing = false;
            select(f.id);
        }
        openMenu(f.t || g.t, f.id, ev.clientX, ev.clientY);
    });
    $('menu-items').addEventListener('click', (ev) => {
        const b = ev.target.closest('[data-act]'), of = menuOf;

        if (b !== null && of !== null) {
            closeMenu(true);
            menuAct(b.dataset.act, of);
        }
    });
    $('frame-menu').addEventListener('keydown', (ev) => {
        const items = menuItems(), n = items.length;
        const k = items.indexOf(document.activeElement);
        const to = { ArrowDown: k + 1, ArrowUp: k - 1 + n, Home: 0,
                     End: n - 1 }[ev.key];

        if (to !== undefined) {
            items[to % n].focus();
        } else if (ev.key === 'Escape' || ev.key === 'Tab') {
            closeMenu(true);
        } else {
            return;
        }
        ev.preventDefault();
        ev.stopPropagation();
    });
    /* a click or the focus elsewhere closes it, as a scroll does */
    document.addEventListener('mousedown', (ev) => {
        if (!ev.target.closest('#frame-menu')) {
            closeMenu(false);
        }
    });
    $('frame-menu').addEventListener('focusout', (ev) => {
        if (ev.relatedTarget !== null
            && !$('frame-menu').contains(ev.relatedTarget)) {
            closeMenu(false);
        }
    });
    window.addEventListener('scroll', () => closeMenu(false));
    $('copy').addEventListener('click', () => {
        const text = $('d-raw').textContent;

        if (navigator.clipboard && navigator.clipboard.writeText) {
            navigator.clipboard.writeText(text).catch(() => selectRaw());
        } else {
            selectRaw();
        }
    });

    /* without the clipboard (plain http), the symbol selected to copy */
    function selectRaw() {
        const r = document.createRange();

        r.selectNodeContents($('d-raw'));
        getSelection().removeAllRanges();
        getSelection().addRange(r);
    }

    $('reset').addEventListener('click', () => act('reset', () => zoom([])));
    $('save').addEventListener('click', () => {
        if (state.profile !== null) {
            savePage().catch((e) => showError('Save page: ' + e.message));
        }
    });
    $('view').addEventListener('change', () => {
        state.view = $('view').value;
        state.focus = [];
        writeHash(true);
        if (state.tree !== null) {
            views();
            mark();
        }
    });
    $('collapse').addEventListener('change', () => {
        writeHash(false);
        draw();
    });
    $('color').addEventListener('change', () => {
        writeHash(false);
        if (state.tree !== null && state.modules === null) {
            byModule();
        }
        draw();
        showLegend();
    });
    /* n and N anywhere but in a box; Escape out of a zoom */
    document.addEventListener('keydown', (ev) => {
        if (ev.target.closest('input, select, textarea, #flame, #frame-menu')
            || state.page !== 'heap') {
            return;
        }
        if (['n', 'N', 'Escape', 'Home'].includes(ev.key)) {
            act('key ' + ev.key, () => key(ev));
        }
    });
    $('search').addEventListener('input', later(() => act('search', () => {
        writeHash(false);
        mark();
    })));
    $('search').addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') {
            ev.preventDefault();
            if ($('search').value !== state.searched) {
                mark();     /* typed, not marked yet */
            }
            nextMatch(ev.shiftKey ? -1 : 1);
        }
    });
    $('next').addEventListener('click', () => nextMatch(1));
    $('prev').addEventListener('click', () => nextMatch(-1));
    for (const k of FILTERS) {
        $(k).addEventListener('input', later(() => act(k, () => {
            filter();
            writeHash(false);
            mark();
        })));
    }
    $('open').addEventListener('change', () => {
        openFiles($('open').files, false);
        $('open').value = '';   /* the same file again is a change */
    });
    $('open-base').addEventListener('change', () => {
        openFiles($('open-base').files, true);
        $('open-base').value = '';
    });
    /* files dropped anywhere on the page; on "Compare with", a base */
    const dragged = (ev) => ev.dataTransfer
        && Array.from(ev.dataTransfer.types || []).includes('Files');

    document.addEventListener('dragover', (ev) => {
        if (dragged(ev) && state.page === 'heap') {
            ev.preventDefault();
            ev.dataTransfer.dropEffect = 'copy';
            document.body.classList.add('dropping');
        }
    });
    document.addEventListener('dragleave', (ev) => {
        if (ev.relatedTarget === null) {
            document.body.classList.remove('dropping');
        }
    });
    document.addEventListener('drop', (ev) => {
        document.body.classList.remove('dropping');
        if (!dragged(ev) || state.page !== 'heap') {
            return;
        }
        ev.preventDefault();
        openFiles(ev.dataTransfer.files, state.file !== null
                  && ev.target.closest('#open-base-choice') !== null);
    });
    window.addEventListener('popstate', fromHash);
    window.addEventListener('hashchange', fromHash);
    window.addEventListener('resize', later(draw));
    /* a scroll bar come or gone narrows the graph with no resize event */
    if (window.ResizeObserver) {
        new ResizeObserver(later(() => {
            const g = $('flame').graph;

            if (g && $('flame').clientWidth > 0
                && Math.abs($('flame').clientWidth - g.width) >= 1) {
                draw();
            }
        })).observe($('flame'));
    }

    /* a head sorts by its column; again turns the order; names A to Z */
    function sorter(table, get, set, render, name) {
        table.tHead.addEventListener('click', (ev) => {
            const th = ev.target.closest('th[data-key]');

            if (th !== null) {
                const key = th.dataset.key, s = get();

                set({ key, desc: key === s.key ? !s.desc : key !== name });
                render();
            }
        });
    }
    sorter($('top'), () => state.sort, (s) => {
        state.sort = s;
        F.sortRows(state.rows, s.key, s.desc);
    }, renderTop, 'name');
    sorter($('modules'), () => state.msort, (s) => { state.msort = s; },
           renderModules, 'module');

    /* the top table's next rows */
    $('top-more-rows').addEventListener('click', () => {
        state.topRows += 5 * TOP_ROWS;
        renderTop();
    });
    /* a function of the table: show it in the graph */
    $('top').tBodies[0].addEventListener('click', (ev) => {
        const td = ev.target.closest('td.name');

        if (td !== null) {
            $('search').value = exactly(td.textContent);
            writeHash(false);
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
        state.type = $('type').value;
        writeHash(false);
        if (state.profile !== null) {
            build();
        }
    });

    /* the links to the views: a plain click stays in the page */
    for (const page of ['heap', 'traffic']) {
        $('to-' + page).addEventListener('click', (ev) => {
            if (ev.button === 0 && !ev.ctrlKey && !ev.metaKey
                && !ev.shiftKey && !ev.altKey) {
                ev.preventDefault();
                toPage(page);
            }
        });
    }
    $('traffic-load').addEventListener('click', loadTraffic);
    $('traffic-top').addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') {
            ev.preventDefault();
            loadTraffic();
        }
    });

    /* a saved page opens on the view it was saved with */
    if (SAVED !== null && location.hash === '' && SAVED.hash !== '') {
        history.replaceState(null, '', SAVED.hash);
    }
    readHash();
    showPage();
    if (state.page === 'traffic' && SAVED === null) {
        loadIndex();
        loadTraffic();
    } else {
        refresh();
    }
}());
