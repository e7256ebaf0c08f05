//! Columns: an x for every room (a whole column) and waypoint (anywhere between), in each
//! row's order, as near as the order allows to what each wants.
//!
//! A row is placed by isotonic regression (pool adjacent violators) on the wanted columns
//! less the least spacing before each item, so a row that can sit where it wants does, and
//! one that cannot is pushed apart evenly around it. With hints the rooms want their lanes
//! and a waypoint the column above it; without, passes down and up pull every item toward
//! the mean of its neighbours, which keeps passages short and long ones straight.

use super::order::Proper;

/// Least distance between two rooms, a room and a waypoint, and two waypoints.
const ROOM_GAP: f64 = 1.0;
const SIDE_GAP: f64 = 0.5;
const WAY_GAP: f64 = 0.25;

/// How much more a hinted room's lane weighs than a waypoint's wish to run straight: a lane
/// gives way only where the order leaves no room for it.
pub(super) const LANE_WEIGHT: f64 = 100.0;

fn gap(a_room: bool, b_room: bool) -> f64 {
    match (a_room, b_room) {
        (true, true) => ROOM_GAP,
        (false, false) => WAY_GAP,
        _ => SIDE_GAP,
    }
}

/// Positions for `order`'s items, nearest (weighted least squares) to `want` while keeping
/// the order and the gaps; rooms on whole columns.
pub(super) fn spread(
    g: &Proper,
    order: &[usize],
    want: &[f64],
    weight: Option<&[f64]>,
) -> Vec<f64> {
    let k = order.len();
    let mut offset = vec![0.0f64; k];
    for i in 1..k {
        offset[i] = offset[i - 1] + gap(g.is_room(order[i - 1]), g.is_room(order[i]));
    }
    // Blocks of (total weight, weighted sum, items).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(k);
    for i in 0..k {
        let w = weight.map_or(1.0, |w| w[i]);
        blocks.push((w, w * (want[i] - offset[i]), 1));
        while blocks.len() > 1 {
            let (w2, s2, n2) = blocks[blocks.len() - 1];
            let (w1, s1, n1) = blocks[blocks.len() - 2];
            if s1 * w2 <= s2 * w1 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (w1 + w2, s1 + s2, n1 + n2);
        }
    }
    let mut x = Vec::with_capacity(k);
    for &(w, s, n) in &blocks {
        let mean = if w > 0.0 { s / w } else { 0.0 };
        for _ in 0..n {
            x.push(mean + offset[x.len()]);
        }
    }
    // Rooms on whole columns, far enough apart for the waypoints between them…
    let mut last: Option<usize> = None;
    for (i, &v) in order.iter().enumerate() {
        if !g.is_room(v) {
            continue;
        }
        // Halves round down (left), so a room between two parents does not drift right.
        let mut at = (x[i] - 0.5).ceil();
        if let Some(j) = last {
            let least = x[j] + offset[i] - offset[j];
            if at < least - 1e-9 {
                at = (least - 1e-9).ceil();
            }
        }
        x[i] = at;
        last = Some(i);
    }
    // …then the waypoints kept clear of their neighbours.
    for i in 1..k {
        if !g.is_room(order[i]) {
            x[i] = x[i].max(x[i - 1] + offset[i] - offset[i - 1]);
        }
    }
    for i in (0..k.saturating_sub(1)).rev() {
        if !g.is_room(order[i]) {
            x[i] = x[i].min(x[i + 1] - (offset[i + 1] - offset[i]));
        }
    }
    x
}

