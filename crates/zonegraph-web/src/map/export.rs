//! The map as a standalone SVG file: the whole drawing with the current theme's colours and
//! the map stylesheet inline.

use wasm_bindgen::JsCast;

use super::view_box;
use crate::browser;
use crate::model::{MapModel, num};

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
pub(super) fn export_svg(svg: &web_sys::Element, m: &MapModel) -> Option<String> {
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
