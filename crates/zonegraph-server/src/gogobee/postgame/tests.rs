//! Tests of the module above.

use super::*;
use crate::gogobee::lex::lex;
use crate::gogobee::syntax::parse_file;

/// Literal values only (no constants), for reading specs written out in full.
struct Literals;

impl Values for Literals {
    fn string(&self, e: &Expr) -> Result<String, String> {
        match &e.kind {
            ExprKind::Str(s) => Ok(s.clone()),
            _ => Err(format!("{} is not a string", quoted(e))),
        }
    }
    fn float(&self, e: &Expr) -> Result<f64, String> {
        match &e.kind {
            ExprKind::Float(t) | ExprKind::Int(t) => t.parse().map_err(|_| t.clone()),
            _ => Err(format!("{} is not a number", quoted(e))),
        }
    }
    fn node_kind(&self, e: &Expr) -> Result<Option<NodeKind>, String> {
        let s = self.string(e)?;
        Ok(NodeKind::ALL.into_iter().find(|k| k.as_str() == s))
    }
    fn lock_kind(&self, e: &Expr) -> Result<Option<LockKind>, String> {
        let s = self.string(e)?;
        Ok(LockKind::ALL.into_iter().find(|k| k.as_str() == s))
    }
    fn lock_data(&self, _: &Expr) -> Result<BTreeMap<String, serde_json::Value>, String> {
        Ok(BTreeMap::from([("dc".to_string(), 15.into())]))
    }
}

fn labels<const N: usize>(prefix: &str) -> [String; N] {
    std::array::from_fn(|i| format!("{prefix}{}", i + 1))
}

fn spec() -> Spec {
    let fork = |p: &str| Fork {
        label: format!("{p} fork"),
        free: labels(&format!("{p}a")),
        locked: labels(&format!("{p}b")),
        lock: Lock {
            kind: Some(LockKind::PerceptionCheck),
            data: BTreeMap::from([("dc".to_string(), 16.into())]),
            hint: "look".into(),
        },
    };
    Spec {
        zone_id: "z".into(),
        regions: labels("r"),
        entry: "in".into(),
        preamble: labels("p"),
        fork1: fork("f1"),
        r2gate: "g2".into(),
        r2build: labels("b2"),
        fork2: Fork {
            lock: Lock {
                kind: None,
                data: BTreeMap::new(),
                hint: "dropped with no kind".into(),
            },
            ..fork("f2")
        },
        r3gate: "g3".into(),
        r3build: labels("b3"),
        capstone: Capstone {
            label: "cap".into(),
            free: labels("c1"),
            a: labels("c2"),
            lock_a: Lock {
                kind: Some(LockKind::StatCheck),
                ..Lock::default()
            },
            b: labels("c3"),
            lock_b: Lock::default(),
        },
        merge: "m".into(),
        approach: labels("ap"),
        boss: "end".into(),
        overrides: BTreeMap::from([
            (
                "f1b2".to_string(),
                Override {
                    kind: Some(NodeKind::Secret),
                    bias: 2.5,
                },
            ),
            (
                "r2b6".to_string(),
                Override {
                    kind: Some(NodeKind::RestCamp),
                    bias: 0.0,
                },
            ),
            ("nowhere".to_string(), Override::default()),
        ]),
    }
}

