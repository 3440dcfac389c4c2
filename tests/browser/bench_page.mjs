// Time to interactive of HTML reports in headless chromium: for each page, ROUNDS loads
// (interleaved across pages, each in a fresh tab), the time from navigation start until the
// page has drawn every view and set body[data-ready] (window.gmtReadyAt, performance.now()
// at that moment), as a median; and the file size. Not a test: scripts/bench-html.sh runs
// it and docs/performance.md has its figures.
//   node bench_page.mjs ROUNDS PAGE.html...
import fs from "node:fs";
import { launch, openReport } from "./browser.mjs";

const rounds = Number(process.argv[2]);
const pages = process.argv.slice(3);
const times = new Map(pages.map((p) => [p, []]));
const browser = await launch();
for (let r = 0; r < rounds; r++) {
  for (const file of pages) {
    const { page, problems } = await openReport(browser, file);
    if (problems.length) throw new Error(file + ": " + problems.join("; "));
    times.get(file).push(await page.evaluate(() => window.gmtReadyAt));
    await page.close();
  }
}
await browser.close();
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
console.log("| page | size | time to interactive, median of " + rounds + " (ms) | min–max (ms) |");
console.log("|---|---:|---:|---:|");
for (const file of pages) {
  const v = times.get(file);
  const mib = (fs.statSync(file).size / 1048576).toFixed(2) + " MiB";
  console.log(`| ${file.split("/").pop()} | ${mib} | ${median(v).toFixed(0)} | ${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)} |`);
}
