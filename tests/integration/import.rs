//! `zonegraph import gogobee`: Go sources in gogobee's shape (`tests/fixtures/gogobee_go/`,
//! made-up zones covering every form read) into checked zone files, and the places of what
//! cannot be read.

use std::path::Path;

use clap::Parser;
use zonegraph_core::format::{self, NodeKind};
use zonegraph_core::validate;
use zonegraph_server::cli::{Cli, Cmd, import};
use zonegraph_server::gogobee;

use crate::support::root;

/// Runs `zonegraph import gogobee DIR --out OUT` and returns (report with the paths made
/// `FIXTURES/…` and `OUT/…`, failed).
fn import_cmd(dir: &Path, out: &Path) -> (String, bool) {
    import_with(dir, out, &[])
}

/// [`import_cmd`] with more arguments (`--force`).
fn import_with(dir: &Path, out: &Path, more: &[&str]) -> (String, bool) {
    let (dir_s, out_s) = (dir.to_string_lossy(), out.to_string_lossy());
    let mut argv = vec!["zonegraph", "import", "gogobee", &dir_s, "--out", &out_s];
    argv.extend_from_slice(more);
    let Cmd::Import(a) = Cli::try_parse_from(argv).expect("valid arguments").command else {
        unreachable!("parsed an import command")
    };
    let (report, failed) = import::execute(&a).expect("import runs");
    let report = report
        .replace(&dir.display().to_string(), "FIXTURES")
        .replace(&out.display().to_string(), "OUT");
    (report, failed)
}

fn fixtures() -> std::path::PathBuf {
    root().join("tests/fixtures/gogobee_go")
}

#[test]
fn fixtures_import_into_checked_zone_files() {
    let out = tempfile::tempdir().expect("temp dir");
    let (report, failed) = import_cmd(&fixtures(), out.path());
    // The hollow spire's graph is built by code: an error, so the import fails, and that
    // zone alone is not written.
    assert!(failed, "{report}");
    insta::assert_snapshot!(report);
    let mut written: Vec<String> = std::fs::read_dir(out.path())
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "ember_stair.json",
            "glass_aqueduct.json",
            "moth_cellar.json",
            "salt_barrow.json",
            "star_kiln.json"
        ]
    );
    let read = |id: &str| {
        std::fs::read_to_string(out.path().join(format!("{id}.json"))).expect("zone file")
    };
    insta::assert_snapshot!("moth_cellar_json", read("moth_cellar"));
    insta::assert_snapshot!("glass_aqueduct_json", read("glass_aqueduct"));

    // The written files pass the checker on their own, and parse back to what was written.
    let sources: Vec<(String, String)> = [
        "ember_stair",
        "glass_aqueduct",
        "moth_cellar",
        "salt_barrow",
        "star_kiln",
    ]
    .iter()
    .map(|id| (format!("{id}.json"), read(id)))
    .collect();
    for c in validate::check_sources(&sources) {
        assert!(!c.has_errors(), "{c:?}");
    }
    for (_, text) in &sources {
        let file = format::parse(text).expect("parses");
        assert_eq!(&format::to_pretty_json(&file), text, "canonical JSON");
    }

    // BuildLinearGraph keeps its kinds; a zone without a graph func is gogobee's legacy
    // compilation of MaxRooms (8) rooms, ids `<zone>.r1`…, the ones its linear runs index.
    use NodeKind::{Boss, Elite, Entry, Exploration as X, Harvest, Trap};
    let kinds = |id: &str| format::parse(&read(id)).expect("parses").room_kinds;
    assert_eq!(
        kinds("ember_stair"),
        Some(vec![Entry, X, Trap, Harvest, Elite, Boss])
    );
    assert_eq!(
        kinds("salt_barrow"),
        Some(vec![Entry, X, X, Trap, X, X, Elite, Boss])
    );
    let (zone, _) = zonegraph_core::zone::load(&read("salt_barrow")).expect("loads");
    assert!(zone.legacy);
    assert!(
        zone.graph
            .node_weights()
            .any(|n| n.id.0 == "salt_barrow.r8" && n.is_boss)
    );
}

