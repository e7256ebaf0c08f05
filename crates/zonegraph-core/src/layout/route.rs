//! The drawing: the fold into bands and every passage's polyline.
//!
//! A tall narrow drawing is folded like a ribbon (boustrophedon): band 0 is read down, band
//! 1 beside it up, band 2 down again, each band starting on the row where the one before
//! it ends. A passage that leaves the foot of a band makes a level U-turn below it into the
//! next band's foot (or above, at the heads), nested by length, so no passage runs back up
//! the screen to the top of the next band. A band is mirrored (its lanes right to left, the
//! ribbon turned over rather than twisted) where that keeps the U-turns from crossing or
//! makes them shorter: mirrored U-turns cross exactly where the rows' orders do, so the
//! fold never adds a crossing.
//!
//! Between two adjacent rows every segment leaves its item straight down for a stub, crosses
//! the gap as one straight line, and enters the next item straight: the stub is the gap's
//! shortest (none at all where a line item to item cuts no room's box) with which no
//! segment of the gap cuts a room's box. All segments between two rows having one shape, two
//! of them cross exactly when their ends are in opposite orders, and nothing is drawn
//! through a room's box.

use super::order::Proper;

/// How far a segment's straight stub reaches from its row toward the next (in rows); a
/// room's box reaches 0.3 at most.
const STUB: f64 = 0.3;
/// Half a room's box in cells, a little more than the viewer draws it (184 × 56 px in a
/// 226 × 110 px cell, the largest of the drawings): what a straight segment keeps clear of.
const BOX_HALF_W: f64 = 0.41;
const BOX_HALF_H: f64 = 0.3;
/// The first U-turn track below the foot (above the head) of a band, and the most the
/// tracks spread over.
const TRACK: f64 = 0.38;
const TRACK_SPREAD: f64 = 0.4;

/// A drawing is folded when it has more rows than this and bands bring it nearer the
/// screen's shape.
const FOLD_ROWS: usize = 12;
/// A cell's width over its height as drawn (about 2: the viewer's 226 × 110 px, the chat
/// map's 24 characters × 3 lines), and the drawing's shape a fold aims for (a wide screen).
const CELL_ASPECT: f64 = 2.0;
const FOLD_ASPECT: f64 = 1.6;

/// How far a fold's cut may move from its even place to a row where fewer passages cross it.
const CUT_SLACK: usize = 3;

/// Where the rows and columns of the unfolded drawing are drawn.
pub(super) struct Frame {
    /// The first row of each band, then the number of rows.
    starts: Vec<usize>,
    /// Where each band's first row is drawn: a band starts on the row where the one before
    /// it ends, so every U-turn is level.
    first: Vec<usize>,
    /// Whether each band's lanes run right to left.
    mirrored: Vec<bool>,
    /// Each band's columns: the drawing's column of its left edge, and the unfolded
    /// drawing's columns it spans (`lo..=hi`). Bands are only as wide as what they hold.
    span: Vec<(usize, i64, i64)>,
    /// Rows of the drawing (the bands, each starting where the one before ends).
    pub rows: usize,
}

impl Frame {
    /// The unfolded drawing as it is.
    pub fn flat(rows: usize, cols: usize) -> Frame {
        Frame {
            starts: vec![0, rows],
            first: vec![0],
            mirrored: vec![false],
            span: vec![(0, 0, cols as i64 - 1)],
            rows,
        }
    }

    /// Columns of the whole drawing.
    pub fn width(&self) -> usize {
        self.span
            .last()
            .map_or(0, |&(left, lo, hi)| left + (hi - lo + 1) as usize)
    }

    pub fn bands(&self) -> usize {
        self.mirrored.len()
    }

