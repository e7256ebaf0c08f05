use super::*;
use zonegraph_core::diagnostic::Severity;
use zonegraph_core::impact;

fn errors(e: &Editor) -> Vec<String> {
    e.diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.code.as_str().to_string())
        .collect()
}

/// Applies `edit`, checks it changed the file, undoes it (the file as before), redoes
/// it (the file as after).
fn check_undoable(e: &mut Editor, edit: Edit) {
    let before = e.file().clone();
    e.apply(edit.clone()).expect("the edit is made");
    let after = e.file().clone();
    assert_ne!(before, after, "{edit:?} changed nothing");
    assert!(e.undo());
    assert_eq!(e.file(), &before, "undo of {edit:?}");
    assert!(e.redo());
    assert_eq!(e.file(), &after, "redo of {edit:?}");
}

/// A three-route zone built only by edits: entry → fork → (a | b | c) → boss.
fn three_routes() -> Editor {
    let mut e = Editor::empty("z", "Three Routes");
    let fork = e.new_room_id(NodeKind::Fork);
    e.apply(Edit::AddRoom(room(&fork, NodeKind::Fork, "Fork", 0, 1)))
        .expect("fork");
    e.apply(Edit::Connect(passage("z.entry", &fork)))
        .expect("entry → fork");
    let boss = e.new_room_id(NodeKind::Boss);
    e.apply(Edit::AddRoom(room(&boss, NodeKind::Boss, "Boss", 0, 3)))
        .expect("boss");
    for (x, kind) in [
        (-1, NodeKind::Trap),
        (0, NodeKind::Elite),
        (1, NodeKind::Harvest),
    ] {
        let id = e.new_room_id(kind);
        e.apply(Edit::AddRoom(room(&id, kind, kind.as_str(), x, 2)))
            .expect("room");
        e.apply(Edit::Connect(passage(&fork, &id)))
            .expect("fork → room");
        e.apply(Edit::Connect(passage(&id, &boss)))
            .expect("room → boss");
    }
    e
}

#[test]
fn a_three_route_zone_built_by_edits_goes_from_errors_to_clean() {
    let mut e = Editor::empty("z", "Three Routes");
    assert!(!errors(&e).is_empty(), "an entry alone has no boss");
    e = three_routes();
    assert_eq!(errors(&e), Vec::<String>::new(), "{:?}", e.diagnostics());
    // The file reads back as the same zone, in the canonical form.
    let json = e.to_json();
    assert!(json.ends_with("}\n"));
    assert_eq!(format::parse(&json).expect("parses"), *e.file());
    let checked = validate::check_sources(&[("z.json".into(), json)]);
    assert!(!checked[0].has_errors(), "{:?}", checked[0].diagnostics);
}

#[test]
fn every_edit_is_undone_and_redone() {
    let mut e = three_routes();
    let id = e.new_room_id(NodeKind::Secret);
    check_undoable(
        &mut e,
        Edit::AddRoom(room(&id, NodeKind::Secret, "Hidden", 2, 2)),
    );
    check_undoable(
        &mut e,
        Edit::MoveRoom {
            id: id.clone(),
            x: 5,
            y: -3,
        },
    );
    let mut changed = e.file().nodes.as_ref().expect("nodes")[0].clone();
    changed.label = "The Way In".into();
    changed.region_id = "upper".into();
    changed.content.narration = "Cold air.".into();
    check_undoable(
        &mut e,
        Edit::SetRoom {
            id: "z.entry".into(),
            room: changed,
        },
    );
    check_undoable(&mut e, Edit::Connect(passage("z.fork_1", &id)));
    let last = e.file().edges.as_ref().expect("edges").len() - 1;
    let mut locked = passage("z.fork_1", &id);
    locked.lock_kind = LockKind::PerceptionCheck;
    locked.lock_data.insert("dc".into(), 12.into());
    locked.hint = "A draft.".into();
    locked.weight = 3;
    check_undoable(
        &mut e,
        Edit::SetPassage {
            index: last,
            edge: locked,
        },
    );
    check_undoable(&mut e, Edit::DeletePassage { index: last });
    check_undoable(&mut e, Edit::DeleteRoom { id: id.clone() });
    check_undoable(
        &mut e,
        Edit::SetMeta {
            zone_id: "z".into(),
            name: "Renamed".into(),
            tier: 2,
            min_level: 3,
            max_level: 7,
            allow_loops: true,
        },
    );
    check_undoable(
        &mut e,
        Edit::MoveRooms {
            ids: vec!["z.entry".into(), "z.fork_1".into(), "z.entry".into()],
            dx: 2,
            dy: -1,
        },
    );
    let moved = e.file().nodes.as_ref().expect("nodes");
    assert_eq!(
        (moved[0].pos_x, moved[0].pos_y),
        (Some(2), Some(-1)),
        "moved once"
    );
    check_undoable(
        &mut e,
        Edit::SetRegions(vec![RegionFile {
            region_id: "upper".into(),
            name: "Upper Halls".into(),
            order: 1,
        }]),
    );
}

