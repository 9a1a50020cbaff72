// Reads parquet files with DuckDB (an implementation independent of
// parquet-go) and prints, per file, its column types and rows as JSON.
// Usage: NODE_PATH=$BAGEN_DATA_CACHE/node/node_modules node read_parquet.mjs FILE...
import { createRequire } from 'node:module';
const require = createRequire(process.env.NODE_PATH + '/');
const { DuckDBInstance } = require('@duckdb/node-api');

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const out = {};
for (const f of process.argv.slice(2)) {
  const src = `read_parquet('${f.replaceAll("'", "''")}')`;
  const desc = await con.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`);
  const rows = await con.runAndReadAll(`SELECT * FROM ${src}`);
  out[f] = {
    schema: desc.getRowObjectsJson().map((c) => `${c.column_name} ${c.column_type}`),
    rows: rows.getRowObjectsJS(),
  };
}
process.stdout.write(JSON.stringify(out, (_, v) => (typeof v === 'bigint' ? Number(v) : v)));
