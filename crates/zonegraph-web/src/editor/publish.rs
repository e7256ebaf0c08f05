//! Publishing from the editor: the server's URLs, the plan (a new zone, a new version, a
//! copy), and the server's answers (publish, review, unpublish, its zone list) in words for
//! the designer.

use zonegraph_core::impact::{self, Impact};

use super::propose_zone_id;

/// What `POST /api/zones` answered, in words for the editor: the status and the body.
pub fn publish_words(status: u16, body: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    match status {
        200 => format!(
            "Published {} as {}: the server now serves {} zones{}.",
            json["published"].as_str().unwrap_or("the zone"),
            json["file"].as_str().unwrap_or("a file"),
            json["zones"].as_u64().unwrap_or(0),
            if json["replaced"] == true {
                " (runs already on the old version keep it)"
            } else {
                ""
            }
        ),
        422 => {
            let findings: Vec<String> = json["zones"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|z| {
                    let file = z["file"].as_str().unwrap_or("?").to_string();
                    let parse = z["parse_error"]["message"]
                        .as_str()
                        .map(|m| format!("{file}: {m}"));
                    let errors = z["diagnostics"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|d| d["severity"] == "error")
                        .map(move |d| format!("{file}: {}", d["message"].as_str().unwrap_or("")));
                    parse.into_iter().chain(errors.collect::<Vec<_>>())
                })
                .collect();
            let mut words = format!(
                "Not published: {}.",
                json["error"].as_str().unwrap_or("the server refused it")
            );
            for f in findings.iter().take(5) {
                words.push(' ');
                words.push_str(f);
                words.push('.');
            }
            words
        }
        401 => "Not published: the server did not take that token. Ask its operator for a \
                publish token (zonegraph token new --scope publish)."
            .into(),
        _ => format!(
            "Not published: the server answered {status}{}.",
            json["error"]
                .as_str()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ),
    }
}

/// Where the editor publishes a zone to the server at `server`: its `POST /api/zones`.
pub fn publish_url(server: &str) -> String {
    format!("{}/api/zones", server.trim_end_matches('/'))
}

/// What Publish does with the work, from the server's zone of the same id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublishPlan {
    /// The server serves no zone of this id: a new zone.
    New,
    /// The server serves version `seq` of this zone, which this editor opened from it:
    /// publishing replaces it (after the designer confirms the changes).
    Replaces { seq: u64 },
    /// The server serves a zone of this id this editor did not open from it: refused, with
    /// a free id to use instead.
    Collides { seq: u64, free: String },
}

/// The plan for publishing zone `zone_id`: `served_seq` is the server's current version of
/// that id (`None` when it serves none), `opened_from_server` the id of the zone this
/// editor opened from that server (if any), `served_ids` every zone id it serves.
pub fn publish_plan(
    zone_id: &str,
    served_seq: Option<u64>,
    opened_from_server: Option<&str>,
    served_ids: &[String],
) -> PublishPlan {
    match served_seq {
        None => PublishPlan::New,
        Some(seq) if opened_from_server == Some(zone_id) => PublishPlan::Replaces { seq },
        Some(seq) => PublishPlan::Collides {
            seq,
            free: propose_zone_id(zone_id, |id| served_ids.iter().any(|s| s == id)),
        },
    }
}

/// The Publish confirmation's words for a plan; for a replacement, the changes follow as
/// [`impact_lines`].
pub fn plan_words(zone_id: &str, plan: &PublishPlan) -> String {
    match plan {
        PublishPlan::New => format!("Publish {zone_id} as a new zone on this server?"),
        PublishPlan::Replaces { seq } => {
            format!("Publishing replaces version {seq} of {zone_id}:")
        }
        PublishPlan::Collides { seq, free } => format!(
            "Not published: the server already serves a zone {zone_id} (version {seq}) that this editor did not open from it. Change the zone id (for example to {free}), or open that zone with “Open from server” to edit it."
        ),
    }
}

/// What a change does, in the core's words ([`zonegraph_core::impact`]): the changes, the
/// figures that change ("routes: 3 -> 2"), the findings it brings or removes.
pub fn impact_lines(i: &Impact) -> Vec<String> {
    let mut out = impact::change_lines(i);
    out.extend(figure_lines(i, false));
    out.extend(impact::finding_lines(i));
    out
}

