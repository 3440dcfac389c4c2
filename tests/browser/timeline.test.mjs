// The timeline read at a glance, on tests/browser/programs/step_leak.py (ctypes, 16 MiB kept
// per step by keep_history(), until its 320 MiB device is out of memory): stacked by
// allocation site, the leaking line names a band of its own that grows a step at a time,
// as the recorded events say; by kind at a click; the device's capacity a line; bytes
// ticked at binary-round values; time labels that never overlap, wide or narrow; sections
// with nothing to show hidden; flame graphs that start at the user's code.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { artifactsDir, openReport, readManifest, screenshot, withBrowser } from "./browser.mjs";
import { readDump, events, firstFailure } from "./trace_facts.mjs";

const MiB = 1024 * 1024;
const manifest = readManifest().step_leak;
const records = readDump(manifest.dump);
const lineOf = (marker) => fs.readFileSync(manifest.program, "utf8").split("\n").findIndex((l) => l.includes("# LINE:" + marker)) + 1;
// The 16 MiB buffers the program kept, as the recorded events say.
const kept = events(records).filter((e) => e.event === "alloc" && e.result === 0 && e.size === 16 * MiB).length;
const opened = withBrowser();
let page;

test("the report opens without a console error", async () => {
  const o = await openReport(opened.browser, manifest.html);
  page = o.page;
  opened.problems = o.problems;
  assert.deepEqual(o.problems, []);
  assert.ok(kept >= 5, "the program kept a buffer in several steps before running out");
  assert.ok(firstFailure(records), "the program ran out of device memory");
});

// The drawn series: label and own values, bottom band first.
const bands = () =>
  page.evaluate(() => {
    const c = GMT.timeline.charts[0];
    const u = c.plot;
    const n = c.cumulative.length;
    return c.cumulative.map((vals, k) => ({
      label: u.series[n - k].label,
      values: vals.map((v, i) => v - (k ? c.cumulative[k - 1][i] : 0)),
      top: k === n - 1 ? vals : null,
    }));
  });

test("stacked by allocation site: the leaking line's band grows 16 MiB a step", async () => {
  assert.equal(await page.$eval("#gmt-chart-device-0", (c) => c.dataset.view), "site");
  const drawn = await bands();
  const leak = drawn.filter((b) => b.label.includes("← keep_history at step_leak.py:" + lineOf("leak")));
  assert.equal(leak.length, 1, drawn.map((b) => b.label).join("; "));
  // Named in the legend as drawn.
  const legend = await page.$$eval("#gmt-chart-device-0 .u-legend .u-label", (ls) => ls.map((l) => l.textContent));
  assert.ok(legend.includes(leak[0].label), legend.join("; "));
  // Its own band: never falls, grows in steps of 16 MiB (how many steps share a timeline
  // bucket depends on the machine's speed), up to every buffer kept.
  const v = leak[0].values;
  const last = v.lastIndexOf(Math.max(...v));
  assert.ok(v.slice(0, last + 1).every((x, i) => i === 0 || x >= v[i - 1]), "the leak's band only grows");
  // Then only the teardown at exit ends it (the leaks are "released by teardown").
  assert.ok(v.slice(last + 1).every((x) => x === 0));
  const levels = [...new Set(v)].filter((x) => x > 0);
  assert.ok(levels.length >= 2, "it grows: " + levels.join(", "));
  assert.ok(levels.every((x) => x % (16 * MiB) === 0));
  assert.equal(Math.max(...levels), kept * 16 * MiB);
  // The other sites are the activations and the weights; "other" holds nothing here.
  assert.ok(drawn.some((b) => b.label.includes("← step at step_leak.py:" + lineOf("activations"))));
  await screenshot(page, "#gmt-timeline", "timeline-sites");
});

test("switchable to by kind: one device series, the same total", async () => {
  const sites = await bands();
  await page.click("#gmt-timeline .gmt-by-kind");
  await page.waitForFunction(() => document.querySelector("#gmt-chart-device-0").dataset.view === "kind");
  const kinds = await bands();
  assert.deepEqual(kinds.map((b) => b.label), ["device"]);
  assert.equal(await page.$eval("#gmt-timeline .gmt-by-kind", (b) => b.getAttribute("aria-pressed")), "true");
  assert.equal(Math.max(...kinds[0].top), Math.max(...sites[sites.length - 1].top));
  await page.click("#gmt-timeline .gmt-by-site");
  await page.waitForFunction(() => document.querySelector("#gmt-chart-device-0").dataset.view === "site");
});

