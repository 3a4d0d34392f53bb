// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// Debian's chromium, headless, for t/ui/cdp.js, t/ui/page.test.js and
// bench/flame.js: a fresh browser with an empty profile, driven over
// --remote-debugging-pipe (file descriptors 3 and 4) or asked for a
// page's DOM, in a process group of its own so that its helpers end with
// it before its profile is removed.
//
//     const { withChromium, connect, dumpDom } = require('./chromium.js');
//     const value = await withChromium('1200x900', 'malloc-cdp-',
//         async (browser) => {
//             const send = connect(browser, (msg) => { ... }, 60000);
//             await send('Target.createTarget', { url });
//         });
//     const html = await dumpDom(url, '1200x900', 'malloc-ui-', 60000);

'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CHROMIUM = process.env.TEST_CHROMIUM || '/usr/bin/chromium';
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/*
 * what promise settles to, or undefined after ms; the timer goes as soon
 * as the promise settles (a pending one keeps node running until it
 * fires: five seconds at the end of every run)
 */
function within(promise, ms) {
    let timer;

    return Promise.race([promise, new Promise((ok) => {
        timer = setTimeout(ok, ms);
    })]).finally(() => clearTimeout(timer));
}

/*
 * The fields after the name in parentheses of /proc/<pid>/stat (state,
 * ppid, pgrp, ...) of each process of group pgid
 */
function group(pgid) {
    const found = [];

    for (const pid of fs.readdirSync('/proc')) {
        let stat;

        try {
            stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
        } catch (e) {
            continue;   /* not a process, or gone meanwhile */
        }

        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');

        if (Number(fields[2]) === pgid) {
            found.push(fields);
        }
    }
    return found;
}

/*
 * whether a process of group pgid still runs: its zombies, which the
 * system reaps when it will, write nothing
 */
function running(pgid) {
    return group(pgid).some((fields) => fields[0] !== 'Z');
}

/*
 * Once the processes of group pgid (a browser and its helpers) are
 * quiet: under 4% of a core for half a second, by their CPU time (utime
 * and stime, in clock ticks of 10 ms), at most limit ms.  Chromium's
 * start keeps both cores of a small machine busy for two seconds or so
 * after it first answers; a page loaded meanwhile shares them with it,
 * which an operator's browser, started long before, does not.
 */
async function settled(pgid, limit = 15000) {
    const ticks = () => group(pgid).reduce((n, f) => n + Number(f[11])
                                                     + Number(f[12]), 0);

    for (const end = Date.now() + limit; Date.now() < end;) {
        const before = ticks();

        await sleep(500);
        if (ticks() - before <= 2) {
            return true;
        }
    }
    return false;
}

/*
 * "use" gets the browser, started with args (by default the DevTools
 * pipe), its standard output kept in browser.out and browser.exited
 * settled when it exits; whatever way "use" ends, the browser goes
 */
async function withChromium(size, prefix, use,
                            args = ['--remote-debugging-pipe', 'about:blank'])
{
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    const browser = spawn(CHROMIUM, [
        '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
        '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--disable-extensions', '--disable-quic',
        '--window-size=' + size.replace('x', ','), '--user-data-dir=' + dir,
        ...args],
                          { stdio: ['ignore', 'pipe', 'ignore', 'pipe',
                                    'pipe'],
                            detached: true });
    const exited = new Promise((ok) => browser.once('exit', ok));

    browser.out = [];
    browser.stdout.setEncoding('utf8');
    browser.stdout.on('data', (text) => browser.out.push(text));
    browser.exited = exited;

    try {
        return await use(browser);
    } finally {
        try {
            process.kill(-browser.pid, 'SIGTERM');
        } catch (e) {
            /* gone already */
        }
        await within(exited, 5000);
        /* its helpers too (a loaded machine ends them late): the group */
        for (const end = Date.now() + 10000;
             Date.now() < end && running(browser.pid);)
        {
            await sleep(50);
        }
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

/* the DOM of url once its scripts are done (ten seconds of virtual time) */
function dumpDom(url, size, prefix, timeout) {
    return withChromium(size, prefix, async (browser) => {
        const code = await within(browser.exited, timeout);

        if (code !== 0) {
            throw new Error('chromium --dump-dom ' + url + ': '
                            + (code === undefined ? 'no end in '
                               + timeout + ' ms' : 'exit ' + code));
        }
        /* the pipe may hold the last of the page after the exit */
        await new Promise((ok) => (browser.stdout.readableEnded ? ok()
                                   : browser.stdout.once('end', ok)));
        return browser.out.join('');
    }, ['--virtual-time-budget=10000', '--dump-dom', url]);
}

module.exports = { withChromium, connect, dumpDom, settled, sleep, within };