    /// Folds a drawing of `cols` columns when it is tall for its width, into the number of
    /// bands that brings it closest to [`FOLD_ASPECT`]. Each cut moves up to [`CUT_SLACK`]
    /// rows to where the fewest passages cross it (less where the bands would stagger), and
    /// each band is mirrored or not so that the U-turns add no crossing and are as short as
    /// can be.
    pub fn fitted(g: &Proper, x: &[f64], cols: usize) -> Frame {
        let rows = g.rows.len();
        if rows <= FOLD_ROWS || cols == 0 {
            return Frame::flat(rows, cols);
        }
        let shape = |bands: usize| {
            let per = rows.div_ceil(bands);
            // How many times too wide or too tall (no `ln`: it would bring libm's into wasm).
            let r = (bands * cols) as f64 * CELL_ASPECT / per as f64 / FOLD_ASPECT;
            r.max(1.0 / r)
        };
        let bands = (1..=rows.div_ceil(FOLD_ROWS / 2))
            .min_by(|&a, &b| shape(a).total_cmp(&shape(b)))
            .unwrap_or(1);
        if bands < 2 {
            return Frame::flat(rows, cols);
        }
        let per = rows.div_ceil(bands);
        // The widest cut slack whose bands, each starting where the one before ends, stay
        // within a row of the even bands' height (staggered bands make the drawing taller).
        let (starts, first, height) = (0..=CUT_SLACK)
            .rev()
            .map(|slack| cuts(g, per, slack))
            .find(|c| c.2 <= per + 2)
            .unwrap_or_else(|| cuts(g, per, 0));
        let n = starts.len() - 1;
        let mut span = Vec::with_capacity(n);
        let mut left = 0;
        for b in 0..n {
            // A waypoint needs half a column beside a room, not a column of its own.
            let items = g.rows[starts[b]..starts[b + 1]].iter().flatten();
            let lo = items
                .clone()
                .map(|&v| {
                    if g.is_room(v) {
                        x[v]
                    } else {
                        (x[v] + 0.5).floor()
                    }
                })
                .fold(f64::INFINITY, f64::min) as i64;
            let hi = items
                .map(|&v| {
                    if g.is_room(v) {
                        x[v]
                    } else {
                        (x[v] - 0.5).ceil()
                    }
                })
                .fold(f64::NEG_INFINITY, f64::max) as i64;
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (0, 0) };
            span.push((left, lo, hi));
            left += (hi - lo + 1) as usize;
        }
        let mut frame = Frame {
            starts,
            first,
            mirrored: vec![false; n],
            span,
            rows: height,
        };
        // Which bands to mirror: the least (crossings, length) over the folds, by dynamic
        // programming over each band's two ways (a fold depends on its two bands alone).
        let mut best = vec![[0u64; 2]; n];
        let mut from = vec![[0usize; 2]; n];
        for b in 1..n {
            for m in 0..2 {
                best[b][m] = u64::MAX;
                for pm in 0..2 {
                    frame.mirrored[b - 1] = pm == 1;
                    frame.mirrored[b] = m == 1;
                    let total = best[b - 1][pm].saturating_add(frame.fold_cost(g, x, b));
                    if total < best[b][m] {
                        best[b][m] = total;
                        from[b][m] = pm;
                    }
                }
            }
        }
        let mut m = usize::from(best[n - 1][1] < best[n - 1][0]);
        for b in (0..n).rev() {
            frame.mirrored[b] = m == 1;
            m = from[b][m];
        }
        frame
    }

    /// The U-turns into band `b`: their crossings, then their length (in hundredths of a
    /// column), as one number.
    fn fold_cost(&self, g: &Proper, x: &[f64], b: usize) -> u64 {
        let turns = self.turns(g, x, self.starts[b] - 1);
        let length: f64 = turns.iter().map(|t| t.1 - t.0).sum();
        (crossings_of(&turns) << 40) + (length * 100.0) as u64
    }

    /// The U-turns below row `r` (a cut): `(left, right, upper item, lower item)`.
    fn turns(&self, g: &Proper, x: &[f64], r: usize) -> Vec<(f64, f64, usize, usize)> {
        let mut turns = Vec::new();
        for &a in &g.rows[r] {
            for &(b, _) in g.down.of(a) {
                let (p, q) = (self.at(r, x[a])[0], self.at(r + 1, x[b])[0]);
                turns.push((p.min(q), p.max(q), a, b));
            }
        }
        turns
    }

    fn band(&self, layer: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= layer)
            .saturating_sub(1)
            .min(self.bands() - 1)
    }

    /// `+1.0` where the band is read down, `-1.0` where up.
    fn dir(&self, layer: usize) -> f64 {
        if self.band(layer).is_multiple_of(2) {
            1.0
        } else {
            -1.0
        }
    }

    /// The drawn point of an item at `x` in row `layer`.
    pub fn at(&self, layer: usize, x: f64) -> [f64; 2] {
        let b = self.band(layer);
        let r = layer - self.starts[b];
        let (left, lo, hi) = self.span[b];
        let x = if self.mirrored[b] {
            hi as f64 - x
        } else {
            x - lo as f64
        };
        let y = if b.is_multiple_of(2) {
            self.first[b] + r
        } else {
            self.first[b] - r
        };
        [left as f64 + x, y as f64]
    }

    /// Whether rows `layer` and `layer + 1` are in different bands.
    fn folds_after(&self, layer: usize) -> bool {
        self.band(layer) != self.band(layer + 1)
    }

    /// Crossings of the drawing: inversions between adjacent rows of a band, and U-turns
    /// that overlap without nesting at the folds.
    pub fn crossings(&self, g: &Proper, x: &[f64]) -> u64 {
        let mut bit = Vec::new();
        (0..g.rows.len())
            .map(|r| {
                if r + 1 < g.rows.len() && self.folds_after(r) {
                    crossings_of(&self.turns(g, x, r))
                } else {
                    g.crossings_below(r, &mut bit)
                }
            })
            .sum()
    }
}

