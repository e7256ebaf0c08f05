//! The map's camera: where the drawing sits in its frame (a translation in screen pixels and
//! a scale), and every move of it — fit, centre on a point, the first view of a map, zoom
//! about a point, pan, bring a point or a few rooms into view, refit a drawing that grew —
//! and the part of the drawing near the screen that a large map draws.
//!
//! Pure (no browser), so it is tested natively: the map component ([`crate::map::MapView`])
//! only measures its frame, calls these and applies the camera they return. Sizes and points
//! are `(x, y)` pairs: a frame's or drawing's width and height in pixels, a point of the
//! drawing in drawing pixels, a point of the frame in screen pixels.

/// The smallest scale a zoom reaches.
pub const MIN_SCALE: f64 = 0.03;
/// The smallest scale the run page opens at around the current room (labels readable on a
/// phone).
pub const FOCUS_SCALE: f64 = 0.75;
/// The largest scale a zoom reaches.
pub const MAX_SCALE: f64 = 3.0;
/// Below this scale labels fade out (they would be unreadable).
pub const LABEL_SCALE: f64 = 0.42;
/// The smallest scale a map opens at: 13 px labels at least 8 px tall (8.06). A map that does
/// not fit at this scale opens at it, showing its start (the core's layout folds long zones
/// so that most of them fit).
pub const READABLE_SCALE: f64 = 0.62;
/// The drawn window snaps to squares of this many pixels of the drawing, so panning
/// redraws only when it crosses one.
pub const CHUNK: f64 = 600.0;
/// The largest scale a fit reaches (small maps are not blown up).
const FIT_MAX_SCALE: f64 = 1.25;
/// How close to the frame's edge a point may be and still count as in view.
const VISIBLE_MARGIN: f64 = 60.0;
/// Space kept between the frame's edge and rooms brought into view together.
const KEEP_MARGIN: f64 = 8.0;

/// A width and height, in pixels.
pub type Size = (f64, f64);
/// A point, in pixels.
pub type Point = (f64, f64);
/// A box of the drawing: `(left, top, right, bottom)`, in pixels.
pub type Rect = (f64, f64, f64, f64);

/// Pan and zoom: the drawing's origin at `(tx, ty)` on the screen, drawn `s` times its size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub tx: f64,
    pub ty: f64,
    pub s: f64,
}

impl Default for Camera {
    /// The drawing at its own size, its origin in the frame's corner.
    fn default() -> Self {
        Camera {
            tx: 0.0,
            ty: 0.0,
            s: 1.0,
        }
    }
}

/// The part of the drawing near the screen, in chunks of [`CHUNK`] pixels: `x0..=x1` and
/// `y0..=y1` (chunk `n` covers `n * CHUNK` to `(n + 1) * CHUNK`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub x0: i64,
    pub y0: i64,
    pub x1: i64,
    pub y1: i64,
}

impl Window {
    /// Whether the box `(left, top, right, bottom)` of the drawing touches the window.
    pub fn touches(self, b: (f64, f64, f64, f64)) -> bool {
        let c = |v: i64| v as f64 * CHUNK;
        b.2 >= c(self.x0) && b.0 <= c(self.x1) && b.3 >= c(self.y0) && b.1 <= c(self.y1)
    }
}

impl Camera {
    /// The whole drawing, centred in the frame, at most [`FIT_MAX_SCALE`] and at least
    /// [`MIN_SCALE`].
    pub fn fit((w, h): Size, (dw, dh): Size) -> Camera {
        let s = (w / dw).min(h / dh).clamp(MIN_SCALE, FIT_MAX_SCALE);
        Camera {
            tx: (w - dw * s) / 2.0,
            ty: (h - dh * s) / 2.0,
            s,
        }
    }

    /// `at` in the middle of the frame, at the scale that fits the drawing held between
    /// [`FOCUS_SCALE`] and 1 (the run page, on the current room).
    pub fn centred_on((w, h): Size, (dw, dh): Size, at: Point) -> Camera {
        let s = (w / dw).min(h / dh).clamp(FOCUS_SCALE, 1.0);
        Camera {
            tx: w / 2.0 - at.0 * s,
            ty: h / 2.0 - at.1 * s,
            s,
        }
    }

