// Rewrites a parquet file with DuckDB (a writer independent of parquet-go):
// the file becomes the result of the SELECT query, in which the table `t` is the
// file's rows in order. Usage:
//   NODE_PATH=$BAGEN_DATA_CACHE/node/node_modules node edit_parquet.mjs FILE 'SELECT … FROM t'
import { createRequire } from 'node:module';
import { renameSync } from 'node:fs';
const require = createRequire(process.env.NODE_PATH + '/');
const { DuckDBInstance } = require('@duckdb/node-api');

const [file, query] = process.argv.slice(2);
const q = (s) => `'${s.replaceAll("'", "''")}'`;
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run(`CREATE TABLE t AS SELECT * EXCLUDE (file_row_number)
  FROM read_parquet(${q(file)}, file_row_number = true) ORDER BY file_row_number`);
const tmp = file + '.duckdb.tmp';
await con.run(`COPY (${query}) TO ${q(tmp)} (FORMAT parquet)`);
renameSync(tmp, file);
