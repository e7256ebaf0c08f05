//! Project tasks, so a fresh machine needs nothing but cargo: `cargo xtask setup|test|lint`.
//!
//! `setup` installs what is missing and nothing else (idempotent); `test` and `lint` call it.
//! `.ci/run` runs `lint`, then `test` (the README's test command).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

mod web;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup(),
        Some("test") => setup().and_then(|()| test()),
        Some("lint") => setup().and_then(|()| lint()),
        Some("budget") => setup().and_then(|()| web::budget()),
        _ => {
            eprintln!("usage: cargo xtask <setup|test|lint>");
            eprintln!("  setup  install what the build and tests need (idempotent)");
            eprintln!("  test   run every test");
            eprintln!("  lint   formatting, clippy, the core's invariants, the strict zone check");
            eprintln!("  budget build the map viewer and fail when its bundle is over budget");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs a command in the workspace root, echoing it; fails on a non-zero exit.
fn run(program: &str, args: &[&str]) -> Result<()> {
    eprintln!("+ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(root())
        .status()
        .with_context(|| format!("could not start {program}"))?;
    if !status.success() {
        bail!("{program} {} failed ({status})", args.join(" "));
    }
    Ok(())
}

fn output(program: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .with_context(|| format!("could not start {program}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn setup() -> Result<()> {
    let targets = output("rustup", &["target", "list", "--installed"])?;
    if !targets
        .lines()
        .any(|t| t.trim() == "wasm32-unknown-unknown")
    {
        run("rustup", &["target", "add", "wasm32-unknown-unknown"])?;
    }
    let components = output("rustup", &["component", "list", "--installed"])?;
    for c in ["rustfmt", "clippy"] {
        if !components.lines().any(|l| l.starts_with(c)) {
            run("rustup", &["component", "add", c])?;
        }
    }
    web::setup()
}

fn test() -> Result<()> {
    let mut totals = Totals::default();
    let workspace = cargo_test(
        &["test", "--workspace", "--locked", "--no-fail-fast"],
        &mut totals,
    );
    // The viewer's browser tests run whatever the native ones said, so one run shows all.
    let result = workspace.and(web::test(&mut totals));
    // One closing line for the whole run, whatever ran last.
    println!("tests: {} passed, {} failed", totals.passed, totals.failed);
    result
}

/// Passed and failed tests summed over every test binary of a run.
#[derive(Debug, Default)]
struct Totals {
    passed: u64,
    failed: u64,
}

/// Runs `cargo ARGS`, echoing its output and summing libtest's `test result:` lines.
fn cargo_test(args: &[&str], totals: &mut Totals) -> Result<()> {
    let mut cmd = Command::new("cargo");
    cmd.args(args).current_dir(root());
    cargo_test_with(&mut cmd, totals)
}

/// Runs a prepared `cargo test` command, echoing its output and summing the summaries.
fn cargo_test_with(cmd: &mut Command, totals: &mut Totals) -> Result<()> {
    use std::io::BufRead;
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    eprintln!("+ cargo {}", args.join(" "));
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("could not start cargo")?;
    if let Some(out) = child.stdout.take() {
        for line in std::io::BufReader::new(out).lines() {
            let line = line?;
            println!("{line}");
            if let Some(rest) = line.strip_prefix("test result: ") {
                totals.passed += count(rest, " passed");
                totals.failed += count(rest, " failed");
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("cargo {} failed ({status})", args.join(" "));
    }
    Ok(())
}

/// The number before `what` in a libtest summary ("ok. 12 passed; 0 failed; …").
fn count(summary: &str, what: &str) -> u64 {
    summary
        .split(';')
        .find_map(|part| {
            part.trim()
                .trim_start_matches("ok. ")
                .trim_start_matches("FAILED. ")
                .strip_suffix(what.trim_start())
                .map(str::trim)
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

fn lint() -> Result<()> {
    run("cargo", &["fmt", "--all", "--check"])?;
    run(
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    // Invariant: the core builds for the browser and pulls in no async runtime or I/O stack.
    run(
        "cargo",
        &[
            "check",
            "-p",
            "zonegraph-core",
            "--target",
            "wasm32-unknown-unknown",
            "--locked",
        ],
    )?;
    let tree = output(
        "cargo",
        &[
            "tree",
            "-p",
            "zonegraph-core",
            "-e",
            "normal",
            "--prefix",
            "none",
        ],
    )?;
    for forbidden in ["tokio", "rusqlite", "axum", "wasm-bindgen"] {
        if tree
            .lines()
            .any(|l| l.split_whitespace().next() == Some(forbidden))
        {
            bail!("zonegraph-core must not depend on {forbidden}");
        }
    }
    run(
        "cargo",
        &[
            "run",
            "-q",
            "--locked",
            "-p",
            "zonegraph-server",
            "--bin",
            "zonegraph",
            "--",
            "check",
            "--strict",
            "zones/",
        ],
    )?;
    // Benches must at least compile (their figures live in BENCHMARKS.md, not in CI).
    run(
        "cargo",
        &["bench", "-p", "zonegraph-core", "--locked", "--no-run"],
    )?;
    web::lint()
}