test("the device's capacity is a line on the out-of-memory chart", async () => {
  const line = await page.$eval("#gmt-chart-device-0 .gmt-capacity", (l) => ({
    bytes: Number(l.dataset.bytes),
    top: parseFloat(l.style.top),
    text: l.textContent,
    height: l.parentElement.clientHeight,
  }));
  assert.equal(line.bytes, 320 * MiB);
  assert.equal(line.text, "device capacity 320.00 MiB");
  const expected = await page.evaluate((b) => GMT.timeline.charts[0].plot.valToPos(b, "bytes"), line.bytes);
  assert.ok(Math.abs(line.top - expected) < 0.5, "drawn at 320 MiB on the axis");
  assert.ok(line.top >= 0 && line.top < line.height, "inside the plot");
  assert.equal(await page.$$eval(".gmt-marker.failure", (m) => m.length), 1);
  // Unticked, the line goes.
  await page.click("#gmt-timeline .gmt-capacity-toggle");
  await page.waitForFunction(() => !document.querySelector("#gmt-chart-device-0 .gmt-capacity"));
  await page.click("#gmt-timeline .gmt-capacity-toggle");
  await page.waitForSelector("#gmt-chart-device-0 .gmt-capacity");
});

const UNIT = { B: 1, KiB: 1024, MiB: MiB, GiB: 1024 * MiB };

test("byte ticks at binary-round values", async () => {
  const labels = (await page.$eval("#gmt-chart-device-0", (c) => c.dataset.yTicks)).split("|");
  assert.ok(labels.length >= 3, labels.join(", "));
  const values = labels.map((l) => {
    const m = /^(\d+(?:\.\d+)?) (B|KiB|MiB|GiB)$/.exec(l);
    assert.ok(m, "a plain number and a binary unit: " + l);
    return Number(m[1]) * UNIT[m[2]];
  });
  const step = values[1] - values[0];
  assert.ok(Number.isInteger(Math.log2(step)), "the step is a power of two: " + step);
  values.forEach((v, i) => assert.equal(v, values[0] + i * step));
  assert.ok(values.every((v) => v % step === 0));
});

// Every visible time label's box, left to right; none may overlap the next.
async function xLabelBoxes(p) {
  return p.$$eval("#gmt-chart-device-0 .gmt-x-label:not([hidden])", (ls) =>
    ls.map((l) => {
      const r = l.getBoundingClientRect();
      return { left: r.left, right: r.right, text: l.textContent };
    }).sort((a, b) => a.left - b.left)
  );
}
function assertApart(boxes, where) {
  assert.ok(boxes.length >= 2, where + ": at least two time labels");
  for (let i = 1; i < boxes.length; i++) {
    assert.ok(boxes[i].left >= boxes[i - 1].right, `${where}: "${boxes[i - 1].text}" and "${boxes[i].text}" overlap`);
  }
}

for (const width of [1400, 480]) {
  test(`time labels never overlap at ${width} px, zoomed or not`, async () => {
    const o = await openReport(opened.browser, manifest.html, { width });
    assert.deepEqual(o.problems, []);
    const chart = await o.page.$eval("#gmt-chart-device-0", (c) => c.getBoundingClientRect().right);
    let boxes = await xLabelBoxes(o.page);
    assertApart(boxes, width + " px");
    assert.ok(boxes.every((b) => b.right <= chart + 1), "inside the chart");
    if (width < 1400) await screenshot(o.page, "#gmt-chart-device-0", "timeline-narrow");
    // Zoomed in, labels need more digits: still apart.
    const over = await (await o.page.$("#gmt-chart-device-0 .u-over")).boundingBox();
    for (let i = 0; i < 6; i++) {
      const before = await o.page.evaluate(() => GMT.timeline.charts[0].plot.scales.x.max - GMT.timeline.charts[0].plot.scales.x.min);
      await o.page.mouse.move(over.x + over.width * 0.37, over.y + over.height / 2);
      await o.page.mouse.wheel({ deltaY: -100 });
      await o.page.waitForFunction((b) => GMT.timeline.charts[0].plot.scales.x.max - GMT.timeline.charts[0].plot.scales.x.min < b, {}, before);
      boxes = await xLabelBoxes(o.page);
      assertApart(boxes, width + " px, zoomed");
    }
    await o.page.close();
  });
}

