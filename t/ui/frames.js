// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// Loaded after app.js by serve.js's {frames: true} page only: once the
// page drew, writes what its canvas shows (MallocViewer.frames(), each
// frame's name, classes and title) as JSON into <pre id="frames">, for
// page.test.js to read from chromium's --dump-dom.

'use strict';

(function () {
    const done = () => {
        const b = document.body.dataset;

        return (['ready', 'error'].includes(b.state) && b.tables !== 'loading')
               || ['ready', 'error'].includes(b.traffic);
    };
    const write = () => {
        const pre = document.createElement('pre');

        pre.id = 'frames';
        pre.textContent = JSON.stringify(MallocViewer.frames('flame')
            .map(({ kind, name, cls, title }) => ({ kind, name, cls, title })));
        document.body.append(pre);
    };
    const wait = () => (done() ? write() : setTimeout(wait, 20));

    wait();
}());
