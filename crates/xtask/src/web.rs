//! The map viewer's tasks: install its tools, build it with Trunk, run its browser tests
//! (wasm-bindgen-test in headless Chromium, then the Playwright end-to-end test, which also
//! checks that the README's pictures are current), make those pictures, and check the
//! bundle-size budget.
//!
//! Nothing here downloads from GitHub: Trunk and wasm-bindgen-cli come from the crate
//! registry, wasm-opt (npm `binaryen`) and playwright-core from the npm registry via
//! `web/package-lock.json`, Chromium and ChromeDriver from Debian.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{Totals, root};

/// The designer page's budget: the bytes on the wire of everything `index.html` loads (html,
/// wasm, js, css) as `zonegraph serve` sends them to a browser that takes brotli, i.e. the
/// `.br` twins `trunk build` writes (`cargo xtask test` and `cargo xtask budget` fail above
/// it; figures in BENCHMARKS.md).
pub const BUNDLE_BUDGET: u64 = 350 * 1024;
/// The player's run page's budget, counted the same way from `run-page/index.html`.
pub const RUN_PAGE_BUDGET: u64 = 150 * 1024;

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

/// `trunk build --release` into `dist/` (wasm-opt as each page's HTML asks, the
/// `wasm-release` profile).
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
    // The end-to-end test drives the real server for the run page: the debug `zonegraph`
    // command line the native tests built (the test package's `zonegraph-under-test`), not a
    // second, release build of the server (about 9 minutes on 2 cores). Built here only when
    // the native tests did not run first (the same command and features as theirs, so
    // after them it builds nothing).
    run("cargo", &["test", "--workspace", "--locked", "--no-run"])?;
    e2e(totals)?;
    check_pages()
}

/// `cargo xtask e2e`: only the Playwright end-to-end test (the web part's slowest half is the
/// wasm-bindgen-test run it skips), after `trunk build` and a build of the server it drives.
pub fn end_to_end() -> Result<()> {
    build()?;
    build_server()?;
    e2e(&mut Totals::default())
}

/// `cargo xtask screenshots`: the README's pictures, made against a real `zonegraph serve`
/// (`node web/pictures.mjs --write`): `docs/img/<name>.png` and beside it
/// `docs/img/<name>.json`, what the page draws, which the end-to-end test compares with what
/// the page draws now.
pub fn screenshots() -> Result<()> {
    build()?;
    build_server()?;
    eprintln!("+ node web/pictures.mjs --write");
    let status = command("node", &["web/pictures.mjs", "--write"])
        .env("ZONEGRAPH_BIN", server_bin()?)
        .status()
        .context("could not start node")?;
    if !status.success() {
        bail!("node web/pictures.mjs --write failed ({status})");
    }
    Ok(())
}

/// The `zonegraph` command line the end-to-end test drives: the test package's
/// `zonegraph-under-test` (debug), the binary the native tests build too.
fn server_bin() -> Result<PathBuf> {
    Ok(crate::target_dir()?.join("debug/zonegraph-under-test"))
}

/// Builds [`server_bin`] alone (after the native tests it is already built).
fn build_server() -> Result<()> {
    run(
        "cargo",
        &[
            "build",
            "-p",
            "zonegraph-tests",
            "--bin",
            "zonegraph-under-test",
            "--locked",
        ],
    )
}

/// Each page's bytes on the wire against its budget; fails naming every page over.
fn check_pages() -> Result<()> {
    let mut over = Vec::new();
    for (name, html, budget) in pages() {
        let size = page_bytes(&root().join("dist"), html)?;
        eprintln!(
            "{name}: {:.1} KB on the wire, brotli (budget {} KB{})",
            size as f64 / 1024.0,
            budget / 1024,
            if size > budget { ", OVER" } else { "" }
        );
        if size > budget {
            over.push(format!(
                "the {name} is {:.1} KB on the wire, over its {} KB budget",
                size as f64 / 1024.0,
                budget / 1024
            ));
        }
    }
    if !over.is_empty() {
        bail!("{}", over.join("; "));
    }
    Ok(())
}

/// The pages `zonegraph serve` serves: name, HTML file under `dist/`, budget.
fn pages() -> [(&'static str, &'static str, u64); 2] {
    [
        ("designer page", "index.html", BUNDLE_BUDGET),
        ("run page", "run-page/index.html", RUN_PAGE_BUDGET),
    ]
}

