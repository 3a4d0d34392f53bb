// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// A user's path through the heap viewer of a real nginx: t/ui.t starts
// this with a page's URL and a script, an async function's source that
// runs in the page once it says it drew (body[data-state]) and filled
// its tables (data-tables), and returns what it saw.
// Debian's chromium, headless, is driven through the
// DevTools protocol, in real time (not --dump-dom's virtual time, in
// which a timer's countdown and the page's own timings mean nothing),
// over --remote-debugging-pipe (file descriptors 3 and 4, a NUL after
// each message): Debian 12's node 18 has no WebSocket.
// Prints the function's value as JSON, or {"failed": why}; with
// CDP_SCREENSHOT=FILE, saves the page as it left it there (PNG).
// CDP_FILES="SELECTOR=FILE;..." chooses files in the page's file inputs
// first, one after the other, as a user would in the picker, each once
// the page has read the one before (body[data-opened] names it).
// CDP_DOWNLOADS=DIR lets the page download into DIR and waits, after
// the script, until what it started there is complete.
// CDP_REQUESTS=FILE writes there, one a line, the URL of every request
// the page made, its own first, as the browser's network saw them.
//
//     node t/ui/cdp.js URL SCRIPT [WIDTHxHEIGHT]

'use strict';

const fs = require('node:fs');
const path = require('node:path');

const { withChromium, connect, sleep, within } = require('./chromium.js');
const [url, script, size = '1200x900'] = process.argv.slice(2);

async function main() {
    return withChromium(size, 'malloc-cdp-', drive);
}


async function drive(browser) {
    const deadline = Date.now() + 30000;
    const requests = [];
    const downloads = new Map();    /* guid -> its last state */
    const send = connect(browser, (msg) => {
        if (msg.method === 'Network.requestWillBeSent') {
            requests.push(msg.params.request.url);
        } else if (msg.method === 'Browser.downloadWillBegin'
                   || msg.method === 'Browser.downloadProgress') {
            downloads.set(msg.params.guid, msg.params.state || 'begun');
        }
    }, 60000);

    /* to see every request, the network is watched before it loads */
    const watch = !!process.env.CDP_REQUESTS;
    const { targetId } = await send('Target.createTarget',
                                    { url: watch ? 'about:blank' : url });
    const { sessionId } = await send('Target.attachToTarget',
                                     { targetId, flatten: true });

    if (process.env.CDP_DOWNLOADS) {
        await send('Browser.setDownloadBehavior', {
            behavior: 'allow', downloadPath: process.env.CDP_DOWNLOADS,
            eventsEnabled: true });
    }
    if (watch) {
        await send('Network.enable', {}, sessionId);
        await send('Page.navigate', { url }, sessionId);
    }
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

    /* the page's own wait: it says when it drew, or failed; the traffic
       view, when its answer is shown */
    while (!['ready', 'error'].includes(await evaluate(
        'document.body && (document.getElementById("traffic")'
        + ' && !document.getElementById("traffic").hidden'
        + ' ? document.body.dataset.traffic'
        + ' : document.body.dataset.tables !== "loading" '
        + '&& document.body.dataset.state)').catch(() => ''))) {
        if (Date.now() > deadline + 30000) {
            throw new Error('the page did not draw');
        }
        await sleep(50);
    }

    for (const entry of (process.env.CDP_FILES || '').split(';')) {
        const eq = entry.indexOf('=');

        if (eq === -1) {
            continue;
        }

        const file = entry.slice(eq + 1), name = path.basename(file);
        const { root } = await send('DOM.getDocument', {}, sessionId);
        const { nodeId } = await send('DOM.querySelector', {
            nodeId: root.nodeId, selector: entry.slice(0, eq) }, sessionId);

        await send('DOM.setFileInputFiles', { files: [file], nodeId },
                   sessionId);
        while (!await evaluate('document.body.dataset.state === "error" || '
                               + '(document.body.dataset.state === "ready" '
                               + '&& (document.body.dataset.opened || "")'
                               + '.split(" against ").includes('
                               + JSON.stringify(name) + '))')) {
            if (Date.now() > deadline + 30000) {
                throw new Error(name + ' was not read');
            }
            await sleep(50);
        }
    }

    const value = await evaluate('(' + fs.readFileSync(script, 'utf8')
                                 + ')()');

    /*
     * the downloads the script started, complete; one may begin a
     * moment after the script returns (none after 5 s: it started none,
     * which its value may say)
     */
    for (const begun = Date.now() + 5000, done = begun + 25000;
         process.env.CDP_DOWNLOADS
         && (downloads.size === 0 ? Date.now() < begun
             : [...downloads.values()].some((d) => d !== 'completed'
                                                   && d !== 'canceled'));) {
        if (Date.now() > done) {
            throw new Error('a download did not complete');
        }
        await sleep(50);
    }
    if (watch) {
        fs.writeFileSync(process.env.CDP_REQUESTS, requests.join('\n'));
    }
    if (process.env.CDP_SCREENSHOT) {
        const shot = await send('Page.captureScreenshot', { format: 'png' },
                                sessionId);

        fs.writeFileSync(process.env.CDP_SCREENSHOT,
                         Buffer.from(shot.data, 'base64'));
    }
    /* closed, not killed mid-write: its profile then goes cleanly */
    await within(send('Browser.close').catch(() => {}), 2000);
    return value;
}

main().then((v) => console.log(JSON.stringify(v === undefined ? null : v)),
            (e) => console.log(JSON.stringify({ failed: String(e.stack
                                                               || e) })));
