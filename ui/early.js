/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */

/*
 * The heap viewer's first request, sent while the page is still loading:
 * building a profile is most of the wait, and the page's own scripts need
 * not come first.  Only the default profile (no fragment: a link's
 * choices are app.js's to read); app.js takes the answer when it asks
 * the same.
 */

'use strict';

(function () {
    if (location.hash === '' || location.hash === '#') {
        const url = './pprof/heap.json';

        window.mallocEarly = { url, response: fetch(url) };
    }
})();
