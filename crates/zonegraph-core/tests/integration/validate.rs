//! Validation, design lints and route analysis.

use std::fs;
use std::path::PathBuf;

use zonegraph_core::format::{self, EdgeFile, NodeFile, ZoneFile};
use zonegraph_core::{
    Code, Diagnostic, LockKind, NodeKind, analysis, check_sources, lock_pass_chance, zone,
};

use crate::support::{root, zone_files};

fn fixture_path(code: Code) -> PathBuf {
    root()
        .join("tests/fixtures/invalid")
        .join(format!("{}.json", code.as_str()))
}

/// `code@node`, `code@from>to` or `code` for zone-wide findings, then ` <- a, b` for the
/// related rooms.
fn render(d: &Diagnostic) -> String {
    let at = match (&d.node, &d.edge) {
        (Some(n), _) => format!("{}@{n}", d.code),
        (None, Some(e)) => format!("{}@{}>{}", d.code, e.from, e.to),
        (None, None) => d.code.to_string(),
    };
    if d.related.is_empty() {
        at
    } else {
        format!("{at} <- {}", d.related.join(", "))
    }
}

/// Everything `zonegraph check` would report for `json` checked alone.
fn diagnostics(json: &str) -> Vec<Diagnostic> {
    let mut checked = check_sources(&[("test.json".to_string(), json.to_string())]);
    let c = checked.pop().expect("one source gives one result");
    assert_eq!(c.parse_error, None, "{json}");
    c.diagnostics
}

/// Asserts the findings of `json`, in output order.
fn check(json: &str, expect: &[&str]) {
    let got: Vec<String> = diagnostics(json).iter().map(render).collect();
    assert_eq!(got, expect, "zone: {json}");
}

/// A tier-1 zone in a one-line notation: space-separated passages `a>b`, where `a>b?12` is a
/// hinted Perception DC 12 lock and `a>b#skull` a hinted key lock; a leading `loops` sets
/// allow_loops and `tier=N` the tier. Room `entry` is the entry, `boss` the boss, rooms named
/// `fork…` are forks and `secret…` secrets (loot_bias 2), the rest explorations; ids get a `z.`
/// prefix.
fn z(spec: &str) -> String {
    let mut file = ZoneFile {
        schema: None,
        format: 1,
        zone_id: "z".into(),
        name: "Test".into(),
        tier: 1,
        min_level: 1,
        max_level: 4,
        regions: Vec::new(),
        allow_loops: false,
        nodes: Some(Vec::new()),
        edges: Some(Vec::new()),
        room_kinds: None,
        keys: Default::default(),
        harvests: Default::default(),
    };
    let mut nodes: Vec<NodeFile> = Vec::new();
    let add_node = |nodes: &mut Vec<NodeFile>, name: &str| {
        let id = format!("z.{name}");
        if !nodes.iter().any(|n| n.node_id == id) {
            nodes.push(node(&id, name));
        }
        id
    };
    let mut edges = Vec::new();
    for tok in spec.split_whitespace() {
        if tok == "loops" {
            file.allow_loops = true;
            continue;
        }
        if let Some(t) = tok.strip_prefix("tier=") {
            file.tier = t.parse().expect("tier is a number");
            continue;
        }
        let (a, rest) = tok.split_once('>').expect("passage a>b");
        let (b, lock) = match rest.find(['?', '#']) {
            Some(i) => (&rest[..i], Some(&rest[i..])),
            None => (rest, None),
        };
        let from = add_node(&mut nodes, a);
        let to = add_node(&mut nodes, b);
        let mut e = edge(&from, &to);
        match lock.map(|l| l.split_at(1)) {
            Some(("?", dc)) => {
                e.lock_kind = LockKind::PerceptionCheck;
                e.lock_data
                    .insert("dc".into(), dc.parse::<u32>().expect("dc").into());
                e.hint = "A draft.".into();
            }
            Some(("#", key)) => {
                e.lock_kind = LockKind::KeyRequired;
                e.lock_data.insert("key_id".into(), key.into());
                e.hint = "A keyhole.".into();
            }
            _ => {}
        }
        edges.push(e);
    }
    file.nodes = Some(nodes);
    file.edges = Some(edges);
    format::to_pretty_json(&file)
}

fn node(id: &str, name: &str) -> NodeFile {
    let kind = match name {
        "entry" => NodeKind::Entry,
        "boss" => NodeKind::Boss,
        n if n.starts_with("fork") => NodeKind::Fork,
        n if n.starts_with("secret") => NodeKind::Secret,
        _ => NodeKind::Exploration,
    };
    let mut content = format::ContentFile::default();
    if kind == NodeKind::Secret {
        content.loot_bias = 2.0;
    }
    NodeFile {
        node_id: id.into(),
        kind,
        label: String::new(),
        is_entry: kind == NodeKind::Entry,
        is_boss: kind == NodeKind::Boss,
        region_id: String::new(),
        pos_x: None,
        pos_y: None,
        content,
    }
}

fn edge(from: &str, to: &str) -> EdgeFile {
    EdgeFile {
        from_node: from.into(),
        to_node: to.into(),
        lock_kind: LockKind::None,
        lock_data: Default::default(),
        hint: String::new(),
        weight: 1,
    }
}

