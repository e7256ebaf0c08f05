//! `zonegraph diff OLD NEW [--json]`: what changing one version of a zone file into another
//! does, before it is published ([`zonegraph_core::impact`]): rooms, passages and locks added,
//! removed and changed (a renamed room matched by position and label), and the zone's figures
//! before and after — routes, the longest route, choke points, win odds at `min_level` and
//! `max_level` — with the findings the change brings or removes.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use zonegraph_core::format::ZoneFile;
use zonegraph_core::impact::{Impact, change_lines, figures, finding_lines, impact};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The version published now (a zone file).
    old: PathBuf,
    /// The version to publish.
    new: PathBuf,
    /// The whole result as JSON (`renamed`, `changes`, `before`, `after`, `findings_added`,
    /// `findings_gone`).
    #[arg(long)]
    json: bool,
}

/// Exit code 0 when nothing changed, 1 when something did (as `diff` does), 2 on an error.
pub fn run(args: &Args) -> Result<ExitCode> {
    let read = |p: &PathBuf| -> Result<ZoneFile> {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        zonegraph_core::format::parse(&text)
            .map_err(|e| anyhow::anyhow!("{}: {}", p.display(), e.located()))
    };
    let (old, new) = (read(&args.old)?, read(&args.new)?);
    let i = impact(&old, &new);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&i)?);
    } else {
        print!("{}", words(&i));
    }
    let same = i.renamed.is_empty() && i.changes.is_empty();
    Ok(if same {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The impact as a designer reads it: the core's lines ([`zonegraph_core::impact`]), the
/// figures in a column.
pub fn words(i: &Impact) -> String {
    let mut out = String::new();
    for line in change_lines(i) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str("\nfigures (before -> after):\n");
    for f in figures(i) {
        let mark = if f.changed() { "  *" } else { "" };
        let _ = writeln!(out, "  {:<22} {} -> {}{mark}", f.name, f.before, f.after);
    }
    for line in finding_lines(i) {
        let _ = writeln!(out, "{line}");
    }
    out
}
