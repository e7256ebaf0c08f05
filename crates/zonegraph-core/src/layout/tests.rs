//! The layout's promises, checked on the drawn polylines: no avoidable crossing (a zone with
//! a crossing-free layered drawing is drawn crossing-free), crossing-free hints kept exactly,
//! the stats' counts equal to a brute-force count, routes clear of other rooms, upward
//! passages only where a loop closes, and the same zone giving the same layout.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::zone;

/// A zone of `rows` (room counts per row) whose passages are `(row, from, to)` between row
/// `row` and the next, by position in the rows; hinted with each room's `(position, row)`
/// when `hints` (turned left to right when `across`). Rooms are listed in `file_order`, a
/// permutation of all rooms, so that the layout has to find the order itself.
fn layered_zone(
    rows: &[usize],
    passages: &[(usize, usize, usize)],
    file_order: &[usize],
    hints: bool,
    across: bool,
) -> Zone {
    let mut ids = Vec::new();
    let mut at = Vec::new();
    for (r, &w) in rows.iter().enumerate() {
        for p in 0..w {
            ids.push(format!("z.r{r}p{p}"));
            at.push((p, r));
        }
    }
    let index = |r: usize, p: usize| rows[..r].iter().sum::<usize>() + p;
    let last = ids.len() - 1;
    let nodes: Vec<Value> = file_order
        .iter()
        .map(|&i| {
            let kind = if i == 0 {
                "entry"
            } else if i == last {
                "boss"
            } else {
                "exploration"
            };
            let mut n = json!({ "node_id": ids[i], "kind": kind, "label": ids[i] });
            if i == 0 {
                n["is_entry"] = json!(true);
            }
            if hints {
                let (lane, step) = at[i];
                let (x, y) = if across { (step, lane) } else { (lane, step) };
                n["pos_x"] = json!(x);
                n["pos_y"] = json!(y);
            }
            n
        })
        .collect();
    let edges: Vec<Value> = passages
        .iter()
        .map(|&(r, a, b)| json!({ "from_node": ids[index(r, a)], "to_node": ids[index(r + 1, b)] }))
        .collect();
    let v = json!({
        "format": 1, "zone_id": "z", "name": "Z", "tier": 1, "min_level": 1, "max_level": 5,
        "allow_loops": true, "nodes": nodes, "edges": edges
    });
    zone::load(&v.to_string()).expect("test zone parses").0
}

/// Rows (the first one room wide) and passages between adjacent rows that a drawing in
/// position order shows without a crossing: each pair of rows is joined by a monotone
/// staircase of passages, so every room has a passage up and one down.
fn staircase() -> impl Strategy<Value = (Vec<usize>, Vec<(usize, usize, usize)>)> {
    (prop::collection::vec(1usize..=4, 1..30), any::<u64>()).prop_map(|(mut rows, seed)| {
        rows.insert(0, 1);
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as usize
        };
        let mut passages = Vec::new();
        for r in 0..rows.len() - 1 {
            let (a, b) = (rows[r], rows[r + 1]);
            let (mut i, mut j) = (0, 0);
            passages.push((r, 0, 0));
            while i + 1 < a || j + 1 < b {
                match next() % 3 {
                    0 if i + 1 < a => i += 1,
                    1 if j + 1 < b => j += 1,
                    _ => {
                        i = (i + 1).min(a - 1);
                        j = (j + 1).min(b - 1);
                    }
                }
                passages.push((r, i, j));
            }
        }
        (rows, passages)
    })
}

/// A permutation of `0..n` that keeps room 0 first (the entry) from a seed.
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    let mut s = seed | 1;
    for i in (2..n).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let j = 1 + (s as usize) % i;
        v.swap(i, j);
    }
    v
}