#[test]
fn every_code_has_a_failing_fixture() {
    let mut missing = Vec::new();
    let mut report = String::new();
    for code in Code::ALL {
        let path = fixture_path(code);
        let Ok(text) = fs::read_to_string(&path) else {
            missing.push(code.as_str());
            continue;
        };
        let found = diagnostics(&text);
        assert!(
            found.iter().any(|d| d.code == code),
            "{} does not produce {code}: {found:#?}",
            path.display()
        );
        report.push_str(&format!("# {code}\n"));
        for d in &found {
            report.push_str(&format!("{}: {}\n", render(d), d.message));
        }
    }
    assert!(missing.is_empty(), "codes without a fixture: {missing:?}");
    insta::assert_snapshot!("invalid_fixtures", report);
}

#[test]
fn small_zones() {
    // A clean fork.
    check(&z("entry>fork fork>a fork>b a>boss b>boss"), &[]);
    // Linear: too few forks for tier 1.
    check(&z("entry>a a>boss"), &["too_few_forks"]);
    check(
        &z("tier=2 entry>fork fork>a fork>b a>boss b>boss"),
        &["too_few_forks"],
    );
    // The classic soft lock: a fork whose exits are all locked strands the run; the rooms
    // before it are context, not findings of their own.
    check(
        &z("entry>fork fork>a?12 fork>b?14 a>boss b>boss"),
        &["soft_lock@z.fork <- z.entry"],
    );
    // A dead-end secret just ends the run quietly.
    check(&z("entry>fork fork>boss fork>secret?15"), &[]);
    // A side room whose only way on is a Perception wall is a soft lock.
    check(
        &z("entry>fork fork>boss fork>a?12 a>secret?15"),
        &["soft_lock@z.a"],
    );
    // A key nobody grants.
    check(
        &z("entry>fork fork>a#skull fork>b a>boss b>boss"),
        &["key_never_granted@z.fork>z.a"],
    );
    // Loops are an error unless the zone opts in; self-loops are not cycles.
    check(&z("entry>a a>b b>fork fork>a fork>boss"), &["cycle@z.a"]);
    check(&z("loops entry>a a>b b>fork fork>a fork>boss"), &[]);
    check(
        &z("entry>fork fork>fork fork>boss"),
        &["self_loop@z.fork>z.fork"],
    );
    check(
        &z("loops entry>fork fork>fork fork>boss"),
        &["self_loop@z.fork>z.fork"],
    );
    // Two separate loops give two findings.
    check(
        &z("entry>a a>b b>a b>fork fork>c c>fork fork>boss"),
        &["cycle@z.a", "cycle@z.fork"],
    );
    // Rooms behind the boss are never played: no soft lock there.
    check(
        &z("entry>fork fork>a fork>boss a>boss boss>x x>y"),
        &["dead_end@z.y", "boss_has_exits@z.boss"],
    );
    // Unreachable boss: an island.
    check(
        &z("entry>fork fork>a fork>b a>b island>boss"),
        &[
            "orphan_node@z.island",
            "boss_unreachable@z.boss",
            "dead_end@z.b",
        ],
    );
}

#[test]
fn one_finding_per_cause() {
    // One all-locked fork is one soft_lock however long the approach.
    check(
        &z("entry>x x>y y>fork fork>a?12 fork>b?14 a>boss b>boss"),
        &["soft_lock@z.fork <- z.entry, z.x, z.y"],
    );
    // Two independent all-locked forks are two, each with the rooms that lead to it.
    check(
        &z(
            "entry>fork fork>a fork>b a>f2 f2>c?12 f2>d?13 c>boss d>boss b>f3 f3>e?14 f3>f?15 \
            e>boss f>boss",
        ),
        &[
            "soft_lock@z.f2 <- z.entry, z.fork, z.a",
            "soft_lock@z.f3 <- z.entry, z.fork, z.b",
        ],
    );
    // A stranding fork behind another one's lock is a second defect: fixing one leaves the
    // other.
    check(
        &z("entry>fork fork>a?12 fork>b?14 a>f2 f2>boss?12 f2>c?13 c>boss b>boss"),
        &["soft_lock@z.f2 <- z.a", "soft_lock@z.fork <- z.entry"],
    );
    // A locked room whose open way on ends stranded further on is context of that place:
    // fixing z.a fixes z.fork.
    check(
        &z("entry>fork fork>boss?12 fork>a a>boss?14"),
        &["soft_lock@z.a <- z.entry, z.fork"],
    );
    // The fork whose open exits all lead nowhere is stranding too; the dead end is its own
    // missing piece.
    check(
        &z("entry>fork fork>boss?12 fork>a a>d"),
        &[
            "soft_lock@z.fork <- z.entry",
            "dead_end@z.d <- z.entry, z.fork, z.a",
        ],
    );
    // A corridor into a dead end is one dead_end, with the corridor as context.
    check(
        &z("entry>fork fork>a fork>b a>boss b>c c>d"),
        &["dead_end@z.d <- z.b, z.c"],
    );
    // Two dead ends are two.
    check(
        &z("entry>fork fork>a fork>b fork>boss a>c b>d"),
        &["dead_end@z.c <- z.a", "dead_end@z.d <- z.b"],
    );
    // A corridor into a dead-end secret ends the run quietly, on purpose.
    check(&z("entry>fork fork>boss fork>a?12 a>secret"), &[]);
    // Loops: one finding per loop with no way on, or whose ways on are all locked.
    check(
        &z("loops entry>fork fork>boss fork>a a>b b>a"),
        &["soft_lock@z.a"],
    );
    check(
        &z("loops entry>fork fork>boss?12 fork>a a>b b>a b>boss?14"),
        &["soft_lock@z.a <- z.entry, z.fork"],
    );
    // One key_never_granted per key, not per passage.
    check(
        &z("entry>fork fork>a#skull fork>b#skull fork>c a>boss b>boss c>boss"),
        &["key_never_granted@z.fork>z.a"],
    );
    check(
        &z("entry>fork fork>a#skull fork>b#moon fork>c a>boss b>boss c>boss"),
        &[
            "key_never_granted@z.fork>z.a",
            "key_never_granted@z.fork>z.b",
        ],
    );
}