#[test]
fn importing_twice_writes_the_same_bytes() {
    let (a, b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let (ra, _) = import_cmd(&fixtures(), a.path());
    let (rb, _) = import_cmd(&fixtures(), b.path());
    assert_eq!(ra, rb);
    for id in [
        "ember_stair",
        "glass_aqueduct",
        "moth_cellar",
        "salt_barrow",
        "star_kiln",
    ] {
        let f = format!("{id}.json");
        assert_eq!(
            std::fs::read(a.path().join(&f)).expect("a"),
            std::fs::read(b.path().join(&f)).expect("b")
        );
    }
}

/// A Tier-6 zone, `buildPostgameZoneGraph(spec)` (`zone_graph_star_kiln_postgame.go`),
/// becomes the graph gogobee's helper builds: its 58 rooms and 61 passages with gogobee's ids,
/// kinds, labels, regions, positions, locks and weights, listed one a line.
#[test]
fn a_postgame_spec_imports_as_the_graph_gogobees_helper_builds() {
    let out = tempfile::tempdir().expect("temp dir");
    let (report, _) = import_cmd(&fixtures(), out.path());
    assert!(
        report.contains(
            "wrote OUT/star_kiln.json: 58 rooms, 61 passages, 3 locked, longest route 46 rooms"
        ),
        "{report}"
    );
    let text = std::fs::read_to_string(out.path().join("star_kiln.json")).expect("zone file");
    let file = format::parse(&text).expect("parses");
    let (nodes, edges) = (
        file.nodes.clone().expect("nodes"),
        file.edges.clone().expect("edges"),
    );
    let kind = |suffix: &str| {
        nodes
            .iter()
            .find(|n| n.node_id == format!("star_kiln.{suffix}"))
            .map(|n| (n.kind, n.content.loot_bias))
    };
    // The builder's default kinds, then the spec's overrides (which win over p7's trap).
    assert_eq!(kind("p7"), Some((NodeKind::RestCamp, 1.0)));
    assert_eq!(kind("r2b6"), Some((NodeKind::Elite, 1.0)));
    assert_eq!(kind("r3b3"), Some((NodeKind::Exploration, 1.5)));
    assert_eq!(kind("cap32"), Some((NodeKind::Secret, 2.5)));
    assert_eq!(kind("boss"), Some((NodeKind::Boss, 1.0)));
    let locked: Vec<String> = edges
        .iter()
        .filter(|e| e.lock_kind != format::LockKind::None)
        .map(|e| {
            format!(
                "{} -> {} {} {:?} w{}",
                e.from_node,
                e.to_node,
                e.lock_kind.as_str(),
                e.lock_data,
                e.weight
            )
        })
        .collect();
    assert_eq!(
        locked,
        [
            "star_kiln.fork1 -> star_kiln.f1b1 perception_check {\"dc\": Number(16)} w2",
            "star_kiln.fork3 -> star_kiln.cap21 stat_check {\"dc\": Number(17), \"stat\": String(\"CON\")} w2",
            "star_kiln.fork3 -> star_kiln.cap31 stat_check {\"dc\": Number(18), \"stat\": String(\"INT\")} w3",
        ]
    );
    let mut listing = String::new();
    for n in &nodes {
        listing.push_str(&format!(
            "{} {} {:?} {} ({}, {}){}{}{}\n",
            n.node_id,
            n.kind.as_str(),
            n.label,
            n.region_id,
            n.pos_x.unwrap_or(-1),
            n.pos_y.unwrap_or(-1),
            if n.is_entry { " entry" } else { "" },
            if n.is_boss { " boss" } else { "" },
            if n.content.loot_bias == 1.0 {
                String::new()
            } else {
                format!(" bias {}", n.content.loot_bias)
            },
        ));
    }
    for e in &edges {
        listing.push_str(&format!(
            "{} -> {} w{}{}\n",
            e.from_node,
            e.to_node,
            e.weight,
            if e.hint.is_empty() {
                String::new()
            } else {
                format!(" {:?}", e.hint)
            }
        ));
    }
    insta::assert_snapshot!("star_kiln_rooms_and_passages", listing);
    for c in validate::check_sources(&[("star_kiln.json".to_string(), text)]) {
        assert!(!c.has_errors(), "{c:?}");
    }
}

/// What a `pgZoneSpec` holds that the importer cannot read, each at its place; the zone is
/// not produced. A helper of the same name with another body is not the one ported.
#[test]
fn what_a_postgame_spec_cannot_say_is_an_error_at_its_place() {
    let spec = |body: &str| {
        format!(
            "package p\n\nconst ZoneK ZoneID = \"k\"\n\nfunc zoneK() ZoneDefinition {{\n\treturn \
             ZoneDefinition{{ID: ZoneK, Display: \"K\", Tier: 6, LevelMin: 18, LevelMax: 20}}\n}}\n\n\
             func zoneKGraph() ZoneGraph {{\n\tgate := func(dc int) pgLock {{\n\t\treturn pgLock{{kind: \
             \"perception_check\", lockData: map[string]any{{\"dc\": dc}}}}\n\t}}\n\t\
             return buildPostgameZoneGraph(pgZoneSpec{{\n{body}\t}})\n}}\n"
        )
    };
    let labels = |n: usize| {
        (1..=n)
            .map(|i| format!("\"l{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let fork = |lock: &str| {
        format!(
            "pgFork{{label: \"f\", freeLabel: [3]string{{{}}}, lockLabel: [3]string{{{}}}{lock}}}",
            labels(3),
            labels(3)
        )
    };
    let whole = |preamble: usize, lock: &str, more: &str| {
        format!(
            "\t\tzoneID: ZoneK,\n\t\tregions: [4]string{{{}}},\n\t\tentry: \"e\",\n\t\tpreamble: \
             [12]string{{{}}},\n\t\tfork1: {},\n\t\tr2gate: \"g\",\n\t\tr2build: [6]string{{{}}},\n\t\t\
             fork2: {},\n\t\tr3gate: \"g\",\n\t\tr3build: [6]string{{{}}},\n\t\tcapstone: \
             pgCapstone{{label: \"c\", freeLabel: [3]string{{{}}}, lockALabel: [3]string{{{}}}, \
             lockBLabel: [3]string{{{}}}}},\n\t\tmerge: \"m\",\n\t\tapproach: [5]string{{{}}},\n\t\t\
             boss: \"b\",\n{more}",
            labels(4),
            labels(preamble),
            fork(lock),
            labels(6),
            fork(""),
            labels(6),
            labels(3),
            labels(3),
            labels(3),
            labels(5),
        )
    };
    // The whole spec reads.
    assert_eq!(
        imported(&[("k.go", &spec(&whole(12, ", lock: gate(16)", "")))]),
        "zones: k\n"
    );
    let helper = "func buildPostgameZoneGraph(s pgZoneSpec) ZoneGraph {\n\treturn \
                  BuildGraph(s.zoneID, nil, nil)\n}\n";
    let overrides = "\t\toverrides: map[string]pgNodeOverride{\"p1\": {kind: \"lobby\"}, \"p2\": \
                     {bias: x}, \"p2\": {bias: 2}},\n\t\tdepth: 3,\n";
    insta::assert_snapshot!(
        "postgame_spec_errors",
        [
            imported(&[("k.go", &spec(&whole(11, ", lock: gate(16, 2)", "")))]),
            imported(&[("k.go", &spec(&whole(12, ", lock: gate(dc)", overrides)))]),
            imported(&[("k.go", &spec("\t\tzoneID: ZoneK,\n"))]),
            imported(&[
                ("k.go", &spec(&whole(12, "", ""))),
                ("helper.go", &format!("package p\n\n{helper}")),
            ]),
            // A local func of another form, and a spec made by a call.
            imported(&[(
                "k.go",
                "package p\n\nconst ZoneK ZoneID = \"k\"\n\nfunc zoneKGraph() ZoneGraph {\n\tbad := \
                 func(int) pgLock {\n\t\treturn pgLock{}\n\t}\n\treturn \
                 buildPostgameZoneGraph(makeSpec(ZoneK))\n}\n"
            )]),
        ]
        .join("\n")
    );
}

/// Imports `sources` (`(file, text)`) and returns the zones produced and each error as
/// `file:line:col: message`, one a line.
fn imported(sources: &[(&str, &str)]) -> String {
    let sources: Vec<(String, String)> = sources
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    let out = gogobee::import(&sources);
    let mut s = String::new();
    let ids: Vec<&str> = out.zones.iter().map(|z| z.zone_id.as_str()).collect();
    s.push_str(&format!("zones: {}\n", ids.join(", ")));
    for e in &out.errors {
        s.push_str(&format!(
            "{}:{}:{}: {}\n",
            e.file, e.line, e.column, e.message
        ));
    }
    s
}

/// `zoneA` (a.go) defines a zone with no graph; `more` is appended to the same file.
fn with_legacy_zone(more: &str) -> String {
    format!(
        "package p\n\nconst ZoneA ZoneID = \"a\"\n\nfunc zoneA() ZoneDefinition {{\n\treturn \
         ZoneDefinition{{ID: ZoneA, Display: \"A\", Tier: 1, LevelMin: 1, LevelMax: 3, MaxRooms: \
         6}}\n}}\n{more}"
    )
}

#[test]
fn a_zone_without_a_graph_is_linear_only_when_no_unread_graph_could_be_its() {
    // Nothing else: the legacy compilation.
    assert_eq!(imported(&[("a.go", &with_legacy_zone(""))]), "zones: a\n");
    // A graph func that cannot be read and names no zone might be a's.
    insta::assert_snapshot!(
        "unread_graph_blocks_linear",
        imported(&[(
            "a.go",
            &with_legacy_zone(
                "
func someGraph() ZoneGraph {
	return build(spec)
}
"
            )
        )])
    );
    // A file that is not Go might hold it.
    insta::assert_snapshot!(
        "unread_file_blocks_linear",
        imported(&[
            ("a.go", &with_legacy_zone("")),
            (
                "b.go",
                "package p

var s = \"open
"
            ),
        ])
    );
}

#[test]
fn what_cannot_be_read_is_an_error_at_its_place() {
    let def = "func zoneB() ZoneDefinition {\n\treturn ZoneDefinition{ID: \"b\", Display: \"B\", \
               Tier: 1, LevelMin: 1, LevelMax: 3}\n}\n";
    let graph = |nodes: &str, edges: &str| {
        format!(
            "package p\n\n{def}\nfunc zoneBGraph() ZoneGraph {{\n\tn := []ZoneNode{{\n\t\t{nodes}\n\t}}\n\t\
             e := []ZoneEdge{{\n\t\t{edges}\n\t}}\n\treturn BuildGraph(\"b\", n, e)\n}}\n"
        )
    };
    let ok_nodes = "{NodeID: \"b.e\", Kind: \"entry\", IsEntry: true}, {NodeID: \"b.z\", Kind: \
                    \"boss\", IsBoss: true},";
    let ok_edges = "{From: \"b.e\", To: \"b.z\"},";
    assert_eq!(
        imported(&[("b.go", &graph(ok_nodes, ok_edges))]),
        "zones: b\n"
    );
    let cases = [
        // A constant the sources do not declare, and one whose value is `iota`.
        (
            "{NodeID: \"b.e\", Kind: NodeKindEntry, IsEntry: true}, {NodeID: \"b.z\", Kind: \"boss\", IsBoss: true},",
            ok_edges,
            "b.go:9:25: cannot read Kind of a room: NodeKindEntry is not a constant declared in the sources read",
        ),
        (
            ok_nodes,
            "{From: \"b.e\", To: \"b.z\", Weight: w},",
            "b.go:12:36: cannot read Weight of a passage: w is not a constant declared in the sources read",
        ),
        // An expression, an unknown field, a positional element, a kind zonegraph lacks.
        (
            "{NodeID: \"b.e\", Kind: \"entry\", IsEntry: true, PosX: 2 * 3}, {NodeID: \"b.z\", Kind: \"boss\", IsBoss: true},",
            ok_edges,
            "b.go:9:55: cannot read PosX of a room: `2 * 3` is not an integer",
        ),
        (
            "{NodeID: \"b.e\", Kind: \"entry\", IsEntry: true, Depth: 3}, {NodeID: \"b.z\", Kind: \"boss\", IsBoss: true},",
            ok_edges,
            "b.go:9:56: cannot read Depth of a room: ZoneNode has no field Depth the importer reads",
        ),
        (
            ok_nodes,
            "{\"b.e\", \"b.z\"},",
            "b.go:12:4: a ZoneEdge has an element without a field name; only `Field: value` elements are read",
        ),
        (
            "{NodeID: \"b.e\", Kind: \"lobby\", IsEntry: true}, {NodeID: \"b.z\", Kind: \"boss\", IsBoss: true},",
            ok_edges,
            "b.go:9:25: cannot read Kind of a room: room kind \"lobby\" is not one of zonegraph's",
        ),
        (
            ok_nodes,
            "{From: \"b.e\", To: \"b.z\", Lock: \"perception_check\", LockData: map[string]any{\"dc\": base + 2}},",
            "b.go:12:64: cannot read LockData of a passage: \"dc\": `base + 2` is not a string, number or bool",
        ),
    ];
    let (got, want): (Vec<String>, Vec<String>) = cases
        .iter()
        .map(|(nodes, edges, want)| {
            (
                imported(&[("b.go", &graph(nodes, edges))]),
                format!("zones: \n{want}\n"),
            )
        })
        .unzip();
    assert_eq!(got, want);
}

#[test]
fn definitions_and_graphs_must_pair_up() {
    insta::assert_snapshot!(imported(&[(
        "c.go",
        "package p\n\nconst (\n\tZoneC ZoneID = \"c\"\n\tTierC ZoneTier = iota\n)\n\n\
         func zoneC() ZoneDefinition {\n\treturn ZoneDefinition{ID: ZoneC, Display: \"C\", Tier: TierC, LevelMin: 1, LevelMax: 2}\n}\n\
         func zoneC2() ZoneDefinition {\n\treturn ZoneDefinition{ID: \"c\", Display: \"C\", Tier: 9, LevelMin: 1, LevelMax: 2}\n}\n\
         func zoneD() ZoneDefinition {\n\tz := ZoneDefinition{ID: \"d\"}\n\treturn z\n}\n\
         func zoneEGraph() ZoneGraph {\n\treturn BuildLinearGraph(\"e\", []ZoneNodeKind{\"entry\", \"boss\"})\n}\n\
         func zoneF() ZoneDefinition {\n\treturn ZoneDefinition{ID: \"f\", Display: \"F\", Tier: 1, LevelMin: 1, LevelMax: 2}\n}\n\
         func zoneF2() ZoneDefinition {\n\treturn ZoneDefinition{ID: \"f\", Display: \"F\", Tier: 1, LevelMin: 1, LevelMax: 2}\n}\n\
         func zoneFGraph() ZoneGraph {\n\treturn BuildLinearGraph(\"f\", []ZoneNodeKind{\"entry\", \"boss\"})\n}\n\
         func zoneFGraph2() ZoneGraph {\n\treturn BuildLinearGraph(\"f\", []ZoneNodeKind{\"entry\", \"boss\"})\n}\n"
    )]));
}

/// What the Go literals of the fixtures say, counted by reading them (not from an import):
/// each zone's rooms, passages, locked passages in file order, and its longest and shortest
/// entry-to-boss routes (in rooms) and their number. The imported files say the same.
#[test]
fn imported_zones_have_the_rooms_passages_and_locks_of_their_go_literals() {
    use format::LockKind::{KeyRequired, LevelMin, PerceptionCheck, RegionClear, StatCheck};
    let out = tempfile::tempdir().expect("temp dir");
    import_cmd(&fixtures(), out.path());
    /// A zone as counted: id, rooms, passages, locks (from, to, kind), longest and shortest
    /// route in rooms, routes.
    type Counted<'a> = (
        &'a str,
        usize,
        usize,
        &'a [(&'a str, &'a str, format::LockKind)],
        usize,
        usize,
        u64,
    );
    let counted: [Counted; 3] = [
        // zone_graph_moth_cellar.go: 7 ZoneNode and 8 ZoneEdge literals; the DEX 12 gap and
        // the Perception wall of the cocoon. Longest: entry, landing, cask_row, cocoon,
        // vault_door, boss; shortest: by the larder; routes: the larder, cask_row, cocoon.
        (
            "moth_cellar",
            7,
            8,
            &[
                ("landing", "cask_row", StatCheck),
                ("cask_row", "cocoon", PerceptionCheck),
            ],
            6,
            5,
            3,
        ),
        // zone_graph_glass_aqueduct.go: 9 rooms, 11 passages; the level ladder, the keeper's
        // region lock and the strongbox's keyhole. Longest: entry, span, reeds or gate,
        // sluice, keeper, strongbox, boss; shortest: entry, span, reeds, sluice, camp, boss;
        // routes: 2 ways over the span times 3 ways from the sluice.
        (
            "glass_aqueduct",
            9,
            11,
            &[
                ("span", "gate", LevelMin),
                ("sluice", "keeper", RegionClear),
                ("keeper", "strongbox", KeyRequired),
            ],
            7,
            6,
            6,
        ),
        // zone_graph_ember_stair.go: BuildLinearGraph of 6 kinds, a chain.
        ("ember_stair", 6, 5, &[], 6, 6, 1),
    ];
    for (id, rooms, passages, locks, longest, shortest, routes) in counted {
        let text = std::fs::read_to_string(out.path().join(format!("{id}.json")))
            .unwrap_or_else(|e| panic!("{id}.json was written: {e}"));
        let checked = validate::check_sources(&[(format!("{id}.json"), text)]);
        let stats = checked[0].stats.as_ref().expect("stats of a parsed zone");
        assert_eq!((stats.nodes, stats.edges), (rooms, passages), "{id}");
        let got: Vec<(String, String, format::LockKind)> = stats
            .locks
            .iter()
            .map(|l| (l.from.clone(), l.to.clone(), l.lock_kind))
            .collect();
        let want: Vec<(String, String, format::LockKind)> = locks
            .iter()
            .map(|&(from, to, kind)| (format!("{id}.{from}"), format!("{id}.{to}"), kind))
            .collect();
        assert_eq!(got, want, "{id}");
        assert_eq!(
            (stats.longest_path, stats.shortest_path, stats.routes),
            (Some(longest), Some(shortest), Some(routes)),
            "{id}"
        );
    }
}

/// gogobee's pre-graph zones, as its sources define them (a definition, no graph func),
/// import as the linear graphs its G3 compiler made; on gogobee's database from before the
/// graph, every legacy run of them then warms up (none stays cold for a missing zone or a
/// room only a linear zone has), `--purge-legacy` succeeds, and the finished pre-graph rows
/// still read as runs.
#[test]
fn legacy_runs_of_imported_zones_warm_up_and_the_purge_succeeds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (src, out) = (dir.path().join("src"), dir.path().join("zones"));
    std::fs::create_dir(&src).expect("src");
    std::fs::write(
        src.join("zones.go"),
        r#"package plugin

type ZoneID string

const (
	ZoneCryptValdris ZoneID = "crypt_valdris"
	ZoneHollowBarrow ZoneID = "hollow_barrow"
	ZoneCinderSpire  ZoneID = "cinder_spire"
)

func zoneCryptValdris() ZoneDefinition {
	return ZoneDefinition{ID: ZoneCryptValdris, Display: "Crypt of Valdris", Tier: 1,
		LevelMin: 1, LevelMax: 5, MinRooms: 6, MaxRooms: 8}
}

func zoneHollowBarrow() ZoneDefinition {
	return ZoneDefinition{ID: ZoneHollowBarrow, Display: "Hollow Barrow", Tier: 1,
		LevelMin: 1, LevelMax: 5, MinRooms: 5, MaxRooms: 6}
}

func zoneCinderSpire() ZoneDefinition {
	return ZoneDefinition{ID: ZoneCinderSpire, Display: "Cinder Spire", Tier: 2,
		LevelMin: 2, LevelMax: 6, MinRooms: 8, MaxRooms: 9}
}
"#,
    )
    .expect("a Go source");
    let (report, failed) = import_cmd(&src, &out);
    assert!(!failed, "{report}");
    let db_path = dir.path().join("gogobee.db");
    let sql = std::fs::read_to_string(root().join("tests/fixtures/gogobee_before_graph.sql"))
        .expect("fixture");
    rusqlite::Connection::open(&db_path)
        .expect("db")
        .execute_batch(&sql)
        .expect("gogobee's database");
    let rows: i64 = rusqlite::Connection::open(&db_path)
        .expect("db")
        .query_row("SELECT count(*) FROM dnd_zone_run", [], |r| r.get(0))
        .expect("count");
    let report = zonegraph_server::cli::migrate::migrate(&zonegraph_server::cli::migrate::Args {
        db: Some(db_path.clone()),
        from: None,
        to: None,
        zones: Some(out),
        purge_legacy: true,
        dry_run: false,
    })
    .expect("migrates and purges");
    assert!(!report.contains("kept run"), "{report}");
    assert!(
        report.contains("dropped the legacy columns current_room and room_seq_json"),
        "{report}"
    );
    // The columns went only after a copy of the database as it was before the purge.
    let copy = dir.path().join("gogobee.db.pre-purge.bak");
    let kept: i64 = rusqlite::Connection::open(&copy)
        .expect("the copy")
        .query_row(
            "SELECT count(*) FROM pragma_table_info('dnd_zone_run') WHERE name = 'current_room'",
            [],
            |r| r.get(0),
        )
        .expect("columns");
    assert_eq!(kept, 1, "the copy still has current_room");
    let conn = zonegraph_server::db::open(&db_path).expect("open");
    let runs = zonegraph_server::db::Tx::new(&conn, zonegraph_server::db::LegacyColumns::default())
        .all_runs()
        .expect("every row reads as a run");
    assert_eq!(runs.len() as i64, rows, "no row lost: {report}");
    assert!(
        runs.iter()
            .any(|r| r.run.run_id == "g1-ash-0" && r.run.outcome.is_some())
    );
}

/// One Go file `zones.go` in a new folder of `dir`: a linear zone per `(const name, id)`.
fn go_zones(dir: &Path, zones: &[(&str, &str)]) -> std::path::PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("src");
    let mut go = String::from("package plugin\n\ntype ZoneID string\n\nconst (\n");
    for (name, id) in zones {
        go.push_str(&format!("\t{name} ZoneID = {id:?}\n"));
    }
    go.push_str(")\n");
    for (name, _) in zones {
        go.push_str(&format!(
            "\nfunc zone{name}() ZoneDefinition {{\n\treturn ZoneDefinition{{ID: {name}, \
             Display: \"Zone {name}\", Tier: 1,\n\t\tLevelMin: 1, LevelMax: 5, MinRooms: 5, \
             MaxRooms: 6}}\n}}\n"
        ));
    }
    std::fs::write(src.join("zones.go"), go).expect("a Go source");
    src
}

