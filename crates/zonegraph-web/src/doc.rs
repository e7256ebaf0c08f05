//! Loading what the viewer shows: a zone's text checked, built and laid out, and the run
//! payload of `GET /api/runs/{token}`. Pure, so it is tested natively.

use serde::Deserialize;
use serde_json::value::RawValue;
use zonegraph_core::diagnostic::{self, Diagnostic};
use zonegraph_core::engine::{Character, Run};
use zonegraph_core::format::ZoneFile;
use zonegraph_core::layout::{self, Layout};
use zonegraph_core::validate::{self, CheckOptions, check_sources_with};
use zonegraph_core::zone::{self, Zone};

use crate::zones;

/// A zone ready to draw: the findings of `zonegraph check`, the graph and its layout.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Where it came from ("crypt_valdris.json", "shared link", a dropped file's name).
    pub file: String,
    /// The zone's JSON, for share links; empty for a generated zone.
    pub text: String,
    pub zone: Zone,
    pub layout: Layout,
    /// Every error and lint, sorted.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads, builds and lays out a zone checked on its own (as `zonegraph check <file>`); the
/// located parse error when the text is no zone. The text is parsed once. The route
/// analysis is left to the stats panel (`analysis::stats`), so the map comes first.
pub fn load(file: &str, text: &str) -> Result<Loaded, String> {
    let (zone, mut diagnostics) = zone::load(text).map_err(|e| e.located())?;
    diagnostics.extend(validate::check_zone(&zone));
    diagnostic::sort(&mut diagnostics);
    Ok(loaded(file, text, zone, diagnostics))
}

fn loaded(file: &str, text: &str, zone: Zone, diagnostics: Vec<Diagnostic>) -> Loaded {
    let layout = layout::layout(&zone);
    Loaded {
        file: file.to_string(),
        text: text.to_string(),
        zone,
        layout,
        diagnostics,
    }
}

/// A zone generated in memory (`#bench/<N>`), built without a JSON round trip: the viewer
/// carries no JSON writer for zones.
pub fn generated(name: &str, file: &ZoneFile) -> Loaded {
    let (zone, mut diagnostics) = zone::build(file);
    diagnostics.extend(validate::check_zone(&zone));
    diagnostic::sort(&mut diagnostics);
    loaded(name, "", zone, diagnostics)
}

/// Every shipped zone, checked together as `zonegraph check zones/` checks them (a key
/// granted in one zone and needed in another is no finding): `(file, zone or error)` in
/// file order.
pub fn load_shipped() -> Vec<(&'static str, Result<Loaded, String>)> {
    let sources: Vec<(String, String)> = zones::SHIPPED
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    let checked = check_sources_with(&sources, CheckOptions { stats: false });
    zones::SHIPPED
        .iter()
        .zip(checked)
        .map(|(&(file, text), c)| {
            let l = match (c.parse_error, zone::load(text)) {
                (None, Ok((zone, _))) => Ok(loaded(file, text, zone, c.diagnostics)),
                (Some(e), _) => Err(e.located()),
                (None, Err(e)) => Err(e.located()),
            };
            (file, l)
        })
        .collect()
}

/// The shipped zone `<id>.json`, with the findings of [`load_shipped`].
pub fn load_shipped_zone(id: &str) -> Option<Result<Loaded, String>> {
    let (file, _) = zones::shipped(id)?;
    load_shipped()
        .into_iter()
        .find(|(f, _)| *f == file)
        .map(|(_, l)| l)
}

/// `GET /api/runs/{token}`: the zone as this player may see it, the run, the character.
#[derive(Clone, Debug)]
pub struct RunPayload {
    pub loaded: Loaded,
    pub run: Run,
    pub character: Character,
}

#[derive(Deserialize)]
struct Wire<'a> {
    /// Kept as text: the zone reader parses it (and says where it is wrong).
    #[serde(borrow)]
    zone: &'a RawValue,
    run: Run,
    #[serde(default)]
    character: Character,
}

/// Reads the run endpoint's JSON body.
pub fn parse_run_payload(body: &str) -> Result<RunPayload, String> {
    let wire: Wire =
        serde_json::from_str(body).map_err(|e| format!("the server's answer is not a run: {e}"))?;
    let loaded = load("run", wire.zone.get()).map_err(|e| format!("the run's zone: {e}"))?;
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
    use zonegraph_core::validate::check_sources;

    #[test]
    fn every_shipped_zone_loads() {
        for (file, text) in crate::zones::SHIPPED {
            let l = load(file, text).expect("shipped zones parse");
            assert_eq!(l.layout.nodes.len(), l.zone.graph.node_count(), "{file}");
        }
    }

    #[test]
    fn one_zone_has_the_findings_of_checking_it_alone() {
        for (file, text) in crate::zones::SHIPPED {
            let alone = check_sources(&[(file.to_string(), text.to_string())]);
            let l = load(file, text).expect("shipped zones parse");
            assert_eq!(l.diagnostics, alone[0].diagnostics, "{file}");
        }
    }

    #[test]
    fn shipped_zones_have_the_findings_of_checking_the_folder() {
        let sources: Vec<(String, String)> = crate::zones::SHIPPED
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect();
        let together = check_sources(&sources);
        let shipped = load_shipped();
        assert_eq!(shipped.len(), together.len());
        for ((file, l), c) in shipped.iter().zip(&together) {
            let l = l.as_ref().expect("shipped zones parse");
            assert_eq!(l.diagnostics, c.diagnostics, "{file}");
        }
        // Sunless Deep's key is granted in the Drowned Belfry: no key_never_granted.
        let deep = load_shipped_zone("sunless_deep")
            .expect("shipped")
            .expect("parses");
        assert!(deep.diagnostics.is_empty(), "{:?}", deep.diagnostics);
    }

    #[test]
    fn a_generated_zone_is_checked_like_its_file() {
        let file = zonegraph_core::synth::layered("bench", 200, 8, 7);
        let text = zonegraph_core::format::to_pretty_json(&file);
        let g = generated("bench/200", &file);
        let l = load("bench/200", &text).expect("loads");
        assert_eq!(g.diagnostics, l.diagnostics);
        assert_eq!(g.zone.graph.node_count(), l.zone.graph.node_count());
        assert!(g.text.is_empty());
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
