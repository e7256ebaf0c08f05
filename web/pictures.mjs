// The README's pictures (docs/img/): each is a screenshot of a page that a real
// `zonegraph serve` serves, and beside it, in docs/img/<name>.json, a description of what the
// page draws, read from the map's SVG: its rooms (id, label, kind, position, marks) and
// passages (endpoints, lock, state, polyline), the heading and the legend. Positions are the
// drawing's own coordinates, not pixels, so fonts and anti-aliasing do not matter.
//
// The end-to-end test (web/e2e.mjs) checks each committed description against what the page
// draws now and fails, naming the command, when a picture has gone stale. The command writes
// both the screenshot and its description:
//
//   cargo xtask screenshots        (node web/pictures.mjs --write, after `trunk build`)
//
// `node web/pictures.mjs` without --write only checks. The server binary: $ZONEGRAPH_BIN,
// else $CARGO_TARGET_DIR/debug/zonegraph-under-test.

import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

export const root = resolve(new URL("..", import.meta.url).pathname);
const imgDir = join(root, "docs", "img");
/// The size the README shows them at (two side by side).
const VIEWPORT = { width: 1200, height: 750 };
export const REGENERATE = "cargo xtask screenshots";

/// `zonegraph serve --web <dist>` on a free loopback port, over the shipped zones and any
/// `extraZones` (paths), with a fresh database and an API token.
export async function startZonegraph({ zbin, dist, token, extraZones = [] }) {
  const work = await mkdtemp(join(tmpdir(), "zonegraph-e2e-"));
  await mkdir(join(work, "zones"));
  for (const f of await readdir(join(root, "zones"))) {
    if (f.endsWith(".json") && !f.endsWith(".schema.json")) {
      await copyFile(join(root, "zones", f), join(work, "zones", f));
    }
  }
  for (const f of extraZones) await copyFile(f, join(work, "zones", f.split("/").pop()));
  const db = join(work, "z.db");
  const child = spawn(zbin, ["serve", "--db", db, "--zones", join(work, "zones"), "--web", dist,
    "--listen", "127.0.0.1:0", "--api-token", token, "--rate-limit", "off", "--sandbox"],
  { stdio: ["ignore", "pipe", "inherit"] });
  const api = await new Promise((ok, fail) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) ok(m[1]);
    });
    child.on("exit", (code) => fail(new Error(`zonegraph serve exited (${code}): ${out}`)));
    child.on("error", (e) => fail(new Error(`cannot start ${zbin}: ${e.message}`)));
  });
  /// One chat line through `POST /api/command`: the replies' text.
  async function say(user, text) {
    const r = await fetch(`${api}/api/command`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ user, text }),
    });
    const body = await r.text();
    if (r.status !== 200) throw new Error(`${text}: ${r.status} ${body}`);
    return JSON.parse(body).replies.map((x) => x.text).join("\n");
  }
  async function stop() {
    child.kill("SIGTERM");
    await new Promise((ok) => child.once("exit", ok));
    await rm(work, { recursive: true, force: true });
  }
  return { api, work, db, child, say, stop };
}

/// A run of the Crypt of Valdris waiting at its first fork, as the run page's token: with
/// both options known (its Perception check passed: the second option is the Side Chapel),
/// or with `{ seen: false }` the second one only sensed (the check failed: "something
/// (locked …)", drawn as an unknown room). The roll depends on the run's id, which the server
/// draws at random, so players are tried in turn (each passes about half the time) until one's
/// run is the one asked for.
export async function cryptFork(say, who, { seen = true } = {}) {
  for (let i = 1; i <= 40; i++) {
    const user = `@${who}-${i}:e2e`;
    await say(user, "!zone enter crypt_valdris");
    const map = await say(user, "!zone map");
    const link = map.match(/\/run\/([0-9a-f]+)/);
    if (!link) throw new Error(`no run link in: ${map}`);
    let status = await say(user, "!zone status");
    for (let step = 0; step < 10 && !status.includes("!zone go"); step++) {
      await say(user, "!zone advance");
      status = await say(user, "!zone status");
    }
    if (!status.includes("!zone go")) throw new Error(`no fork reached: ${status}`);
    if (/^ {2}2\. Side Chapel\b/m.test(status) === seen) return link[1];
  }
  throw new Error(`40 runs of the Crypt in a row ${seen ? "failed" : "passed"} their Perception check`);
}

