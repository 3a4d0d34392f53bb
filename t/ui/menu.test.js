// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// A frame's menu (right click, or m and the menu key on the selected
// frame), and the callers and callees of a function as one graph, in
// chromium (t/ui/browse.js) against serve.js's stand-in: what the user
// sees.
//
//     node --test t/ui/menu.test.js

'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { serve } = require('./serve.js');
const { drive, skip } = require('./browse.js');

test('a frame\'s menu: by a right click and by the keys', { skip },
     async (t) => {
    const seen = await drive(serve({ stacks: 2000 }), '', `
    const seen = {};

    await tables();
    // a frame two rows down: a right click opens its menu there
    const f = frames().filter((x) => x.kind === 'frame' && x.y === 36)
        .sort((a, b) => b.w - a.w)[0];
    seen.name = f.name;
    seen.taken = !at(f, 'contextmenu');
    seen.right = menu();
    seen.selected = frames().filter((x) => has(x, 'selected'))
        .map((x) => x.name);
    const box = $('#frame-menu').getBoundingClientRect();
    seen.inView = box.left >= 0 && box.right <= innerWidth
                  && box.top >= 0 && box.bottom <= innerHeight;
    // the arrows move in it; Escape closes it, and the zoom stays
    key(document.activeElement, 'ArrowDown');
    key(document.activeElement, 'ArrowDown');
    seen.down = menu().focused;
    key(document.activeElement, 'ArrowUp');
    key(document.activeElement, 'ArrowUp');
    key(document.activeElement, 'ArrowUp');
    seen.wrapped = menu().focused;
    const hash = location.hash;
    key(document.activeElement, 'Escape');
    seen.escaped = { open: menu().open, hash: location.hash === hash,
                     focus: document.activeElement === $('#flame') };

    // m on the selected frame: its menu, the first entry focused
    key($('#flame'), 'm');
    seen.m = menu();
    key(document.activeElement, 'Escape');
    // the menu key too
    key($('#flame'), 'ContextMenu');
    seen.contextKey = menu().open;
    key(document.activeElement, 'Escape');

    // ignore: the stacks through it dropped
    key($('#flame'), 'm');
    [...$('#menu-items').children].find((b) => b.dataset.act === 'ignore')
        .click();
    await tables();
    seen.ignore = { value: $('#ignore').value,
                    note: $('#ignore-note').textContent,
                    left: frames().some((x) => x.name === f.name),
                    open: menu().open, hash: location.hash };
    history.back();
    await until(() => $('#ignore').value === '');
    await tables();

    // hide: its frames out, its callees to its caller
    const again = frames().find((x) => x.kind === 'frame'
                                       && x.name === f.name);
    at(again, 'contextmenu');
    [...$('#menu-items').children].find((b) => b.dataset.act === 'hide')
        .click();
    await tables();
    seen.hide = { value: $('#hide').value,
                  note: $('#hide-note').textContent,
                  left: frames().some((x) => x.name === f.name) };
    await typed('#hide', '');

    // focus: only the stacks through it
    at(frames().find((x) => x.name === f.name), 'contextmenu');
    [...$('#menu-items').children].find((b) => b.dataset.act === 'focus')
        .click();
    await tables();
    seen.focus = { value: $('#focus').value,
                   note: $('#focus-note').textContent };
    await typed('#focus', '');

    // copy: to the clipboard, or, refused, the name selected to copy
    let copied = null;
    navigator.clipboard.writeText = async (text) => { copied = text; };
    at(frames().find((x) => x.name === f.name), 'contextmenu');
    $('#menu-items [data-act=copy]').click();
    await until(() => copied !== null);
    seen.copied = [copied, $('#status').textContent];
    navigator.clipboard.writeText = () => Promise.reject(
        new DOMException('refused', 'NotAllowedError'));
    getSelection().removeAllRanges();
    at(frames().find((x) => x.name === f.name), 'contextmenu');
    key(document.activeElement, 'End');
    seen.end = menu().focused;
    document.activeElement.click();
    await until(() => getSelection().toString() !== '');
    seen.selection = [getSelection().toString(), $('#status').textContent];

    // the root has no function: the browser's own menu
    seen.root = at(frames()[0], 'contextmenu') && !menu().open;
    return seen;`);

    t.diagnostic(JSON.stringify(seen));
    assert.strictEqual(seen.failed, undefined, seen.failed);

    const entries = ['Zoom into it', 'Focus on it', 'Ignore it', 'Hide it',
                     'Callers and callees', 'Copy the name'];
    assert.ok(seen.taken, 'the browser\'s menu is not shown on a frame');
    assert.deepStrictEqual(seen.right, { open: true, name: seen.name,
                                         items: entries,
                                         focused: 'Zoom into it' });
    assert.deepStrictEqual(seen.selected, [seen.name], 'the frame selected');
    assert.ok(seen.inView, 'the menu in the window');
    assert.strictEqual(seen.down, 'Ignore it');
    assert.strictEqual(seen.wrapped, 'Copy the name', 'up wraps round');
    assert.deepStrictEqual(seen.escaped, { open: false, hash: true,
                                           focus: true });
    assert.deepStrictEqual(seen.m, seen.right, 'm: the same menu');
    assert.ok(seen.contextKey, 'the menu key opens it');

    const exact = '^' + seen.name + '$';
    assert.strictEqual(seen.ignore.value, exact);
    assert.match(seen.ignore.note, /^ignore keeps [\d,]+ of 2,000 stacks, /);
    assert.ok(!seen.ignore.left, 'ignored: its frames gone');
    assert.ok(!seen.ignore.open, 'an entry taken closes the menu');
    assert.strictEqual(seen.ignore.hash,
                       '#ignore=' + encodeURIComponent(exact));
    assert.strictEqual(seen.hide.value, exact);
    assert.match(seen.hide.note, /^hide takes 1 function out of [\d,]+ /);
    assert.ok(!seen.hide.left, 'hidden: its frames gone');
    assert.strictEqual(seen.focus.value, exact);
    assert.match(seen.focus.note, /^focus keeps [\d,]+ of 2,000 stacks, /);
    assert.deepStrictEqual(seen.copied, [seen.name, 'copied ' + seen.name]);
    assert.strictEqual(seen.end, 'Copy the name', 'End: the last entry');
    assert.deepStrictEqual(seen.selection, [
        seen.name, 'the name is selected in the panel: Ctrl+C copies it']);
    assert.ok(seen.root, 'no menu for the root');
});

