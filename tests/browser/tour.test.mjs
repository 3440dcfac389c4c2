// The README tour's program (tests/browser/make_reports.py builds it from README.md and
// records it with `record --html`): the page must show its 64 MiB leak at
// cache_activations and its 112 MiB peak, at the moment the recorded events say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readManifest, screenshot, TIMEOUT_MS, withReport } from "./browser.mjs";
import { readDump, peakOf } from "./trace_facts.mjs";

const MiB = 1024 * 1024;
const manifest = readManifest().tour;
const records = readDump(manifest.dump);
const opened = withReport(manifest.html);

test("no console error", () => {
  assert.deepEqual(opened.problems, []);
});

test("the timeline draws device memory, one series, and peaks at 112 MiB when the events say", async () => {
  const peak = peakOf(records);
  assert.equal(peak.bytes, 112 * MiB, "the replayed events peak at 112 MiB");
  // By kind (the page opens stacked by allocation site: timeline.test.mjs checks that).
  await opened.page.click("#gmt-timeline .gmt-by-kind");
  await opened.page.waitForFunction(() => document.querySelector("#gmt-chart-device-0").dataset.view === "kind");
  const chart = await opened.page.$eval("#gmt-chart-device-0", (c) => ({
    series: Number(c.dataset.series),
    kinds: c.dataset.kinds,
  }));
  assert.deepEqual(chart, { series: 1, kinds: "device" });
  const drawn = await opened.page.evaluate(() => {
    const u = GMT.timeline.charts[0].plot;
    const top = u.data[1];
    let at = 0;
    for (let i = 1; i < top.length; i++) if (top[i] > top[at]) at = i;
    return { max: top[at], x: u.data[0][at], seriesShown: u.series.length - 1 };
  });
  const origin = await opened.page.evaluate(() => GMT.data.current.origin);
  assert.equal(drawn.seriesShown, 1);
  assert.equal(drawn.max, 112 * MiB, "the highest point drawn");
  assert.equal(drawn.x, peak.time_ns - origin, "drawn at the peak's time");

  const marker = await opened.page.$eval(".gmt-marker.peak", (m) => ({
    t: Number(m.dataset.timeNs),
    bytes: Number(m.dataset.bytes),
    left: parseFloat(m.style.left),
    title: m.title,
  }));
  assert.equal(marker.t, peak.time_ns, "peak marker at the peak's time");
  assert.equal(marker.bytes, 112 * MiB);
  assert.match(marker.title, /peak 112\.00 MiB/);
  const expectedLeft = await opened.page.evaluate((x) => GMT.timeline.charts[0].plot.valToPos(x, "x"), peak.time_ns - origin);
  assert.ok(Math.abs(marker.left - expectedLeft) < 0.5, "the marker is drawn where the peak is on the axis");
  await opened.page.click("#gmt-timeline .gmt-by-site");
  await opened.page.waitForFunction(() => document.querySelector("#gmt-chart-device-0").dataset.view === "site");
  await screenshot(opened.page, "#gmt-timeline", "timeline");
});

test("hovering the chart shows a time and bytes", async () => {
  const box = await (await opened.page.$("#gmt-chart-device-0 .u-over")).boundingBox();
  await opened.page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2);
  await opened.page.waitForFunction(
    () => /\+[\d.]+ (ns|µs|ms|s)/.test(document.querySelector("#gmt-chart-device-0 .u-legend").textContent) &&
      /MiB|B/.test(document.querySelector("#gmt-chart-device-0 .u-legend .u-series:nth-child(2)").textContent),
    { timeout: TIMEOUT_MS }
  );
});

