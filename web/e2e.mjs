// End-to-end test of the built viewer (dist/), driving Debian's chromium with playwright-core:
// open a share link of the Crypt of Valdris, play it to the boss by clicking, check the
// visited path and the bot's prompts, save a screenshot under target/e2e/.
//
// With ZG_BENCH=1 it also measures the first frame and the median pan frame of generated
// 1,000- and 5,000-room zones (figures for BENCHMARKS.md); timings are printed, never asserted.
//
// Usage: node web/e2e.mjs [dist dir]   (cargo xtask test runs it after `trunk build`)

import { createServer } from "node:http";
import { readFile, mkdir } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import { extname, join, resolve } from "node:path";
import { chromium } from "playwright-core";

const root = resolve(new URL("..", import.meta.url).pathname);
const dist = resolve(process.argv[2] ?? join(root, "dist"));
const outDir = join(root, "target", "e2e");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

const types = {
  ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm",
  ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png",
};

// A static host with the single-page fallback the server gives /run/{token}, and the
// server's run endpoint for one fixed run: web/fixtures/run-demo.json, the body of
// `GET /api/runs/{token}` ({view, status}) for the Crypt waiting at its fork after a failed
// Perception roll, written from the real core by zonegraph-web's test
// `the_e2e_run_fixture_is_current` (ZONEGRAPH_BLESS=1 cargo test -p zonegraph-web).
const runFixture = () => readFile(join(root, "web", "fixtures", "run-demo.json"), "utf8");