#[test]
fn deleting_a_room_takes_its_passages_and_undo_brings_both_back() {
    let mut e = three_routes();
    let before = e.file().clone();
    e.apply(Edit::DeleteRoom {
        id: "z.fork_1".into(),
    })
    .expect("deleted");
    let edges = e.file().edges.as_ref().expect("edges");
    assert!(
        edges
            .iter()
            .all(|x| x.from_node != "z.fork_1" && x.to_node != "z.fork_1")
    );
    assert!(!errors(&e).is_empty(), "the boss is cut off");
    assert!(e.undo());
    assert_eq!(e.file(), &before);
    assert!(errors(&e).is_empty());
}

#[test]
fn deleting_a_multi_selection_is_one_edit_and_one_undo_brings_all_back() {
    let mut e = three_routes();
    let before = e.file().clone();
    let ids: Vec<String> = before.nodes.as_ref().expect("nodes")[2..4]
        .iter()
        .map(|n| n.node_id.clone())
        .collect();
    e.apply(Edit::DeleteRooms { ids: ids.clone() })
        .expect("deleted");
    let after = e.file();
    let nodes = after.nodes.as_ref().expect("nodes");
    assert_eq!(nodes.len() + 2, before.nodes.as_ref().expect("nodes").len());
    assert!(nodes.iter().all(|n| !ids.contains(&n.node_id)));
    assert!(
        after
            .edges
            .as_ref()
            .expect("edges")
            .iter()
            .all(|x| !ids.contains(&x.from_node) && !ids.contains(&x.to_node)),
        "their passages went with them"
    );
    assert!(e.undo(), "one undo");
    assert_eq!(
        e.file(),
        &before,
        "one undo restores every room and passage"
    );
    let mut missing = ids;
    missing.push("z.nowhere".into());
    let kept = e.clone();
    assert_eq!(
        e.apply(Edit::DeleteRooms { ids: missing }),
        Err(Refused::NoRoom("z.nowhere".into()))
    );
    assert_eq!(e, kept, "refused whole");
}

#[test]
fn a_refused_edit_changes_nothing_and_keeps_redo() {
    let mut e = three_routes();
    e.apply(Edit::MoveRoom {
        id: "z.entry".into(),
        x: 9,
        y: 9,
    })
    .expect("moved");
    assert!(e.undo());
    let before = e.clone();
    for (edit, why) in [
        (
            Edit::AddRoom(room("z.entry", NodeKind::Trap, "Again", 0, 0)),
            Refused::DuplicateRoom("z.entry".into()),
        ),
        (
            Edit::Connect(passage("z.entry", "z.nowhere")),
            Refused::NoRoom("z.nowhere".into()),
        ),
        (
            Edit::MoveRoom {
                id: "z.nowhere".into(),
                x: 0,
                y: 0,
            },
            Refused::NoRoom("z.nowhere".into()),
        ),
        (Edit::DeletePassage { index: 99 }, Refused::NoPassage(99)),
        (
            Edit::SetPassage {
                index: 99,
                edge: passage("z.entry", "z.fork_1"),
            },
            Refused::NoPassage(99),
        ),
    ] {
        assert_eq!(e.apply(edit), Err(why));
        assert_eq!(e, before, "a refused edit left the editor as it was");
    }
    assert!(e.redo(), "redo survives a refused edit");
}

