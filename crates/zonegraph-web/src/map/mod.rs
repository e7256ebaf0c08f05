//! The SVG map component: rooms and passages from [`crate::model`], pan and zoom (the
//! camera's moves are [`crate::camera`]'s and the pointers' gestures [`crate::gesture`]'s;
//! this only measures the frame, feeds them events and applies the camera they return),
//! keyboard navigation and selection. Beside it: `parts` (a room, a passage and their marks
//! as SVG), `label` (a room's label in its box), `legend` and `export` (the SVG file).
//!
//! Every label, hint and id is put into the DOM as a text node or an attribute value, never
//! as markup: share links carry untrusted zones.

mod export;
mod label;
mod legend;
mod parts;

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use zonegraph_core::format::{LockKind, NodeKind};

use crate::browser;
use crate::camera::{self, Camera, Window};
use crate::gesture::Gestures;
use crate::model::{BOX_H, BOX_W, LegendItems, MapModel, num, push_dec, push_num};
use export::export_svg;
pub use label::{LABEL_FULL_CHARS, label_lines};
pub use legend::Legend;
use parts::{
    keyed, mark_key, mark_view, passage_key, passage_marks, passage_view, room_key, room_marks,
    room_view,
};

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

/// The interactive map: draws a [`MapModel`] (the designer's, [`crate::model::build`], or a
/// player's, [`crate::model::build_player`]); it decides nothing about what is shown.
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
    /// The run page: open centred on the current room at a readable size, with the pending
    /// fork's options on screen too; bring them back on screen whenever the run moves; the
    /// legend explains only what the drawing uses.
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
    let gestures = StoredValue::new(Gestures::default());

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
    // First view: the run page on the current room at a readable size, with the fork's
    // options on screen (or the whole map when there is no current room); else the whole map when it is readable, or readable from its
    // start (or around the player).
    let first_view = move || {
        let frame = size();
        let m = model.get_untracked();
        let drawing = (m.width, m.height);
        let current = m.rooms.iter().find(|r| r.current).map(|r| (r.x, r.y));
        view_state.set(if focus_current {
            match current {
                Some(at) => Camera::centred_showing(frame, drawing, at, &m.focus()),
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

    // The run moved on (a live update): bring the new current room on screen, and the
    // fork's options with it.
    Effect::new(move |last: Option<Option<String>>| {
        let m = model.get();
        let current = m
            .rooms
            .iter()
            .find(|r| r.current)
            .map(|r| (r.id.clone(), r.x, r.y));
        let id = current.as_ref().map(|c| c.0.clone());
        if focus_current
            && let (Some(Some(_)), Some((_, x, y))) = (&last, &current)
            && last.as_ref().and_then(Clone::clone) != id
        {
            let frame = size();
            if let Some(v) = view_state
                .get_untracked()
                .following(frame, (*x, *y), &m.focus())
            {
                view_state.set(v);
            }
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

    // Fingers (or the mouse) on the map: one pans, two pinch-zoom about their midpoint
    // (`Gestures` decides; this feeds it the events and applies the camera it returns).
    let frame_origin = move || {
        frame_ref
            .get_untracked()
            .map(|f| {
                let r = f.get_bounding_client_rect();
                (r.left(), r.top())
            })
            .unwrap_or((0.0, 0.0))
    };
    let sync_panning = move || {
        let now = gestures.with_value(Gestures::panning);
        if panning.get_untracked() != now {
            panning.set(now);
        }
    };
    let at = |e: &ev::PointerEvent| (f64::from(e.client_x()), f64::from(e.client_y()));
    let on_pointerdown = move |e: ev::PointerEvent| {
        if e.button() != 0 {
            return;
        }
        let (origin, now) = (frame_origin(), view_state.get_untracked());
        gestures.update_value(|g| g.down(e.pointer_id(), at(&e), origin, now));
    };
    let on_pointermove = move |e: ev::PointerEvent| {
        let moved = gestures
            .try_update_value(|g| g.moved(e.pointer_id(), at(&e)))
            .flatten();
        if let Some(v) = moved {
            sync_panning();
            view_state.set(v);
        }
    };
    let end_drag = move |e: ev::PointerEvent| {
        let now = view_state.get_untracked();
        gestures.update_value(|g| g.up(e.pointer_id(), now));
        sync_panning();
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
    // The run page explains what its drawing uses; the designer's legend, everything.
    let legend = Memo::new(move |_| {
        if focus_current {
            model.with(|m| m.legend())
        } else {
            LegendItems::all()
        }
    });
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
                            move |i| model.with_untracked(|m| passage_view(&m.passages[i], selection, gestures)),
                        )}
                    </g>
                    <g class="rooms">
                        {keyed(
                            rooms_each,
                            move |i| model.with_untracked(|m| room_key(&m.rooms[*i])),
                            move |i| model.with_untracked(|m| room_view(&m.rooms[i], model,
                                selection, gestures, on_option, focus_room, ensure_visible)),
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
        <Legend items=legend/>
        </div>
    }
}