test('a function\'s callers and callees: one graph, the function once',
     { skip }, async (t) => {
    const seen = await drive(serve({ stacks: 2000 }), '', `
    const seen = {};
    const shown = () => {
        const all = frames(), labels = all.filter((x) => x.kind === 'label');
        const [up, down] = labels;
        const middle = all.filter((x) => x.kind === 'frame' && up
                                         && x.y === up.y + 18);

        return {
            hash: location.hash, canvases: $('#flame').querySelectorAll(
                'canvas').length, callersBox: $('#callers') !== null,
            labels: labels.map((x) => [x.name, x.y]),
            middle: middle.map((x) => [x.name, x.w === $('#flame canvas')
                .getBoundingClientRect().width || x.w >= $('#flame')
                .clientWidth - 1, has(x, 'caller')]),
            all: all.filter((x) => x.name === 'all').length,
            callersAbove: all.filter((x) => has(x, 'caller'))
                .every((x) => x.y < up.y),
            calleesBelow: all.filter((x) => x.kind === 'frame'
                                            && !has(x, 'caller')
                                            && x.y !== up.y + 18)
                .every((x) => x.y > down.y),
            callers: all.filter((x) => has(x, 'caller')).length,
            callees: all.filter((x) => x.kind === 'frame'
                                       && !has(x, 'caller')).length - 1,
            direct: all.filter((x) => has(x, 'caller') && x.y === up.y - 18)
                .map((x) => x.name),
            top: all.filter((x) => x.y === 0).every((x) => has(x, 'caller')
                                                           || x.w < 4),
            head: $('#sandwich-head').textContent };
    };

    await tables();
    // a function two rows down, by its menu: main calls it
    const f = frames().filter((x) => x.kind === 'frame' && x.y === 36)
        .sort((a, b) => b.w - a.w)[0];
    at(f, 'contextmenu');
    $('#menu-items [data-act=sandwich]').click();
    await tables();
    seen.name = f.name;
    seen.one = shown();
    // the keys stay in the graph's half: up from the function stays
    $('#flame').focus();
    at(frames().find((x) => x.name === f.name && !has(x, 'caller')),
       'click');
    key($('#flame'), 'ArrowUp');
    seen.up = $('#d-name').textContent;
    key($('#flame'), 'ArrowDown');
    seen.down = $('#d-name').textContent;
    key($('#flame'), 'Escape');
    seen.escaped = $('#d-name').textContent;

    // a caller hovered: the panel reads its path outwards in
    const main = frames().find((x) => has(x, 'caller')
                                      && x.name === 'main');
    at(main, 'mousemove');
    seen.callerPanel = [$('#d-name').textContent, $('#d-path').textContent];
    // its menu: no zoom, for it is not in the graph's tree
    at(main, 'contextmenu');
    seen.callerMenu = menu().items;
    key(document.activeElement, 'Escape');
    // clicked: its own callers and callees
    at(main, 'click');
    await tables();
    seen.main = shown();
    return seen;`);

    t.diagnostic(JSON.stringify(seen));
    assert.strictEqual(seen.failed, undefined, seen.failed);

    const one = seen.one, name = seen.name;
    assert.strictEqual(one.hash, '#view=sandwich&fn=' + name);
    assert.strictEqual(one.canvases, 1, 'one graph, on one canvas');
    assert.ok(!one.callersBox, 'no second graph of the callers');
    assert.deepStrictEqual(one.labels.map((l) => l[0]),
                           ['\u25b2 callers of ' + name + ', outwards',
                            '\u25bc callees of ' + name]);
    assert.strictEqual(one.labels[1][1] - one.labels[0][1], 36,
                       'the labels on either side of the function');
    assert.deepStrictEqual(one.middle, [[name, true, false]],
                           'the function once, in the middle, all across');
    assert.strictEqual(one.all, 0, 'no "all" row in either half');
    assert.ok(one.callers > 0 && one.callees > 10,
              one.callers + ' callers, ' + one.callees + ' callees');
    assert.ok(one.callersAbove, 'its callers above it');
    assert.ok(one.calleesBelow, 'what it calls below it');
    assert.ok(one.direct.includes('main'), 'main calls it, right above');
    assert.ok(one.top, 'the outermost callers at the top');
    assert.match(one.head, new RegExp('^' + name + ' once in the middle'));

    assert.strictEqual(seen.up, name, 'up from the function: it stays');
    assert.notStrictEqual(seen.down, name, 'down: its widest callee');
    assert.strictEqual(seen.escaped, name, 'Escape: the function again');
    assert.deepStrictEqual(seen.callerPanel, ['main', 'main \u2192 ' + name]);
    assert.deepStrictEqual(seen.callerMenu, [
        'Focus on it', 'Ignore it', 'Hide it', 'Callers and callees',
        'Copy the name']);

    const m = seen.main;
    assert.strictEqual(m.hash, '#view=sandwich&fn=main');
    assert.deepStrictEqual(m.labels.map((l) => l[0]), [
        '\u25b2 callers of main: none, it is an outermost caller',
        '\u25bc callees of main']);
    assert.strictEqual(m.labels[0][1], 0, 'nothing above the label');
    assert.deepStrictEqual(m.middle, [['main', true, false]]);
    assert.strictEqual(m.callers, 0);
});

