// Debian's chromium, headless, driven by puppeteer-core (which never downloads a browser):
// open a report, fail on any console error or page error, record every request, wait for
// the page to say it is drawn, take screenshots into the artifacts folder.
import puppeteer from "puppeteer-core";
import { before, after } from "node:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const CHROMIUM = process.env.GMT_CHROMIUM || "/usr/bin/chromium";
// Generous: the suite must pass on a busy 2-core machine. Waits are for DOM conditions,
// never fixed sleeps; this bounds only how long a condition may take to come true.
export const TIMEOUT_MS = Number(process.env.GMT_BROWSER_TIMEOUT_MS || 120000);

export async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "gmt-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    protocolTimeout: TIMEOUT_MS,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--user-data-dir=" + profile,
    ],
  });
  const close = browser.close.bind(browser);
  browser.close = async () => {
    await close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return browser;
}

// Opens a report file; returns {page, problems, requests}. `problems` collects console
// errors, page errors and failed requests; `requests` every URL the page asked for.
export async function openReport(browser, file, { width = 1400, height = 900 } = {}) {
  const page = await browser.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  await page.setViewport({ width, height });
  const problems = [];
  const requests = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "assert") problems.push("console " + m.type() + ": " + m.text());
  });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("requestfailed", (r) => problems.push("request failed: " + r.url()));
  page.on("request", (r) => requests.push(r.url()));
  const url = "file://" + path.resolve(file);
  await page.goto(url, { waitUntil: "load", timeout: TIMEOUT_MS });
  await page.waitForSelector("body[data-ready='1']", { timeout: TIMEOUT_MS });
  return { page, problems, requests, url };
}

export function artifactsDir() {
  const dir = process.env.GMT_BROWSER_ARTIFACTS || path.resolve("browser-artifacts");
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

// A screenshot of one element into the artifacts folder, and, unless `docs` is false, into
// docs/images when GMT_DOCS_SCREENSHOTS names that folder (how docs/html-report.md's
// pictures are made).
export async function screenshot(page, selector, name, { docs = true } = {}) {
  const handle = await page.$(selector);
  if (!handle) throw new Error("nothing to screenshot: " + selector);
  await handle.scrollIntoView();
  const file = path.join(artifactsDir(), name + ".png");
  await handle.screenshot({ path: file });
  if (docs && process.env.GMT_DOCS_SCREENSHOTS) {
    fs.mkdirSync(process.env.GMT_DOCS_SCREENSHOTS, { recursive: true });
    fs.copyFileSync(file, path.join(process.env.GMT_DOCS_SCREENSHOTS, name + ".png"));
  }
  return file;
}

export function readManifest() {
  const dir = process.env.GMT_BROWSER_REPORTS;
  if (!dir) throw new Error("GMT_BROWSER_REPORTS is not set (tests/browser/CMakeLists.txt sets it)");
  return JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
}

// For a test file: a browser launched before its tests and closed after them; with a
// file, that report opened in it. The returned object gets `browser` (and openReport()'s
// page, problems, requests and url) once the tests start. One hook does both: hooks of
// one level are not awaited one after the other.
export function withBrowser(file) {
  const state = {};
  before(async () => {
    state.browser = await launch();
    if (file) Object.assign(state, await openReport(state.browser, file));
  });
  after(async () => {
    await state.browser?.close();
  });
  return state;
}

export const withReport = (file) => withBrowser(file);
