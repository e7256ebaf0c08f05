//! Order within each row: crossing minimisation over the proper layered graph.
//!
//! Every passage longer than one row gets a waypoint ("dummy") in each row it passes, so
//! every drawn segment joins two adjacent rows and two segments cross exactly when their
//! ends are in opposite orders in those rows. The order is found in three steps:
//!
//! 1. the hints' lanes (or file order) as given; kept as they are when nothing crosses;
//! 2. barycenter sweeps down and up (any size, near-linear);
//! 3. exact: when crossings remain and the rows are narrow enough, dynamic programming
//!    over every order of each row (crossings only join adjacent rows, so the best orders
//!    of rows `0..=i` given row `i`'s order extend to row `i + 1`). Among the orders with
//!    the fewest crossings it takes the one nearest the hints' lanes (or the sweeps' order).

use super::rank::Adjacency;

/// Rows this wide or narrower try every order in the exact step (5! = 120 orders).
const EXACT_WIDTH: usize = 5;
/// Work (order pairs × segment terms) the exact step may spend; beyond, the sweeps stand.
const EXACT_BUDGET: usize = 4_000_000;
/// Barycenter sweeps (down and up count one each).
const SWEEPS: usize = 8;

/// The proper layered graph: rooms are items `0..rooms`, waypoints follow.
pub(super) struct Proper {
    pub rooms: usize,
    /// Row per item.
    pub layer: Vec<usize>,
    /// Items per row, in drawing order.
    pub rows: Vec<Vec<usize>>,
    /// Position of each item in its row.
    pub pos: Vec<usize>,
    /// Segments `(upper, lower)` between adjacent rows.
    pub segs: Vec<(usize, usize)>,
    pub down: Adjacency,
    pub up: Adjacency,
    /// Preferred column per item (the lane; a waypoint's is on the line between its
    /// passage's ends' lanes).
    pub want: Vec<Option<f64>>,
}

impl Proper {
    pub fn is_room(&self, v: usize) -> bool {
        v < self.rooms
    }

    fn renumber(&mut self, r: usize) {
        for (i, &v) in self.rows[r].iter().enumerate() {
            self.pos[v] = i;
        }
    }

    /// Crossings between rows `r` and `r + 1`, by counting inversions (a Fenwick tree over
    /// the lower row). Segments that share an end do not cross.
    pub fn crossings_below(&self, r: usize, bit: &mut Vec<u32>) -> u64 {
        let Some(lower) = self.rows.get(r + 1) else {
            return 0;
        };
        let w = lower.len();
        bit.clear();
        bit.resize(w + 1, 0);
        let mut total = 0u64;
        let mut inserted = 0u64;
        let mut group: Vec<usize> = Vec::new();
        for &a in &self.rows[r] {
            group.clear();
            group.extend(self.down.of(a).iter().map(|&(b, _)| self.pos[b]));
            // Strictly greater positions already inserted cross this segment.
            for &p in &group {
                let mut le = 0u64;
                let mut i = p + 1;
                while i > 0 {
                    le += u64::from(bit[i]);
                    i &= i - 1;
                }
                total += inserted - le;
            }
            for &p in &group {
                let mut i = p + 1;
                while i <= w {
                    bit[i] += 1;
                    i += i & i.wrapping_neg();
                }
                inserted += 1;
            }
        }
        total
    }

    pub fn crossings(&self) -> u64 {
        let mut bit = Vec::new();
        (0..self.rows.len())
            .map(|r| self.crossings_below(r, &mut bit))
            .sum()
    }
}

