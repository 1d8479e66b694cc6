// Opens every page of a `vernier report` site in headless Chromium (Debian's, through
// playwright-core), from file:// and from `vernier serve`, and checks what a reader sees:
// no console error, no failed request, no dialog (an injected script would open one), every
// figure drawn, every link leading to a page of the site, the tag filter and the figure
// switches doing what they say. Screenshots of the main pages go to SHOTS.
//
// node site.mjs SITE_DIR SERVE_URL SHOTS_DIR EXPECTED_JSON
// EXPECTED_JSON: {"filter": {"TAG": rows}, "rows": N}. Prints one line per problem and exits 1
// if there is any.

import { chromium } from "playwright-core";
import { readdirSync, statSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";

const [siteDir, serveUrl, shotsDir, expectedJson] = process.argv.slice(2);
const expected = JSON.parse(expectedJson);
const problems = [];
const problem = (text) => problems.push(text);

function pagesOf(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...pagesOf(path));
    else if (name.endsWith(".html")) out.push(relative(siteDir, path));
  }
  return out.sort();
}

const pages = pagesOf(siteDir);
if (!pages.includes("index.html")) problem("no index.html in " + siteDir);
mkdirSync(shotsDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});

// Each origin in a fresh context (its own profile state).
for (const [origin, base] of [
  ["file", "file://" + siteDir.replace(/\/$/, "") + "/"],
  ["serve", serveUrl.replace(/\/$/, "") + "/"],
]) {
  const context = await browser.newContext({ viewport: { width: 1300, height: 1000 } });
  for (const path of pages) {
    const page = await context.newPage();
    const where = `${origin} ${path}`;
    page.on("console", (m) => { if (m.type() === "error") problem(`${where}: console: ${m.text()}`); });
    page.on("pageerror", (e) => problem(`${where}: script error: ${e.message}`));
    page.on("requestfailed", (r) => problem(`${where}: request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on("response", (r) => { if (r.status() >= 400) problem(`${where}: ${r.status()} ${r.url()}`); });
    page.on("dialog", async (d) => { problem(`${where}: a dialog opened: ${d.message()}`); await d.dismiss(); });
    page.on("request", (r) => {
      const url = r.url();
      if (!url.startsWith(base) && !url.startsWith("data:")) problem(`${where}: request outside the site: ${url}`);
    });
    const response = await page.goto(base + path, { waitUntil: "load" });
    if (origin === "serve" && (!response || response.status() !== 200)) problem(`${where}: status ${response?.status()}`);

    // Links: every one leads to a page of the site, and a fragment to an element of it.
    const links = await page.$$eval("a[href]", (as) => as.map((a) => a.href));
    for (const href of links) {
      const url = new URL(href);
      const target = decodeURIComponent(url.href.slice(base.length).split("#")[0]);
      if (!href.startsWith(base) || !pages.includes(target)) {
        problem(`${where}: link to ${href} is not a page of the site`);
      }
    }

    // Switches: each choice shows its figure, drawn; every other visible figure drawn too.
    for (const select of await page.$$("select.switch")) {
      const values = await select.$$eval("option", (os) => os.map((o) => o.value));
      const group = await select.getAttribute("data-group");
      for (const value of values) {
        await select.selectOption(value);
        const shown = await page.$$eval(`#${group} [data-key]`, (items) =>
          items.filter((i) => !i.hidden).map((i) => i.getAttribute("data-key")));
        if (shown.length !== 1 || shown[0] !== value) problem(`${where}: switch to ${value} shows ${JSON.stringify(shown)}`);
        await drawn(page, `#${group} [data-key]:not([hidden]) img`, `${where} [${value}]`);
      }
    }
    await drawn(page, "figure:not([hidden]) img", where);

    if (path === "index.html") await tagFilter(page, where);
    if (origin === "file" && shotName(path)) {
      await page.screenshot({ path: join(shotsDir, shotName(path)), fullPage: true });
    }
    await page.close();
  }
  await context.close();
}
await browser.close();

// Every image matched by `selector` that is displayed has loaded with a size.
async function drawn(page, selector, where) {
  for (const img of await page.$$(selector)) {
    if (!(await img.isVisible())) continue;
    await img.scrollIntoViewIfNeeded();
    await page.waitForFunction((i) => i.complete, img, { timeout: 10000 }).catch(() => {});
    const size = await img.evaluate((i) => [i.complete, i.naturalWidth, i.naturalHeight, i.getAttribute("src")]);
    if (!size[0] || size[1] === 0 || size[2] === 0) problem(`${where}: figure ${size[3]} not drawn`);
  }
}

// The index's tag filter: each tag shows the rows expected, "all" every row.
async function tagFilter(page, where) {
  const rows = () => page.$$eval("tr[data-tags]", (rs) => rs.filter((r) => !r.hidden).length);
  if ((await rows()) !== expected.rows) problem(`${where}: ${await rows()} rows shown at first, expected ${expected.rows}`);
  for (const [tag, count] of Object.entries(expected.filter)) {
    await page.selectOption("#tag-filter", tag);
    const shown = await rows();
    if (shown !== count) problem(`${where}: filter ${tag} shows ${shown} rows, expected ${count}`);
    const text = await page.textContent("#shown");
    if (text !== `${count} of ${expected.rows} sessions shown`) problem(`${where}: filter ${tag} says "${text}"`);
  }
  await page.selectOption("#tag-filter", "");
  if ((await rows()) !== expected.rows) problem(`${where}: "all sessions" shows ${await rows()} rows`);
}

// The pages kept as screenshots.
function shotName(path) {
  if (path === "index.html") return "index.png";
  if (["latency.html", "compare.html", "environment.html"].includes(path)) return path.replace(".html", ".png");
  if (path.startsWith("bench/") && path.startsWith("bench/0-")) return "benchmark.png";
  if (path.startsWith("monitors/")) return "monitors.png";
  return null;
}

for (const p of problems) console.log(p);
console.log(`${pages.length} pages checked from file:// and ${serveUrl}; ${problems.length} problems`);
process.exitCode = problems.length ? 1 : 0;
