// Opens every page of a `vernier report` site in headless Chromium (Debian's, through
// playwright-core), from file:// and from `vernier serve`, and checks what a reader sees:
// no console error, no failed request, no request outside the site, no dialog (an injected
// script would open one), every figure drawn (an image with a size, whose SVG has marks and
// text), every link leading to a page of the site and a fragment to an element of it, the tag
// filter doing what it says, a page per monitor key showing one figure with or without the
// script, and a layout without sideways scrolling,
// overlong table cells or empty sections at 1300x900 and 1920x1080. Screenshots of the main
// pages (at 1300 px) go to SHOTS.
//
// node site.mjs SITE_DIR SERVE_URL SHOTS_DIR EXPECTED_JSON (SERVE_URL "-": from file:// only)
// EXPECTED_JSON: {"filter": {"TAG": rows}, "rows": N, "flames": N (flame graphs at least)}. Prints one line per problem and exits 1
// if there is any.

import { chromium } from "playwright-core";
import { readdirSync, statSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";

const [siteDir, serveUrl, shotsDir, expectedJson] = process.argv.slice(2);
// Every page is checked at both; screenshots are taken at the first.
const VIEWPORTS = [{ width: 1300, height: 900 }, { width: 1920, height: 1080 }];
const MAX_LINES = 4;
const expected = JSON.parse(expectedJson);
const problems = [];
const problem = (text) => problems.push(text);

function filesOf(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesOf(path));
    else out.push(relative(siteDir, path));
  }
  return out.sort();
}

// Every file of the site (a link may lead to a download, such as a session's runs as CSV);
// the pages among them are opened.
const files = filesOf(siteDir);
const pages = files.filter((f) => f.endsWith(".html"));
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
const origins = [["file", "file://" + siteDir.replace(/\/$/, "") + "/"]];
if (serveUrl !== "-") origins.push(["serve", serveUrl.replace(/\/$/, "") + "/"]);
for (const [origin, base] of origins) {
  const context = await browser.newContext({ viewport: VIEWPORTS[0] });
  const ids = new Map(); // page -> the ids of its elements
  const fragments = []; // [where, page, fragment] of every link with a fragment
  const figures = new Map(); // figure URL -> the page that shows it
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

    // Links: every one leads to a page of the site, and a fragment to an element of it
    // (checked once every page's ids are known).
    ids.set(path, new Set(await page.$$eval("[id]", (es) => es.map((e) => e.id))));
    const links = await page.$$eval("a[href]", (as) => as.map((a) => a.href));
    for (const href of links) {
      const url = new URL(href);
      const target = decodeURIComponent(url.href.slice(base.length).split("#")[0]);
      if (!href.startsWith(base) || !files.includes(target)) {
        problem(`${where}: link to ${href} is not a file of the site`);
      } else if (url.hash) {
        fragments.push([where, target, decodeURIComponent(url.hash.slice(1))]);
      }
    }
    for (const src of await page.$$eval("img", (is) => is.map((i) => i.src))) {
      if (!figures.has(src)) figures.set(src, where);
    }

    // A benchmark's monitors: a page per key, one figure on it, within three screens of the
    // smaller window; the key chosen by the links of the index and the benchmark page is
    // context switches (the first key monitor recorded), not the first key by name.
    if (path.startsWith("monitors/")) await monitorPage(page, where);
    await drawn(page, "figure:not([hidden]) img", where);
    await drawnInline(page, where);

    if (path === "index.html") {
      await tagFilter(page, where);
      // Each benchmark's monitors open on context switches when they were recorded.
      for (const href of await page.$$eval('a[href^="monitors/"]', (as) => as.map((a) => a.href))) {
        const target = await context.newPage();
        await target.goto(href, { waitUntil: "load" });
        const [title, keys] = await target.evaluate(() => [document.querySelector("h1").textContent, document.querySelector("p.keys").textContent]);
        if (keys.includes("stat.ctxt") && !title.endsWith(": stat.ctxt")) problem(`${where}: ${href} opens on "${title}", not stat.ctxt`);
        await target.close();
      }
    }
    const shot = origin === "file" && (await shotName(path, page));
    if (shot) await page.screenshot({ path: join(shotsDir, shot), fullPage: true });
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await layout(page, `${where} at ${viewport.width}x${viewport.height}`);
    }
    await page.close();
  }
  for (const [where, target, fragment] of fragments) {
    if (!ids.get(target)?.has(fragment)) problem(`${where}: link to ${target}#${fragment}: no such element`);
  }
  // Every figure opened on its own: the SVG parses and has marks (lines, paths, shapes) and
  // text (title, axes, legend), not just an empty frame.
  const viewer = await context.newPage();
  let flames = 0;
  // A document that is not HTML makes Chromium ask for /favicon.ico, which the site need not
  // have; any other failed request is a problem.
  viewer.on("response", (r) => {
    if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) problem(`${origin}: ${r.status()} ${r.url()}`);
  });
  // A flame graph opened on its own runs inferno's script (search, zoom): without an error.
  let viewing = "";
  // (A failed request is reported by the response handler below, the favicon's excepted.)
  viewer.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problem(`${viewing}: console: ${m.text()}`);
  });
  viewer.on("pageerror", (e) => problem(`${viewing}: script error: ${e.message}`));
  for (const [src, where] of figures) {
    if (!src.startsWith(base)) continue; // reported above
    viewing = `${where}: figure ${src}`;
    const response = await viewer.goto(src, { waitUntil: "load" });
    if (origin === "serve" && (!response || response.status() !== 200)) problem(`${where}: figure ${src}: status ${response?.status()}`);
    if (!src.endsWith(".svg")) continue;
    const [marks, texts, parsed] = await viewer.evaluate(() => [
      document.querySelectorAll("path, polyline, polygon, line, rect, circle").length,
      Array.from(document.querySelectorAll("text")).filter((t) => t.textContent.trim()).length,
      document.documentElement.localName === "svg" && !document.querySelector("parsererror"),
    ]);
    if (!parsed || marks < 5 || texts < 3) problem(`${where}: figure ${src} is not drawn (${marks} marks, ${texts} texts)`);
    if (/\/flame\/[^/]*\.svg$/.test(src)) {
      // inferno's init ran: it found its search button and filled in the frames' names.
      const ready = await viewer.evaluate(() => typeof search_prompt === "function" && typeof searchbtn !== "undefined" && searchbtn !== null);
      if (!ready) problem(`${where}: flame graph ${src}: its script did not start`);
      flames += 1;
    }
  }
  if (flames < (expected.flames ?? 0)) problem(`${origin}: ${flames} flame graphs opened, ${expected.flames} expected`);
  await viewer.close();
  await context.close();
}
await browser.close();