/// Builds the proper graph from rows and the passages as `(upper, lower)` room pairs (an
/// upward passage given turned over). Returns it with each passage's chain of items, top
/// to bottom.
pub(super) fn proper(
    rooms: usize,
    visible: &[bool],
    layer: &[usize],
    passages: &[Option<(usize, usize)>],
    lane: &[Option<i64>],
) -> (Proper, Vec<Vec<usize>>) {
    let mut item_layer: Vec<usize> = layer.to_vec();
    let mut want: Vec<Option<f64>> = lane.iter().map(|l| l.map(|l| l as f64)).collect();
    let mut segs = Vec::new();
    let mut chains = Vec::with_capacity(passages.len());
    for p in passages {
        let mut chain = Vec::new();
        if let Some((a, b)) = *p {
            chain.push(a);
            if a != b {
                let span = (layer[b] - layer[a]) as f64;
                for l in layer[a] + 1..layer[b] {
                    let d = item_layer.len();
                    item_layer.push(l);
                    // On the straight line between the passage's ends.
                    let t = (l - layer[a]) as f64 / span;
                    want.push(match (want[a], want[b]) {
                        (Some(p), Some(q)) => Some(p + (q - p) * t),
                        _ => None,
                    });
                    segs.push((*chain.last().unwrap_or(&a), d));
                    chain.push(d);
                }
                segs.push((*chain.last().unwrap_or(&a), b));
                chain.push(b);
            }
        }
        chains.push(chain);
    }
    let items = item_layer.len();
    let height = (0..items)
        .filter(|&v| v >= rooms || visible[v])
        .map(|v| item_layer[v] + 1)
        .max()
        .unwrap_or(0);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); height];
    for v in 0..items {
        if v >= rooms || visible[v] {
            rows[item_layer[v]].push(v);
        }
    }
    let down = Adjacency::new(items, &segs, true);
    let up = Adjacency::new(items, &segs, false);
    let mut g = Proper {
        rooms,
        layer: item_layer,
        rows,
        pos: vec![0; items],
        segs,
        down,
        up,
        want,
    };
    for r in 0..g.rows.len() {
        g.renumber(r);
    }
    (g, chains)
}

/// Orders every row to few crossings (see the module's steps). `hinted` says whether the
/// wanted columns are the designer's (then they start the order and are what the exact step
/// keeps nearest).
pub(super) fn minimise(g: &mut Proper, hinted: bool) {
    if hinted {
        for r in 0..g.rows.len() {
            let mut row = std::mem::take(&mut g.rows[r]);
            let want = &g.want;
            let rooms = g.rooms;
            crate::text::sort_by(&mut row, |&a, &b| {
                let (wa, wb) = (want[a].unwrap_or(0.0), want[b].unwrap_or(0.0));
                wa.total_cmp(&wb).then((a >= rooms).cmp(&(b >= rooms)))
            });
            g.rows[r] = row;
            g.renumber(r);
        }
    } else {
        // Waypoints start beside their upper neighbour.
        sweep(g, false);
    }
    let mut best_c = g.crossings();
    if best_c == 0 {
        return;
    }
    let mut best = g.rows.clone();
    for s in 0..SWEEPS {
        sweep(g, s % 2 == 1);
        let c = g.crossings();
        if c < best_c {
            best_c = c;
            best.clone_from(&g.rows);
        }
        if best_c == 0 {
            break;
        }
    }
    g.rows = best;
    for r in 0..g.rows.len() {
        g.renumber(r);
    }
    // With hints, an order as free of crossings may stray less from the lanes than the
    // sweeps' does.
    if best_c > 0 || hinted {
        exact(g, hinted);
    }
}

/// One barycenter sweep: each row (top down, or bottom up) sorted by the mean position of
/// its neighbours in the row before; an item without such neighbours keeps its place.
fn sweep(g: &mut Proper, upward: bool) {
    let h = g.rows.len();
    let mut keyed: Vec<(f64, usize)> = Vec::new();
    for step in 1..h {
        let r = if upward { h - 1 - step } else { step };
        keyed.clear();
        for (i, &v) in g.rows[r].iter().enumerate() {
            let adj = if upward { g.down.of(v) } else { g.up.of(v) };
            let key = if adj.is_empty() {
                i as f64
            } else {
                adj.iter().map(|&(w, _)| g.pos[w] as f64).sum::<f64>() / adj.len() as f64
            };
            keyed.push((key, v));
        }
        crate::text::sort_by(&mut keyed, |a, b| a.0.total_cmp(&b.0));
        g.rows[r].clear();
        g.rows[r].extend(keyed.iter().map(|&(_, v)| v));
        g.renumber(r);
    }
}

