// What long jobs and many ranks need, on the page: growth across iterations and the
// per-rank table. tests/cli/programs/training_loop.cpp keeps one 1 MiB buffer per step
// (NVTX "step" ranges begin the steps), so it grows 1 MiB per iteration at
// keep_activation; tests/cli/programs/nccl_like.cpp runs two ranks that share NCCL-like VMM
// buffers, and rank 1 alone leaks 1 MiB, so rank 1 stands out in what it leaked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readManifest, screenshot, withBrowser, openReport } from "./browser.mjs";
import { readDump, events } from "./trace_facts.mjs";

const MiB = 1024 * 1024;
const manifest = readManifest();
const opened = withBrowser();

const cells = (page, selector) =>
  page.$$eval(selector, (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));

test("growth: the kept buffer grows 1 MiB per step, at keep_activation", async () => {
  const records = readDump(manifest.phases.dump);
  const steps = records.filter((r) => r.record === "phase" && r.kind === "push" && r.name === "step").length;
  const kept = events(records).filter((e) => e.event === "alloc" && e.size === MiB).length;
  assert.equal(steps, 6);
  assert.equal(kept, steps, "one 1 MiB buffer per step");
  const { page, problems } = await openReport(opened.browser, manifest.phases.html);
  const notes = await page.$$eval("#gmt-growth .gmt-iterations", (ls) => ls.map((l) => [l.dataset.source, l.textContent]));
  assert.equal(notes.length, 1);
  assert.equal(notes[0][0], "phase");
  assert.match(notes[0][1], new RegExp(`: ${steps - 1} iterations, beginning each time phase step began; 1\\.00 MiB more per iteration from 1 growing site$`));
  const rows = await cells(page, "#gmt-growth-table tbody tr");
  assert.equal(rows.length, 1);
  // Iterations are measured between the steps' starts: steps - 1 of them, all growing.
  const n = steps - 1;
  assert.deepEqual(rows[0].slice(0, 6), ["1.00 MiB", "1", `${n} of ${n}`, ((n + 1) / (n + 2)).toFixed(2), `${n}.00 MiB`, "step > forward"]);
  assert.match(rows[0][7], /^keep_activation.* at .*training_loop\.cpp:\d+/);
  assert.match(await page.$eval("#gmt-ranks", (s) => s.textContent), /No process says it is a rank of a job/);
  await screenshot(page, "#gmt-growth", "growth");
  assert.deepEqual(problems, []);
  await page.close();
});

test("ranks: one row per rank with its device, rank 1 flagged for what it leaked", async () => {
  const leaked = {};
  for (const [i, trace] of manifest.ranks.traces.entries()) {
    assert.match(trace, new RegExp(`ranks\\.rank${i}\\.gmtrace$`));
  }
  // What each rank left allocated, from its own recorded events (cuMemAlloc; the VMM
  // buffers are all released).
  const dump = readDump(manifest.ranks.dump);
  let rank = null;
  for (const r of dump) {
    if (r.record === "header") rank = r.rank;
    if (r.record === "event" && r.event === "alloc" && r.api.startsWith("cuMemAlloc") && r.result === 0) {
      leaked[rank] = (leaked[rank] || 0) + r.size;
    }
  }
  assert.deepEqual(leaked, { 1: MiB });
  const { page, problems } = await openReport(opened.browser, manifest.ranks.html);
  const rows = await page.$$eval("#gmt-rank-table tbody tr", (rs) =>
    rs.map((r) => ({
      rank: Number(r.dataset.rank),
      outlier: r.dataset.outlier,
      cells: [...r.children].map((c) => c.textContent),
      flagged: [...r.querySelectorAll(".gmt-outlier")].map((c) => c.dataset.figure),
    }))
  );
  assert.deepEqual(rows.map((r) => r.rank), [0, 1]);
  for (const r of rows) assert.match(r.cells[3], /^device 0: \d+\.\d\d MiB$/, "each rank ran on device 0");
  assert.equal(rows[0].cells[4], "0 B");
  assert.equal(rows[1].cells[4], "1.00 MiB");
  assert.ok(rows[1].flagged.includes("leaked"), JSON.stringify(rows[1]));
  assert.ok(!rows[0].flagged.includes("leaked"), JSON.stringify(rows[0]));
  // Rank 0 may stand out in its peak (it owns the shared 8 MiB buffer), never in leaks.
  const outliers = await page.$eval(".gmt-outliers", (p) => p.textContent);
  assert.match(outliers, /^Outliers: .*rank 1 \([^)]*leaked[^)]*\)/);
  assert.doesNotMatch(outliers, /rank 0 \([^)]*leaked/);
  await screenshot(page, "#gmt-ranks", "ranks");
  // One rank picked: only its row.
  const pid1 = dump.filter((r) => r.record === "header").find((h) => h.rank === 1).pid;
  await page.select("#gmt-process", String(pid1));
  await page.waitForFunction((v) => document.body.dataset.pid === v, {}, String(pid1));
  assert.deepEqual(await page.$$eval("#gmt-rank-table tbody tr", (rs) => rs.map((r) => r.dataset.rank)), ["1"]);
  assert.deepEqual(problems, []);
  await page.close();
});
