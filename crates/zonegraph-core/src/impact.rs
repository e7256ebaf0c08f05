//! What a change does to a zone, before it is published (`zonegraph diff OLD NEW`): the
//! changes ([`crate::diff`]) and the zone's figures before and after — routes, the longest
//! route ("Room X of Y"), choke points, win odds at `min_level` and `max_level` — and the
//! findings the change brings or removes.
//!
//! A room whose id changed is matched by its position hint and label: a room the new file
//! lacks and a room the old file lacks, with the same `pos_x`/`pos_y` and label (and no other
//! room of either side sharing them), are one room renamed. The old file's passages follow the
//! new id before the two are compared, so a rename alone is no passage removed and added.
//! Pure and deterministic, like the diff.
//!
//! Its words live here too ([`change_lines`], [`figures`], [`finding_lines`]): the command
//! line's `zonegraph diff` and the editor's Changes panel and Publish confirmation say the same
//! sentences.

use serde::Serialize;

use crate::analysis::{self, Stats};
use crate::diagnostic::{Diagnostic, Severity};
use crate::diff::{self, LockChange, PassageKey, ZoneDiff};
use crate::format::{NodeFile, ZoneFile};
use crate::{text, validate, zone};

/// A room's id before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Renamed {
    pub from: String,
    pub to: String,
}

/// What a change from one version of a zone to another does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Impact {
    /// Rooms whose id changed, matched by position and label, sorted by the old id.
    pub renamed: Vec<Renamed>,
    /// The changes, the old file's renamed rooms under their new ids.
    pub changes: ZoneDiff,
    pub before: Stats,
    pub after: Stats,
    /// Findings of the new version the old one did not have (by code and message, the old
    /// messages read with the new ids).
    pub findings_added: Vec<Diagnostic>,
    /// Findings of the old version the new one no longer has.
    pub findings_gone: Vec<Diagnostic>,
}

/// What changing `old` into `new` does.
pub fn impact(old: &ZoneFile, new: &ZoneFile) -> Impact {
    let renamed = renames(old, new);
    let old = with_ids(old, &renamed);
    let (before_zone, mut before_diags) = zone::build(&old);
    before_diags.extend(validate::check_zone(&before_zone));
    let (after_zone, mut after_diags) = zone::build(new);
    after_diags.extend(validate::check_zone(&after_zone));
    let same = |a: &Diagnostic, b: &Diagnostic| a.code == b.code && a.message == b.message;
    let findings_added = after_diags
        .iter()
        .filter(|d| !before_diags.iter().any(|b| same(b, d)))
        .cloned()
        .collect();
    let findings_gone = before_diags
        .iter()
        .filter(|d| !after_diags.iter().any(|a| same(a, d)))
        .cloned()
        .collect();
    Impact {
        changes: diff::diff(&old, new),
        before: analysis::stats(&before_zone),
        after: analysis::stats(&after_zone),
        renamed,
        findings_added,
        findings_gone,
    }
}

/// The rooms only one side has, paired where exactly one on each side has the same position
/// hint and label.
fn renames(old: &ZoneFile, new: &ZoneFile) -> Vec<Renamed> {
    let rooms = |f: &ZoneFile| f.nodes.clone().unwrap_or_default();
    let (a, b) = (rooms(old), rooms(new));
    let only = |xs: &[NodeFile], ys: &[NodeFile]| -> Vec<NodeFile> {
        xs.iter()
            .filter(|x| !ys.iter().any(|y| y.node_id == x.node_id))
            .cloned()
            .collect()
    };
    let (gone, came) = (only(&a, &b), only(&b, &a));
    let place = |n: &NodeFile| (n.pos_x, n.pos_y, n.label.clone());
    let mut out = Vec::new();
    for g in &gone {
        if g.pos_x.is_none() || g.pos_y.is_none() {
            continue;
        }
        let here = |xs: &[NodeFile]| -> Vec<String> {
            xs.iter()
                .filter(|n| place(n) == place(g))
                .map(|n| n.node_id.clone())
                .collect()
        };
        if let ([_], [to]) = (here(&gone).as_slice(), here(&came).as_slice()) {
            out.push(Renamed {
                from: g.node_id.clone(),
                to: to.clone(),
            });
        }
    }
    text::sort_by(&mut out, |x, y| x.from.cmp(&y.from));
    out
}