test("zooming in on the peak and clicking it lists what was live: 64 MiB train_step, 48 MiB cache_activations", async () => {
  const over = await (await opened.page.$("#gmt-chart-device-0 .u-over")).boundingBox();
  // Where the largest sampled moment (what was live at the peak) lies on the axis, in
  // pixels: its left and right ends. How long the peak lasts depends on how the recorded
  // program was scheduled, so the test zooms until it is wide enough to click.
  const peakSpan = () =>
    opened.page.evaluate(() => {
      const c = GMT.timeline.charts[0];
      const m = c.ctx.report.moments.reduce((a, b) => (Number(b.live_bytes) > Number(a.live_bytes) ? b : a));
      const o = c.ctx.origin;
      return [c.plot.valToPos(Number(m.time_ns) - o, "x"), c.plot.valToPos(Number(m.until_ns) - o, "x")];
    });
  // Drag a few pixels around the peak (uPlot zooms into the dragged range) until it is wide
  // enough to click; each drag narrows the axis about a hundredfold.
  let span = await peakSpan();
  for (let i = 0; i < 12 && span[1] - span[0] < 12; i++) {
    const mid = (span[0] + span[1]) / 2;
    const before = await opened.page.evaluate(() => GMT.timeline.charts[0].plot.scales.x.max - GMT.timeline.charts[0].plot.scales.x.min);
    // Inside the plot even when the peak is at its very edge (a slow exit stretches the axis).
    const from = Math.min(Math.max(mid - 4, 0.5), over.width - 8.5);
    await opened.page.mouse.move(over.x + from, over.y + 20);
    await opened.page.mouse.down();
    await opened.page.mouse.move(over.x + from + 8, over.y + 20, { steps: 4 });
    await opened.page.mouse.up();
    await opened.page.waitForFunction(
      (b) => GMT.timeline.charts[0].plot.scales.x.max - GMT.timeline.charts[0].plot.scales.x.min < b,
      {},
      before
    );
    span = await peakSpan();
  }
  assert.ok(span[1] - span[0] >= 12, "zoomed in far enough to click the peak");
  const marker = await opened.page.$eval(".gmt-marker.peak", (e) => parseFloat(e.style.left));
  assert.ok(marker >= span[0] - 1 && marker <= span[1] + 1, "the peak marker lies on the peak");
  await opened.page.mouse.click(over.x + (span[0] + span[1]) / 2, over.y + 20);
  await opened.page.waitForSelector("#gmt-moment-table");
  const moment = await opened.page.$eval(".gmt-moment-title", (e) => ({ bytes: Number(e.dataset.liveBytes), text: e.textContent }));
  assert.equal(moment.bytes, 112 * MiB);
  assert.match(moment.text, /^Live from /, "the clicked time is inside a sampled moment, not near one");
  const rows = await opened.page.$$eval("#gmt-moment-table tbody tr", (rs) =>
    rs.map((r) => ({ bytes: Number(r.dataset.bytes), site: r.querySelector("summary").textContent }))
  );
  assert.equal(rows.length, 2);
  assert.equal(rows[0].bytes, 64 * MiB);
  assert.match(rows[0].site, /^train_step.* at train\.cpp:12$/);
  assert.equal(rows[1].bytes, 48 * MiB);
  assert.match(rows[1].site, /^cache_activations.* at train\.cpp:7$/);
  await screenshot(opened.page, "#gmt-timeline", "timeline-moment");
  await opened.page.click("#gmt-chart-device-0 ~ * .gmt-zoom-reset, #gmt-timeline .gmt-zoom-reset");
});

test("the leak flame graph: its roots sum to the leaked bytes and cache_activations holds 64 MiB", async () => {
  const roots = await opened.page.$$eval("#gmt-flame-leaked .gmt-flame-root", (ns) => ns.map((n) => Number(n.dataset.bytes)));
  assert.equal(roots.reduce((a, b) => a + b, 0), 64 * MiB);
  const cache = await opened.page.$$eval("#gmt-flame-leaked .gmt-flame-node", (ns) =>
    ns.filter((n) => n.dataset.name.startsWith("cache_activations(")).map((n) => Number(n.dataset.bytes))
  );
  assert.deepEqual(cache, [64 * MiB]);
  // Hover: function, file:line and module.
  const node = await opened.page.$("#gmt-flame-leaked .gmt-flame-node[data-name^='cache_activations(']");
  await node.hover();
  await opened.page.waitForFunction(() => !document.getElementById("gmt-tooltip").hidden);
  const tip = await opened.page.$eval("#gmt-tooltip", (t) => t.textContent);
  assert.match(tip, /cache_activations\(.*\) at train\.cpp:7/);
  assert.match(tip, /module \/.*\/train/);
  assert.match(tip, /64\.00 MiB \(100\.0 %\) in 4 allocations/);
  await screenshot(opened.page, "#gmt-flames", "flame-graphs");
});

test("the leaks table lists exactly the one leak, and its stack expands", async () => {
  const rows = await opened.page.$$eval("#gmt-leak-table tbody tr", (rs) =>
    rs.map((r) => ({ bytes: Number(r.dataset.bytes), allocations: Number(r.dataset.allocations), text: r.textContent }))
  );
  assert.equal(rows.length, 1);
  assert.equal(rows[0].bytes, 64 * MiB);
  assert.equal(rows[0].allocations, 4);
  assert.match(rows[0].text, /cache_activations.* at train\.cpp:7/);
  await opened.page.click("#gmt-leak-table tbody tr summary");
  const frames = await opened.page.$$eval("#gmt-leak-table tbody tr details[open] > ol .gmt-fn", (fs) => fs.map((f) => f.textContent));
  assert.ok(frames[0].startsWith("cache_activations("));
  assert.equal(frames[1], "main");
  await screenshot(opened.page, "#gmt-leaks", "leaks");
});
