// Nested phases on the timeline: tests/cli/programs/training_loop.cpp in its `nvtx` mode
// pushes an NVTX range "step" six times, with "forward" and then "backward" inside each,
// and `record` makes the ranges phases. The page must mark every push where the recorded
// phase records say it was, named, a nested one a label row lower, and every pop as the
// end of the phase it closed; hovering a mark names the phase's whole path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readManifest, screenshot, withReport } from "./browser.mjs";
import { readDump } from "./trace_facts.mjs";

const manifest = readManifest().phases;
const records = readDump(manifest.dump);
const opened = withReport(manifest.html);

// The phase records replayed with a stack per thread: the path each push begins or each
// pop ends (a mark would replace the innermost; this program makes none).
function expectedMarks() {
  const stacks = new Map();
  const marks = [];
  for (const r of records.filter((r) => r.record === "phase")) {
    if (!stacks.has(r.tid)) stacks.set(r.tid, []);
    const stack = stacks.get(r.tid);
    if (r.kind === "push") {
      stack.push(r.name);
      marks.push({ end: false, time_ns: r.time_ns, path: stack.join(" > "), depth: stack.length - 1 });
    } else if (r.kind === "pop" && stack.length) {
      marks.push({ end: true, time_ns: r.time_ns, path: stack.join(" > "), depth: stack.length - 1 });
      stack.pop();
    }
  }
  return marks;
}

test("no console error", () => {
  assert.deepEqual(opened.problems, []);
});

test("every push and pop is marked at its time, named and nested", async () => {
  const expected = expectedMarks();
  assert.equal(expected.length, 6 * 3 * 2, "six steps of three ranges, pushed and popped");
  const shown = await opened.page.$$eval(".gmt-marker.phase", (ms) =>
    ms.map((m) => {
      const label = m.querySelector(".gmt-label");
      return {
        end: m.classList.contains("phase-end"),
        time_ns: Number(m.dataset.timeNs),
        depth: Number(m.dataset.depth),
        title: m.title,
        label: label ? label.textContent : null,
        labelTop: label ? label.getBoundingClientRect().top - m.getBoundingClientRect().top : null,
        visible: !m.hidden,
      };
    })
  );
  assert.equal(shown.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i];
    const got = shown[i];
    assert.equal(got.end, want.end, `mark ${i}`);
    assert.equal(got.time_ns, want.time_ns, `mark ${i}`);
    assert.equal(got.depth, want.depth, `mark ${i}`);
    assert.ok(got.visible, `mark ${i} is in the unzoomed chart`);
    assert.ok(got.title.startsWith((want.end ? "end of phase " : "phase ") + want.path + " (pid "), got.title);
    assert.equal(got.label, want.end ? null : want.path.split(" > ").pop(), `mark ${i}`);
  }
  // A nested phase's name sits a row below its enclosing one's, so they do not overlap.
  const top = (depth) => shown.find((m) => m.label && m.depth === depth).labelTop;
  assert.ok(top(1) >= top(0) + 12, `labels at ${top(0)} and ${top(1)} px`);
  await screenshot(opened.page, "#gmt-timeline", "timeline-phases");
});

test("zoomed in, hovering a nested phase's mark names its path and thread", async () => {
  const page = opened.page;
  const target = ".gmt-marker.phase:not(.phase-end)[data-depth='1']";
  // Where the first nested mark's handle is, and how far the nearest other phase mark's is.
  const where = () =>
    page.$eval(target, (m) => {
      const x = (e) => { const r = e.querySelector(".gmt-handle").getBoundingClientRect(); return r.x + r.width / 2; };
      const others = [...document.querySelectorAll(".gmt-marker.phase")].filter((o) => o !== m && !o.hidden);
      // Finite even when no other mark is in view: Infinity would come back as null.
      return { x: x(m), gap: Math.min(1e9, ...others.map((o) => Math.abs(x(o) - x(m)))) };
    });
  // The marks of one step are microseconds apart: zoom in on it, as a person would, until
  // its handles stand apart. The wheel zooms around the pointer, which pushes whatever is
  // beside it further away with every turn: the pointer sits a few pixels left of the mark
  // (never on the far side, where a mark a few pixels from the plot's left edge, as the
  // first step's can be, would be pushed out of the chart), and inside the plot.
  const over = await (await page.$("#gmt-chart-device-0 .u-over")).boundingBox();
  const inside = (x) => Math.min(Math.max(x, over.x + 1), over.x + over.width - 1);
  for (let i = 0; i < 80 && (await where()).gap < 14; i++) {
    const width = await page.evaluate(() => { const x = GMT.timeline.charts[0].plot.scales.x; return x.max - x.min; });
    await page.mouse.move(inside((await where()).x - 3), over.y + over.height / 2);
    await page.mouse.wheel({ deltaY: -100 });
    await page.waitForFunction((w) => { const x = GMT.timeline.charts[0].plot.scales.x; return x.max - x.min < w; }, {}, width);
  }
  assert.ok((await where()).gap >= 14, "zoomed in, no other mark within 14 px of it");
  await (await page.$(target + " .gmt-handle")).hover();
  await page.waitForFunction(() => !document.getElementById("gmt-tooltip").hidden);
  const tip = await page.$eval("#gmt-tooltip", (t) => t.textContent);
  assert.match(tip, /^phase step > forward \(pid \d+, thread \d+\) at /);
  await screenshot(page, "#gmt-timeline", "timeline-phases-zoomed", { docs: false });
});