/// Where bands of `per` rows start when each cut may move up to `slack` rows to where the
/// fewest passages cross it (then the number of rows), the row each band's first row is
/// drawn on, and the drawing's height in rows.
fn cuts(g: &Proper, per: usize, slack: usize) -> (Vec<usize>, Vec<usize>, usize) {
    let rows = g.rows.len();
    let through = |c: usize| -> usize { g.rows[c - 1].iter().map(|&a| g.down.of(a).len()).sum() };
    let mut starts = vec![0];
    let mut k = 1;
    while k * per < rows {
        let even = k * per;
        let prev = starts[starts.len() - 1];
        let lo = even.saturating_sub(slack).max(prev + 1);
        let hi = (even + slack).min(rows - 1);
        let cut = (lo..=hi)
            .min_by_key(|&c| (through(c), c.abs_diff(even), c))
            .unwrap_or(even);
        starts.push(cut);
        k += 1;
    }
    starts.push(rows);
    let n = starts.len() - 1;
    // Band b's first row, relative to band 0's: down a band's length, up the next's.
    let mut at = vec![0i64; n];
    for b in 1..n {
        let len = (starts[b] - starts[b - 1]) as i64 - 1;
        at[b] = at[b - 1] + if b % 2 == 1 { len } else { -len };
    }
    let ends = |b: usize| {
        let len = (starts[b + 1] - starts[b]) as i64 - 1;
        let end = at[b] + if b.is_multiple_of(2) { len } else { -len };
        (at[b].min(end), at[b].max(end))
    };
    let top = (0..n).map(|b| ends(b).0).min().unwrap_or(0);
    let bottom = (0..n).map(|b| ends(b).1).max().unwrap_or(0);
    let first = at.iter().map(|&a| (a - top) as usize).collect();
    (starts, first, (bottom - top + 1) as usize)
}

/// Pairs of U-turns (over the same side of a band) that overlap without nesting; U-turns
/// that share an end meet there and do not cross.
fn crossings_of(turns: &[(f64, f64, usize, usize)]) -> u64 {
    let mut n = 0;
    for (i, s) in turns.iter().enumerate() {
        for t in &turns[i + 1..] {
            if s.2 == t.2 || s.3 == t.3 {
                continue;
            }
            let (a, b) = if s.0 <= t.0 { (s, t) } else { (t, s) };
            n += u64::from(a.0 < b.0 && b.0 < a.1 && a.1 < b.1);
        }
    }
    n
}

/// U-turn depth per segment (0 where the segment does not cross a fold): at each fold, the
/// shortest U-turn nearest the band, so nested U-turns never cross.
pub(super) fn tracks(g: &Proper, x: &[f64], frame: &Frame) -> Vec<f64> {
    let mut depth = vec![0.0; g.segs.len()];
    let mut turns: Vec<(f64, f64, usize)> = Vec::new();
    for r in 0..g.rows.len().saturating_sub(1) {
        if !frame.folds_after(r) {
            continue;
        }
        turns.clear();
        for &a in &g.rows[r] {
            for &(b, s) in g.down.of(a) {
                let (p, q) = (frame.at(r, x[a])[0], frame.at(r + 1, x[b])[0]);
                turns.push(((p - q).abs(), p.min(q), s));
            }
        }
        crate::text::sort_by(&mut turns, |a, b| {
            a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1))
        });
        let step = (TRACK_SPREAD / turns.len().max(1) as f64).min(0.12);
        for (j, &(_, _, s)) in turns.iter().enumerate() {
            depth[s] = TRACK + j as f64 * step;
        }
    }
    depth
}

