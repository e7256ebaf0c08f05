//! The zone editor's model in headless Chromium (`cargo test -p zonegraph-web --target
//! wasm32-unknown-unknown --test editor`): every [`Edit`] is made, undone and redone in the
//! browser build, each refusal leaves the editor as it was, and the file written out is
//! the canonical zone file. The list of edits is checked against the enum (a new variant
//! does not compile until it is tested here).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed lookup is a failed test

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement};
use zonegraph_core::format::{self, LockKind, NodeKind, RegionFile};
use zonegraph_web::app::App;
use zonegraph_web::editor::{self, Edit, Editor, Refused};

wasm_bindgen_test_configure!(run_in_browser);

/// The variant's name; exhaustive, so every variant must be listed in [`ALL_EDITS`].
fn variant(e: &Edit) -> &'static str {
    match e {
        Edit::AddRoom(_) => "AddRoom",
        Edit::MoveRoom { .. } => "MoveRoom",
        Edit::MoveRooms { .. } => "MoveRooms",
        Edit::SetRoom { .. } => "SetRoom",
        Edit::DeleteRoom { .. } => "DeleteRoom",
        Edit::DeleteRooms { .. } => "DeleteRooms",
        Edit::Connect(_) => "Connect",
        Edit::SetPassage { .. } => "SetPassage",
        Edit::DeletePassage { .. } => "DeletePassage",
        Edit::SetMeta { .. } => "SetMeta",
        Edit::SetRegions(_) => "SetRegions",
        Edit::RenameRoom { .. } => "RenameRoom",
    }
}

const ALL_EDITS: [&str; 12] = [
    "AddRoom",
    "MoveRoom",
    "MoveRooms",
    "SetRoom",
    "DeleteRoom",
    "DeleteRooms",
    "Connect",
    "SetPassage",
    "DeletePassage",
    "SetMeta",
    "SetRegions",
    "RenameRoom",
];

/// entry → fork → (trap | elite) → boss, built by edits.
fn small_zone() -> Editor {
    let mut e = Editor::empty("z", "Z");
    let add = |e: &mut Editor, id: &str, kind: NodeKind, x: i32, y: i32| {
        e.apply(Edit::AddRoom(editor::room(id, kind, id, x, y)))
            .unwrap();
    };
    add(&mut e, "z.fork", NodeKind::Fork, 0, 1);
    add(&mut e, "z.trap", NodeKind::Trap, -1, 2);
    add(&mut e, "z.elite", NodeKind::Elite, 1, 2);
    add(&mut e, "z.boss", NodeKind::Boss, 0, 3);
    for (a, b) in [
        ("z.entry", "z.fork"),
        ("z.fork", "z.trap"),
        ("z.fork", "z.elite"),
        ("z.trap", "z.boss"),
        ("z.elite", "z.boss"),
    ] {
        e.apply(Edit::Connect(editor::passage(a, b))).unwrap();
    }
    e
}

/// One edit of every kind, each changing the file (in this order, on [`small_zone`]).
fn every_edit(e: &Editor) -> Vec<Edit> {
    let nodes = e.file().nodes.clone().unwrap();
    let mut entry = nodes[0].clone();
    entry.label = "The Way In".into();
    entry.region_id = "upper".into();
    entry.content.narration = "Cold air.".into();
    entry.content.grants_key = Some("skull_key".into());
    let mut locked = editor::passage("z.fork", "z.trap");
    locked.lock_kind = LockKind::StatCheck;
    locked.lock_data = editor::default_lock_data(LockKind::StatCheck);
    locked.hint = "A heavy door.".into();
    locked.weight = 2;
    vec![
        Edit::AddRoom(editor::room("z.secret_1", NodeKind::Secret, "Hidden", 2, 2)),
        Edit::MoveRoom {
            id: "z.secret_1".into(),
            x: 3,
            y: 1,
        },
        Edit::MoveRooms {
            ids: vec!["z.trap".into(), "z.elite".into()],
            dx: 0,
            dy: 1,
        },
        Edit::SetRoom {
            id: "z.entry".into(),
            room: entry,
        },
        Edit::Connect(editor::passage("z.elite", "z.secret_1")),
        Edit::SetPassage {
            index: 1,
            edge: locked,
        },
        Edit::DeletePassage { index: 5 },
        Edit::DeleteRoom {
            id: "z.secret_1".into(),
        },
        Edit::DeleteRooms {
            ids: vec!["z.trap".into(), "z.elite".into()],
        },
        Edit::SetMeta {
            zone_id: "z2".into(),
            name: "Renamed".into(),
            tier: 2,
            min_level: 3,
            max_level: 7,
            allow_loops: true,
        },
        Edit::SetRegions(vec![RegionFile {
            region_id: "upper".into(),
            name: "Upper Halls".into(),
            order: 1,
        }]),
        Edit::RenameRoom {
            from: "z2.boss".into(),
            to: "z2.lair".into(),
        },
    ]
}

