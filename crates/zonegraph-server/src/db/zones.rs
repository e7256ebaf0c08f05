//! The zone tables `zone_meta`, `zone_node` and `zone_edge`: the rows of the zones served
//! (written whenever the served set changes, for readers of the seed's schema such as
//! gogobee), and the graphs read back from them (a database from before zone versions, whose
//! tables were the only record).

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};
use zonegraph_core::Diagnostic;
use zonegraph_core::format::{ContentFile, EdgeFile, LockKind, NodeFile, RegionFile, ZoneFile};
use zonegraph_core::zone::{self, Zone};

use super::Conn;
use super::sql::vals;

/// A zone's rows, the same on both databases: `zone_meta`, its `zone_node`s in file order,
/// its `zone_edge`s in file order.
#[derive(Debug)]
pub struct ZoneRows {
    pub meta: MetaRow,
    pub nodes: Vec<NodeRow>,
    pub edges: Vec<EdgeRow>,
}

/// A `zone_meta` row (the order of the zone files is `ord`; `imported_at_ms` is the caller's).
#[derive(Debug)]
pub struct MetaRow {
    pub zone_id: String,
    pub ord: i64,
    pub name: String,
    pub tier: i64,
    pub min_level: i64,
    pub max_level: i64,
    pub regions_json: String,
    /// The file's `keys` and `harvests`: `{"keys": {id: name}, "harvests": {id: name}}`.
    pub names_json: String,
    pub allow_loops: bool,
    pub legacy: bool,
    pub source_file: String,
}

/// `zone_meta.names_json`.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Names {
    keys: BTreeMap<String, String>,
    harvests: BTreeMap<String, String>,
}

/// A `zone_node` row.
#[derive(Debug)]
pub struct NodeRow {
    pub node_id: String,
    pub region_id: String,
    pub kind: String,
    pub label: String,
    pub is_entry: bool,
    pub is_boss: bool,
    pub pos_x: i64,
    pub pos_y: i64,
    pub content_json: String,
}

/// A `zone_edge` row.
#[derive(Debug)]
pub struct EdgeRow {
    pub from_node: String,
    pub to_node: String,
    pub lock_kind: String,
    pub lock_data_json: String,
    pub hint: String,
    pub weight: i64,
}

/// The rows of `zones` (`(source file, zone)`, in order).
pub fn zone_rows(zones: &[(String, Zone)]) -> Result<Vec<ZoneRows>> {
    let mut out = Vec::with_capacity(zones.len());
    for (ord, (source, zone)) in zones.iter().enumerate() {
        let file = zone.to_file();
        let mut nodes = Vec::new();
        for n in file.nodes.as_deref().unwrap_or_default() {
            nodes.push(NodeRow {
                node_id: n.node_id.clone(),
                region_id: n.region_id.clone(),
                kind: n.kind.as_str().to_string(),
                label: n.label.clone(),
                is_entry: n.is_entry,
                is_boss: n.is_boss,
                pos_x: i64::from(n.pos_x.unwrap_or(0)),
                pos_y: i64::from(n.pos_y.unwrap_or(0)),
                content_json: content_json(n)?,
            });
        }
        let mut edges = Vec::new();
        for e in file.edges.as_deref().unwrap_or_default() {
            edges.push(EdgeRow {
                from_node: e.from_node.clone(),
                to_node: e.to_node.clone(),
                lock_kind: e.lock_kind.as_str().to_string(),
                lock_data_json: serde_json::to_string(&e.lock_data)?,
                hint: e.hint.clone(),
                weight: i64::from(e.weight),
            });
        }
        out.push(ZoneRows {
            meta: MetaRow {
                zone_id: file.zone_id.clone(),
                ord: ord as i64,
                name: file.name.clone(),
                tier: i64::from(file.tier),
                min_level: i64::from(file.min_level),
                max_level: i64::from(file.max_level),
                regions_json: serde_json::to_string(&file.regions)?,
                names_json: serde_json::to_string(&Names {
                    keys: file.keys.clone(),
                    harvests: file.harvests.clone(),
                })?,
                allow_loops: file.allow_loops,
                legacy: zone.legacy,
                source_file: source.clone(),
            },
            nodes,
            edges,
        });
    }
    Ok(out)
}

