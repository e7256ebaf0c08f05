//! Zones: the folder imported into `zone_meta`, `zone_node` and `zone_edge`, and the
//! runtime graphs loaded back from them.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};
use rusqlite::{Connection, params};
use zonegraph_core::Diagnostic;
use zonegraph_core::format::{ContentFile, EdgeFile, LockKind, NodeFile, RegionFile, ZoneFile};
use zonegraph_core::zone::{self, Zone};

/// Replaces every zone in the tables with `zones` (`(source file, zone)`, in order), in one
/// transaction: the folder is the source of truth.
pub fn import_zones(conn: &mut Connection, zones: &[(String, Zone)], now: i64) -> Result<()> {
    let tx = conn.transaction()?;
    tx.execute_batch("DELETE FROM zone_edge; DELETE FROM zone_node; DELETE FROM zone_meta;")?;
    {
        let mut meta = tx.prepare(
            "INSERT INTO zone_meta (zone_id, ord, name, tier, min_level, max_level,
               regions_json, allow_loops, legacy, source_file, imported_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        let mut node = tx.prepare(
            "INSERT INTO zone_node (node_id, zone_id, region_id, kind, label, is_entry, is_boss,
               pos_x, pos_y, content_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        let mut edge = tx.prepare(
            "INSERT INTO zone_edge (zone_id, from_node, to_node, lock_kind, lock_data_json,
               hint, weight) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (ord, (source, zone)) in zones.iter().enumerate() {
            let file = zone.to_file();
            meta.execute(params![
                file.zone_id,
                ord as i64,
                file.name,
                file.tier,
                file.min_level,
                file.max_level,
                serde_json::to_string(&file.regions)?,
                file.allow_loops,
                zone.legacy,
                source,
                now
            ])?;
            for n in file.nodes.as_deref().unwrap_or_default() {
                node.execute(params![
                    n.node_id,
                    file.zone_id,
                    n.region_id,
                    n.kind.as_str(),
                    n.label,
                    n.is_entry,
                    n.is_boss,
                    n.pos_x.unwrap_or(0),
                    n.pos_y.unwrap_or(0),
                    content_json(n)?,
                ])
                .with_context(|| format!("cannot store room {}", n.node_id))?;
            }
            for e in file.edges.as_deref().unwrap_or_default() {
                edge.execute(params![
                    file.zone_id,
                    e.from_node,
                    e.to_node,
                    e.lock_kind.as_str(),
                    serde_json::to_string(&e.lock_data)?,
                    e.hint,
                    e.weight
                ])?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// `content_json`: the file's `content` object, plus `"pos_hint": false` for a room without
/// layout hints (the `pos_x`/`pos_y` columns are NOT NULL, so they cannot say "none").
fn content_json(n: &NodeFile) -> Result<String> {
    let mut v = serde_json::to_value(&n.content)?;
    if n.pos_x.is_none()
        && n.pos_y.is_none()
        && let Some(m) = v.as_object_mut()
    {
        m.insert("pos_hint".into(), false.into());
    }
    Ok(v.to_string())
}

/// `zone_meta`: id, name, tier, min_level, max_level, regions_json, allow_loops, legacy.
type MetaRow = (String, String, u8, u32, u32, String, bool, bool);

/// Loads every zone from the tables (not from the files): the runtime graphs. A zone whose
/// rows do not build cleanly is an error naming it.
pub fn load_zones(conn: &Connection) -> Result<Vec<Zone>> {
    let mut metas = conn.prepare(
        "SELECT zone_id, name, tier, min_level, max_level, regions_json, allow_loops, legacy
         FROM zone_meta ORDER BY ord, zone_id",
    )?;
    let mut nodes = conn.prepare(
        "SELECT node_id, kind, label, is_entry, is_boss, region_id, pos_x, pos_y, content_json
         FROM zone_node WHERE zone_id = ?1 ORDER BY rowid",
    )?;
    let mut edges = conn.prepare(
        "SELECT from_node, to_node, lock_kind, lock_data_json, hint, weight
         FROM zone_edge WHERE zone_id = ?1 ORDER BY edge_id",
    )?;
    let rows: Vec<MetaRow> = metas
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::with_capacity(rows.len());
    for (zone_id, name, tier, min_level, max_level, regions_json, allow_loops, legacy) in rows {
        let bad = |what: &str| format!("zone {zone_id}: bad {what} in the database");
        let regions: Vec<RegionFile> =
            serde_json::from_str(&regions_json).with_context(|| bad("regions_json"))?;
        let node_rows = nodes
            .query_map([&zone_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, bool>(3)?,
                    r.get::<_, bool>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, i32>(6)?,
                    r.get::<_, i32>(7)?,
                    r.get::<_, String>(8)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut node_files = Vec::with_capacity(node_rows.len());
        for (node_id, kind, label, is_entry, is_boss, region_id, x, y, content) in node_rows {
            let mut content: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&content)
                    .with_context(|| bad(&format!("content_json of {node_id}")))?;
            let hinted = content.remove("pos_hint") != Some(false.into());
            let content: ContentFile = serde_json::from_value(content.into())
                .with_context(|| bad(&format!("content_json of {node_id}")))?;
            node_files.push(NodeFile {
                kind: serde_json::from_value(kind.into())
                    .with_context(|| bad(&format!("kind of {node_id}")))?,
                node_id,
                label,
                is_entry,
                is_boss,
                region_id,
                pos_x: hinted.then_some(x),
                pos_y: hinted.then_some(y),
                content,
            });
        }
        let edge_rows = edges
            .query_map([&zone_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i32>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut edge_files = Vec::with_capacity(edge_rows.len());
        for (from_node, to_node, lock_kind, lock_data, hint, weight) in edge_rows {
            let lock_kind: LockKind = serde_json::from_value(lock_kind.into())
                .with_context(|| bad(&format!("lock_kind of {from_node} -> {to_node}")))?;
            let lock_data: BTreeMap<String, serde_json::Value> =
                serde_json::from_str(&lock_data)
                    .with_context(|| bad(&format!("lock_data_json of {from_node} -> {to_node}")))?;
            edge_files.push(EdgeFile {
                from_node,
                to_node,
                lock_kind,
                lock_data,
                hint,
                weight,
            });
        }
        let file = ZoneFile {
            schema: None,
            format: zonegraph_core::format::FORMAT_VERSION,
            zone_id: zone_id.clone(),
            name,
            tier,
            min_level,
            max_level,
            regions,
            allow_loops,
            nodes: Some(node_files),
            edges: Some(edge_files),
            room_kinds: None,
        };
        let (mut zone, findings) = zone::build(&file);
        if let Some(d) = findings.iter().find(|d: &&Diagnostic| d.is_error()) {
            bail!(
                "zone {zone_id} in the database does not build: {}",
                d.message
            );
        }
        zone.legacy = legacy;
        out.push(zone);
    }
    Ok(out)
}