// The layout a reader sees at the widths of a laptop and of a desktop screen: the page never
// scrolls sideways (a wide table scrolls inside its own box, and none of this site's tables
// needs to), no table cell is taller than MAX_LINES lines of its text (a long warning or
// option string belongs in a list or wraps at its separators), and no heading stands over an
// empty section (its only content an explanatory `.about` sentence, or nothing).
async function layout(page, where) {
  const faults = await page.evaluate((maxLines) => {
    const out = [];
    const shown = (e) => e.getClientRects().length > 0;
    const width = document.documentElement.scrollWidth;
    if (width > innerWidth) out.push(`the page scrolls sideways: ${width} px wide in a ${innerWidth} px window`);
    for (const box of document.querySelectorAll(".scroll")) {
      if (shown(box) && box.scrollWidth > box.clientWidth) {
        out.push(`a table is wider than the page (${box.scrollWidth} px in ${box.clientWidth}): ${box.querySelector("tr")?.textContent.slice(0, 60)}`);
      }
    }
    // Long free text from the machine (td.long: an environment's kernel command line) takes
    // the lines it needs.
    for (const cell of document.querySelectorAll("td:not(.long)")) {
      if (!shown(cell)) continue;
      const range = document.createRange();
      range.selectNodeContents(cell);
      const height = range.getBoundingClientRect().height;
      const style = getComputedStyle(cell);
      const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
      if (height > maxLines * line) out.push(`a table cell is ${(height / line).toFixed(1)} lines tall: "${cell.textContent.slice(0, 60)}"`);
    }
    for (const heading of document.querySelectorAll("h1, h2, h3, h4")) {
      if (!shown(heading)) continue;
      const level = Number(heading.tagName[1]);
      let content = false;
      for (let e = heading.nextElementSibling; e && !content; e = e.nextElementSibling) {
        const sub = /^H[1-6]$/.test(e.tagName);
        if (sub && Number(e.tagName[1]) <= level) break;
        content = !sub && !e.matches(".about");
      }
      if (!content) out.push(`heading "${heading.textContent}" has nothing under it`);
    }
    return out;
  }, MAX_LINES);
  for (const fault of faults) problem(`${where}: ${fault}`);
}