#[test]
fn undo_and_redo_stop_at_the_ends_and_a_new_edit_clears_redo() {
    let mut e = Editor::empty("z", "Z");
    assert!(!e.undo() && !e.redo());
    e.apply(Edit::MoveRoom {
        id: "z.entry".into(),
        x: 1,
        y: 1,
    })
    .expect("moved");
    assert!(e.undo());
    assert!(e.can_redo());
    e.apply(Edit::MoveRoom {
        id: "z.entry".into(),
        x: 2,
        y: 2,
    })
    .expect("moved");
    assert!(!e.can_redo());
    for n in 0..UNDO_LIMIT + 10 {
        e.apply(Edit::MoveRoom {
            id: "z.entry".into(),
            x: n as i32,
            y: 0,
        })
        .expect("moved");
    }
    let mut undone = 0;
    while e.undo() {
        undone += 1;
    }
    assert_eq!(undone, UNDO_LIMIT);
}

#[test]
fn new_room_ids_are_unique_and_name_the_kind() {
    let mut e = Editor::empty("z", "Z");
    let a = e.new_room_id(NodeKind::Trap);
    assert_eq!(a, "z.trap_1");
    e.apply(Edit::AddRoom(room(&a, NodeKind::Trap, "T", 0, 1)))
        .expect("added");
    assert_eq!(e.new_room_id(NodeKind::Trap), "z.trap_2");
    assert_eq!(e.new_room_id(NodeKind::RestCamp), "z.rest_camp_1");
}

#[test]
fn publish_answers_read_as_words() {
    let ok =
        r#"{"published":"z","file":"z.json","replaced":true,"zones":8,"findings":{"zones":[]}}"#;
    assert_eq!(
        publish_words(200, ok),
        "Published z as z.json: the server now serves 8 zones (runs already on the old \
         version keep it)."
    );
    let refused = r#"{"error":"the zone files have errors with this one; nothing was changed",
        "zones":[{"file":"zones/z.json","zone_id":"z","diagnostics":[
          {"severity":"warning","code":"w","message":"a warning"},
          {"severity":"error","code":"e","message":"the boss cannot be reached"}]}]}"#;
    assert_eq!(
        publish_words(422, refused),
        "Not published: the zone files have errors with this one; nothing was changed. \
         zones/z.json: the boss cannot be reached."
    );
    assert!(publish_words(401, "{}").contains("publish token"));
    assert!(publish_words(500, "not json").contains("500"));
}

#[test]
fn a_legacy_room_kinds_zone_opens_as_its_compiled_graph() {
    let text = r#"{"format":1,"zone_id":"old","name":"Old","tier":1,"min_level":1,
        "max_level":3,"room_kinds":["entry","trap","boss"]}"#;
    let mut e = Editor::open_text(text).expect("opens");
    assert!(e.file().room_kinds.is_none());
    let ids: Vec<&str> = rooms(e.file()).iter().map(|n| n.node_id.as_str()).collect();
    assert_eq!(ids, ["old.r1", "old.r2", "old.r3"]);
    assert_eq!(e.file().edges.as_ref().map(Vec::len), Some(2));
    assert_eq!(errors(&e), Vec::<String>::new(), "{:?}", e.diagnostics());
    // Ready to branch: a second way from the trap to the boss.
    let id = e.new_room_id(NodeKind::Harvest);
    e.apply(Edit::AddRoom(room(&id, NodeKind::Harvest, "Side", 1, 1)))
        .expect("added");
    e.apply(Edit::Connect(passage("old.r2", &id))).expect("in");
    e.apply(Edit::Connect(passage(&id, "old.r3"))).expect("out");
    assert_eq!(errors(&e), Vec::<String>::new(), "{:?}", e.diagnostics());
    assert!(Editor::open_text("{").is_err());
}

