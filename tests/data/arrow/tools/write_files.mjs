// Writes the Arrow IPC files of tests/data/arrow with Apache Arrow's JavaScript implementation,
// and the rows it decodes from them as expected/<file>.json (run once; the outputs are checked in):
//   npm install            (package.json pins apache-arrow, lz4js and @bokuweb/zstd-wasm)
//   node write_files.mjs write OUT_DIR       the test inputs and their expected rows
//   node write_files.mjs read-back OUT_DIR   expected rows of the files tzrec-cpp's writer wrote
//                                            (tzrec_writer_*.arrows, see src/arrow/js_files_test.cc)
//
// Expected JSON: {"file", "kind": "stream" | "message", "schema": [{"name", "type", "nullable"}],
// "has_end_marker", "batches": [[row, ...], ...]} (messages: "schema_from", the stream whose
// schema decodes them, and one batch). Rows are objects by column name. Values: int64 and uint64
// as decimal strings, other integers and floats as numbers (NaN / Infinity / -Infinity as those
// strings), strings and binary (ASCII here) as strings, lists as arrays, maps as arrays of
// [key, value] pairs in order, nulls as null. Type names are tzrec-cpp's (src/arrow/ipc_schema.h),
// derived here from the JavaScript types.
import fs from 'node:fs';
import path from 'node:path';
import * as A from 'apache-arrow';
import lz4 from 'lz4js';
import zstd from '@bokuweb/zstd-wasm';

await zstd.init();
A.compressionRegistry.set(A.CompressionType.LZ4_FRAME, {
  encode: (b) => Uint8Array.from(lz4.compress(b)),
  decode: (b) => Uint8Array.from(lz4.decompress(b)),
});
A.compressionRegistry.set(A.CompressionType.ZSTD, {
  encode: (b) => zstd.compress(b, 3),
  decode: (b) => zstd.decompress(b),
});

const [mode, outDir] = process.argv.slice(2);
if (!['write', 'read-back'].includes(mode) || !outDir) {
  console.error('usage: node write_files.mjs write|read-back OUT_DIR');
  process.exit(2);
}
fs.mkdirSync(path.join(outDir, 'expected'), { recursive: true });

// ---- type names and values as tzrec-cpp prints them -------------------------------------------

const T = A.Type;
function typeName(t) {
  switch (t.typeId) {
    case T.Bool: return 'bool';
    case T.Int: return `${t.isSigned ? '' : 'u'}int${t.bitWidth}`;
    case T.Float: return ['float16', 'float', 'double'][t.precision];
    case T.Utf8: return 'string';
    case T.LargeUtf8: return 'large_string';
    case T.Binary: return 'binary';
    case T.LargeBinary: return 'large_binary';
    case T.List: return `list<${typeName(t.children[0].type)}>`;
    case T.LargeList: return `large_list<${typeName(t.children[0].type)}>`;
    case T.Map: {
      const [k, v] = t.children[0].type.children;
      return `map<${typeName(k.type)}, ${typeName(v.type)}>`;
    }
    case T.Struct: return `struct<${t.children.map((c) => `${c.name}: ${typeName(c.type)}`).join(', ')}>`;
    case T.Dictionary: return `dictionary<values=${typeName(t.dictionary)}, indices=${typeName(t.indices)}>`;
    case T.Timestamp: {
      const unit = ['s', 'ms', 'us', 'ns'][t.unit];
      return t.timezone ? `timestamp[${unit}, tz=${t.timezone}]` : `timestamp[${unit}]`;
    }
    case T.Date: return t.unit === A.DateUnit.DAY ? 'date32[day]' : 'date64[ms]';
    case T.Utf8View: return 'string_view';
    case T.FixedSizeList: return `fixed_size_list<${typeName(t.children[0].type)}>[${t.listSize}]`;
    case T.Decimal: return `decimal${t.bitWidth}(${t.precision}, ${t.scale})`;
    default: throw new Error(`no name for ${t}`);
  }
}

function number(x) {
  return Number.isFinite(x) ? x : String(x);
}

