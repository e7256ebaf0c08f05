use super::*;
use crate::camera::Camera;
use crate::scenarios;
use zonegraph_core::engine::{self, Character};
use zonegraph_core::{layout, zone};

/// A player's map laid out here, as "View as player" draws it.
fn player_map(view: &PlayerView) -> MapModel {
    build_player(view, &player::lay_out(view))
}

#[test]
fn the_servers_drawing_places_the_map_as_laying_it_out_here_does() {
    for s in scenarios::fixed()
        .into_iter()
        .chain(scenarios::random(7, 40))
    {
        let view = s.view();
        let here = player_map(&view);
        let sent = layout::Drawing::of_view(&view);
        // Through JSON, as the run page reads it.
        let text = serde_json::to_string(&sent).expect("a drawing serialises");
        let read: layout::Drawing = serde_json::from_str(&text).expect("and reads back");
        let there = build_player(&view, &player::from_drawing(&view, &read));
        assert_eq!(
            (here.width, here.height),
            (there.width, there.height),
            "{}",
            s.name
        );
        let at =
            |m: &MapModel| -> Vec<_> { m.rooms.iter().map(|r| (r.id.clone(), r.x, r.y)).collect() };
        assert_eq!(at(&here), at(&there), "{}", s.name);
        assert_eq!(here.passages.len(), there.passages.len(), "{}", s.name);
        for (a, b) in here.passages.iter().zip(&there.passages) {
            assert_eq!(
                (a.edge, &a.from, &a.to),
                (b.edge, &b.from, &b.to),
                "{}",
                s.name
            );
            // Thousandths of a cell: well under a pixel.
            let off = [
                a.bbox.0 - b.bbox.0,
                a.bbox.1 - b.bbox.1,
                a.bbox.2 - b.bbox.2,
            ]
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()));
            assert!(off < 0.5, "{}: passage {} moved {off} px", s.name, a.edge);
        }
    }
}

#[test]
fn a_drawing_naming_rooms_and_passages_the_view_lacks_draws_what_it_has() {
    let view = scenarios::fixed()[0].view();
    let mut d = layout::Drawing::of_view(&view);
    d.rooms.push([9_999, 0, 40]);
    d.passages.push(layout::DrawnPassage {
        passage: 9_999,
        points: vec![[0, 0], [0, 40_000]],
    });
    let m = build_player(&view, &player::from_drawing(&view, &d));
    assert_eq!(m.rooms.len(), view.rooms.len());
    assert_eq!(m.passages.len(), view.passages.len());
}

fn crypt() -> Zone {
    let text = include_str!("../../../../zones/crypt_valdris.json");
    zone::load(text).expect("the crypt parses").0
}

#[test]
fn numbers_print_without_float_formatting() {
    let dec = |x: f64, p: u32| {
        let mut s = String::new();
        push_dec(&mut s, x, p);
        s
    };
    assert_eq!(num(12.0), "12");
    assert_eq!(num(12.46), "12.5");
    assert_eq!(num(-3.21), "-3.2");
    assert_eq!(num(-0.01), "0");
    assert_eq!(dec(0.025, 4), "0.025");
    assert_eq!(dec(1.0, 4), "1");
    assert_eq!(dec(0.0305, 3), "0.031");
    assert_eq!(percent(0.449), "45%");
}

/// What `format!` prints for `x` with `places` decimals (at most 6), trimmed to
/// [`push_dec`]'s form: no trailing zeros, no lone point, no sign on zero.
#[cfg(not(target_arch = "wasm32"))]
fn std_dec(x: f64, places: u32) -> String {
    let places = places.min(6) as usize;
    let mut s = format!("{x:.places$}");
    if s.contains('.') {
        let end = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(end);
    }
    if s == "-0" { "0".into() } else { s }
}

// Differential tests of the hand-written formatter against `format!`, which it replaces
// to keep float printing out of the WebAssembly. Native only: proptest is not built for
// the browser tests.
#[cfg(not(target_arch = "wasm32"))]
use proptest::prelude::*;

