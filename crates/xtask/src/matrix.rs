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

/// Sets Synapse up and returns the environment that turns the Synapse test on.
pub fn slow_test_env(root: &Path) -> Result<[(&'static str, &'static str); 1]> {
    setup_synapse(root)?;
    Ok([("ZONEGRAPH_SLOW_TESTS", "1")])
}
