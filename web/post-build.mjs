// Trunk's post-build hook (root Trunk.toml): builds the player's run page, its own bundle
// (web/run.html, config web/Trunk.run.toml), into the staging dir's run-page/, then writes a
// precompressed .br and .gz twin of every text and wasm asset, for `zonegraph serve`
// (tower-http's ServeDir picks the twin the browser accepts). Node's zlib only: nothing to
// install beyond Node itself.
//
// Trunk runs it with TRUNK_STAGING_DIR (the build being assembled) and TRUNK_PROFILE.

import { spawnSync } from "node:child_process";
import { readdir, readFile, writeFile, stat } from "node:fs/promises";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";
import { extname, join, resolve } from "node:path";

const root = resolve(new URL("..", import.meta.url).pathname);
const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error("post-build: TRUNK_STAGING_DIR is not set: run `trunk build`, not this script");
  process.exit(2);
}

// The run page: a nested Trunk build with its own config (so this hook does not run again).
// Trunk's hook variables are not the nested build's configuration: leave them out.
const env = Object.fromEntries(Object.entries(process.env)
  .filter(([k]) => !k.startsWith("TRUNK_") || k === "TRUNK_SKIP_VERSION_CHECK" || k === "TRUNK_OFFLINE"));
const args = ["build", "--config", join(root, "web", "Trunk.run.toml"), "--dist", join(staging, "run-page")];
if (process.env.TRUNK_PROFILE === "release") args.push("--release");
console.error(`post-build: trunk ${args.join(" ")}`);
const built = spawnSync("trunk", args, { cwd: root, env, stdio: "inherit" });
if (built.status !== 0) {
  console.error(`post-build: the run page's build failed (${built.error ?? built.status})`);
  process.exit(1);
}

// Precompressed twins; files under 512 bytes gain nothing.
const COMPRESS = new Set([".wasm", ".js", ".css", ".html", ".svg", ".json", ".txt"]);
async function* files(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}
let raw = 0, br = 0, gz = 0;
for await (const path of files(staging)) {
  if (!COMPRESS.has(extname(path)) || (await stat(path)).size < 512) continue;
  const body = await readFile(path);
  const b = brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      [constants.BROTLI_PARAM_MODE]: extname(path) === ".wasm"
        ? constants.BROTLI_MODE_GENERIC : constants.BROTLI_MODE_TEXT,
    },
  });
  const g = gzipSync(body, { level: 9 });
  await writeFile(path + ".br", b);
  await writeFile(path + ".gz", g);
  raw += body.length; br += b.length; gz += g.length;
}
console.error(`post-build: compressed ${(raw / 1024).toFixed(1)} KB to ${(br / 1024).toFixed(1)} KB br, ${(gz / 1024).toFixed(1)} KB gzip`);
