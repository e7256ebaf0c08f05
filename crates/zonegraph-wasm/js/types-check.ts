// Compiled (never run) by `cargo xtask wasm-pack` with `tsc --strict` against the package's
// zonegraph_wasm.d.ts: the declarations accept what they should and reject what they should.
import init, {
  initSync, checkZone, checkZones, analyzeZone, rollD20, encodeShareLink, decodeShareLink,
  versionInfo, type ZoneFile, type CheckedZone, type ZoneStats, type LockStats, type Diagnostic,
  type DiagnosticCode, type Severity, type ZonegraphError, type ZonegraphErrorCode,
  type VersionInfo, type ParseErrorInfo, layoutZone, renderMap, type Layout, type Run,
  type Event, type Reply, type Character, type Status, type ExitView, playerView, command,
  type PlayerView, type CommandResult, type Player,
} from "./zonegraph_wasm.js";
import * as wasm from "./zonegraph_wasm.js";

const zone: ZoneFile = {
  format: 1, zone_id: "t", name: "T", tier: 1, min_level: 1, max_level: 2,
  nodes: [
    { node_id: "t.a", kind: "entry", is_entry: true, content: { narration: "hi", loot_bias: 2 } },
    { node_id: "t.b", kind: "boss", is_boss: true },
  ],
  edges: [{ from_node: "t.a", to_node: "t.b", lock_kind: "stat_check", lock_data: { stat: "str", dc: 12 } }],
};
const report: CheckedZone = checkZone(zone);
const fromText: CheckedZone = checkZone(JSON.stringify(zone), "t.json");
const all: CheckedZone[] = checkZones([zone, JSON.stringify(zone), { file: "t.json", zone }]);
const parseError: ParseErrorInfo | undefined = all[0]?.parse_error;
const zoneId: string | null = report.zone_id;
const stats: ZoneStats = analyzeZone(zone);
const routes: number | null = stats.routes;
const chokes: string[] = stats.choke_points;
const lock: LockStats | undefined = stats.locks[0];
const chance: number | undefined = lock?.by_modifier?.[0]?.chance;
const first: Diagnostic | undefined = report.diagnostics[0];
const code: DiagnosticCode | undefined = first?.code;
const severity: Severity | undefined = first?.severity;
const edgeFrom: string | undefined = first?.edge?.from;
const longest: number | null | undefined = report.stats?.longest_path;
const d20: number = rollD20("run-1", "t.a", "t.b");
const link: string = encodeShareLink(zone);
const text: string = decodeShareLink(`#${link}`);
const info: VersionInfo = versionInfo();
const prefix: string = info.share_prefix;

const layout: Layout = layoutZone(zone);
const firstPoint: [number, number] | undefined = layout.edges[0]?.points[0];
const designerMap: string = renderMap(zone);
const character: Character = { level: 3, scores: { wis: 14 }, keys: ["skull_key"] };

// The bot's pipeline: one zone or several, a new player or the one the last call returned.
const said: CommandResult = command(zone, { character }, "!zone enter t", Date.now(), "run-2");
const player: Player = said.player;
const next: CommandResult = command([zone, JSON.stringify(zone)], player, "go 1", Date.now(), "run-2",
  { syntax: "loose", fork_timeout_ms: 60_000, run_link: "https://example.invalid/run/x" });
const replies: Reply[] = next.replies;
const replyTexts: string[] = replies.map((r) => r.text);
const runAfter: Run | null = next.player.run;
for (const e of next.events as Event[]) {
  if (e.event === "arrived") {
    const n: number = e.room_number;
  } else if (e.event === "picked_for_you") {
    const option: number = e.option;
  }
}
if (runAfter) {
  const runMap: string = renderMap(zone, runAfter, { cell_width: 20, max_rows: 10 });
  // What `!zone status` says, as data; the fork's menu is its exits.
  const seen: PlayerView = playerView(zone, runAfter, next.player.character);
  const status: Status = playerView(zone, runAfter).status;
  const exits: ExitView[] = status.exits;
  const seenLabels: (string | null)[] = seen.rooms.map((r) => r.label);
  const roomTotal: number = status.room_total;
  const why: string | undefined = exits[0]?.revealed?.reason;
}

function describe(e: unknown): string {
  const err = e as ZonegraphError;
  const c: ZonegraphErrorCode = err.code;
  return `${err.name} ${c} ${err.message} ${err.line ?? ""}:${err.column ?? ""} ${err.path ?? ""}`;
}

// @ts-expect-error a number is not a zone
checkZone(42);
// @ts-expect-error an unknown room kind
const badKind: ZoneFile = { ...zone, room_kinds: ["dragon"] };
// @ts-expect-error format 2 does not exist
const badFormat: ZoneFile = { ...zone, format: 2 };
// @ts-expect-error the stats have no such field
stats.rooms;
// @ts-expect-error stats are absent when the file could not be parsed
report.stats.nodes;
// @ts-expect-error a diagnostic code is a known string
const badCode: DiagnosticCode = "no_such_code";
// @ts-expect-error an event has a known tag
const badEvent: Event = { event: "teleported", node: "x" };
// @ts-expect-error map options are known
renderMap(zone, null, { colour: true });
// @ts-expect-error rollD20 takes three strings
rollD20("run-1", "t.a");
// @ts-expect-error the syntax is "chat" or "loose"
command(zone, null, "go 1", 0, "r", { syntax: "shout" });
// @ts-expect-error a player view has no run id
playerView(zone, runAfter!).run_id;
// @ts-expect-error the engine's step functions are gone: `command` replaces them
wasm.startRun;
// @ts-expect-error no StatusReply either: `playerView(…).status` and `command("!zone status")`
const gone: wasm.StatusReply | undefined = undefined;

export const used = [replyTexts, runAfter, firstPoint, designerMap, badEvent, init, initSync, fromText, all, parseError, zoneId, routes, chokes, chance, code, severity, edgeFrom, longest, d20, text,
  prefix, describe, badKind, badFormat, badCode, gone];
