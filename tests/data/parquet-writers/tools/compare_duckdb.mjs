// Compares expected/<file>.json with DuckDB's rows of the same file (maps normalized to objects,
// timestamps compared as instants, numbers with relative tolerance 1e-6); prints the differences.
//   npm install @duckdb/node-api@1.5.6-r.1 && node compare_duckdb.mjs DIR/FILE.parquet...
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
const con = await (await DuckDBInstance.create(':memory:')).connect();
await con.run('SET threads = 1');
function norm(v) {
  if (Array.isArray(v)) {
    if (v.length && v.every(e => e && typeof e === 'object' && !Array.isArray(e) && Object.keys(e).length === 2 && 'key' in e && 'value' in e)) {
      const o = {}; for (const e of v) o[typeof e.key === 'string' ? e.key : JSON.stringify(e.key)] = norm(e.value); return o;
    }
    return v.map(norm);
  }
  if (v && typeof v === 'object') { const o = {}; for (const k of Object.keys(v)) o[k] = norm(v[k]); return o; }
  return v;
}
function same(a, b, p) {
  if (typeof a === 'number' || typeof b === 'number') { if (Number(a) === Number(b) || Math.abs(Number(a) - Number(b)) <= 1e-6 * Math.max(1, Math.abs(Number(b)))) return true; console.log(p, a, b); return false; }
  if (Array.isArray(b) && Array.isArray(a)) { if (a.length !== b.length) { console.log(p, 'len', JSON.stringify(a), JSON.stringify(b)); return false; } return a.every((x, i) => same(x, b[i], p + '[' + i + ']')); }
  if (Array.isArray(b) && a && typeof a === 'object' && b.length === 0 && Object.keys(a).length === 0) return true; // empty map
  if (b && a && typeof b === 'object' && typeof a === 'object') { const ks = new Set([...Object.keys(a), ...Object.keys(b)]); return [...ks].every(k => same(a[k], b[k], p + '.' + k)); }
  if (typeof a === 'string' && typeof b === 'string' && a !== b) { const da = Date.parse(a), db = Date.parse(b.replace(' ', 'T') + 'Z'); if (!isNaN(da) && da === db) return true; }
  if (a !== b) { console.log(p, JSON.stringify(a), JSON.stringify(b)); return false; }
  return true;
}
for (const [path, exp] of process.argv.slice(2).map(f => [f, f.replace(/\/([^/]+)$/, '/expected/$1.json')])) {
  let rows;
  try { rows = (await con.runAndReadAll(`SELECT * FROM read_parquet('${path}')`)).getRowObjectsJson().map(norm); } catch (e) { console.log(path, 'duckdb error', e.message); continue; }
  const want = JSON.parse(readFileSync(exp, 'utf8'));
  let ok = rows.length === want.length;
  for (let i = 0; ok && i < rows.length; ++i) ok = same(want[i], rows[i], `${path} row ${i}`);
  console.log(ok ? 'OK  ' : 'DIFF', path);
}
