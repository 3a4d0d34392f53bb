/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */

/*
 * MallocPprof: a profile.proto file (what `go tool pprof`, this module's
 * pprof/heap.pb.gz and most profilers write) read in the page, into the
 * form of pprof/heap.json that MallocFlame draws.  Nothing is sent
 * anywhere: the bytes come from a file the user opened, the gzip is the
 * browser's own (DecompressionStream), the protobuf is read here.
 *
 * The fields read, by their numbers in google/pprof's proto/profile.proto:
 * Profile {sample_type 1, sample 2, mapping 3, location 4, function 5,
 * string_table 6, time_nanos 9, duration_nanos 10, period_type 11,
 * period 12, comment 13, default_sample_type 14}, ValueType {type 1,
 * unit 2}, Sample {location_id 1, value 2}, Mapping {id 1, memory_start
 * 2, filename 5}, Location {id 1, mapping_id 2, address 3, line 4}, Line
 * {function_id 1}, Function {id 1, name 2, system_name 3}.  The rest
 * (labels, line numbers, build ids) is skipped.
 *
 * A plain script, as flame.js: a global in the browser, require() in node.
 */

(function (global) {
    'use strict';

    const NOT = 'not a pprof profile';

    /*
     * A reader of protobuf's wire format over a Uint8Array.  A varint is
     * read in two 32-bit halves: int64 values and addresses pass 2^53,
     * and a negative int64 (a diff profile's) comes as ten bytes.
     */
    function reader(buf, pos = 0, end = buf.length) {
        return { buf, pos, end, lo: 0, hi: 0 };
    }

    function fail(r, what) {
        throw new Error(NOT + ': ' + what + ' at byte ' + r.pos);
    }

    /* the varint at r.pos as a Number; r.hi keeps its high 32 bits */
    function varint(r) {
        const buf = r.buf;
        let lo = 0, hi = 0, shift = 0, b;

        do {
            if (r.pos >= r.end) {
                fail(r, 'a number cut short');
            }
            b = buf[r.pos++];
            if (shift < 28) {
                lo |= (b & 0x7f) << shift;
            } else if (shift === 28) {
                lo |= (b & 0x0f) << 28;
                hi |= (b & 0x7f) >>> 4;
            } else if (shift < 64) {
                hi |= (b & 0x7f) << (shift - 32);
            } else {
                fail(r, 'a number of more than ten bytes');
            }
            shift += 7;
        } while (b & 0x80);
        r.lo = lo >>> 0;
        r.hi = hi >>> 0;
        return r.hi * 4294967296 + r.lo;
    }

    /* an int64: the same bits, negative past 2^63 */
    function int64(r) {
        const u = varint(r);

        return r.hi >= 0x80000000 ? (r.hi - 4294967296) * 4294967296 + r.lo
                                  : u;
    }

    /* an address as pprof prints it: 0x and lowercase hex, exactly */
    function hex(r) {
        varint(r);
        return r.hi === 0 ? r.lo.toString(16)
            : r.hi.toString(16) + r.lo.toString(16).padStart(8, '0');
    }

    function skip(r, wire) {
        if (wire === 0) {
            varint(r);
        } else if (wire === 1) {
            r.pos += 8;
        } else if (wire === 2) {
            const n = varint(r);    /* before r.pos is read */

            r.pos += n;
        } else if (wire === 5) {
            r.pos += 4;
        } else {
            fail(r, 'a field of wire type ' + wire);
        }
        if (r.pos > r.end) {
            fail(r, 'a field cut short');
        }
    }

    /* the sub-message of a length-delimited field: a reader of it */
    function sub(r) {
        const n = varint(r), s = reader(r.buf, r.pos, r.pos + n);

        if (s.end > r.end) {
            fail(r, 'a message cut short');
        }
        r.pos = s.end;
        return s;
    }

    /*
     * Each field of the message r as fn(field, wire): fn reads its value
     * or returns false to have it skipped.
     */
    function fields(r, fn) {
        while (r.pos < r.end) {
            const tag = varint(r), field = Math.floor(tag / 8), wire = tag & 7;

            if (field === 0) {
                fail(r, 'field 0');
            }
            if (fn(field, wire) === false) {
                skip(r, wire);
            }
        }
    }

    /* a repeated number, packed (wire 2) or one by one (wire 0) */
    function numbers(r, wire, out, read = varint) {
        if (wire === 0) {
            out.push(read(r));
            return true;
        }
        if (wire !== 2) {
            return false;
        }

        const s = sub(r);

        while (s.pos < s.end) {
            out.push(read(s));
        }
        return true;
    }

    /*
     * A Sample {location_id 1, value 2}: read in place, with no reader
     * made for it or its packed fields (50k stacks have as many samples).
     */
    function sample(r) {
        const n = varint(r), end = r.pos + n, outer = r.end;
        const loc = [], value = [];

        if (end > outer) {
            fail(r, 'a message cut short');
        }
        r.end = end;
        while (r.pos < end) {
            const tag = varint(r), field = Math.floor(tag / 8), wire = tag & 7;
            const out = field === 1 ? loc : field === 2 ? value : null;
            const read = field === 1 ? varint : int64;

            if (field === 0) {
                fail(r, 'field 0');
            }
            if (out === null || (wire !== 0 && wire !== 2)) {
                skip(r, wire);
            } else if (wire === 0) {
                out.push(read(r));
            } else {
                const stop = varint(r) + r.pos;

                if (stop > end) {
                    fail(r, 'a message cut short');
                }
                r.end = stop;
                while (r.pos < stop) {
                    out.push(read(r));
                }
                r.end = end;
            }
        }
        r.end = outer;
        return { loc, value };
    }

    function valueType(r) {
        const t = { type: 0, unit: 0 };

        fields(r, (f, w) => {
            if (w !== 0 || (f !== 1 && f !== 2)) {
                return false;
            }
            t[f === 1 ? 'type' : 'unit'] = varint(r);
            return true;
        });
        return t;
    }

    /*
     * The messages of a profile, as they are: ids and indexes into the
     * string table, not yet joined.
     */
    function decode(bytes) {
        const r = reader(bytes), utf8 = new TextDecoder('utf-8');
        const p = { sampleType: [], samples: [], mappings: [], locations: [],
                    functions: [], strings: [], period: 0, periodType: null,
                    timeNanos: 0, durationNanos: 0, comments: [],
                    defaultSampleType: 0 };

        fields(r, (field, wire) => {
            if (wire !== 2 && [1, 2, 3, 4, 5, 6, 11].includes(field)) {
                fail(r, 'field ' + field + ' is no message');
            }
            switch (field) {
            case 1:
                p.sampleType.push(valueType(sub(r)));
                return true;
            case 2:
                p.samples.push(sample(r));
                return true;
            case 3: {
                const s = sub(r), m = { id: 0, start: '0', file: 0 };

                fields(s, (f, w) => {
                    if (w !== 0 || ![1, 2, 5].includes(f)) {
                        return false;
                    }
                    if (f === 2) {
                        m.start = hex(s);
                    } else {
                        m[f === 1 ? 'id' : 'file'] = varint(s);
                    }
                    return true;
                });
                p.mappings.push(m);
                return true;
            }
            case 4: {
                const s = sub(r), l = { id: 0, mapping: 0, address: '0',
                                        lines: [] };

                fields(s, (f, w) => {
                    if (f === 4 && w === 2) {
                        const line = sub(s);
                        let fn = 0;

                        fields(line, (g, v) => {
                            if (g !== 1 || v !== 0) {
                                return false;
                            }
                            fn = varint(line);
                            return true;
                        });
                        l.lines.push(fn);
                        return true;
                    }
                    if (w !== 0 || ![1, 2, 3].includes(f)) {
                        return false;
                    }
                    if (f === 3) {
                        l.address = hex(s);
                    } else {
                        l[f === 1 ? 'id' : 'mapping'] = varint(s);
                    }
                    return true;
                });
                p.locations.push(l);
                return true;
            }
            case 5: {
                const s = sub(r), fn = { id: 0, name: 0, system: 0 };

                fields(s, (f, w) => {
                    if (w !== 0 || ![1, 2, 3].includes(f)) {
                        return false;
                    }
                    fn[f === 1 ? 'id' : f === 2 ? 'name' : 'system'] = varint(s);
                    return true;
                });
                p.functions.push(fn);
                return true;
            }
            case 6: {
                const n = varint(r);

                if (r.pos + n > r.end) {
                    fail(r, 'a string cut short');
                }
                p.strings.push(utf8.decode(r.buf.subarray(r.pos, r.pos + n)));
                r.pos += n;
                return true;
            }
            case 9:
            case 10:
            case 12:
            case 14:
                if (wire !== 0) {
                    return false;
                }
                p[{ 9: 'timeNanos', 10: 'durationNanos', 12: 'period',
                    14: 'defaultSampleType' }[field]] = int64(r);
                return true;
            case 11:
                p.periodType = valueType(sub(r));
                return true;
            case 13:
                return numbers(r, wire, p.comments);
            default:
                return false;
            }
        });
        if (p.strings.length === 0 || p.strings[0] !== '') {
            throw new Error(NOT + ': its string table does not start with ""');
        }
        if (p.sampleType.length === 0) {
            throw new Error(NOT + ': it has no sample types');
        }
        return p;
    }

    /* "/usr/lib/nginx/modules/ngx_http_lua_module.so" -> its kind */
    function kindOf(path, first) {
        const base = path.replace(/^.*\//, '');

        if (/^ngx_\w+_module\.so$/.test(base)) {
            return 'module';
        }
        if (first && /^nginx\b/.test(base)) {
            return 'binary';
        }
        return first && !/\.so(\.|$)/.test(base) ? 'program' : 'library';
    }

    /*
     * One profile's stacks as lists of names: {names, raw, files,
     * name_files, types, units, stacks, values, ...}: stack k's frames
     * (innermost first, indexes of names) are frames[at[k]] to
     * frames[at[k + 1] - 1], its values values[k * types.length] on.
     * A location's lines are its inlined functions, innermost first, as
     * pprof lists them; a location with none is its address, as pprof
     * shows it.  into, if given, is another's result whose names and
     * files are shared.
     */
    function flat(p, into) {
        const str = (i) => (i >= 0 && i < p.strings.length ? p.strings[i] : '');
        const out = into || { names: [], raw: [], files: [], name_files: [],
                              nameAt: new Map(), fileAt: new Map() };
        const fnById = new Map(p.functions.map((f) => [f.id, f]));
        const mapById = new Map(), locById = new Map();
        const nameOf = (name, raw, file) => {
            let i = out.nameAt.get(name);

            if (i === undefined) {
                i = out.names.length;
                out.nameAt.set(name, i);
                out.names.push(name);
                out.raw.push(raw !== '' && raw !== name ? raw : null);
                out.name_files.push(file);
            } else if (out.name_files[i] === -1) {
                out.name_files[i] = file;
            }
            return i;
        };

        p.mappings.forEach((m, k) => {
            const path = str(m.file);
            let i = out.fileAt.get(path);

            if (path === '') {
                return;
            }
            if (i === undefined) {
                i = out.files.length;
                out.fileAt.set(path, i);
                out.files.push({ path, kind: kindOf(path, k === 0) });
            }
            mapById.set(m.id, i);
        });
        for (const l of p.locations) {
            const file = mapById.has(l.mapping) ? mapById.get(l.mapping) : -1;
            const names = l.lines.map((id) => {
                const f = fnById.get(id);

                return f === undefined ? '0x' + l.address
                    : nameOf(str(f.name) || str(f.system) || '0x' + l.address,
                             str(f.system), file);
            });

            locById.set(l.id, names.length > 0 ? names.map((n) => (
                typeof n === 'number' ? n : nameOf(n, '', file)))
                : [nameOf('0x' + l.address, '', file)]);
        }

        const width = p.sampleType.length, ns = p.samples.length;
        let most = 1;

        locById.forEach((names) => { most = Math.max(most, names.length); });
        const at = new Int32Array(ns + 1), values = new Float64Array(ns * width);
        let frames = new Int32Array(1024), nf = 0;

        p.samples.forEach((s, k) => {
            /* room for every frame that its locations can give */
            while (nf + s.loc.length * most + 1 > frames.length) {
                const more = new Int32Array(2 * frames.length);

                more.set(frames);
                frames = more;
            }
            for (const id of s.loc) {
                const names = locById.get(id);

                if (names === undefined) {
                    frames[nf++] = nameOf('(unknown location)', '', -1);
                } else {
                    for (let i = 0; i < names.length; i++) {
                        frames[nf++] = names[i];
                    }
                }
            }
            if (nf === at[k]) {
                frames[nf++] = nameOf('(no stack)', '', -1);
            }
            at[k + 1] = nf;
            for (let j = 0; j < width && j < s.value.length; j++) {
                values[k * width + j] = s.value[j];
            }
        });
        return { shared: out, types: p.sampleType.map((t) => str(t.type)),
                 units: p.sampleType.map((t) => str(t.unit)), frames, at,
                 values,
                 period: p.period,
                 period_type: p.periodType ? { type: str(p.periodType.type),
                                               unit: str(p.periodType.unit) }
                                           : null,
                 default_type: str(p.defaultSampleType),
                 duration: p.durationNanos / 1e9,
                 time: p.timeNanos ? new Date(p.timeNanos / 1e6) : null,
                 comments: p.comments.map(str) };
    }

    /*
     * The child of (parent, name) in a trie, or fresh (the next node's
     * number) made so: open addressing on typed arrays, for a Map of
     * keys past 2^31 is slow at 50k stacks.
     */
    function table() {
        let keys = new Int32Array(2048 * 2), ids = new Int32Array(2048).fill(-1);
        let mask = 2047, n = 0;
        const at = (q, f) => {
            let h = (Math.imul(q + 1, 0x9e3779b1) ^ Math.imul(f, 0x85ebca77))
                    & mask;

            while (ids[h] !== -1 && (keys[2 * h] !== q || keys[2 * h + 1] !== f)) {
                h = (h + 1) & mask;
            }
            return h;
        };
        const put = (q, f, id) => {
            const h = at(q, f);

            keys[2 * h] = q;
            keys[2 * h + 1] = f;
            ids[h] = id;
        };

        return (q, f, fresh) => {
            const h = at(q, f);

            if (ids[h] !== -1) {
                return ids[h];
            }
            if (2 * ++n > mask) {
                const k = keys, d = ids;

                keys = new Int32Array(4 * (mask + 1));
                ids = new Int32Array(2 * (mask + 1)).fill(-1);
                mask = 2 * mask + 1;
                d.forEach((id, j) => {
                    if (id !== -1) {
                        put(k[2 * j], k[2 * j + 1], id);
                    }
                });
            }
            put(q, f, fresh);
            return fresh;
        };
    }

    /*
     * decode()'s profile, and perhaps a base to compare it with, in the
     * form of pprof/heap.json: the stacks merged into a tree of nodes
     * (parent first), each stack its last node, values by stack and, with
     * a base, base_values (the base's values of the same types, 0 where
     * a side has no such stack or type).  No noise test: every change
     * counts ("significant" absent).
     */
    function toHeap(p, base) {
        const now = flat(p), was = base ? flat(base, now.shared) : null;
        const sh = now.shared, nodes = [], ends = new Map(), child = table();
        const stacks = [], values = [], baseValues = [];
        const baseIndex = was ? now.types.map((t, k) => {
            const j = was.types.indexOf(t);

            return j !== -1 && was.units[j] === now.units[k] ? j : -1;
        }) : null;
        const width = now.types.length;
        /* stack k of one side (flat()'s), merged into the tree */
        const add = (side, k) => {
            const { frames, at } = side;
            let node = -1;

            for (let f = at[k + 1] - 1; f >= at[k]; f--) {
                const next = child(node, frames[f], nodes.length / 2);

                if (next === nodes.length / 2) {
                    nodes.push(frames[f], node === -1 ? 0 : next - node);
                }
                node = next;
            }

            let s = ends.get(node);

            if (s === undefined) {
                s = stacks.length;
                ends.set(node, s);
                stacks.push(node);
                values.push(new Array(width).fill(0));
                if (was) {
                    baseValues.push(new Array(width).fill(0));
                }
            }
            if (side === now) {
                for (let j = 0; j < width; j++) {
                    values[s][j] += now.values[k * width + j];
                }
            } else {
                baseIndex.forEach((j, i) => {
                    baseValues[s][i] += j === -1 ? 0
                        : was.values[k * was.types.length + j];
                });
            }
        };

        for (let k = 0; k + 1 < now.at.length; k++) {
            add(now, k);
        }
        for (let k = 0; was && k + 1 < was.at.length; k++) {
            add(was, k);
        }

        const out = { period: now.period, period_type: now.period_type,
                      seconds: 0, types: now.types, units: now.units,
                      default_type: now.default_type, names: sh.names,
                      raw: sh.raw, files: sh.files, name_files: sh.name_files,
                      nodes, stacks, values, duration: now.duration,
                      time: now.time, comments: now.comments };

        if (was) {
            out.base_values = baseValues;
            out.base_time = was.time;
        }
        return out;
    }

    /* gzip's first two bytes: a .pb.gz; else a plain .pb */
    function gzipped(bytes) {
        return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
    }

    /*
     * The bytes of a File, Blob or ArrayBuffer, gunzipped if they are
     * gzip, by the browser's own DecompressionStream.
     */
    async function bytesOf(file) {
        const blob = file instanceof Blob ? file : new Blob([file]);
        const head = new Uint8Array(await blob.slice(0, 2).arrayBuffer());

        if (!gzipped(head)) {
            return new Uint8Array(await blob.arrayBuffer());
        }

        const stream = blob.stream().pipeThrough(new DecompressionStream('gzip'));

        try {
            return new Uint8Array(await new Response(stream).arrayBuffer());
        } catch (e) {
            throw new Error(NOT + ': its gzip is broken (' + e.message + ')');
        }
    }

    /* a File (or Blob) read into decode()'s form */
    async function read(file) {
        return decode(await bytesOf(file));
    }

    const MallocPprof = { decode, toHeap, read, bytesOf, gzipped };

    if (typeof module !== 'undefined' && module.exports) {
        module.exports = MallocPprof;
    } else {
        global.MallocPprof = MallocPprof;
    }
}(this));
