// A user's path through the heap viewer of a real nginx: t/ui.t starts
// this with a page's URL and a script, an async function's source that
// runs in the page once it says it drew (body[data-state]) and filled
// its tables (data-tables), and returns what it saw.
// Debian's chromium, headless, is driven through the
// DevTools protocol, in real time (not --dump-dom's virtual time, in
// which a timer's countdown and the page's own timings mean nothing).
// Prints the function's value as JSON, or {"failed": why}; with
// CDP_SCREENSHOT=FILE, saves the page as it left it there (PNG).
//
//     node t/ui/cdp.js URL SCRIPT [WIDTHxHEIGHT]

'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// node 20 has WebSocket behind a flag, node 22 by default
if (typeof WebSocket === 'undefined' && !process.execArgv.length) {
    const r = spawnSync(process.execPath, ['--experimental-websocket',
                                           ...process.argv.slice(1)],
                        { stdio: 'inherit' });
    process.exit(r.status === null ? 1 : r.status);
}

const CHROMIUM = process.env.TEST_CHROMIUM || '/usr/bin/chromium';
const [url, script, size = '1200x900'] = process.argv.slice(2);
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

async function main() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'malloc-cdp-'));
    /* a group of its own: the browser's helpers end with it */
    const browser = spawn(CHROMIUM, [
        '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
        '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--disable-extensions', '--disable-quic',
        '--window-size=' + size.replace('x', ','), '--user-data-dir=' + dir,
        '--remote-debugging-port=0', 'about:blank'],
                          { stdio: 'ignore', detached: true });
    const exited = new Promise((ok) => browser.once('exit', ok));

    try {
        return await drive(dir);
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

async function drive(dir) {
    const file = path.join(dir, 'DevToolsActivePort');
    const deadline = Date.now() + 30000;

    while (!fs.existsSync(file) || fs.readFileSync(file, 'utf8')
                                     .split('\n').length < 2) {
        if (Date.now() > deadline) {
            throw new Error('chromium did not open its DevTools port');
        }
        await sleep(50);
    }

    const [port, where] = fs.readFileSync(file, 'utf8').split('\n');
    const ws = new WebSocket('ws://127.0.0.1:' + port + where);
    const waiting = new Map();
    let serial = 0;

    await new Promise((ok, fail) => {
        ws.onopen = ok;
        ws.onerror = () => fail(new Error('no DevTools connection'));
    });
    ws.onmessage = (m) => {
        const msg = JSON.parse(m.data);

        if (msg.id !== undefined && waiting.has(msg.id)) {
            waiting.get(msg.id)(msg);
            waiting.delete(msg.id);
        }
    };

    const send = (method, params = {}, sessionId) => new Promise((ok, fail) => {
        const id = ++serial;

        waiting.set(id, (msg) => (msg.error
            ? fail(new Error(method + ': ' + msg.error.message))
            : ok(msg.result)));
        ws.send(JSON.stringify({ id, method, params, sessionId }));
    });

    const { targetId } = await send('Target.createTarget', { url });
    const { sessionId } = await send('Target.attachToTarget',
                                     { targetId, flatten: true });
    const evaluate = async (expression) => {
        const r = await send('Runtime.evaluate', {
            expression, awaitPromise: true, returnByValue: true }, sessionId);

        if (r.exceptionDetails) {
            throw new Error((r.exceptionDetails.exception
                             && r.exceptionDetails.exception.description)
                            || r.exceptionDetails.text);
        }
        return r.result.value;
    };

    /* the page's own wait: it says when it drew, or failed */
    while (!['ready', 'error'].includes(await evaluate(
        'document.body && document.body.dataset.tables !== "loading" '
        + '&& document.body.dataset.state').catch(() => ''))) {
        if (Date.now() > deadline + 30000) {
            throw new Error('the page did not draw');
        }
        await sleep(50);
    }

    const value = await evaluate('(' + fs.readFileSync(script, 'utf8')
                                 + ')()');

    if (process.env.CDP_SCREENSHOT) {
        const shot = await send('Page.captureScreenshot', { format: 'png' },
                                sessionId);

        fs.writeFileSync(process.env.CDP_SCREENSHOT,
                         Buffer.from(shot.data, 'base64'));
    }
    /* closed, not killed: it then removes its files in /tmp */
    await Promise.race([send('Browser.close').catch(() => {}), sleep(2000)]);
    ws.close();
    return value;
}

main().then((v) => console.log(JSON.stringify(v === undefined ? null : v)),
            (e) => console.log(JSON.stringify({ failed: String(e.stack
                                                               || e) })));
