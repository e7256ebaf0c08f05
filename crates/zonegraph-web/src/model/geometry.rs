//! Polyline geometry of a routed passage: trimmed to the room boxes, drawn with rounded
//! corners, and where its marks go.

use super::numbers::push_num;
use super::{BOX_H, BOX_W};

/// Corner radius of routed passages.
const CORNER: f64 = 10.0;

/// Shortens the first and last segments so the line starts and ends at the room boxes.
pub(super) fn trim(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = pts.to_vec();
    if out.len() < 2 {
        return out;
    }
    let cut = |from: (f64, f64), towards: (f64, f64)| {
        let (dx, dy) = (towards.0 - from.0, towards.1 - from.1);
        if dx.abs() > dy.abs() {
            (from.0 + dx.signum() * BOX_W / 2.0, from.1)
        } else {
            (from.0, from.1 + dy.signum() * BOX_H / 2.0)
        }
    };
    let n = out.len();
    out[0] = cut(pts[0], pts[1]);
    out[n - 1] = cut(pts[n - 1], pts[n - 2]);
    out
}

/// Polyline with rounded corners (quadratic curves), as SVG path data.
pub(super) fn rounded_path(pts: &[(f64, f64)]) -> String {
    let mut d = String::new();
    let Some(&(x0, y0)) = pts.first() else {
        return d;
    };
    let point = |d: &mut String, cmd: char, (x, y): (f64, f64)| {
        d.push(cmd);
        push_num(d, x);
        d.push(',');
        push_num(d, y);
    };
    point(&mut d, 'M', (x0, y0));
    for i in 1..pts.len() {
        let p = pts[i];
        if i + 1 < pts.len() {
            let (a, b) = (pts[i - 1], pts[i + 1]);
            let len_in = dist(a, p);
            let len_out = dist(p, b);
            let r = CORNER.min(len_in / 2.0).min(len_out / 2.0);
            if r > 0.5 {
                point(&mut d, 'L', towards(p, a, r));
                point(&mut d, 'Q', p);
                point(&mut d, ' ', towards(p, b, r));
                continue;
            }
        }
        point(&mut d, 'L', p);
    }
    d
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt()
}

/// The point `r` from `p` towards `q`.
fn towards(p: (f64, f64), q: (f64, f64), r: f64) -> (f64, f64) {
    let l = dist(p, q);
    if l == 0.0 {
        return p;
    }
    (p.0 + (q.0 - p.0) * r / l, p.1 + (q.1 - p.1) * r / l)
}

fn longest_segment_mid(pts: &[(f64, f64)]) -> Option<(f64, f64)> {
    pts.windows(2)
        .max_by(|a, b| dist(a[0], a[1]).total_cmp(&dist(b[0], b[1])))
        .map(|w| ((w[0].0 + w[1].0) / 2.0, (w[0].1 + w[1].1) / 2.0))
}

/// Where a passage's lock mark goes: the middle of its longest segment, unless `covers` says
/// a mark there would sit on a room; then the first clear spot among the middle and quarter
/// points of its segments, longest first (short stubs near a room are often shared with
/// other passages); the middle of the longest when nothing is clear.
pub(super) fn mark_spot(
    pts: &[(f64, f64)],
    covers: impl Fn(f64, f64) -> bool,
) -> Option<(f64, f64)> {
    let first = longest_segment_mid(pts)?;
    if !covers(first.0, first.1) {
        return Some(first);
    }
    let mut segments: Vec<((f64, f64), (f64, f64))> =
        pts.windows(2).map(|w| (w[0], w[1])).collect();
    zonegraph_core::text::sort_by(&mut segments, |a, b| {
        dist(b.0, b.1).total_cmp(&dist(a.0, a.1))
    });
    segments
        .iter()
        .flat_map(|&(a, b)| {
            [0.5, 0.25, 0.75].map(|t| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t))
        })
        .find(|&(x, y)| !covers(x, y))
        .or(Some(first))
}

/// A point `back` pixels before the end of the line (on its last segment).
pub(super) fn point_before_end(pts: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = pts.len();
    (n >= 2).then(|| {
        let (a, b) = (pts[n - 2], pts[n - 1]);
        let back = (dist(a, b) / 2.0).min(18.0);
        towards(b, a, back)
    })
}
