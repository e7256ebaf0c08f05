//! The drawn map's parts: a room, a passage and the marks beside them, as SVG, and what keys
//! each so that an edit redraws only what it changed.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use zonegraph_core::format::NodeKind;

use super::label::{LABEL_EM, label_lines, width_em};
use super::{Sel, lock_class, room_class, translate};
use crate::gesture::Gestures;
use crate::model::{self, Direction, MapModel, OPTION_MARK, VISIT_MARK, num};
use crate::names;

#[allow(clippy::too_many_arguments)] // one room's view needs the map's shared handles
pub(super) fn room_view<F, G>(
    r: &model::RoomShape,
    model: Signal<Arc<MapModel>>,
    selection: RwSignal<Option<Sel>>,
    gestures: StoredValue<Gestures>,
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
            if gestures.with_value(Gestures::dragged) {
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
pub(super) fn keyed<T, K, V>(
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
pub(super) fn keyed<T, K, V>(
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
pub(super) fn room_key(r: &model::RoomShape) -> (usize, u64) {
    let mut h = DefaultHasher::new();
    (&r.id, &r.label, r.kind.map(NodeKind::as_str), &r.name).hash(&mut h);
    (r.x.to_bits(), r.y.to_bits(), r.visit, r.current).hash(&mut h);
    (r.option, r.option_open).hash(&mut h);
    (r.ix, h.finish())
}

/// What keys a drawn passage (its marks are keyed apart, by [`mark_key`]).
pub(super) fn passage_key(p: &model::PassageShape) -> (usize, u64) {
    let mut h = DefaultHasher::new();
    (&p.d, lock_class(p.lock), p.walked, p.option, &p.name).hash(&mut h);
    (p.edge, h.finish())
}

pub(super) fn mark_key(k: &Mark) -> u64 {
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

pub(super) fn passage_view(
    p: &model::PassageShape,
    selection: RwSignal<Option<Sel>>,
    gestures: StoredValue<Gestures>,
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
        if !gestures.with_value(Gestures::dragged) {
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
pub(super) struct Mark {
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
pub(super) fn mark_view(k: Mark) -> impl IntoView + use<> {
    view! {
        <g class=k.class data-node=k.node transform=translate(k.x, k.y)>
            <rect x=num(-k.w / 2.0) y=num(-k.h / 2.0) width=num(k.w) height=num(k.h) rx=num(k.h / 2.0)></rect>
            <text text-anchor="middle" dominant-baseline="central">{k.text}</text>
        </g>
    }
}

/// The marks of a room: its visit number and fork option number (where they sit is the
/// model's, so that [`model::RoomShape::extent`] knows it).
pub(super) fn room_marks(r: &model::RoomShape, out: &mut Vec<Mark>) {
    if let Some(v) = r.visit {
        let (dx, dy, d) = VISIT_MARK;
        out.push(Mark {
            class: "visit-badge".into(),
            node: r.id.clone(),
            x: r.x + dx,
            y: r.y + dy,
            w: d,
            h: d,
            text: v.to_string(),
        });
    }
    if let Some(n) = r.option {
        let (dx, dy, d) = OPTION_MARK;
        out.push(Mark {
            class: if r.option_open {
                "option-badge open"
            } else {
                "option-badge locked"
            }
            .into(),
            node: r.id.clone(),
            x: r.x + dx,
            y: r.y + dy,
            w: d,
            h: d,
            text: n.to_string(),
        });
    }
}

/// The marks of a passage: its lock and its number at a fork.
pub(super) fn passage_marks(p: &model::PassageShape, out: &mut Vec<Mark>) {
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