// tests/browser/crafted_traces.cpp's killed run: a phase marked and one pushed before the
// first allocation, a failed allocation its last event, no trailer. The marks' times are
// read from the trace's dump, not from the report.
test("a run killed after a failure: every mark is on the chart, the phases before its first allocation too", async () => {
  const killed = readManifest().killed;
  const facts = readDump(killed.dump);
  const phases = facts.filter((r) => r.record === "phase").map((r) => r.time_ns);
  const failure = firstFailure(facts).failure;
  const firstAlloc = Math.min(...events(facts).filter((e) => e.event === "alloc" && e.result === 0).map((e) => e.time_ns));
  assert.equal(phases.length, 2);
  assert.ok(phases.every((t) => t < firstAlloc), "both phases come before the first allocation");
  assert.equal(Math.max(...events(facts).map((e) => e.time_ns)), failure.time_ns, "the failure is the last event");
  const o = await openReport(opened.browser, killed.html);
  assert.deepEqual(o.problems, []);
  const marks = () =>
    o.page.$$eval("#gmt-chart-device-0 .gmt-marker", (ms) =>
      ms.map((m) => ({ cls: m.className, time_ns: Number(m.dataset.timeNs), hidden: m.hidden, left: parseFloat(m.style.left), width: m.parentElement.clientWidth }))
    );
  const check = async (where) => {
    const drawn = await marks();
    assert.deepEqual(drawn.filter((m) => m.cls.includes("phase")).map((m) => m.time_ns).sort(), [...phases].sort(), where);
    assert.deepEqual(drawn.filter((m) => m.cls.includes("failure")).map((m) => m.time_ns), [failure.time_ns], where);
    for (const m of drawn) assert.ok(!m.hidden && m.left >= 0 && m.left <= m.width, `${where}: the ${m.cls} at ${m.time_ns} is inside the chart (left ${m.left} of ${m.width})`);
    return drawn;
  };
  const drawn = await check("as opened");
  // Nothing was live before the first allocation: the chart is at 0 bytes there.
  const before = await o.page.evaluate((ts) => {
    const c = GMT.timeline.charts[0];
    const top = c.cumulative[c.cumulative.length - 1];
    return ts.map((t) => top[c.xs.indexOf(t - c.ctx.origin)]);
  }, phases);
  assert.deepEqual(before, [0, 0]);
  assert.ok(drawn.find((m) => m.time_ns === Math.min(...phases)).left < drawn.find((m) => m.cls.includes("peak")).left);
  // Zoomed in, the first mark leaves the chart; the reset brings every mark back.
  const over = await (await o.page.$("#gmt-chart-device-0 .u-over")).boundingBox();
  await o.page.mouse.move(over.x + over.width / 2, over.y + over.height / 2);
  for (let i = 0; i < 3; i++) await o.page.mouse.wheel({ deltaY: -100 });
  await o.page.waitForFunction(() => document.querySelector("#gmt-chart-device-0 .gmt-marker.phase").hidden);
  await o.page.click("#gmt-timeline .gmt-zoom-reset");
  await o.page.waitForFunction(() => !document.querySelector("#gmt-chart-device-0 .gmt-marker.phase").hidden);
  await check("after the zoom is reset");
  await screenshot(o.page, "#gmt-timeline", "timeline-killed");
  await o.page.close();
});