#[test]
fn a_zone_without_hints_opens_with_every_room_placed_as_drawn() {
    let (_, text) = crate::zones::shipped("mossback_warren").expect("shipped");
    let e = Editor::open_text(text).expect("opens");
    assert!(
        rooms(e.file())
            .iter()
            .all(|n| n.pos_x.is_some() && n.pos_y.is_some())
    );
    let before = crate::doc::load("m", text).expect("loads");
    let after = crate::doc::generated("m", e.file());
    let cells = |l: &crate::doc::Loaded| -> Vec<(String, u32, u32)> {
        l.layout
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.col, n.row))
            .collect()
    };
    assert_eq!(cells(&before), cells(&after), "drawn where it was");
}

#[test]
fn a_playtest_starts_from_the_chosen_room() {
    let e = three_routes();
    let file = playtest_file(e.file(), "z.trap_1");
    let entries: Vec<&str> = rooms(&file)
        .iter()
        .filter(|n| n.is_entry)
        .map(|n| n.node_id.as_str())
        .collect();
    assert_eq!(entries, ["z.trap_1"]);
    let (zone, _) = zone::build(&file);
    let mut p = crate::playtest::Playtest::new(zonegraph_core::engine::Character::default());
    p.command(&zone, "!zone enter z", "t");
    assert_eq!(
        p.run().map(|r| r.current_node.0.as_str()),
        Some("z.trap_1"),
        "{:?}",
        p.log
    );
}

#[test]
fn drags_move_by_whole_cells() {
    assert_eq!(cells_moved(0.0, 1.0, 226.0), 0);
    assert_eq!(cells_moved(100.0, 1.0, 226.0), 0);
    assert_eq!(cells_moved(120.0, 1.0, 226.0), 1);
    assert_eq!(cells_moved(-460.0, 1.0, 226.0), -2);
    assert_eq!(cells_moved(113.0, 0.5, 226.0), 1);
    assert_eq!(cells_moved(50.0, 0.0, 226.0), 0);
    assert_eq!(cells_moved(f64::NAN, 1.0, 226.0), 0);
}

#[test]
fn a_new_room_goes_below_the_selected_one_right_of_its_row() {
    let e = three_routes();
    let place = |near: Option<&str>| new_room_place(e.file(), near);
    // Row 2 holds the three routes (columns -1, 0, 1).
    assert_eq!(place(Some("z.fork_1")), (2, 2));
    assert_eq!(place(Some("z.boss_1")), (0, 4));
    assert_eq!(place(None), (0, 4));
    assert_eq!(place(Some("z.no_such_room")), (0, 4));
    let one = Editor::empty("z", "Z");
    assert_eq!(new_room_place(one.file(), Some("z.entry")), (0, 1));
}

#[test]
fn deleting_the_selection_takes_its_rooms_else_its_passage() {
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(delete_edit(ids(&[]), None), None);
    assert_eq!(
        delete_edit(ids(&[]), Some(3)),
        Some(Edit::DeletePassage { index: 3 })
    );
    assert_eq!(
        delete_edit(ids(&["a"]), Some(3)),
        Some(Edit::DeleteRoom { id: "a".into() })
    );
    assert_eq!(
        delete_edit(ids(&["a", "b"]), None),
        Some(Edit::DeleteRooms {
            ids: ids(&["a", "b"])
        })
    );
}

#[test]
fn a_new_region_takes_the_next_number_and_a_free_id() {
    let first = new_region(&[]);
    assert_eq!(
        (first.region_id.as_str(), first.name.as_str(), first.order),
        ("region_1", "Region 1", 1)
    );
    let taken = RegionFile {
        region_id: "region_2".into(),
        name: "Crypt".into(),
        order: 1,
    };
    let next = new_region(&[taken]);
    assert_eq!(
        (next.region_id.as_str(), next.name.as_str(), next.order),
        ("region_3", "Region 2", 2)
    );
}