/// `file` with the renamed rooms under their new ids, in its rooms and passages.
fn with_ids(file: &ZoneFile, renamed: &[Renamed]) -> ZoneFile {
    let mut f = file.clone();
    let new_id = |id: &mut String| {
        if let Some(r) = renamed.iter().find(|r| &r.from == id) {
            *id = r.to.clone();
        }
    };
    for n in f.nodes.iter_mut().flatten() {
        new_id(&mut n.node_id);
    }
    for e in f.edges.iter_mut().flatten() {
        new_id(&mut e.from_node);
        new_id(&mut e.to_node);
    }
    f
}

/// The changes, one line each ("room renamed: a -> b", "passage removed: a -> b",
/// "lock added: a -> b (none -> key)"), in the order the diff lists them; "no change" alone
/// when nothing changed.
pub fn change_lines(i: &Impact) -> Vec<String> {
    let c = &i.changes;
    let mut out = Vec::new();
    if i.renamed.is_empty() && c.is_empty() {
        out.push("no change".to_string());
    }
    if !c.fields.is_empty() {
        out.push(format!("zone: {} changed", c.fields.join(", ")));
    }
    for r in &i.renamed {
        out.push(format!("room renamed: {} -> {}", r.from, r.to));
    }
    for (what, ids) in [
        ("room added", &c.rooms_added),
        ("room removed", &c.rooms_removed),
        ("room changed", &c.rooms_changed),
        ("room moved", &c.rooms_moved),
    ] {
        out.extend(ids.iter().map(|id| format!("{what}: {id}")));
    }
    for (what, keys) in [
        ("passage added", &c.passages_added),
        ("passage removed", &c.passages_removed),
        ("passage changed", &c.passages_changed),
    ] {
        out.extend(keys.iter().map(|k| format!("{what}: {}", passage(k))));
    }
    let lock = |what: &str, l: &LockChange| {
        format!(
            "{what}: {} ({} -> {})",
            passage(&l.passage),
            l.before.as_str(),
            l.after.as_str()
        )
    };
    for (what, changes) in [
        ("lock added", &c.locks_added),
        ("lock removed", &c.locks_removed),
        ("lock changed", &c.locks_changed),
    ] {
        out.extend(changes.iter().map(|l| lock(what, l)));
    }
    out
}

/// A passage as the change lines name it: "from -> to", "(#2)" for a second one between the
/// same rooms.
fn passage(k: &PassageKey) -> String {
    if k.nth == 0 {
        format!("{} -> {}", k.from, k.to)
    } else {
        format!("{} -> {} (#{})", k.from, k.to, k.nth + 1)
    }
}

/// One of the zone's figures before and after a change, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    pub name: &'static str,
    pub before: String,
    pub after: String,
}

impl Figure {
    pub fn changed(&self) -> bool {
        self.before != self.after
    }
}

/// The zone's figures before and after: rooms, passages, routes, the longest and shortest
/// route, choke points, win odds at `min_level` and `max_level`.
pub fn figures(i: &Impact) -> Vec<Figure> {
    let (a, b) = (&i.before, &i.after);
    let routes = |v: Option<u64>| v.map_or_else(|| "unbounded".to_string(), |n| n.to_string());
    let len = |v: Option<usize>| v.map_or_else(|| "none".to_string(), |n| n.to_string());
    let win = |s: &Stats, max: bool| {
        s.difficulty.as_ref().map_or_else(
            || "not modelled".to_string(),
            |d| {
                let l = if max { &d.max_level } else { &d.min_level };
                // Tenths of a percent by hand: f64 printing costs the browser's module KBs.
                let t = (l.win_chance * 1000.0).round() as u64;
                format!("{}.{} % at level {}", t / 10, t % 10, l.level)
            },
        )
    };
    let figure = |name, before, after| Figure {
        name,
        before,
        after,
    };
    vec![
        figure("rooms", a.nodes.to_string(), b.nodes.to_string()),
        figure("passages", a.edges.to_string(), b.edges.to_string()),
        figure("routes", routes(a.routes), routes(b.routes)),
        figure(
            "longest route (rooms)",
            len(a.longest_path),
            len(b.longest_path),
        ),
        figure(
            "shortest route (rooms)",
            len(a.shortest_path),
            len(b.shortest_path),
        ),
        figure(
            "choke points",
            a.choke_points.join(", "),
            b.choke_points.join(", "),
        ),
        figure("win odds, min_level", win(a, false), win(b, false)),
        figure("win odds, max_level", win(a, true), win(b, true)),
    ]
}