/// Replaces every zone row with `rows`, inside the caller's transaction: the tables hold the
/// zones served.
pub fn write_zone_rows(conn: &dyn Conn, rows: &[ZoneRows], now: i64) -> Result<()> {
    for table in ["zone_edge", "zone_node", "zone_meta"] {
        conn.execute(&format!("DELETE FROM {table}"), &[])?;
    }
    for ZoneRows {
        meta: m,
        nodes,
        edges,
    } in rows
    {
        conn.execute(
            "INSERT INTO zone_meta (zone_id, ord, name, tier, min_level, max_level,
               regions_json, allow_loops, legacy, source_file, imported_at_ms, names_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            &vals![
                &m.zone_id,
                m.ord,
                &m.name,
                m.tier,
                m.min_level,
                m.max_level,
                &m.regions_json,
                m.allow_loops,
                m.legacy,
                &m.source_file,
                now,
                &m.names_json
            ],
        )?;
        for n in nodes {
            conn.execute(
                "INSERT INTO zone_node (node_id, zone_id, region_id, kind, label, is_entry,
                   is_boss, pos_x, pos_y, content_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                &vals![
                    &n.node_id,
                    &m.zone_id,
                    &n.region_id,
                    &n.kind,
                    &n.label,
                    n.is_entry,
                    n.is_boss,
                    n.pos_x,
                    n.pos_y,
                    &n.content_json,
                ],
            )
            .with_context(|| format!("cannot store room {}", n.node_id))?;
        }
        for e in edges {
            conn.execute(
                "INSERT INTO zone_edge (zone_id, from_node, to_node, lock_kind, lock_data_json,
                   hint, weight) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                &vals![
                    &m.zone_id,
                    &e.from_node,
                    &e.to_node,
                    &e.lock_kind,
                    &e.lock_data_json,
                    &e.hint,
                    e.weight
                ],
            )?;
        }
    }
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