#[test]
fn related_lists_the_first_rooms_in_file_order() {
    let corridor: Vec<String> = (1..20).map(|i| format!("r{}>r{i}", i - 1)).collect();
    let spec = format!(
        "entry>r0 {} r19>fork fork>a?12 fork>b?14 a>boss b>boss",
        corridor.join(" ")
    );
    let found = diagnostics(&z(&spec));
    let related: Vec<&str> = found
        .iter()
        .flat_map(|d| &d.related)
        .map(String::as_str)
        .collect();
    let mut want = vec!["z.entry".to_string()];
    want.extend((0..15).map(|i| format!("z.r{i}")));
    assert_eq!(related, want);
    assert_eq!(related.len(), zonegraph_core::validate::MAX_RELATED_ROOMS);
}

#[test]
fn messages_name_the_cause() {
    let mut report = String::new();
    for spec in [
        "entry>fork fork>a?12 fork>b#skull a>boss b>boss",
        "entry>fork fork>boss fork>a?12 a>secret?15",
        "entry>fork fork>boss?12 fork>a a>d",
        "entry>fork fork>boss?12 fork>boss?14 fork>a a>d",
        "loops entry>fork fork>boss fork>a a>b b>a",
        "loops entry>fork fork>boss fork>a a>b b>a b>boss?14",
        "loops entry>fork fork>boss fork>a a>b b>a b>boss?14 b>d",
        "entry>fork fork>a#skull fork>b#skull fork>c#skull a>boss b>boss c>boss",
    ] {
        report.push_str(&format!("# {spec}\n"));
        for d in diagnostics(&z(spec)) {
            report.push_str(&format!("{}: {}\n", render(&d), d.message));
        }
    }
    insta::assert_snapshot!("cause_messages", report);
}

#[test]
fn cycle_message_names_the_rooms() {
    let found = diagnostics(&z("entry>a a>b b>fork fork>a fork>boss"));
    assert_eq!(
        found[0].message,
        "rooms z.a → z.b → z.fork → z.a form a loop; remove a passage or set allow_loops to true \
         at the top level"
    );
}

#[test]
fn self_loop_allowed_by_content() {
    let text = z("entry>fork fork>fork fork>boss").replace(
        r#""kind": "fork""#,
        r#""kind": "fork", "content": { "allow_self_loop": true }"#,
    );
    check(&text, &[]);
}

#[test]
fn regions() {
    let base = z("entry>fork fork>a fork>b a>boss b>boss");
    let in_region = base.replace(
        r#""node_id": "z.a","#,
        r#""node_id": "z.a", "region_id": "upper","#,
    );
    check(&in_region, &["unknown_region@z.a"]);
    let with_regions = in_region.replace(
        r#""zone_id": "z","#,
        r#""zone_id": "z", "regions": [{"region_id": "upper", "name": "Upper", "order": 1}],"#,
    );
    check(&with_regions, &[]);
    let region_lock = with_regions.replace(
        r#""to_node": "z.b""#,
        r#""to_node": "z.b", "lock_kind": "region_clear", "lock_data": {"region_id": "lower"}, "hint": "Sealed.""#,
    );
    check(&region_lock, &["unknown_region@z.fork>z.b"]);
}

#[test]
fn legacy_zones_are_linear_on_purpose() {
    let text = r#"{"format": 1, "zone_id": "old", "name": "Old", "tier": 2, "min_level": 1,
        "max_level": 3, "room_kinds": ["entry", "exploration", "trap", "boss"]}"#;
    check(text, &[]);
    let one_room = r#"{"format": 1, "zone_id": "old", "name": "Old", "tier": 1, "min_level": 1,
        "max_level": 3, "room_kinds": ["entry"]}"#;
    check(one_room, &["boss_count", "dead_end@old.r1"]);
}