/// The findings the change brings ("new finding: warning dead_end: …") and those it removes
/// ("finding gone: …"), one line each.
pub fn finding_lines(i: &Impact) -> Vec<String> {
    let line = |what: &str, d: &Diagnostic| {
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!("{what}: {severity} {}: {}", d.code.as_str(), d.message)
    };
    let added = i.findings_added.iter().map(|d| line("new finding", d));
    added
        .chain(i.findings_gone.iter().map(|d| line("finding gone", d)))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::format::{LockKind, parse};

    fn crypt() -> ZoneFile {
        parse(include_str!("../../../zones/crypt_valdris.json")).unwrap()
    }

    #[test]
    fn a_file_against_itself_changes_nothing() {
        let i = impact(&crypt(), &crypt());
        assert!(i.changes.is_empty() && i.renamed.is_empty());
        assert_eq!(i.before, i.after);
        assert!(i.findings_added.is_empty() && i.findings_gone.is_empty());
    }

    #[test]
    fn a_renamed_room_is_one_room_and_its_passages_follow() {
        let old = crypt();
        let mut new = old.clone();
        let from = "crypt_valdris.side_chapel".to_string();
        let to = "crypt_valdris.chapel_of_bones".to_string();
        for n in new.nodes.iter_mut().flatten() {
            if n.node_id == from {
                n.node_id = to.clone();
            }
        }
        for e in new.edges.iter_mut().flatten() {
            for end in [&mut e.from_node, &mut e.to_node] {
                if *end == from {
                    *end = to.clone();
                }
            }
        }
        let i = impact(&old, &new);
        assert_eq!(i.renamed, [Renamed { from, to }]);
        assert!(i.changes.is_empty(), "{:?}", i.changes);
        assert_eq!(i.before, i.after);
    }

    #[test]
    fn a_removed_passage_changes_the_routes_and_a_new_lock_the_odds() {
        let old = crypt();
        let mut new = old.clone();
        let edges = new.edges.as_mut().unwrap();
        // The first passage out of the fork that is not locked loses a route.
        let at = edges
            .iter()
            .position(|e| e.from_node == "crypt_valdris.fork" && e.lock_kind == LockKind::None)
            .unwrap();
        let gone = edges.remove(at);
        let i = impact(&old, &new);
        assert_eq!(i.changes.passages_removed.len(), 1);
        assert_eq!(i.changes.passages_removed[0].from, gone.from_node);
        assert!(
            i.after.routes < i.before.routes,
            "{:?}",
            (i.before.routes, i.after.routes)
        );
    }

    #[test]
    fn the_words_name_each_change_and_each_figure_before_and_after() {
        let old = crypt();
        let mut new = old.clone();
        let edges = new.edges.as_mut().unwrap();
        let at = edges
            .iter()
            .position(|e| {
                e.from_node == "crypt_valdris.fork" && e.to_node == "crypt_valdris.main_hall"
            })
            .unwrap();
        edges.remove(at);
        let i = impact(&old, &new);
        assert_eq!(
            change_lines(&i),
            ["passage removed: crypt_valdris.fork -> crypt_valdris.main_hall"]
        );
        let routes = figures(&i)
            .into_iter()
            .find(|f| f.name == "routes")
            .unwrap();
        assert_eq!((routes.before.as_str(), routes.after.as_str()), ("3", "2"));
        assert!(routes.changed());
        let win = figures(&i)
            .into_iter()
            .find(|f| f.name == "win odds, min_level")
            .unwrap();
        assert!(win.before.ends_with(" % at level 1"), "{win:?}");
        assert_eq!(change_lines(&impact(&old, &old)), ["no change"]);
        assert!(finding_lines(&impact(&old, &old)).is_empty());
    }
}