    /// The run page's first view: `at` (the current room) in the middle, as
    /// [`Camera::centred_on`], unless part of a box of `keep` (the current room and the
    /// pending fork's options, with their marks) would be off screen; then as
    /// [`Camera::showing`] brings them all into view.
    pub fn centred_showing(frame: Size, drawing: Size, at: Point, keep: &[Rect]) -> Camera {
        let c = Camera::centred_on(frame, drawing, at);
        c.showing(frame, keep).unwrap_or(c)
    }

    /// After the run moved: the current room `at` brought into view as [`Camera::revealing`]
    /// does, and every box of `keep` (the current room and the pending fork's options) with
    /// it as [`Camera::showing`] does; `None` when all of them are in view already.
    pub fn following(self, frame: Size, at: Point, keep: &[Rect]) -> Option<Camera> {
        let moved = self.revealing(frame, at);
        moved.unwrap_or(self).showing(frame, keep).or(moved)
    }

    /// Every box of `keep` in view, or `None` when they all are (at least [`KEEP_MARGIN`]
    /// from the frame's edges): their union centred in the frame, at this scale or, when
    /// they do not fit at it, at the scale that fits them (never below [`MIN_SCALE`]).
    pub fn showing(self, (w, h): Size, keep: &[Rect]) -> Option<Camera> {
        let m = KEEP_MARGIN;
        let on_screen = |&(l, t, r, b): &Rect| {
            self.tx + l * self.s >= m - 0.5
                && self.ty + t * self.s >= m - 0.5
                && self.tx + r * self.s <= w - m + 0.5
                && self.ty + b * self.s <= h - m + 0.5
        };
        if keep.iter().all(on_screen) {
            return None;
        }
        let (l, t, r, b) = keep.iter().fold(
            (f64::MAX, f64::MAX, f64::MIN, f64::MIN),
            |(l, t, r, b), k| (l.min(k.0), t.min(k.1), r.max(k.2), b.max(k.3)),
        );
        let fits = ((w - 2.0 * m) / (r - l).max(1.0)).min((h - 2.0 * m) / (b - t).max(1.0));
        let s = self.s.min(fits).max(MIN_SCALE);
        Some(Camera {
            tx: w / 2.0 - (l + r) / 2.0 * s,
            ty: h / 2.0 - (t + b) / 2.0 * s,
            s,
        })
    }

    /// A map's first view: the whole drawing when it is readable ([`Camera::fit`]), else at
    /// [`READABLE_SCALE`] around `focus` (half across, a third down), never past the
    /// drawing's edges by more than a small margin; an axis that fits is centred.
    pub fn opening((w, h): Size, (dw, dh): Size, focus: Point) -> Camera {
        let s_fit = (w / dw).min(h / dh).min(FIT_MAX_SCALE);
        if s_fit >= READABLE_SCALE {
            return Camera::fit((w, h), (dw, dh));
        }
        let s = READABLE_SCALE;
        let place = |frame: f64, size: f64, at: f64, share: f64| {
            if size * s <= frame {
                (frame - size * s) / 2.0
            } else {
                (frame * share - at * s)
                    .min(8.0)
                    .max(frame - size * s - 8.0)
            }
        };
        Camera {
            tx: place(w, dw, focus.0, 0.5),
            ty: place(h, dh, focus.1, 1.0 / 3.0),
            s,
        }
    }

    /// Zoomed by `factor` about the frame's point `at`, which stays where it is; the scale
    /// held between [`MIN_SCALE`] and [`MAX_SCALE`].
    pub fn zoomed_at(self, factor: f64, at: Point) -> Camera {
        self.scaled_about(self.s * factor, at)
    }

    /// At scale `s` (held between [`MIN_SCALE`] and [`MAX_SCALE`]) about the frame's point
    /// `at`, which stays where it is (a pinch: the scale at its start times the fingers'
    /// spread).
    pub fn scaled_about(self, s: f64, (cx, cy): Point) -> Camera {
        let s = s.clamp(MIN_SCALE, MAX_SCALE);
        let k = s / self.s;
        Camera {
            tx: cx - (cx - self.tx) * k,
            ty: cy - (cy - self.ty) * k,
            s,
        }
    }

    /// Moved by `(dx, dy)` screen pixels.
    pub fn panned(self, dx: f64, dy: f64) -> Camera {
        Camera {
            tx: self.tx + dx,
            ty: self.ty + dy,
            s: self.s,
        }
    }

