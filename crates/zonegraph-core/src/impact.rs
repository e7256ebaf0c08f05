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

use serde::Serialize;

use crate::analysis::{self, Stats};
use crate::diagnostic::Diagnostic;
use crate::diff::{self, ZoneDiff};
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
}
