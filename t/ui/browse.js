// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// What a script saw in the heap viewer, in chromium through the DevTools
// protocol (t/ui/cdp.js), against serve.js's stand-in: drive(server,
// hash, body) runs body (an async function's, after HELPERS) once the
// page drew, and returns its value.  skip says why there is no browser.

'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');

const CHROMIUM = process.env.TEST_CHROMIUM || '/usr/bin/chromium';
const skip = fs.existsSync(CHROMIUM) ? false : CHROMIUM + ' not found';

// the helpers every script below starts with, in the page
const HELPERS = `
    const $ = (s) => document.querySelector(s);
    const until = async (test) => {
        for (const end = Date.now() + 20000; !test();) {
            if (Date.now() > end) {
                throw new Error('timed out: ' + test);
            }
            await new Promise((ok) => setTimeout(ok, 20));
        }
    };
    const frames = () => MallocViewer.frames('flame');
    const has = (f, cls) => f.cls.split(' ').includes(cls);
    const at = (f, type, extra = {}) => {
        const r = $('#flame canvas').getBoundingClientRect();

        return $('#flame canvas').dispatchEvent(new MouseEvent(type, {
            clientX: Math.ceil(r.left + f.x
                               + Math.max(0, Math.min(f.w / 2, 8) - 1)),
            clientY: r.top + f.y + f.h / 2, bubbles: true,
            cancelable: true, ...extra }));
    };
    const key = (target, k, opts = {}) => target.dispatchEvent(
        new KeyboardEvent('keydown', { key: k, bubbles: true,
                                       cancelable: true, ...opts }));
    const menu = () => ({
        open: !$('#frame-menu').hidden,
        name: $('#menu-name').textContent,
        items: [...$('#menu-items').children].filter((b) => !b.hidden)
            .map((b) => b.textContent),
        focused: document.activeElement.closest('#frame-menu')
            ? document.activeElement.textContent : null });
    const tables = () => until(() => document.body.dataset.tables
                                     === 'ready');
    // a filter typed: its note, marked stale first, says it ran
    const typed = async (id, value) => {
        $(id + '-note').textContent = '\u0000stale';
        $(id).value = value;
        $(id).dispatchEvent(new Event('input'));
        await until(() => $(id + '-note').textContent !== '\u0000stale');
        await tables();
    };
`;

// what script (an async function's body, after HELPERS) saw in the page
// of server at hash, or, server null, at the URL hash, in a window of
// size; env adds to cdp.js's environment (CDP_FILES: files to pick)
async function drive(server, hash, body, env = {}, size = '1200x900') {
    if (server !== null) {
        await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
    }

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'malloc-browse-'));
    const file = path.join(dir, 'drive.js');
    const url = server === null ? hash : 'http://127.0.0.1:'
        + server.address().port + '/malloc/ui' + hash;

    fs.writeFileSync(file, 'async () => {' + HELPERS + body + '\n}');
    try {
        const out = await new Promise((ok, fail) => execFile('node', [
            path.join(__dirname, 'cdp.js'), url, file, size],
            { timeout: 120000, maxBuffer: 16 << 20,
              env: { ...process.env, ...env } },
            (err, stdout) => (err ? fail(err) : ok(stdout))));

        return JSON.parse(out);
    } finally {
        if (server !== null) {
            server.close();
        }
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

module.exports = { drive, skip, HELPERS };
