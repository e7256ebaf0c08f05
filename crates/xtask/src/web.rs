//! The map viewer's tasks: install its tools, build it with Trunk, run its browser tests
//! (wasm-bindgen-test in headless Chromium, then the Playwright end-to-end test) and check
//! the bundle-size budget.
//!
//! Nothing here downloads from GitHub: Trunk and wasm-bindgen-cli come from the crate
//! registry, wasm-opt (npm `binaryen`) and playwright-core from the npm registry via
//! `web/package-lock.json`, Chromium and ChromeDriver from Debian.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{Totals, root};

/// The designer app's budget: wasm + js + css of the release bundle, gzipped, after wasm-opt
/// (`cargo xtask test` and `cargo xtask budget` fail above it; figures in BENCHMARKS.md).
pub const BUNDLE_BUDGET: u64 = 350 * 1024;
/// The limit `test` enforces: the budget itself.
pub const BUNDLE_LIMIT: u64 = BUNDLE_BUDGET;

/// Cargo's bin dir and `web/node_modules/.bin` first on PATH, so Trunk finds npm's wasm-opt
/// (never Debian's binaryen 108, which breaks the app) and the pinned wasm-bindgen.
fn path_env() -> OsString {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    let mut paths = vec![root().join("web/node_modules/.bin"), home.join("bin")];
    if let Some(p) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

fn command(program: &str, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args)
        .current_dir(root())
        .env("PATH", path_env())
        .env("TRUNK_SKIP_VERSION_CHECK", "true")
        .env("CHROMEDRIVER", "/usr/bin/chromedriver");
    c
}

fn run(program: &str, args: &[&str]) -> Result<()> {
    eprintln!("+ {program} {}", args.join(" "));
    let status = command(program, args)
        .status()
        .with_context(|| format!("could not start {program}"))?;
    if !status.success() {
        bail!("{program} {} failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Installs the viewer's Node packages (playwright-core, binaryen) when `web/node_modules` is
/// missing or older than the committed lockfile. Trunk, wasm-bindgen-cli and Chromium are
/// installed by the main `setup`.
pub fn setup() -> Result<()> {
    // npm ci when node_modules is missing or older than the committed lockfile.
    let web = root().join("web");
    let modified = |p: PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let lock = modified(web.join("package-lock.json"));
    let installed = modified(web.join("node_modules/.package-lock.json"));
    if installed.is_none() || installed < lock {
        eprintln!("+ npm ci (web/)");
        let status = command("npm", &["ci", "--no-audit", "--no-fund"])
            .current_dir(&web)
            .status()
            .context("could not start npm")?;
        if !status.success() {
            bail!("npm ci in web/ failed ({status})");
        }
    }
    Ok(())
}

/// `trunk build --release` into `dist/` (wasm-opt -Oz, the `wasm-release` profile).
pub fn build() -> Result<()> {
    // Trunk's cargo call may be offline-safe only after a fetch.
    run("cargo", &["fetch", "--locked"])?;
    run("trunk", &["build", "web/index.html", "--release"])
}

/// The browser tests: wasm-bindgen-test components in headless Chromium, then the
/// Playwright end-to-end test against `dist/`.
pub fn test(totals: &mut Totals) -> Result<()> {
    let mut c = command(
        "cargo",
        &[
            "test",
            "-p",
            "zonegraph-web",
            "--target",
            "wasm32-unknown-unknown",
            "--locked",
        ],
    );
    crate::cargo_test_with(&mut c, totals)?;
    build()?;
    e2e(totals)?;
    let size = bundle_size()?;
    eprintln!(
        "viewer bundle: {:.1} KB gzipped (budget {} KB{}; limit {} KB)",
        size as f64 / 1024.0,
        BUNDLE_BUDGET / 1024,
        if size > BUNDLE_BUDGET { ", OVER" } else { "" },
        BUNDLE_LIMIT / 1024
    );
    if size > BUNDLE_LIMIT {
        bail!(
            "the viewer's bundle grew to {:.1} KB gzipped, over the {} KB limit",
            size as f64 / 1024.0,
            BUNDLE_LIMIT / 1024
        );
    }
    Ok(())
}

/// `node web/e2e.mjs`: counts its `e2e: N passed, N failed` line into the totals.
fn e2e(totals: &mut Totals) -> Result<()> {
    eprintln!("+ node web/e2e.mjs");
    let out = command("node", &["web/e2e.mjs"])
        .output()
        .context("could not start node")?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("e2e: ") {
            let n = |what: &str| {
                rest.split(',')
                    .find_map(|p| p.trim().strip_suffix(what).map(str::trim))
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            totals.passed += n("passed");
            totals.failed += n("failed");
        }
    }
    if !out.status.success() {
        bail!("the end-to-end test failed");
    }
    Ok(())
}

/// Gzipped bytes of `dist/`'s wasm, js and css.
pub fn bundle_size() -> Result<u64> {
    let dist = root().join("dist");
    let mut total = 0;
    for entry in std::fs::read_dir(&dist).context("dist/ is missing: run trunk build")? {
        let path = entry?.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "wasm" | "js" | "css") {
            continue;
        }
        let out = Command::new("gzip")
            .args(["-9", "-c"])
            .arg(&path)
            .output()
            .context("could not start gzip")?;
        let n = out.stdout.len() as u64;
        eprintln!("  {} {n} bytes gzipped", path.display());
        total += n;
    }
    Ok(total)
}

/// Builds the release bundle and fails when it is over [`BUNDLE_BUDGET`].
pub fn budget() -> Result<()> {
    build()?;
    let size = bundle_size()?;
    println!(
        "viewer bundle: {size} bytes gzipped ({:.1} KB; budget {} KB)",
        size as f64 / 1024.0,
        BUNDLE_BUDGET / 1024
    );
    if size > BUNDLE_BUDGET {
        bail!(
            "the viewer's bundle is {:.1} KB gzipped, over the {} KB budget",
            size as f64 / 1024.0,
            BUNDLE_BUDGET / 1024
        );
    }
    Ok(())
}

/// Clippy for the viewer's wasm target (the workspace run covers the native one).
pub fn lint() -> Result<()> {
    run(
        "cargo",
        &[
            "clippy",
            "-p",
            "zonegraph-web",
            "--target",
            "wasm32-unknown-unknown",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )
}
