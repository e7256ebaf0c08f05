//! What changes between two versions of a zone file: the zone's own fields, rooms,
//! passages and locks added, removed and changed. Pure and deterministic: every list is
//! sorted (rooms by id, passages by their ends), so the same two files always give the
//! same diff, and it serialises as it stands (the editor's Publish confirmation words it).
//!
//! Rooms are matched by id. Passages are matched by their ends (`from → to`); two passages
//! between the same rooms are matched in file order. A room that only moved (its position
//! hint) is `rooms_moved`, not `rooms_changed`. A passage whose lock changed is in
//! `locks_*` only when nothing else of it changed, else also in `passages_changed`.

use serde::Serialize;

use crate::format::{EdgeFile, LockKind, NodeFile, ZoneFile};
use crate::text;

/// A passage by its ends, and which of the passages between them (0 for the first).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PassageKey {
    pub from: String,
    pub to: String,
    pub nth: usize,
}

/// A lock that changed: its passage and its kind before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LockChange {
    pub passage: PassageKey,
    pub before: LockKind,
    pub after: LockKind,
}

/// The changes from one zone file to another.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZoneDiff {
    /// The zone's own fields that changed (`zone_id`, `name`, `tier`, `min_level`,
    /// `max_level`, `allow_loops`, `regions`), in that order.
    pub fields: Vec<&'static str>,
    pub rooms_added: Vec<String>,
    pub rooms_removed: Vec<String>,
    /// Rooms whose kind, label, flags, region or content changed.
    pub rooms_changed: Vec<String>,
    /// Rooms whose position hint alone changed.
    pub rooms_moved: Vec<String>,
    pub passages_added: Vec<PassageKey>,
    pub passages_removed: Vec<PassageKey>,
    /// Passages whose hint, weight or lock data changed.
    pub passages_changed: Vec<PassageKey>,
    /// Passages that had no lock and now have one (kept passages only).
    pub locks_added: Vec<LockChange>,
    /// Passages that had a lock and now have none.
    pub locks_removed: Vec<LockChange>,
    /// Passages whose lock kind or data changed, locked before and after.
    pub locks_changed: Vec<LockChange>,
}

impl ZoneDiff {
    /// Whether the two files are the same zone (nothing at all changed).
    pub fn is_empty(&self) -> bool {
        self == &ZoneDiff::default()
    }
}