/// Before: a Go `ID` of `../escape` was joined to `--out` and written outside it. Now an id
/// that cannot name its file is an error and nothing is written for it.
#[test]
fn a_zone_id_that_cannot_name_a_file_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = go_zones(
        dir.path(),
        &[("ZoneEscape", "../escape"), ("ZoneFine", "fine")],
    );
    let out = dir.path().join("out");
    let (report, failed) = import_cmd(&src, &out);
    assert!(failed, "{report}");
    assert!(
        report.contains(
            "error[import]: zone id \"../escape\" cannot name a zone file: \
             a zone id cannot start with a dot; not written"
        ),
        "{report}"
    );
    assert!(
        !dir.path().join("escape.json").exists(),
        "nothing outside --out"
    );
    assert!(
        out.join("fine.json").is_file(),
        "the other zone is written: {report}"
    );
    assert!(
        report.contains("imported 1 of 2 zones into OUT"),
        "{report}"
    );
}

/// Before: a file of nested braces overflowed the parser's stack and aborted the process.
/// Now it is an error at the bracket past the limit; the other files are still read (a zone
/// whose graph that file may hold is then not guessed linear).
#[test]
fn a_file_nested_too_deep_is_an_error_at_its_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = go_zones(dir.path(), &[("ZoneFine", "fine")]);
    let deep = format!("package plugin\n\nvar x = {}\n", "[]T{".repeat(200_000));
    std::fs::write(src.join("deep.go"), deep).expect("deep.go");
    let (report, failed) = import_cmd(&src, &dir.path().join("out"));
    assert!(failed, "{report}");
    // Level 65 opens at the 65th `[]T{`'s `[`: column 9 + 64 × 4 of line 3.
    assert!(
        report.contains(
            "error[import]: cannot read this file as Go: brackets nested deeper than 64 levels\n  \
             --> FIXTURES/deep.go:3:265"
        ),
        "{report}"
    );
    assert!(
        report.contains("FIXTURES/deep.go could not be read and may hold its graph"),
        "{report}"
    );
}