#[cfg(not(target_arch = "wasm32"))]
proptest! {
    // The contract: `x · 10^places` rounded half away from zero (`f64::round`). `format!`
    // rounds ties to even on the exact value instead, so the reference is given the number
    // already rounded the same way.
    #[test]
    fn push_dec_is_format_of_the_same_rounding(
        x in prop_oneof![
            -1e9f64..1e9,
            -1e-5f64..1e-5,
            (-2_000_000i64..2_000_000).prop_map(|n| n as f64 / 2e6),
        ],
        places in 0u32..9,
    ) {
        let scale = 10f64.powi(places.min(6) as i32);
        let mut s = String::from("x=");
        push_dec(&mut s, x, places);
        prop_assert_eq!(s, format!("x={}", std_dec((x * scale).round() / scale, places)));
    }

    // Away from a tie the two roundings agree, so `format!` of `x` itself is the reference.
    #[test]
    fn push_dec_is_format_away_from_ties(x in -1e6f64..1e6, places in 0u32..9) {
        let frac = (x * 10f64.powi(places.min(6) as i32)).abs().fract();
        prop_assume!((frac - 0.5).abs() > 0.01);
        let mut s = String::new();
        push_dec(&mut s, x, places);
        prop_assert_eq!(s, std_dec(x, places));
    }
}

/// Every lock mark of `m` keeps off every room box.
fn check_marks(what: &str, m: &MapModel) {
    for p in &m.passages {
        let Some((x, y, text)) = &p.mark else {
            continue;
        };
        let hw = (14.0 + 7.0 * text.chars().count() as f64) / 2.0;
        for r in &m.rooms {
            assert!(
                (x - r.x).abs() >= hw + BOX_W / 2.0 || (y - r.y).abs() >= 10.0 + BOX_H / 2.0,
                "{what}: the {text} mark of {} sits on {}",
                p.name,
                r.id
            );
        }
    }
}

#[test]
fn lock_marks_keep_off_room_boxes_in_every_shipped_zone() {
    for (file, text) in crate::zones::SHIPPED {
        let z = zone::load(text).expect("shipped zones parse").0;
        check_marks(file, &build(&z, &layout::layout(&z), None));
    }
    for s in scenarios::fixed() {
        check_marks(&s.name, &player_map(&s.view()));
    }
}

#[test]
fn a_mark_moves_along_its_passage_off_a_room() {
    // A long vertical run whose middle is covered, beside a short clear one.
    let pts = [(0.0, 0.0), (0.0, 400.0), (30.0, 400.0)];
    let covered = |_x: f64, y: f64| (150.0..250.0).contains(&y);
    assert_eq!(mark_spot(&pts, covered), Some((0.0, 100.0)));
    assert_eq!(mark_spot(&pts, |_, _| false), Some((0.0, 200.0)));
    assert_eq!(mark_spot(&pts, |_, _| true), Some((0.0, 200.0)));
    assert_eq!(mark_spot(&[(1.0, 1.0)], |_, _| false), None);
}

#[test]
fn designer_map_has_every_room_and_passage_without_overlap() {
    let z = crypt();
    let m = build(&z, &layout::layout(&z), None);
    assert_eq!(m.rooms.len(), 8);
    assert_eq!(m.passages.len(), 9);
    for (i, a) in m.rooms.iter().enumerate() {
        for b in &m.rooms[i + 1..] {
            assert!(
                (a.x - b.x).abs() >= BOX_W || (a.y - b.y).abs() >= BOX_H,
                "{} overlaps {}",
                a.id,
                b.id
            );
        }
    }
    let side = m
        .passages
        .iter()
        .find(|p| p.to == "crypt_valdris.side_chapel")
        .expect("the side chapel passage");
    assert_eq!(side.lock, LockKind::PerceptionCheck);
    assert_eq!(side.menu.map(|m| m.2), Some(2));
    assert!(side.name.contains("Perception DC 12"), "{}", side.name);
}

#[test]
fn a_players_map_draws_the_view_and_nothing_else() {
    // The Crypt at its fork after a failed Perception check.
    let s = &scenarios::fixed()[0];
    let view = s.view();
    let m = player_map(&view);
    assert_eq!(m.rooms.len(), view.rooms.len());
    assert_eq!(m.passages.len(), view.passages.len());
    assert!(m.rooms.iter().all(|r| r.kind != Some(NodeKind::Secret)));
    let unknown: Vec<_> = m.rooms.iter().filter(|r| r.kind.is_none()).collect();
    assert_eq!(unknown.len(), 1);
    assert_eq!(
        (unknown[0].label.as_str(), unknown[0].name.as_str()),
        ("?", "Unknown room")
    );
    assert!(unknown[0].id.starts_with('?'), "{}", unknown[0].id);
    let current = m.rooms.iter().find(|r| r.current).expect("a current room");
    assert_eq!(current.id, "crypt_valdris.fork");
    assert_eq!(m.rooms.iter().filter(|r| r.visit.is_some()).count(), 3);
    let hall = m
        .rooms
        .iter()
        .find(|r| r.id == "crypt_valdris.main_hall")
        .expect("the main hall");
    assert_eq!((hall.option, hall.option_open), (Some(1), true));
    assert_eq!(m.passages.iter().filter(|p| p.walked).count(), 2);
    let into_unknown = m
        .passages
        .iter()
        .find(|p| p.to == unknown[0].id)
        .expect("the passage into the unknown room");
    assert_eq!(
        into_unknown.mark.as_ref().map(|m| m.2.as_str()),
        Some("hidden?")
    );
    assert!(
        into_unknown.name.contains("to unknown room")
            && into_unknown.name.ends_with("locked: Perception check"),
        "{}",
        into_unknown.name
    );
    // The unknown room laid out where the designer put it: beside the main hall.
    assert_eq!(unknown[0].y, hall.y);
    assert!(unknown[0].x > hall.x);
}