test('the top table: its first 100 rows, more on asking, none lost',
     { skip }, async () => {
    const seen = await drive(serve({ stacks: 2000 }), '', `
    const rows = () => [...$('#top').tBodies[0].rows];
    const seen = {};

    await tables();
    seen.first = rows().length;
    seen.text = $('#top-more-text').textContent;
    seen.button = $('#top-more-rows').hidden ? null
                                             : $('#top-more-rows').textContent;
    seen.widest = rows()[0].cells[0].textContent;
    $('#top-more-rows').click();
    seen.more = rows().length;
    seen.after = $('#top-more-rows').hidden;
    seen.rest = $('#top-more-text').textContent;
    seen.same = rows()[0].cells[0].textContent === seen.widest;
    return seen;
    `);

    assert.strictEqual(seen.failed, undefined);
    assert.strictEqual(seen.first, 100);
    const m = seen.text.match(/^(\d+) more functions, each smaller: search/);
    assert.ok(m, seen.text);
    assert.strictEqual(seen.button, Number(m[1]) > 500 ? 'show 500 more'
                                                        : 'show them');
    // all of them or 500 more: none left out that the count said
    assert.strictEqual(seen.more, Math.min(100 + Number(m[1]), 600));
    assert.strictEqual(seen.after, seen.more === 100 + Number(m[1]));
    assert.ok(seen.same, 'the same order, the widest first');
});
