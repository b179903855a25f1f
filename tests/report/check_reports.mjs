// Opens each report in headless Chromium (puppeteer-core driving the system's browser) and checks
// that it rendered: every chart container holds a vega view with a canvas and data marks, no
// console error or page error, no dialog (a script injected through a name would open one), and
// no request other than the file itself. Saves a full-page screenshot of each beside it.
// Usage: node check_reports.mjs ASSETS_DIR CHROMIUM OUT_DIR REPORT.html...
// Prints one line per report with its size and time to render; exit 0 all passed, 1 otherwise.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [assets, chromium, outDir, ...reports] = process.argv.slice(2);
const require = createRequire(join(resolve(assets), 'package.json'));
const puppeteer = require('puppeteer-core');

const profile = mkdtempSync(join(tmpdir(), 'fleetcast-report-chromium-'));
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  userDataDir: profile,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
let failed = false;
try {
  for (const report of reports) {
    const url = pathToFileURL(resolve(report)).href;
    const problems = [];
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    page.on('console', (message) => { if (message.type() === 'error') problems.push('console error: ' + message.text()); });
    page.on('pageerror', (error) => problems.push('page error: ' + error.message));
    page.on('dialog', async (dialog) => { problems.push('dialog opened: ' + dialog.message()); await dialog.dismiss(); });
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      if (request.url() === url) return request.continue();
      problems.push('request left the page: ' + request.url());
      return request.abort();
    });
    const started = Date.now();
    await page.goto(url, { waitUntil: 'load', timeout: 120000 });
    const result = await page.evaluate(async () => {
      if (!window.fleetcastReport) return { error: 'no fleetcastReport: the page script did not run' };
      await window.fleetcastReport.ready;
      // Data marks in a view's scenegraph: items of marks whose role is 'mark' (not axes, legends).
      const count = (node) => {
        let marks = 0;
        for (const item of node.items || []) {
          if (node.role === 'mark' && node.marktype !== 'group') marks += 1;
          marks += count(item);
        }
        return marks;
      };
      const charts = [...document.querySelectorAll('.chart')].map((div) => {
        const view = window.fleetcastReport.views[div.id];
        const canvas = div.querySelector('canvas');
        return { id: div.id, view: !!view, canvas: !!canvas && canvas.width > 0 && canvas.height > 0,
                 marks: view ? count(view.scenegraph().root) : 0 };
      });
      return { errors: window.fleetcastReport.errors, charts, title: document.title };
    });
    const renderMs = Date.now() - started;
    if (result.error) problems.push(result.error);
    for (const error of result.errors || []) problems.push('embed error: ' + error);
    if (!result.charts || result.charts.length === 0) problems.push('no chart on the page');
    for (const chart of result.charts || []) {
      if (!chart.view) problems.push(chart.id + ': no vega view');
      if (!chart.canvas) problems.push(chart.id + ': no drawn canvas');
      if (chart.marks === 0) problems.push(chart.id + ': no data marks drawn');
    }
    const screenshot = join(outDir, basename(report, '.html') + '.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    const size = statSync(report).size;
    console.log(`${basename(report)}: ${problems.length === 0 ? 'ok' : 'FAILED'}, ${(result.charts || []).length} charts, ` +
                `${(size / 1e6).toFixed(2)} MB, rendered in ${renderMs} ms; screenshot ${screenshot}; title: ${result.title}`);
    for (const problem of problems) console.log('  ' + problem);
    failed = failed || problems.length > 0;
    await page.close();
  }
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
