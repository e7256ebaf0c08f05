// Checks zone files with the zonegraph-wasm package from Node: the `--target web` output,
// instantiated synchronously from the .wasm bytes with initSync (no fetch, no bundler).
//
//   node check-zone.mjs [--selftest] <package dir> <zone.json>…
//
// Prints findings like `zonegraph check` and exits 1 when a zone has an error. With
// --selftest it also checks what the package promises JS callers: share links round-trip,
// every zone plays to its end through `command`, and bad input throws an Error with a code
// instead of trapping.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import assert from "node:assert/strict";

const args = process.argv.slice(2);
const selftest = args[0] === "--selftest";
if (selftest) args.shift();
const [pkgDir, ...zoneFiles] = args;
if (!pkgDir || zoneFiles.length === 0) {
  console.error("usage: node check-zone.mjs [--selftest] <package dir> <zone.json>…");
  process.exit(2);
}

const zg = await import(pathToFileURL(resolve(pkgDir, "zonegraph_wasm.js")).href);
zg.initSync({ module: readFileSync(join(pkgDir, "zonegraph_wasm_bg.wasm")) });

// All files together, like `zonegraph check`: the checks across zones see every zone.
const sources = zoneFiles.map((file) => ({ file, zone: readFileSync(file, "utf8") }));
let errors = 0;
for (const checked of zg.checkZones(sources)) {
  const file = checked.file;
  if (checked.parse_error) {
    const e = checked.parse_error;
    console.log(`${file}:${e.line ?? "?"}:${e.column ?? "?"}: error: ${e.message}`);
    errors++;
    continue;
  }
  for (const d of checked.diagnostics) {
    const where = d.node ?? (d.edge ? `${d.edge.from} -> ${d.edge.to}` : "");
    console.log(`${file}: ${d.severity}[${d.code}]${where ? ` ${where}` : ""}: ${d.message}`);
    if (d.severity === "error") errors++;
  }
  const s = checked.stats;
  console.log(`${file}: ${checked.zone_id}: ${s.nodes} rooms, ${s.edges} passages, ${s.forks} forks, ` +
    `path ${s.shortest_path ?? "-"}..${s.longest_path ?? "-"} rooms, ${s.routes ?? "unbounded"} routes`);
}

if (selftest) {
  for (const { file, zone: text } of sources) {
    const report = zg.checkZone(text, file);
    const link = zg.encodeShareLink(text);
    assert.ok(link.startsWith("z1:"));
    assert.equal(zg.decodeShareLink(`https://example.invalid/#${link}`), text);
    // An object gives the same report as its text, and analyzeZone the same stats.
    assert.deepEqual(zg.checkZone(JSON.parse(text), file), report);
    assert.deepEqual(zg.analyzeZone(text), report.stats);
    assert.equal(zg.layoutZone(text).nodes.length, report.stats.nodes);
    // Play the zone to its end the way a chat bot does, through `command` (the bot's one
    // pipeline): every zone offered, chat syntax, the first open option at every fork, and
    // `!zone advance` (which fights) everywhere else. A strong character wins nearly every
    // fight; a run lost on the dice anyway is played again under the next run id.
    const character = { level: 20, scores: { str: 30, dex: 30, con: 30, int: 30, wis: 30, cha: 30 } };
    const zones = sources.map((s) => s.zone);
    const options = { fork_timeout_ms: 300_000 };
    let now = 1_700_000_000_000;
    let said = null;
    let timedOut = false;
    for (let attempt = 0; attempt < 10 && said?.player.run?.outcome !== "victory"; attempt++) {
      said = zg.command(zones, { character, run: null }, `!zone enter ${JSON.parse(text).zone_id}`,
        now, `selftest:${attempt}:${file}`, options);
      for (let i = 0; said.player.run && !said.player.run.outcome && i < 200; i++) {
        now += 1000;
        const fork = said.player.run.pending_fork;
        if (fork && !timedOut) {
          // The fork timeout: nothing is taken before it; after it, any command first takes
          // the first open option for the player and says so.
          timedOut = true;
          const before = zg.command(zones, said.player, "!zone status", fork.created_at + 1000, "unused", options);
          assert.deepEqual(before.player, said.player);
          assert.equal(before.replies.length, 1);
          const after = zg.command(zones, said.player, "!zone status", fork.created_at + 600_000, "unused", options);
          assert.equal(after.replies.length, 2, JSON.stringify(after.replies));
          assert.ok(after.events.some((e) => e.event === "picked_for_you"));
        }
        const typed = fork ? `!zone go ${fork.options.findIndex((o) => o.open) + 1}` : "!zone advance";
        said = zg.command(zones, said.player, typed, now, "unused", options);
        assert.ok(said.replies.length === 1 && said.replies[0].text.length > 0, JSON.stringify(said));
        // The run-map page's view of every step: the path walked, no lock data anywhere (an
        // encounter's DC is the rules' table, shown with its roll; a lock's never is).
        const view = zg.playerView(text, said.player.run, said.player.character);
        assert.equal(view.rooms.filter((r) => r.visit !== null).length,
          said.player.run.visited_nodes.length);
        const lockParts = { rooms: view.rooms, passages: view.passages, exits: view.status.exits };
        assert.ok(!JSON.stringify(lockParts).includes('"dc"'), `${file}: a lock's DC in the player view`);
      }
    }
    assert.equal(said.player.run?.outcome, "victory", `${file}: ${JSON.stringify(said.replies)}`);
    assert.match(zg.renderMap(text, said.player.run), /Map of /);
    // The same in loose syntax, as a terminal types it.
    const loose = { syntax: "loose" };
    said = zg.command(text, { character }, `enter ${JSON.parse(text).zone_id}`, now, "loose", loose);
    said = zg.command(text, said.player, "status", now, "loose", loose);
    assert.match(said.replies[0].text, /room 1 of/);
  }
}

if (selftest) {
  const info = zg.versionInfo();
  assert.equal(info.share_prefix, "z1:");
  assert.equal(typeof zg.rollD20("run-1", "a", "b"), "number");
  const throwsCode = (f, code) => assert.throws(f, (e) => {
    assert.ok(e instanceof Error, "an Error");
    assert.equal(e.name, "ZonegraphError");
    assert.equal(e.code, code, e.message);
    return true;
  });
  throwsCode(() => zg.checkZone("{"), "parse_error");
  throwsCode(() => zg.analyzeZone("[]"), "parse_error");
  throwsCode(() => zg.checkZone(undefined), "invalid_argument");
  throwsCode(() => zg.checkZones("nope"), "invalid_argument");
  throwsCode(() => zg.rollD20(1, 2, 3), "invalid_argument");
  throwsCode(() => zg.decodeShareLink("z1:" + "A".repeat(info.share_max_payload + 1)),
    "share_payload_too_large");
  throwsCode(() => zg.decodeShareLink("z1:not*base64"), "share_base64");
  throwsCode(() => zg.decodeShareLink("z1:AAAA"), "share_corrupt");
  throwsCode(() => zg.command("{", null, "!zone list", 0, "r"), "parse_error");
  throwsCode(() => zg.command(sources[0].zone, null, 7, 0, "r"), "invalid_argument");
  // Chat syntax by default: chatter is no command, and the reply says so.
  assert.match(zg.command(sources[0].zone, null, "hello", 0, "r").replies[0].text, /not a command/);
  // After all those errors the module still works: nothing trapped.
  assert.equal(zg.checkZone(sources[0].zone).zone_id, JSON.parse(sources[0].zone).zone_id);
  console.log("selftest: ok");
}
process.exit(errors > 0 ? 1 : 0);