/// Every zone in the tables, with the file it came from, in order. A zone whose rows do
/// not build cleanly is an error naming it.
pub fn read_zones(conn: &dyn Conn) -> Result<Vec<(String, Zone)>> {
    let metas = conn.query(
        "SELECT zone_id, ord, name, tier, min_level, max_level, regions_json, allow_loops,
           legacy, source_file, names_json
         FROM zone_meta ORDER BY ord, zone_id",
        &[],
    )?;
    let mut zones = Vec::with_capacity(metas.len());
    for r in metas {
        let meta = MetaRow {
            zone_id: r.text(0)?,
            ord: r.int(1)?,
            name: r.text(2)?,
            tier: r.int(3)?,
            min_level: r.int(4)?,
            max_level: r.int(5)?,
            regions_json: r.text(6)?,
            allow_loops: r.flag(7)?,
            legacy: r.flag(8)?,
            source_file: r.text(9)?,
            names_json: r.text(10)?,
        };
        let nodes = conn
            .query(
                &format!(
                    "SELECT node_id, region_id, kind, label, is_entry, is_boss, pos_x, pos_y,
                       content_json
                     FROM zone_node WHERE zone_id = ?1 ORDER BY {}",
                    conn.node_order()
                ),
                &vals![&meta.zone_id],
            )?
            .iter()
            .map(|r| {
                Ok(NodeRow {
                    node_id: r.text(0)?,
                    region_id: r.text(1)?,
                    kind: r.text(2)?,
                    label: r.text(3)?,
                    is_entry: r.flag(4)?,
                    is_boss: r.flag(5)?,
                    pos_x: r.int(6)?,
                    pos_y: r.int(7)?,
                    content_json: r.text(8)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let edges = conn
            .query(
                "SELECT from_node, to_node, lock_kind, lock_data_json, hint, weight
                 FROM zone_edge WHERE zone_id = ?1 ORDER BY edge_id",
                &vals![&meta.zone_id],
            )?
            .iter()
            .map(|r| {
                Ok(EdgeRow {
                    from_node: r.text(0)?,
                    to_node: r.text(1)?,
                    lock_kind: r.text(2)?,
                    lock_data_json: r.text(3)?,
                    hint: r.text(4)?,
                    weight: r.int(5)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let source = meta.source_file.clone();
        zones.push((source, zone_from_rows(ZoneRows { meta, nodes, edges })?));
    }
    Ok(zones)
}

/// The runtime graph of a zone's rows; rows that do not build cleanly are an error naming the
/// zone and what is wrong.
pub fn zone_from_rows(rows: ZoneRows) -> Result<Zone> {
    let ZoneRows { meta, nodes, edges } = rows;
    let zone_id = meta.zone_id;
    let bad = |what: &str| format!("zone {zone_id}: bad {what} in the database");
    let int = |v: i64, what: &str| -> Result<i32> { i32::try_from(v).with_context(|| bad(what)) };
    let regions: Vec<RegionFile> =
        serde_json::from_str(&meta.regions_json).with_context(|| bad("regions_json"))?;
    let names: Names = serde_json::from_str(&meta.names_json).with_context(|| bad("names_json"))?;
    let mut node_files = Vec::with_capacity(nodes.len());
    for n in nodes {
        let node_id = n.node_id;
        let mut content: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&n.content_json)
                .with_context(|| bad(&format!("content_json of {node_id}")))?;
        let hinted = content.remove("pos_hint") != Some(false.into());
        let content: ContentFile = serde_json::from_value(content.into())
            .with_context(|| bad(&format!("content_json of {node_id}")))?;
        node_files.push(NodeFile {
            kind: serde_json::from_value(n.kind.into())
                .with_context(|| bad(&format!("kind of {node_id}")))?,
            label: n.label,
            is_entry: n.is_entry,
            is_boss: n.is_boss,
            region_id: n.region_id,
            pos_x: if hinted {
                Some(int(n.pos_x, "pos_x")?)
            } else {
                None
            },
            pos_y: if hinted {
                Some(int(n.pos_y, "pos_y")?)
            } else {
                None
            },
            content,
            node_id,
        });
    }
    let mut edge_files = Vec::with_capacity(edges.len());
    for e in edges {
        let (from, to) = (&e.from_node, &e.to_node);
        let lock_kind: LockKind = serde_json::from_value(e.lock_kind.clone().into())
            .with_context(|| bad(&format!("lock_kind of {from} -> {to}")))?;
        let lock_data: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(&e.lock_data_json)
                .with_context(|| bad(&format!("lock_data_json of {from} -> {to}")))?;
        let weight = int(e.weight, "weight")?;
        edge_files.push(EdgeFile {
            from_node: e.from_node,
            to_node: e.to_node,
            lock_kind,
            lock_data,
            hint: e.hint,
            weight,
        });
    }
    let file = ZoneFile {
        schema: None,
        format: zonegraph_core::format::FORMAT_VERSION,
        zone_id: zone_id.clone(),
        name: meta.name,
        tier: u8::try_from(meta.tier).with_context(|| bad("tier"))?,
        min_level: u32::try_from(meta.min_level).with_context(|| bad("min_level"))?,
        max_level: u32::try_from(meta.max_level).with_context(|| bad("max_level"))?,
        regions,
        allow_loops: meta.allow_loops,
        nodes: Some(node_files),
        edges: Some(edge_files),
        room_kinds: None,
        keys: names.keys,
        harvests: names.harvests,
    };
    let (mut zone, findings) = zone::build(&file);
    if let Some(d) = findings.iter().find(|d: &&Diagnostic| d.is_error()) {
        bail!(
            "zone {zone_id} in the database does not build: {}",
            d.message
        );
    }
    zone.legacy = meta.legacy;
    Ok(zone)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn the_tables_keep_names_and_the_designers_data() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        super::super::migrate(&mut conn).unwrap();
        let file: ZoneFile = serde_json::from_value(serde_json::json!({
            "format": 1, "zone_id": "g", "name": "G", "tier": 1, "min_level": 1, "max_level": 3,
            "keys": {"sigil": "the Sigil"}, "harvests": {"cap": "Glowcaps"},
            "nodes": [
                {"node_id": "g.a", "kind": "entry", "is_entry": true,
                 "content": {"extra": {"cue": "a", "n": [1, 2]}}},
                {"node_id": "g.b", "kind": "boss", "is_boss": true, "content": {"grants_key": "sigil"}}
            ],
            "edges": [{"from_node": "g.a", "to_node": "g.b"}]
        }))
        .unwrap();
        let (zone, _) = zone::build(&file);
        let rows = zone_rows(&[("g.json".into(), zone)]).unwrap();
        write_zone_rows(&conn, &rows, 0).unwrap();
        let back = read_zones(&conn).unwrap().pop().unwrap().1.to_file();
        assert_eq!(back.keys, file.keys);
        assert_eq!(back.harvests, file.harvests);
        let nodes = back.nodes.unwrap();
        assert_eq!(
            nodes[0]
                .content
                .extra
                .clone()
                .map(serde_json::Value::Object),
            Some(serde_json::json!({"cue": "a", "n": [1, 2]}))
        );
    }
}
