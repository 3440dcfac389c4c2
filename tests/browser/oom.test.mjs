// samples/oom.cu allocates 2000000000-byte chunks until the simulated device is out of
// memory: the page must list that failure with its diagnosis and the fragmentation then,
// mark it on the timeline, and draw the address space at that moment: exactly the
// allocations the recorded events say were live.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readManifest, screenshot, withReport } from "./browser.mjs";
import { readDump, firstFailure } from "./trace_facts.mjs";

const manifest = readManifest().oom;
const records = readDump(manifest.dump);
const { failure, live } = firstFailure(records);
const opened = withReport(manifest.html);

test("no console error", () => {
  assert.deepEqual(opened.problems, []);
});

test("the failure table shows the failed allocation and its diagnosis", async () => {
  assert.equal(failure.size, 2000000000);
  const rows = await opened.page.$$eval("#gmt-failure-table tbody tr", (rs) =>
    rs.map((r) => ({
      cells: [...r.children].map((c) => c.textContent),
      diagnosis: r.querySelector(".gmt-diagnosis").textContent,
      fragmentation: r.querySelector(".gmt-fragmentation").textContent,
    }))
  );
  assert.equal(rows.length, 1);
  const held = [...live.values()].reduce((s, e) => s + e.size, 0);
  const GiB = (n) => (n / 1024 ** 3).toFixed(2) + " GiB";
  assert.equal(rows[0].cells[3], GiB(failure.size));
  assert.equal(rows[0].cells[4], "cudaErrorMemoryAllocation");
  assert.equal(rows[0].cells[5], GiB(held));
  // The simulated device has 80 GiB; what it had free is in the event.
  assert.match(rows[0].diagnosis, new RegExp(`^out of memory: the traced program holds ${GiB(held)} of 80\\.00 GiB; only .* was free for ${GiB(failure.size)}$`));
  assert.match(rows[0].fragmentation, /^[\d.]+ (B|KiB|MiB|GiB) in \d+ holes, largest /);
  await screenshot(opened.page, "#gmt-failures", "failures");
});

test("the timeline marks the failure at its time", async () => {
  const marks = await opened.page.$$eval(".gmt-marker.failure", (ms) => ms.map((m) => Number(m.dataset.timeNs)));
  assert.deepEqual(marks, [failure.time_ns]);
});

test("the address space at the failure: every live allocation, to scale, and the holes", async () => {
  await opened.page.click("#gmt-failure-table .gmt-show-map");
  await opened.page.waitForSelector(`#gmt-map-view[data-moment='failure'][data-time-ns='${failure.time_ns}']`);
  const facts = await opened.page.$eval(".gmt-map-facts", (f) => ({ blocks: Number(f.dataset.blocks), holes: Number(f.dataset.holes) }));
  assert.equal(facts.blocks, live.size);
  const drawn = await opened.page.$$eval("#gmt-map-view rect.gmt-block", (rs) => rs.map((r) => r.dataset.address).sort());
  assert.deepEqual(drawn, [...live.keys()].sort());
  // Each 2000000000-byte chunk ends inside a 2 MiB granule: the free rest is a hole, and
  // the chunk alone keeps that granule, so every chunk pins.
  const pinned = await opened.page.$$eval("#gmt-map-view rect.gmt-block.pinned", (rs) => rs.length);
  assert.equal(pinned, live.size);
  assert.equal(await opened.page.$$eval("#gmt-map-view rect.gmt-hole", (rs) => rs.length), facts.holes);
  // Drawn to scale: a chunk takes its share of the row.
  const row = await (await opened.page.$("#gmt-map-view .gmt-span-bar")).boundingBox();
  const chunk = await (await opened.page.$("#gmt-map-view rect.gmt-block")).boundingBox();
  assert.ok(Math.abs(chunk.width - row.width / live.size) < 2, "a chunk is 1/" + live.size + " of the row");
  // Holes of 667 KiB in a 78 GiB row are a hairline: zoom with the wheel towards the first
  // one, as a person would, until it is a few pixels wide.
  const hole = async () => (await opened.page.$("#gmt-map-view rect.gmt-hole")).boundingBox();
  for (let i = 0; i < 40 && (await hole()).width < 4; i++) {
    const h = await hole();
    await opened.page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
    await opened.page.mouse.wheel({ deltaY: -100 });
  }
  assert.ok((await hole()).width >= 4, "zoomed in, the hole is visible");
  assert.equal(await opened.page.$eval("#gmt-map-view .gmt-span-bar", (s) => s.dataset.zoomed), "1");
  await screenshot(opened.page, "#gmt-address-map", "address-map");
});

test("the device's capacity is a line on the chart, as the trace's device record says", async () => {
  const device = records.find((r) => r.record === "device" && r.ordinal === 0);
  assert.ok(device && device.total_bytes > 0);
  const line = await opened.page.$eval("#gmt-chart-device-0 .gmt-capacity", (l) => ({ bytes: Number(l.dataset.bytes), top: parseFloat(l.style.top) }));
  assert.equal(line.bytes, device.total_bytes);
  const expected = await opened.page.evaluate((b) => GMT.timeline.charts[0].plot.valToPos(b, "bytes"), line.bytes);
  assert.ok(Math.abs(line.top - expected) < 0.5 && line.top >= 0, "drawn at the capacity, inside the plot");
});