    /// The drawing's point `(x, y)` in the middle of the frame, at the same scale, when it is
    /// off screen or within [`VISIBLE_MARGIN`] of an edge; `None` when it is in view.
    pub fn revealing(self, (w, h): Size, (x, y): Point) -> Option<Camera> {
        let (sx, sy) = (self.tx + x * self.s, self.ty + y * self.s);
        let margin = VISIBLE_MARGIN;
        (sx < margin || sy < margin || sx > w - margin || sy > h - margin).then(|| Camera {
            tx: w / 2.0 - x * self.s,
            ty: h / 2.0 - y * self.s,
            s: self.s,
        })
    }

    /// Whether a drawing that grew from `before` to `after` (the editor added a room) should
    /// be fitted again: all of it was in view, not all of it is now, and a fit stays
    /// readable. Else the view stays where the designer put it.
    pub fn refits((fw, fh): Size, before: Size, after: Size, now: Camera) -> bool {
        let whole = |(w, h): Size| {
            now.tx >= -1.0
                && now.ty >= -1.0
                && now.tx + w * now.s <= fw + 1.0
                && now.ty + h * now.s <= fh + 1.0
        };
        let s_fit = (fw / after.0).min(fh / after.1);
        whole(before) && !whole(after) && s_fit >= READABLE_SCALE
    }

    /// The part of the drawing worth drawing: what the frame shows plus half a screen
    /// around it, snapped to chunks.
    pub fn window(self, (w, h): Size) -> Window {
        let (x0, y0) = (-self.tx / self.s, -self.ty / self.s);
        let (x1, y1) = ((w - self.tx) / self.s, (h - self.ty) / self.s);
        let (mx, my) = ((x1 - x0) / 2.0, (y1 - y0) / 2.0);
        let q = |a: f64| (a / CHUNK).floor() as i64;
        Window {
            x0: q(x0 - mx),
            y0: q(y0 - my),
            x1: q(x1 + mx) + 1,
            y1: q(y1 + my) + 1,
        }
    }

    /// Whether labels are too small to read at this scale (they fade out).
    pub fn far(self) -> bool {
        self.s < LABEL_SCALE
    }
}

/// The zoom factor of a wheel turn of `delta_y` pixels (up zooms in), at most 2× a turn.
pub fn wheel_factor(delta_y: f64) -> f64 {
    (-delta_y * 0.0015).exp().clamp(0.5, 2.0)
}