/// `node web/e2e.mjs`: counts its `e2e: N passed, N failed` line into the totals.
fn e2e(totals: &mut Totals) -> Result<()> {
    eprintln!("+ node web/e2e.mjs");
    let out = command("node", &["web/e2e.mjs"])
        .env("ZONEGRAPH_BIN", server_bin()?)
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

/// What loading `html` transfers, as `zonegraph serve` answers a browser that takes brotli:
/// the page and every `.js`, `.wasm` and `.css` it names (Trunk writes absolute URLs), each
/// as its `.br` twin when there is one (as ServeDir picks it), else as it is. Headers are not
/// counted.
pub fn page_bytes(dist: &std::path::Path, html: &str) -> Result<u64> {
    let html = dist.join(html);
    let text = std::fs::read_to_string(&html)
        .with_context(|| format!("{} is missing: run trunk build", html.display()))?;
    let mut assets: Vec<&str> = Vec::new();
    for (at, _) in text.match_indices('/') {
        // A URL starts the attribute (quoted, or bare as the minified run page writes it:
        // `href=/run-page/…`) or `url(…)`; a '/' inside one ("/run-page/style.css") is not
        // another URL.
        if !text[..at].ends_with(['"', '\'', '(', '=']) {
            continue;
        }
        let rest = &text[at..];
        let end = rest
            .find(|c: char| c == '"' || c == '\'' || c.is_whitespace() || c == ')' || c == '>')
            .unwrap_or(rest.len());
        let url = &rest[..end];
        let file = url.trim_start_matches('/');
        if [".js", ".wasm", ".css"].iter().any(|e| file.ends_with(e))
            && !file.contains("//")
            && !assets.contains(&url)
            && dist.join(file).is_file()
        {
            assets.push(url);
        }
    }
    let wire = |p: PathBuf| -> Result<u64> {
        let mut br = p.clone().into_os_string();
        br.push(".br");
        let br = PathBuf::from(br);
        let used = if br.is_file() { br } else { p };
        let n = std::fs::metadata(&used)
            .with_context(|| format!("cannot read {}", used.display()))?
            .len();
        eprintln!("  {} {n} bytes", used.display());
        Ok(n)
    };
    let mut total = wire(html.clone())?;
    if assets.iter().filter(|a| a.ends_with(".wasm")).count() == 0 {
        bail!("{} names no .wasm: is it a Trunk page?", html.display());
    }
    for a in assets {
        total += wire(dist.join(a.trim_start_matches('/')))?;
    }
    Ok(total)
}

/// Builds the release bundle and fails when a page is over its budget.
pub fn budget() -> Result<()> {
    build()?;
    check_pages()
}

/// Clippy for the viewer's wasm target (the workspace run covers the native one).
pub fn lint() -> Result<()> {
    let clippy = |extra: &[&str]| {
        let mut args = vec![
            "clippy",
            "-p",
            "zonegraph-web",
            "--target",
            "wasm32-unknown-unknown",
            "--all-targets",
            "--locked",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "-D", "warnings"]);
        run("cargo", &args)
    };
    clippy(&[])?;
    // The run page's build (web/run.html): without the keyed map.
    clippy(&["--no-default-features"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pages_bytes_are_its_files_brotli_twins_when_there_are_some() {
        let dist = std::env::temp_dir().join(format!("xtask-page-bytes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dist);
        std::fs::create_dir_all(dist.join("run-page")).expect("mkdir");
        let write = |rel: &str, n: usize| std::fs::write(dist.join(rel), vec![b'x'; n]).expect(rel);
        std::fs::write(
            dist.join("run-page/index.html"),
            "<link rel=\"stylesheet\" href=\"/run-page/a-0123456789.css\">\n\
             <link rel=\"preload\" href=\"/run-page/app-0123456789_bg.wasm\">\n\
             <script type=\"module\">import init from '/run-page/app-0123456789.js';\n\
             init({ module_or_path: '/run-page/app-0123456789_bg.wasm' });</script>\n\
             <link href=/run-page/bare-0123456789.css rel=stylesheet>\n\
             <a href=\"/elsewhere.js\">not a file</a>",
        )
        .expect("html");
        write("run-page/index.html.br", 10);
        write("run-page/a-0123456789.css", 1000);
        write("run-page/a-0123456789.css.br", 100);
        // A bare attribute, as Trunk's minified HTML writes it.
        write("run-page/bare-0123456789.css", 300);
        write("run-page/bare-0123456789.css.br", 30);
        write("run-page/app-0123456789.js", 2000);
        write("run-page/app-0123456789_bg.wasm", 5000);
        write("run-page/app-0123456789_bg.wasm.br", 700);
        // A file of the same name at the root (the designer's) is not this page's.
        write("a-0123456789.css", 999);
        write("app-0123456789_bg.wasm", 999);
        // Named twice (preload and init) and counted once; a .js without a .br counts whole.
        let n = page_bytes(&dist, "run-page/index.html").expect("measured");
        assert_eq!(n, 10 + 100 + 30 + 2000 + 700);
        std::fs::remove_file(dist.join("run-page/app-0123456789_bg.wasm")).expect("rm");
        std::fs::remove_file(dist.join("run-page/app-0123456789_bg.wasm.br")).expect("rm");
        assert!(
            page_bytes(&dist, "run-page/index.html").is_err(),
            "a page without wasm"
        );
        let _ = std::fs::remove_dir_all(&dist);
    }
}