/// Places every row; returns x per item (rooms on whole columns, the leftmost item at or
/// right of column 0) and the whole columns everything was shifted right to get there.
pub(super) fn columns(g: &Proper, hinted: bool) -> (Vec<f64>, f64) {
    let items = g.layer.len();
    let mut x = vec![0.0f64; items];
    for row in &g.rows {
        for (i, &v) in row.iter().enumerate() {
            x[v] = g.want[v].unwrap_or(i as f64);
        }
    }
    // (from below, from above) neighbours each pass listens to.
    let passes: &[(bool, bool, bool)] = if hinted {
        &[(true, true, false)]
    } else {
        &[
            (true, true, false),
            (false, false, true),
            (true, true, true),
            (false, true, true),
        ]
    };
    let mut want = Vec::new();
    let mut weight = Vec::new();
    for &(down, above, below) in passes {
        let h = g.rows.len();
        for step in 0..h {
            let r = if down { step } else { h - 1 - step };
            let row = &g.rows[r];
            want.clear();
            weight.clear();
            for &v in row {
                let (mut sum, mut n) = (0.0, 0usize);
                if above {
                    for &(w, _) in g.up.of(v) {
                        sum += x[w];
                        n += 1;
                    }
                }
                if below {
                    for &(w, _) in g.down.of(v) {
                        sum += x[w];
                        n += 1;
                    }
                }
                let room = g.is_room(v);
                let (wx, wt) = match (hinted && room, g.want[v]) {
                    (true, Some(lane)) => (lane, LANE_WEIGHT),
                    _ if n > 0 => (sum / n as f64, if room { 1.0 } else { 2.0 }),
                    _ => (x[v], 0.01),
                };
                want.push(wx);
                weight.push(wt);
            }
            let placed = spread(g, row, &want, Some(&weight));
            for (&v, p) in row.iter().zip(placed) {
                x[v] = p;
            }
        }
    }
    let least = (0..items)
        .filter(|&v| !g.rows.is_empty() && g.layer[v] < g.rows.len() && is_drawn(g, v))
        .map(|v| x[v])
        .fold(f64::INFINITY, f64::min);
    let shift = if least.is_finite() {
        -least.floor()
    } else {
        0.0
    };
    x.iter_mut().for_each(|x| *x += shift);
    (x, shift)
}

fn is_drawn(g: &Proper, v: usize) -> bool {
    g.rows[g.layer[v]].get(g.pos[v]) == Some(&v)
}

/// Closes up the hinted lanes: each lane's column as far left as its order and the rows
/// allow (two lanes that share a row stay at least a column apart; no lane passes another),
/// then each lane moved toward the median column of the lanes its passages lead to, within
/// those bounds. Rooms of one lane stay in one column and lanes keep their order; a lane
/// only the designer's spacing held apart from its neighbour joins its column, so branches
/// sit beside their fork, not a column further out.
pub(super) fn close_up_lanes(
    layer: &[usize],
    lane: &[Option<i64>],
    edges: &[Option<(usize, usize)>],
) -> Vec<Option<i64>> {
    let mut lanes: Vec<i64> = lane.iter().flatten().copied().collect();
    crate::text::sort(&mut lanes);
    lanes.dedup();
    let m = lanes.len();
    if m < 2 {
        return lane.to_vec();
    }
    let index = |l: i64| lanes.binary_search(&l).ok();
    // Lanes that must stay a column apart: neighbours within a row.
    let rows = layer.iter().copied().max().map_or(0, |r| r + 1);
    let mut in_row: Vec<Vec<usize>> = vec![Vec::new(); rows];
    for (v, l) in lane.iter().enumerate() {
        if let (Some(l), Some(&r)) = (l.and_then(index), layer.get(v)) {
            in_row[r].push(l);
        }
    }
    let mut apart: Vec<(usize, usize)> = Vec::new();
    for row in &mut in_row {
        crate::text::sort(row);
        row.dedup();
        apart.extend(row.windows(2).map(|w| (w[0], w[1])));
    }
    // The lanes each lane's passages lead to.
    let mut linked: Vec<Vec<usize>> = vec![Vec::new(); m];
    for &(a, b) in edges.iter().flatten() {
        if let (Some(la), Some(lb)) = (
            lane.get(a).copied().flatten().and_then(index),
            lane.get(b).copied().flatten().and_then(index),
        ) && la != lb
        {
            linked[la].push(lb);
            linked[lb].push(la);
        }
    }
    let bounds = |x: &[i64], i: usize| -> (i64, i64) {
        let mut lo = if i > 0 { x[i - 1] } else { i64::MIN };
        let mut hi = if i + 1 < m { x[i + 1] } else { i64::MAX };
        for &(a, b) in &apart {
            if b == i {
                lo = lo.max(x[a] + 1);
            }
            if a == i {
                hi = hi.min(x[b] - 1);
            }
        }
        (lo, hi)
    };
    // Packed to the left, in order…
    let mut x: Vec<i64> = vec![0; m];
    for i in 1..m {
        x[i] = bounds(&x, i).0.max(0);
    }
    // …then pulled toward the lanes they lead to (a few sweeps; medians, so it settles).
    for _ in 0..8 {
        let mut moved = false;
        for i in 0..m {
            if linked[i].is_empty() {
                continue;
            }
            let mut near: Vec<i64> = linked[i].iter().map(|&j| x[j]).collect();
            crate::text::sort(&mut near);
            let want = near[(near.len() - 1) / 2];
            let (lo, hi) = bounds(&x, i);
            let to = want.clamp(lo.max(0), hi.max(lo.max(0)));
            if to != x[i] {
                x[i] = to;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    lane.iter()
        .map(|l| l.and_then(index).map(|i| x[i]))
        .collect()
}
