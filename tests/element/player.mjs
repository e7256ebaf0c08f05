// A Matrix player on Element's own crypto stack: matrix-js-sdk with its Rust crypto
// (@matrix-org/matrix-sdk-crypto-wasm), in Element's default trust mode since 2026
// ("exclude insecure devices", MSC4153: room keys go only to devices their owner cross-signed,
// and messages from other devices are not decrypted), with cross-signing bootstrapped at
// login as Element does it. Driven by the Matrix integration tests (tests/integration/element.rs).
//
//   node player.mjs HOMESERVER USER PASSWORD RESULTS [legacy]
//
// Reads one JSON request per line on stdin and appends one JSON answer per line to RESULTS
// (the SDK's logger writes to stdout and stderr, so answers go to a file of their own).
// Requests:
//   {"op":"dm","bot":ID}                    an encrypted DM as Element makes one, the bot invited
//   {"op":"public_room","bot":ID}           a public room of the player and the bot
//   {"op":"say","room":ID,"text":T,"expect":E,"timeout_ms":N}
//        sends T, waits for a message of the bot containing E; answers every message of the
//        bot since T (decrypted bodies) and every one that did not decrypt (with why)
//   {"op":"messages","room":ID}             every message of the bot in the room so far
//   {"op":"devices","user":ID}              the user's devices and whether their owner signed them
//   {"op":"quit"}
// Every answer carries "ok": true, or "ok": false and "error".

