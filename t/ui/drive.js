// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// Loaded after app.js by serve.js's {drive: true} page only: clicks and
// types as a user would, then writes what it saw as JSON into
// <pre id="drive"> for page.test.js to read from chromium's --dump-dom.

'use strict';

(function () {
    const $ = (sel) => document.querySelector(sel);
    const seen = { violations: [] };
    const pause = () => new Promise((ok) => setTimeout(ok, 100));

    document.addEventListener('securitypolicyviolation', (e) =>
        seen.violations.push(e.violatedDirective + ' ' + e.blockedURI));
    seen.errors = [];
    addEventListener('error', (e) => seen.errors.push(String(e.message)));

    async function until(test) {
        while (!test()) {
            await new Promise((ok) => setTimeout(ok, 20));
        }
    }

    async function drive() {
        await until(() => document.body.dataset.state === 'ready');

        const width = $('#flame').clientWidth;
        // the canvas's frames as the page describes them (MallocViewer),
        // pointed at and clicked where they are drawn (a whole pixel, as
        // a pointer's: MouseEvent's clientX is an integer)
        const drawn = (id = 'flame') => MallocViewer.frames(id);
        const frames = (id) => drawn(id).filter((f) => f.kind === 'frame');
        const has = (f, cls) => f.cls.split(' ').includes(cls);
        const at = (f, type, id = 'flame') => {
            const r = $('#' + id + ' canvas').getBoundingClientRect();

            $('#' + id + ' canvas').dispatchEvent(new MouseEvent(type, {
                clientX: Math.ceil(r.left + f.x
                             + Math.max(0, Math.min(f.w / 2, 8) - 1)),
                clientY: r.top + f.y + f.h / 2, bubbles: true }));
        };
        const hover = (f, id) => at(f, 'mousemove', id);
        const click = (f, id) => at(f, 'click', id);
        // as a user's: two clicks, then the double click
        const dblclick = (f, id) => {
            click(f, id);
            click(f, id);
            at(f, 'dblclick', id);
        };
        const key = (k, opts = {}) => $('#flame').dispatchEvent(
            new KeyboardEvent('keydown', { key: k, bubbles: true, ...opts }));
        const zoomed = () => (frames().find((f) => has(f, 'focus'))
                              || {}).name;
        const back = () => new Promise((ok) => {
            addEventListener('popstate', () => setTimeout(ok, 50),
                             { once: true });
            history.back();
        });
        const panel = () => ({ name: $('#d-name').textContent,
                               raw: $('#d-raw').textContent,
                               total: $('#d-total').textContent,
                               self: $('#d-self').textContent,
                               share: $('#d-share').textContent,
                               file: $('#d-file').textContent });

        seen.styled = getComputedStyle($('#flame')).position === 'relative';
        seen.frames = frames().length;
        seen.canvases = $('#flame').querySelectorAll('canvas').length;
        seen.elements = $('#flame').querySelectorAll('*').length;
        seen.root = frames()[0].name;
        seen.title = frames()[0].title;
        seen.hidden = ['#seconds-choice', '#snapshot-choice']
            .filter((sel) => $(sel).hidden).join(' ');

        // hover: the panel names the frame, with its figures and file
        const narrow = frames().find((f) => has(f, 'narrow') && f.y === 36);
        hover(narrow);
        seen.hover = { text: narrow.name, ...panel(),
                       tooltip: $('#flame canvas').title };
        $('#flame').dispatchEvent(new MouseEvent('mouseleave'));
        seen.left = [$('#d-body').hidden, $('#d-name').textContent];

        // hover: the function's other frames marked, its figures over all
        await until(() => document.body.dataset.tables === 'ready');
        const names = frames().map((f) => f.name);
        const twice = frames().find((f) => f.y > 18 && names.indexOf(f.name)
                                           !== names.lastIndexOf(f.name));
        hover(twice);
        seen.same = { name: twice.name,
                      // a folded run is its last function's frame
                      drawn: names.filter((n) => n === twice.name
                          || n.includes(' \u2192 ' + twice.name + ' (')
                          || n.endsWith(' \u2192 ' + twice.name)).length,
                      same: frames().filter((f) => has(f, 'same'))
                          .map((f) => f.name),
                      tooltip: $('#flame canvas').title.split('\n').pop(),
                      panel: $('#d-function').textContent };
        $('#flame').dispatchEvent(new MouseEvent('mouseleave'));
        seen.same.after = frames().filter((f) => has(f, 'same')).length;

        // the C++ name: readable, its symbol in the panel
        $('#search').value = 'RuleWithActions::evaluate';
        $('#search').dispatchEvent(new Event('input'));
        await pause();
        $('#next').click();
        seen.cpp = panel();

        $('#search').value = 'NGX_FN_12$';
        $('#search').dispatchEvent(new Event('input'));
        await pause();
        seen.matches = frames().filter((f) => has(f, 'match')).length;
        seen.searchTook = document.body.dataset.took;
        seen.matchText = $('#match').textContent;
        seen.hash = location.hash;
        // Enter in the box: the widest match, selected; again, the next
        $('#search').dispatchEvent(new KeyboardEvent('keydown',
                                                     { key: 'Enter' }));
        seen.firstMatch = [$('#d-name').textContent, $('#match').textContent];
        $('#search').dispatchEvent(new KeyboardEvent('keydown',
                                                     { key: 'Enter' }));
        seen.secondMatch = [$('#d-name').textContent, $('#match').textContent,
            frames().some((f) => has(f, 'selected') && has(f, 'match'))];
        $('#reset').click();

        // zoom into the first frame two rows down, then back out
        const target = frames().find((f) => f.y === 36);
        const steps = history.length;
        seen.zoomName = target.name;
        // a click selects it, without zooming
        click(target);
        seen.clicked = { selected: frames().filter((f) => has(f, 'selected'))
                             .map((f) => f.name),
                         zoomed: zoomed() || null, hash: location.hash,
                         steps: history.length - steps,
                         panel: $('#d-name').textContent };
        // a double click zooms
        dblclick(target);
        seen.zoomTook = document.body.dataset.took;
        const focus = frames().find((f) => has(f, 'focus'));
        seen.zoom = { name: focus.name,
                      full: Math.abs(focus.w - width) < 1,
                      ancestors: frames().filter((f) => has(f, 'ancestor'))
                          .length,
                      reset: $('#reset').disabled,
                      summary: $('#summary').textContent.startsWith(
                          focus.name + ': ') };

        // the keys: down to the widest callee, Enter zooms, Escape a
        // step out, again to the root
        key('ArrowDown');
        const down = $('#d-name').textContent;
        key('ArrowRight');
        const right = $('#d-name').textContent;
        key('ArrowLeft');
        key('Enter');
        seen.keys = { down, right, moved: right !== down, zoomed: zoomed(),
                      hash: location.hash };
        key('Escape');
        seen.keys.escaped = zoomed();
        seen.keys.took = document.body.dataset.took;
        key('Backspace');
        seen.keys.backspace = zoomed();
        seen.keys.steps = history.length - steps;
        // history: one entry for the zoom, whatever its steps: back
        // leaves it at once
        await back();
        seen.keys.back = [zoomed(), location.hash, $('#reset').disabled];
        // Escape again at once, or Home: out to the root
        dblclick(frames().find((f) => f.y === 36));
        key('ArrowDown');
        key('Enter');
        key('Escape');
        seen.keys.once = zoomed();
        key('Escape');
        seen.keys.twice = [zoomed(), location.hash];
        dblclick(frames().find((f) => f.y === 36));
        key('ArrowDown');
        key('Home');
        seen.keys.home = [zoomed(), $('#reset').disabled];
        $('#reset').click();
        seen.unzoomed = frames()[0].name;

        // a mark of frames too narrow: click it, they are drawn
        seen.blocks = drawn().filter((f) => f.kind === 'more')
            .map((b) => [b.y, b.x, b.w, b.name]);
        const more = drawn().find((f) => f.kind === 'more');
        hover(more);
        seen.more = { title: more.title, tooltip: $('#flame canvas').title };
        click(more);
        seen.more.zoomed = zoomed();
        seen.more.frames = frames().length;
        seen.more.selected = $('#d-name').textContent;
        $('#reset').click();

        // focus, ignore and hide say what they keep; a bad one says so
        const filter = async (id, value) => {
            $(id).value = value;
            $(id).dispatchEvent(new Event('input'));
            await pause();
            return $(id + '-note').textContent;
        };
        seen.filters = { focus: await filter('#focus', '^ngx_fn_12$'),
                         focusFrames: frames().length,
                         took: document.body.dataset.took,
                         focusSummary: $('#summary').textContent };
        seen.filters.bad = await filter('#focus', 'ngx_(');
        seen.filters.badFrames = frames().length;
        seen.filters.badClass = $('#focus-note').className;
        await filter('#focus', '');
        seen.filters.ignore = await filter('#ignore', '^ngx_fn_1');
        await filter('#ignore', '');
        seen.filters.hide = await filter('#hide', '^ngx_fn_[0-9]$');
        seen.filters.hash = location.hash;
        await filter('#hide', '');
        $('#search').value = '';
        $('#search').dispatchEvent(new Event('input'));
        await pause();

        // the allocators first: the top row allocated its bytes itself
        $('#view').value = 'allocators';
        $('#view').dispatchEvent(new Event('change'));
        const top = frames().filter((f) => f.y === 18);
        hover(top[0]);
        seen.allocators = { hash: location.hash, top: top.length,
                            name: $('#d-name').textContent,
                            total: $('#d-total').textContent,
                            self: $('#d-self-row').hidden,
                            function: $('#d-function').textContent };
        // and a function's callers and callees
        click(top[0]);
        $('#d-sandwich').click();
        seen.sandwich = { hash: location.hash,
                          view: $('#view').value,
                          callers: frames().filter((f) => has(f, 'caller'))
                              .length,
                          head: $('#sandwich-head').textContent,
                          root: frames()[0].name };
        await back();
        seen.sandwich.back = $('#view').value;
        $('#view').value = 'callers';
        $('#view').dispatchEvent(new Event('change'));

        // by module: the table, and the graph in its colours
        $('#color').value = 'module';
        $('#color').dispatchEvent(new Event('change'));
        seen.modules = {
            rows: Array.from($('#modules').tBodies[0].rows)
                .map((tr) => tr.cells[0].textContent.trim()),
            rule: $('#modules-rule').textContent,
            colored: frames().filter((f) => / m[0-9x]\b/.test(f.cls)).length,
            legend: $('#legend-modules').textContent.replace(/\s+/g, ' ')
                .trim() };
        $('#modules th[data-key="module"]').click();
        seen.modules.byName = Array.from($('#modules').tBodies[0].rows)
            .map((tr) => tr.cells[0].textContent.trim());
        $('#color').value = 'name';
        $('#color').dispatchEvent(new Event('change'));

        $('#top th[data-key="name"]').click();
        seen.byName = Array.from($('#top').tBodies[0].rows).slice(0, 3)
            .map((tr) => tr.cells[0].textContent);
        seen.sortAttr = $('#top th[data-key="name"]').getAttribute('aria-sort');

        // the sample menu: objects, the bytes beside them
        seen.types = Array.from($('#type').options)
            .map((o) => o.value + ' ' + o.textContent);
        $('#type').value = 'inuse_objects';
        $('#type').dispatchEvent(new Event('change'));
        await until(() => document.body.dataset.tables === 'ready');
        seen.objects = {
            hash: location.hash, summary: $('#summary').textContent,
            heads: Array.from($('#top').tHead.rows[0].cells)
                .filter((th) => !th.hidden).map((th) => th.textContent),
            first: Array.from($('#top').tBodies[0].rows[0].cells)
                .map((td) => td.textContent),
            modules: Array.from($('#modules').tHead.rows[0].cells)
                .map((th) => th.textContent) };
        $('#type').value = 'alloc_space';
        $('#type').dispatchEvent(new Event('change'));
        seen.allocSummary = $('#summary').textContent;

        // start with a duration: 10 min by default, counted down
        seen.durations = Array.from($('#duration').options)
            .map((o) => o.value + ' ' + o.textContent);
        $('#start').click();
        await until(() => /^sampling on, /.test($('#sampling').textContent));
        seen.sampling = $('#sampling').textContent;
        const left = Number($('#sampling').dataset.left);
        await until(() => Number($('#sampling').dataset.left) < left);
        seen.countdown = $('#sampling').textContent;
        $('#duration').value = '';
        $('#start').click();
        await until(() => $('#sampling').textContent
                          === 'sampling on until stopped');
        seen.forever = $('#sampling').textContent;

        // what goes with what: a growth has no base, a snapshot no worker
        const disabled = () => ['#worker', '#seconds', '#snapshot', '#base']
            .filter((sel) => $(sel).disabled).join(' ');
        const mode = (value) => {
            $('#mode').value = value;
            $('#mode').dispatchEvent(new Event('change'));
            return disabled();
        };
        seen.disabled = { growth: mode('growth'), snapshot: mode('snapshot'),
                          live: mode('live') };
        seen.liveHidden = ['#seconds-choice', '#snapshot-choice']
            .filter((sel) => $(sel).hidden).join(' ');
        seen.snapshots = Array.from($('#snapshot').options)
            .map((o) => o.value + ' ' + o.textContent);

        // compare the live heap with the older snapshot: a change loads
        $('#base').value = $('#base').options[2].value;
        $('#base').dispatchEvent(new Event('change'));
        await until(() => document.body.dataset.state === 'ready');
        seen.compare = {
            hash: location.hash,
            grown: frames().filter((f) => has(f, 'grown')).length,
            shrunk: frames().filter((f) => has(f, 'shrunk')).length,
            colored: frames().filter((f) => / c\d\b/.test(f.cls)).length,
            root: frames()[0].title,
            summary: $('#summary').textContent,
            gone: $('#gone').textContent,
            legend: !$('#legend').hidden,
            heads: Array.from($('#top').tHead.rows[0].cells)
                .filter((th) => !th.hidden).map((th) => th.textContent),
        };
        $('#top th[data-key="dflat"]').click();
        seen.compare.first = Array.from($('#top').tBodies[0].rows[0].cells)
            .map((td) => td.className + ' ' + td.textContent);

        // the traffic, through its link: asked once shown, again on
        // Refresh; back shows the heap as it was, not asked again
        const profiles = () => performance.getEntriesByType('resource')
            .filter((e) => e.name.includes('/pprof/heap.json')).length;
        const cells = (id, k) => Array.from($(id).tBodies[0].rows)
            .map((tr) => tr.cells[k].textContent);
        const before = profiles();
        seen.traffic = { hidden: $('#traffic').hidden };
        $('#to-traffic').click();
        await until(() => document.body.dataset.traffic === 'ready');
        seen.traffic.hash = location.hash;
        seen.traffic.shown = !$('#traffic').hidden;
        seen.traffic.heap = Array.from(document.querySelectorAll('.heap'))
            .every((e) => e.hidden);
        seen.traffic.current = [$('#to-heap').getAttribute('aria-current'),
                                $('#to-traffic').getAttribute('aria-current')];
        seen.traffic.text = $('#traffic-text').textContent;
        seen.traffic.locations = cells('#traffic-locations', 1);
        seen.traffic.top = cells('#traffic-requests', 8);
        $('#traffic-top').value = '2';
        $('#traffic-load').click();
        await until(() => document.body.dataset.traffic === 'ready');
        seen.traffic.top2 = cells('#traffic-requests', 0);
        await back();
        seen.traffic.back = { hash: location.hash,
                              hidden: $('#traffic').hidden,
                              heap: !$('#choices').hidden,
                              frames: frames().length,
                              asked: profiles() - before,
                              current: $('#to-heap')
                                  .getAttribute('aria-current') };

        const pre = document.createElement('pre');
        pre.id = 'drive';
        pre.textContent = JSON.stringify(seen);
        document.body.append(pre);
    }

    drive().catch((e) => {
        const pre = document.createElement('pre');
        pre.id = 'drive';
        pre.textContent = JSON.stringify({ failed: String(e && e.stack) });
        document.body.append(pre);
    });
}());
