//! Synthetic zones for benchmarks and stress tests: deterministic, valid by construction.
//!
//! The pseudo-random choices come from the caller's seed, so the core still owns no
//! randomness: the same arguments always give the same zone.

use crate::format::{EdgeFile, LockKind, NodeFile, NodeKind, ZoneFile};

/// A layered zone of about `rooms` rooms (at least 2): an entry, layers of `width` rooms, and a
/// boss. Room `j` of a layer leads to room `j` of the next layer through an open passage and,
/// at every other room, also to room `j + 1` through a Perception-locked passage with a hint, so
/// the zone has many forks and merges and every room still reaches the boss unlocked.
/// `width` 1 gives a plain chain.
pub fn layered(zone_id: &str, rooms: usize, width: usize, seed: u64) -> ZoneFile {
    let width = width.max(1);
    let inner = rooms.saturating_sub(2);
    let layers = inner.div_ceil(width);
    let mut rng = seed | 1;
    let mut next = move || {
        // xorshift64: cheap and reproducible.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let id = |layer: usize, j: usize| format!("{zone_id}.l{layer}_{j}");
    let entry = format!("{zone_id}.entry");
    let boss = format!("{zone_id}.boss");
    let kinds = [
        NodeKind::Exploration,
        NodeKind::Trap,
        NodeKind::Elite,
        NodeKind::Harvest,
        NodeKind::RestCamp,
        NodeKind::Merge,
    ];

    let mut nodes = Vec::with_capacity(inner + 2);
    let mut edges = Vec::with_capacity(inner * 2 + width);
    nodes.push(node(&entry, NodeKind::Entry, "Entry", 0, 0));
    for layer in 0..layers {
        let in_layer = width.min(inner - layer * width);
        for j in 0..in_layer {
            let kind = kinds[usize::try_from(next() % kinds.len() as u64).unwrap_or(0)];
            let row = i32::try_from(layer + 1).unwrap_or(i32::MAX);
            let col = i32::try_from(j).unwrap_or(i32::MAX);
            nodes.push(node(
                &id(layer, j),
                kind,
                &format!("Room {layer}.{j}"),
                col,
                row,
            ));
            if layer == 0 {
                edges.push(edge(&entry, &id(0, j), None));
            }
            let next_len = if layer + 1 < layers {
                width.min(inner - (layer + 1) * width)
            } else {
                0
            };
            if next_len == 0 {
                edges.push(edge(&id(layer, j), &boss, None));
                continue;
            }
            edges.push(edge(
                &id(layer, j),
                &id(layer + 1, j.min(next_len - 1)),
                None,
            ));
            if j % 2 == 0 && j + 1 < next_len {
                let dc = 8 + next() % 10;
                edges.push(edge(&id(layer, j), &id(layer + 1, j + 1), Some(dc)));
            }
        }
    }
    if layers == 0 {
        edges.push(edge(&entry, &boss, None));
    }
    let boss_row = i32::try_from(layers + 1).unwrap_or(i32::MAX);
    nodes.push(node(&boss, NodeKind::Boss, "Boss", 0, boss_row));
    // Every room of layer l+1 is reached from room j of layer l: only the last layer can be
    // narrower than the others.
    ZoneFile {
        schema: None,
        format: crate::format::FORMAT_VERSION,
        zone_id: zone_id.to_string(),
        name: format!("Synthetic {rooms}"),
        tier: 3,
        min_level: 1,
        max_level: 20,
        regions: Vec::new(),
        allow_loops: false,
        nodes: Some(nodes),
        edges: Some(edges),
        room_kinds: None,
        keys: Default::default(),
        harvests: Default::default(),
    }
}

fn node(id: &str, kind: NodeKind, label: &str, x: i32, y: i32) -> NodeFile {
    NodeFile::plain(id, kind, label, x, y)
}

fn edge(from: &str, to: &str, perception_dc: Option<u64>) -> EdgeFile {
    let mut e = EdgeFile::open(from, to);
    if let Some(dc) = perception_dc {
        e.lock_kind = LockKind::PerceptionCheck;
        e.lock_data.insert("dc".into(), dc.into());
        e.hint = "A draught stirs behind loose stones.".into();
        e.weight = 2;
    }
    e
}
