// Copyright (C) 2026 ngx_http_malloc_module maintainers
// BSD 2-Clause licence: see LICENSE.

// Heap profiles of another program than nginx, for the viewer's file
// picker: a small Go program, written and run in a temporary folder,
// writes two heap profiles of its own with runtime/pprof (every
// allocation sampled, so the figures are exact), the second after
// 32 MiB more were held and a second function allocated; each is then
// passed through `go tool pprof -proto`, as a user would save one.
//
//     const { goProfiles } = require('./goprof.js');
//     const p = goProfiles();   // {dir, before, after} or {skip: why}

'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const PROGRAM = `package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var held [][]byte

//go:noinline
func holdMemory(n int) {
	for i := 0; i < n; i++ {
		held = append(held, make([]byte, 1<<20))
	}
}

var other [][]byte

//go:noinline
func otherSite(n int) {
	for i := 0; i < n; i++ {
		other = append(other, make([]byte, 64<<10))
	}
}

func write(name string) {
	runtime.GC()
	f, err := os.Create(name)
	if err != nil {
		panic(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		panic(err)
	}
	f.Close()
}

func main() {
	runtime.MemProfileRate = 1
	held = make([][]byte, 0, 64)
	other = make([][]byte, 0, 16)
	holdMemory(32)
	write(os.Args[1])
	holdMemory(32)
	otherSite(16)
	write(os.Args[2])
}
`;

function goProfiles() {
    let go;

    try {
        go = execFileSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' })
            .trim();
    } catch (e) {
        go = '';
    }
    if (go === '') {
        return { skip: 'go not found: install Debian\'s golang-go' };
    }

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'malloc-goprof-'));
    const env = { ...process.env, GOFLAGS: '', GO111MODULE: 'off',
                  GOCACHE: process.env.GOCACHE
                           || path.join(os.tmpdir(), 'malloc-ui-gocache') };
    const run = (args) => execFileSync(go, args, { cwd: dir, env,
                                                   timeout: 300000,
                                                   stdio: 'pipe' });

    fs.writeFileSync(path.join(dir, 'main.go'), PROGRAM);
    run(['build', '-o', 'holder', 'main.go']);
    execFileSync(path.join(dir, 'holder'), ['raw-before', 'raw-after'],
                 { cwd: dir, timeout: 60000 });
    for (const name of ['before', 'after']) {
        fs.writeFileSync(path.join(dir, name + '.pb.gz'),
                         run(['tool', 'pprof', '-proto', 'holder',
                              'raw-' + name]));
    }
    return { dir, before: path.join(dir, 'before.pb.gz'),
             after: path.join(dir, 'after.pb.gz') };
}

module.exports = { goProfiles };