/// Per row (the gap below it): how far its segments to the next row run straight out of
/// and into their items before crossing the gap as one straight line — the shortest stub
/// (none at all, item to item, where it can) with which none of them cuts a room's box
/// other than its ends'. One stub for the whole gap keeps the segments one shape.
pub(super) fn gap_stubs(g: &Proper, x: &[f64], frame: &Frame) -> Vec<f64> {
    let rows = g.rows.len();
    let mut stubs = vec![STUB; rows];
    for (r, slot) in stubs.iter_mut().enumerate().take(rows.saturating_sub(1)) {
        if frame.folds_after(r) {
            continue;
        }
        let boxes: Vec<[f64; 2]> = g.rows[r]
            .iter()
            .map(|&v| (r, v))
            .chain(g.rows[r + 1].iter().map(|&v| (r + 1, v)))
            .filter(|&(_, v)| g.is_room(v))
            .map(|(l, v)| frame.at(l, x[v]))
            .collect();
        let s = frame.dir(r);
        let clear = |stub: f64| {
            g.rows[r].iter().all(|&a| {
                g.down.of(a).iter().all(|&(b, _)| {
                    let (pa, pb) = (frame.at(r, x[a]), frame.at(r + 1, x[b]));
                    let (qa, qb) = ([pa[0], pa[1] + s * stub], [pb[0], pb[1] - s * stub]);
                    boxes.iter().filter(|c| **c != pa && **c != pb).all(|c| {
                        !cuts_box(pa, qa, *c) && !cuts_box(qa, qb, *c) && !cuts_box(qb, pb, *c)
                    })
                })
            })
        };
        if let Some(&stub) = [0.0, 0.1, 0.2].iter().find(|&&stub| clear(stub)) {
            *slot = stub;
        }
    }
    stubs
}

/// Whether segment `a`–`b` passes through the room box centred on `c`.
fn cuts_box(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> bool {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a[0] - (c[0] - BOX_HALF_W)),
        (dx, (c[0] + BOX_HALF_W) - a[0]),
        (-dy, a[1] - (c[1] - BOX_HALF_H)),
        (dy, (c[1] + BOX_HALF_H) - a[1]),
    ] {
        if p.abs() < 1e-12 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    t1 - t0 > 1e-9
}

/// The polyline through a chain of items (top to bottom), from its first item's centre to
/// its last's; `stubs` as [`gap_stubs`] gives them.
pub(super) fn polyline(
    g: &Proper,
    x: &[f64],
    frame: &Frame,
    depth: &[f64],
    stubs: &[f64],
    chain: &[usize],
) -> Vec<[f64; 2]> {
    let mut pts: Vec<[f64; 2]> = Vec::with_capacity(chain.len() * 3);
    let Some(&first) = chain.first() else {
        return pts;
    };
    pts.push(frame.at(g.layer[first], x[first]));
    for w in chain.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (la, lb) = (g.layer[a], g.layer[b]);
        let (pa, pb) = (frame.at(la, x[a]), frame.at(lb, x[b]));
        if frame.folds_after(la) {
            let t = g
                .down
                .of(a)
                .iter()
                .find(|&&(v, _)| v == b)
                .map_or(TRACK, |&(_, seg)| depth[seg]);
            // Below the band's foot, or above its head.
            let y = pa[1] + frame.dir(la) * t;
            pts.push([pa[0], y]);
            pts.push([pb[0], y]);
        } else if pa[0] != pb[0] {
            let (s, stub) = (frame.dir(la), stubs.get(la).copied().unwrap_or(STUB));
            pts.push([pa[0], pa[1] + s * stub]);
            pts.push([pb[0], pb[1] - s * stub]);
        }
        pts.push(pb);
    }
    simplify(&mut pts);
    pts
}

/// Drops repeated points and the middle of three points on one vertical or horizontal line.
fn simplify(pts: &mut Vec<[f64; 2]>) {
    pts.dedup();
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(pts.len());
    for &p in pts.iter() {
        if out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            if (a[0] == b[0] && b[0] == p[0]) || (a[1] == b[1] && b[1] == p[1]) {
                out.pop();
            }
        }
        out.push(p);
    }
    *pts = out;
}

/// A small loop on the right of a room's box, back into it.
pub(super) fn self_loop(c: [f64; 2]) -> Vec<[f64; 2]> {
    let [x, y] = c;
    vec![
        [x, y],
        [x + 0.45, y],
        [x + 0.45, y - 0.25],
        [x, y - 0.25],
        [x, y],
    ]
}
