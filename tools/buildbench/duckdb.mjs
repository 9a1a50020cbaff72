// The build's peer: DuckDB re-encoding the rows a build wrote, from JSON
// lines to zstd parquet, on THREADS threads. The rows are exported to JSON
// lines first (not timed); then each file is read back from its JSON lines
// and written as zstd parquet (timed). Prints one JSON object:
// {"seconds": S, "rows": N, "bytes": B}.
//
//	node duckdb.mjs NODE_MODULES OUT_DIR WORK_DIR THREADS
const [modules, out, work, threads] = process.argv.slice(2);
const { DuckDBInstance } = await import(`${modules}/@duckdb/node-api/lib/index.js`);
const fs = await import('node:fs');
const db = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const c = await db.connect();
const files = ['sft/train', 'rl/train', 'eval/test'];
const q = (s) => s.replaceAll("'", "''");
let rows = 0;
for (const f of files) {
  const jsonl = `${work}/${f.replace('/', '-')}.jsonl`;
  if (!fs.existsSync(jsonl)) {
    await c.run(`COPY (SELECT * FROM read_parquet('${q(out)}/${f}.parquet')) TO '${q(jsonl)}.tmp' (FORMAT json)`);
    fs.renameSync(`${jsonl}.tmp`, jsonl);
  }
}
const start = process.hrtime.bigint();
let bytes = 0;
for (const f of files) {
  const jsonl = `${work}/${f.replace('/', '-')}.jsonl`;
  const pq = `${work}/${f.replace('/', '-')}.duckdb.parquet`;
  // The schema is the parquet file's, so the JSON reader does not guess it.
  const desc = await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${q(out)}/${f}.parquet')`);
  const columns = desc.getRows().map(([name, type]) => `'${q(name)}': '${q(type)}'`).join(', ');
  const r = await c.runAndReadAll(`COPY (SELECT * FROM read_json('${q(jsonl)}', format = 'newline_delimited', columns = {${columns}})) TO '${q(pq)}' (FORMAT parquet, COMPRESSION zstd)`);
  rows += Number(r.getRows()[0][0]);
  bytes += fs.statSync(pq).size;
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ seconds, rows, bytes }));