/// What changes from `old` to `new`.
pub fn diff(old: &ZoneFile, new: &ZoneFile) -> ZoneDiff {
    let mut d = ZoneDiff::default();
    let fields: [(&'static str, bool); 7] = [
        ("zone_id", old.zone_id != new.zone_id),
        ("name", old.name != new.name),
        ("tier", old.tier != new.tier),
        ("min_level", old.min_level != new.min_level),
        ("max_level", old.max_level != new.max_level),
        ("allow_loops", old.allow_loops != new.allow_loops),
        ("regions", old.regions != new.regions),
    ];
    d.fields = fields.iter().filter(|f| f.1).map(|f| f.0).collect();

    // Sorted lists walked side by side (no map: each map type costs the wasm builds KBs).
    walk(&rooms(old), &rooms(new), |id, a, b| match (a, b) {
        (Some(_), None) => d.rooms_removed.push(id.clone()),
        (None, Some(_)) => d.rooms_added.push(id.clone()),
        (Some(n), Some(m)) => {
            let unmoved = NodeFile {
                pos_x: n.pos_x,
                pos_y: n.pos_y,
                ..m.clone()
            };
            if &unmoved != n {
                d.rooms_changed.push(id.clone());
            } else if m != n {
                d.rooms_moved.push(id.clone());
            }
        }
        (None, None) => {}
    });
    walk(&passages(old), &passages(new), |key, a, b| match (a, b) {
        (Some(_), None) => d.passages_removed.push(key.clone()),
        (None, Some(_)) => d.passages_added.push(key.clone()),
        (Some(e), Some(f)) => {
            let lock_same = e.lock_kind == f.lock_kind && e.lock_data == f.lock_data;
            if e.hint != f.hint
                || e.weight != f.weight
                || (!lock_same && e.lock_kind == f.lock_kind)
            {
                d.passages_changed.push(key.clone());
            }
            if !lock_same {
                let change = LockChange {
                    passage: key.clone(),
                    before: e.lock_kind,
                    after: f.lock_kind,
                };
                match (e.lock_kind == LockKind::None, f.lock_kind == LockKind::None) {
                    (true, false) => d.locks_added.push(change),
                    (false, true) => d.locks_removed.push(change),
                    _ => d.locks_changed.push(change),
                }
            }
        }
        (None, None) => {}
    });
    d
}

/// Calls `f` for each key of two lists sorted by key, with its value in each (if any).
fn walk<K: Ord, T>(a: &[(K, &T)], b: &[(K, &T)], mut f: impl FnMut(&K, Option<&T>, Option<&T>)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                f(&a[i].0, Some(a[i].1), None);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                f(&b[j].0, None, Some(b[j].1));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                f(&a[i].0, Some(a[i].1), Some(b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
}

/// The file's rooms by id, sorted (a repeated id: the first).
fn rooms(f: &ZoneFile) -> Vec<(String, &NodeFile)> {
    let mut v: Vec<(String, &NodeFile)> = f
        .nodes
        .iter()
        .flatten()
        .map(|n| (n.node_id.clone(), n))
        .collect();
    text::sort_by(&mut v, |a, b| a.0.cmp(&b.0));
    v.dedup_by(|b, a| a.0 == b.0);
    v
}

/// The file's passages by key, sorted by their ends, then file order.
fn passages(f: &ZoneFile) -> Vec<(PassageKey, &EdgeFile)> {
    let mut v: Vec<(PassageKey, &EdgeFile)> = f
        .edges
        .iter()
        .flatten()
        .map(|e| {
            let key = PassageKey {
                from: e.from_node.clone(),
                to: e.to_node.clone(),
                nth: 0,
            };
            (key, e)
        })
        .collect();
    // Stable: passages between the same rooms stay in file order, then are numbered.
    text::sort_by(&mut v, |a, b| a.0.cmp(&b.0));
    for i in 1..v.len() {
        if v[i].0.from == v[i - 1].0.from && v[i].0.to == v[i - 1].0.to {
            v[i].0.nth = v[i - 1].0.nth + 1;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::NodeKind;

    fn zone(rooms: &[&str], passages: &[(&str, &str)]) -> ZoneFile {
        ZoneFile {
            schema: None,
            format: 1,
            zone_id: "z".into(),
            name: "Z".into(),
            tier: 1,
            min_level: 1,
            max_level: 5,
            regions: Vec::new(),
            allow_loops: false,
            nodes: Some(
                rooms
                    .iter()
                    .enumerate()
                    .map(|(i, id)| NodeFile::plain(id, NodeKind::Exploration, id, 0, i as i32))
                    .collect(),
            ),
            edges: Some(passages.iter().map(|(a, b)| EdgeFile::open(a, b)).collect()),
            room_kinds: None,
            keys: Default::default(),
            harvests: Default::default(),
        }
    }

    fn key(from: &str, to: &str, nth: usize) -> PassageKey {
        PassageKey {
            from: from.into(),
            to: to.into(),
            nth,
        }
    }

    #[test]
    fn the_same_file_has_no_changes() {
        let z = zone(&["a", "b"], &[("a", "b")]);
        assert!(diff(&z, &z).is_empty());
    }

    #[test]
    fn rooms_and_passages_added_removed_changed_and_moved_are_listed_sorted() {
        let old = zone(&["c", "a", "b", "d"], &[("a", "b"), ("b", "c"), ("a", "b")]);
        let mut new = zone(&["a", "b", "e", "d", "f"], &[("a", "b"), ("a", "e")]);
        new.name = "Renamed".into();
        new.tier = 2;
        let nodes = new.nodes.as_mut().expect("nodes");
        nodes[0].label = "Changed".into();
        nodes[0].pos_y = Some(0);
        nodes[3].pos_x = Some(9);
        new.edges.as_mut().expect("edges")[0].hint = "A draft.".into();
        let d = diff(&old, &new);
        assert_eq!(d.fields, vec!["name", "tier"]);
        assert_eq!(d.rooms_added, vec!["e", "f"]);
        assert_eq!(d.rooms_removed, vec!["c"]);
        assert_eq!(d.rooms_changed, vec!["a"]);
        assert_eq!(d.rooms_moved, vec!["b", "d"]);
        assert_eq!(d.passages_added, vec![key("a", "e", 0)]);
        assert_eq!(d.passages_removed, vec![key("a", "b", 1), key("b", "c", 0)]);
        assert_eq!(d.passages_changed, vec![key("a", "b", 0)]);
    }

    #[test]
    fn locks_added_removed_and_changed_are_told_apart() {
        let old = zone(&["a", "b", "c"], &[("a", "b"), ("a", "c"), ("b", "c")]);
        let mut new = old.clone();
        let edges = new.edges.as_mut().expect("edges");
        edges[0].lock_kind = LockKind::LevelMin;
        edges[0].lock_data.insert("min_level".into(), 2.into());
        let mut old = old;
        let old_edges = old.edges.as_mut().expect("edges");
        old_edges[1].lock_kind = LockKind::PerceptionCheck;
        old_edges[1].lock_data.insert("dc".into(), 12.into());
        old_edges[2].lock_kind = LockKind::PerceptionCheck;
        old_edges[2].lock_data.insert("dc".into(), 12.into());
        edges[2].lock_kind = LockKind::PerceptionCheck;
        edges[2].lock_data.insert("dc".into(), 15.into());
        let d = diff(&old, &new);
        let keys = |v: &[LockChange]| v.iter().map(|c| c.passage.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&d.locks_added), vec![key("a", "b", 0)]);
        assert_eq!(keys(&d.locks_removed), vec![key("a", "c", 0)]);
        assert_eq!(keys(&d.locks_changed), vec![key("b", "c", 0)]);
        assert_eq!(
            d.passages_changed,
            vec![key("b", "c", 0)],
            "the same kind, new data"
        );
        let json = serde_json::to_string(&d.locks_added).expect("serialises");
        assert!(json.contains("\"before\":\"none\""), "{json}");
    }
}