const server = createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  if (path.startsWith("/api/runs/")) {
    const found = path === "/api/runs/demo";
    res.writeHead(found ? 200 : 404, { "content-type": "application/json" });
    res.end(found ? await runFixture() : "{}");
    return;
  }
  const file = extname(path) ? join(dist, path) : join(dist, "index.html");
  if (!file.startsWith(dist)) { res.writeHead(403).end(); return; }
  try {
    const body = await readFile(file);
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404).end("not found");
  }
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const base = `http://127.0.0.1:${server.address().port}/`;

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`test ${name} ... ok`);
  } catch (e) {
    failed += 1;
    console.log(`test ${name} ... FAILED\n  ${e.stack ?? e}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

function shareLink(json) {
  const b64 = deflateSync(Buffer.from(json, "utf8"), { level: 9 })
    .toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return `z1:${b64}`;
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--no-first-run"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
await mkdir(outDir, { recursive: true });

await check("crypt share link plays to the boss by clicking", async () => {
  const crypt = await readFile(join(root, "zones", "crypt_valdris.json"), "utf8");
  await page.goto(base + "#" + shareLink(crypt));
  await page.waitForFunction(() => document.querySelectorAll("g.room").length === 8);
  const head = await page.textContent(".zone-head");
  assert(head.includes("Crypt of Valdris") && head.includes("from a share link"), head);

  await page.click("button:has-text('Start run')");
  const prompts = [];
  for (let step = 0; step < 20; step++) {
    const over = await page.evaluate(() =>
      document.querySelector(".transcript li .reply")?.textContent.includes("Victory!"));
    if (over) break;
    const option = await page.$("g.room.option.open");
    if (option) {
      // A fork: the prompt offers `!zone go <n>`; click the first open option on the map.
      prompts.push(await page.textContent(".transcript li .reply"));
      await option.click();
    } else {
      await page.click("button:has-text('Advance')");
    }
    await page.waitForFunction((n) => document.querySelectorAll(".transcript li").length > n, step + 1);
  }
  const last = await page.textContent(".transcript li .reply");
  assert(last.includes("Victory!") && last.includes("Valdris's Sanctum"), `last reply: ${last}`);
  assert(prompts.length >= 1 && prompts[0].includes("!zone go"), `fork prompt: ${prompts[0]}`);
  const said = await page.$$eval(".transcript .said", (els) => els.map((e) => e.textContent).reverse());
  assert(said[0] === "› !zone enter crypt_valdris", said.join(" | "));
  assert(said.includes("› go 1"), `a fork option was clicked: ${said.join(" | ")}`);
  // The visited path: numbered in order from the entry to the boss, walked passages drawn.
  const path = await page.$$eval("g.room.visited", (els) => els
    .map((e) => [Number(e.querySelector(".visit-badge text").textContent), e.getAttribute("data-node")])
    .sort((a, b) => a[0] - b[0]));
  assert(path[0][1] === "crypt_valdris.entry", JSON.stringify(path));
  assert(path[path.length - 1][1] === "crypt_valdris.boss", JSON.stringify(path));
  path.forEach(([n], i) => assert(n === i + 1, `visit numbers in order: ${JSON.stringify(path)}`));
  const walked = await page.$$eval("g.passage.walked", (els) => els.length);
  assert(walked === path.length - 1, `walked passages ${walked} for ${path.length} rooms`);
  await page.screenshot({ path: join(outDir, "crypt-boss.png") });
  console.log(`  path: ${path.map((p) => p[1].split(".")[1]).join(" → ")}`);
});

await check("a bad share link shows a clear message", async () => {
  await page.goto(base + "#z1:AAAA");
  await page.waitForSelector(".problem", { state: "attached" });
  const text = await page.textContent(".problem");
  assert(text.includes("cannot be opened"), text);
});

await check("the player's run map follows GET /api/runs/{token}", async () => {
  await page.goto(base + "run/demo");
  await page.waitForSelector("g.room.current", { state: "attached" });
  assert(await page.getAttribute("g.room.current", "data-node") === "crypt_valdris.fork", "current room");
  assert((await page.$$("g.room")).length === 7, "the undiscovered secret is absent");
  assert((await page.$$("g.room.visited")).length === 3, "three rooms visited");
  assert(await page.getAttribute("g.room.option.open", "data-node") === "crypt_valdris.main_hall", "option 1");
  // The Side Chapel, behind the failed Perception check, is drawn as an unknown room.
  assert((await page.$$("g.room.k-unknown")).length === 1, "one unknown room");
  assert(await page.getAttribute("g.room.k-unknown", "aria-label") === "Unknown room", "its name");
  assert((await page.textContent("g.room.k-unknown .label")) === "?", "drawn as ?");
  const prompt = await page.textContent(".prompt");
  assert(prompt.includes("Branching Passage") && prompt.includes("!zone go") &&
    prompt.includes("2. something (locked"), prompt);
  // Nothing the player view does not hold: no DC, no hidden room's id or label.
  const shown = await page.evaluate(() => [document.body.textContent,
    ...[...document.querySelectorAll("[aria-label], [title]")].flatMap((e) =>
      [e.getAttribute("aria-label"), e.getAttribute("title")])].join("\n"));
  for (const bad of ["DC 12", "DC 15", "Side Chapel", "side_chapel", "Hidden Reliquary", "secret_chamber"]) {
    assert(!shown.includes(bad), `the run page shows ${bad}`);
  }
  await page.screenshot({ path: join(outDir, "run-map.png") });
  // The unknown room's details, from the view only.
  await page.click("g.room.k-unknown");
  await page.waitForFunction(() => document.querySelector(".details")?.textContent.includes("unknown room"));
  await page.screenshot({ path: join(outDir, "run-map-unknown.png") });
  const before = errors.length;
  await page.goto(base + "run/nope");
  await page.waitForSelector(".problem", { state: "attached" });
  assert((await page.textContent(".problem")).includes("No run with this link"), "404 message");
  // The browser logs the expected 404 itself.
  errors.splice(before, errors.length - before, ...errors.slice(before).filter((e) => !e.includes("404")));
});

await check("dark theme and SVG export", async () => {
  await page.goto(base + "#zone/sunless_deep");
  await page.waitForSelector("g.room", { state: "attached" });
  await page.click(".theme-toggle");
  await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(outDir, "sunless-dark.png") });
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.click("button[aria-label='Export SVG']"),
  ]);
  const file = join(outDir, "sunless_deep.svg");
  await download.saveAs(file);
  const svg = await readFile(file, "utf8");
  assert(svg.includes("<svg") && svg.includes("viewBox") && svg.includes(".zg-map"), svg.slice(0, 200));
  await page.click(".theme-toggle");
});

// Frame timings of generated zones: the app builds `synth::layered` at #bench/<rooms>.
async function measure(rooms) {
  await page.goto(base);
  await page.waitForSelector(".cards", { state: "attached" });
  const first = await page.evaluate(async (rooms) => {
    const t0 = performance.now();
    location.hash = `bench/${rooms}`;
    // Large maps draw only the rooms near the screen: wait for the generated zone's map.
    while (!(document.querySelector(".zone-head h1")?.textContent.startsWith("Synthetic") &&
             document.querySelectorAll("g.room").length > 0)) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - t0;
  }, rooms);
  const box = await page.locator(".map-frame").boundingBox();
  const pan = await page.evaluate(async ({ x, y }) => {
    const svg = document.querySelector(".map-frame");
    const ev = (type, cx) => svg.dispatchEvent(new PointerEvent(type, {
      clientX: cx, clientY: y, bubbles: true, button: 0, pointerId: 1,
    }));
    ev("pointerdown", x);
    const frames = [];
    for (let i = 1; i <= 60; i++) {
      const t = performance.now();
      ev("pointermove", x + i * 4);
      await new Promise((r) => requestAnimationFrame(() => r()));
      frames.push(performance.now() - t);
    }
    ev("pointerup", x + 240);
    frames.sort((a, b) => a - b);
    return { median: frames[30], p95: frames[57] };
  }, { x: box.x + box.width / 2, y: box.y + box.height / 2 });
  const heap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
  const drawn = await page.evaluate(() => document.querySelectorAll("g.room").length);
  return { rooms, first, ...pan, drawn, domNodes: await page.evaluate(() => document.querySelectorAll("*").length), heap };
}

if (process.env.ZG_BENCH) {
  for (const rooms of [1000, 5000]) {
    const m = await measure(rooms);
    console.log(`bench ${rooms} rooms: first frame ${m.first.toFixed(0)} ms, median pan frame ` +
      `${m.median.toFixed(1)} ms (p95 ${m.p95.toFixed(1)} ms), ${m.drawn} rooms drawn, ${m.domNodes} DOM elements`);
    if (rooms === 1000) await page.screenshot({ path: join(outDir, "bench-1000.png") });
  }
}

await check("no errors in the console", async () => {
  assert(errors.length === 0, errors.join("\n"));
});

await browser.close();
server.close();
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
