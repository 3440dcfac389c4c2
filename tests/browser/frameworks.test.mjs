// A framework's tensor level on the page: tests/frameworks/programs/torch_like.py run on the
// stand-in libc10_cuda.so (tests/frameworks/fake_c10_cuda.cpp), which counts its own
// statistics as PyTorch's memory_stats() does and writes them next to the trace
// (NAME.stats.json). Its training run keeps the model until the interpreter frees it at
// exit, and the allocator keeps its segments to the end; its out-of-memory run fails a
// 40 MiB tensor with 11 MiB free in each 20 MiB segment: fragmentation inside segments.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { readManifest, screenshot, withBrowser, openReport } from "./browser.mjs";

const manifest = readManifest();
const opened = withBrowser();
const MiB = 1024 * 1024;
const TORCH_LIKE = new URL("../frameworks/programs/torch_like.py", import.meta.url);
// A frame of the program (own code first, docs/python.md): the stand-in's Tensor class is an
// installed package's (tests/frameworks/programs/site-packages), never the first frame shown.
const OWN = (fn, line) => `${fn} at (\\S*/)?torch_like\\.py:${line}`;
const lineOf = (marker) => fs.readFileSync(TORCH_LIKE, "utf8").split("\n").findIndex((l) => l.includes(marker)) + 1;

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));

