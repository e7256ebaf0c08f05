//! The SVG map component: rooms and passages from [`crate::model`], pan and zoom (the
//! camera's moves are [`crate::camera`]'s; this only measures the frame and applies them),
//! keyboard navigation, selection, the legend and SVG export.
//!
//! Every label, hint and id is put into the DOM as a text node or an attribute value, never
//! as markup: share links carry untrusted zones.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use zonegraph_core::format::{LockKind, NodeKind};

use crate::camera::{self, Camera, Window};
use crate::model::{self, BOX_H, BOX_W, Direction, MapModel, num, push_dec, push_num};
use crate::{browser, names};

/// What is selected on the map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sel {
    /// A room, by id (`?N` for a room a player does not know).
    Room(String),
    /// A passage, by its index in the file's `edges` (or in a player view's `passages`).
    Passage(usize),
}

/// Maps with more rooms than this draw only what is near the screen (see `window`).
const CULL_ROOMS: usize = 300;

/// CSS class of a lock kind.
pub fn lock_class(kind: LockKind) -> &'static str {
    match kind {
        LockKind::None => "l-none",
        LockKind::PerceptionCheck => "l-perception",
        LockKind::StatCheck => "l-stat",
        LockKind::KeyRequired => "l-key",
        LockKind::LevelMin => "l-level",
        LockKind::RegionClear => "l-region",
    }
}

/// CSS class of a room kind.
pub fn kind_class(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Entry => "k-entry",
        NodeKind::Exploration => "k-exploration",
        NodeKind::Trap => "k-trap",
        NodeKind::Elite => "k-elite",
        NodeKind::Boss => "k-boss",
        NodeKind::Harvest => "k-harvest",
        NodeKind::RestCamp => "k-rest_camp",
        NodeKind::Secret => "k-secret",
        NodeKind::Fork => "k-fork",
        NodeKind::Merge => "k-merge",
    }
}

/// CSS class of a drawn room's kind; `k-unknown` for a room a player does not know.
pub fn room_class(kind: Option<NodeKind>) -> &'static str {
    kind.map_or("k-unknown", kind_class)
}

/// `translate(x,y)` for an SVG `transform` attribute.
fn translate(x: f64, y: f64) -> String {
    let mut t = String::from("translate(");
    push_num(&mut t, x);
    t.push(',');
    push_num(&mut t, y);
    t.push(')');
    t
}

/// `0 0 w h`, whole pixels, for a `viewBox`.
pub fn view_box((w, h): (f64, f64)) -> String {
    format!("0 0 {} {}", num(w.round()), num(h.round()))
}

/// Room labels are 13 px bold from 48 px into the 184 px box, which leaves 132 px to the clip
/// edge: in [`char_em`]'s estimate (within a few per cent of the rendered width of Chromium's
/// bold sans-serif here) that is 10.2 em a line. The clip path catches the rest.
const LABEL_EM: f64 = 10.2;
/// A line of a two-line label may be this much wider than [`LABEL_EM`]; it is drawn
/// condensed to the line (class `tight`, `scaleX(.8)` in map.css). The marks layer
/// (`.marks`) lets clicks through to the rooms and passages under it; the run page's zoom
/// buttons sit on a bar under the map (run.css), where they cover no room.
const SQUEEZE: f64 = 1.25;

/// Labels up to this many characters are shown whole, on two lines where needed.
pub const LABEL_FULL_CHARS: usize = 32;

/// A character's advance in em, rounded up by class (narrow, medium, wide, capitals, other
/// ASCII, anything else): a cheap estimate of a label's width without measuring the DOM.
fn char_em(c: char) -> f64 {
    match c {
        'i' | 'l' | 'j' | 'I' | '\'' | '.' | ',' | ':' | ';' | '!' | '|' => 0.36,
        'f' | 't' | 'r' | ' ' | '(' | ')' | '-' | '’' => 0.46,
        'm' | 'w' | 'M' | 'W' => 1.0,
        'A'..='Z' => 0.78,
        c if c.is_ascii() => 0.64,
        // Accented Latin is about as wide; CJK and symbols are a full em.
        _ => 1.0,
    }
}

fn width_em(s: &str) -> f64 {
    s.chars().map(char_em).sum()
}

