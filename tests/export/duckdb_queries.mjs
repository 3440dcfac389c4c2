// The queries docs/export.md shows, run by a real DuckDB over `gpumemtrace export --format
// ndjson` tables; prints their results as JSON for export_e2e.py to compare with the report.
//
//   node duckdb_queries.mjs DIR   (the export's directory, with its schema.sql)
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

// schema.sql names the files relative to the directory, as a user runs it from there.
process.chdir(process.argv[2]);

const queries = {
  // Leaked bytes per stack, from the lifetimes: what was never freed, or freed only by a
  // device reset or context destroy.
  leaks_from_allocations: `
    SELECT pid, stack_id, sum(size)::BIGINT AS bytes
    FROM allocations
    WHERE end_reason IN ('process_end', 'teardown')
    GROUP BY pid, stack_id`,
  // The same from the report's leak table.
  leaks_table: `
    SELECT pid, stack_id, sum(bytes)::BIGINT AS bytes
    FROM leaks
    GROUP BY pid, stack_id`,
  // Peak per GPU: device-resident bytes after each change, in the analysis's order (seq;
  // at one seq, what ends before what begins).
  peak_per_device: `
    WITH changes AS (
      SELECT device, begin_seq AS seq, 1 AS begins, size::BIGINT AS delta
      FROM allocations WHERE device_resident
      UNION ALL
      SELECT device, end_seq, 0, -(size::BIGINT)
      FROM allocations WHERE device_resident)
    SELECT device, max(live)::BIGINT AS peak_bytes FROM (
      SELECT device, sum(delta) OVER (PARTITION BY device ORDER BY seq, begins
                                      ROWS UNBOUNDED PRECEDING) AS live
      FROM changes)
    GROUP BY device`,
  // The frames of the largest leak, innermost first.
  leak_frames: `
    WITH top AS (SELECT process, stack_id FROM leaks ORDER BY bytes DESC LIMIT 1)
    SELECT s.frame, s.function, s.file, s.line
    FROM stacks s JOIN top USING (process, stack_id)
    ORDER BY s.frame`,
  // docs/export.md's first query, as shown there.
  docs_leaks: `
    SELECT a.pid, a.stack_id, sum(a.size) AS leaked_bytes, count(*) AS allocations, any_value(s.function) AS function
    FROM allocations a LEFT JOIN stacks s ON s.process = a.process AND s.stack_id = a.stack_id AND s.frame = 0
    WHERE a.end_reason IN ('process_end', 'teardown')
    GROUP BY a.pid, a.stack_id ORDER BY leaked_bytes DESC`,
  docs_failures: `
    SELECT rank, api, count(*) AS failures FROM events WHERE event = 'alloc' AND result <> 0 GROUP BY ALL`,
  counts: `
    SELECT
      (SELECT count(*) FROM allocations) AS allocations,
      (SELECT count(*) FROM events WHERE event = 'alloc' AND result <> 0) AS failed,
      (SELECT count(*) FROM events) AS events,
      (SELECT count(*) FROM stacks) AS frames,
      (SELECT count(*) FROM allocations a
       WHERE a.stack_id <> 0 AND NOT EXISTS (
         SELECT 1 FROM stacks s
         WHERE s.process = a.process AND s.stack_id = a.stack_id)) AS unjoined_stacks`,
};

const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
for (const statement of readFileSync('schema.sql', 'utf8').split(';\n')) {
  if (statement.replace(/--.*$/gm, '').trim()) {
    await connection.run(statement);
  }
}
const out = {};
for (const [name, sql] of Object.entries(queries)) {
  const reader = await connection.runAndReadAll(sql);
  const rows = reader.getRowObjects().map(row =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
  out[name] = name === 'counts' ? rows[0] : rows;
}
// The Parquet conversion docs/export.md shows, read back.
await connection.run(`COPY events TO 'events.parquet' (FORMAT parquet)`);
const parquet = await connection.runAndReadAll(
  `SELECT count(*) AS n FROM read_parquet('events.parquet')`);
out.parquet_events = Number(parquet.getRowObjects()[0].n);
process.stdout.write(JSON.stringify(out));
