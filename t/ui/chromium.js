// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// Debian's chromium, headless, for t/ui/cdp.js and bench/flame.js: a
// fresh browser with an empty profile, driven over
// --remote-debugging-pipe (file descriptors 3 and 4), in a process group
// of its own so that its helpers end with it.
//
//     const { withChromium, connect } = require('./chromium.js');
//     const value = await withChromium('1200x900', 'malloc-cdp-',
//         async (browser) => {
//             const send = connect(browser, (msg) => { ... }, 60000);
//             await send('Target.createTarget', { url });
//         });

'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CHROMIUM = process.env.TEST_CHROMIUM || '/usr/bin/chromium';
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/* "use" gets the browser; whatever way it ends, the browser goes */
async function withChromium(size, prefix, use) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    const browser = spawn(CHROMIUM, [
        '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
        '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--disable-extensions', '--disable-quic',
        '--window-size=' + size.replace('x', ','), '--user-data-dir=' + dir,
        '--remote-debugging-pipe', 'about:blank'],
                          { stdio: ['ignore', 'ignore', 'ignore', 'pipe',
                                    'pipe'],
                            detached: true });
    const exited = new Promise((ok) => browser.once('exit', ok));

    try {
        return await use(browser);
    } finally {
        try {
            process.kill(-browser.pid, 'SIGTERM');
        } catch (e) {
            /* gone already */
        }
        await Promise.race([exited, sleep(5000)]);
        try {
            fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10,
                             retryDelay: 100 });
        } catch (e) {
            /* a helper still writing: the directory is a temporary one */
        }
    }
}

/*
 * The DevTools protocol over the browser's pipe: a NUL ends each message,
 * which may come in pieces or several at once.  Answers settle what
 * "send" returned (or fail it after "timeout" ms); every event goes to
 * onEvent.
 */
function connect(browser, onEvent, timeout) {
    const [, , , commands, events] = browser.stdio;
    const waiting = new Map();
    let serial = 0, pending = '';

    events.setEncoding('utf8');
    events.on('data', (text) => {
        let end;

        pending += text;
        while ((end = pending.indexOf('\0')) !== -1) {
            const msg = JSON.parse(pending.slice(0, end));

            pending = pending.slice(end + 1);
            if (msg.id !== undefined && waiting.has(msg.id)) {
                waiting.get(msg.id)(msg);
                waiting.delete(msg.id);
            } else {
                onEvent(msg);
            }
        }
    });
    commands.on('error', () => { /* the browser went: sends time out */ });

    return (method, params = {}, sessionId) => new Promise((ok, fail) => {
        const id = ++serial;

        waiting.set(id, (msg) => (msg.error
            ? fail(new Error(method + ': ' + msg.error.message))
            : ok(msg.result)));
        commands.write(JSON.stringify({ id, method, params, sessionId })
                       + '\0');
        setTimeout(() => fail(new Error(method + ': no answer')),
                   timeout).unref();
    });
}

module.exports = { withChromium, connect, sleep };