/// Before: importing into `zones/` replaced the shipped `crypt_valdris.json` without a word.
/// Now a file already there is replaced only with `--force`, and a zone that another file
/// of the folder holds is never written, `--force` or not.
#[test]
fn a_zone_file_already_there_is_replaced_only_with_force() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = go_zones(
        dir.path(),
        &[
            ("ZoneCryptValdris", "crypt_valdris"),
            ("ZoneOther", "other_zone"),
        ],
    );
    let out = dir.path().join("zones");
    std::fs::create_dir(&out).expect("zones");
    let shipped = std::fs::read_to_string(root().join("zones/crypt_valdris.json")).expect("crypt");
    std::fs::write(out.join("crypt_valdris.json"), &shipped).expect("the shipped Crypt");
    let other = std::fs::read_to_string(root().join("zones/cinder_spire.json"))
        .expect("cinder")
        .replace("\"cinder_spire\"", "\"other_zone\"")
        .replace("cinder_spire.", "other_zone.");
    std::fs::write(out.join("renamed.json"), &other).expect("other_zone under another name");

    let (report, failed) = import_cmd(&src, &out);
    assert!(failed, "{report}");
    assert!(
        report.contains(
            "error[import]: OUT/crypt_valdris.json already exists; not replaced (--force \
             replaces it)"
        ),
        "{report}"
    );
    assert!(
        report.contains("error[import]: zone other_zone is already in OUT/renamed.json"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("crypt_valdris.json")).expect("crypt"),
        shipped,
        "kept"
    );
    assert!(!out.join("other_zone.json").exists());

    let (report, failed) = import_with(&src, &out, &["--force"]);
    assert!(failed, "the clash stays an error: {report}");
    assert!(report.contains("wrote OUT/crypt_valdris.json"), "{report}");
    assert_ne!(
        std::fs::read_to_string(out.join("crypt_valdris.json")).expect("crypt"),
        shipped,
        "replaced by gogobee's"
    );
    assert!(
        report.contains("error[import]: zone other_zone is already in OUT/renamed.json"),
        "{report}"
    );
    assert!(!out.join("other_zone.json").exists());
}