/// What the server's review (`POST /api/zones/{id}/review` with the file Publish would send)
/// answered, as lines for the Publish confirmation: its `words` (the players in the zone now,
/// its stored runs replayed on this version); when there is none, one line saying why
/// (publishing is still allowed).
pub fn review_lines(answer: Result<(u16, String), String>) -> Vec<String> {
    let why = match answer {
        Ok((200, body)) => {
            let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            match json["words"].as_array() {
                Some(words) => {
                    return words
                        .iter()
                        .filter_map(|w| w.as_str().map(str::to_string))
                        .collect();
                }
                None => "its answer has no words".to_string(),
            }
        }
        Ok((status, body)) => {
            let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            match json["error"].as_str() {
                Some(e) => format!("the server answered {status} ({e})"),
                None => format!("the server answered {status}"),
            }
        }
        Err(e) => e,
    };
    vec![format!(
        "No review of the players and stored runs: {why}. Publishing is still possible."
    )]
}

/// The URL of the server's review of a new version of zone `zone_id`.
pub fn review_url(server: &str, zone_id: &str) -> String {
    format!("{}/review", zone_url(server, zone_id))
}

/// The zone's figures before and after, one line each ("routes: 3 -> 2 (changed)"): the
/// changed ones, or `all` of them ("rooms: 8 (unchanged)").
pub fn figure_lines(i: &Impact, all: bool) -> Vec<String> {
    impact::figures(i)
        .into_iter()
        .filter_map(|f| {
            if f.changed() {
                Some(format!("{}: {} -> {}", f.name, f.before, f.after))
            } else {
                all.then(|| format!("{}: {} (unchanged)", f.name, f.before))
            }
        })
        .collect()
}

/// The server's current version of zone `zone_id` from its `GET /api/zones` answer, and
/// every zone id it serves.
pub fn served_version(list_body: &str, zone_id: &str) -> (Option<u64>, Vec<String>) {
    let json: serde_json::Value = serde_json::from_str(list_body).unwrap_or_default();
    let zones = json["zones"].as_array().cloned().unwrap_or_default();
    let ids = zones
        .iter()
        .filter_map(|z| z["zone_id"].as_str().map(str::to_string))
        .collect();
    let seq = zones
        .iter()
        .find(|z| z["zone_id"] == zone_id)
        .map(|z| z["version"]["seq"].as_u64().unwrap_or(0));
    (seq, ids)
}

/// The zones a server's `GET /api/zones` answer lists, as (id, "Name (id) · version N").
pub fn served_list(list_body: &str) -> Vec<(String, String)> {
    let json: serde_json::Value = serde_json::from_str(list_body).unwrap_or_default();
    json["zones"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|z| {
            let id = z["zone_id"].as_str()?.to_string();
            let name = z["name"].as_str().unwrap_or(&id).to_string();
            let seq = z["version"]["seq"]
                .as_u64()
                .map(|s| format!(" · version {s}"))
                .unwrap_or_default();
            Some((id.clone(), format!("{name} ({id}){seq}")))
        })
        .collect()
}

/// What `DELETE /api/zones/{id}` answered, in words for the editor.
pub fn unpublish_words(zone_id: &str, status: u16, body: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let error = json["error"].as_str().unwrap_or("");
    match status {
        200 => format!(
            "Unpublished {zone_id}: the server now serves {} zones (runs already there go on to their end).",
            json["zones"].as_u64().unwrap_or(0)
        ),
        403 => format!(
            "Not unpublished: this token may not withdraw zones. Unpublishing needs an admin token (zonegraph token new --scope admin){}.",
            if error.is_empty() {
                String::new()
            } else {
                format!(" ({error})")
            }
        ),
        401 => "Not unpublished: the server did not take that token.".into(),
        404 => format!("Not unpublished: the server serves no zone {zone_id}."),
        _ => format!(
            "Not unpublished: the server answered {status}{}.",
            if error.is_empty() {
                String::new()
            } else {
                format!(" ({error})")
            }
        ),
    }
}

/// The URL of zone `zone_id` on the server at `server` (`GET` its file, `DELETE` withdraws).
/// A zone id the editor or a server accepts needs no escaping ([`super::zone_id_problem`]).
pub fn zone_url(server: &str, zone_id: &str) -> String {
    format!("{}/{zone_id}", publish_url(server))
}
