// Side-by-side layout benchmark: zonegraph's core layout against dagre and ELK layered, on
// the same graphs (every room a 140 × 40 box, top to bottom, 50 px between boxes and
// between layers). Per zone and engine it prints the crossings of the drawn passages
// (counted on the polylines, every count checked against a brute-force count), the total
// passage length (outside the room boxes), the upward passages and the time per layout.
//
//   npm ci && node bench.mjs            (from web/layout-bench; figures in BENCHMARKS.md)
//   node bench.mjs --json               (one JSON line per zone instead of the table)
//   LAYOUT_JSON=bin node bench.mjs      (our side from another build of the example, e.g.
//                                        an older commit's, to compare)
//
// Our layout runs natively, through the core's `layout_json` example (built in release
// mode); its time is the median of repeated runs inside that process. The peers' times are
// medians of repeated runs in this Node process.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import dagre from "@dagrejs/dagre";
import ELK from "elkjs/lib/elk.bundled.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const BOX_W = 140;
const BOX_H = 40;
const GAP = 50;
/** Our cells in pixels: a box and a gap. */
const CELL_X = BOX_W + GAP;
const CELL_Y = BOX_H + GAP;
/** The viewer's cell and box in pixels, for the screen check (crates/zonegraph-web). */
const VIEW = { cellW: 226, cellH: 110, boxW: 184, boxH: 56, pad: 24 };
const SCREEN = [1400, 900];
/** The viewer's smallest opening scale and label size (camera.rs, map.css). */
const READABLE_SCALE = 0.62;
const LABEL_PX = 13;

const json = process.argv.includes("--json");

function zoneFiles() {
  const list = (dir, keep = () => true) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith(".json") && !f.endsWith(".schema.json") && keep(f))
      .sort()
      .map((f) => join(root, dir, f));
  return [
    ...list("zones"),
    ...list("web/fixtures/zones", (f) => f === "gilded_processional.json" || f === "pilgrim_road.json"),
    ...list("tests/fixtures/layout"),
  ];
}

/** Our layouts: the `layout_json` example, built here, or the binary `LAYOUT_JSON` names
 * (another build of it, e.g. of an older commit, to compare). */