/// The distance between two fingers, at least 1 pixel (a pinch divides by it).
pub fn spread(a: Point, b: Point) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt().max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: Size = (800.0, 600.0);

    /// Where the camera draws the drawing's point `p` on the screen.
    fn on_screen(c: Camera, p: Point) -> Point {
        (c.tx + p.0 * c.s, c.ty + p.1 * c.s)
    }

    fn close(a: Point, b: Point) -> bool {
        (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9
    }

    #[test]
    fn a_fit_centres_the_whole_drawing_and_never_blows_a_small_one_up() {
        let c = Camera::fit(FRAME, (1600.0, 600.0));
        assert_eq!(c.s, 0.5);
        assert_eq!((c.tx, c.ty), (0.0, 150.0));
        let c = Camera::fit(FRAME, (200.0, 100.0));
        assert_eq!(c.s, FIT_MAX_SCALE);
        assert_eq!((c.tx, c.ty), (275.0, 237.5));
        assert_eq!(Camera::fit(FRAME, (1e6, 1e6)).s, MIN_SCALE);
    }

    #[test]
    fn centring_puts_the_point_in_the_middle_at_a_readable_scale() {
        for drawing in [(200.0, 100.0), (8000.0, 6000.0), (1000.0, 700.0)] {
            let c = Camera::centred_on(FRAME, drawing, (310.0, 90.0));
            assert!(close(on_screen(c, (310.0, 90.0)), (400.0, 300.0)));
            assert!((FOCUS_SCALE..=1.0).contains(&c.s), "{drawing:?}: {}", c.s);
        }
        assert_eq!(
            Camera::centred_on(FRAME, (8000.0, 6000.0), (0.0, 0.0)).s,
            FOCUS_SCALE
        );
        assert_eq!(Camera::centred_on(FRAME, (200.0, 100.0), (0.0, 0.0)).s, 1.0);
    }

    /// A phone's map frame, the Crypt's drawing, and a room's box with its marks about `at`.
    const PHONE: Size = (342.0, 330.0);
    const CRYPT: Size = (458.0, 764.0);
    fn room((x, y): Point) -> Rect {
        (x - 110.0, y - 35.0, x + 121.0, y + 28.0)
    }

    /// Whether every box of `keep` is wholly inside `frame` as `c` draws it.
    fn all_on(c: Camera, (w, h): Size, keep: &[Rect]) -> bool {
        keep.iter().all(|&(l, t, r, b)| {
            let (l, t) = on_screen(c, (l, t));
            let (r, b) = on_screen(c, (r, b));
            l >= 0.0 && t >= 0.0 && r <= w && b <= h
        })
    }

    #[test]
    fn a_fork_opens_with_the_current_room_and_every_option_on_screen() {
        let here = (116.0, 300.0);
        let keep = [room(here), room((116.0, 410.0)), room((342.0, 410.0))];
        // Centred on the current room, the option to its right is cut off.
        let centred = Camera::centred_on(PHONE, CRYPT, here);
        assert!(!all_on(centred, PHONE, &keep));
        let c = Camera::centred_showing(PHONE, CRYPT, here, &keep);
        assert!(all_on(c, PHONE, &keep), "{c:?}");
        assert!(c.s > 0.7 && c.s <= centred.s, "{}", c.s);
        // Without a fork, or with one in view, centred as before.
        assert_eq!(
            Camera::centred_showing(PHONE, CRYPT, here, &[room(here)]),
            centred
        );
        assert_eq!(
            Camera::centred_showing(FRAME, CRYPT, here, &keep),
            Camera::centred_on(FRAME, CRYPT, here)
        );
        // Options too wide for the frame at a readable scale: zoomed out until they fit.
        let wide = [room(here), room((-400.0, 410.0)), room((900.0, 410.0))];
        let c = Camera::centred_showing(PHONE, CRYPT, here, &wide);
        assert!(all_on(c, PHONE, &wide), "{c:?}");
        assert!(c.s < FOCUS_SCALE);
    }

    #[test]
    fn a_move_to_a_fork_brings_the_room_and_its_options_into_view() {
        let start = Camera::centred_on(PHONE, CRYPT, (116.0, 80.0));
        let here = (116.0, 300.0);
        let keep = [room(here), room((116.0, 410.0)), room((342.0, 410.0))];
        let moved = start.following(PHONE, here, &keep).expect("the view moves");
        assert!(all_on(moved, PHONE, &keep), "{moved:?}");
        assert_eq!(moved.following(PHONE, here, &keep), None);
        // A room without a fork: brought to the middle, as before.
        assert_eq!(
            start.following(PHONE, here, &[room(here)]),
            start.revealing(PHONE, here)
        );
    }

    #[test]
    fn a_map_opens_whole_when_readable_else_readable_from_its_focus() {
        let readable = (1000.0, 700.0);
        assert_eq!(
            Camera::opening(FRAME, readable, (0.0, 0.0)),
            Camera::fit(FRAME, readable)
        );
        // Too long to read whole: readable, the focus half across and a third down.
        let long = (4000.0, 3000.0);
        let c = Camera::opening(FRAME, long, (2000.0, 1500.0));
        assert_eq!(c.s, READABLE_SCALE);
        assert!(close(on_screen(c, (2000.0, 1500.0)), (400.0, 200.0)));
        // A focus at the start does not show the void before the drawing's edge.
        let c = Camera::opening(FRAME, long, (92.0, 28.0));
        assert_eq!((c.tx, c.ty), (8.0, 8.0));
        // Nor at its end, past the far edge.
        let c = Camera::opening(FRAME, long, (4000.0, 3000.0));
        assert!(close(
            on_screen(c, (4000.0, 3000.0)),
            (FRAME.0 - 8.0, FRAME.1 - 8.0)
        ));
        // A narrow, tall drawing: centred across, focused down.
        let c = Camera::opening(FRAME, (500.0, 5000.0), (250.0, 2000.0));
        assert_eq!(c.tx, (800.0 - 500.0 * READABLE_SCALE) / 2.0);
        assert!(close(on_screen(c, (250.0, 2000.0)), (400.0, 200.0)));
    }

    #[test]
    fn zooming_keeps_the_point_under_the_pointer_and_stops_at_the_limits() {
        let c = Camera {
            tx: -120.0,
            ty: 40.0,
            s: 0.8,
        };
        let at = (300.0, 200.0);
        let drawn = ((at.0 - c.tx) / c.s, (at.1 - c.ty) / c.s);
        let z = c.zoomed_at(1.25, at);
        assert!((z.s - 1.0).abs() < 1e-12);
        assert!(close(on_screen(z, drawn), at));
        assert_eq!(c.zoomed_at(100.0, at).s, MAX_SCALE);
        assert_eq!(c.zoomed_at(1e-6, at).s, MIN_SCALE);
        // A pinch: the scale it started at times the spread, about the fingers' midpoint.
        let p = c.scaled_about(c.s * 3.0 / 2.0, at);
        assert!(close(on_screen(p, drawn), at));
        assert_eq!(spread((0.0, 0.0), (3.0, 4.0)), 5.0);
        assert_eq!(spread((7.0, 7.0), (7.0, 7.0)), 1.0);
        assert!(wheel_factor(-100.0) > 1.0 && wheel_factor(100.0) < 1.0);
        assert_eq!((wheel_factor(-1e4), wheel_factor(1e4)), (2.0, 0.5));
    }

    #[test]
    fn panning_moves_the_drawing_by_the_pointers_travel() {
        let c = Camera {
            tx: 5.0,
            ty: -5.0,
            s: 2.0,
        };
        let p = c.panned(60.0, -30.0);
        assert_eq!(
            p,
            Camera {
                tx: 65.0,
                ty: -35.0,
                s: 2.0
            }
        );
    }

    #[test]
    fn a_point_out_of_view_is_brought_to_the_middle_and_one_in_view_stays() {
        let c = Camera::default();
        assert_eq!(c.revealing(FRAME, (400.0, 300.0)), None);
        assert_eq!(c.revealing(FRAME, (61.0, 539.0)), None);
        for off in [
            (59.0, 300.0),
            (400.0, 541.0),
            (2000.0, 300.0),
            (400.0, -10.0),
        ] {
            let r = c.revealing(FRAME, off).expect("brought into view");
            assert_eq!(r.s, c.s);
            assert!(close(on_screen(r, off), (400.0, 300.0)), "{off:?}");
        }
    }

    #[test]
    fn a_drawing_that_grew_is_refitted_only_when_it_was_all_in_view() {
        let whole = Camera::fit(FRAME, (700.0, 500.0));
        let grown = (900.0, 500.0);
        assert!(Camera::refits(FRAME, (700.0, 500.0), grown, whole));
        // Still all in view as drawn: nothing to do.
        assert!(!Camera::refits(
            FRAME,
            (700.0, 500.0),
            (700.0, 510.0),
            whole
        ));
        // Panned or zoomed in by the designer: the view stays.
        let moved = whole.zoomed_at(2.0, (400.0, 300.0));
        assert!(!Camera::refits(FRAME, (700.0, 500.0), grown, moved));
        // Too large to read whole once grown.
        assert!(!Camera::refits(
            FRAME,
            (700.0, 500.0),
            (5000.0, 500.0),
            whole
        ));
    }

    #[test]
    fn the_window_covers_the_screen_and_half_a_screen_around_it_in_chunks() {
        let c = Camera {
            tx: -1000.0,
            ty: -500.0,
            s: 0.5,
        };
        // On screen: drawing x 2000..3600, y 1000..2200; half a screen more each side.
        let w = c.window(FRAME);
        assert_eq!(
            w,
            Window {
                x0: 2,
                y0: 0,
                x1: 8,
                y1: 5
            }
        );
        assert!(w.touches((2000.0, 1000.0, 2184.0, 1056.0)));
        assert!(w.touches((1100.0, 0.0, 1200.0, 10.0)));
        assert!(!w.touches((0.0, 0.0, 1100.0, 500.0)));
        assert!(!w.touches((5000.0, 0.0, 5100.0, 50.0)));
        assert!(!c.far());
        assert!(c.zoomed_at(0.8, (0.0, 0.0)).far());
    }
}
