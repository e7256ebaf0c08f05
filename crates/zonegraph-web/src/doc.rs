//! Loading what the viewer shows: a zone's text checked, built and laid out, and the run
//! payload of `GET /api/runs/{token}`. Pure, so it is tested natively.

use zonegraph_core::diagnostic::{self, Diagnostic};
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

/// `GET /api/runs/{token}`: everything the player may know of the run (the core's player
/// view, the one owner of that decision), laid out, and the chat's `!zone status` words for
/// it with their numbered options as data. No zone file: the run page draws from the view
/// alone. The core's type, the one the server writes.
pub use zonegraph_core::payload::RunView;

/// One numbered option of the status: `!zone go {number}`, on line `line` of the words.
pub use zonegraph_core::chat::Choice;

/// Reads the run endpoint's JSON body.
pub fn parse_run_payload(body: &str) -> Result<RunView, String> {
    serde_json::from_str(body).map_err(|e| format!("the server's answer is not a run: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let s = &crate::scenarios::fixed()[0];
        let p = parse_run_payload(&s.payload()).expect("parses");
        assert_eq!(p.view, s.view());
        assert!(p.status.text.contains("!zone go"), "{}", p.status.text);
        assert!(
            !p.status.choices.is_empty(),
            "the fork's options come as data"
        );
        assert!(parse_run_payload("{}").is_err());
        // The old shape (a zone file and a run) is refused, not half-read.
        assert!(parse_run_payload(r#"{"zone": {}, "run": {}}"#).is_err());
        // The drawing comes with the view, in integers; a body without it, or with a map
        // that is no drawing, is refused with what is wrong.
        assert_eq!(p.map, zonegraph_core::layout::Drawing::of_view(&p.view));
        let mut body: serde_json::Value = serde_json::from_str(&s.payload()).expect("json");
        body.as_object_mut().expect("an object").remove("map");
        let e = parse_run_payload(&body.to_string()).expect_err("no map");
        assert!(e.contains("not a run") && e.contains("map"), "{e}");
        body["map"] = serde_json::json!({"rooms": [[0, 1.5, 2]], "passages": []});
        let e = parse_run_payload(&body.to_string()).expect_err("a float cell");
        assert!(e.contains("not a run"), "{e}");
    }

    /// `web/fixtures/run-demo.json`, what the end-to-end test serves as
    /// `GET /api/runs/demo`: the Crypt at its fork after a failed Perception check, made from
    /// the real core. `ZONEGRAPH_BLESS=1 cargo test -p zonegraph-web` rewrites it.
    #[test]
    fn the_e2e_run_fixture_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../web/fixtures/run-demo.json");
        let s = &crate::scenarios::fixed()[0];
        let value: serde_json::Value = serde_json::from_str(&s.payload()).expect("json");
        let mut generated = serde_json::to_string_pretty(&value).expect("json");
        generated.push('\n');
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != generated {
            if std::env::var_os("ZONEGRAPH_BLESS").is_some() {
                std::fs::write(&path, &generated).expect("write the fixture");
            } else {
                panic!(
                    "web/fixtures/run-demo.json is out of date (the core's player view \
                     changed): run `ZONEGRAPH_BLESS=1 cargo test -p zonegraph-web` and commit it"
                );
            }
        }
    }

    /// The gallery's test fixtures (`web/fixtures/zones/*.json`, the end-to-end test's
    /// zones, among them zones whose hints run left to right) load as the viewer loads a
    /// file, with no finding, and every room is laid out.
    #[test]
    fn every_gallery_fixture_loads_clean() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/fixtures/zones");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("web/fixtures/zones/") {
            let path = entry.expect("an entry").path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
            let l = load(file, &text).expect("a fixture parses");
            assert!(l.diagnostics.is_empty(), "{file}: {:?}", l.diagnostics);
            assert_eq!(l.layout.nodes.len(), l.zone.graph.node_count(), "{file}");
            seen += 1;
        }
        assert!(seen >= 3, "{seen} fixtures in {}", dir.display());
    }

    /// `web/fixtures/zones/bench_100.json`: the 100-room zone the end-to-end test serves to
    /// time the run page's first map (BENCHMARKS.md), generated by the core.
    #[test]
    fn the_e2e_bench_zone_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../web/fixtures/zones/bench_100.json");
        let file = zonegraph_core::synth::layered("bench_100", 100, 4, 7);
        let generated = zonegraph_core::format::to_pretty_json(&file);
        let checked = check_sources(&[("bench_100.json".to_string(), generated.clone())]);
        assert!(!checked[0].has_errors(), "{:?}", checked[0].diagnostics);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != generated {
            if std::env::var_os("ZONEGRAPH_BLESS").is_some() {
                std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
                std::fs::write(&path, &generated).expect("write the fixture");
            } else {
                panic!(
                    "web/fixtures/zones/bench_100.json is out of date (the core's generator \
                     changed): run `ZONEGRAPH_BLESS=1 cargo test -p zonegraph-web` and commit it"
                );
            }
        }
    }
}