/// A label as drawn in its room box: one line, or two broken between words, and whether it
/// was cut (then the full label is the room's tooltip; its accessible name always is). A
/// label of up to [`LABEL_FULL_CHARS`] characters is never cut unless a single word is too
/// wide for a line; a longer one is cut after its last whole word that fits, with an
/// ellipsis, so the visible words are the start of the accessible name.
pub fn label_lines(label: &str) -> (String, Option<String>, bool) {
    if width_em(label) <= LABEL_EM {
        return (label.to_string(), None, false);
    }
    let words: Vec<&str> = label.split(' ').collect();
    let space = char_em(' ');
    // `ends[k]`: the width of the first `k` words with their spaces.
    let mut ends = vec![0.0];
    for (i, w) in words.iter().enumerate() {
        ends.push(ends[i] + width_em(w) + if i > 0 { space } else { 0.0 });
    }
    let total = ends[words.len()];
    let line = |a: usize, b: usize| words[a..b].join(" ");
    // The most even break between words, for a label short enough; lines may be condensed
    // a little.
    let mut best = (f64::MAX, 0);
    for (k, &a) in ends.iter().enumerate().take(words.len()).skip(1) {
        let widest = a.max(total - a - space);
        if widest < best.0 {
            best = (widest, k);
        }
    }
    if label.chars().count() <= LABEL_FULL_CHARS && best.0 <= LABEL_EM * SQUEEZE {
        let k = best.1;
        return (line(0, k), Some(line(k, words.len())), false);
    }
    // The longest first line of whole words that fits.
    let first = ends.iter().rposition(|&e| e <= LABEL_EM).unwrap_or(0);
    if first == 0 {
        // One word wider than a line: cut it, as one line.
        return (cut(label, LABEL_EM), None, true);
    }
    // Too long: the second line ends after its last whole word that fits, then "…".
    let start = ends[first] + space;
    let last = ends
        .iter()
        .rposition(|&e| e - start + 0.85 <= LABEL_EM)
        .unwrap_or(first);
    let line2 = if last > first {
        let mut l = line(first, last);
        l.push('…');
        l
    } else {
        cut(&line(first, words.len()), LABEL_EM)
    };
    (line(0, first), Some(line2), true)
}

