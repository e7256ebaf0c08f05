// Writes the left-to-right hinted zones of tests/fixtures/layout/ (pos_x the step along the
// path, pos_y the lane, as designers write them): a main path along lane 0 with detours on
// side lanes that rejoin it, some skipping steps (long passages), some nested, one braided
// (its hints cross), one with a loop. Deterministic: run again to get the same files.
//
//   node make-fixtures.mjs
import { mkdirSync, writeFileSync } from "node:fs";

const out = new URL("../../tests/fixtures/layout/", import.meta.url);
mkdirSync(out, { recursive: true });

// Mulberry32: a tiny seeded generator, so the files never change between runs.
function rng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["Hall", "Stair", "Cistern", "Gallery", "Vault", "Crossing", "Chapel", "Well",
  "Landing", "Bridge", "Pens", "Garden", "Ossuary", "Cloister", "Forge", "Kiln", "Archive",
  "Gate", "Court", "Passage", "Niche", "Terrace", "Mill", "Weir"];

/** A zone from a main path length and detours `[from, to, lane, rooms]` (`to > from`,
 * `rooms` side rooms on steps from+1.. along `lane`), plus extra passages. */
function zone(id, name, length, detours, extra = [], loops = false) {
  const nodes = new Map();
  const edges = [];
  const room = (key, x, y) => {
    if (!nodes.has(key)) nodes.set(key, { key, x, y });
    return key;
  };
  for (let i = 0; i < length; i++) room(`m${i}`, i, 0);
  for (let i = 1; i < length; i++) edges.push([`m${i - 1}`, `m${i}`]);
  detours.forEach(([from, to, lane, rooms, via], d) => {
    let prev = via ?? `m${from}`;
    for (let k = 0; k < rooms; k++) {
      const key = room(`d${d}_${k}`, from + 1 + k, lane);
      edges.push([prev, key]);
      prev = key;
    }
    edges.push([prev, typeof to === "string" ? to : `m${to}`]);
  });
  for (const e of extra) edges.push(e);
  const outd = new Map(), ind = new Map();
  for (const [a, b] of edges) {
    outd.set(a, (outd.get(a) ?? 0) + 1);
    ind.set(b, (ind.get(b) ?? 0) + 1);
  }
  const kinds = ["exploration", "trap", "harvest", "exploration", "elite"];
  let i = 0;
  const list = [...nodes.values()].map((n) => {
    const node_id = `${id}.${n.key}`;
    let kind = kinds[i % kinds.length];
    if (n.key === "m0") kind = "entry";
    else if (n.key === `m${length - 1}`) kind = "boss";
    else if ((outd.get(n.key) ?? 0) >= 2) kind = "fork";
    else if ((ind.get(n.key) ?? 0) >= 2) kind = "merge";
    const v = { node_id, kind, label: `${WORDS[i % WORDS.length]} ${i}`, pos_x: n.x, pos_y: n.y };
    if (kind === "entry") v.is_entry = true;
    if (kind === "boss") v.is_boss = true;
    i++;
    return v;
  });
  const file = {
    format: 1, zone_id: id, name, tier: 2, min_level: 3, max_level: 8,
    ...(loops ? { allow_loops: true } : {}),
    nodes: list,
    edges: edges.map(([a, b]) => ({ from_node: `${id}.${a}`, to_node: `${id}.${b}` })),
  };
  const text = JSON.stringify(file, null, 1).replace(/\n\s+(?=[^\[{\s])/g, " ") + "\n";
  writeFileSync(new URL(`${id}.json`, out), text);
}

/** Random detours along a path: each picks a start, a lane side and a length; a detour
 * that is shorter than the stretch it spans leaves a long passage back to the path. */
function random(id, name, length, count, seed, opts = {}) {
  const r = rng(seed);
  const detours = [];
  const busy = new Set();
  for (let t = 0; t < count * 8 && detours.length < count; t++) {
    const from = 1 + Math.floor(r() * (length - 4));
    const span = 2 + Math.floor(r() * (opts.maxSpan ?? 4));
    const to = Math.min(length - 1, from + span);
    if (to - from < 2) continue;
    const lane = (opts.bothSides && r() < 0.5 ? -1 : 1) * (1 + Math.floor(r() * (opts.lanes ?? 1)));
    const rooms = Math.max(1, to - from - 1 - (r() < (opts.skip ?? 0.3) ? 1 : 0));
    let clash = false;
    for (let x = from + 1; x < from + 1 + rooms; x++) if (busy.has(`${x},${lane}`)) clash = true;
    if (clash) continue;
    for (let x = from + 1; x < from + 1 + rooms; x++) busy.add(`${x},${lane}`);
    detours.push([from, to, lane, rooms]);
  }
  zone(id, name, length, detours);
}

random("lantern_causeway", "The Lantern Causeway", 14, 3, 1);
random("salt_marsh", "The Salt Marsh Trail", 20, 5, 2, { bothSides: true });
random("ember_aqueduct", "The Ember Aqueduct", 26, 6, 3, { lanes: 2 });
random("winding_stair", "The Winding Stair", 32, 7, 4, { bothSides: true, skip: 0.5 });
random("thornwood_way", "The Thornwood Way", 40, 9, 5, { bothSides: true, lanes: 2 });
random("glass_canal", "The Glass Canal", 48, 11, 6, { maxSpan: 6, skip: 0.6 });
random("long_procession", "The Long Procession", 60, 14, 7, { bothSides: true, lanes: 2, maxSpan: 5 });
// Nested detours: a detour of a detour on the lane beyond.
zone("nested_galleries", "The Nested Galleries", 18, [
  [2, 8, 1, 5], [4, "d0_3", 2, 1, "d0_1"], [10, 15, -1, 4], [11, 14, -2, 1, "d2_0"],
]);
// Braided: the hints cross (a detour on lane 2 rejoins before the one on lane 1 does).
zone("braided_fens", "The Braided Fens", 16, [
  [2, 9, 1, 6], [4, 7, 2, 2], [10, 14, 1, 2], [11, 13, 2, 1],
]);
// A loop: a passage back from a late room to an early one.
zone("circling_abbey", "The Circling Abbey", 22, [[3, 7, 1, 3], [12, 17, -1, 4]],
  [["m15", "m9"]], true);
// A long skip: a shortcut past half the path, and a detour beside it.
zone("shortcut_quarry", "The Shortcut Quarry", 24, [[2, 20, 1, 1], [6, 11, -1, 4]]);
