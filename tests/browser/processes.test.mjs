// One report of two processes (the tour's program, then the out-of-memory sample): a
// process picker, a combined view of both, and each process on its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readManifest, screenshot, withReport } from "./browser.mjs";
import { readDump } from "./trace_facts.mjs";

const MiB = 1024 * 1024;
const manifest = readManifest();
const pidOf = (name) => readDump(manifest[name].dump).find((r) => r.record === "header").pid;
const tourPid = pidOf("tour");
const oomPid = pidOf("oom");
const opened = withReport(manifest.multi.html);

const rows = (table) => opened.page.$$eval(`${table} tbody tr`, (rs) => rs.length).catch(() => 0);
const leakRoots = () =>
  opened.page.$$eval("#gmt-flame-leaked .gmt-flame-root", (ns) => ns.reduce((s, n) => s + Number(n.dataset.bytes), 0));

async function choose(pid) {
  await opened.page.select("#gmt-process", pid === null ? "" : String(pid));
  await opened.page.waitForFunction((v) => document.body.dataset.pid === v, {}, pid === null ? "" : String(pid));
}

test("the picker offers both processes and the combined view", async () => {
  assert.deepEqual(opened.problems, []);
  const options = await opened.page.$$eval("#gmt-process option", (os) => os.map((o) => o.value));
  assert.deepEqual(options, ["", String(tourPid), String(oomPid)]);
  assert.equal(await opened.page.$eval("#gmt-process", (s) => s.closest("label").hidden), false);
});

test("combined: the tour's leak and the out-of-memory failure together", async () => {
  assert.equal(await leakRoots(), 64 * MiB);
  assert.equal(await rows("#gmt-leak-table"), 1);
  assert.equal(await rows("#gmt-failure-table"), 1);
  await screenshot(opened.page, ".gmt-header", "process-picker");
});

test("one process: only its leaks, failures and address maps, its lifetime on the axis", async () => {
  await choose(tourPid);
  assert.equal(await leakRoots(), 64 * MiB);
  assert.equal(await rows("#gmt-leak-table"), 1);
  assert.match(await opened.page.$eval("#gmt-failures", (s) => s.textContent), /No failed allocations/);
  // Layouts are kept at the peak (the out-of-memory run's) and at failures: none of the
  // tour's process, and the page says so.
  assert.deepEqual(await opened.page.$$("#gmt-map-picker option"), []);
  assert.match(await opened.page.$eval("#gmt-address-map", (s) => s.textContent), /No address layout/);
  const inRange = await opened.page.evaluate(() => {
    const u = GMT.timeline.charts[0].plot;
    const p = GMT.data.current.report.processes.find((q) => String(q.pid) === document.body.dataset.pid);
    const o = GMT.data.current.origin;
    return Math.abs(u.scales.x.min - (p.start_mono_ns - o)) < 1 && Math.abs(u.scales.x.max - (p.end_mono_ns - o)) < 1;
  });
  assert.ok(inRange, "the axis spans the process's lifetime");

  await choose(oomPid);
  assert.match(await opened.page.$eval("#gmt-leaks", (s) => s.textContent), /No leaks/);
  assert.equal(await rows("#gmt-failure-table"), 1);
  assert.equal(await opened.page.$$eval(".gmt-marker.failure", (m) => m.length), 1);
  const maps = await opened.page.$$eval("#gmt-map-picker option", (os) => os.map((o) => o.textContent));
  assert.ok(maps.length > 0 && maps.every((t) => t.includes("pid " + oomPid)), maps.join("; "));

  await choose(null);
  assert.equal(await rows("#gmt-failure-table"), 1);
  assert.deepEqual(opened.problems, []);
});