#[wasm_bindgen_test]
fn every_edit_is_made_undone_and_redone() {
    let mut e = small_zone();
    let edits = every_edit(&e);
    let mut names: Vec<&str> = edits.iter().map(variant).collect();
    zonegraph_core::text::sort(&mut names);
    let mut all = ALL_EDITS.to_vec();
    zonegraph_core::text::sort(&mut all);
    assert_eq!(names, all, "one edit of every kind");
    for edit in edits {
        let before = e.file().clone();
        let json_before = e.to_json();
        e.apply(edit.clone())
            .unwrap_or_else(|why| panic!("{edit:?}: {why}"));
        let after = e.file().clone();
        assert_ne!(before, after, "{edit:?} changed nothing");
        assert_ne!(
            e.to_json(),
            json_before,
            "{edit:?} is in the file written out"
        );
        assert!(e.can_undo() && !e.can_redo());
        assert!(e.undo(), "{edit:?} undone");
        assert_eq!(e.file(), &before, "undo of {edit:?}");
        assert_eq!(e.to_json(), json_before, "undo of {edit:?}, as written");
        assert!(e.redo(), "{edit:?} redone");
        assert_eq!(e.file(), &after, "redo of {edit:?}");
    }
    // Everything undone, in reverse, gives back the zone built at the start.
    let start = small_zone();
    while e.file() != start.file() {
        assert!(e.undo(), "undo reaches the start");
    }
}

#[wasm_bindgen_test]
fn each_kind_of_refusal_leaves_the_editor_as_it_was() {
    let mut e = small_zone();
    let before = e.clone();
    let refusals = [
        (
            Edit::AddRoom(editor::room("z.fork", NodeKind::Trap, "Again", 0, 0)),
            Refused::DuplicateRoom("z.fork".into()),
        ),
        (
            Edit::RenameRoom {
                from: "z.trap".into(),
                to: "z.fork".into(),
            },
            Refused::DuplicateRoom("z.fork".into()),
        ),
        (
            Edit::RenameRoom {
                from: "z.none".into(),
                to: "z.new".into(),
            },
            Refused::NoRoom("z.none".into()),
        ),
        (
            Edit::MoveRoom {
                id: "z.none".into(),
                x: 0,
                y: 0,
            },
            Refused::NoRoom("z.none".into()),
        ),
        (
            Edit::MoveRooms {
                ids: vec!["z.fork".into(), "z.none".into()],
                dx: 1,
                dy: 0,
            },
            Refused::NoRoom("z.none".into()),
        ),
        (
            Edit::SetRoom {
                id: "z.none".into(),
                room: editor::room("z.none", NodeKind::Trap, "", 0, 0),
            },
            Refused::NoRoom("z.none".into()),
        ),
        (
            Edit::DeleteRoom {
                id: "z.none".into(),
            },
            Refused::NoRoom("z.none".into()),
        ),
        (
            Edit::Connect(editor::passage("z.fork", "z.none")),
            Refused::NoRoom("z.none".into()),
        ),
        (
            Edit::SetPassage {
                index: 99,
                edge: editor::passage("z.fork", "z.boss"),
            },
            Refused::NoPassage(99),
        ),
        (
            Edit::DeleteRooms {
                ids: vec!["z.trap".into(), "z.none".into()],
            },
            Refused::NoRoom("z.none".into()),
        ),
        (Edit::DeletePassage { index: 99 }, Refused::NoPassage(99)),
    ];
    for (edit, why) in refusals {
        assert_eq!(e.apply(edit), Err(why));
        assert_eq!(e, before, "a refused edit changes nothing");
    }
}

#[wasm_bindgen_test]
fn deleting_a_multi_selection_takes_every_room_and_passage_and_one_undo_restores_all() {
    let mut e = small_zone();
    let before = e.file().clone();
    e.apply(Edit::DeleteRooms {
        ids: vec!["z.trap".into(), "z.elite".into(), "z.trap".into()],
    })
    .unwrap();
    let nodes: Vec<String> = e
        .file()
        .nodes
        .as_ref()
        .unwrap()
        .iter()
        .map(|n| n.node_id.clone())
        .collect();
    assert_eq!(nodes, ["z.entry", "z.fork", "z.boss"]);
    let edges: Vec<(String, String)> = e
        .file()
        .edges
        .as_ref()
        .unwrap()
        .iter()
        .map(|x| (x.from_node.clone(), x.to_node.clone()))
        .collect();
    assert_eq!(edges, [("z.entry".to_string(), "z.fork".to_string())]);
    assert!(e.undo(), "one undo");
    assert_eq!(
        e.file(),
        &before,
        "one undo brings back both rooms and their four passages"
    );
    assert!(e.redo());
    assert_eq!(e.file().nodes.as_ref().unwrap().len(), 3);
}