/// Waits until the map's first view is set (the frame after the rooms appear).
export function settled(p) {
  return p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/// What the page's map draws, from its SVG: rooms, passages and marks in the drawing's
/// coordinates (rounded to whole units), sorted, plus the heading, the fork's options in
/// words and the legend's entries.
export function describe(p) {
  return p.evaluate(() => {
    const svg = document.querySelector(".map-frame svg") ?? document.querySelector("svg");
    const r = Math.round;
    // By code point, so the order does not depend on the machine's locale.
    const byKey = (key) => (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
    const xy = (t) => (t?.match(/-?[\d.]+/g) ?? []).slice(0, 2).map(Number);
    const texts = (root, sel) => [...root.querySelectorAll(sel)].map((e) => e.textContent.trim()).filter((t) => t);
    const states = (g) => ["visited", "current", "option", "open", "locked", "walked"].filter((c) => g.classList.contains(c));
    const kindOf = (g, prefix) => [...g.classList].find((c) => c.startsWith(prefix)) ?? null;
    const rooms = [...svg.querySelectorAll("g.room")].map((g) => {
      const [x, y] = xy(g.getAttribute("transform"));
      return {
        id: g.getAttribute("data-node"),
        label: texts(g, ".label").join(" "),
        kind: kindOf(g, "k-"),
        says: texts(g, ".kind").join(" "),
        at: [r(x), r(y)],
        state: states(g),
      };
    }).sort(byKey((a) => a.id));
    // A passage's endpoints: the rooms whose boxes (184 × 56 around their centres) lie
    // nearest its first and last points.
    const centres = rooms.map((room) => [room.id, room.at]);
    const nearest = ([px, py]) => centres.map(([id, [x, y]]) =>
      [id, Math.hypot(Math.max(Math.abs(px - x) - 92, 0), Math.max(Math.abs(py - y) - 28, 0))])
      .sort((a, b) => a[1] - b[1])[0]?.[0] ?? null;
    const passages = [...svg.querySelectorAll("g.passage")].map((g) => {
      const nums = (g.querySelector(".line")?.getAttribute("d").match(/-?[\d.]+/g) ?? []).map(Number);
      const points = [];
      for (let i = 0; i + 1 < nums.length; i += 2) points.push([r(nums[i]), r(nums[i + 1])]);
      return {
        from: points.length ? nearest(points[0]) : null,
        to: points.length ? nearest(points[points.length - 1]) : null,
        lock: kindOf(g, "l-"),
        state: states(g),
        points: points.map((q) => q.join(",")).join(" "),
      };
    }).sort(byKey((a) => `${a.from} ${a.to} ${a.points}`));
    const marks = [...svg.querySelectorAll(".marks > g")].map((g) => {
      const [x, y] = xy(g.getAttribute("transform"));
      return { class: g.getAttribute("class"), room: g.getAttribute("data-node") || null, text: g.textContent.trim(), at: [r(x), r(y)] };
    }).sort(byKey((a) => JSON.stringify(a)));
    const legend = document.querySelector(".legend");
    return {
      heading: document.querySelector("h1")?.textContent.trim() ?? null,
      options: texts(document, ".choose"),
      rooms,
      passages,
      marks,
      legend: legend ? texts(legend, "li") : null,
    };
  });
}

/// A description as committed: one room, passage or mark a line, so a diff reads well.
export function format(description) {
  const lines = ["{"];
  const entries = Object.entries(description);
  entries.forEach(([key, value], i) => {
    const comma = i + 1 < entries.length ? "," : "";
    if (Array.isArray(value) && value.length > 0) {
      lines.push(`  ${JSON.stringify(key)}: [`);
      value.forEach((v, j) => lines.push(`    ${JSON.stringify(v)}${j + 1 < value.length ? "," : ""}`));
      lines.push(`  ]${comma}`);
    } else {
      lines.push(`  ${JSON.stringify(key)}: ${JSON.stringify(value)}${comma}`);
    }
  });
  lines.push("}");
  return lines.join("\n") + "\n";
}

/// The pictures: name, what it shows (for the description), and how to open it at `api`.
const PICTURES = [
  {
    name: "run-map",
    shows: "the run page (/run/{token}) of a Crypt of Valdris run at its first fork, 1200 × 750",
    async open(p, { api, say }) {
      const token = await cryptFork(say, "readme");
      await p.goto(`${api}/run/${token}`);
      await p.waitForSelector("g.room.current", { state: "attached" });
      await p.waitForFunction(() => document.querySelector(".link-state")?.textContent === "live");
    },
  },
  {
    name: "editor",
    shows: "the zone editor (#edit/zone/crypt_valdris) on the Crypt of Valdris, 1200 × 750",
    async open(p, { api }) {
      await p.goto(`${api}/#edit/zone/crypt_valdris`);
      await p.waitForFunction(() => document.querySelectorAll("g.room").length === 8);
    },
  },
];

/// Makes each picture against the server at `api` and compares its description with the
/// committed one. With `write`, saves the screenshot and the description in docs/img/;
/// otherwise saves the screenshot under `outDir` and returns one message per stale picture.
export async function pictures(browser, server, { write, outDir }) {
  const stale = [];
  for (const pic of PICTURES) {
    const ctx = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
    const p = await ctx.newPage();
    try {
      await pic.open(p, server);
      await settled(p);
      const now = format({ picture: `docs/img/${pic.name}.png`, shows: pic.shows, ...(await describe(p)) });
      const json = join(imgDir, `${pic.name}.json`);
      if (write) {
        await mkdir(imgDir, { recursive: true });
        await p.screenshot({ path: join(imgDir, `${pic.name}.png`) });
        await writeFile(json, now);
        console.log(`  wrote docs/img/${pic.name}.png and docs/img/${pic.name}.json`);
        continue;
      }
      await mkdir(outDir, { recursive: true });
      await p.screenshot({ path: join(outDir, `readme-${pic.name}.png`) });
      const committed = await readFile(json, "utf8").catch(() => null);
      if (committed === null) {
        stale.push(`docs/img/${pic.name}.json is missing: run \`${REGENERATE}\``);
      } else if (committed !== now) {
        stale.push(`docs/img/${pic.name}.png no longer shows what the page draws now ` +
          `(docs/img/${pic.name}.json differs): run \`${REGENERATE}\` and commit docs/img/\n${diff(committed, now)}`);
      }
    } finally {
      await ctx.close();
    }
  }
  return stale;
}

/// The lines only one side has, marked - (committed) and + (now); trailing commas ignored.
function diff(committed, now) {
  const clean = (t) => t.split("\n").map((l) => l.replace(/,$/, ""));
  const [a, b] = [clean(committed), clean(now)];
  const gone = a.filter((l) => !b.includes(l)).map((l) => `    - ${l.trim()}`);
  const added = b.filter((l) => !a.includes(l)).map((l) => `    + ${l.trim()}`);
  return [...gone, ...added].join("\n");
}

// Run by itself: `node web/pictures.mjs [--write] [dist dir]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { chromium } = await import("playwright-core");
  const args = process.argv.slice(2);
  const write = args.includes("--write");
  const dist = resolve(args.find((a) => !a.startsWith("--")) ?? join(root, "dist"));
  const zbin = process.env.ZONEGRAPH_BIN ??
    join(process.env.CARGO_TARGET_DIR ?? join(root, "target"), "debug", "zonegraph-under-test");
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
      "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
  const server = await startZonegraph({ zbin, dist, token: "pictures-token" });
  let stale = [];
  try {
    stale = await pictures(browser, server, { write, outDir: join(root, "target", "e2e") });
  } finally {
    await server.stop();
    await browser.close();
  }
  for (const s of stale) console.log(s);
  console.log(write ? "pictures: written" : `pictures: ${stale.length === 0 ? "current" : `${stale.length} stale`}`);
  process.exit(stale.length === 0 ? 0 : 1);
}