#[test]
fn a_players_map_and_panel_leak_nothing_over_many_plays() {
    let all = scenarios::fixed()
        .into_iter()
        .chain(scenarios::random(1, 300));
    let mut unknown_rooms = 0;
    for s in all {
        let view = s.view();
        let m = player_map(&view);
        let mut text = chat_and_panel(&view);
        for r in &m.rooms {
            text.extend([r.id.clone(), r.label.clone(), r.name.clone()]);
            unknown_rooms += usize::from(r.kind.is_none());
        }
        for p in &m.passages {
            text.extend([p.name.clone(), p.from.clone(), p.to.clone()]);
            text.extend(p.mark.as_ref().map(|m| m.2.clone()));
        }
        let text = text.join("\n");
        for bad in scenarios::forbidden(&s.zone, &view) {
            assert!(!text.contains(&bad), "{}: shows {bad:?}", s.name);
        }
    }
    assert!(
        unknown_rooms > 0,
        "the plays include a failed Perception check"
    );
}

/// The status words and every details panel of a view.
fn chat_and_panel(view: &PlayerView) -> Vec<String> {
    let mut text = vec![zonegraph_core::chat::status(&view.status).text];
    let rows = (0..view.rooms.len())
        .flat_map(|i| player::room_details(view, &view.room_key(i)))
        .chain((0..view.passages.len()).flat_map(|j| player::passage_details(view, j)));
    text.extend(rows.map(|(k, v)| format!("{k}: {v}")));
    text
}

#[test]
fn a_run_draws_its_path_and_fork_options() {
    let z = crypt();
    let c = Character::default();
    let (mut run, _) = engine::start(&z, "viewer-test", &c, 0).expect("starts");
    engine::advance(&z, &mut run, &c, 1).expect("entry");
    engine::advance(&z, &mut run, &c, 2).expect("corridor");
    let m = build(&z, &layout::layout(&z), Some(&run));
    let visited: Vec<_> = m.rooms.iter().filter_map(|r| r.visit).collect();
    assert_eq!(visited.len(), run.visited_nodes.len());
    assert!(
        m.rooms
            .iter()
            .any(|r| r.current && r.id == "crypt_valdris.fork")
    );
    assert_eq!(m.rooms.iter().filter(|r| r.option.is_some()).count(), 2);
    assert!(m.passages.iter().filter(|p| p.walked).count() >= 2);
    let details = passage_details(&z, Some(&run), 3);
    assert!(
        details
            .iter()
            .any(|(k, v)| *k == "This run" && v.contains("vs DC 12")),
        "{details:?}"
    );
}

#[test]
fn arrow_keys_find_a_neighbour() {
    let z = crypt();
    let m = build(&z, &layout::layout(&z), None);
    let entry = m.room_pos(0).expect("entry drawn");
    let below = m.neighbour(entry, Direction::Down).expect("a room below");
    assert_eq!(m.rooms[below].id, "crypt_valdris.corridor");
    assert_eq!(m.neighbour(entry, Direction::Up), None);
}

/// A player's map as the run page draws it: from the server's drawing of the view.
fn run_page_map(view: &PlayerView) -> MapModel {
    build_player(
        view,
        &player::from_drawing(view, &layout::Drawing::of_view(view)),
    )
}

