// What a command costs from JavaScript, with and without the `Zones` handle: the plain
// `command(zones, …)` parses and builds every zone on each call; `Zones.load` does it once.
// Prints the median per command of each over the same script; the figures are in
// BENCHMARKS.md. Timings are printed, never asserted.
//
//   node bench-command.mjs <package dir> <zone.json>…
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, ...zoneFiles] = process.argv.slice(2);
const zg = await import(pathToFileURL(resolve(pkgDir, "zonegraph_wasm.js")).href);
zg.initSync({ module: readFileSync(join(pkgDir, "zonegraph_wasm_bg.wasm")) });
const files = zoneFiles.map((f) => readFileSync(f, "utf8"));
const first = JSON.parse(files[0]).zone_id;
const script = [`!zone enter ${first}`, "!zone status", "!zone advance", "!zone status", "!zone map"];

function time(label, call, rounds) {
  const per = [];
  for (let r = 0; r < rounds; r++) {
    let player = null;
    const t0 = process.hrtime.bigint();
    for (const [i, text] of script.entries()) {
      player = call(player, text, 1_700_000_000_000 + i * 1000).player;
    }
    per.push(Number(process.hrtime.bigint() - t0) / 1e6 / script.length);
  }
  per.sort((a, b) => a - b);
  const median = per[Math.floor(per.length / 2)];
  console.log(`${label}: ${median.toFixed(4)} ms per command (median of ${rounds} rounds of ${script.length})`);
  return median;
}

const plain = time(`command(${files.length} zones, …)`,
  (p, t, now) => zg.command(files, p, t, now, "bench-1"), 60);
const load0 = process.hrtime.bigint();
const zones = zg.Zones.load(files);
const loadMs = Number(process.hrtime.bigint() - load0) / 1e6;
const handle = time("zones.command(…)", (p, t, now) => zones.command(p, t, now, "bench-1"), 600);
console.log(`Zones.load: ${loadMs.toFixed(2)} ms once; ${(plain / handle).toFixed(1)}x faster per command`);