/// Proper crossings between segments of different passages, as points per pair of
/// passages; a point inside the box of a room both passages touch is where they meet.
fn brute_crossings(l: &Layout) -> u64 {
    let centre = |id: &str| {
        l.nodes
            .iter()
            .find(|n| n.id == id)
            .map(|n| [f64::from(n.col), f64::from(n.row)])
            .expect("a laid-out room")
    };
    let side = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| {
        (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    };
    let mut points: Vec<(usize, usize, i64, i64)> = Vec::new();
    for (i, e) in l.edges.iter().enumerate() {
        for (j, f) in l.edges.iter().enumerate().skip(i + 1) {
            if e.from == e.to || f.from == f.to {
                continue;
            }
            let shared: Vec<&str> = [e.from.as_str(), e.to.as_str()]
                .into_iter()
                .filter(|r| *r == f.from || *r == f.to)
                .collect();
            for s in e.points.windows(2) {
                for t in f.points.windows(2) {
                    let (d1, d2) = (side(t[0], t[1], s[0]), side(t[0], t[1], s[1]));
                    let (d3, d4) = (side(s[0], s[1], t[0]), side(s[0], s[1], t[1]));
                    let eps = 1e-12;
                    let proper = ((d1 > eps && d2 < -eps) || (d1 < -eps && d2 > eps))
                        && ((d3 > eps && d4 < -eps) || (d3 < -eps && d4 > eps));
                    if !proper {
                        continue;
                    }
                    let k = d1 / (d1 - d2);
                    let p = [
                        s[0][0] + k * (s[1][0] - s[0][0]),
                        s[0][1] + k * (s[1][1] - s[0][1]),
                    ];
                    let at_shared = shared.iter().any(|r| {
                        let c = centre(r);
                        (p[0] - c[0]).abs() <= 0.4 && (p[1] - c[1]).abs() <= 0.3
                    });
                    if !at_shared {
                        points.push((i, j, (p[0] * 1e6) as i64, (p[1] * 1e6) as i64));
                    }
                }
            }
        }
    }
    crate::text::sort_dedup(&mut points);
    points.len() as u64
}

/// Whether segment `a`–`b` passes through the box 0.4 columns and 0.3 rows either side of
/// `c` (Liang–Barsky clipping).
fn through_box(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> bool {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a[0] - (c[0] - 0.4)),
        (dx, c[0] + 0.4 - a[0]),
        (-dy, a[1] - (c[1] - 0.3)),
        (dy, c[1] + 0.3 - a[1]),
    ] {
        if p.abs() < 1e-12 {
            if q <= 0.0 {
                return false;
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    t1 - t0 > 1e-9
}

/// Every room in a distinct cell, every route from centre to centre, clear of every other
/// room's box (0.4 columns and 0.3 rows from its centre), and the stats' crossings equal to
/// the brute-force count.
fn check(zone: &Zone) -> Layout {
    let l = layout(zone);
    assert_eq!(l, layout(zone), "not deterministic");
    let mut cells: Vec<(u32, u32)> = l.nodes.iter().map(|n| (n.col, n.row)).collect();
    let n = cells.len();
    crate::text::sort_dedup(&mut cells);
    assert_eq!(cells.len(), n, "two rooms share a cell");
    assert_eq!(l.edges.len(), zone.graph.edge_count());
    for e in &l.edges {
        let cell = |id: &str| {
            let n = l
                .nodes
                .iter()
                .find(|n| n.id == id)
                .expect("a laid-out room");
            assert!(
                n.col < l.width && n.row < l.height,
                "{n:?} outside the grid"
            );
            [f64::from(n.col), f64::from(n.row)]
        };
        assert_eq!(e.points.first(), Some(&cell(&e.from)), "{e:?}");
        assert_eq!(e.points.last(), Some(&cell(&e.to)), "{e:?}");
        for s in e.points.windows(2) {
            for n in &l.nodes {
                if n.id == e.from || n.id == e.to {
                    continue;
                }
                let c = [f64::from(n.col), f64::from(n.row)];
                assert!(!through_box(s[0], s[1], c), "{e:?} crosses room {n:?}");
            }
        }
    }
    assert_eq!(l.stats.crossings, brute_crossings(&l), "{l:#?}");
    l
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A layered zone that can be drawn without a crossing is, whatever its file order.
    #[test]
    fn crossing_free_zones_are_drawn_crossing_free(
        (rows, passages) in staircase(),
        seed in any::<u64>(),
    ) {
        let n: usize = rows.iter().sum();
        let z = layered_zone(&rows, &passages, &shuffled(n, seed), false, false);
        let l = check(&z);
        prop_assert_eq!(l.mode, LayoutMode::Layered);
        prop_assert_eq!(l.stats.crossings, 0);
        prop_assert_eq!(l.stats.upward, 0);
    }

    /// Crossing-free hints are kept exactly: every room in its hinted lane and row (before
    /// any fold: the chat map's grid), nothing reported overridden.
    #[test]
    fn crossing_free_hints_are_kept(
        (rows, passages) in staircase(),
        seed in any::<u64>(),
        across in any::<bool>(),
    ) {
        let n: usize = rows.iter().sum();
        let order = shuffled(n, seed);
        let z = layered_zone(&rows, &passages, &order, true, across);
        let l = check(&z);
        prop_assert_eq!(l.mode, LayoutMode::Hints);
        prop_assert_eq!(l.stats.crossings, 0);
        prop_assert!(l.stats.overridden.is_empty(), "{:?}", l.stats.overridden);
        let g = grid(&z, &BTreeSet::new());
        let mut at = Vec::new();
        for (r, &w) in rows.iter().enumerate() {
            for p in 0..w {
                at.push((p as u32, r as u32));
            }
        }
        for (k, &i) in order.iter().enumerate() {
            prop_assert_eq!(g.cell[k], Some(at[i]));
        }
    }

    /// Any zone: the invariants of `check`, and upward passages only where a loop closes
    /// (none in a zone without a cycle).
    #[test]
    fn any_zone_keeps_the_invariants(
        n in 2usize..40,
        raw in prop::collection::vec((0usize..40, 0usize..40), 1..80),
        hinted in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let ids: Vec<String> = (0..n).map(|i| format!("z.n{i}")).collect();
        let order = shuffled(n, seed);
        let nodes: Vec<Value> = (0..n).map(|i| {
            let mut v = json!({ "node_id": ids[i], "kind": if i == 0 { "entry" } else { "exploration" }, "label": ids[i] });
            if i == 0 { v["is_entry"] = json!(true); }
            if hinted {
                v["pos_x"] = json!(order[i] % 3);
                v["pos_y"] = json!(order[i] / 3);
            }
            v
        }).collect();
        let forward = seed % 2 == 0;
        let edges: Vec<Value> = raw.iter()
            .map(|&(a, b)| (a % n, b % n))
            .filter(|&(a, b)| a != b && (!forward || a < b))
            .map(|(a, b)| json!({ "from_node": ids[a], "to_node": ids[b] }))
            .collect();
        let v = json!({
            "format": 1, "zone_id": "z", "name": "Z", "tier": 1, "min_level": 1,
            "max_level": 5, "allow_loops": true, "nodes": nodes, "edges": edges
        });
        let z = zone::load(&v.to_string()).expect("parses").0;
        let l = check(&z);
        if forward {
            prop_assert_eq!(l.stats.upward, 0);
        }
    }
}

/// A long chain with side lanes folds into bands with no crossing and nothing upward, and
/// the stats still match the polylines.
#[test]
fn long_hinted_zones_fold_cleanly() {
    for text in [
        include_str!("../../../../web/fixtures/zones/pilgrim_road.json"),
        include_str!("../../../../tests/fixtures/layout/long_procession.json"),
        include_str!("../../../../tests/fixtures/layout/circling_abbey.json"),
        include_str!("../../../../tests/fixtures/layout/glass_canal.json"),
    ] {
        let (z, _) = zone::load(text).expect("fixture parses");
        let l = check(&z);
        assert!(
            l.notes.iter().any(|n| n.contains("folded")),
            "{:?}",
            l.notes
        );
        let loops = usize::from(z.id == "circling_abbey");
        assert_eq!(l.stats.upward, loops, "{}", z.id);
    }
}

#[test]
fn shipped_zones_draw_without_crossings() {
    for text in [
        include_str!("../../../../zones/cinder_spire.json"),
        include_str!("../../../../zones/crypt_valdris.json"),
        include_str!("../../../../zones/drowned_belfry.json"),
        include_str!("../../../../zones/mossback_warren.json"),
        include_str!("../../../../zones/orrery_vault.json"),
        include_str!("../../../../zones/starfall_caldera.json"),
        include_str!("../../../../zones/sunless_deep.json"),
    ] {
        let (z, _) = zone::load(text).expect("zone parses");
        assert_eq!(check(&z).stats.crossings, 0, "{}", z.id);
    }
}

/// Hints that cross are reordered, and each moved room says why.
#[test]
fn crossing_hints_are_overridden_with_a_reason() {
    let text = include_str!("../../../../tests/fixtures/layout/braided_fens.json");
    let (z, _) = zone::load(text).expect("fixture parses");
    let l = check(&z);
    assert_eq!(l.stats.crossings, 0);
    assert!(!l.stats.overridden.is_empty());
    assert_eq!(l.stats.overridden.len(), l.stats.overridden_total);
    assert!(
        l.stats
            .overridden
            .iter()
            .all(|o| o.why.contains("do not cross") || o.why.contains("running past")),
        "{:?}",
        l.stats.overridden
    );
}

/// The chat map's grid is the layout's placement: where the layout does not fold, every
/// room sits in the same cell in both.
#[test]
fn the_chat_map_shares_the_placement() {
    for text in [
        include_str!("../../../../zones/crypt_valdris.json"),
        include_str!("../../../../zones/drowned_belfry.json"),
        include_str!("../../../../zones/mossback_warren.json"),
        include_str!("../../../../zones/orrery_vault.json"),
    ] {
        let (z, _) = zone::load(text).expect("zone parses");
        let l = layout(&z);
        assert!(!l.notes.iter().any(|n| n.contains("folded")), "{}", z.id);
        let g = grid(&z, &BTreeSet::new());
        for (i, n) in l.nodes.iter().enumerate() {
            assert_eq!(g.cell[i], Some((n.col, n.row)), "{}", n.id);
        }
    }
}