function ours(files) {
  let bin = process.env.LAYOUT_JSON;
  if (!bin) {
    execFileSync("cargo", ["build", "-q", "--release", "-p", "zonegraph-core", "--example", "layout_json"], {
      cwd: root,
      stdio: "inherit",
    });
    const dir = process.env.CARGO_TARGET_DIR ?? join(root, "target");
    bin = join(dir, "release", "examples", "layout_json");
  }
  const out = execFileSync(bin, files, {
    cwd: root,
    maxBuffer: 1 << 28,
  });
  return out
    .toString()
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

// ---- geometry --------------------------------------------------------------------------

/** Proper crossing of segments p1p2 and p3p4 (interiors cross at one point); its point. */
function cross(p1, p2, p3, p4) {
  const d = (a, b, c) => (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  const eps = 1e-9;
  const d1 = d(p3, p4, p1), d2 = d(p3, p4, p2), d3 = d(p1, p2, p3), d4 = d(p1, p2, p4);
  if (((d1 > eps && d2 < -eps) || (d1 < -eps && d2 > eps)) &&
      ((d3 > eps && d4 < -eps) || (d3 < -eps && d4 > eps))) {
    const t = d1 / (d1 - d2);
    return [p1[0] + t * (p2[0] - p1[0]), p1[1] + t * (p2[1] - p1[1])];
  }
  return null;
}

/** Segments of every edge: `{ e, a, b, box }` with the edge's end boxes. */
function segments(drawing) {
  const segs = [];
  drawing.edges.forEach((ed, e) => {
    for (let i = 1; i < ed.points.length; i++) {
      segs.push({ e, a: ed.points[i - 1], b: ed.points[i] });
    }
  });
  return segs;
}

function inBox(p, c) {
  return Math.abs(p[0] - c[0]) <= BOX_W / 2 + 1e-6 && Math.abs(p[1] - c[1]) <= BOX_H / 2 + 1e-6;
}

/** Whether a crossing of edges `e` and `f` at `p` is a real one: not inside a room both
 * passages touch (passages that share a room meet there). */
function counts(drawing, e, f, p) {
  const E = drawing.edges[e], F = drawing.edges[f];
  if (E.from === E.to || F.from === F.to) return false;
  for (const r of [E.from, E.to]) {
    if ((r === F.from || r === F.to) && inBox(p, drawing.nodes.get(r))) return false;
  }
  return true;
}

/** Crossing points, deduplicated per pair of edges. */
function crossingsOf(drawing, pairs) {
  const seen = new Set();
  for (const [s, t] of pairs) {
    if (s.e === t.e) continue;
    const p = cross(s.a, s.b, t.a, t.b);
    if (!p || !counts(drawing, s.e, t.e, p)) continue;
    const [e, f] = s.e < t.e ? [s.e, t.e] : [t.e, s.e];
    seen.add(`${e},${f},${p[0].toFixed(3)},${p[1].toFixed(3)}`);
  }
  return seen.size;
}

function* allPairs(segs) {
  for (let i = 0; i < segs.length; i++) for (let j = i + 1; j < segs.length; j++) yield [segs[i], segs[j]];
}

/** Pairs whose bounding boxes share a bucket of a uniform grid (each pair once). */
function* bucketPairs(segs) {
  const size = 200;
  const buckets = new Map();
  segs.forEach((s, i) => {
    const [x0, x1] = [Math.min(s.a[0], s.b[0]), Math.max(s.a[0], s.b[0])];
    const [y0, y1] = [Math.min(s.a[1], s.b[1]), Math.max(s.a[1], s.b[1])];
    for (let gx = Math.floor(x0 / size); gx <= Math.floor(x1 / size); gx++) {
      for (let gy = Math.floor(y0 / size); gy <= Math.floor(y1 / size); gy++) {
        const k = `${gx},${gy}`;
        if (!buckets.has(k)) buckets.set(k, []);
        buckets.get(k).push(i);
      }
    }
  });
  const done = new Set();
  for (const list of buckets.values()) {
    for (let a = 0; a < list.length; a++) {
      for (let b = a + 1; b < list.length; b++) {
        const k = list[a] * segs.length + list[b];
        if (done.has(k)) continue;
        done.add(k);
        yield [segs[list[a]], segs[list[b]]];
      }
    }
  }
}

/** The crossings, counted fast and checked against the brute-force count. */
function crossings(drawing, name) {
  const segs = segments(drawing);
  const fast = crossingsOf(drawing, bucketPairs(segs));
  const brute = crossingsOf(drawing, allPairs(segs));
  if (fast !== brute) throw new Error(`${name}: ${fast} crossings by buckets, ${brute} by brute force`);
  return fast;
}

/** Length of the part of segment ab outside box c (Liang–Barsky clip). */
function insideLength(a, b, c) {
  const dx = b[0] - a[0], dy = b[1] - a[1];
  let t0 = 0, t1 = 1;
  const clip = (p, q) => {
    if (Math.abs(p) < 1e-12) return q >= 0;
    const r = q / p;
    if (p < 0) { if (r > t1) return false; if (r > t0) t0 = r; }
    else { if (r < t0) return false; if (r < t1) t1 = r; }
    return true;
  };
  const [l, r, t, bo] = [c[0] - BOX_W / 2, c[0] + BOX_W / 2, c[1] - BOX_H / 2, c[1] + BOX_H / 2];
  if (clip(-dx, a[0] - l) && clip(dx, r - a[0]) && clip(-dy, a[1] - t) && clip(dy, bo - a[1]) && t1 > t0) {
    return (t1 - t0) * Math.hypot(dx, dy);
  }
  return 0;
}

/** Total drawn passage length outside the rooms' boxes. */
function length(drawing) {
  let total = 0;
  for (const ed of drawing.edges) {
    if (ed.from === ed.to) continue;
    const [s, t] = [drawing.nodes.get(ed.from), drawing.nodes.get(ed.to)];
    for (let i = 1; i < ed.points.length; i++) {
      const [a, b] = [ed.points[i - 1], ed.points[i]];
      total += Math.hypot(b[0] - a[0], b[1] - a[1]) - insideLength(a, b, s) - insideLength(a, b, t);
    }
  }
  return total;
}

/** Passages whose room is drawn above the room they leave (the peers read top to bottom). */
function upwardOnScreen(drawing) {
  return drawing.edges.filter((ed) => drawing.nodes.get(ed.to)[1] < drawing.nodes.get(ed.from)[1] - 1e-6).length;
}

// ---- engines ---------------------------------------------------------------------------

function oursDrawing(l) {
  const nodes = new Map(l.nodes.map((n) => [n.id, [n.col * CELL_X, n.row * CELL_Y]]));
  const edges = l.edges.map((e) => ({
    from: e.from,
    to: e.to,
    points: e.points.map(([x, y]) => [x * CELL_X, y * CELL_Y]),
    back: e.route === "back",
  }));
  return { nodes, edges };
}

function timed(run) {
  const times = [];
  const start = performance.now();
  while (times.length < 1000 && (times.length < 5 || performance.now() - start < 200)) {
    const t = performance.now();
    run();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

async function timedAsync(run) {
  const times = [];
  const start = performance.now();
  while (times.length < 200 && (times.length < 5 || performance.now() - start < 200)) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

function dagreLayout(l) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: GAP, ranksep: GAP, edgesep: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of l.nodes) g.setNode(n.id, { width: BOX_W, height: BOX_H });
  l.edges.forEach((e, i) => g.setEdge(e.from, e.to, {}, `e${i}`));
  dagre.layout(g);
  return g;
}

function dagreDrawing(l) {
  const g = dagreLayout(l);
  const nodes = new Map(l.nodes.map((n) => [n.id, [g.node(n.id).x, g.node(n.id).y]]));
  const edges = l.edges.map((e, i) => ({
    from: e.from,
    to: e.to,
    points: g.edge({ v: e.from, w: e.to, name: `e${i}` }).points.map((p) => [p.x, p.y]),
  }));
  return { nodes, edges };
}

const elk = new ELK();

function elkGraph(l) {
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.spacing.nodeNode": String(GAP),
      "elk.layered.spacing.nodeNodeBetweenLayers": String(GAP),
    },
    children: l.nodes.map((n) => ({ id: n.id, width: BOX_W, height: BOX_H })),
    edges: l.edges.map((e, i) => ({ id: `e${i}`, sources: [e.from], targets: [e.to] })),
  };
}

async function elkDrawing(l) {
  const out = await elk.layout(elkGraph(l));
  const nodes = new Map(out.children.map((c) => [c.id, [c.x + c.width / 2, c.y + c.height / 2]]));
  const byId = new Map(out.edges.map((e) => [e.id, e]));
  const edges = l.edges.map((e, i) => {
    const sec = byId.get(`e${i}`).sections?.[0];
    const points = sec
      ? [sec.startPoint, ...(sec.bendPoints ?? []), sec.endPoint].map((p) => [p.x, p.y])
      : [nodes.get(e.from), nodes.get(e.to)];
    return { from: e.from, to: e.to, points };
  });
  return { nodes, edges };
}

/** Our drawing on a 1400 × 900 screen as the viewer opens it (camera.rs `opening`): the
 * share of rooms on screen and the labels' height in pixels. */
function screen(l) {
  const xs = [], ys = [];
  for (const n of l.nodes) { xs.push(n.col); ys.push(n.row); }
  for (const e of l.edges) for (const [x, y] of e.points) { xs.push(x); ys.push(y); }
  const [minX, maxX, minY, maxY] = [Math.min(0, ...xs), Math.max(0, ...xs), Math.min(0, ...ys), Math.max(0, ...ys)];
  const dw = 2 * VIEW.pad + VIEW.boxW + (maxX - minX) * VIEW.cellW;
  const dh = 2 * VIEW.pad + VIEW.boxH + (maxY - minY) * VIEW.cellH;
  const fit = Math.min(SCREEN[0] / dw, SCREEN[1] / dh, 1.25);
  if (fit >= READABLE_SCALE) return { share: 1, label: LABEL_PX * fit };
  const s = READABLE_SCALE;
  const px = (c, r) => [VIEW.pad + VIEW.boxW / 2 + (c - minX) * VIEW.cellW, VIEW.pad + VIEW.boxH / 2 + (r - minY) * VIEW.cellH];
  const entry = l.nodes[0];
  const focus = px(entry.col, entry.row);
  const place = (frame, size, at, share) =>
    size * s <= frame ? (frame - size * s) / 2 : Math.max(Math.min(frame * share - at * s, 8), frame - size * s - 8);
  const tx = place(SCREEN[0], dw, focus[0], 0.5);
  const ty = place(SCREEN[1], dh, focus[1], 1 / 3);
  const on = l.nodes.filter((n) => {
    const [x, y] = px(n.col, n.row);
    const [sx, sy] = [tx + x * s, ty + y * s];
    return sx >= 0 && sx <= SCREEN[0] && sy >= 0 && sy <= SCREEN[1];
  }).length;
  return { share: on / l.nodes.length, label: LABEL_PX * s };
}

// ---- the table -------------------------------------------------------------------------

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const files = zoneFiles();
const results = [];
for (const r of ours(files)) {
  const l = r.layout;
  const name = relative(root, r.path);
  const o = oursDrawing(l);
  const d = dagreDrawing(l);
  const k = await elkDrawing(l);
  const row = {
    zone: name,
    rooms: l.nodes.length,
    passages: l.edges.length,
    ours: {
      crossings: crossings(o, `${name} ours`),
      stats: l.stats?.crossings ?? null,
      length: length(o),
      upward: o.edges.filter((e) => e.back).length,
      upOnScreen: upwardOnScreen(o),
      ms: r.ms,
      overridden: l.stats?.overridden_total ?? 0,
      screen: screen(l),
    },
    dagre: { crossings: crossings(d, `${name} dagre`), length: length(d), upward: upwardOnScreen(d), ms: timed(() => dagreLayout(l)) },
    elk: { crossings: crossings(k, `${name} elk`), length: length(k), upward: upwardOnScreen(k), ms: await timedAsync(() => elk.layout(elkGraph(l))) },
  };
  if (row.ours.stats !== null && row.ours.crossings !== row.ours.stats) {
    throw new Error(`${name}: the layout's stats say ${row.ours.stats} crossings, the polylines ${row.ours.crossings}`);
  }
  results.push(row);
  if (json) console.log(JSON.stringify(row));
}

if (!json) {
  const f = (v, n = 2) => v.toFixed(n);
  console.log("| zone | rooms | crossings ours / dagre / ELK | length ours ÷ shorter peer | upward ours / dagre / ELK | hints overridden | ms ours / dagre / ELK | ELK ÷ ours | on screen, label px |");
  console.log("|---|---:|---|---:|---|---:|---|---:|---|");
  for (const r of results) {
    const ratio = r.ours.length / Math.min(r.dagre.length, r.elk.length);
    console.log(
      `| ${r.zone.replace(/^.*\//, "")} | ${r.rooms} | ${r.ours.crossings} / ${r.dagre.crossings} / ${r.elk.crossings} | ${f(ratio)} | ` +
        `${r.ours.upward} / ${r.dagre.upward} / ${r.elk.upward} | ${r.ours.overridden} | ` +
        `${f(r.ours.ms, 3)} / ${f(r.dagre.ms, 2)} / ${f(r.elk.ms, 2)} | ${f(r.elk.ms / r.ours.ms, 0)}× | ` +
        `${f(100 * r.ours.screen.share, 0)} %, ${f(r.ours.screen.label, 1)} |`,
    );
  }
  const sum = (k, e) => results.reduce((a, r) => a + r[e][k], 0);
  const worse = results.filter((r) => r.ours.crossings > Math.min(r.dagre.crossings, r.elk.crossings));
  console.log();
  console.log(`zones: ${results.length}; crossings ours ${sum("crossings", "ours")}, dagre ${sum("crossings", "dagre")}, ELK ${sum("crossings", "elk")}; ` +
    `zones where ours crosses more than the better peer: ${worse.length}${worse.length ? " (" + worse.map((r) => r.zone).join(", ") + ")" : ""}`);
  console.log(`length ours ÷ shorter peer, median ${f(median(results.map((r) => r.ours.length / Math.min(r.dagre.length, r.elk.length))))}; ` +
    `upward ours ${sum("upward", "ours")} (on screen, counting bands read upward: ${sum("upOnScreen", "ours")}), dagre ${sum("upward", "dagre")}, ELK ${sum("upward", "elk")}`);
  console.log(`time median ours ${f(median(results.map((r) => r.ours.ms)), 3)} ms, dagre ${f(median(results.map((r) => r.dagre.ms)))} ms, ELK ${f(median(results.map((r) => r.elk.ms)))} ms; ` +
    `ELK ÷ ours at least ${f(Math.min(...results.map((r) => r.elk.ms / r.ours.ms)), 0)}×, dagre ÷ ours median ${f(median(results.map((r) => r.dagre.ms / r.ours.ms)), 0)}×`);
}