#[test]
fn a_lock_form_shows_its_kinds_keys_then_the_files_others() {
    let mut edge = passage("a", "b");
    edge.lock_kind = LockKind::StatCheck;
    edge.lock_data.insert("dc".into(), 15.into());
    edge.lock_data.insert("note".into(), "x".into());
    let fields = lock_fields(&edge);
    let shown: Vec<(&str, String)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.to_string()))
        .collect();
    assert_eq!(
        shown,
        [
            ("dc", "15".to_string()),
            ("stat", "\"str\"".to_string()),
            ("note", "\"x\"".to_string())
        ]
    );
    let captions: Vec<String> = fields.iter().map(|(k, _)| lock_data_caption(k)).collect();
    assert_eq!(captions, ["Difficulty (DC)", "Ability", "Lock data: note"]);
    assert!(lock_fields(&passage("a", "b")).is_empty());
}

#[test]
fn form_fields_read_whole_numbers_within_their_range() {
    assert_eq!(form_number(" 7 ", 1, 20), Some(7));
    assert_eq!(form_number("99", 1, 20), Some(20));
    assert_eq!(form_number("-5", 1, 20), Some(1));
    assert_eq!(form_number("2.5", 1, 20), None);
    assert_eq!(form_number("", 1, 20), None);
}

#[test]
fn decimal_fields_read_as_str_parse_does() {
    for t in ["0.5", " 2 ", "1e2", "0", "12.25", "-3.5"] {
        assert_eq!(form_decimal(t), t.trim().parse::<f64>().ok(), "{t}");
    }
    assert_eq!(form_decimal(".5"), Some(0.5));
    for t in ["", "abc", "1.2.3", "NaN", "inf"] {
        assert_eq!(form_decimal(t), None, "{t}");
    }
}

#[test]
fn room_lists_name_each_room_by_label_and_id() {
    let mut e = Editor::empty("z", "Z");
    e.apply(Edit::AddRoom(room("z.x", NodeKind::Trap, "", 0, 1)))
        .expect("room");
    assert_eq!(
        room_names(e.file()),
        [
            ("z.entry".to_string(), "Entry (z.entry)".to_string()),
            ("z.x".to_string(), "z.x".to_string())
        ]
    );
}

#[test]
fn the_findings_are_counted_in_words() {
    use zonegraph_core::diagnostic::Code;
    let d = |code: Code| Diagnostic::new(code, "");
    assert_eq!(findings_words(&[]), "No findings: the zone is clean.");
    assert_eq!(
        findings_words(&[d(Code::BossCount), d(Code::DeadEnd), d(Code::MissingHint)]),
        "1 error, 2 warnings"
    );
    assert_eq!(
        findings_words(&[d(Code::BossCount), d(Code::EntryCount)]),
        "2 errors, 0 warnings"
    );
}

#[test]
fn a_zone_is_published_to_the_servers_zones_route() {
    assert_eq!(
        publish_url("https://zones.example/"),
        "https://zones.example/api/zones"
    );
    assert_eq!(
        publish_url("http://127.0.0.1:8080"),
        "http://127.0.0.1:8080/api/zones"
    );
}

#[test]
fn a_legacy_room_kinds_zone_refuses_edits() {
    let mut file = Editor::empty("z", "Z").file().clone();
    file.nodes = None;
    file.edges = None;
    file.room_kinds = Some(vec![NodeKind::Entry, NodeKind::Boss]);
    let mut e = Editor::new(file);
    assert_eq!(
        e.apply(Edit::MoveRoom {
            id: "z.entry".into(),
            x: 0,
            y: 0
        }),
        Err(Refused::Legacy)
    );
}

