//! What a player may know, as the tests check it: zones whose every room, label and key is a
//! distinct token, and a check that an output names nothing its player view does not hold.
//! Shared by the core's player-view test and the workspace's test of the run page's payload
//! (which includes this file by path), so both check the same thing.

use std::collections::BTreeSet;

use serde_json::json;
use zonegraph_core::zone::{self, Zone};

/// Distinct tokens, none a substring of another: `pv.r1x` is not inside `pv.r12x`.
pub fn room_id(n: usize) -> String {
    format!("pv.r{n}x")
}
pub fn room_label(n: usize) -> String {
    format!("Chamber-{n}-Zq")
}
pub fn key_id(n: usize) -> String {
    format!("key{n}q")
}

/// A layered zone whose every room, label and key is a distinct token, with locks of every
/// kind, secrets, and Perception walls in front of rooms that have no other way in.
pub fn zone_json(widths: &[usize], picks: &[u8]) -> String {
    let mut pick = picks.iter().copied().cycle();
    let mut next = move || usize::from(pick.next().unwrap_or(0));
    let mut nodes = vec![
        json!({"node_id": room_id(0), "kind": "entry", "is_entry": true,
                                "label": room_label(0)}),
    ];
    let mut layers = vec![vec![0usize]];
    let mut n = 1;
    for &w in widths {
        let mut layer = Vec::new();
        for _ in 0..w {
            let kind = ["exploration", "trap", "elite", "fork", "merge", "secret"][next() % 6];
            let mut content = json!({});
            if next() % 4 == 0 {
                content["grants_key"] = json!(key_id(next() % 4));
            }
            nodes.push(
                json!({"node_id": room_id(n), "kind": kind, "label": room_label(n),
                              "content": content}),
            );
            layer.push(n);
            n += 1;
        }
        layers.push(layer);
    }
    let boss = n;
    nodes.push(
        json!({"node_id": room_id(boss), "kind": "boss", "is_boss": true,
                      "label": room_label(boss)}),
    );
    layers.push(vec![boss]);
    let lock = move |r: usize| match r % 9 {
        0 | 1 => json!({"lock_kind": "perception_check", "lock_data": {"dc": 5 + r % 17}}),
        2 => json!({"lock_kind": "stat_check", "lock_data": {"stat": "dex", "dc": 6 + r % 15}}),
        3 => json!({"lock_kind": "key_required", "lock_data": {"key_id": key_id(r % 4)}}),
        4 => json!({"lock_kind": "level_min", "lock_data": {"min_level": 2 + r % 7}}),
        _ => json!({}),
    };
    let mut edges = Vec::new();
    for pair in layers.windows(2) {
        let (here, there) = (&pair[0], &pair[1]);
        let mut reached = vec![false; there.len()];
        for &from in here {
            for _ in 0..1 + next() % 2 {
                let t = next() % there.len();
                reached[t] = true;
                let mut e = lock(next());
                e["from_node"] = json!(room_id(from));
                e["to_node"] = json!(room_id(there[t]));
                e["hint"] = json!(format!("hint {from}"));
                edges.push(e);
            }
        }
        for (t, seen) in reached.iter().enumerate() {
            if !seen {
                let mut e = lock(next());
                e["from_node"] = json!(room_id(here[0]));
                e["to_node"] = json!(room_id(there[t]));
                edges.push(e);
            }
        }
    }
    // Keep one passage per pair of rooms (a graph, not a multigraph).
    let mut seen = BTreeSet::new();
    edges.retain(|e| seen.insert((e["from_node"].to_string(), e["to_node"].to_string())));
    json!({"format": 1, "zone_id": "pv", "name": "View Test", "tier": 2, "min_level": 1,
           "max_level": 9, "allow_loops": false, "nodes": nodes, "edges": edges})
    .to_string()
}

/// Every run of a number after `prefix` in `text` ("DC 12" → 12).
pub fn numbers_after(text: &str, prefix: &str) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        let digits: String = text[i + prefix.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            out.insert(n);
        }
    }
    out
}

/// Checks one output against the player view it was sent with.
pub fn check_output(zone: &Zone, view_json: &str, output: &str, what: &str) -> Result<(), String> {
    for ix in zone.graph.node_indices() {
        let node = zone.node(ix);
        for token in [node.id.as_str(), node.label.as_str()] {
            if output.contains(token) && !view_json.contains(token) {
                return Err(format!(
                    "{what} names {token:?}, which the view does not hold"
                ));
            }
        }
        if let Some(k) = &node.content.grants_key
            && output.contains(k.as_str())
            && !view_json.contains(k.as_str())
        {
            return Err(format!(
                "{what} names the key {k:?}, which the view does not hold"
            ));
        }
    }
    for e in zone.graph.edge_weights() {
        if let zone::Lock::KeyRequired { key_id } = &e.lock
            && output.contains(key_id.as_str())
            && !view_json.contains(key_id.as_str())
        {
            return Err(format!("{what} names the key {key_id:?} of a lock"));
        }
    }
    let view_dcs = numbers_after(view_json, "\"dc\":");
    for dc in numbers_after(output, "DC ") {
        if !view_dcs.contains(&dc) {
            return Err(format!(
                "{what} shows DC {dc}, which the view does not hold"
            ));
        }
    }
    let view_levels = numbers_after(view_json, "\"min_level\":");
    for level in numbers_after(output, "requires level ") {
        if !view_levels.contains(&level) {
            return Err(format!(
                "{what} shows level {level}, which the view does not hold"
            ));
        }
    }
    Ok(())
}