function toJson(v, t) {
  if (v === null || v === undefined) return null;
  switch (t.typeId) {
    case T.Bool: return Boolean(v);
    case T.Int: return typeof v === 'bigint' ? v.toString() : v;
    case T.Float: return number(v);
    case T.Utf8:
    case T.LargeUtf8: return v;
    case T.Binary:
    case T.LargeBinary: return new TextDecoder().decode(v);
    case T.List:
    case T.LargeList: return [...v].map((e) => toJson(e, t.children[0].type));
    case T.Map: {
      const [k, val] = t.children[0].type.children;
      return [...v].map(([key, value]) => [toJson(key, k.type), toJson(value, val.type)]);
    }
    default: throw new Error(`no JSON for ${t}`);
  }
}

function batchRows(batch, columns = null) {
  const rows = [];
  for (let r = 0; r < batch.numRows; ++r) {
    const row = {};
    for (const [i, f] of batch.schema.fields.entries()) {
      if (!columns || columns.includes(f.name)) row[f.name] = toJson(batch.getChildAt(i).get(r), f.type);
    }
    rows.push(row);
  }
  return rows;
}

function schemaJson(schema) {
  return schema.fields.map((f) => ({ name: f.name, type: typeName(f.type), nullable: f.nullable }));
}

// Decodes a stream with arrow's reader and writes its expected rows.
function expectStream(file, bytes, columns = null, hasEndMarker = true) {
  const reader = A.RecordBatchReader.from(bytes).open();
  const schema = reader.schema;
  // (arrow's reader yields one empty batch for a stream without record batches)
  const batches = [...reader].slice(0, countRecordBatches(bytes));
  const out = {
    file,
    kind: 'stream',
    schema: schemaJson(schema),
    has_end_marker: hasEndMarker,
    batches: batches.map((b) => batchRows(b, columns)),
  };
  if (columns) out.columns = columns;
  fs.writeFileSync(path.join(outDir, 'expected', `${file}.json`), dump(out));
}