#[test]
fn dc_and_level_lints() {
    let lock = |kind: &str, data: &str| {
        z("entry>fork fork>a fork>b a>boss b>boss").replace(
            r#""to_node": "z.b""#,
            &format!(
                r#""to_node": "z.b", "lock_kind": "{kind}", "lock_data": {data}, "hint": "Hm.""#
            ),
        )
    };
    check(&lock("perception_check", r#"{"dc": 25}"#), &[]);
    check(
        &lock("perception_check", r#"{"dc": 26}"#),
        &["impossible_dc@z.fork>z.b"],
    );
    check(&lock("stat_check", r#"{"stat": "Str", "dc": 2}"#), &[]);
    check(
        &lock("stat_check", r#"{"stat": "Str", "dc": 1}"#),
        &["trivial_dc@z.fork>z.b"],
    );
    check(&lock("level_min", r#"{"min_level": 2}"#), &[]);
    check(&lock("level_min", r#"{"min_level": 4}"#), &[]);
    check(
        &lock("level_min", r#"{"min_level": 1}"#),
        &["trivial_dc@z.fork>z.b"],
    );
    check(
        &lock("level_min", r#"{"min_level": 5}"#),
        &["level_above_zone@z.fork>z.b"],
    );
    check(
        &lock("perception_check", r#"{"dc": 31}"#),
        &["bad_lock_data@z.fork>z.b"],
    );
}

#[test]
fn duplicate_nodes_and_keys_across_zones() {
    let a = z("entry>fork fork>a fork>b#skull a>boss b>boss");
    let granted = r#"{"format": 1, "zone_id": "y", "name": "Y", "tier": 1, "min_level": 1,
        "max_level": 4, "nodes": [
          {"node_id": "y.entry", "kind": "entry", "is_entry": true},
          {"node_id": "y.fork", "kind": "fork"},
          {"node_id": "z.a", "kind": "exploration", "content": {"grants_key": " Skull "}},
          {"node_id": "y.boss", "kind": "boss", "is_boss": true}],
        "edges": [{"from_node": "y.entry", "to_node": "y.fork"},
          {"from_node": "y.fork", "to_node": "z.a"}, {"from_node": "y.fork", "to_node": "y.boss"},
          {"from_node": "z.a", "to_node": "y.boss"}]}"#;
    let checked = check_sources(&[
        ("z.json".to_string(), a.clone()),
        ("y.json".to_string(), granted.to_string()),
    ]);
    let got: Vec<Vec<String>> = checked
        .iter()
        .map(|c| c.diagnostics.iter().map(render).collect())
        .collect();
    assert_eq!(got, [vec![], vec!["duplicate_node@z.a".to_string()]]);
    assert!(checked[1].diagnostics[0].message.contains("(z.json)"));
    // Alone, the key is never granted.
    check(&a, &["key_never_granted@z.fork>z.b"]);
    // The same zone twice is one finding, not one per room.
    let twice = check_sources(&[
        ("y.json".into(), granted.into()),
        ("y2.json".into(), granted.into()),
    ]);
    let got: Vec<Vec<String>> = twice
        .iter()
        .map(|c| c.diagnostics.iter().map(render).collect())
        .collect();
    assert_eq!(got, [vec![], vec!["duplicate_node".to_string()]]);
}

fn crypt_text() -> String {
    fs::read_to_string(root().join("zones/crypt_valdris.json")).expect("crypt_valdris.json")
}

#[test]
fn crypt_of_valdris_is_clean() {
    check(&crypt_text(), &[]);
    let checked = check_sources(&[("crypt_valdris.json".to_string(), crypt_text())]);
    let without = zonegraph_core::check_sources_with(
        &[("crypt_valdris.json".to_string(), crypt_text())],
        zonegraph_core::CheckOptions { stats: false },
    );
    assert_eq!(without[0].stats, None);
    assert_eq!(without[0].diagnostics, checked[0].diagnostics);
    let stats = checked[0].stats.as_ref().expect("stats of a parsed zone");
    assert_eq!(stats.nodes, 8);
    assert_eq!(stats.edges, 9);
    assert_eq!(stats.forks, 2); // fork, side_chapel
    // entry, corridor, fork, side_chapel, secret_chamber, antechamber, boss.
    assert_eq!(stats.longest_path, Some(7));
    // entry, corridor, fork, main_hall, antechamber, boss.
    assert_eq!(stats.shortest_path, Some(6));
    // via main_hall, via side_chapel, via side_chapel and the reliquary.
    assert_eq!(stats.routes, Some(3));
    assert_eq!(
        stats.choke_points,
        [
            "crypt_valdris.entry",
            "crypt_valdris.corridor",
            "crypt_valdris.fork",
            "crypt_valdris.antechamber",
            "crypt_valdris.boss"
        ]
    );
    insta::assert_json_snapshot!("crypt_valdris_check", checked[0]);
}

#[test]
fn zones_folder_checked_together_has_no_errors() {
    let mut sources = Vec::new();
    let paths = zone_files("zones");
    for p in paths {
        let text = fs::read_to_string(&p).expect("readable zone");
        sources.push((p.display().to_string(), text));
    }
    for c in check_sources(&sources) {
        let errors: Vec<_> = c.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(
            c.parse_error.is_none() && errors.is_empty(),
            "{}: {:?} {errors:#?}",
            c.file,
            c.parse_error
        );
    }
}

#[test]
fn lock_pass_chances() {
    use zonegraph_core::Lock;
    let p = Lock::PerceptionCheck { dc: 12 };
    assert_eq!(lock_pass_chance(&p, 1, 0), Some(0.45));
    assert_eq!(lock_pass_chance(&p, 1, 5), Some(0.7));
    assert_eq!(lock_pass_chance(&p, 1, -1), Some(0.4));
    let l = Lock::LevelMin { min_level: 3 };
    assert_eq!(lock_pass_chance(&l, 2, 5), Some(0.0));
    assert_eq!(lock_pass_chance(&l, 3, 0), Some(1.0));
    let k = Lock::KeyRequired {
        key_id: "skull".into(),
    };
    assert_eq!(lock_pass_chance(&k, 20, 5), None);
    assert_eq!(lock_pass_chance(&Lock::None, 1, 0), Some(1.0));
}

#[test]
fn route_counts() {
    let stats = |spec: &str| {
        let (zone, _) = zone::load(&z(spec)).expect("parses");
        zonegraph_core::stats(&zone)
    };
    // Two diamonds in a row: 2 × 2 routes, choke points between them.
    let s = stats("entry>a entry>b a>m b>m m>c m>d c>boss d>boss");
    assert_eq!(s.routes, Some(4));
    assert_eq!(s.choke_points, ["z.entry", "z.m", "z.boss"]);
    assert_eq!((s.shortest_path, s.longest_path), (Some(5), Some(5)));
    // A shortcut skips rooms: a is no choke point.
    let s = stats("entry>a a>b b>boss entry>b");
    assert_eq!(s.routes, Some(2));
    assert_eq!(s.choke_points, ["z.entry", "z.b", "z.boss"]);
    assert_eq!((s.shortest_path, s.longest_path), (Some(3), Some(4)));
    // A loop on the route: unbounded routes, dominators still give choke points.
    let s = stats("loops entry>a a>b b>a b>boss");
    assert_eq!(s.routes, None);
    assert_eq!(s.choke_points, ["z.entry", "z.a", "z.b", "z.boss"]);
    // A loop off the route does not matter.
    let s = stats("loops entry>a a>boss a>c c>d d>c");
    assert_eq!(s.routes, Some(1));
    // No route.
    let s = stats("entry>a island>boss");
    assert_eq!(
        (s.routes, s.shortest_path, s.longest_path),
        (Some(0), None, None)
    );
    assert!(s.choke_points.is_empty());
}

/// A chain of `n` rooms, `c.0` (entry) to `c.{n-1}` (boss).
fn chain(n: usize) -> ZoneFile {
    let nodes = (0..n)
        .map(|i| {
            let name = match i {
                0 => "entry",
                i if i + 1 == n => "boss",
                _ => "room",
            };
            node(&format!("c.{i}"), name)
        })
        .collect();
    let edges = (1..n)
        .map(|i| edge(&format!("c.{}", i - 1), &format!("c.{i}")))
        .collect();
    ZoneFile {
        schema: None,
        format: 1,
        zone_id: "c".into(),
        name: "Chain".into(),
        tier: 1,
        min_level: 1,
        max_level: 4,
        regions: Vec::new(),
        allow_loops: false,
        nodes: Some(nodes),
        edges: Some(edges),
        room_kinds: None,
        keys: Default::default(),
        harvests: Default::default(),
    }
}

#[test]
fn deep_chain_does_not_overflow_the_stack() {
    const N: usize = 100_000;
    let file = chain(N);
    let text = format::to_pretty_json(&file);
    let checked = check_sources(&[("chain.json".into(), text)]);
    let got: Vec<String> = checked[0].diagnostics.iter().map(render).collect();
    assert_eq!(got, ["too_few_forks"]);
    let s = checked[0].stats.as_ref().expect("stats");
    assert_eq!(
        (s.longest_path, s.shortest_path, s.routes),
        (Some(N), Some(N), Some(1))
    );
    assert_eq!(s.choke_points.len(), N);

    // Close the chain into one big loop: a cycle error, abbreviated.
    let mut looped = file.clone();
    if let Some(edges) = looped.edges.as_mut() {
        edges.push(edge(&format!("c.{}", N - 2), "c.1"));
    }
    let (zone, _) = zone::build(&looped);
    let found = zonegraph_core::validate(&zone);
    let cycle = found
        .iter()
        .find(|d| d.code == Code::Cycle)
        .expect("a cycle");
    assert!(
        cycle.message.contains(&format!("({} rooms)", N - 2)),
        "{}",
        cycle.message
    );
    looped.allow_loops = true;
    let (zone, _) = zone::build(&looped);
    let s = zonegraph_core::stats(&zone);
    assert_eq!(s.routes, None);
    assert_eq!(s.choke_points.len(), N);
}

#[test]
fn wide_layered_zone_validates() {
    const LAYERS: usize = 1000;
    const WIDTH: usize = 100;
    let id = |l: usize, i: usize| format!("w.{l}_{i}");
    let mut nodes = vec![node("w.entry", "entry")];
    let mut edges = Vec::new();
    for l in 0..LAYERS {
        for i in 0..WIDTH {
            nodes.push(node(&id(l, i), "room"));
            if l == 0 {
                edges.push(edge("w.entry", &id(l, i)));
            }
            if l + 1 < LAYERS {
                edges.push(edge(&id(l, i), &id(l + 1, i)));
                edges.push(edge(&id(l, i), &id(l + 1, (i + 1) % WIDTH)));
            } else {
                edges.push(edge(&id(l, i), "w.boss"));
            }
        }
    }
    nodes.push(node("w.boss", "boss"));
    let mut file = chain(2);
    file.zone_id = "w".into();
    file.tier = 3;
    file.nodes = Some(nodes);
    file.edges = Some(edges);
    let (zone, structural) = zone::build(&file);
    assert!(structural.is_empty());
    assert!(zonegraph_core::validate(&zone).is_empty());
    let s = zonegraph_core::stats(&zone);
    assert_eq!(s.nodes, LAYERS * WIDTH + 2);
    assert_eq!(s.routes, Some(analysis::MAX_ROUTES)); // 100 × 2^999 routes, saturated
    assert_eq!(s.choke_points, ["w.entry", "w.boss"]);
    assert_eq!(
        (s.shortest_path, s.longest_path),
        (Some(LAYERS + 2), Some(LAYERS + 2))
    );
}

#[test]
fn parse_errors_say_where() {
    let parse_error = |text: &str| {
        let mut checked = check_sources(&[("bad.json".into(), text.into())]);
        let c = checked.pop().expect("one result");
        assert!(c.has_errors());
        assert_eq!((c.zone_id, c.stats), (None, None));
        c.parse_error.expect("a parse error")
    };
    let e = parse_error("{\n  \"format\": 1,\n  \"zone_id\": \"z\",,\n}");
    assert_eq!((e.line, e.column), (Some(3), Some(18)));
    assert_eq!(e.message, "key must be a string");
    let e = parse_error(&crypt_text().replacen("\"label\"", "\"lable\"", 1));
    assert_eq!((e.line, e.column), (Some(9), Some(64)));
    assert_eq!(e.path.as_deref(), Some("nodes[0].lable"));
    assert!(
        e.message
            .starts_with("unknown field `lable`, expected one of"),
        "{}",
        e.message
    );
    let e = parse_error(&crypt_text().replace("\"weight\": 2", "\"weight\": \"2\""));
    assert_eq!(e.path.as_deref(), Some("edges[3].weight"));
}

/// A random zone as JSON: `n` rooms with random kinds and flags, passages between random
/// rooms (some unknown) with random locks, some well-formed and some not.
fn random_zone(
    kinds: &[(u8, bool, bool, u8)],
    edges: &[(usize, usize, u8, u32)],
    allow_loops: bool,
) -> String {
    const KINDS: [&str; 10] = [
        "entry",
        "exploration",
        "trap",
        "elite",
        "boss",
        "harvest",
        "rest_camp",
        "secret",
        "fork",
        "merge",
    ];
    let nodes: Vec<serde_json::Value> = kinds
        .iter()
        .enumerate()
        .map(|(i, &(k, is_entry, is_boss, extra))| {
            let mut n = serde_json::json!({
                "node_id": format!("r.{}", i % 7 + usize::from(extra % 3 == 0) * i),
                "kind": KINDS[usize::from(k) % KINDS.len()],
                "is_entry": is_entry,
                "is_boss": is_boss,
            });
            if extra % 5 == 0 {
                n["region_id"] = "north".into();
            }
            if extra % 4 == 0 {
                n["content"] = serde_json::json!({
                    "grants_key": "k",
                    "loot_bias": f64::from(extra) / 50.0,
                    "allow_self_loop": extra % 8 == 0
                });
            }
            n
        })
        .collect();
    let edges: Vec<serde_json::Value> = edges
        .iter()
        .map(|&(a, b, lock, x)| {
            let mut e = serde_json::json!({
                "from_node": format!("r.{a}"),
                "to_node": format!("r.{b}"),
            });
            let (kind, data) = match lock % 8 {
                0 => ("perception_check", serde_json::json!({ "dc": x })),
                1 => (
                    "key_required",
                    serde_json::json!({ "key_id": if x % 2 == 0 { "k" } else { "j" } }),
                ),
                2 => ("level_min", serde_json::json!({ "min_level": x })),
                3 => ("region_clear", serde_json::json!({ "region_id": "north" })),
                4 => ("stat_check", serde_json::json!({ "stat": "wis", "dc": x })),
                5 => ("stat_check", serde_json::json!({ "stat": "luck" })),
                _ => ("none", serde_json::json!({})),
            };
            e["lock_kind"] = kind.into();
            e["lock_data"] = data;
            if x % 3 == 0 {
                e["hint"] = "Hm.".into();
            }
            e
        })
        .collect();
    serde_json::json!({
        "format": 1, "zone_id": "r", "name": "Random", "tier": 2, "min_level": 2,
        "max_level": 6, "allow_loops": allow_loops, "nodes": nodes, "edges": edges,
        "regions": if kinds.len().is_multiple_of(2) {
            serde_json::json!([{ "region_id": "north", "name": "North", "order": 1 }])
        } else {
            serde_json::json!([])
        },
    })
    .to_string()
}

proptest::proptest! {
    #[test]
    fn random_zones_never_panic(
        kinds in proptest::collection::vec((0u8..10, proptest::bool::weighted(0.15), proptest::bool::weighted(0.15), 0u8..100), 0..14),
        edges in proptest::collection::vec((0usize..16, 0usize..16, 0u8..12, 0u32..40), 0..40),
        allow_loops in proptest::bool::ANY,
    ) {
        let text = random_zone(&kinds, &edges, allow_loops);
        let checked = check_sources(&[("a.json".into(), text.clone()), ("b.json".into(), text)]);
        for c in &checked {
            proptest::prop_assert!(serde_json::to_string(c).is_ok());
            let mut sorted = c.diagnostics.clone();
            zonegraph_core::diagnostic::sort(&mut sorted);
            proptest::prop_assert_eq!(&sorted, &c.diagnostics);
            for d in &c.diagnostics {
                proptest::prop_assert!(!d.message.ends_with('.'), "{}", d.message);
                proptest::prop_assert!(d.node.is_some() || d.edge.is_some() || matches!(
                    d.code,
                    Code::NoNodes | Code::EntryCount | Code::BossCount | Code::TooFewForks | Code::DuplicateNode
                ), "{:?}", d);
            }
        }
    }

    #[test]
    fn synthetic_zones_are_clean(rooms in 2usize..400, width in 1usize..9, seed in proptest::num::u64::ANY) {
        let (z, structural) = zone::build(&zonegraph_core::synth::layered("p", rooms, width, seed));
        proptest::prop_assert!(structural.is_empty());
        let errors: Vec<_> = zonegraph_core::validate(&z).into_iter().filter(|d| d.is_error()).collect();
        proptest::prop_assert!(errors.is_empty(), "{:?}", errors);
        let s = zonegraph_core::stats(&z);
        proptest::prop_assert_eq!(s.nodes, z.graph.node_count());
        proptest::prop_assert!(s.shortest_path <= s.longest_path);
        proptest::prop_assert!(s.routes.is_some_and(|r| r >= 1));
    }
}

/// Every simple entry→boss path of a small graph, enumerated (the test oracle, not the method).
fn all_paths(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut paths = Vec::new();
    let mut stack = vec![vec![0]];
    while let Some(path) = stack.pop() {
        let last = *path.last().expect("paths are never empty");
        if last == n - 1 {
            paths.push(path);
            continue;
        }
        for &(a, b) in edges {
            if a == last && !path.contains(&b) {
                let mut p = path.clone();
                p.push(b);
                stack.push(p);
            }
        }
    }
    paths
}

proptest::proptest! {
    #[test]
    fn route_figures_match_enumeration(
        n in 2usize..9,
        raw in proptest::collection::vec((0usize..9, 0usize..9), 0..20),
    ) {
        // Passages only go forward, so the graph is acyclic; room 0 is the entry, n-1 the boss.
        let edges: Vec<(usize, usize)> = raw
            .into_iter()
            .map(|(a, b)| (a % n, b % n))
            .filter(|(a, b)| a < b)
            .collect();
        let name = |i: usize| if i == 0 { "entry".to_string() } else if i == n - 1 { "boss".to_string() } else { format!("m{i}") };
        let mut file = chain(2);
        file.nodes = Some((0..n).map(|i| node(&format!("c.{i}"), &name(i))).collect());
        file.edges = Some(edges.iter().map(|&(a, b)| edge(&format!("c.{a}"), &format!("c.{b}"))).collect());
        let (z, _) = zone::build(&file);
        let s = zonegraph_core::stats(&z);
        let paths = all_paths(n, &edges);
        proptest::prop_assert_eq!(s.routes, Some(paths.len() as u64));
        proptest::prop_assert_eq!(s.longest_path, paths.iter().map(Vec::len).max());
        proptest::prop_assert_eq!(s.shortest_path, paths.iter().map(Vec::len).min());
        let chokes: Vec<String> = match paths.first() {
            Some(first) => first
                .iter()
                .filter(|r| paths.iter().all(|p| p.contains(r)))
                .map(|r| format!("c.{r}"))
                .collect(),
            None => Vec::new(),
        };
        proptest::prop_assert_eq!(s.choke_points, chokes);
    }
}

proptest::proptest! {
    #[test]
    fn looped_choke_points_match_enumeration(
        n in 2usize..8,
        raw in proptest::collection::vec((0usize..8, 0usize..8), 0..18),
    ) {
        let edges: Vec<(usize, usize)> = raw
            .into_iter()
            .map(|(a, b)| (a % n, b % n))
            .filter(|(a, b)| a != b)
            .collect();
        let name = |i: usize| if i == 0 { "entry".to_string() } else if i == n - 1 { "boss".to_string() } else { format!("m{i}") };
        let mut file = chain(2);
        file.allow_loops = true;
        file.nodes = Some((0..n).map(|i| node(&format!("c.{i}"), &name(i))).collect());
        file.edges = Some(edges.iter().map(|&(a, b)| edge(&format!("c.{a}"), &format!("c.{b}"))).collect());
        let (z, _) = zone::build(&file);
        let s = zonegraph_core::stats(&z);
        let paths = all_paths(n, &edges);
        let chokes: Vec<String> = match paths.first() {
            Some(first) => first
                .iter()
                .filter(|r| paths.iter().all(|p| p.contains(r)))
                .map(|r| format!("c.{r}"))
                .collect(),
            None => Vec::new(),
        };
        proptest::prop_assert_eq!(s.choke_points, chokes);
        proptest::prop_assert_eq!(s.shortest_path, paths.iter().map(Vec::len).min());
        // In looped zones the longest figure is an upper bound.
        proptest::prop_assert!(s.longest_path >= paths.iter().map(Vec::len).max());
        if s.routes.is_some() {
            proptest::prop_assert_eq!(s.routes, Some(paths.len() as u64));
        }
    }
}

/// Rooms reachable from `from` through unlocked passages of `edges` (`(from, to, locked)`),
/// `from` included: the oracle's brute force, one search per room.
fn open_reach(n: usize, edges: &[(usize, usize, bool)], from: usize) -> Vec<bool> {
    let mut seen = vec![false; n];
    seen[from] = true;
    let mut stack = vec![from];
    while let Some(r) = stack.pop() {
        for &(a, b, locked) in edges {
            if a == r && !locked && !seen[b] {
                seen[b] = true;
                stack.push(b);
            }
        }
    }
    seen
}

/// The `soft_lock` and `dead_end` findings the module docs promise, enumerated room by room
/// (the test oracle, not the method): room 0 is the entry, `n - 1` the boss.
fn expected_causes(n: usize, edges: &[(usize, usize, bool)], secret: &[bool]) -> Vec<String> {
    let boss = n - 1;
    let id = |i: usize| format!("c.{i}");
    // Rooms the entry reaches, not searching on past the boss.
    let mut reached = vec![false; n];
    reached[0] = true;
    let mut stack = vec![0];
    while let Some(r) = stack.pop() {
        for &(a, b, _) in edges {
            if a == r && r != boss && !reached[b] {
                reached[b] = true;
                stack.push(b);
            }
        }
    }
    let open: Vec<Vec<bool>> = (0..n).map(|r| open_reach(n, edges, r)).collect();
    let stuck: Vec<bool> = (0..n)
        .map(|r| reached[boss] && reached[r] && !open[r][boss])
        .collect();
    let same = |r: usize, s: usize| open[r][s] && open[s][r];
    let exits = |r: usize| edges.iter().any(|&(a, _, _)| a == r);
    // A locked passage out of the room's loop, or a loop with passages none of which leaves.
    let strandish = |r: usize| {
        let out: Vec<_> = edges.iter().filter(|&&(a, _, _)| same(r, a)).collect();
        out.iter().any(|&&(_, b, locked)| locked && !same(r, b))
            || (!out.is_empty() && out.iter().all(|&&(_, b, _)| same(r, b)))
    };
    let related = |r: usize| -> String {
        let rooms: Vec<String> = (0..n)
            .filter(|&s| stuck[s] && !same(r, s) && open[s][r])
            .take(zonegraph_core::validate::MAX_RELATED_ROOMS)
            .map(id)
            .collect();
        if rooms.is_empty() {
            String::new()
        } else {
            format!(" <- {}", rooms.join(", "))
        }
    };
    let mut out = Vec::new();
    for r in 0..n {
        let first_of_loop = (0..r).all(|s| !same(r, s));
        if stuck[r]
            && first_of_loop
            && strandish(r)
            && !(0..n).any(|s| open[r][s] && !same(r, s) && strandish(s))
        {
            out.push(format!("soft_lock@{}{}", id(r), related(r)));
        }
        if r != boss && !secret[r] && !exits(r) {
            let context = if stuck[r] { related(r) } else { String::new() };
            out.push(format!("dead_end@{}{context}", id(r)));
        }
    }
    out.sort();
    out
}

proptest::proptest! {
    #[test]
    fn soft_locks_and_dead_ends_match_enumeration(
        n in 2usize..9,
        raw in proptest::collection::vec((0usize..9, 0usize..9, 0u8..3), 0..20),
        secret in proptest::collection::vec(proptest::bool::weighted(0.2), 9),
    ) {
        // A third of the passages are unlocked; loops and self-loops included.
        let edges: Vec<(usize, usize, bool)> =
            raw.into_iter().map(|(a, b, l)| (a % n, b % n, l > 0)).collect();
        let secret: Vec<bool> = (0..n).map(|i| i != 0 && i != n - 1 && secret[i]).collect();
        let name = |i: usize| match i {
            0 => "entry".to_string(),
            i if i == n - 1 => "boss".to_string(),
            i if secret[i] => format!("secret{i}"),
            i => format!("m{i}"),
        };
        let mut file = chain(2);
        file.allow_loops = true;
        file.nodes = Some((0..n).map(|i| node(&format!("c.{i}"), &name(i))).collect());
        file.edges = Some(
            edges
                .iter()
                .map(|&(a, b, locked)| {
                    let mut e = edge(&format!("c.{a}"), &format!("c.{b}"));
                    if locked {
                        e.lock_kind = LockKind::PerceptionCheck;
                        e.lock_data.insert("dc".into(), 12.into());
                        e.hint = "A draft.".into();
                    }
                    e
                })
                .collect(),
        );
        let (z, _) = zone::build(&file);
        let mut got: Vec<String> = zonegraph_core::validate(&z)
            .iter()
            .filter(|d| matches!(d.code, Code::SoftLock | Code::DeadEnd))
            .map(render)
            .collect();
        got.sort();
        proptest::prop_assert_eq!(got, expected_causes(n, &edges, &secret));
    }
}

#[test]
fn json_output_shape() {
    #[derive(serde::Serialize)]
    struct Output {
        zones: Vec<zonegraph_core::CheckedZone>,
    }
    let read = |code| fs::read_to_string(fixture_path(code)).expect("fixture");
    let zones = zonegraph_core::check_sources_with(
        &[
            ("soft_lock.json".into(), read(Code::SoftLock)),
            ("missing_hint.json".into(), read(Code::MissingHint)),
            ("broken.json".into(), "{\"format\": 1,".into()),
        ],
        zonegraph_core::CheckOptions { stats: false },
    );
    insta::assert_json_snapshot!("json_output_shape", Output { zones });
}
