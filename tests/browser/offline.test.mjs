// Every report opens offline: the page is the only thing loaded (no script, style, font or
// image from anywhere, not even from the file system), its policy forbids any other, and
// using it (hover, zoom, pick a process, open stacks) fetches nothing either.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { openReport, readManifest, withBrowser } from "./browser.mjs";

const manifest = readManifest();
const opened = withBrowser();

for (const [name, files] of Object.entries(manifest)) {
  test(`${name}: one file, no request beyond it`, async () => {
    const html = fs.readFileSync(files.html, "utf8");
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
    assert.doesNotMatch(html, /<(script|link|img|iframe)[^>]+(src|href)=/i, "nothing is referenced");
    const { page, problems, requests, url } = await openReport(opened.browser, files.html);
    // Use it: hover every chart, open every stack, pick every process.
    for (const over of await page.$$(".u-over")) await over.hover();
    await page.$$eval("details", (ds) => ds.forEach((d) => (d.open = true)));
    for (const value of await page.$$eval("#gmt-process option", (os) => os.map((o) => o.value))) {
      await page.select("#gmt-process", value);
      await page.waitForFunction((v) => document.body.dataset.pid === v, {}, value);
    }
    assert.deepEqual(requests, [url], "only the page itself was loaded");
    assert.deepEqual(problems, []);
    await page.close();
  });
}
