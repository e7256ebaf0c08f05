//! The rings the editor draws over its map: the rooms selected besides the selection, and
//! each soft-lock where it is.

use leptos::prelude::*;
use zonegraph_core::diagnostic::Code;

use super::state::State;
use crate::model::{BOX_H, BOX_W, MapModel, num};

/// A ring drawn around a room besides the selection, with a caption above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mark {
    room: String,
    /// CSS class of the ring (`mark-multi`, `mark-softlock`).
    class: &'static str,
    /// Drawn above the room ("⚠ soft-lock"); empty for none.
    caption: &'static str,
}

/// The rings over the map: the rooms selected besides the selection, and each soft-lock
/// where it is.
pub(super) fn marks(state: State) -> Vec<Mark> {
    let mut marks: Vec<Mark> = state
        .multi
        .get()
        .into_iter()
        .map(|id| Mark {
            room: id,
            class: "mark-multi",
            caption: "",
        })
        .collect();
    state.loaded.with(|l| {
        marks.extend(
            l.diagnostics
                .iter()
                .filter(|d| d.code == Code::SoftLock)
                .filter_map(|d| {
                    Some(Mark {
                        room: d.node.clone()?,
                        class: "mark-softlock",
                        caption: "⚠ soft-lock",
                    })
                }),
        );
    });
    marks
}

/// Draws `marks` into the editor's map: a group of its own at the end of the drawing's
/// viewport (the map component never redraws that element, only what is inside its own
/// groups). Only numbers and fixed words go into the markup, never a zone's text.
pub(super) fn draw(m: &MapModel, marks: &[Mark]) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(Some(viewport)) = doc.query_selector(".editor-map g.viewport") else {
        return;
    };
    let g = match viewport.query_selector("g.editor-marks") {
        Ok(Some(g)) => g,
        _ => {
            let Ok(g) = doc.create_element_ns(Some("http://www.w3.org/2000/svg"), "g") else {
                return;
            };
            let _ = g.set_attribute("class", "editor-marks");
            let _ = g.set_attribute("aria-hidden", "true");
            let _ = viewport.append_child(&g);
            g
        }
    };
    let mut svg = String::new();
    for k in marks {
        let Some(r) = m.rooms.iter().find(|r| r.id == k.room) else {
            continue;
        };
        let (x, y) = (r.x - BOX_W / 2.0 - 10.0, r.y - BOX_H / 2.0 - 10.0);
        svg.push_str(&format!(
            "<g class=\"mark {}\"><rect x=\"{}\" y=\"{}\" width=\"204\" height=\"76\" rx=\"16\"></rect>",
            k.class,
            num(x),
            num(y)
        ));
        if !k.caption.is_empty() {
            svg.push_str(&format!(
                "<text class=\"mark-caption\" x=\"{}\" y=\"{}\">{}</text>",
                num(x + 8.0),
                num(y - 5.0),
                k.caption
            ));
        }
        svg.push_str("</g>");
    }
    g.set_inner_html(&svg);
}
