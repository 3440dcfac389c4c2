// The What if section (docs/html-report.md, docs/whatif.md): the run's requests replayed
// under other allocator settings. On the PyTorch stand-in's training run (block events) and
// on samples/oom.cu (its cudaMalloc calls), the page must show, per device, one row per
// setting `gpumemtrace whatif` replays by default, each figure equal to what
// `whatif --format json` says of the same trace (NAME.whatif.json, tests/browser/
// make_reports.py), the why of an estimate on its cell, and whether the replay of the run's
// own settings gave the recording back.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { readManifest, screenshot, withBrowser, openReport } from "./browser.mjs";

const manifest = readManifest();
const opened = withBrowser();
const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));
const FIGURES = ["peak_reserved_bytes", "peak_allocated_bytes", "fragmentation_bytes", "cuda_malloc_calls", "cuda_free_calls", "min_capacity_bytes"];

// The rows of the page's What if tables, as a person reads them and as the cells hold them.
async function pageRuns(page) {
  return page.$$eval("#gmt-whatif .gmt-whatif-table", (tables) =>
    tables.map((t) => ({
      pid: Number(t.dataset.pid),
      device: Number(t.dataset.device),
      rows: [...t.querySelectorAll("tbody tr.gmt-whatif-setting")].map((r) => {
        const figures = {};
        for (const c of r.querySelectorAll("[data-figure]")) figures[c.dataset.figure] = { value: c.dataset.value, text: c.textContent, why: c.dataset.why, title: c.title };
        return { label: r.dataset.label, exact: r.dataset.exact === "1", figures };
      }),
    }))
  );
}

function assertSame(runs, whatif) {
  assert.equal(runs.length, whatif.runs.length, "a table per trace and device");
  runs.forEach((run, i) => {
    const expected = whatif.runs[i];
    assert.equal(run.pid, expected.pid);
    assert.equal(run.device, expected.device);
    assert.deepEqual(run.rows.map((r) => r.label), expected.settings.map((s) => s.label), "a row per setting, in whatif's order");
    run.rows.forEach((row, j) => {
      const s = expected.settings[j];
      for (const name of FIGURES) assert.equal(row.figures[name].value, String(s[name]), `${s.label}: ${name}`);
      assert.equal(row.exact, s.exact, s.label);
      assert.equal(row.figures.exact.text, s.exact ? "exact" : "estimate");
      assert.equal(row.figures.exact.why, s.why, "the why of " + s.label);
      assert.equal(row.figures.exact.title, s.why, "the why on hover");
    });
  });
}

test("PyTorch's training run: a row per setting, whatif's figures, the replay checked", async () => {
  const whatif = readJson(manifest.torch_train.whatif);
  const report = readJson(manifest.torch_train.json);
  // The JSON report carries the same runs.
  assert.deepEqual(report.what_if, whatif.runs);
  // whatif's default list: the run's own (PyTorch's defaults here, listed once), then the others.
  assert.deepEqual(
    whatif.runs[0].settings.map((s) => s.label),
    ["recorded", "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4", "backend:cudaMallocAsync"]
  );
  const { page, problems } = await openReport(opened.browser, manifest.torch_train.html);
  assert.equal(await page.$eval("#gmt-whatif", (s) => s.hidden), false);
  assert.equal(await page.$eval(".gmt-nav a[href='#gmt-whatif']", (a) => a.hidden), false);
  const runs = await pageRuns(page);
  assertSame(runs, whatif);
  // The figures as a person reads them: the exact bytes of the run's own row.
  const own = runs[0].rows[0];
  assert.match(own.figures.peak_reserved_bytes.text, /^[\d.]+ (B|KiB|MiB|GiB)$/);
  // The stream-ordered pool is an estimate, and says why.
  const pool = runs[0].rows.find((r) => r.label === "backend:cudaMallocAsync");
  assert.equal(pool.exact, false);
  assert.match(pool.figures.exact.why, /^estimate: .*cudaMallocAsync/);
  // Whether the replay of the run's own settings matched the recording.
  const matches = whatif.runs[0].recorded.replay_matches;
  assert.equal(await page.$eval(".gmt-whatif-run", (p) => p.dataset.replayMatches), String(matches));
  assert.match(
    await page.$eval(".gmt-whatif-match", (s) => s.textContent),
    matches ? /gave its recorded peak and segment counts back/ : /differs from the recording/
  );
  await screenshot(page, "#gmt-whatif", "whatif");
  assert.deepEqual(problems, []);
  await page.close();
});

test("a raw CUDA run: its cudaMalloc calls replayed as tensors, every row an estimate", async () => {
  const whatif = readJson(manifest.oom.whatif);
  assert.deepEqual(readJson(manifest.oom.json).what_if, whatif.runs);
  const { page, problems } = await openReport(opened.browser, manifest.oom.html);
  const runs = await pageRuns(page);
  assertSame(runs, whatif);
  for (const row of runs[0].rows) {
    assert.equal(row.exact, false, row.label);
    assert.match(row.figures.exact.why, /cudaMalloc calls stand in for tensor requests/);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("an older report, without what_if, hides the section", async () => {
  const html = fs.readFileSync(manifest.torch_train.html, "utf8").replace(/,"what_if":\[.*?\]\}(?=,"frames":)/s, "}");
  assert.ok(!html.includes('"what_if"'), "what_if taken out of the page's data");
  const file = manifest.torch_train.html.replace(/\.html$/, ".old-whatif.html");
  fs.writeFileSync(file, html);
  const { page, problems } = await openReport(opened.browser, file);
  assert.equal(await page.$eval("#gmt-whatif", (s) => s.hidden), true);
  assert.equal(await page.$eval(".gmt-nav a[href='#gmt-whatif']", (a) => a.hidden), true);
  assert.deepEqual(problems, []);
  await page.close();
});
