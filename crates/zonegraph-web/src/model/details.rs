//! What the designer sees beyond the drawing: the lock marks with their numbers, and the
//! details panel's rows about a room or a passage, everything in the file and a playtest's
//! real rolls. (A player's panel is the core's `chat::room_details`, from the player view.)

use zonegraph_core::analysis;
use zonegraph_core::engine::{Check, Run};
use zonegraph_core::zone::{Lock, Zone};

use super::numbers::percent;
use crate::names::{Row, kind_name, lock_name};

/// Short text for a lock mark on the designer's map.
pub fn lock_badge(lock: &Lock) -> Option<String> {
    Some(match lock {
        Lock::None => return None,
        Lock::PerceptionCheck { dc } => format!("DC {dc}"),
        Lock::StatCheck { ability, dc } => {
            format!("{} {dc}", ability.as_str().to_ascii_uppercase())
        }
        Lock::KeyRequired { .. } => "⚷ key".into(),
        Lock::LevelMin { min_level } => format!("Lv {min_level}"),
        Lock::RegionClear { .. } => "region".into(),
        Lock::Invalid { .. } => "sealed".into(),
    })
}

/// What the designer's details panel says about a room: everything in the file, and the
/// playtest's run. (A player's panel is [`crate::player::room_details`], from the player view.)
pub fn room_details(zone: &Zone, run: Option<&Run>, id: &str) -> Vec<Row> {
    let Some(node) = zone.node_by_id(id) else {
        return Vec::new();
    };
    let mut rows: Vec<Row> = vec![
        ("Room", node.display_label().to_string()),
        ("Kind", kind_name(node.kind).to_string()),
        ("Id", node.id.to_string()),
    ];
    if node.is_entry {
        rows.push(("Role", "entry".into()));
    }
    if node.is_boss {
        rows.push(("Role", "boss".into()));
    }
    if !node.region_id.is_empty() {
        rows.push((
            "Region",
            format!("{} ({})", zone.region_name(&node.region_id), node.region_id),
        ));
    }
    let c = &node.content;
    rows.push((
        "Loot bias",
        format!("×{}", zonegraph_core::text::decimal(c.loot_bias)),
    ));
    if !c.encounter_override.is_empty() {
        rows.push(("Encounter", c.encounter_override.clone()));
    }
    if !c.narration.is_empty() {
        rows.push(("Narration", c.narration.clone()));
    }
    if !c.harvest_ref.is_empty() {
        rows.push(("Harvest", c.harvest_ref.clone()));
    }
    if let Some(key) = &c.grants_key {
        rows.push(("Grants key", key.clone()));
    }
    if let Some((x, y)) = node.pos {
        rows.push(("Position", format!("column {x}, row {y}")));
    }
    if let Some(run) = run {
        if let Some(i) = run.visited_nodes.iter().position(|v| v.as_str() == id) {
            rows.push(("Run", format!("visited as room {}", i + 1)));
        }
        if run.current_node.as_str() == id {
            rows.push(("Run", "the player is here".into()));
        }
    }
    if let Some(ix) = zone.node_index(id) {
        for (i, e) in zone.exits(ix).into_iter().enumerate() {
            let to = zone.node(zone.target(e));
            let lock = &zone.graph[e].lock;
            let how = if lock.is_locked() {
                analysis::requirement(zone, lock)
            } else {
                "open".into()
            };
            rows.push(("Exit", format!("{}. {} — {how}", i + 1, to.display_label())));
        }
    }
    rows
}

/// What the designer's details panel says about a passage (by file index): the lock, its
/// requirement and hint, and in a playtest the frozen roll of the pending fork.
pub fn passage_details(zone: &Zone, run: Option<&Run>, edge: usize) -> Vec<Row> {
    let Some(eix) = zone
        .graph
        .edge_indices()
        .find(|&e| zone.graph[e].file_index == edge)
    else {
        return Vec::new();
    };
    let e = &zone.graph[eix];
    let (s, t) = (zone.source(eix), zone.target(eix));
    let mut rows: Vec<Row> = vec![
        ("From", zone.node(s).display_label().to_string()),
        ("To", zone.node(t).display_label().to_string()),
        ("Lock", lock_name(e.lock.kind()).to_string()),
    ];
    if e.lock.is_locked() {
        rows.push(("Requires", analysis::requirement(zone, &e.lock)));
    }
    if !e.hint.is_empty() {
        rows.push(("Hint", e.hint.clone()));
    }
    let exits = zone.exits(s);
    if exits.len() >= 2
        && let Some(i) = exits.iter().position(|&x| x == eix)
    {
        rows.push((
            "Menu",
            format!("option {} of {} (weight {})", i + 1, exits.len(), e.weight),
        ));
    }
    if let Some(chance) = match &e.lock {
        Lock::PerceptionCheck { .. } | Lock::StatCheck { .. } => {
            let by: Vec<String> = [0, 2, 4]
                .iter()
                .filter_map(|&m| {
                    analysis::lock_pass_chance(&e.lock, 1, m)
                        .map(|c| format!("{m:+}: {}", percent(c)))
                })
                .collect();
            Some(by.join(" · "))
        }
        _ => None,
    } {
        rows.push(("Pass chance", chance));
    }
    if let Some(run) = run
        && let Some(fork) = run
            .pending_fork
            .as_ref()
            .filter(|f| f.at == zone.node(s).id)
        && let Some((i, o)) = fork
            .options
            .iter()
            .enumerate()
            .find(|(_, o)| o.to_node == zone.node(t).id)
    {
        rows.push((
            "This run",
            format!("option {}: {}", i + 1, check_text(zone, &o.check)),
        ));
    }
    rows
}

/// A frozen check in words: "Perception 11 vs DC 12 — failed".
pub fn check_text(zone: &Zone, check: &Check) -> String {
    let verdict = |ok: bool| if ok { "passed" } else { "failed" };
    match check {
        Check::None => "open".into(),
        Check::PerceptionCheck { d20, modifier, dc } => format!(
            "Perception {} vs DC {dc} — {} (d20 {d20}, {modifier:+})",
            i64::from(*d20) + i64::from(*modifier),
            verdict(check.passes())
        ),
        Check::StatCheck {
            ability,
            d20,
            modifier,
            dc,
        } => format!(
            "{} {} vs DC {dc} — {} (d20 {d20}, {modifier:+})",
            ability.name(),
            i64::from(*d20) + i64::from(*modifier),
            verdict(check.passes())
        ),
        Check::KeyRequired { key_id, held } => {
            format!("key {key_id} — {}", if *held { "held" } else { "not held" })
        }
        Check::LevelMin { min_level, level } => {
            format!("level {level} vs {min_level} — {}", verdict(check.passes()))
        }
        Check::RegionClear { region_id, cleared } => format!(
            "{} — {}",
            zone.region_name(region_id),
            if *cleared { "cleared" } else { "not cleared" }
        ),
        Check::Invalid { .. } => "sealed: the lock data is unusable".into(),
    }
}