#[test]
fn renaming_a_room_takes_its_passages_along_in_one_undo() {
    let mut e = three_routes();
    let before = e.file().clone();
    check_undoable(
        &mut e,
        Edit::RenameRoom {
            from: "z.elite_1".into(),
            to: "z.the_elite".into(),
        },
    );
    let f = e.file();
    let ends: Vec<(&str, &str)> = f
        .edges
        .iter()
        .flatten()
        .map(|p| (p.from_node.as_str(), p.to_node.as_str()))
        .filter(|(a, b)| a.contains("elite") || b.contains("elite"))
        .collect();
    assert_eq!(
        ends,
        vec![("z.fork_1", "z.the_elite"), ("z.the_elite", "z.boss_1")]
    );
    assert!(errors(&e).is_empty(), "{:?}", e.diagnostics());
    assert!(e.undo());
    assert_eq!(e.file(), &before);
    // Refused whole: a taken id, a bad id, a missing room.
    for (from, to, why) in [
        (
            "z.elite_1",
            "z.boss_1",
            Refused::DuplicateRoom("z.boss_1".into()),
        ),
        (
            "z.elite_1",
            "two words",
            Refused::BadId("two words".into(), "a room id has no spaces".into()),
        ),
        ("z.nope", "z.new", Refused::NoRoom("z.nope".into())),
    ] {
        assert_eq!(
            e.apply(Edit::RenameRoom {
                from: from.into(),
                to: to.into()
            }),
            Err(why)
        );
        assert_eq!(e.file(), &before);
    }
}

fn meta(f: &ZoneFile, zone_id: &str, name: &str) -> Edit {
    Edit::SetMeta {
        zone_id: zone_id.into(),
        name: name.into(),
        tier: f.tier,
        min_level: f.min_level,
        max_level: f.max_level,
        allow_loops: f.allow_loops,
    }
}

#[test]
fn a_new_zone_id_renames_the_rooms_it_prefixes_in_one_edit() {
    let mut e = three_routes();
    let edit = meta(e.file(), "warren", "Warren");
    check_undoable(&mut e, edit);
    let f = e.file();
    assert_eq!(f.zone_id, "warren");
    assert!(
        f.nodes
            .iter()
            .flatten()
            .all(|n| n.node_id.starts_with("warren."))
    );
    assert!(
        f.edges
            .iter()
            .flatten()
            .all(|p| p.from_node.starts_with("warren.") && p.to_node.starts_with("warren."))
    );
    assert!(errors(&e).is_empty(), "{:?}", e.diagnostics());
    let edit = meta(e.file(), "bad id!", "Warren");
    assert!(matches!(e.apply(edit), Err(Refused::BadId(..))));
    assert_eq!(
        zone_id_problem(""),
        Some("a zone id cannot be empty".into())
    );
    assert_eq!(
        zone_id_problem(".x"),
        Some("a zone id cannot start with a dot".into())
    );
    assert_eq!(
        zone_id_problem("x.schema"),
        Some("a zone id cannot end in .schema".into())
    );
    assert_eq!(zone_id_problem("crypt-2.b_c"), None);
}

#[test]
fn zone_ids_are_proposed_from_names_and_suffixed_when_taken() {
    let taken = ["goblin_warren", "goblin_warren_2"];
    let check = |name: &str, expect: &str| {
        assert_eq!(
            propose_zone_id(name, |id| taken.contains(&id)),
            expect,
            "{name:?}"
        );
    };
    check("The Crypt of Valdris", "the_crypt_of_valdris");
    check("Goblin Warren", "goblin_warren_3");
    check("  Ünïcode — zone!! ", "n_code_zone");
    check("!!!", "zone");
    assert!(id_follows_name("new_zone", "New zone"));
    assert!(id_follows_name("new_zone_4", "New zone"));
    assert!(!id_follows_name("crypt", "New zone"));
    assert!(!id_follows_name("new_zone_x", "New zone"));
}

#[test]
fn a_copy_gets_its_own_id_never_the_originals() {
    let mut e = Editor::empty("crypt_valdris", "Crypt");
    let edit = copy_edit(e.file(), |id| id == "crypt_copy");
    e.apply(edit).expect("copied");
    assert_eq!(e.file().zone_id, "crypt_copy_2");
    assert_eq!(e.file().name, "Crypt (copy)");
    assert_eq!(rooms(e.file())[0].node_id, "crypt_copy_2.entry");
}

