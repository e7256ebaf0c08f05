//! The map's pointer gestures: one pointer (a finger or the mouse) pans, two pinch-zoom about
//! their midpoint, and a press that moved is a drag, so the click that follows it selects
//! nothing.
//!
//! Pure (no browser), so it is tested natively, as [`crate::camera`] is: the map component
//! ([`crate::map::MapView`]) passes each pointer event's id and position in client pixels,
//! with the camera as it is, and applies the camera it gets back.

use crate::camera::{self, Camera, Point};

/// How far a pointer travels (across plus down, in pixels) before a press becomes a drag.
const DRAG_START: f64 = 4.0;

/// The pointers on the map and what they are doing.
#[derive(Clone, Debug, Default)]
pub struct Gestures {
    /// The pointers down, by id, where they are (client pixels), in the order pressed.
    pointers: Vec<(i32, Point)>,
    /// A one-pointer drag: where it started and the camera then.
    drag: Option<(Point, Camera)>,
    /// A pinch: the fingers' spread at its start, the camera then, and their midpoint in the
    /// frame.
    pinch: Option<(f64, Camera, Point)>,
    /// The pointers moved the map since the last press.
    dragged: bool,
    /// A one-pointer drag is moving the map.
    panning: bool,
}

impl Gestures {
    /// Pointer `id` pressed at `at`; `origin` is the frame's top-left corner (client pixels)
    /// and `now` the camera as it is. A second pointer starts a pinch.
    pub fn down(&mut self, id: i32, at: Point, origin: Point, now: Camera) {
        self.pointers.retain(|q| q.0 != id);
        self.pointers.push((id, at));
        if self.pointers.len() == 2 {
            if let [(_, a), (_, b)] = self.pointers[..] {
                let mid = ((a.0 + b.0) / 2.0 - origin.0, (a.1 + b.1) / 2.0 - origin.1);
                self.pinch = Some((camera::spread(a, b), now, mid));
                self.drag = None;
                self.dragged = true;
            }
            return;
        }
        self.drag = Some((at, now));
        self.dragged = false;
    }

    /// Pointer `id` moved to `at`: the camera to show, when the gesture moves the map.
    pub fn moved(&mut self, id: i32, at: Point) -> Option<Camera> {
        if let Some(q) = self.pointers.iter_mut().find(|q| q.0 == id) {
            q.1 = at;
        }
        if let Some((d0, v0, mid)) = self.pinch {
            let [(_, a), (_, b)] = self.pointers[..] else {
                return None;
            };
            return Some(v0.scaled_about(v0.s * camera::spread(a, b) / d0, mid));
        }
        let (start, v0) = self.drag?;
        let (dx, dy) = (at.0 - start.0, at.1 - start.1);
        if !self.dragged && dx.abs() + dy.abs() < DRAG_START {
            return None;
        }
        if !self.dragged {
            self.panning = true;
        }
        self.dragged = true;
        Some(v0.panned(dx, dy))
    }

    /// Pointer `id` lifted, cancelled or gone from the frame; `now` is the camera as it is.
    /// The finger left on the map after a pinch pans on from where it is.
    pub fn up(&mut self, id: i32, now: Camera) {
        self.pointers.retain(|q| q.0 != id);
        if self.pinch.take().is_some()
            && let Some(&(_, at)) = self.pointers.first()
        {
            self.drag = Some((at, now));
            return;
        }
        self.drag = None;
        self.panning = false;
    }

    /// Whether the pointers moved the map since the last press: the click that ends a drag
    /// selects nothing.
    pub fn dragged(&self) -> bool {
        self.dragged
    }

    /// Whether a one-pointer drag is moving the map (the canvas is promoted to its own layer).
    pub fn panning(&self) -> bool {
        self.panning
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: Point = (10.0, 20.0);

    fn cam(tx: f64, ty: f64, s: f64) -> Camera {
        Camera { tx, ty, s }
    }

    #[test]
    fn a_press_that_barely_moves_is_a_click_and_one_that_moves_pans() {
        let mut g = Gestures::default();
        let c = cam(5.0, 5.0, 1.0);
        g.down(1, (100.0, 100.0), ORIGIN, c);
        assert_eq!(g.moved(1, (102.0, 101.0)), None);
        assert!(!g.dragged() && !g.panning());
        assert_eq!(g.moved(1, (130.0, 90.0)), Some(c.panned(30.0, -10.0)));
        assert!(g.dragged() && g.panning());
        // Back near the start, still a drag.
        assert_eq!(g.moved(1, (101.0, 100.0)), Some(c.panned(1.0, 0.0)));
        g.up(1, c.panned(1.0, 0.0));
        assert!(!g.panning());
        // The click that follows the drag selects nothing; the next press starts afresh.
        assert!(g.dragged());
        g.down(1, (0.0, 0.0), ORIGIN, c);
        assert!(!g.dragged());
    }

    #[test]
    fn a_pointer_that_was_not_pressed_moves_nothing() {
        let mut g = Gestures::default();
        assert_eq!(g.moved(7, (50.0, 50.0)), None);
        g.down(1, (0.0, 0.0), ORIGIN, Camera::default());
        g.up(1, Camera::default());
        assert_eq!(g.moved(1, (50.0, 50.0)), None);
    }

    #[test]
    fn two_fingers_pinch_about_their_midpoint_and_one_left_pans_on() {
        let mut g = Gestures::default();
        let c = cam(-40.0, 30.0, 0.8);
        g.down(1, (100.0, 200.0), ORIGIN, c);
        g.down(2, (160.0, 200.0), ORIGIN, c);
        assert!(g.dragged() && !g.panning());
        // Spread from 60 to 90 px: 1.5 times the scale, about the midpoint in the frame.
        let z = g.moved(2, (190.0, 200.0)).expect("a pinch zooms");
        assert_eq!(z, c.scaled_about(c.s * 90.0 / 60.0, (120.0, 180.0)));
        // One finger lifted: the other pans from where it is, with the camera as it is.
        g.up(1, z);
        assert_eq!(g.moved(2, (200.0, 210.0)), Some(z.panned(10.0, 10.0)));
        g.up(2, z);
        assert_eq!(g.moved(2, (0.0, 0.0)), None);
    }
}
