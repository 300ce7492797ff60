// Drives the approval console in headless Chromium (Debian's chromium at
// /usr/bin/chromium) with playwright-core, for e2e/console_browser_test.go.
//
//   node console.mjs
//
// It reads one JSON command a line on stdin and answers each with one JSON
// line on stdout ({"ok":true,...} or {"ok":false,"error":"..."}), so the Go
// test decides when tool calls start and what the browser does next.
// Commands:
//   {"cmd":"open","url":U,"fresh":bool}   load U in the main page (fresh: in
//       a new context without the console cookie); status, final URL, body
//       text, the requests the load made and navigation timings
//   {"cmd":"reload"}                      reload the main page, same figures
//   {"cmd":"waitText","text":T,"timeoutMs":N}  wait until the main page shows T
//   {"cmd":"click","card":T,"button":B}   click button B in the pending card
//       that shows T
//   {"cmd":"state","base":U}              GET U/api/state with the page's cookie
//   {"cmd":"post","url":U,"headers":H,"form":F}  POST a form with the page's
//       cookie and the given headers (for the wrong-Origin check)
//   {"cmd":"crossSite","url":U,"target":T}  open U (another origin's page that
//       auto-submits a form to the console) in a new page of the main context
//       and report the status of the console's answer to it (URL contains T)
//   {"cmd":"text"}                        the main page's body text
//   {"cmd":"screenshot","path":P}         save the main page as a PNG at P, and
//       report each pending card's text, class and computed border colour
//   {"cmd":"close"}
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

const browser = await chromium.launch({
  executablePath,
  headless: true,
  chromiumSandbox: false, // --no-sandbox: CI runs as root
  // Playwright gives every launch a fresh, empty --user-data-dir.
  args: [
    '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync',
  ],
});
const context = await browser.newContext();
const page = await context.newPage();

async function load(pg, fn) {
  const requests = [];
  const onReq = (r) => requests.push({ method: r.method(), url: r.url(), type: r.resourceType() });
  pg.on('request', onReq);
  const t0 = performance.now();
  let resp;
  try {
    resp = await fn();
  } finally {
    pg.off('request', onReq);
  }
  const ms = performance.now() - t0;
  const nav = await pg.evaluate(() => {
    const n = performance.getEntriesByType('navigation')[0];
    return n ? { responseEnd: n.responseEnd, domContentLoaded: n.domContentLoadedEventEnd, load: n.loadEventEnd, transferSize: n.transferSize, bodySize: n.decodedBodySize } : null;
  }).catch(() => null);
  // Requests of the page's own resources (styles, scripts, images), counted
  // after the load settles. The page's own polling of api/state (fetch) is
  // not a resource of the load: it starts on a timer that a slow machine
  // can reach within the settling time.
  await pg.waitForTimeout(200);
  const resources = await pg.evaluate(() => performance.getEntriesByType('resource')
    .filter((r) => r.initiatorType !== 'fetch' && r.initiatorType !== 'xmlhttprequest')
    .map((r) => r.name)).catch(() => []);
  return {
    status: resp ? resp.status() : 0,
    url: pg.url(),
    text: await pg.evaluate(() => document.body ? document.body.innerText : '').catch(() => ''),
    requests,
    resources,
    ms,
    nav,
  };
}

const handlers = {
  async open({ url, fresh }) {
    if (fresh) {
      const ctx = await browser.newContext();
      try {
        const pg = await ctx.newPage();
        return await load(pg, () => pg.goto(url));
      } finally {
        await ctx.close();
      }
    }
    return load(page, () => page.goto(url));
  },
  async reload() {
    return load(page, () => page.reload());
  },
  async waitText({ text, timeoutMs }) {
    const t0 = performance.now();
    await page.waitForFunction((t) => document.body.innerText.includes(t), text, { timeout: timeoutMs ?? 5000, polling: 10 });
    return { ms: performance.now() - t0 };
  },
  async click({ card, button }) {
    const c = page.locator('#pending .card', { hasText: card });
    await c.getByRole('button', { name: button, exact: true }).click();
    return {};
  },
  async state({ base }) {
    const r = await context.request.get(base + '/api/state');
    return { status: r.status(), body: await r.json() };
  },
  async post({ url, headers, form }) {
    const r = await context.request.post(url, { headers, form, maxRedirects: 0 });
    return { status: r.status(), body: await r.text() };
  },
  async crossSite({ url, target }) {
    const pg = await context.newPage();
    try {
      const answer = pg.waitForResponse((r) => r.url().includes(target), { timeout: 10000 });
      await pg.goto(url);
      const r = await answer;
      let body = '';
      try { body = await r.text(); } catch { /* a redirect has no body */ }
      return { status: r.status(), body, origin: (await r.request().allHeaders()).origin ?? null };
    } finally {
      await pg.close();
    }
  },
  async text() {
    return { text: await page.evaluate(() => document.body.innerText) };
  },
  async screenshot({ path }) {
    await page.setViewportSize({ width: 900, height: 900 });
    await page.screenshot({ path, fullPage: true });
    const cards = await page.evaluate(() => [...document.querySelectorAll('#pending .card')].map((c) => ({
      text: c.innerText, class: c.className, border: getComputedStyle(c).borderTopColor,
      borderWidth: getComputedStyle(c).borderTopWidth,
    })));
    return { cards };
  },
  async close() {
    await browser.close();
    return {};
  },
};

const rl = createInterface({ input: process.stdin });
console.log(JSON.stringify({ ok: true, ready: true, version: browser.version() }));
for await (const line of rl) {
  if (!line.trim()) continue;
  let msg;
  try {
    msg = JSON.parse(line);
    const out = await handlers[msg.cmd](msg);
    console.log(JSON.stringify({ ok: true, ...out }));
    if (msg.cmd === 'close') break;
  } catch (err) {
    console.log(JSON.stringify({ ok: false, error: String(err?.stack ?? err) }));
  }
}
await browser.close().catch(() => {});
process.exit(0);