#[test]
fn publishing_over_a_zone_not_opened_from_the_server_is_refused() {
    let served = vec!["crypt".to_string(), "crypt_2".to_string()];
    assert_eq!(publish_plan("new", None, None, &served), PublishPlan::New);
    assert_eq!(
        publish_plan("crypt", Some(3), Some("crypt"), &served),
        PublishPlan::Replaces { seq: 3 }
    );
    let collides = publish_plan("crypt", Some(3), None, &served);
    assert_eq!(
        collides,
        PublishPlan::Collides {
            seq: 3,
            free: "crypt_3".into()
        }
    );
    assert_eq!(
        publish_plan("crypt", Some(3), Some("other"), &served),
        collides
    );
    let words = plan_words("crypt", &collides);
    assert!(
        words.starts_with("Not published: the server already serves a zone crypt (version 3)"),
        "{words}"
    );
    assert!(words.contains("crypt_3"), "{words}");
}

#[test]
fn the_publish_confirmation_words_the_changes() {
    let old = three_routes();
    let mut new = old.clone();
    new.apply(Edit::RenameRoom {
        from: "z.trap_1".into(),
        to: "z.pit".into(),
    })
    .expect("renamed");
    new.apply(Edit::DeletePassage { index: 0 })
        .expect("deleted");
    assert_eq!(
        plan_words("z", &PublishPlan::Replaces { seq: 2 }),
        "Publishing replaces version 2 of z:"
    );
    let lines = impact_lines(&impact::impact(old.file(), new.file()));
    assert_eq!(
        lines[..2],
        [
            "room renamed: z.trap_1 -> z.pit",
            "passage removed: z.entry -> z.fork_1",
        ]
    );
    // The figures that change, then the findings the change brings.
    assert!(lines.contains(&"routes: 3 -> 0".to_string()), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.starts_with("new finding: ")),
        "{lines:#?}"
    );
    assert_eq!(
        impact_lines(&impact::impact(old.file(), old.file())),
        ["no change"]
    );
    let all = figure_lines(&impact::impact(old.file(), new.file()), true);
    assert_eq!(all[0], "rooms: 6 (unchanged)");
    assert!(all.contains(&"routes: 3 -> 0".to_string()), "{all:#?}");
}

#[test]
fn the_servers_review_reads_as_its_words_or_one_line_why_not() {
    let ok = r#"{"version":3,"impact":{},"players":{},"replay":{},"words":["No run is in version 3 now.","Version 3 has no ended runs to replay."]}"#;
    assert_eq!(
        review_lines(Ok((200, ok.into()))),
        [
            "No run is in version 3 now.",
            "Version 3 has no ended runs to replay."
        ]
    );
    assert_eq!(
        review_lines(Ok((404, r#"{"error":"no zone \"x\""}"#.into()))),
        [
            "No review of the players and stored runs: the server answered 404 (no zone \"x\"). Publishing is still possible."
        ]
    );
    assert_eq!(
        review_lines(Err(
            "http://h/api/zones/x/review could not be reached".into()
        )),
        [
            "No review of the players and stored runs: http://h/api/zones/x/review could not be reached. Publishing is still possible."
        ]
    );
    assert_eq!(
        review_url("http://h:1/", "x"),
        "http://h:1/api/zones/x/review"
    );
}

#[test]
fn server_answers_read_as_lists_versions_and_words() {
    let list = r#"{"zones":[{"zone_id":"crypt","name":"Crypt","version":{"seq":4}},
        {"zone_id":"warren","name":"Warren","version":null}],"sequence":9}"#;
    assert_eq!(
        served_version(list, "crypt"),
        (Some(4), vec!["crypt".into(), "warren".into()])
    );
    assert_eq!(served_version(list, "nope").0, None);
    assert_eq!(
        served_list(list),
        vec![
            ("crypt".to_string(), "Crypt (crypt) · version 4".to_string()),
            ("warren".to_string(), "Warren (warren)".to_string()),
        ]
    );
    assert!(unpublish_words("crypt", 403, "{}").contains("needs an admin token"));
    assert!(
        unpublish_words("crypt", 200, r#"{"zones":2}"#)
            .starts_with("Unpublished crypt: the server now serves 2 zones")
    );
    assert_eq!(zone_url("http://h:1/", "a.b"), "http://h:1/api/zones/a.b");
}