#[test]
fn a_players_legend_explains_what_the_map_draws_and_nothing_else() {
    let all = scenarios::fixed()
        .into_iter()
        .chain(scenarios::random(3, 60));
    for s in all {
        let m = run_page_map(&s.view());
        let legend = m.legend();
        // Every kind and lock drawn is explained, and nothing else is.
        for r in &m.rooms {
            assert!(
                r.kind.is_none_or(|k| legend.kinds.contains(&k)),
                "{}",
                s.name
            );
        }
        for k in &legend.kinds {
            assert!(
                m.rooms.iter().any(|r| r.kind == Some(*k)),
                "{}: {k:?}",
                s.name
            );
        }
        for p in &m.passages {
            assert!(legend.locks.contains(&p.lock), "{}: {:?}", s.name, p.lock);
        }
        for l in &legend.locks {
            assert!(m.passages.iter().any(|p| p.lock == *l), "{}: {l:?}", s.name);
        }
        assert_eq!(legend.here, m.rooms.iter().any(|r| r.current), "{}", s.name);
        assert!(!legend.is_empty(), "{}", s.name);
    }
    // The Crypt at its fork, a room unnoticed: every run mark, and no secret room.
    let m = run_page_map(&scenarios::fixed()[0].view());
    let legend = m.legend();
    assert!(legend.visited && legend.here && legend.option && legend.unknown);
    assert!(legend.kinds.contains(&NodeKind::Fork));
    assert!(!legend.kinds.contains(&NodeKind::Secret));
    assert!(legend.locks.contains(&LockKind::PerceptionCheck));
    // Nothing drawn, nothing to explain; the designer's legend explains everything.
    assert!(MapModel::default().legend().is_empty());
    assert_eq!(LegendItems::all().kinds, NodeKind::ALL.to_vec());
    assert_eq!(LegendItems::all().locks, LockKind::ALL.to_vec());
}

/// Whether every box of `keep` is wholly inside a frame of `(w, h)` as `c` draws it.
fn all_on_screen(c: Camera, (w, h): (f64, f64), keep: &[(f64, f64, f64, f64)]) -> bool {
    keep.iter().all(|&(l, t, r, b)| {
        c.tx + l * c.s >= 0.0 && c.ty + t * c.s >= 0.0 && c.tx + r * c.s <= w && c.ty + b * c.s <= h
    })
}

/// Map frames of phones from 320 to 430 px wide, held upright, as the run page lays them out.
const PHONE_FRAMES: [(f64, f64); 5] = [
    (302.0, 260.0),
    (342.0, 300.0),
    (342.0, 380.0),
    (373.0, 330.0),
    (412.0, 420.0),
];

#[test]
fn at_the_crypts_fork_a_phone_opens_with_the_room_and_both_options_on_screen() {
    let mut c = Character::default();
    c.set_score(zonegraph_core::zone::Ability::Wis, 30);
    let noticed = scenarios::play("crypt_valdris", "crypt-found", c, &["advance", "advance"]);
    // Noticed, the Side Chapel is option 2 beside the main hall; unnoticed, the view ties no
    // room to that option, and the unknown room it leads to is kept on screen instead.
    for s in [noticed, scenarios::fixed().swap_remove(0)] {
        let m = run_page_map(&s.view());
        let here = m.rooms.iter().find(|r| r.current).expect("a current room");
        assert_eq!(here.id, "crypt_valdris.fork");
        let focus = m.focus();
        assert_eq!(focus.len(), 3, "{}", s.name);
        let beside = m
            .rooms
            .iter()
            .find(|r| r.id == "crypt_valdris.side_chapel" || r.kind.is_none())
            .expect("the side chapel, known or not");
        assert!(focus.contains(&beside.extent()), "{}", s.name);
        // Centred on the fork alone, the room beside the main hall was cut off.
        let (phone, drawing) = (PHONE_FRAMES[1], (m.width, m.height));
        let centred = Camera::centred_on(phone, drawing, (here.x, here.y));
        assert!(!all_on_screen(centred, phone, &focus), "{}", s.name);
        for frame in PHONE_FRAMES {
            let c = Camera::centred_showing(frame, drawing, (here.x, here.y), &focus);
            assert!(
                all_on_screen(c, frame, &focus),
                "{} in {frame:?}: {c:?}",
                s.name
            );
            assert!(
                c.s >= 0.6,
                "{} in {frame:?}: labels unreadable at {}",
                s.name,
                c.s
            );
        }
    }
}

#[test]
fn every_fork_opens_on_a_phone_with_all_its_options_on_screen() {
    let all = scenarios::fixed()
        .into_iter()
        .chain(scenarios::random(11, 120));
    let mut forks = 0;
    for s in all {
        let m = run_page_map(&s.view());
        let Some(here) = m.rooms.iter().find(|r| r.current) else {
            continue;
        };
        forks += usize::from(m.rooms.iter().any(|r| r.option.is_some()));
        for frame in PHONE_FRAMES {
            let c =
                Camera::centred_showing(frame, (m.width, m.height), (here.x, here.y), &m.focus());
            assert!(
                all_on_screen(c, frame, &m.focus()),
                "{} in {frame:?}",
                s.name
            );
        }
    }
    assert!(forks >= 5, "only {forks} plays stopped at a fork");
}
