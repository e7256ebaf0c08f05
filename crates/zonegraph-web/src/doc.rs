//! Loading what the viewer shows: a zone's text checked, built and laid out, and the run
//! payload of `GET /api/runs/{token}`. Pure, so it is tested natively.

use serde::Deserialize;
use zonegraph_core::engine::{Character, Run};
use zonegraph_core::layout::{self, Layout};
use zonegraph_core::validate::{CheckOptions, CheckedZone, check_sources_with};
use zonegraph_core::zone::{self, Zone};

/// A zone ready to draw: the findings and stats of `zonegraph check --stats`, the graph and
/// its layout.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Where it came from ("crypt_valdris.json", "shared link", a dropped file's name).
    pub file: String,
    pub text: String,
    pub zone: Zone,
    pub layout: Layout,
    pub checked: CheckedZone,
}

/// Checks, builds and lays out a zone; the located parse error when the text is no zone.
/// The route analysis is left to the stats panel (`analysis::stats`), so the map comes first.
pub fn load(file: &str, text: &str) -> Result<Loaded, String> {
    let sources = [(file.to_string(), text.to_string())];
    let checked = check_sources_with(&sources, CheckOptions { stats: false })
        .into_iter()
        .next()
        .ok_or_else(|| "nothing to check".to_string())?;
    if let Some(e) = &checked.parse_error {
        return Err(e.located());
    }
    let (zone, _) = zone::load(text).map_err(|e| e.located())?;
    let layout = layout::layout(&zone);
    Ok(Loaded {
        file: file.to_string(),
        text: text.to_string(),
        zone,
        layout,
        checked,
    })
}

/// `GET /api/runs/{token}`: the zone as this player may see it, the run, the character.
#[derive(Clone, Debug)]
pub struct RunPayload {
    pub loaded: Loaded,
    pub run: Run,
    pub character: Character,
}

#[derive(Deserialize)]
struct Wire {
    zone: serde_json::Value,
    run: Run,
    #[serde(default)]
    character: Character,
}

/// Reads the run endpoint's JSON body.
pub fn parse_run_payload(body: &str) -> Result<RunPayload, String> {
    let wire: Wire =
        serde_json::from_str(body).map_err(|e| format!("the server's answer is not a run: {e}"))?;
    let zone_text = serde_json::to_string(&wire.zone).map_err(|e| e.to_string())?;
    let loaded = load("run", &zone_text).map_err(|e| format!("the run's zone: {e}"))?;
    if wire.run.zone_id != loaded.zone.id {
        return Err(format!(
            "the run is in zone {}, but the server sent zone {}",
            wire.run.zone_id, loaded.zone.id
        ));
    }
    Ok(RunPayload {
        loaded,
        run: wire.run,
        character: wire.character,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use zonegraph_core::engine;

    #[test]
    fn every_shipped_zone_loads() {
        for (file, text) in crate::zones::SHIPPED {
            let l = load(file, text).expect("shipped zones parse");
            assert_eq!(l.layout.nodes.len(), l.zone.graph.node_count(), "{file}");
        }
    }

    #[test]
    fn a_broken_zone_says_where() {
        let err = load("x.json", "{\"format\": 1,").expect_err("broken");
        assert!(err.contains("line"), "{err}");
    }

    #[test]
    fn run_payload_round_trips() {
        let (_, text) = crate::zones::shipped("crypt_valdris").expect("shipped");
        let l = load("c", text).expect("loads");
        let c = Character::default();
        let (run, _) = engine::start(&l.zone, "r1", &c, 0).expect("starts");
        let body = serde_json::json!({
            "zone": serde_json::from_str::<serde_json::Value>(text).expect("json"),
            "run": run,
            "character": {"level": 2, "scores": {"wis": 14}, "keys": []},
        });
        let p = parse_run_payload(&body.to_string()).expect("parses");
        assert_eq!(p.character.level, 2);
        assert_eq!(p.run, run);
        assert!(parse_run_payload("{}").is_err());
    }
}
