//! The editor's map: the map component under the editor's pointer and keyboard actions —
//! drag a room to place it, drop it on another room to connect the two, shift-click to
//! select more rooms, Shift+arrow keys to move them — with the editor's rings drawn over it.

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::marks;
use super::state::State;
use crate::browser;
use crate::editor::{self, Edit};
use crate::map::{MapView, Sel};
use crate::model::{self, CELL_H, CELL_W, MapModel};

/// A room being dragged: the one under the pointer, every room that moves with it, where
/// the pointer started, the map's scale, whether it moved yet.
#[derive(Clone, Debug)]
struct RoomDrag {
    id: String,
    ids: Vec<String>,
    x0: f64,
    y0: f64,
    scale: f64,
    moved: bool,
}

/// The map of the work: `model`, named `zone_name`, exported as `file_stem.svg`.
pub(super) fn view(
    state: State,
    model: Memo<Arc<MapModel>>,
    zone_name: String,
    file_stem: String,
) -> impl IntoView {
    let selection = state.selection;
    // The rings over the map: drawn into the map's drawing after it is drawn.
    Effect::new(move |_| {
        let m = model.get();
        let marks = marks::marks(state);
        request_animation_frame(move || marks::draw(&m, &marks));
    });

    // Pointer actions on the map: drag a room to place it, drop it on another to connect.
    let drag = StoredValue::new(None::<RoomDrag>);
    let on_down = move |e: ev::PointerEvent| {
        if e.button() != 0 || e.shift_key() {
            return;
        }
        let Some(g) = room_at(e.target()) else {
            return;
        };
        let Some(id) = g.get_attribute("data-node") else {
            return;
        };
        let scale = g
            .query_selector("rect.box")
            .ok()
            .flatten()
            .map_or(1.0, |r| r.get_bounding_client_rect().width() / model::BOX_W);
        let mut ids = state.selected_rooms();
        if !ids.contains(&id) {
            ids = vec![id.clone()];
        }
        drag.set_value(Some(RoomDrag {
            id,
            ids,
            x0: f64::from(e.client_x()),
            y0: f64::from(e.client_y()),
            scale,
            moved: false,
        }));
    };
    let on_move = move |e: ev::PointerEvent| {
        let Some(mut d) = drag.get_value() else {
            return;
        };
        let (dx, dy) = (
            f64::from(e.client_x()) - d.x0,
            f64::from(e.client_y()) - d.y0,
        );
        if !d.moved && dx.abs() + dy.abs() < 4.0 {
            return;
        }
        // The map must not pan while a room is dragged.
        e.stop_propagation();
        d.moved = true;
        let (sx, sy) = (dx / d.scale, dy / d.scale);
        for id in &d.ids {
            if let Some(g) = room_element(id) {
                // Numbers by hand: f64 printing costs the page kilobytes of WebAssembly.
                let _ = g.set_attribute(
                    "style",
                    &format!(
                        "translate: {}px {}px; pointer-events: none",
                        model::num(sx),
                        model::num(sy)
                    ),
                );
                let _ = g.class_list().add_1("dragging");
            }
        }
        drag.set_value(Some(d));
    };
    let on_up = move |e: ev::PointerEvent| {
        let Some(d) = drag.get_value() else {
            return;
        };
        drag.set_value(None);
        for id in &d.ids {
            if let Some(g) = room_element(id) {
                let _ = g.remove_attribute("style");
                let _ = g.class_list().remove_1("dragging");
            }
        }
        if !d.moved {
            return;
        }
        let (x, y) = (f64::from(e.client_x()), f64::from(e.client_y()));
        let target = room_at(browser::element_at(x, y).map(Into::into))
            .and_then(|g| g.get_attribute("data-node"))
            .filter(|t| !d.ids.contains(t));
        match target {
            Some(to) => state.connect(&d.id, &to),
            None => {
                let dx = editor::cells_moved(x - d.x0, d.scale, CELL_W);
                let dy = editor::cells_moved(y - d.y0, d.scale, CELL_H);
                if (dx, dy) != (0, 0) {
                    state.edit(Edit::MoveRooms { ids: d.ids, dx, dy });
                }
            }
        }
    };
    let on_cancel = move |_: ev::PointerEvent| {
        if let Some(d) = drag.get_value() {
            for id in &d.ids {
                if let Some(g) = room_element(id) {
                    let _ = g.remove_attribute("style");
                    let _ = g.class_list().remove_1("dragging");
                }
            }
        }
        drag.set_value(None);
    };
    // Shift-click adds a room to the selection (or takes it out); a plain click selects one.
    let on_click = move |e: ev::MouseEvent| {
        let Some(id) = room_at(e.target()).and_then(|g| g.get_attribute("data-node")) else {
            return;
        };
        if !e.shift_key() {
            state.multi.set(Vec::new());
            return;
        }
        let primary = match selection.get_untracked() {
            Some(Sel::Room(p)) => Some(p),
            _ => None,
        };
        match primary {
            None => return,
            Some(p) if p == id => {}
            Some(_) => state.multi.update(|m| {
                if let Some(i) = m.iter().position(|x| *x == id) {
                    m.remove(i);
                } else {
                    m.push(id.clone());
                }
            }),
        }
        e.stop_propagation();
    };
    // Shift+arrow keys move the selected rooms; focus stays on the room.
    let on_key = move |e: ev::KeyboardEvent| {
        if !e.shift_key() || e.ctrl_key() || e.alt_key() || e.meta_key() {
            return;
        }
        let (dx, dy) = match e.key().as_str() {
            "ArrowLeft" => (-1, 0),
            "ArrowRight" => (1, 0),
            "ArrowUp" => (0, -1),
            "ArrowDown" => (0, 1),
            _ => return,
        };
        let Some(Sel::Room(id)) = selection.get_untracked() else {
            return;
        };
        e.prevent_default();
        e.stop_propagation();
        state.move_selected(dx, dy);
        request_animation_frame(move || {
            if let Some(g) =
                room_element(&id).and_then(|g| g.dyn_into::<web_sys::SvgElement>().ok())
            {
                let _ = g.focus();
            }
        });
    };

    view! {
        <div class="editor-map"
            on:pointerdown:capture=on_down
            on:pointermove:capture=on_move
            on:pointerup:capture=on_up
            on:pointercancel:capture=on_cancel
            on:click:capture=on_click
            on:keydown:capture=on_key
        >
            <MapView model=model zone_name=zone_name file_stem=file_stem selection=selection/>
        </div>
    }
}

/// The map's room element around an event target.
fn room_at(target: Option<web_sys::EventTarget>) -> Option<web_sys::Element> {
    target?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest("g.room")
        .ok()
        .flatten()
}

/// The map's element of room `id`.
fn room_element(id: &str) -> Option<web_sys::Element> {
    let doc = web_sys::window()?.document()?;
    let all = doc.query_selector_all(".editor-map g.room").ok()?;
    (0..all.length())
        .filter_map(|i| all.item(i)?.dyn_into::<web_sys::Element>().ok())
        .find(|g| g.get_attribute("data-node").as_deref() == Some(id))
}
