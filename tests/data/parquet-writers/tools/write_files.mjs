// Writes the Parquet files of this folder with other implementations (run once; the files are
// checked in):
//   npm install @dsnp/parquetjs@1.9.3 @duckdb/node-api@1.5.6-r.1
//   node write_files.mjs OUT_DIR
import parquet from '@dsnp/parquetjs';
import { DuckDBInstance } from '@duckdb/node-api';

const out = process.argv[2];
const { ParquetSchema, ParquetWriter } = parquet;
// Bare `repeated` fields (no LIST annotation), as parquetjs writes arrays.
const schema = new ParquetSchema({
  id: { type: 'INT32' },
  tags: { type: 'UTF8', repeated: true },
  scores: { type: 'DOUBLE', repeated: true },
});
for (const v2 of [true, false]) {
  const w = await ParquetWriter.openFile(schema, `${out}/parquetjs_repeated_v${v2 ? 2 : 1}.parquet`, { useDataPageV2: v2 });
  await w.appendRow({ id: 1, tags: ['a', 'b', 'c'], scores: [1.5] });
  await w.appendRow({ id: 2, tags: [], scores: [] });
  await w.appendRow({ id: 3, tags: ['d'], scores: [2.5, -0.25, 3] });
  await w.appendRow({ id: 4, tags: ['e', 'f'] });
  await w.close();
}
// Several DATA_PAGE_V2 pages (7 rows each) and two row groups.
const w = await ParquetWriter.openFile(schema, `${out}/parquetjs_repeated_pages.parquet`,
                                       { useDataPageV2: true, pageSize: 7, rowGroupSize: 40 });
for (let i = 0; i < 60; ++i) {
  const tags = [];
  for (let j = 0; j < i % 4; ++j) tags.push(`t${i}_${j}`);
  const row = { id: i, tags };
  if (i % 3 != 0) {
    row.scores = [];
    for (let j = 0; j < i % 5; ++j) row.scores.push(i + j / 4);
  }
  await w.appendRow(row);
}
await w.close();

// DuckDB: structs (null, and present with null children), maps of maps, lists of structs,
// decimals of 9, 18 and 38 digits.
const duck = await (await DuckDBInstance.create(':memory:')).connect();
await duck.run(`COPY (SELECT * FROM (VALUES
 (1, {'a': 1, 'b': 'x'}, MAP {'k1': MAP {1: true, 2: false}}, [{'n': 1, 's': 'p'}, NULL, {'n': NULL, 's': NULL}], 12345678901234567890123456.789012::DECIMAL(38,6), 3.14::DECIMAL(9,2), -0.5::DECIMAL(18,3)),
 (2, {'a': NULL, 'b': NULL}, MAP {'k2': NULL, 'k3': MAP {}}, [], -99999999999999999999999999999999.999999::DECIMAL(38,6), -1.00::DECIMAL(9,2), 123456789012345.678::DECIMAL(18,3)),
 (3, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, {'a': 7, 'b': NULL}, MAP {}, [{'n': 2, 's': NULL}], 0.000001::DECIMAL(38,6), 0.01::DECIMAL(9,2), -999999999999999.999::DECIMAL(18,3))
) t(id, s, mm, ls, d38, d9, d18)) TO '${out}/duckdb_nested_decimals.parquet' (FORMAT parquet)`);