/// `s` cut to `em` of estimated width, with an ellipsis.
fn cut(s: &str, em: f64) -> String {
    let mut out = String::new();
    let mut width = 0.85; // the ellipsis
    for c in s.chars() {
        width += char_em(c);
        if width > em {
            break;
        }
        out.push(c);
    }
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

/// The interactive map: draws a [`MapModel`] (the designer's, [`model::build`], or a
/// player's, [`model::build_player`]); it decides nothing about what is shown.
#[component]
pub fn MapView(
    /// What is drawn.
    #[prop(into)]
    model: Signal<Arc<MapModel>>,
    /// The zone's name ("Map of …" for screen readers).
    zone_name: String,
    /// The exported SVG file's name, without `.svg`.
    file_stem: String,
    selection: RwSignal<Option<Sel>>,
    /// Called with the menu number when a pending fork's option is clicked (playtest).
    #[prop(optional)]
    on_option: Option<Callback<usize>>,
    /// Open centred on the current room at a readable size with the legend folded (the run
    /// page), and bring the current room back on screen whenever the run moves it.
    #[prop(optional)]
    focus_current: bool,
) -> impl IntoView {
    let title = format!("Map of {zone_name}");
    let view_state = RwSignal::new(Camera::default());
    let svg_ref: NodeRef<leptos::svg::Svg> = NodeRef::new();
    // Pan and zoom move an HTML layer holding the SVG: a CSS transform the compositor
    // applies without repainting thousands of SVG elements.
    let frame_ref: NodeRef<leptos::html::Div> = NodeRef::new();
    let panning = RwSignal::new(false);
    // Drag state: pointer start, view at start, whether it moved enough to be a drag.
    let drag = StoredValue::new(None::<(f64, f64, Camera)>);
    let dragged = StoredValue::new(false);

    // The frame's size, measured when fitting or zooming and cached for the pan path, which
    // must not force a layout of thousands of elements on every frame.
    let frame_size = StoredValue::new((800.0, 600.0));
    let size = move || {
        let s = frame_ref
            .get_untracked()
            .map(|frame| {
                let r = frame.get_bounding_client_rect();
                (r.width().max(1.0), r.height().max(1.0))
            })
            .unwrap_or((800.0, 600.0));
        frame_size.set_value(s);
        s
    };
    let fit = move || {
        let m = model.get_untracked();
        view_state.set(Camera::fit(size(), (m.width, m.height)));
    };
    // First view: the run page on the current room at a readable size (or the whole map
    // when there is none); else the whole map when it is readable, or readable from its
    // start (or around the player).
    let first_view = move || {
        let frame = size();
        let m = model.get_untracked();
        let drawing = (m.width, m.height);
        let current = m.rooms.iter().find(|r| r.current).map(|r| (r.x, r.y));
        view_state.set(if focus_current {
            match current {
                Some(at) => Camera::centred_on(frame, drawing, at),
                None => Camera::fit(frame, drawing),
            }
        } else {
            let focus = current
                .or_else(|| m.rooms.first().map(|r| (r.x, r.y)))
                .unwrap_or((0.0, 0.0));
            Camera::opening(frame, drawing, focus)
        });
    };
    let zoom_at = move |factor: f64, cx: f64, cy: f64| {
        view_state.update(|v| *v = v.zoomed_at(factor, (cx, cy)));
    };
    let zoom_centre = move |factor: f64| {
        let (w, h) = size();
        zoom_at(factor, w / 2.0, h / 2.0);
    };
    // Brings a point of the drawing into view when it is outside.
    let ensure_visible = move |x: f64, y: f64| {
        let frame = size();
        if let Some(v) = view_state.get_untracked().revealing(frame, (x, y)) {
            view_state.set(v);
        }
    };

    // Fit once the element has a size, then follow selections made elsewhere
    // (diagnostics) so the selected room is on screen.
    Effect::new(move |done: Option<bool>| {
        if frame_ref.get().is_some() && done != Some(true) {
            request_animation_frame(first_view);
            return true;
        }
        done.unwrap_or(false)
    });
    Effect::new(move |_| {
        let Some(sel) = selection.get() else {
            return;
        };
        let m = model.get_untracked();
        let at = match &sel {
            Sel::Room(id) => m.rooms.iter().find(|r| &r.id == id).map(|r| (r.x, r.y)),
            Sel::Passage(i) => m.passages.iter().find(|p| p.edge == *i).and_then(|p| {
                let a = m.rooms.iter().find(|r| r.id == p.from)?;
                let b = m.rooms.iter().find(|r| r.id == p.to)?;
                Some(((a.x + b.x) / 2.0, (a.y + b.y) / 2.0))
            }),
        };
        if let Some((x, y)) = at {
            ensure_visible(x, y);
        }
    });

    // The drawing grew (the editor added a room): when all of it was in view, keep all of it
    // in view while that stays readable; else the view stays where the designer put it.
    Effect::new(move |last: Option<(f64, f64)>| {
        let dims = model.with(|m| (m.width, m.height));
        if let Some((w0, h0)) = last
            && !focus_current
            && dims != (w0, h0)
        {
            let v = view_state.get_untracked();
            if Camera::refits(frame_size.get_value(), (w0, h0), dims, v) {
                request_animation_frame(fit);
            }
        }
        dims
    });

    // The run moved on (a live update): bring the new current room on screen.
    Effect::new(move |last: Option<Option<String>>| {
        let current = model
            .get()
            .rooms
            .iter()
            .find(|r| r.current)
            .map(|r| (r.id.clone(), r.x, r.y));
        let id = current.as_ref().map(|c| c.0.clone());
        if focus_current
            && let (Some(Some(_)), Some((_, x, y))) = (&last, &current)
            && last.as_ref().and_then(Clone::clone) != id
        {
            ensure_visible(*x, *y);
        }
        id
    });

    // Wheel zoom needs a non-passive listener to keep the page from scrolling.
    Effect::new(move |_| {
        let Some(frame) = frame_ref.get() else {
            return;
        };
        let el: web_sys::Element = frame.unchecked_into();
        let target = el.clone();
        let on_wheel =
            Closure::<dyn Fn(web_sys::WheelEvent)>::new(move |e: web_sys::WheelEvent| {
                e.prevent_default();
                let r = target.get_bounding_client_rect();
                zoom_at(
                    camera::wheel_factor(e.delta_y()),
                    f64::from(e.client_x()) - r.left(),
                    f64::from(e.client_y()) - r.top(),
                );
            });
        let opts = web_sys::AddEventListenerOptions::new();
        opts.set_passive(false);
        let _ = el.add_event_listener_with_callback_and_add_event_listener_options(
            "wheel",
            on_wheel.as_ref().unchecked_ref(),
            &opts,
        );
        // The listener lives as long as the element.
        on_wheel.forget();
    });

    // Fingers (or the mouse) on the map: one pans, two pinch-zoom about their midpoint.
    let pointers = StoredValue::new(Vec::<(i32, f64, f64)>::new());
    let pinch = StoredValue::new(None::<(f64, Camera, f64, f64)>);
    let frame_origin = move || {
        frame_ref
            .get_untracked()
            .map(|f| {
                let r = f.get_bounding_client_rect();
                (r.left(), r.top())
            })
            .unwrap_or((0.0, 0.0))
    };
    let start_pinch = move || {
        let p = pointers.get_value();
        if let [a, b] = p[..] {
            let d = camera::spread((a.1, a.2), (b.1, b.2));
            let (ox, oy) = frame_origin();
            let (mx, my) = ((a.1 + b.1) / 2.0 - ox, (a.2 + b.2) / 2.0 - oy);
            pinch.set_value(Some((d, view_state.get_untracked(), mx, my)));
            drag.set_value(None);
            dragged.set_value(true);
        }
    };
    let on_pointerdown = move |e: ev::PointerEvent| {
        if e.button() != 0 {
            return;
        }
        let (x, y) = (f64::from(e.client_x()), f64::from(e.client_y()));
        pointers.update_value(|p| {
            p.retain(|q| q.0 != e.pointer_id());
            p.push((e.pointer_id(), x, y));
        });
        if pointers.with_value(Vec::len) == 2 {
            start_pinch();
            return;
        }
        drag.set_value(Some((x, y, view_state.get_untracked())));
        dragged.set_value(false);
    };
    let on_pointermove = move |e: ev::PointerEvent| {
        let (x, y) = (f64::from(e.client_x()), f64::from(e.client_y()));
        pointers.update_value(|p| {
            if let Some(q) = p.iter_mut().find(|q| q.0 == e.pointer_id()) {
                (q.1, q.2) = (x, y);
            }
        });
        if let Some((d0, v0, mx, my)) = pinch.get_value() {
            let p = pointers.get_value();
            if let [a, b] = p[..] {
                let d = camera::spread((a.1, a.2), (b.1, b.2));
                view_state.set(v0.scaled_about(v0.s * d / d0, (mx, my)));
            }
            return;
        }
        let Some((x0, y0, v0)) = drag.get_value() else {
            return;
        };
        let (dx, dy) = (x - x0, y - y0);
        if !dragged.get_value() && dx.abs() + dy.abs() < 4.0 {
            return;
        }
        if !dragged.get_value() {
            panning.set(true);
        }
        dragged.set_value(true);
        view_state.set(v0.panned(dx, dy));
    };
    let end_drag = move |e: ev::PointerEvent| {
        pointers.update_value(|p| p.retain(|q| q.0 != e.pointer_id()));
        if pinch.get_value().is_some() {
            pinch.set_value(None);
            // The finger left on the map pans on from where it is.
            if let Some(&(_, x, y)) = pointers.with_value(|p| p.first().copied()).as_ref() {
                drag.set_value(Some((x, y, view_state.get_untracked())));
                return;
            }
        }
        drag.set_value(None);
        if panning.get_untracked() {
            panning.set(false);
        }
    };

    let on_svg_key = move |e: ev::KeyboardEvent| {
        let step = 60.0;
        match e.key().as_str() {
            "+" | "=" => zoom_centre(1.25),
            "-" | "_" => zoom_centre(0.8),
            "0" => fit(),
            "ArrowLeft" => view_state.update(|v| *v = v.panned(step, 0.0)),
            "ArrowRight" => view_state.update(|v| *v = v.panned(-step, 0.0)),
            "ArrowUp" => view_state.update(|v| *v = v.panned(0.0, step)),
            "ArrowDown" => view_state.update(|v| *v = v.panned(0.0, -step)),
            "Escape" => selection.set(None),
            _ => return,
        }
        e.prevent_default();
    };

    let focus_room = move |ix: usize| {
        let Some(svg) = svg_ref.get_untracked() else {
            return;
        };
        let el: web_sys::Element = svg.unchecked_into();
        if let Ok(Some(target)) = el.query_selector(&format!("[data-ix=\"{ix}\"]"))
            && let Ok(target) = target.dyn_into::<web_sys::SvgElement>()
        {
            let _ = target.focus();
        }
    };

    // The part of the drawing that is drawn: everything for small maps (and for export),
    // else the screen plus a screen's margin around it, snapped to chunks.
    let draw_all = RwSignal::new(false);
    let window = Memo::new(move |_| {
        let m = model.get();
        if m.rooms.len() <= CULL_ROOMS || draw_all.get() {
            return None;
        }
        Some(view_state.get().window(frame_size.get_value()))
    });
    let in_window =
        move |win: Option<Window>, b: (f64, f64, f64, f64)| win.is_none_or(|w| w.touches(b));
    // Keyed by everything a room, passage or mark draws: an edit redraws only what it
    // changed (a 200-room zone re-renders one room, not 200).
    let rooms_each = move || {
        let m = model.get();
        let win = window.get();
        // Positions in the model's rooms: a room is read from the model when it is drawn.
        m.rooms
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                in_window(
                    win,
                    (
                        r.x - BOX_W / 2.0 - 30.0,
                        r.y - BOX_H / 2.0,
                        r.x + BOX_W / 2.0 + 30.0,
                        r.y + BOX_H / 2.0,
                    ),
                )
            })
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    let passages_each = move || {
        let m = model.get();
        let win = window.get();
        m.passages
            .iter()
            .enumerate()
            .filter(|(_, p)| in_window(win, p.bbox))
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    let marks_each = move || {
        let m = model.get();
        let win = window.get();
        let mut marks = Vec::new();
        for p in m.passages.iter().filter(|p| in_window(win, p.bbox)) {
            passage_marks(p, &mut marks);
        }
        for r in &m.rooms {
            let b = (
                r.x - BOX_W / 2.0,
                r.y - BOX_H / 2.0,
                r.x + BOX_W / 2.0 + 30.0,
                r.y + BOX_H / 2.0,
            );
            if in_window(win, b) {
                room_marks(r, &mut marks);
            }
        }
        // Two identical marks in one place (parallel passages with the same lock) keep
        // distinct keys by their order.
        marks.into_iter().enumerate().collect::<Vec<_>>()
    };
    // The selection ring: one element, so selecting never redraws the map.
    let selection_view = move || {
        let sel = selection.get()?;
        let m = model.get();
        Some(match sel {
            Sel::Room(id) => {
                let r = m.rooms.iter().find(|r| r.id == id)?;
                // The room box grown by 6 px on each side.
                view! {
                    <rect class="sel-ring" x=num(r.x - BOX_W / 2.0 - 6.0) y=num(r.y - BOX_H / 2.0 - 6.0)
                        width="196" height="68" rx="14"></rect>
                }
                .into_any()
            }
            Sel::Passage(i) => {
                let p = m.passages.iter().find(|p| p.edge == i)?;
                view! { <path class="sel-line" d=p.d.clone()></path> }.into_any()
            }
        })
    };

    let export = move |_| {
        // Draw every room first (large maps draw only what is near the screen).
        draw_all.set(true);
        let file_stem = file_stem.clone();
        request_animation_frame(move || {
            if let Some(svg) = svg_ref.get_untracked() {
                let el: web_sys::Element = svg.unchecked_into();
                let m = model.get_untracked();
                if let Some(text) = export_svg(&el, &m) {
                    let _ = browser::download(&format!("{file_stem}.svg"), "image/svg+xml", &text);
                }
            }
            draw_all.set(false);
        });
    };

    let transform = move || {
        let v = view_state.get();
        let mut t = String::from("transform: translate(");
        push_num(&mut t, v.tx);
        t.push_str("px,");
        push_num(&mut t, v.ty);
        t.push_str("px) scale(");
        push_dec(&mut t, v.s, 4);
        t.push(')');
        t
    };
    let dims = move || {
        let m = model.get();
        (m.width, m.height)
    };
    let svg_class = move || {
        if view_state.get().far() {
            "zg-map far"
        } else {
            "zg-map"
        }
    };

    view! {
        <div class="map-wrap">
        <div
            class="map-frame"
            node_ref=frame_ref
            on:pointerdown=on_pointerdown
            on:pointermove=on_pointermove
            on:pointerup=end_drag
            on:pointercancel=end_drag
            on:pointerleave=end_drag
        >
            <div class="map-canvas" class:panning=move || panning.get() style=transform>
            <svg
                node_ref=svg_ref
                class=svg_class
                xmlns="http://www.w3.org/2000/svg"
                width=move || num(dims().0.round())
                height=move || num(dims().1.round())
                viewBox=move || view_box(dims())
                role="group"
                aria-label=title
                tabindex="0"
                on:keydown=on_svg_key
            >
                <defs>
                    // Labels never draw past their box, whatever the font (in room coordinates).
                    <clipPath id="zg-label-clip"><rect x="-46" y="-28" width="134" height="56"></rect></clipPath>
                    <marker id="zg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse"
                        markerWidth="11" markerHeight="11" orient="auto-start-reverse">
                        <path class="arrow" d="M0,0 L10,5 L0,10 z"></path>
                    </marker>
                    <marker id="zg-arrow-walked" viewBox="0 0 10 10" refX="9" refY="5"
                        markerUnits="userSpaceOnUse" markerWidth="12" markerHeight="12"
                        orient="auto-start-reverse">
                        <path class="arrow-walked" d="M0,0 L10,5 L0,10 z"></path>
                    </marker>
                    <marker id="zg-arrow-option" viewBox="0 0 10 10" refX="9" refY="5"
                        markerUnits="userSpaceOnUse" markerWidth="12" markerHeight="12"
                        orient="auto-start-reverse">
                        <path class="arrow-option" d="M0,0 L10,5 L0,10 z"></path>
                    </marker>
                </defs>
                <rect class="map-bg" width="100%" height="100%"></rect>
                <g class="viewport">
                    <g class="passages">
                        {keyed(
                            passages_each,
                            move |i| model.with_untracked(|m| passage_key(&m.passages[*i])),
                            move |i| model.with_untracked(|m| passage_view(&m.passages[i], selection, dragged)),
                        )}
                    </g>
                    <g class="rooms">
                        {keyed(
                            rooms_each,
                            move |i| model.with_untracked(|m| room_key(&m.rooms[*i])),
                            move |i| model.with_untracked(|m| room_view(&m.rooms[i], model,
                                selection, dragged, on_option, focus_room, ensure_visible)),
                        )}
                    </g>
                    <g class="marks" aria-hidden="true">{keyed(marks_each, |(i, k)| (*i, mark_key(k)), |(_, k)| mark_view(k))}</g>
                    <g class="selection" aria-hidden="true">{selection_view}</g>
                </g>
            </svg>
            </div>
        </div>
        // Outside the frame: the run page puts the buttons on a bar under the map, where they
        // cover no room; the designer's float over the map's corner (style.css).
        <div class="map-tools" role="toolbar" aria-label="Map controls">
            <button title="Zoom in (+)" aria-label="Zoom in" on:click=move |_| zoom_centre(1.25)>"+"</button>
            <button title="Zoom out (−)" aria-label="Zoom out" on:click=move |_| zoom_centre(0.8)>"−"</button>
            <button title="Fit the map (0)" aria-label="Fit the map" on:click=move |_| fit()>"Fit"</button>
            <button title="Download the map as an SVG file" aria-label="Export SVG" on:click=export>"SVG"</button>
        </div>
        <Legend closed=focus_current/>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::{LABEL_FULL_CHARS, label_lines};

    fn lines(label: &str) -> (String, Option<String>, bool) {
        label_lines(label)
    }

    #[test]
    fn labels_take_two_lines_and_long_ones_are_cut_at_a_word() {
        let one = |s: &str| (s.to_string(), None, false);
        let two = |a: &str, b: &str| (a.to_string(), Some(b.to_string()), false);
        assert_eq!(lines("Crypt Threshold"), one("Crypt Threshold"));
        assert_eq!(lines("Valdris's Sanctum"), one("Valdris's Sanctum"));
        assert_eq!(lines("Branching Passage"), two("Branching", "Passage"));
        assert_eq!(lines("Processional Steps"), two("Processional", "Steps"));
        assert_eq!(
            lines("Mother Bristleback's Den"),
            two("Mother", "Bristleback's Den")
        );
        assert_eq!(
            lines("Crypt of the First Abbot's Guard"),
            two("Crypt of the First", "Abbot's Guard")
        );
        assert_eq!(
            lines("High Altar of the Last Pilgrimage Road"),
            (
                "High Altar of the".to_string(),
                Some("Last Pilgrimage…".to_string()),
                true
            )
        );
        assert_eq!(
            lines("WWWWWWWWWWWW"),
            ("WWWWWWWWW…".to_string(), None, true)
        );
        assert_eq!(
            lines("大广间大广间大广间大广间"),
            ("大广间大广间大广间…".to_string(), None, true)
        );
    }

    /// Every label of the shipped zones and the gallery's fixtures of up to 32 characters
    /// is drawn whole; the words drawn are always the start of the label.
    #[test]
    fn fixture_labels_up_to_32_characters_are_whole() {
        let fixtures = [
            include_str!("../../../web/fixtures/zones/gilded_processional.json"),
            include_str!("../../../web/fixtures/zones/pilgrim_road.json"),
        ];
        let texts = crate::zones::SHIPPED
            .iter()
            .map(|(_, t)| *t)
            .chain(fixtures);
        let mut long = 0;
        for text in texts {
            let (zone, _) = zonegraph_core::zone::load(text).expect("parses");
            for ix in zone.node_indices() {
                let label = zone.node(ix).label.as_str();
                let (a, b, cut) = lines(label);
                let shown = match &b {
                    Some(b) => format!("{a} {b}"),
                    None => a.clone(),
                };
                if label.chars().count() <= LABEL_FULL_CHARS {
                    assert!(!cut, "{label:?} was cut: {shown:?}");
                    assert_eq!(shown, label);
                } else {
                    long += 1;
                    assert!(cut, "{label:?}");
                    let words = shown.trim_end_matches('…');
                    assert!(label.starts_with(words), "{label:?} drawn as {shown:?}");
                }
            }
        }
        assert!(long >= 2, "the fixtures have labels over 32 characters");
    }
}

#[allow(clippy::too_many_arguments)] // one room's view needs the map's shared handles
fn room_view<F, G>(
    r: &model::RoomShape,
    model: Signal<Arc<MapModel>>,
    selection: RwSignal<Option<Sel>>,
    dragged: StoredValue<bool>,
    on_option: Option<Callback<usize>>,
    focus_room: F,
    ensure_visible: G,
) -> impl IntoView + use<F, G>
where
    F: Fn(usize) + Copy + Send + Sync + 'static,
    G: Fn(f64, f64) + Copy + Send + Sync + 'static,
{
    let mut class = format!("room {}", room_class(r.kind));
    if r.visit.is_some() {
        class.push_str(" visited");
    }
    if r.current {
        class.push_str(" current");
    }
    if r.option.is_some() {
        class.push_str(if r.option_open {
            " option open"
        } else {
            " option locked"
        });
    }
    let id = r.id.clone();
    let option = r.option.filter(|_| on_option.is_some());
    let activate = {
        let id = id.clone();
        move || {
            selection.set(Some(Sel::Room(id.clone())));
            if let (Some(n), Some(cb)) = (option, on_option) {
                cb.run(n);
            }
        }
    };
    let on_click = {
        let activate = activate.clone();
        move |_: ev::MouseEvent| {
            if dragged.get_value() {
                return;
            }
            activate();
        }
    };
    let at = r.ix;
    let on_key = move |e: ev::KeyboardEvent| {
        let dir = match e.key().as_str() {
            "ArrowUp" => Direction::Up,
            "ArrowDown" => Direction::Down,
            "ArrowLeft" => Direction::Left,
            "ArrowRight" => Direction::Right,
            "Enter" | " " => {
                e.prevent_default();
                e.stop_propagation();
                activate();
                return;
            }
            _ => return,
        };
        e.prevent_default();
        e.stop_propagation();
        // The model as it is now: this view outlives the edits that did not change its room.
        let m = model.get_untracked();
        if let Some(next) = m.room_pos(at).and_then(|pos| m.neighbour(pos, dir)) {
            let n = &m.rooms[next];
            ensure_visible(n.x, n.y);
            let ix = n.ix;
            // After the redraw that bringing it into view may cause.
            request_animation_frame(move || focus_room(ix));
        }
    };
    let glyph = model::kind_glyph(r.kind).to_string();
    let (line1, line2, cut) = label_lines(&r.label);
    // Each drawn text ends in a space: a screen reader's or axe's reading of the visible
    // words joins text nodes as they are ("Main Hall" "elite" must not read "Hallelite").
    // Two lines take the kind's place (the glyph, the tooltip and the name still say it).
    let (y1, kind) = if line2.is_some() {
        ("-3", "")
    } else {
        ("-5", r.kind.map_or("unknown", names::kind_name))
    };
    let line2 = label_text("13", line2.unwrap_or_default());
    // A cut label's full text: the tooltip (the accessible name starts with it too).
    let title = cut.then(|| view! { <title>{r.label.clone()}</title> });
    let here = r
        .current
        .then(|| view! { <path class="here-mark" d="M-98,0 l-12,-8 v16 z"></path> });
    view! {
        <g
            class=class
            transform=translate(r.x, r.y)
            tabindex="0"
            role="button"
            aria-label=r.name.clone()
            data-ix=r.ix.to_string()
            data-node=id
            on:click=on_click
            on:keydown=on_key
        >
            {title}
            // The box is BOX_W × BOX_H around the centre; glyph at 24, text at 48 from its left.
            <rect class="box" x="-92" y="-28" width="184" height="56" rx="10"></rect>
            <circle class="glyph-bg" cx="-68" cy="0" r="16"></circle>
            <text class="glyph" x="-68" y="1" text-anchor="middle" dominant-baseline="central">
                {glyph}
            </text>
            // The clip is on the group, so a condensed line is clipped at the box's edge.
            <g clip-path="url(#zg-label-clip)">{label_text(y1, line1)}{line2}</g>
            <text class="kind" x="-44" y="14">{kind}" "</text>
            {here}
        </g>
    }
}

/// Draws the items `each` gives, each by `view`, keyed by `key`: when `each` changes, only
/// the items whose key is new are drawn and only those gone are removed, so an edit to a
/// 200-room zone redraws one room, not 200 (the designer's build, feature `keyed-map`).
#[cfg(feature = "keyed-map")]
fn keyed<T, K, V>(
    each: impl Fn() -> Vec<T> + Send + Sync + 'static,
    key: impl Fn(&T) -> K + Clone + Send + Sync + 'static,
    view: impl Fn(T) -> V + Clone + Send + Sync + 'static,
) -> impl IntoView
where
    T: Send + Sync + 'static,
    K: Eq + Hash + Send + Sync + 'static,
    V: IntoView + 'static,
{
    view! { <For each=each key=key children=view/> }
}

/// The run page's build: every item drawn again when `each` changes. Its map changes once a
/// move, and the keyed list's code (about 7 KB on the wire) would not fit its 150 KB budget.
#[cfg(not(feature = "keyed-map"))]
fn keyed<T, K, V>(
    each: impl Fn() -> Vec<T> + Send + Sync + 'static,
    _key: impl Fn(&T) -> K,
    view: impl Fn(T) -> V + Clone + Send + Sync + 'static,
) -> impl IntoView
where
    V: IntoView + 'static,
{
    move || each().into_iter().map(view.clone()).collect_view()
}

/// What keys a drawn room: its node index and a hash of everything its view shows, so an
/// unchanged room keeps its elements across edits.
fn room_key(r: &model::RoomShape) -> (usize, u64) {
    let mut h = DefaultHasher::new();
    (&r.id, &r.label, r.kind.map(NodeKind::as_str), &r.name).hash(&mut h);
    (r.x.to_bits(), r.y.to_bits(), r.visit, r.current).hash(&mut h);
    (r.option, r.option_open).hash(&mut h);
    (r.ix, h.finish())
}

/// What keys a drawn passage (its marks are keyed apart, by [`mark_key`]).
fn passage_key(p: &model::PassageShape) -> (usize, u64) {
    let mut h = DefaultHasher::new();
    (&p.d, lock_class(p.lock), p.walked, p.option, &p.name).hash(&mut h);
    (p.edge, h.finish())
}

fn mark_key(k: &Mark) -> u64 {
    let mut h = DefaultHasher::new();
    (&k.class, &k.node, &k.text).hash(&mut h);
    (k.x.to_bits(), k.y.to_bits(), k.w.to_bits(), k.h.to_bits()).hash(&mut h);
    h.finish()
}

/// One line of a room's label (empty for none), condensed when it would overflow the line.
fn label_text(y: &'static str, line: String) -> impl IntoView + use<> {
    let class = if width_em(&line) > LABEL_EM {
        "label tight"
    } else {
        "label"
    };
    view! { <text class=class x="-44" y=y>{line}" "</text> }
}

fn passage_view(
    p: &model::PassageShape,
    selection: RwSignal<Option<Sel>>,
    dragged: StoredValue<bool>,
) -> impl IntoView + use<> {
    let mut class = format!("passage {}", lock_class(p.lock));
    if p.walked {
        class.push_str(" walked");
    }
    let marker = match p.option {
        Some((_, true)) => "url(#zg-arrow-option)",
        _ if p.walked => "url(#zg-arrow-walked)",
        _ => "url(#zg-arrow)",
    };
    if let Some((_, open)) = p.option {
        class.push_str(if open {
            " option open"
        } else {
            " option locked"
        });
    }
    let edge = p.edge;
    let select = move || selection.set(Some(Sel::Passage(edge)));
    let on_click = move |_: ev::MouseEvent| {
        if !dragged.get_value() {
            select();
        }
    };
    let on_key = move |e: ev::KeyboardEvent| {
        if matches!(e.key().as_str(), "Enter" | " ") {
            e.prevent_default();
            e.stop_propagation();
            select();
        }
    };
    view! {
        <g
            class=class
            tabindex="0"
            role="button"
            aria-label=p.name.clone()
            data-edge=p.edge.to_string()
            on:click=on_click
            on:keydown=on_key
        >
            <path class="hit" d=p.d.clone()></path>
            <path class="line" d=p.d.clone() marker-end=marker></path>
        </g>
    }
}

/// A mark drawn over the map but outside the buttons of rooms and passages (a visit number,
/// a fork option's number, a lock, a passage's menu number): what it says is in the
/// accessible name of its room or passage, which must contain the button's visible words in
/// order. One element type for every mark keeps the WebAssembly small.
struct Mark {
    class: String,
    /// The room it belongs to, if any.
    node: String,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    text: String,
}

/// A rounded box (a circle when square) with its text in the middle.
fn mark_view(k: Mark) -> impl IntoView + use<> {
    view! {
        <g class=k.class data-node=k.node transform=translate(k.x, k.y)>
            <rect x=num(-k.w / 2.0) y=num(-k.h / 2.0) width=num(k.w) height=num(k.h) rx=num(k.h / 2.0)></rect>
            <text text-anchor="middle" dominant-baseline="central">{k.text}</text>
        </g>
    }
}

/// The marks of a room: its visit number and fork option number.
fn room_marks(r: &model::RoomShape, out: &mut Vec<Mark>) {
    if let Some(v) = r.visit {
        out.push(Mark {
            class: "visit-badge".into(),
            node: r.id.clone(),
            x: r.x + 88.0,
            y: r.y - 24.0,
            w: 22.0,
            h: 22.0,
            text: v.to_string(),
        });
    }
    if let Some(n) = r.option {
        out.push(Mark {
            class: if r.option_open {
                "option-badge open"
            } else {
                "option-badge locked"
            }
            .into(),
            node: r.id.clone(),
            x: r.x + 108.0,
            y: r.y,
            w: 26.0,
            h: 26.0,
            text: n.to_string(),
        });
    }
}

/// The marks of a passage: its lock and its number at a fork.
fn passage_marks(p: &model::PassageShape, out: &mut Vec<Mark>) {
    if let Some((x, y, text)) = &p.mark {
        let mut class = String::from("lock-mark ");
        class.push_str(lock_class(p.lock));
        out.push(Mark {
            class,
            node: String::new(),
            x: *x,
            y: *y,
            w: 14.0 + 7.0 * text.chars().count() as f64,
            h: 20.0,
            text: text.clone(),
        });
    }
    if let Some((x, y, n)) = p.menu {
        out.push(Mark {
            class: "menu-number".into(),
            node: String::new(),
            x: x + 12.0,
            y,
            w: 16.0,
            h: 16.0,
            text: n.to_string(),
        });
    }
}

/// CSS custom properties of the themes, copied into exported files.
const THEME_VARS: &[&str] = &[
    "--map-bg",
    "--room-bg",
    "--room-fg",
    "--muted",
    "--edge",
    "--accent",
    "--option",
    "--locked",
    "--visited-bg",
    "--mark-bg",
];

/// The map as a standalone SVG document: the whole drawing, the current theme's colours and
/// the map stylesheet (`web/map.css`, read from the page) inline.
fn export_svg(svg: &web_sys::Element, m: &MapModel) -> Option<String> {
    let clone: web_sys::Element = svg.clone_node_with_deep(true).ok()?.dyn_into().ok()?;
    clone
        .set_attribute("viewBox", &view_box((m.width, m.height)))
        .ok()?;
    clone.set_attribute("width", &num(m.width.round())).ok()?;
    clone.set_attribute("height", &num(m.height.round())).ok()?;
    clone.set_attribute("class", "zg-map").ok()?;
    let mut css = String::from("svg{");
    for var in THEME_VARS {
        let v = browser::css_var(svg, var);
        if !v.is_empty() {
            css.push_str(&format!("{var}:{v};"));
        }
    }
    css.push_str("font-family:system-ui,sans-serif}");
    let doc = web_sys::window()?.document()?;
    // The map stylesheet (web/map.css) as the page loaded it, not a second copy inside the
    // WebAssembly: both pages link it, under a hashed name (`map-<hash>.css`).
    let sheets = doc.style_sheets();
    for i in 0..sheets.length() {
        let Some(sheet) = sheets
            .item(i)
            .and_then(|s| s.dyn_into::<web_sys::CssStyleSheet>().ok())
        else {
            continue;
        };
        let href = sheet.href().ok().flatten().unwrap_or_default();
        if !href.contains("/map") {
            continue;
        }
        if let Ok(rules) = sheet.css_rules() {
            for j in 0..rules.length() {
                if let Some(rule) = rules.item(j) {
                    css.push_str(&rule.css_text());
                }
            }
        }
    }
    let style = doc
        .create_element_ns(Some("http://www.w3.org/2000/svg"), "style")
        .ok()?;
    style.set_text_content(Some(&css));
    clone.prepend_with_node_1(&style).ok()?;
    Some(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n",
        clone.outer_html()
    ))
}

/// What the glyphs, colours and line styles mean.
#[component]
pub fn Legend(
    /// Start folded (the phone-sized run page, where the map needs the room).
    #[prop(optional)]
    closed: bool,
) -> impl IntoView {
    let open = RwSignal::new(!closed);
    let kinds = NodeKind::ALL
        .iter()
        .map(|&k| {
            view! {
                <li class=format!("legend-kind {}", kind_class(k))>
                    <span class="chip">{model::kind_glyph(Some(k)).to_string()}</span>
                    {names::kind_name(k)}
                </li>
            }
        })
        .collect_view();
    let locks = LockKind::ALL
        .iter()
        .map(|&l| {
            view! {
                <li class=format!("legend-lock {}", lock_class(l))>
                    <svg width="34" height="10" aria-hidden="true">
                        <path class="line" d="M2,5 L32,5"></path>
                    </svg>
                    {names::lock_name(l)}
                </li>
            }
        })
        .collect_view();
    view! {
        <aside class="legend" aria-label="Legend">
            <button class="legend-toggle" aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                "Legend"
            </button>
            <div class="legend-body" class:hidden=move || !open.get()>
                <ul class="legend-kinds">{kinds}</ul>
                <ul class="legend-locks">{locks}</ul>
                <ul class="legend-run">
                    <li><span class="chip visit">"3"</span>"visited, in order"</li>
                    <li><span class="chip here">"▶"</span>"you are here"</li>
                    <li><span class="chip opt">"1"</span>"fork option (go 1)"</li>
                    <li class="legend-kind k-unknown"><span class="chip">"?"</span>"unknown room"</li>
                </ul>
            </div>
        </aside>
    }
}