// JSON with one schema field and one row per line.
function dump(out) {
  const lines = ['{'];
  for (const [k, v] of Object.entries(out)) {
    if (k === 'schema' || k === 'batches') continue;
    lines.push(` ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  }
  lines.push(' "schema": [');
  out.schema.forEach((f, i) => lines.push(`  ${JSON.stringify(f)}${i + 1 < out.schema.length ? ',' : ''}`));
  lines.push(' ],', ' "batches": [');
  out.batches.forEach((b, i) => {
    lines.push('  [');
    b.forEach((r, j) => lines.push(`   ${JSON.stringify(r)}${j + 1 < b.length ? ',' : ''}`));
    lines.push(`  ]${i + 1 < out.batches.length ? ',' : ''}`);
  });
  lines.push(' ]', '}');
  return lines.join('\n') + '\n';
}

function writeFile(file, bytes) {
  fs.writeFileSync(path.join(outDir, file), bytes);
}

if (mode === 'read-back') {
  for (const file of fs.readdirSync(outDir).filter((f) => f.startsWith('tzrec_writer_') && f.endsWith('.arrows'))) {
    expectStream(file, new Uint8Array(fs.readFileSync(path.join(outDir, file))));
  }
  process.exit(0);
}

// ---- test data --------------------------------------------------------------------------------

const f = (name, type, nullable = true) => new A.Field(name, type, nullable);
const list = (t, nullable = true) => new A.List(f('item', t, nullable));
const map = (k, v) => new A.Map_(f('entries', new A.Struct([f('key', k, false), f('value', v)]), false));

// Rows 0..7: the first stream batch takes rows 0..4, the second 5..7.
const ROWS = 8;
const pick = (vals) => (r) => vals[r % vals.length];
const columns = [
  ['bool', new A.Bool(), pick([true, false, null, true, false, true, null, false])],
  ['i8', new A.Int8(), pick([-128, 127, null, 0, -1, 5, 6, null])],
  ['i16', new A.Int16(), pick([-32768, 32767, null, 0, -1, 300, 7, 8])],
  ['i32', new A.Int32(), pick([-2147483648, 2147483647, null, 0, -1, 42, null, 9])],
  ['i64', new A.Int64(), pick([-9223372036854775808n, 9223372036854775807n, null, 0n, -1n, 1n << 40n, 7n, null])],
  ['u8', new A.Uint8(), pick([0, 255, null, 1, 128, 2, 3, 4])],
  ['u16', new A.Uint16(), pick([0, 65535, null, 1, 32768, 2, 3, 4])],
  ['u32', new A.Uint32(), pick([0, 4294967295, null, 1, 2147483648, 2, 3, 4])],
  ['u64', new A.Uint64(), pick([0n, 18446744073709551615n, null, 1n, 9223372036854775808n, 2n, 3n, 4n])],
  ['f16', new A.Float16(), pick([0.5, -2, null, 65504, 6.103515625e-05, 5.960464477539063e-08, -0, Infinity])],
  ['f32', new A.Float32(), pick([0.1, -3.5, null, 3.4028234663852886e38, 1e-45, NaN, -Infinity, 0])],
  ['f64', new A.Float64(), pick([0.1, -3.5, null, 1.7976931348623157e308, 5e-324, Infinity, NaN, -0.25])],
  ['str', new A.Utf8(), pick(['a', '', null, 'héllo', '日本語', 'x'.repeat(20), 'tab\tquote"', 'z'])],
  ['lstr', new A.LargeUtf8(), pick(['large', null, '', 'ü', 'b', 'c', 'd', null])],
  ['bin', new A.Binary(), pick(['bytes', '', null, 'xyz', 'a', 'b', 'c', 'd'].map((s) => s === null ? null : new TextEncoder().encode(s)))],
  ['lbin', new A.LargeBinary(), pick([null, 'LB', '', 'q', 'r', 's', 't', 'u'].map((s) => s === null ? null : new TextEncoder().encode(s)))],
  ['list_i32', list(new A.Int32()), pick([[1, 2, 3], [], null, [null, 4], [5], [-1, null, -3], [], [7]])],
  ['list_i64', list(new A.Int64()), pick([[1n, -2n], null, [], [9223372036854775807n], [null], [3n, 4n, 5n], null, [6n]])],
  ['list_f32', list(new A.Float32()), pick([[0.5, 1.25], [], [null], null, [2.5], [3, 4], [-1], []])],
  ['list_f64', list(new A.Float64()), pick([[0.1], [0.2, null, 0.3], null, [], [1e100], [-2], [3.5, 4.5], null])],
  ['list_str', list(new A.Utf8()), pick([['a', 'b'], [''], null, [], [null, 'c'], ['日'], ['d', 'e', 'f'], ['']])],
  ['list_bool', list(new A.Bool()), pick([[true, false], [], null, [null], [true], [false, false], [true], []])],
  ['ll_i32', list(list(new A.Int32())), pick([[[1, 2], [3]], [], null, [[], null, [4]], [[null]], [[5, 6, 7]], [null], [[8], []]])],
  ['ll_i64', list(list(new A.Int64())), pick([[[1n], [2n, 3n]], null, [[]], [[4n, null]], [], [[5n]], [null, [6n]], [[7n]]])],
  ['ll_f32', list(list(new A.Float32())), pick([[[0.5]], [[1.5, null], []], null, [], [[2]], [[3], [4]], [null], [[]]])],
  ['ll_f64', list(list(new A.Float64())), pick([[[0.25, 0.5]], [], [[null]], null, [[1]], [[2], [3, 4]], [[]], [null]])],
  ['ll_str', list(list(new A.Utf8())), pick([[['a'], ['b', 'c']], [[''], []], null, [[null, 'd']], [], [['e']], [null], [['f', 'g']]])],
  ['large_list_i64', new A.LargeList(f('item', new A.Int64())), pick([[1n, 2n], [], null, [null, 3n], [4n], [5n, 6n], [], [7n]])],
  ['map_str_i32', map(new A.Utf8(), new A.Int32()), pick([new Map([['a', 1], ['b', null]]), new Map(), null, new Map([['', 0]]), new Map([['c', -3]]), new Map([['d', 4], ['e', 5]]), null, new Map()])],
  ['map_str_i64', map(new A.Utf8(), new A.Int64()), pick([new Map([['k', 1n]]), null, new Map(), new Map([['x', null], ['y', -9223372036854775808n]]), new Map([['z', 2n]]), new Map(), new Map([['w', 3n]]), null])],
  ['map_str_f32', map(new A.Utf8(), new A.Float32()), pick([new Map([['w', 0.5]]), new Map([['a', null], ['b', 1.5]]), null, new Map(), new Map([['c', 2]]), new Map([['d', 3]]), new Map(), new Map([['e', -4]])])],
  ['map_str_f64', map(new A.Utf8(), new A.Float64()), pick([null, new Map([['p', 0.1]]), new Map(), new Map([['q', null]]), new Map([['r', 1e10]]), new Map([['s', -1]]), new Map([['t', 2], ['u', 3]]), new Map()])],
  ['map_str_str', map(new A.Utf8(), new A.Utf8()), pick([new Map([['k', 'v'], ['k2', '']]), null, new Map(), new Map([['n', null]]), new Map([['日', '本']]), new Map([['a', 'b']]), null, new Map([['c', 'd']])])],
  ['map_i64_i32', map(new A.Int64(), new A.Int32()), pick([new Map([[1n, 10], [-2n, null]]), new Map(), null, new Map([[9223372036854775807n, 1]]), new Map([[3n, 3]]), new Map([[4n, 4], [5n, 5]]), new Map(), null])],
  ['map_i64_str', map(new A.Int64(), new A.Utf8()), pick([new Map([[7n, 'seven']]), null, new Map([[8n, '']]), new Map(), new Map([[9n, null]]), new Map([[10n, 'ten']]), new Map(), new Map([[11n, 'x']])])],
  ['map_i32_f64', map(new A.Int32(), new A.Float64()), pick([new Map([[1, 0.5]]), new Map([[2, null], [3, 1.5]]), null, new Map(), new Map([[4, 2]]), null, new Map([[5, -1]]), new Map()])],
  ['map_i32_i64', map(new A.Int32(), new A.Int64()), pick([null, new Map([[1, 1n]]), new Map(), new Map([[2, null]]), new Map([[3, 3n], [4, 4n]]), new Map([[5, 5n]]), new Map(), new Map([[6, -6n]])])],
];
// Fields declared non-nullable (no nulls in their data).
const nonNullable = [
  ['nn_i64', new A.Int64(), (r) => BigInt(r * 1000), false],
  ['nn_list_str', new A.List(f('item', new A.Utf8(), false)), (r) => Array.from({ length: r % 3 }, (_, i) => `s${r}_${i}`), false],
];

function makeBatch(cols, from, to) {
  const fields = [];
  const data = [];
  for (const [name, type, value, nullable = true] of cols) {
    const values = [];
    for (let r = from; r < to; ++r) values.push(value(r));
    const v = A.vectorFromArray(values, type);
    if (v.data.length !== 1) throw new Error(`${name}: ${v.data.length} chunks`);
    fields.push(f(name, type, nullable));
    data.push(v.data[0]);
  }
  const schema = new A.Schema(fields);
  const struct = A.makeData({ type: new A.Struct(fields), length: to - from, nullCount: 0, children: data });
  return new A.RecordBatch(schema, struct);
}

function stream(batches, options = {}) {
  const w = new A.RecordBatchStreamWriter(options);
  for (const b of batches) w.write(b);
  w.finish();
  const bytes = w.toUint8Array(true);
  if (options.compressionType != null) fixLengthPrefixes(bytes);
  return bytes;
}

// apache-arrow 21.2.0 writes the compressed length where the format wants the uncompressed length
// in the 8-byte prefix of each compressed body buffer (fixed upstream after that release by
// apache/arrow-js pull request 470; pyarrow refuses such streams, arrow's JavaScript reader does
// not look at the prefix). Rewrites each prefix to the length its frame decompresses to, as a
// fixed writer would.
function fixLengthPrefixes(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  forEachMessage(bytes, (message, bodyStart) => {
    const header = message.isRecordBatch() ? message.header() : message.isDictionaryBatch() ? message.header().data : null;
    if (header && header.compression) {
      const codec = A.compressionRegistry.get(header.compression.type);
      for (const region of header.buffers) {
        const at = bodyStart + region.offset;
        if (region.length < 8 || dv.getBigInt64(at, true) === -1n) continue;
        const raw = codec.decode(bytes.subarray(at + 8, at + region.length));
        dv.setBigInt64(at, BigInt(raw.length), true);
      }
    }
  });
}

// Calls f(message, bodyStart) for each message of a stream (either framing).
function forEachMessage(bytes, f) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  while (pos + 8 <= bytes.length) {
    const current = dv.getUint32(pos, true) === 0xffffffff;
    const metaLength = dv.getInt32(current ? pos + 4 : pos, true);
    const metaStart = pos + (current ? 8 : 4);
    if (metaLength === 0) break;
    const message = A.Message.decode(bytes.subarray(metaStart, metaStart + metaLength));
    const bodyStart = metaStart + metaLength;
    f(message, bodyStart);
    pos = bodyStart + Number(message.bodyLength);
  }
}

function countRecordBatches(bytes) {
  let n = 0;
  forEachMessage(bytes, (message) => { n += message.isRecordBatch() ? 1 : 0; });
  return n;
}

// The record batch message of a stream of one batch: the bytes between the Schema message and
// the end-of-stream marker.
function batchMessage(bytes, legacy = false) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const prefix = legacy ? 4 : 8;
  const schemaLength = dv.getInt32(legacy ? 0 : 4, true);
  const eos = legacy ? 4 : 8;
  return bytes.subarray(prefix + schemaLength, bytes.length - eos);
}

function writeMessage(file, streamFile, bytes, legacy = false) {
  const msg = batchMessage(bytes, legacy);
  writeFile(file, msg);
  const reader = A.RecordBatchReader.from(bytes).open();
  const schema = reader.schema;
  const batches = [...reader];
  const out = { file, kind: 'message', schema_from: streamFile, schema: schemaJson(schema), batches: [batchRows(batches[0])] };
  fs.writeFileSync(path.join(outDir, 'expected', `${file}.json`), dump(out));
}

const all = [...columns, ...nonNullable];

// Every supported type, two batches.
const allTypes = stream([makeBatch(all, 0, 5), makeBatch(all, 5, ROWS)]);
writeFile('all_types.arrows', allTypes);
expectStream('all_types.arrows', allTypes);

// One batch of every type as a schema-less record batch message (decoded with the schema of
// all_types.arrows), current and legacy framing.
const oneBatch = stream([makeBatch(all, 0, ROWS)]);
writeMessage('all_types.batch.arrow_message', 'all_types.arrows', oneBatch);
const legacy = stream([makeBatch(all, 0, ROWS)], { writeLegacyIpcFormat: true });
writeFile('legacy.arrows', legacy);
expectStream('legacy.arrows', legacy);
writeMessage('legacy.batch.arrow_message', 'all_types.arrows', legacy, true);

// The TorchEasyRec input field types only (schema-less messages are decoded with input_fields).
const tzrecTypes = ['i32', 'i64', 'f32', 'f64', 'str', 'list_i32', 'list_i64', 'list_f32', 'list_f64', 'list_str',
  'll_i32', 'll_i64', 'll_f32', 'll_f64', 'll_str', 'map_str_i32', 'map_str_i64', 'map_str_f32', 'map_str_f64',
  'map_str_str', 'map_i64_i32', 'map_i64_str', 'map_i32_f64', 'map_i32_i64'];
const tzrecCols = columns.filter((c) => tzrecTypes.includes(c[0]));
const tzrecStream = stream([makeBatch(tzrecCols, 0, ROWS)]);
writeFile('input_fields.arrows', tzrecStream);
expectStream('input_fields.arrows', tzrecStream);
writeMessage('input_fields.batch.arrow_message', 'input_fields.arrows', tzrecStream);

// A stream without the end-of-stream marker.
const noEos = allTypes.subarray(0, allTypes.length - 8);
writeFile('no_end_marker.arrows', noEos);
expectStream('no_end_marker.arrows', noEos, null, false);

// Compressed bodies: 300 rows so that some buffers compress (others are stored with the -1
// prefix, empty ones without a prefix).
const many = [
  ['id', new A.Int64(), (r) => BigInt(r)],
  ['constant', new A.Int32(), () => 7],
  ['tags', list(new A.Utf8()), (r) => (r % 7 === 0 ? null : Array.from({ length: r % 4 }, (_, i) => `tag${i}`))],
  ['weights', map(new A.Utf8(), new A.Float32()), (r) => (r % 5 === 0 ? null : new Map([['w', r / 4]]))],
  ['small', new A.Float64(), (r) => (r % 3 === 0 ? null : r * 0.5)],
];
for (const [name, codec] of [['zstd', A.CompressionType.ZSTD], ['lz4', A.CompressionType.LZ4_FRAME]]) {
  const bytes = stream([makeBatch(many, 0, 300), makeBatch(many, 300, 303)], { compressionType: codec });
  writeFile(`${name}.arrows`, bytes);
  expectStream(`${name}.arrows`, bytes);
}
const zstdOne = stream([makeBatch(many, 0, 300)], { compressionType: A.CompressionType.ZSTD });
writeMessage('zstd.batch.arrow_message', 'zstd.arrows', zstdOne);

// No batch; a batch of no rows.
const emptyCols = [columns[3], columns[16], columns[28]];
{
  // (RecordBatchStreamWriter writes the schema on the first batch: write it from an empty table.)
  const schema = makeBatch(emptyCols, 0, 0).schema;
  const w = new A.RecordBatchStreamWriter();
  w.reset(undefined, schema);
  w.finish();
  const bytes = w.toUint8Array(true);
  writeFile('no_batches.arrows', bytes);
  expectStream('no_batches.arrows', bytes);
}
const zeroRows = stream([makeBatch(emptyCols, 0, 0)]);
writeFile('zero_rows.arrows', zeroRows);
expectStream('zero_rows.arrows', zeroRows);

// A slice (the writer may keep offsets that do not start at 0 and validity bits at an offset).
const sliceSource = new A.Table([makeBatch(all, 0, ROWS)]).slice(3, 7);
const sliced = stream(sliceSource.batches);
writeFile('sliced.arrows', sliced);
expectStream('sliced.arrows', sliced);

// Columns of types tzrec-cpp does not read, between columns it reads (the expected rows hold the
// readable columns only: the reader is asked for those).
const unsupported = [
  ['id', new A.Int32(), (r) => r],
  ['s', new A.Struct([f('a', new A.Int32()), f('b', new A.Utf8())]), (r) => ({ a: r, b: `b${r}` })],
  ['d', new A.Dictionary(new A.Utf8(), new A.Int32()), pick(['x', 'y', null, 'x'])],
  ['ts', new A.TimestampMillisecond(), (r) => 1700000000000 + r],
  ['sv', new A.Utf8View(), pick(['view', null, 'a string longer than twelve bytes'])],
  ['fsl', new A.FixedSizeList(2, f('item', new A.Int32())), (r) => [r, r + 1]],
  ['day', new A.DateDay(), (r) => new Date(86400000 * r)],
  ['name', new A.Utf8(), (r) => `n${r}`],
  ['tags', list(new A.Int64()), (r) => [BigInt(r)]],
];
const unsupportedBytes = stream([makeBatch(unsupported, 0, 4)]);
writeFile('unsupported.arrows', unsupportedBytes);
expectStream('unsupported.arrows', unsupportedBytes, ['id', 'name', 'tags']);