/// Every order of `row` (Heap's algorithm), or `row` alone when it is too wide.
fn orders(row: &[usize]) -> Vec<Vec<usize>> {
    let mut a = row.to_vec();
    let mut out = vec![a.clone()];
    if row.len() > EXACT_WIDTH {
        return out;
    }
    let mut c = vec![0usize; a.len()];
    let mut i = 0;
    while i < a.len() {
        if c[i] < i {
            a.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
            out.push(a.clone());
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    out
}

/// How far an order strays from the columns wanted (`want` per item), in hundredths of a
/// column, once placed: rooms count double, and anything left of column 0 shifts the whole
/// drawing off its lanes.
fn strays(g: &Proper, order: &[usize], want: &[f64]) -> u64 {
    let wanted: Vec<f64> = order.iter().map(|&v| want[v]).collect();
    let weight: Vec<f64> = order
        .iter()
        .map(|&v| {
            if g.is_room(v) {
                super::place::LANE_WEIGHT
            } else {
                1.0
            }
        })
        .collect();
    let x = super::place::spread(g, order, &wanted, Some(&weight));
    order
        .iter()
        .zip(&x)
        .map(|(&v, &x)| {
            let weight = if g.is_room(v) { 200.0 } else { 100.0 };
            let outside = if x < 0.0 { 1000.0 } else { 0.0 };
            ((x - want[v]).abs() * weight + outside) as u64
        })
        .sum()
}

/// The exact step: the fewest crossings over every combination of row orders (each row at
/// most [`EXACT_WIDTH`] wide tries all its orders; a wider one keeps its order), then the
/// least straying from the lanes (`hinted`) or the sweeps' order. Skipped when over
/// [`EXACT_BUDGET`].
fn exact(g: &mut Proper, hinted: bool) {
    let h = g.rows.len();
    let count = |r: usize| match g.rows[r].len() {
        k @ 0..=EXACT_WIDTH => (1..=k).product(),
        _ => 1usize,
    };
    let mut work = 0usize;
    for r in 1..h {
        let segs = g.rows[r - 1]
            .iter()
            .map(|&a| g.down.of(a).len())
            .sum::<usize>();
        let k = g.rows[r].len();
        work = work.saturating_add(count(r - 1) * (segs * segs + count(r) * k * k));
    }
    if work > EXACT_BUDGET {
        return;
    }
    let cands: Vec<Vec<Vec<usize>>> = g.rows.iter().map(|r| orders(r)).collect();
    const CROSS: u64 = 1 << 32;
    let want: Vec<f64> = (0..g.layer.len())
        .map(|v| match g.want[v] {
            Some(w) if hinted => w,
            _ => g.pos[v] as f64,
        })
        .collect();
    let stray: Vec<Vec<u64>> = cands
        .iter()
        .map(|cs| cs.iter().map(|o| strays(g, o, &want)).collect())
        .collect();
    // cost[r][j]: least cost of rows 0..=r with row r in order j; from[r][j]: row r-1's order.
    let mut cost: Vec<Vec<u64>> = vec![stray[0].clone()];
    let mut from: Vec<Vec<usize>> = vec![vec![0; cands[0].len()]];
    let mut pos = g.pos.clone();
    let mut local = vec![usize::MAX; g.layer.len()];
    for r in 1..h {
        let lower = &cands[r];
        for (i, &v) in g.rows[r].iter().enumerate() {
            local[v] = i;
        }
        let k = g.rows[r].len();
        let mut next = vec![u64::MAX; lower.len()];
        let mut prev = vec![0usize; lower.len()];
        let mut cross = vec![0u64; k * k];
        for (pi, upper) in cands[r - 1].iter().enumerate() {
            for (i, &a) in upper.iter().enumerate() {
                pos[a] = i;
            }
            // cross[x * k + y]: crossings when lower item x is left of lower item y.
            cross.iter_mut().for_each(|c| *c = 0);
            for &a in upper {
                for &(x, _) in g.down.of(a) {
                    for &b in upper {
                        if pos[b] >= pos[a] {
                            continue;
                        }
                        for &(y, _) in g.down.of(b) {
                            if x != y {
                                cross[local[x] * k + local[y]] += 1;
                            }
                        }
                    }
                }
            }
            let base = cost[r - 1][pi];
            for (qi, q) in lower.iter().enumerate() {
                let mut c = 0u64;
                for i in 0..q.len() {
                    for j in i + 1..q.len() {
                        c += cross[local[q[i]] * k + local[q[j]]];
                    }
                }
                let total = base
                    .saturating_add(c.saturating_mul(CROSS))
                    .saturating_add(stray[r][qi]);
                if total < next[qi] {
                    next[qi] = total;
                    prev[qi] = pi;
                }
            }
        }
        cost.push(next);
        from.push(prev);
    }
    let Some(last) = cost.last() else { return };
    let mut j = (0..last.len()).min_by_key(|&j| (last[j], j)).unwrap_or(0);
    for r in (0..h).rev() {
        g.rows[r].clone_from(&cands[r][j]);
        g.renumber(r);
        j = from[r][j];
    }
}
