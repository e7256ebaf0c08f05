//! `zonegraph diff OLD NEW [--json]`: what changing one version of a zone file into another
//! does, before it is published ([`zonegraph_core::impact`]): rooms, passages and locks added,
//! removed and changed (a renamed room matched by position and label), and the zone's figures
//! before and after — routes, the longest route, choke points, win odds at `min_level` and
//! `max_level` — with the findings the change brings or removes.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use zonegraph_core::Severity;
use zonegraph_core::analysis::Stats;
use zonegraph_core::diff::{LockChange, PassageKey};
use zonegraph_core::format::ZoneFile;
use zonegraph_core::impact::{Impact, impact};

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

/// The impact as a designer reads it.
pub fn words(i: &Impact) -> String {
    let mut out = String::new();
    let c = &i.changes;
    if i.renamed.is_empty() && c.is_empty() {
        out.push_str("no change\n");
    }
    if !c.fields.is_empty() {
        let _ = writeln!(out, "zone: {} changed", c.fields.join(", "));
    }
    for r in &i.renamed {
        let _ = writeln!(out, "room renamed: {} -> {}", r.from, r.to);
    }
    let list = |out: &mut String, what: &str, ids: &[String]| {
        for id in ids {
            let _ = writeln!(out, "{what}: {id}");
        }
    };
    list(&mut out, "room added", &c.rooms_added);
    list(&mut out, "room removed", &c.rooms_removed);
    list(&mut out, "room changed", &c.rooms_changed);
    list(&mut out, "room moved", &c.rooms_moved);
    let passages = |out: &mut String, what: &str, keys: &[PassageKey]| {
        for k in keys {
            let _ = writeln!(out, "{what}: {}", passage(k));
        }
    };
    passages(&mut out, "passage added", &c.passages_added);
    passages(&mut out, "passage removed", &c.passages_removed);
    passages(&mut out, "passage changed", &c.passages_changed);
    let locks = |out: &mut String, what: &str, changes: &[LockChange]| {
        for l in changes {
            let _ = writeln!(
                out,
                "{what}: {} ({} -> {})",
                passage(&l.passage),
                l.before.as_str(),
                l.after.as_str()
            );
        }
    };
    locks(&mut out, "lock added", &c.locks_added);
    locks(&mut out, "lock removed", &c.locks_removed);
    locks(&mut out, "lock changed", &c.locks_changed);
    out.push_str("\nfigures (before -> after):\n");
    figures(&mut out, &i.before, &i.after);
    for d in &i.findings_added {
        let _ = writeln!(
            out,
            "new finding: {} {}: {}",
            severity(d.severity),
            d.code.as_str(),
            d.message
        );
    }
    for d in &i.findings_gone {
        let _ = writeln!(
            out,
            "finding gone: {} {}: {}",
            severity(d.severity),
            d.code.as_str(),
            d.message
        );
    }
    out
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn passage(k: &PassageKey) -> String {
    if k.nth == 0 {
        format!("{} -> {}", k.from, k.to)
    } else {
        format!("{} -> {} (#{})", k.from, k.to, k.nth + 1)
    }
}

fn figures(out: &mut String, a: &Stats, b: &Stats) {
    let opt = |v: Option<u64>| v.map_or_else(|| "unbounded".to_string(), |n| n.to_string());
    let len = |v: Option<usize>| v.map_or_else(|| "none".to_string(), |n| n.to_string());
    let mut line = |name: &str, x: String, y: String| {
        let mark = if x == y { "" } else { "  *" };
        let _ = writeln!(out, "  {name:<22} {x} -> {y}{mark}");
    };
    line("rooms", a.nodes.to_string(), b.nodes.to_string());
    line("passages", a.edges.to_string(), b.edges.to_string());
    line("routes", opt(a.routes), opt(b.routes));
    line(
        "longest route (rooms)",
        len(a.longest_path),
        len(b.longest_path),
    );
    line(
        "shortest route (rooms)",
        len(a.shortest_path),
        len(b.shortest_path),
    );
    line(
        "choke points",
        a.choke_points.join(", "),
        b.choke_points.join(", "),
    );
    let win = |s: &Stats, max: bool| {
        s.difficulty.as_ref().map_or_else(
            || "not modelled".to_string(),
            |d| {
                let l = if max { &d.max_level } else { &d.min_level };
                format!("{:.1} % at level {}", l.win_chance * 100.0, l.level)
            },
        )
    };
    line("win odds, min_level", win(a, false), win(b, false));
    line("win odds, max_level", win(a, true), win(b, true));
}
