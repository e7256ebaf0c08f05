//! Zone and room ids: which ones a server and the chat accept, the id proposed from a zone's
//! name, and a copy's own id.

use zonegraph_core::format::ZoneFile;

use super::Edit;

/// Why `id` cannot be a zone's id, or `None` when it can: the core's rule
/// ([`zonegraph_core::format::zone_id_problem`], a name of its file `<zone_id>.json`).
pub fn zone_id_problem(id: &str) -> Option<String> {
    zonegraph_core::format::zone_id_problem(id).map(String::from)
}

/// Why `id` cannot be a room's id, or `None` when it can: not empty, at most 128
/// characters, no spaces or control characters (chat commands and maps name it).
pub fn room_id_problem(id: &str) -> Option<String> {
    if id.trim().is_empty() {
        return Some("a room id cannot be empty".into());
    }
    if id.len() > 128 {
        return Some("a room id has at most 128 characters".into());
    }
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("a room id has no spaces".into());
    }
    None
}

/// A zone id from `name`: its letters and digits lowercased, other runs as one `_`
/// (`"The Goblin Warren"` → `the_goblin_warren`; `zone` for a name without any), suffixed
/// `_2`, `_3` … when `taken` says it is.
pub fn propose_zone_id(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut slug = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('_') {
            slug.push('_');
        }
    }
    let mut slug = slug.trim_end_matches('_').to_string();
    slug.truncate(100);
    if slug.is_empty() {
        slug = "zone".into();
    }
    if !taken(&slug) {
        return slug;
    }
    (2..)
        .map(|n| format!("{slug}_{n}"))
        .find(|id| !taken(id))
        .unwrap_or_default()
}

/// Whether zone id `id` is still the one proposed from `name` (its slug, or the slug with a
/// `_N` suffix): then renaming the zone proposes a new id too.
pub fn id_follows_name(id: &str, name: &str) -> bool {
    let slug = propose_zone_id(name, |_| false);
    id == slug
        || id
            .strip_prefix(&slug)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The `SetMeta` edit that makes `file` a copy with its own zone id: proposed from its name
/// among `taken` and never the original's, its rooms renamed with it.
pub fn copy_edit(file: &ZoneFile, taken: impl Fn(&str) -> bool) -> Edit {
    let original = file.zone_id.clone();
    let zone_id = propose_zone_id(&format!("{} copy", file.name), |id| {
        id == original || taken(id)
    });
    Edit::SetMeta {
        zone_id,
        name: format!("{} (copy)", file.name),
        tier: file.tier,
        min_level: file.min_level,
        max_level: file.max_level,
        allow_loops: file.allow_loops,
    }
}
