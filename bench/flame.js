// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// make bench (section 9b): how long a flame graph page takes to draw, in
// Debian's chromium, headless, in real time, driven through the DevTools
// protocol over --remote-debugging-pipe (file descriptors 3 and 4, a NUL
// after each message), as t/ui/cdp.js does.  The same measure for any
// page: the module's viewer and go tool pprof's -http flame graph alike.
//
//     node bench/flame.js URL BOXES [WIDTHxHEIGHT [NOTE]]
//
// BOXES is a JavaScript expression, evaluated in the page: how many boxes
// its graph has drawn (0 until it drew, -1 if the page says it failed).
// A watcher put into the page before its own scripts run evaluates it on
// a 10 ms timer, which runs only between the page's tasks; once it is
// above 0, the next frame (its style, layout and paint) and then one
// more task: that moment, by the page's own clock (performance.now(),
// from the start of the navigation), is when the graph was drawn and the
// page's main thread was free again.  A fresh browser and profile each
// time: nothing cached.  The navigation starts once the browser has
// finished starting (its processes quiet, t/ui/chromium.js settled()), as
// an operator's browser has: on 2 cores, chromium's own start kept both
// busy for some two seconds, and a page loaded meanwhile took up to 1.5
// times as long.
//
// NOTE, an expression too, is what the page says of itself once drawn
// (the module's page: how long its profile and its drawing took).
// Prints {"ms", "boxes", "bytes" (as sent, headers included), "body"
// (decoded), "requests", "note", "quiet" (ms the browser took to go
// quiet; null if it never did in 15 s)} as JSON, or {"failed": why}.

'use strict';

const { withChromium, connect, settled, sleep, within } =
    require('../t/ui/chromium.js');
const [url, boxes, size = '1200x900', note = 'null']
    = process.argv.slice(2);
const TIMEOUT = Number(process.env.FLAME_TIMEOUT || 180) * 1000;

// the watcher, put into the page; it leaves its finding in a global
const WATCHER = `(() => {
    const boxes = () => { try { return Number(${boxes}) || 0; }
                          catch (e) { return 0; } };
    const timer = setInterval(() => {
        const n = boxes();

        if (n === 0) {
            return;
        }
        clearInterval(timer);
        if (n < 0) {
            window.__flameDrawn = { failed: 'the page says it failed' };
            return;
        }
        requestAnimationFrame(() => setTimeout(() => {
            window.__flameDrawn = { ms: performance.now(), boxes: n,
                                    note: ${note} };
        }, 0));
    }, 10);
})();`;

async function main() {
    return withChromium(size, 'malloc-flame-', measure);
}


async function measure(browser) {
    const sent = new Map(), body = new Map();
    const send = connect(browser, (msg) => {
        if (msg.method === 'Network.dataReceived') {
            body.set(msg.params.requestId,
                     (body.get(msg.params.requestId) || 0)
                     + msg.params.dataLength);
        } else if (msg.method === 'Network.loadingFinished') {
            sent.set(msg.params.requestId, msg.params.encodedDataLength);
        }
    }, TIMEOUT);

    const { targetId } = await send('Target.createTarget',
                                    { url: 'about:blank' });
    const { sessionId } = await send('Target.attachToTarget',
                                     { targetId, flatten: true });

    await send('Network.enable', {}, sessionId);
    await send('Page.enable', {}, sessionId);
    await send('Page.addScriptToEvaluateOnNewDocument', { source: WATCHER },
               sessionId);

    const t0 = Date.now();
    const quiet = await settled(browser.pid) ? Date.now() - t0 : null;

    await send('Page.navigate', { url }, sessionId);

    /* the page's main thread answers between its tasks: a slow answer
       here delays nothing the page measures */
    let drawn = null;

    for (const end = Date.now() + TIMEOUT; Date.now() < end;) {
        const r = await send('Runtime.evaluate', {
            expression: 'window.__flameDrawn || null', returnByValue: true },
                             sessionId).catch(() => null);

        drawn = r && r.result && r.result.value;
        if (drawn) {
            break;
        }
        await sleep(100);
    }
    if (!drawn) {
        throw new Error('not drawn in ' + TIMEOUT / 1000 + ' s');
    }
    if (drawn.failed) {
        throw new Error(drawn.failed);
    }

    const sum = (m) => Array.from(m.values()).reduce((a, b) => a + b, 0);

    await within(send('Browser.close').catch(() => {}), 2000);
    return { ms: drawn.ms, boxes: drawn.boxes, bytes: sum(sent),
             body: sum(body), requests: sent.size, note: drawn.note,
             quiet };
}

main().then((v) => console.log(JSON.stringify(v)),
            (e) => console.log(JSON.stringify({ failed: String(e.stack
                                                               || e) })));