if (!Promise.withResolvers) {
  // Node 20 lacks it; matrix-js-sdk 43 uses it.
  Promise.withResolvers = function () {
    let resolve, reject;
    const promise = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [homeserver, user, password, results, mode] = process.argv.slice(2);
if (!results) {
  console.error("usage: node player.mjs HOMESERVER USER PASSWORD RESULTS [legacy]");
  process.exit(2);
}
const answer = (obj) => appendFileSync(results, JSON.stringify(obj) + "\n");

const sdk = await import("matrix-js-sdk");
const { logger } = await import("matrix-js-sdk/lib/logger.js");
const cryptoApi = await import("matrix-js-sdk/lib/crypto-api/index.js");
logger.setLevel?.("warn");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function login() {
  const res = await fetch(`${homeserver}/_matrix/client/v3/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      type: "m.login.password",
      identifier: { type: "m.id.user", user },
      password,
      initial_device_display_name: "Element (test player)",
    }),
  });
  if (!res.ok) throw new Error(`login of ${user}: ${res.status} ${await res.text()}`);
  return res.json();
}

const session = await login();
const client = sdk.createClient({
  baseUrl: homeserver,
  userId: session.user_id,
  accessToken: session.access_token,
  deviceId: session.device_id,
});
await client.initRustCrypto({ useIndexedDB: false });
const crypto = client.getCrypto();
crypto.setDeviceIsolationMode(
  mode === "legacy"
    ? new cryptoApi.AllDevicesIsolationMode(false)
    : new cryptoApi.OnlySignedDevicesIsolationMode(),
);
await crypto.bootstrapCrossSigning({
  authUploadDeviceSigningKeys: async (makeRequest) =>
    makeRequest({
      type: "m.login.password",
      identifier: { type: "m.id.user", user },
      password,
    }),
});

// Rooms the bot invites the player to (the DM it opens for private replies) are joined.
client.on(sdk.RoomMemberEvent.Membership, (_event, member) => {
  if (member.userId === client.getUserId() && member.membership === "invite") {
    client.joinRoom(member.roomId).catch((e) => console.error("join failed", e));
  }
});

const prepared = new Promise((resolve) => {
  client.on(sdk.ClientEvent.Sync, (state) => {
    if (state === "PREPARED") resolve();
  });
});
await client.startClient({ initialSyncLimit: 20 });
await prepared;

/** Waits until `bot` is joined to `roomId`, as the homeserver sees it. */
async function waitJoined(roomId, bot) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const members = await client.getJoinedRoomMembers(roomId);
    if (members.joined && members.joined[bot]) return;
    await sleep(200);
  }
  throw new Error(`${bot} did not join ${roomId} within 30 s`);
}

/** The bot's messages in a room, in order: decrypted bodies and decryption failures. */
function botEvents(roomId, bot) {
  const room = client.getRoom(roomId);
  if (!room) return [];
  return room
    .getLiveTimeline()
    .getEvents()
    .filter((e) => e.getSender() === bot)
    .filter((e) => e.getType() === "m.room.message" || e.isDecryptionFailure() || e.isEncrypted())
    .map((e) => ({
      id: e.getId(),
      body: e.isDecryptionFailure() ? null : e.getContent().body ?? null,
      failure: e.isDecryptionFailure() ? String(e.decryptionFailureReason) : null,
      pending: e.isBeingDecrypted() || (e.isEncrypted() && e.getType() === "m.room.encrypted" && !e.isDecryptionFailure()),
    }));
}

const botOf = new Map();

async function handle(req) {
  switch (req.op) {
    case "dm": {
      const { room_id } = await client.createRoom({
        is_direct: true,
        preset: "trusted_private_chat",
        invite: [req.bot],
        initial_state: [
          { type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } },
        ],
      });
      const direct = client.getAccountData("m.direct")?.getContent() ?? {};
      direct[req.bot] = [...(direct[req.bot] ?? []), room_id];
      await client.setAccountData("m.direct", direct);
      await waitJoined(room_id, req.bot);
      botOf.set(room_id, req.bot);
      return { room: room_id };
    }
    case "public_room": {
      const { room_id } = await client.createRoom({
        preset: "public_chat",
        visibility: "private",
        invite: [req.bot],
      });
      await waitJoined(room_id, req.bot);
      botOf.set(room_id, req.bot);
      return { room: room_id };
    }
    case "say": {
      const bot = botOf.get(req.room) ?? req.bot;
      const before = new Set(botEvents(req.room, bot).map((e) => e.id));
      await client.sendMessage(req.room, { msgtype: "m.text", body: req.text });
      const deadline = Date.now() + (req.timeout_ms ?? 30_000);
      let fresh = [];
      let settledAt = null;
      while (Date.now() < deadline) {
        fresh = botEvents(req.room, bot).filter((e) => !before.has(e.id));
        const hit = fresh.some((e) => e.body && e.body.includes(req.expect));
        if (hit && settledAt === null) settledAt = Date.now();
        // After the expected reply, a moment for the rest of the answer.
        if (settledAt !== null && Date.now() - settledAt > 500 && !fresh.some((e) => e.pending)) {
          return { bodies: fresh.filter((e) => e.body).map((e) => e.body), failures: fresh.filter((e) => e.failure).map((e) => e.failure) };
        }
        await sleep(100);
      }
      return {
        ok: false,
        error: `no message of ${bot} containing ${JSON.stringify(req.expect)} within ${req.timeout_ms ?? 30_000} ms`,
        bodies: fresh.filter((e) => e.body).map((e) => e.body),
        failures: fresh.filter((e) => e.failure).map((e) => e.failure),
      };
    }
    case "messages": {
      const bot = botOf.get(req.room) ?? req.bot;
      const all = botEvents(req.room, bot);
      return { bodies: all.filter((e) => e.body).map((e) => e.body), failures: all.filter((e) => e.failure).map((e) => e.failure) };
    }
    case "devices": {
      const map = await crypto.getUserDeviceInfo([req.user], true);
      const devices = [];
      for (const [id] of map.get(req.user) ?? new Map()) {
        const status = await crypto.getDeviceVerificationStatus(req.user, id);
        devices.push({ id, signedByOwner: !!status?.signedByOwner });
      }
      // What the homeserver holds, for a failure's message.
      const res = await fetch(`${homeserver}/_matrix/client/v3/keys/query`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session.access_token}` },
        body: JSON.stringify({ device_keys: { [req.user]: [] } }),
      });
      return { devices, homeserver_keys: await res.json() };
    }
    case "quit":
      client.stopClient();
      answer({ op: "quit", ok: true });
      process.exit(0);
    default:
      throw new Error(`unknown op ${req.op}`);
  }
}

answer({ op: "ready", ok: true, user: session.user_id, device: session.device_id });
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let req;
  try {
    req = JSON.parse(line);
    const out = await handle(req);
    answer({ op: req.op, ok: true, ...out });
  } catch (e) {
    answer({ op: req?.op ?? "?", ok: false, error: String(e?.stack ?? e) });
  }
}
client.stopClient();
process.exit(0);
