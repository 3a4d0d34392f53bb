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

    async function until(test) {
        while (!test()) {
            await new Promise((ok) => setTimeout(ok, 20));
        }
    }

    async function drive() {
        await until(() => document.body.dataset.state === 'ready');

        const width = $('#flame').clientWidth;
        seen.styled = getComputedStyle($('#flame')).position === 'relative';
        seen.frames = $('#flame').children.length;
        seen.root = $('#flame .frame').textContent;
        seen.title = $('#flame .frame').title;

        $('#search').value = 'NGX_FN_12';
        $('#search').dispatchEvent(new Event('input'));
        await pause();
        seen.matches = document.querySelectorAll('#flame .frame.match').length;
        seen.matchText = $('#match').textContent;
        seen.hash = location.hash;

        // zoom into the first frame two rows down, then back out
        const target = Array.from($('#flame').children)
            .find((e) => e.style.top === '36px');
        seen.zoomName = target.textContent;
        target.click();
        const focus = $('#flame .frame.focus');
        seen.zoom = { name: focus.textContent,
                      full: Math.abs(parseFloat(focus.style.width) - width) < 1,
                      ancestors: document.querySelectorAll('.ancestor').length,
                      reset: $('#reset').disabled };
        $('#reset').click();
        seen.unzoomed = $('#flame .frame.focus').textContent;

        $('#top th[data-key="name"]').click();
        seen.byName = Array.from($('#top').tBodies[0].rows).slice(0, 3)
            .map((tr) => tr.cells[0].textContent);
        seen.sortAttr = $('#top th[data-key="name"]').getAttribute('aria-sort');

        $('#type').value = 'alloc';
        $('#type').dispatchEvent(new Event('change'));
        seen.allocSummary = $('#summary').textContent;

        $('#start').click();
        await until(() => $('#sampling').textContent === 'sampling on');
        seen.sampling = $('#sampling').textContent;

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
        seen.snapshots = Array.from($('#snapshot').options)
            .map((o) => o.value + ' ' + o.textContent);

        // compare the live heap with the older snapshot: a change loads
        $('#base').value = $('#base').options[2].value;
        $('#base').dispatchEvent(new Event('change'));
        await until(() => document.body.dataset.state === 'ready');
        seen.compare = {
            hash: location.hash,
            grown: document.querySelectorAll('#flame .grown').length,
            shrunk: document.querySelectorAll('#flame .shrunk').length,
            colored: document.querySelectorAll('#flame [class*=" c"]').length,
            root: $('#flame .frame').title,
            summary: $('#summary').textContent,
            gone: $('#gone').textContent,
            legend: !$('#legend').hidden,
            heads: Array.from($('#top').tHead.rows[0].cells)
                .filter((th) => !th.hidden).map((th) => th.textContent),
        };
        $('#top th[data-key="dflat"]').click();
        seen.compare.first = Array.from($('#top').tBodies[0].rows[0].cells)
            .map((td) => td.className + ' ' + td.textContent);

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