#[wasm_bindgen_test]
fn the_file_written_out_is_the_canonical_zone_file_and_checks_clean() {
    let e = small_zone();
    let json = e.to_json();
    assert!(json.ends_with("}\n"));
    assert_eq!(format::parse(&json).unwrap(), *e.file());
    assert_eq!(format::to_pretty_json(&format::parse(&json).unwrap()), json);
    assert!(
        e.diagnostics().iter().all(|d| !d.is_error()),
        "{:?}",
        e.diagnostics()
    );
    // A legacy zone opens compiled, and its edits undo like any other.
    let mut old = Editor::open_text(
        r#"{"format":1,"zone_id":"old","name":"Old","tier":1,"min_level":1,"max_level":3,
            "room_kinds":["entry","trap","boss"]}"#,
    )
    .unwrap();
    let before = old.file().clone();
    old.apply(Edit::MoveRoom {
        id: "old.r2".into(),
        x: 1,
        y: 1,
    })
    .unwrap();
    assert!(old.undo());
    assert_eq!(old.file(), &before);
}

/// Lets Leptos and the browser run: effects, animation frames, re-renders.
async fn settle() {
    gloo_timers::future::TimeoutFuture::new(30).await;
}

/// Mounts the whole app at `#fragment` in a fresh container.
fn mount_app(fragment: &str) -> (Element, Box<dyn std::any::Any>) {
    let window = web_sys::window().unwrap();
    window.location().set_hash(fragment).unwrap();
    let doc = window.document().unwrap();
    let div = doc.create_element("div").unwrap();
    div.set_attribute("style", "width:1200px;height:800px")
        .unwrap();
    doc.body().unwrap().append_child(&div).unwrap();
    let el: HtmlElement = div.clone().dyn_into().unwrap();
    let handle = leptos::mount::mount_to(el, App);
    (div, Box::new(handle))
}

fn count(root: &Element, selector: &str) -> u32 {
    root.query_selector_all(selector).unwrap().length()
}

fn click(el: &Element) {
    let init = web_sys::MouseEventInit::new();
    init.set_bubbles(true);
    let ev = web_sys::MouseEvent::new_with_mouse_event_init_dict("click", &init).unwrap();
    el.dispatch_event(&ev).unwrap();
}

fn button(root: &Element, text: &str) -> Element {
    let all = root.query_selector_all("button").unwrap();
    (0..all.length())
        .filter_map(|i| all.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .find(|b| b.text_content().unwrap_or_default().trim() == text)
        .unwrap_or_else(|| panic!("no button {text:?}"))
}

fn meta(root: &Element) -> String {
    root.query_selector(".zone-head .meta")
        .unwrap()
        .unwrap()
        .text_content()
        .unwrap_or_default()
}

#[wasm_bindgen_test]
async fn the_editor_page_opens_a_zone_adds_a_room_and_undoes_it() {
    let (root, _app) = mount_app("edit/zone/crypt_valdris");
    settle().await;
    assert_eq!(count(&root, "g.room"), 8);
    assert!(
        meta(&root).contains("8 rooms · 9 passages"),
        "{}",
        meta(&root)
    );
    let fork = root
        .query_selector("g.room[data-node='crypt_valdris.fork']")
        .unwrap()
        .unwrap();
    click(&fork);
    settle().await;
    click(&button(&root, "Add room"));
    settle().await;
    assert_eq!(count(&root, "g.room"), 9);
    click(&button(&root, "Undo"));
    settle().await;
    assert_eq!(count(&root, "g.room"), 8);
    click(&button(&root, "Redo"));
    settle().await;
    assert_eq!(count(&root, "g.room"), 9);
    // The work is saved: a fresh editor restores it.
    drop(_app);
    root.remove();
    let (again, _app) = mount_app("edit");
    settle().await;
    assert_eq!(count(&again, "g.room"), 9);
    again.remove();
}

#[wasm_bindgen_test]
async fn a_legacy_zone_opens_in_the_editor_as_its_compiled_graph() {
    let (root, _app) = mount_app("edit/zone/cinder_spire");
    settle().await;
    assert!(
        meta(&root).contains("9 rooms · 8 passages"),
        "{}",
        meta(&root)
    );
    assert_eq!(count(&root, "g.room[data-node='cinder_spire.r5']"), 1);
    root.remove();
}
