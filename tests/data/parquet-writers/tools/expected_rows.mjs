// Writes expected/<file>.json for Parquet files: every row as decoded by hyparquet (a pure
// JavaScript reader, independent of src/parquet), in the conventions of
// tests/data/parquet-testing/README.md. Top-level DECIMAL columns are taken from DuckDB's exact
// text (CAST(col AS VARCHAR)); hyparquet returns them as binary doubles, which must agree to
// within 1e-15. Not run by the tests: the expected files are checked in.
//
//   npm install hyparquet@1.33.0 hyparquet-compressors@1.1.2 @duckdb/node-api@1.5.6-r.1
//   node expected_rows.mjs OUT_DIR FILE.parquet...
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parquetReadObjects, parquetMetadataAsync, asyncBufferFromFile } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { DuckDBInstance } from '@duckdb/node-api';

// Values no independent reader gets right, taken from the writer's own description instead
// (documented in tests/data/parquet-writers/README.md).
const OVERRIDES = {
  // int96_from_spark.md: Spark wrote 9089380393200000000 µs since the epoch. hyparquet 1.33.0
  // combines the (negative) nanoseconds field as unsigned and gives -004128-06-12T14:32:44.158Z;
  // DuckDB 1.5.6 reads the Julian day as unsigned 32-bit and gives 226414-01-07 (BC). The date
  // lies beyond JavaScript's Date range; DuckDB's make_timestamp(9089380393200000000) gives
  // 290000-12-30 23:00:00 (checked below).
  'int96_from_spark.parquet': { 5: { a: '+290000-12-30T23:00:00.000Z' } },
};

const [outDir, ...files] = process.argv.slice(2);
const duck = await (await DuckDBInstance.create(':memory:')).connect();
await duck.run('SET threads = 1');
{
  const r = await duck.runAndReadAll('SELECT make_timestamp(9089380393200000000::BIGINT)::VARCHAR AS t');
  if (r.getRowObjectsJson()[0].t !== '290000-12-30 23:00:00') throw new Error('int96 override check failed');
}
const replacer = (k, v) => (typeof v === 'bigint' ? v.toString() : v);
for (const path of files) {
  const file = await asyncBufferFromFile(path);
  const rows = await parquetReadObjects({ file, compressors, utf8: true });
  const meta = await parquetMetadataAsync(file);
  // Top-level fields are the root's children; DECIMAL leaves among them.
  const top = [];
  for (let i = 1, n = 0; n < meta.schema[0].num_children; ++n) {
    top.push(meta.schema[i]);
    // Skip the subtree.
    let pending = meta.schema[i].num_children || 0;
    ++i;
    while (pending > 0) { pending += (meta.schema[i].num_children || 0) - 1; ++i; }
  }
  for (const f of top) {
    if (f.converted_type !== 'DECIMAL' && f.logical_type?.type !== 'DECIMAL') continue;
    const r = await duck.runAndReadAll(`SELECT CAST("${f.name}" AS VARCHAR) AS v FROM read_parquet('${path}') ORDER BY file_row_number`);
    const exact = r.getRowObjectsJson().map(o => o.v);
    rows.forEach((row, i) => {
      const h = row[f.name], d = exact[i];
      if ((h === null || h === undefined) !== (d === null)) throw new Error(`${path} row ${i}: null mismatch`);
      if (d !== null && Math.abs(Number(d) - h) > 1e-15 * Math.max(1, Math.abs(h))) throw new Error(`${path} row ${i}: ${d} vs ${h}`);
      row[f.name] = d;
    });
  }
  for (const [i, values] of Object.entries(OVERRIDES[basename(path)] || {})) Object.assign(rows[i], values);
  const text = JSON.stringify(rows, (k, v) => (v instanceof Date ? v.toISOString() : replacer(k, v)));
  writeFileSync(`${outDir}/${basename(path)}.json`, text);
}
