// The package as a developer gets it: `npm pack`ed, installed into an empty project, and
// imported by its name. `cargo xtask test` runs this in that project after `npm install
// <tarball>`; it reads the zone files given on the command line.
//
//   node installed.mjs <zone.json>…
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { initSync, Zones, command, checkZone } from "zonegraph-wasm";

const wasm = fileURLToPath(import.meta.resolve("zonegraph-wasm/zonegraph_wasm_bg.wasm"));
initSync({ module: readFileSync(wasm) });

const files = process.argv.slice(2).map((f) => readFileSync(f, "utf8"));
assert.ok(files.length > 0, "usage: node installed.mjs <zone.json>…");
for (const f of files) assert.equal(checkZone(f).diagnostics.filter((d) => d.severity === "error").length, 0);

// The handle answers exactly as the plain call, command by command.
const zones = Zones.load(files);
assert.deepEqual(zones.ids, files.map((f) => JSON.parse(f).zone_id));
// A new player is the server's: level 1, so the first zone a level-1 character may enter.
const open = files.map((f) => JSON.parse(f)).find((z) => (z.min_level ?? 1) <= 1);
assert.ok(open, "no zone a new (level 1) player may enter among the files given");
const first = open.zone_id;
let a = null;
let b = null;
const script = [`!zone enter ${first}`, "!zone advance", "!zone status", "!zone advance", "!zone map", "!zone go 1"];
for (const [i, text] of script.entries()) {
  const now = 1_700_000_000_000 + i * 1000;
  const viaHandle = zones.command(a?.player ?? null, text, now, "installed-1");
  const plain = command(files, b?.player ?? null, text, now, "installed-1");
  assert.deepEqual(viaHandle, plain, text);
  a = viaHandle;
  b = plain;
}
assert.equal(a.player.run.zone_id, first);
assert.throws(() => Zones.load(["{"]), (e) => e.name === "ZonegraphError" && e.code === "parse_error");
zones.free();
console.log(`installed package: ok (${files.length} zones, ${script.length} commands)`);
