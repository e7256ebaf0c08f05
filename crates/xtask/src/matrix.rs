//! Setup for the Matrix integration test: a Synapse venv from PyPI, cached in
//! `~/.cache/zonegraph/synapse-venv`, so the slow test runs with `ZONEGRAPH_SLOW_TESTS=1`.
//!
//! Wiring (two lines in main.rs): `mod matrix;`, and in `test_all` run the workspace tests
//! with `matrix::slow_test_env()?` as their environment.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Creates the Synapse venv if missing (idempotent: a no-op once `import synapse` works).
pub fn setup_synapse(root: &Path) -> Result<()> {
    let script = root.join("tests/synapse/synapse.sh");
    eprintln!("+ {} setup", script.display());
    let status = Command::new(&script)
        .arg("setup")
        .status()
        .with_context(|| format!("could not start {}", script.display()))?;
    if !status.success() {
        bail!(
            "{} setup failed ({status}): Python 3 with venv and pip, and PyPI, are needed",
            script.display()
        );
    }
    Ok(())
}

/// `npm ci` in `tests/element` (the player on Element's crypto stack, matrix-js-sdk) when its
/// node_modules is not what its lockfile says.
pub fn setup_element_player(root: &Path) -> Result<()> {
    let dir = root.join("tests/element");
    if crate::npm_installed_as_locked(&dir)? {
        return Ok(());
    }
    eprintln!("+ npm ci (tests/element/)");
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .status()
        .context("could not start npm")?;
    if !status.success() {
        bail!("npm ci in tests/element/ failed ({status})");
    }
    Ok(())
}

/// Sets Synapse and the Element player up and returns the environment that turns the
/// Synapse tests on.
pub fn slow_test_env(root: &Path) -> Result<[(&'static str, &'static str); 1]> {
    setup_synapse(root)?;
    setup_element_player(root)?;
    Ok([("ZONEGRAPH_SLOW_TESTS", "1")])
}
