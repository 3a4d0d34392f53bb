// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// Debian's chromium, headless, for t/ui/cdp.js and bench/flame.js: a
// fresh browser with an empty profile, driven over
// --remote-debugging-pipe (file descriptors 3 and 4), in a process group
// of its own so that its helpers end with it.
//
//     const { withChromium } = require('./chromium.js');
//     const value = await withChromium('1200x900', 'malloc-cdp-',
//                                      async (browser) => { ... });

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

module.exports = { withChromium, sleep };
