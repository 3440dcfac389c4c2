// Loads gpumemtrace exports into speedscope (the npm package's offline build) in headless
// Chromium, as a person would: the file picker, then the views. Prints what speedscope
// shows, as JSON, for export_e2e.py to compare with the files; screenshots go to SHOTS.
//
//   node speedscope_load.mjs CHROMIUM INDEX_HTML FOLDED TRACE_JSON SHOTS
import { chromium } from 'playwright-core';

const [executablePath, index, folded, traceJson, shots] = process.argv.slice(2);
const timeout = 120000; // generous: a busy 2-core machine renders slowly
const browser = await chromium.launch({
  executablePath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const errors = [];

// Opens `file` through speedscope's file picker; resolves once its views are shown.
async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on('pageerror', e => errors.push(e.message));
  await page.goto('file://' + index);
  await page.waitForSelector('input[type=file]', { state: 'attached', timeout });
  await page.setInputFiles('input[type=file]', file);
  await page.waitForFunction(() => document.body.innerText.includes('Time Order'), null,
                             { timeout });
  return page;
}

// The sandwich view's table: [total, self, symbol] per row, numbers without separators.
async function sandwich(page) {
  await page.getByText('Sandwich').click();
  await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), null, { timeout });
  const text = await page.evaluate(() => document.body.innerText);
  const lines = text.slice(text.indexOf('Symbol Name') + 'Symbol Name'.length)
    .split('\n').map(l => l.trim()).filter(l => l);
  const rows = [];
  for (let i = 0; i + 2 < lines.length + 0 && /^[\d,.]/.test(lines[i]); i += 3) {
    const number = s => Number(s.split(' ')[0].replace(/,/g, ''));
    rows.push({ total: number(lines[i]), self: number(lines[i + 1]), symbol: lines[i + 2] });
  }
  return rows;
}

const out = {};
{
  const page = await open(folded);
  await page.screenshot({ path: `${shots}/folded-time-order.png` });
  const rows = await sandwich(page);
  await page.screenshot({ path: `${shots}/folded-sandwich.png` });
  out.folded = { total: rows.reduce((sum, r) => sum + r.self, 0), frames: rows.map(r => r.symbol) };
}
{
  const page = await open(traceJson);
  await page.screenshot({ path: `${shots}/trace-time-order.png` });
  const text = await page.evaluate(() => document.body.innerText);
  const m = text.match(/\((\d+)\/(\d+)\)/);
  out.trace = { profiles: m ? Number(m[2]) : 1, toolbar: text.split('\n').slice(0, 3) };
}
await browser.close();
if (errors.length) {
  console.error('page errors: ' + errors.join('; '));
  process.exit(1);
}
process.stdout.write(JSON.stringify(out));