// Every image matched by `selector` that is displayed has loaded with a size.
async function drawn(page, selector, where) {
  for (const img of await page.$$(selector)) {
    if (!(await img.isVisible())) continue;
    await img.scrollIntoViewIfNeeded();
    // Chromium reports a lazy image whose load is still deferred as complete, with no size:
    // wait for the size.
    await page.waitForFunction((i) => i.complete && i.naturalWidth > 0, img, { timeout: 10000 }).catch(() => {});
    const size = await img.evaluate((i) => [i.complete, i.naturalWidth, i.naturalHeight, i.getAttribute("src")]);
    if (!size[0] || size[1] === 0 || size[2] === 0) problem(`${where}: figure ${size[3]} not drawn`);
  }
}

// Every inline SVG that is displayed has marks and a size.
async function drawnInline(page, where) {
  const empty = await page.$$eval("svg", (svgs) => svgs
    .filter((s) => s.getClientRects().length > 0)
    .filter((s) => {
      const box = s.getBoundingClientRect();
      const marks = s.querySelectorAll("path, polyline, polygon, line, rect, circle, text").length;
      return box.width === 0 || box.height === 0 || marks === 0;
    }).length);
  if (empty) problem(`${where}: ${empty} inline svg not drawn`);
}

// A monitor page shows one figure, with or without the script (checked in a context that
// runs none), and is at most three screens of 900 px tall.
async function monitorPage(page, where) {
  const figures = await page.$$eval("img", (is) => is.filter((i) => i.getClientRects().length > 0).length);
  if (figures > 1) problem(`${where}: ${figures} figures shown, one expected`);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  if (height > 3 * VIEWPORTS[0].height) problem(`${where}: ${height} px tall, more than three screens`);
  const bare = await page.context().browser().newContext({ viewport: VIEWPORTS[0], javaScriptEnabled: false });
  const without = await bare.newPage();
  await without.goto(page.url(), { waitUntil: "load" });
  const shown = await without.$$eval("img", (is) => is.filter((i) => i.getClientRects().length > 0).length);
  if (shown > 1) problem(`${where}: without the script ${shown} figures shown, one expected`);
  const barely = await without.evaluate(() => document.documentElement.scrollHeight);
  if (barely > 3 * 900) problem(`${where}: without the script ${barely} px tall`);
  await bare.close();
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
  // The filter is kept in the address: the page opened with it shows the same rows.
  const [tag, count] = Object.entries(expected.filter)[0];
  await page.selectOption("#tag-filter", tag);
  const url = page.url();
  if (new URL(url).searchParams.get("tag") !== tag) problem(`${where}: the address ${url} does not keep the filter ${tag}`);
  // Opened in a page of its own, so that this page's loads are not cut short.
  const again = await page.context().newPage();
  await again.goto(url, { waitUntil: "load" });
  const shown = await again.$$eval("tr[data-tags]", (rs) => rs.filter((r) => !r.hidden).length);
  if (shown !== count) problem(`${where}: ${url} shows ${shown} rows, expected ${count}`);
  if ((await again.inputValue("#tag-filter")) !== tag) problem(`${where}: ${url} does not select ${tag}`);
  await again.close();
  await page.selectOption("#tag-filter", "");
  // A click on a heading sorts the table by that column, a second click the other way.
  const runs = () => page.$$eval("#sessions tbody tr", (rs) => rs.map((r) => Number(r.cells[8].textContent)));
  const heading = page.locator("#sessions th", { hasText: /^runs$/ });
  await heading.click();
  const up = await runs();
  if (up.some((v, i) => i > 0 && up[i - 1] > v)) problem(`${where}: sorted by runs: ${up}`);
  await heading.click();
  const down = await runs();
  if (down.some((v, i) => i > 0 && down[i - 1] < v)) problem(`${where}: sorted by runs, descending: ${down}`);
}

// The pages kept as screenshots: the index, latency, compare, environment, hackbench's page and
// the page of hackbench's monitors that its links open (context switches).
async function shotName(path, page) {
  if (["index.html", "latency.html", "compare.html", "environment.html"].includes(path)) return path.replace(".html", ".png");
  if (/^bench\/\d+-hackbench\.html$/.test(path)) return "benchmark.png";
  if (path.startsWith("monitors/") && (await page.textContent("h1")).includes("hackbench: stat.ctxt")) return "monitors.png";
  return null;
}

for (const p of problems) console.log(p);
console.log(`${pages.length} pages checked from ${origins.map((o) => o[1]).join(" and ")}; ${problems.length} problems`);
process.exitCode = problems.length ? 1 : 0;