// As the text report writes bytes: whole bytes below 1 KiB, else two decimals of the unit.
function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(2)} ${units[u]}`;
}

const figure = (page, selector, name) => page.$eval(`${selector} [data-figure='${name}']`, (c) => c.textContent);

test("tensor level: both peaks, the free space at the tensor peak, the blocks held to the end", async () => {
  const stats = readJson(manifest.torch_train.stats);
  const report = readJson(manifest.torch_train.json);
  const c = report.caching_allocator;
  assert.equal(c.processes.length, 1);
  const a = c.processes[0];
  assert.equal(a.devices.length, 1);
  const d = a.devices[0];
  // The recorded figures are the allocator's own: max_memory_allocated / max_memory_reserved.
  assert.equal(d.allocated_peak_bytes, stats.end.max_allocated);
  assert.equal(d.reserved_peak_bytes, stats.end.max_reserved);
  const { page, problems } = await openReport(opened.browser, manifest.torch_train.html);
  const row = "#gmt-tensor-peaks tr.gmt-tensor-device";
  assert.equal(await page.$$eval(row, (rs) => rs.length), 1);
  assert.equal(await figure(page, row, "allocated_peak"), bytes(stats.end.max_allocated));
  assert.equal(await figure(page, row, "reserved_peak"), bytes(stats.end.max_reserved));
  assert.match(await page.$eval(row, (r) => r.children[1].textContent), /^PyTorch CUDA caching allocator 2\.11\.0\+fake$/);

  // At the tensor-level peak, as the program saw it then (its statistics at that moment).
  const space = "#gmt-segment-space tr.gmt-segment-space";
  assert.equal(await figure(page, space, "reserved"), bytes(stats.at_peak.reserved));
  assert.equal(await figure(page, space, "allocated"), bytes(stats.at_peak.allocated));
  assert.equal(await figure(page, space, "reserved_unallocated"), bytes(stats.at_peak.reserved - stats.at_peak.allocated));
  const split = stats.at_peak.inactive_split;
  assert.equal(await figure(page, space, "inactive_split"), `${bytes(stats.at_peak.inactive_split_bytes)} in ${split} ${split === 1 ? "block" : "blocks"}`);
  const frag = c.fragmentation[0];
  assert.equal(await figure(page, space, "largest_free"), bytes(frag.largest_free_bytes));

  // The model (module globals) is freed by the interpreter at exit: every block the program
  // still held at its end, stats.end.allocated.
  assert.ok(stats.end.allocated > 0);
  const freed = await page.$eval(".gmt-exit-blocks[data-kind='exit_freed']", (p) => [Number(p.dataset.bytes), p.textContent]);
  assert.equal(freed[0], stats.end.allocated);
  assert.match(freed[1], new RegExp(`^pid \\d+: ${bytes(stats.end.allocated).replace(".", "\\.")} in 6 blocks freed only by the interpreter at exit`));
  const freedSites = await page.$$eval(".gmt-exit-sites[data-kind='exit_freed'] tr.gmt-exit-site", (rs) =>
    rs.map((r) => [Number(r.dataset.bytes), r.querySelector(".gmt-stack summary").textContent, r.querySelector(".gmt-stack").textContent])
  );
  assert.ok(freedSites.length >= 1);
  assert.equal(freedSites.reduce((s, r) => s + r[0], 0), a.exit_freed_top_sites.reduce((s, r) => s + r.bytes, 0));
  // One site, named by the Python code that made the model: the line of torch_like.py
  // that builds it, as the program's source says.
  const modelLine = lineOf("model = [Tensor(n) for n in");
  assert.ok(modelLine > 0);
  assert.equal(freedSites.length, 1);
  // (Python 3.12 runs a list comprehension in its function's frame.)
  assert.match(freedSites[0][1], new RegExp(`^${OWN("train(\\.<locals>\\.<listcomp>)?", modelLine)} ← ${OWN("\\S+", "\\d+")}$`));
  const kept = await page.$eval(".gmt-exit-blocks[data-kind='exit_kept']", (p) => Number(p.dataset.bytes));
  assert.equal(kept, a.exit_kept_bytes);

  // The segments the cache kept to the end: held at exit by the caching allocator, not leaked.
  assert.ok(report.held_at_exit.length >= 1);
  const held = await page.$$eval("#gmt-held-table tr.gmt-held", (rs) =>
    rs.map((r) => ({ bytes: Number(r.dataset.bytes), allocator: r.children[0].textContent, shown: r.children[2].textContent, site: r.querySelector(".gmt-stack summary")?.textContent || "" }))
  );
  assert.equal(held.length, report.held_at_exit.length);
  const torch = held.find((h) => h.allocator === "PyTorch CUDA caching allocator");
  assert.ok(torch, JSON.stringify(held));
  assert.equal(torch.bytes, stats.end.reserved, "the segments it held at exit are what it had reserved at the end");
  assert.equal(torch.shown, bytes(stats.end.reserved));
  assert.match(torch.site, new RegExp(`^${OWN("\\S+", "\\d+")} ← ${OWN("\\S+", "\\d+")}$`), "its largest site named by the Python code");
  assert.equal(await page.$eval("#gmt-held .gmt-held-total", (p) => p.textContent.split(" still")[0]), bytes(report.summary.held_at_exit_bytes));
  // No out-of-memory here: said in a sentence.
  assert.match(await page.$eval("#gmt-tensor-ooms", (s) => s.textContent), /No out-of-memory error in a caching allocator\./);
  await screenshot(page, "#gmt-held", "held-at-exit");
  await screenshot(page, "#gmt-tensor", "tensor-level");
  assert.deepEqual(problems, []);
  await page.close();
});

test("tensor OOM: the diagnosis and each remedy's verdict, estimates marked", async () => {
  const stats = readJson(manifest.torch_oom.stats);
  const report = readJson(manifest.torch_oom.json);
  const ooms = report.caching_allocator.ooms;
  assert.ok(ooms.length >= 1);
  const { page, problems } = await openReport(opened.browser, manifest.torch_oom.html, { height: 2000 }); // the whole table in one screenshot
  const rows = await page.$$eval("#gmt-tensor-oom-table tr.gmt-tensor-oom", (rs) =>
    rs.map((r) => ({
      requested: r.querySelector("[data-figure='requested']").textContent,
      space: r.querySelector("[data-figure='space']").textContent,
      diagnosis: r.querySelector(".gmt-diagnosis").textContent,
      site: r.querySelector(".gmt-stack summary").textContent,
      hints: [...r.querySelectorAll(".gmt-hint")].map((h) => ({
        remedy: h.dataset.remedy,
        estimate: h.dataset.estimate === "1",
        marked: !!h.querySelector(".gmt-estimate"),
        text: h.textContent,
      })),
    }))
  );
  assert.equal(rows.length, ooms.length);
  // The 40 MiB tensor: the segments then are the allocator's own statistics before it.
  const big = rows.find((r) => r.requested === bytes(40 * MiB));
  assert.ok(big, JSON.stringify(rows.map((r) => r.requested)));
  const before = stats.before_oom;
  assert.equal(big.space, `${bytes(before.reserved)} reserved, ${bytes(before.allocated)} allocated, largest free block ${bytes(11 * MiB)}`);
  assert.match(big.diagnosis, /^fragmentation inside segments/);
  assert.match(big.site, new RegExp(`^${OWN("oom", lineOf("# LINE:oom"))} ← ${OWN("main", "\\d+")}$`));
  const hints = Object.fromEntries(big.hints.map((h) => [h.remedy, h]));
  assert.ok(hints.expandable_segments, JSON.stringify(big.hints));
  assert.match(hints.expandable_segments.text, /^expandable_segments: would likely have avoided it \(estimate\)/);
  assert.equal(hints.expandable_segments.estimate, true);
  assert.equal(hints.expandable_segments.marked, true);
  assert.match(hints.empty_cache.text, /^empty_cache: would not have helped/);
  assert.equal(hints.empty_cache.marked, false, "a settled verdict is not marked an estimate");
  // Each hint's estimate mark follows the report, hint by hint.
  const o = ooms.find((x) => x.requested_bytes === 40 * MiB);
  assert.deepEqual(big.hints.map((h) => [h.remedy, h.marked]), o.hints.map((h) => [h.remedy, h.estimate]));
  await screenshot(page, "#gmt-tensor-ooms", "tensor-oom");
  assert.deepEqual(problems, []);
  await page.close();
});

test("two processes: each one's tensor level alone when it is picked", async () => {
  const report = readJson(manifest.torch_both.json);
  const pidOf = (name) => readJson(manifest[name].json).processes[0].pid;
  const train = pidOf("torch_train");
  const oom = pidOf("torch_oom");
  assert.deepEqual(report.caching_allocator.processes.map((a) => a.pid).sort(), [train, oom].sort());
  const { page, problems } = await openReport(opened.browser, manifest.torch_both.html);
  const shown = () =>
    page.evaluate(() => ({
      peaks: [...document.querySelectorAll("#gmt-tensor-peaks tr.gmt-tensor-device")].map((r) => Number(r.dataset.pid)),
      held: [...document.querySelectorAll("#gmt-held-table tr.gmt-held")].map((r) => Number(r.children[1].textContent)),
      ooms: document.querySelectorAll("#gmt-tensor-oom-table tr.gmt-tensor-oom").length,
      oomText: document.querySelector("#gmt-tensor-ooms").textContent,
    }));
  const all = await shown();
  assert.deepEqual(all.peaks.sort(), [train, oom].sort());
  assert.deepEqual(all.held.sort(), [train, oom].sort());
  assert.equal(all.ooms, report.caching_allocator.ooms.length);
  const pick = async (pid) => {
    await page.select("#gmt-process", String(pid));
    await page.waitForFunction((v) => document.body.dataset.pid === v, {}, String(pid));
    return shown();
  };
  const one = await pick(train);
  assert.deepEqual([one.peaks, one.held, one.ooms], [[train], [train], 0]);
  assert.match(one.oomText, /No out-of-memory error in a caching allocator\./);
  const other = await pick(oom);
  assert.deepEqual([other.peaks, other.held, other.ooms], [[oom], [oom], report.caching_allocator.ooms.length]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a report without a caching allocator hides the tensor level", async () => {
  // The tour's program uses cudaMalloc directly: no caching allocator, nothing held at exit.
  const report = readJson(manifest.tour.json);
  assert.equal(report.caching_allocator, null);
  assert.deepEqual(report.held_at_exit, []);
  const { page, problems } = await openReport(opened.browser, manifest.tour.html);
  for (const id of ["gmt-held", "gmt-tensor", "gmt-tensor-ooms"]) {
    assert.equal(await page.$eval("#" + id, (s) => s.hidden), true, id);
    assert.equal(await page.$eval(`.gmt-nav a[href='#${id}']`, (a) => a.hidden), true, id);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("an older report, without the framework fields, is drawn without errors", async () => {
  // The page of a report written before held_at_exit and caching_allocator existed: the
  // tour's page with those fields taken out of its embedded data.
  const html = fs.readFileSync(manifest.tour.html, "utf8");
  const m = html.match(/(<script type="application\/json" id="gmt-data">)([\s\S]*?)(<\/script>)/);
  assert.ok(m, "the page embeds its data");
  const data = JSON.parse(m[2]);
  assert.ok("held_at_exit" in data.report && "caching_allocator" in data.report);
  delete data.report.held_at_exit;
  delete data.report.caching_allocator;
  delete data.report.summary.held_at_exit_bytes;
  delete data.report.summary.held_at_exit_allocations;
  const old = manifest.tour.html.replace(/\.html$/, ".old.html");
  fs.writeFileSync(old, html.replace(m[0], () => m[1] + JSON.stringify(data).replace(/</g, "\\u003c") + m[3]));
  const { page, problems } = await openReport(opened.browser, old);
  assert.equal(await page.$eval("#gmt-tensor", (s) => s.hidden), true);
  assert.equal(await page.$eval("#gmt-held", (s) => s.hidden), true);
  assert.ok((await page.$$eval("#gmt-leak-table tbody tr", (rs) => rs.length)) > 0, "the other views still drawn");
  assert.deepEqual(problems, []);
  await page.close();
});