#[test]
fn the_shape_of_gogobees_helper() {
    let (nodes, edges) = build(&spec());
    assert_eq!((nodes.len(), edges.len()), (58, 61));
    let ids: Vec<&str> = nodes.iter().map(|n| &n.node_id[2..]).collect();
    assert_eq!(
        &ids[..16],
        [
            "entry", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "p11", "p12",
            "fork1", "r2gate", "f1a1"
        ]
    );
    assert_eq!(
        ids[49..],
        [
            "cap31", "cap32", "cap33", "ap1", "ap2", "ap3", "ap4", "ap5", "boss"
        ]
    );
    let node = |s: &str| {
        nodes
            .iter()
            .find(|n| n.node_id == format!("z.{s}"))
            .expect(s)
    };
    // Defaults, then overrides; an override of an absent suffix changes nothing.
    assert_eq!(node("p7").kind, NodeKind::Trap);
    assert_eq!(node("r3b6").kind, NodeKind::Elite);
    assert_eq!(node("r2b6").kind, NodeKind::RestCamp);
    assert_eq!(
        (node("f1b2").kind, node("f1b2").content.loot_bias),
        (NodeKind::Secret, 2.5)
    );
    assert!(node("entry").is_entry && !node("entry").is_boss);
    assert!(node("boss").is_boss && node("boss").kind == NodeKind::Boss);
    assert_eq!(nodes.iter().filter(|n| n.is_entry || n.is_boss).count(), 2);
    assert_eq!(
        (node("cap23").pos_x, node("cap23").pos_y),
        (Some(38), Some(2))
    );
    assert_eq!(node("merge").region_id, "r4");
    assert_eq!(node("fork1").region_id, "r1");
    // Locks only on a spur's first passage, and only with a kind; the spur's weight on
    // every passage but the one into the gate.
    let edge = |a: &str, b: &str| {
        edges
            .iter()
            .find(|e| e.from_node == format!("z.{a}") && e.to_node == format!("z.{b}"))
            .expect(b)
    };
    let f1 = edge("fork1", "f1b1");
    assert_eq!(
        (f1.lock_kind, f1.hint.as_str(), f1.weight),
        (LockKind::PerceptionCheck, "look", 2)
    );
    assert_eq!(edge("f1b1", "f1b2").lock_kind, LockKind::None);
    assert_eq!(edge("f1b2", "f1b3").weight, 2);
    assert_eq!(edge("f1b3", "r2gate").weight, 1);
    let f2 = edge("fork2", "f2b1");
    assert_eq!((f2.lock_kind, f2.hint.as_str()), (LockKind::None, ""));
    assert_eq!(edge("fork3", "cap21").lock_kind, LockKind::StatCheck);
    assert_eq!(edge("fork3", "cap31").weight, 3);
    let locked = edges
        .iter()
        .filter(|e| e.lock_kind != LockKind::None)
        .count();
    assert_eq!(locked, 2);
}

fn read_src(spec: &str) -> Read {
    let src = format!("package p\nvar s = pgZoneSpec{{\n{spec}}}\n");
    let file = parse_file(&lex(&src).expect("lexes"));
    read(file.vars[0].value.as_ref().expect("a value"), &Literals)
}

#[test]
fn every_part_of_a_spec_that_is_not_read_is_an_error_at_its_place() {
    let r = read_src(
        "\tzoneID: \"z\",\n\tregions: [4]string{\"a\", \"b\"},\n\tentry: 3,\n\tfork1: pgFork{label: \"f\", lock: pgLock{kind: \"none\", colour: \"red\"}},\n\toverrides: map[string]pgNodeOverride{\"p1\": {kind: \"trap\"}, \"p1\": {bias: 2}},\n\tdepth: 2,\n",
    );
    assert_eq!(r.zone.as_deref(), Some("z"));
    assert!(r.spec.is_none());
    let got: Vec<String> = r
        .errors
        .iter()
        .map(|(at, m)| format!("{}:{}: {m}", at.line, at.col))
        .collect();
    assert_eq!(
        got,
        [
            "4:11: regions has 2 labels where buildPostgameZoneGraph makes 4 rooms; each is given (a missing one would be an empty label)",
            "5:9: cannot read entry: 3 is not a string",
            "6:63: cannot read fork1.lock.colour: pgLock has no field colour the importer reads",
            "6:9: this pgFork sets no freeLabel, lockLabel; buildPostgameZoneGraph names a room or region with each",
            "7:61: override \"p1\" is given twice",
            "8:9: pgZoneSpec has no field depth the importer reads",
            "2:9: this pgZoneSpec sets no preamble, r2gate, r2build, fork2, r3gate, r3build, capstone, merge, approach, boss; buildPostgameZoneGraph names a room or region with each",
        ]
    );
    let r = read_src("\tzoneID: \"z\",\n");
    assert_eq!(r.errors.len(), 1);
    assert_eq!(read_src("").zone, None);
}
