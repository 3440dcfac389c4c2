// Own code first in the HTML report: a Python program that leaks through ctypes, from a
// function another function calls (tests/python/programs/leak_stacks.py), has its leak
// table name the leaking line, not libffi's frame, and the stack opened shows the user's
// frames first, the library frames behind "all N frames".
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { readManifest, screenshot, withBrowser } from "./browser.mjs";

const report = readManifest().python_leak;
const opened = withBrowser(report.html);

// The line of the program's `# LINE:alloc` marker.
function allocLine() {
  const lines = fs.readFileSync(report.program, "utf8").split("\n");
  return lines.findIndex((l) => l.includes("# LINE:alloc")) + 1;
}

test("the leak table names each site by the leaking line", async () => {
  const { page } = opened;
  const expected = `leak_here at ${report.program}:${allocLine()}`;
  const summaries = await page.$$eval("#gmt-leak-table tr.gmt-leak details.gmt-stack > summary", (s) =>
    s.map((x) => x.textContent)
  );
  assert.equal(summaries.length, 2, "the two leaks (main thread, worker thread)");
  for (const s of summaries) assert.equal(s, expected);
  // Opened: the user's frames, innermost first; libffi's only behind "all N frames".
  await page.$$eval("#gmt-leak-table details.gmt-stack", (ds) => ds.forEach((d) => (d.open = true)));
  const shown = await page.$$eval("#gmt-leak-table details.gmt-stack", (ds) =>
    ds.map((d) => [...d.querySelectorAll(":scope > ol.gmt-frames > li .gmt-fn")].map((f) => f.textContent))
  );
  for (const frames of shown) {
    assert.equal(frames[0], "leak_here");
    assert.ok(!frames.some((f) => /libffi|ffi_call|_ctypes/.test(f)), `no library frame first: ${frames}`);
  }
  assert.ok(shown.some((frames) => frames.join(",") === "leak_here,main,<module>"), `main's leak: ${shown}`);
  const all = await page.$$eval("#gmt-leak-table details.gmt-all-frames > summary", (s) => s.map((x) => x.textContent));
  assert.equal(all.length, 2);
  await screenshot(page, "#gmt-leak-table", "python-leak-table");
});
