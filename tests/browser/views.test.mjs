// What a person does with the views: zoom and search the flame graphs, pan and reset the
// timeline, expand stacks; on the other samples (pools, VMM, holes), every view drawn.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openReport, readManifest, withBrowser, screenshot } from "./browser.mjs";
import { readDump, peakOf } from "./trace_facts.mjs";

const manifest = readManifest();
const opened = withBrowser();

test("flame graphs: click zooms into a frame and back out; search highlights and sums", async () => {
  const { page, problems } = await openReport(opened.browser, manifest.tour.html);
  const graph = "#gmt-flame-allocated";
  const total = await page.$eval(`${graph} .gmt-flame-all`, (n) => Number(n.dataset.bytes));
  // train_step allocated 4 x 64 MiB, cache_activations 4 x 16 MiB.
  assert.equal(total, 320 * 1024 * 1024);
  const width = (name) =>
    page.$eval(`${graph} .gmt-flame-node[data-name^='${name}']`, (n) => n.getBoundingClientRect().width);
  const full = await page.$eval(graph, (g) => g.clientWidth);
  const before = await width("cache_activations");
  assert.ok(before < full / 3, "cache_activations is a fifth of the bytes");
  await page.click(`${graph} .gmt-flame-node[data-name^='cache_activations']`);
  await page.waitForFunction(
    (g) => document.querySelector(g).parentElement.querySelector(".gmt-flame-status").textContent.startsWith("zoomed into cache_activations"),
    {},
    graph
  );
  assert.ok((await width("cache_activations")) > full * 0.95, "zoomed: it spans the graph");
  // The top bar (everything) zooms back out.
  await page.click(`${graph} .gmt-flame-all`);
  await page.waitForFunction((g) => !document.querySelector(g).parentElement.querySelector(".gmt-flame-status").textContent.includes("zoomed"), {}, graph);
  assert.equal(await width("cache_activations"), before);

  await page.type("#gmt-flame-search", "train_step");
  await page.waitForFunction((g) => document.querySelector(g).parentElement.querySelector(".gmt-flame-status").dataset.matched === String(256 * 1024 * 1024), {}, graph);
  const matches = await page.$$eval(`${graph} .gmt-flame-node.match`, (ns) => ns.map((n) => n.dataset.name));
  assert.deepEqual(matches.map((n) => n.split("(")[0]), ["train_step"]);
  await page.$eval("#gmt-flame-search", (i) => {
    i.value = "";
    i.dispatchEvent(new Event("input"));
  });
  assert.deepEqual(problems, []);
  await page.close();
});

test("timeline: wheel zooms, the arrows pan, reset restores the whole run", async () => {
  const { page, problems } = await openReport(opened.browser, manifest.oom.html);
  const range = () => page.evaluate(() => { const x = GMT.timeline.charts[0].plot.scales.x; return [x.min, x.max]; });
  const [a0, b0] = await range();
  const over = await (await page.$("#gmt-chart-device-0 .u-over")).boundingBox();
  await page.mouse.move(over.x + over.width / 2, over.y + over.height / 2);
  await page.mouse.wheel({ deltaY: -100 });
  await page.waitForFunction((w) => { const x = GMT.timeline.charts[0].plot.scales.x; return x.max - x.min < w; }, {}, b0 - a0);
  const [a1, b1] = await range();
  await page.click("#gmt-timeline .gmt-pan-right");
  await page.waitForFunction((a) => GMT.timeline.charts[0].plot.scales.x.min > a, {}, a1);
  const [a2, b2] = await range();
  assert.ok(Math.abs(b2 - a2 - (b1 - a1)) < 1e-6 * (b1 - a1), "panning keeps the width");
  await page.click("#gmt-timeline .gmt-zoom-reset");
  await page.waitForFunction((w) => { const x = GMT.timeline.charts[0].plot.scales.x; return x.max - x.min >= w; }, {}, b0 - a0);
  assert.deepEqual(problems, []);
  await page.close();
});

for (const name of ["stream_pool", "vmm", "fragmentation"]) {
  test(`${name}: every view is drawn, the peak where the events put it`, async () => {
    const { page, problems } = await openReport(opened.browser, manifest[name].html);
    assert.deepEqual(problems, []);
    const report = JSON.parse((await import("node:fs")).readFileSync(manifest[name].json, "utf8"));
    // One series per kind the device held, named after it.
    const kinds = await page.$eval("#gmt-chart-device-0", (c) => c.dataset.kinds.split(","));
    const held = Object.entries(report.kinds).filter(([k, v]) => k !== "host_pinned" && v.peak_bytes > 0).map(([k]) => k);
    assert.deepEqual([...kinds].sort(), held.sort());
    if (name === "fragmentation") {
      const peak = peakOf(readDump(manifest[name].dump));
      const t = await page.$eval(".gmt-marker.peak", (m) => Number(m.dataset.timeNs));
      assert.equal(t, peak.time_ns);
      const blocks = await page.$eval(".gmt-map-facts", (f) => Number(f.dataset.blocks));
      assert.equal(blocks, peak.live.size, "the address map at the peak holds every live block");
    }
    if (name === "vmm") {
      assert.ok(kinds.includes("vmm"));
      const reserved = await page.$$eval("#gmt-map-view .gmt-span.reservation", (s) => s.length);
      assert.ok(reserved > 0, "VMM reservations are drawn as rows of their own");
    }
    await screenshot(page, "main", name + "-page", { docs: false });
    await page.close();
  });
}

test("a saturated sum reads 'at least 16 EiB (saturated)', never a wrapped or rounded figure", async () => {
  // tests/browser/crafted_traces.cpp: leaks of 2^64 - 1 and 2 bytes.
  const { page, problems } = await openReport(opened.browser, manifest.saturated.html);
  const leaked = await page.$eval("#gmt-facts [data-fact='leaked']", (d) => d.textContent);
  assert.equal(leaked, "at least 16 EiB (saturated) in 2 allocations");
  const peak = await page.$eval("#gmt-facts [data-fact='peak']", (d) => d.textContent);
  assert.ok(peak.startsWith("at least 16 EiB (saturated) of device memory"), peak);
  assert.ok(!(await page.$eval("body", (b) => b.innerText)).includes("PiB"), "no figure in PiB");
  assert.deepEqual(problems, []);
  await page.close();
});
