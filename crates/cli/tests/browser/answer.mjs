// The ten-second test: a reader opens the index of a report of two kernels at 1400x900 and,
// without clicking or scrolling, sees each planted change with its sign, its interval and its
// verdict; one click on a change leads to the page with the runs behind it, one click on a
// session's id to its page. With several kernels, each answer (NEW against the first) is on
// the index, the first on the first screen, the others after it, and each leads to its
// evidence and its compare page. Screenshots of the first screen, the whole index, the
// compare, a benchmark and a session page go to SHOTS.
//
// node answer.mjs SITE_DIR SHOTS_DIR EXPECTED_JSON
// EXPECTED_JSON: [{"id", "page", "changes": [{"label", "change", "interval", "verdict"}]}], an
// answer each (its section's id and its compare page), the changes largest first, as
// `vernier compare` computed them. Prints one line per problem and exits 1 if there is any.

import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const [siteDir, shotsDir, expectedJson] = process.argv.slice(2);
const answers = JSON.parse(expectedJson);
const problems = [];
const problem = (text) => problems.push(text);
mkdirSync(shotsDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const page = await context.newPage();
page.on("pageerror", (e) => problem(`script error: ${e.message}`));
const index = "file://" + siteDir.replace(/\/$/, "") + "/index.html";
await page.goto(index, { waitUntil: "load" });
await page.screenshot({ path: join(shotsDir, "answer-first-screen.png") });
await page.screenshot({ path: join(shotsDir, "answer-index.png"), fullPage: true });

for (const [a, answer] of answers.entries()) {
  const expected = answer.changes;
  const name = `answer ${a + 1} (${answer.page})`;
  await page.goto(index, { waitUntil: "load" });
  // Each change's line, as a reader sees it, and where it is.
  const rows = await page.$$eval(`#${answer.id} ol.changes > li`, (items) => items.map((li) => {
    const box = li.getBoundingClientRect();
    const own = li.cloneNode(true);
    own.querySelectorAll(".touching").forEach((u) => u.remove());
    return { text: own.textContent.replace(/\s+/g, " ").trim(), bottom: box.bottom, visible: box.height > 0 };
  }));
  if (rows.length !== expected.length) problem(`${name}: ${rows.length} changes shown, expected ${expected.length}: ${JSON.stringify(rows)}`);
  for (const [i, want] of expected.entries()) {
    const line = `${want.label} ${want.change} ${want.interval} ${want.verdict}`;
    const row = rows[i];
    if (!row || row.text !== line) problem(`${name} change ${i + 1}: "${row?.text}", expected "${line}"`);
    else if (!row.visible) problem(`${name} change ${i + 1} "${line}" is not visible`);
    else if (a === 0 && row.bottom > 900) problem(`${name} change ${i + 1} "${line}" is not on the first screen (bottom ${row.bottom} px)`);
  }

  // One click from each change reaches the runs behind it: the benchmark's page at the
  // configuration's row of medians, with the configuration in its tables and its runs drawn.
  for (const [i, want] of expected.entries()) {
    await page.goto(index, { waitUntil: "load" });
    const link = (await page.$$(`#${answer.id} ol.changes > li > a.config`))[i];
    if (!link) { problem(`${name} change ${i + 1} has no link`); continue; }
    await Promise.all([page.waitForLoadState("load"), link.click()]);
    const url = page.url();
    if (!/\/bench\/[^/]+\.html#c-[a-z0-9-]+$/.test(url)) problem(`${name} change ${i + 1} leads to ${url}, not a configuration's row of a benchmark page`);
    // The row of the configuration's medians, its target.
    // The row names the configuration by the options that vary; those every configuration of
    // the page shares are said once above the tables.
    const [target, shared] = await page.evaluate(() => {
      const e = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      const p = [...document.querySelectorAll("main p")].find((x) => x.textContent.startsWith("Every configuration below has"));
      return [e ? e.closest("tr").textContent.replace(/\s+/g, "") : null, p ? p.textContent.replace(/\s+/g, "") : ""];
    });
    if (target === null) problem(`${name} change ${i + 1}: ${url} has no element of its fragment`);
    else for (const o of want.label.split(":").slice(1)) if (!target.includes(o) && !shared.includes(o)) problem(`${name} change ${i + 1}: the row of ${url} does not show ${o}: ${target}`);
    const text = (await page.textContent("main")).replace(/\s+/g, "");
    const options = want.label.split(":").slice(1);
    for (const o of options) if (!text.includes(o)) problem(`${name} change ${i + 1}: ${url} does not show ${o}`);
    const runs = await page.$$eval("figure img", (is) => is.filter((i) => /-box\.svg$/.test(i.getAttribute("src"))).length);
    if (runs === 0) problem(`${name} change ${i + 1}: ${url} draws no runs`);
    if (a === 0 && i === 0) await page.screenshot({ path: join(shotsDir, "answer-benchmark.png"), fullPage: true });
  }

  // Its compare page, linked from the index, opens with the same changes.
  await page.goto(index, { waitUntil: "load" });
  if (!(await page.$(`main a[href="${answer.page}"]`))) problem(`${name}: the index does not link its compare page`);
  await page.goto(index.replace(/index\.html$/, answer.page), { waitUntil: "load" });
  const shown = await page.$$eval("ol.changes > li", (items) => items.length);
  if (shown !== expected.length) problem(`${name}: its compare page shows ${shown} changes, expected ${expected.length}`);
}

await page.goto(index.replace(/index\.html$/, "compare.html"), { waitUntil: "load" });
await page.screenshot({ path: join(shotsDir, "answer-compare.png"), fullPage: true });

// A session's page, one click from its id on the index: its configurations with their results.
await page.goto(index, { waitUntil: "load" });
await Promise.all([page.waitForLoadState("load"), page.click("#sessions td.id a")]);
if (!/\/sessions\/[0-9a-f-]+\.html$/.test(page.url())) problem(`a session id leads to ${page.url()}`);
const configurations = await page.$$eval("#configurations + p + div.scroll tbody tr", (rs) => rs.length);
if (configurations !== 3) problem(`${page.url()} lists ${configurations} configurations, expected 3`);
await page.screenshot({ path: join(shotsDir, "answer-session.png"), fullPage: true });
await browser.close();

for (const p of problems) console.log(p);
const checked = answers.map((a) => a.changes.length).join(" and ");
console.log(`${checked} changes checked in ${index}; ${problems.length} problems`);
process.exitCode = problems.length ? 1 : 0;