test("sections with nothing to show are hidden, with their links", async () => {
  const sections = await page.$$eval("main > section", (ss) =>
    ss.map((s) => ({ id: s.id, hidden: s.hidden, link: document.querySelector(`.gmt-nav a[href='#${s.id}']`).hidden }))
  );
  const hidden = sections.filter((s) => s.hidden).map((s) => s.id);
  // No double frees, one process (no ranks), no caching allocator.
  for (const id of ["gmt-errors", "gmt-ranks", "gmt-held", "gmt-tensor", "gmt-tensor-ooms"]) assert.ok(hidden.includes(id), id);
  for (const id of ["gmt-summary", "gmt-timeline", "gmt-flames", "gmt-leaks", "gmt-failures"]) assert.ok(!hidden.includes(id), id);
  for (const s of sections) assert.equal(s.link, s.hidden, s.id + "'s link");
  // What is shown has something in it: no empty table, no empty flame graph.
  const empty = await page.$$eval("section:not([hidden]) table tbody", (ts) => ts.filter((t) => !t.children.length).length);
  assert.equal(empty, 0);
  assert.equal(await page.$$eval("section:not([hidden]) .gmt-flame-box", (bs) => bs.filter((b) => !b.querySelector(".gmt-flame-node")).length), 0);
  assert.deepEqual(opened.problems, []);
});

// The flame graphs fold on the frames' `own` flag; this page copy marks exactly the
// program's own frames (step_leak.py's), whatever the analyzer's rules decide.
test("flame graphs start at the user's code, library frames folded, and a toggle shows them", async () => {
  const html = fs.readFileSync(manifest.html, "utf8");
  const open = '<script type="application/json" id="gmt-data">';
  const from = html.indexOf(open) + open.length;
  const to = html.indexOf("</script>", from);
  const data = JSON.parse(html.slice(from, to));
  for (const f of data.frames) {
    if (String(f.file || "").endsWith("/step_leak.py")) f.own = true;
    else delete f.own;
  }
  const copy = path.join(artifactsDir(), "step_leak-own.html");
  fs.writeFileSync(copy, html.slice(0, from) + JSON.stringify(data).replace(/</g, "\\u003c") + html.slice(to));
  // The analyzer marks them so itself (docs/configuration.md, GPUMEMTRACE_USER_CODE): the page folds as it is.
  assert.equal(await page.$eval("#gmt-flame-leaked .gmt-flame-node[data-depth='1']", (n) => n.dataset.name), "<module>");
  assert.ok(await page.$("#gmt-flame-leaked .gmt-flame-node.folded"));
  const o = await openReport(opened.browser, copy);
  const p = o.page;
  const leaked = () =>
    p.$$eval("#gmt-flame-leaked .gmt-flame-node", (ns) =>
      ns.map((n) => ({ name: n.dataset.name, depth: Number(n.dataset.depth), bytes: Number(n.dataset.bytes), own: n.classList.contains("own"), folded: n.classList.contains("folded") }))
    );
  // Folded: from the module's code down to malloc(), then the libraries as one node.
  let nodes = await leaked();
  const chain = nodes.sort((a, b) => a.depth - b.depth).map((n) => n.name);
  assert.deepEqual(chain, ["all leaks", "<module>", "main", "step", "keep_history", "malloc", "(library frames)"]);
  assert.ok(nodes.filter((n) => n.depth > 0).every((n) => n.own || n.folded));
  assert.equal(nodes.find((n) => n.folded).bytes, kept * 16 * MiB);
  await screenshot(p, "#gmt-flames", "flame-graphs-folded");
  // Shown: every frame again, the interpreter's and libffi's among them.
  await p.click("#gmt-flame-libraries");
  await p.waitForFunction(() => !document.querySelector("#gmt-flame-leaked .gmt-flame-node.folded"));
  nodes = await leaked();
  assert.ok(nodes.length > chain.length, "library frames drawn");
  assert.ok(nodes.some((n) => !n.own && n.depth > 0 && n.depth < nodes.find((m) => m.name === "<module>").depth), "frames above the module's code");
  assert.ok(nodes.some((n) => /^ffi_call|^_ctypes|^_call_function_pointer/.test(n.name)), nodes.map((n) => n.name).join(" "));
  await p.click("#gmt-flame-libraries");
  await p.waitForSelector("#gmt-flame-leaked .gmt-flame-node.folded");
  assert.deepEqual(o.problems, []);
  await p.close();
});
