//! Browser tests: the wasm exports in headless Chromium return what the native core returns
//! (`tests/parity.json`, kept current by `tests/native.rs`), and bad input is a thrown
//! `Error` with a code, never a trap. Run with `cargo xtask test`.
#![cfg(target_arch = "wasm32")]

use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const FIXTURE: &str = include_str!("parity.json");

fn fixture() -> Value {
    numbers_as_f64(serde_json::from_str(FIXTURE).expect("parity.json is JSON"))
}

/// JS has one number type: `0.0` and `0` are the same number once they cross JSON.parse, so
/// both sides compare with every number as an f64.
fn numbers_as_f64(v: Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.into_iter().map(numbers_as_f64).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, numbers_as_f64(v))).collect())
        }
        other => other,
    }
}

/// A JS value as the JSON the native side wrote, so both compare as `serde_json::Value`.
fn json_of(v: &JsValue) -> Value {
    let text = js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .expect("result is JSON-serialisable");
    numbers_as_f64(serde_json::from_str(&text).expect("stringify gives JSON"))
}

/// The thrown value as `{code, message, line?, column?, path?}`; asserts it is an `Error`.
fn error_json(thrown: &JsValue) -> Value {
    let err = thrown
        .dyn_ref::<js_sys::Error>()
        .unwrap_or_else(|| panic!("threw a non-Error: {thrown:?}"));
    assert_eq!(String::from(err.name()), "ZonegraphError");
    let get = |k: &str| js_sys::Reflect::get(err, &JsValue::from_str(k)).expect("property");
    let mut out = serde_json::Map::new();
    out.insert("code".into(), json_of(&get("code")));
    out.insert("message".into(), Value::String(String::from(err.message())));
    for k in ["line", "column", "path"] {
        let v = get(k);
        if !v.is_undefined() {
            out.insert(k.into(), json_of(&v));
        }
    }
    Value::Object(out)
}

/// `{"ok": value}` or `{"error": {...}}`, the shape of the fixture's outcomes.
fn outcome(r: Result<JsValue, JsValue>) -> Value {
    match r {
        Ok(v) => serde_json::json!({ "ok": json_of(&v) }),
        Err(e) => serde_json::json!({ "error": error_json(&e) }),
    }
}

fn s(v: &Value) -> &str {
    v.as_str().expect("string in fixture")
}

#[wasm_bindgen_test]
fn check_zone_matches_native_for_every_fixture() {
    let f = fixture();
    let zones = f["zones"].as_array().expect("zones");
    assert!(zones.iter().any(|z| s(&z["name"]).starts_with("zones/")));
    for z in zones {
        let name = s(&z["name"]);
        let input = s(&z["input"]);
        let got = outcome(zonegraph_wasm::check_zone(JsValue::from_str(input), None));
        assert_eq!(got, z["check"], "checkZone({name})");
        let got = outcome(zonegraph_wasm::analyze_zone(JsValue::from_str(input)));
        assert_eq!(got, z["analyze"], "analyzeZone({name})");
        let got = outcome(zonegraph_wasm::layout_zone(JsValue::from_str(input)));
        assert_eq!(got, z["layout"], "layoutZone({name})");
        let got = zonegraph_wasm::render_map(JsValue::from_str(input), None, None)
            .map(|m| JsValue::from_str(&m));
        assert_eq!(outcome(got), z["map"], "renderMap({name})");
        // The same zone passed as an object gives the same report.
        if let (Some(_), Ok(obj)) = (z["check"].get("ok"), js_sys::JSON::parse(input)) {
            let got = outcome(zonegraph_wasm::check_zone(obj, None));
            assert_eq!(got, z["check"], "checkZone(object {name})");
        }
    }
}

/// `{file, zone}` as JS.
fn source(file: &str, zone: &str) -> JsValue {
    let o = js_sys::Object::new();
    js_sys::Reflect::set(&o, &"file".into(), &file.into()).expect("set");
    js_sys::Reflect::set(&o, &"zone".into(), &zone.into()).expect("set");
    o.into()
}

#[wasm_bindgen_test]
fn check_zones_matches_native() {
    let f = fixture();
    let arr = js_sys::Array::new();
    for z in f["zones"].as_array().expect("zones") {
        if s(&z["name"]).starts_with("zones/") {
            arr.push(&source(s(&z["name"]), s(&z["input"])));
        }
    }
    let got = json_of(&zonegraph_wasm::check_zones(arr.into()).expect("checks"));
    assert_eq!(got, f["check_all_zones"]);
    // Repeated zone and an unreadable one: cross-zone findings and a parse_error entry.
    let arr = js_sys::Array::new();
    for src in f["check_mixed"]["sources"].as_array().expect("sources") {
        arr.push(&source(s(&src["file"]), s(&src["zone"])));
    }
    let got = json_of(&zonegraph_wasm::check_zones(arr.into()).expect("checks"));
    assert_eq!(got, f["check_mixed"]["checked"]);
    assert!(got[2]["parse_error"].is_object(), "{got}");
}

#[wasm_bindgen_test]
fn roll_d20_matches_native() {
    let f = fixture();
    let rolls = f["rolls"].as_array().expect("rolls");
    assert!(rolls.len() >= 20);
    for r in rolls {
        let got = zonegraph_wasm::roll_d20(
            JsValue::from_str(s(&r["run_id"])),
            JsValue::from_str(s(&r["from"])),
            JsValue::from_str(s(&r["to"])),
        )
        .expect("rolls");
        assert_eq!(Some(f64::from(got)), r["d20"].as_f64(), "{r}");
    }
}

#[wasm_bindgen_test]
fn share_links_match_native_and_round_trip() {
    let f = fixture();
    for z in f["zones"].as_array().expect("zones") {
        let name = s(&z["name"]);
        let input = s(&z["input"]);
        let got = zonegraph_wasm::encode_share_link(JsValue::from_str(input))
            .map(|l| JsValue::from_str(&l));
        assert_eq!(outcome(got), z["share"], "encodeShareLink({name})");
        if let Some(link) = z["share"]["ok"].as_str() {
            for form in [link.to_string(), format!("#{link}")] {
                let back =
                    zonegraph_wasm::decode_share_link(JsValue::from_str(&form)).expect("decodes");
                assert_eq!(back, input, "decodeShareLink({name})");
            }
        }
    }
}

#[wasm_bindgen_test]
fn bad_share_links_give_the_bounded_clear_errors() {
    let f = fixture();
    for l in f["links"].as_array().expect("links") {
        let got = zonegraph_wasm::decode_share_link(JsValue::from_str(s(&l["link"])))
            .map(|t| JsValue::from_str(&t));
        assert_eq!(
            outcome(got),
            l["decode"],
            "decodeShareLink({})",
            s(&l["name"])
        );
    }
    let codes: Vec<&str> = f["links"]
        .as_array()
        .expect("links")
        .iter()
        .filter_map(|l| l["decode"]["error"]["code"].as_str())
        .collect();
    for code in [
        "share_inflated_too_large",
        "share_corrupt",
        "share_base64",
        "share_prefix",
    ] {
        assert!(codes.contains(&code), "fixture lacks a {code} case");
    }
    // Oversized payload: refused before any decoding.
    let max = f["max_payload"].as_f64().expect("max_payload") as usize;
    let big = format!("z1:{}", "A".repeat(max + 1));
    let err = zonegraph_wasm::decode_share_link(JsValue::from_str(&big)).expect_err("too big");
    let err = error_json(&err);
    assert_eq!(err["code"], "share_payload_too_large", "{err}");
    assert_eq!(
        err["message"],
        format!(
            "share link payload is {} bytes, over the limit of {max}",
            max + 1
        )
    );
}

#[wasm_bindgen_test]
fn malformed_arguments_throw_errors_not_traps() {
    let cases: Vec<(&str, Result<JsValue, JsValue>)> = vec![
        (
            "checkZone(undefined)",
            zonegraph_wasm::check_zone(JsValue::UNDEFINED, None),
        ),
        (
            "checkZone(42)",
            zonegraph_wasm::check_zone(JsValue::from(42), None),
        ),
        (
            "checkZone({})",
            zonegraph_wasm::check_zone(js_sys::Object::new().into(), None),
        ),
        (
            "checkZone('{')",
            zonegraph_wasm::check_zone(JsValue::from_str("{"), None),
        ),
        (
            "analyzeZone(null)",
            zonegraph_wasm::analyze_zone(JsValue::NULL),
        ),
        (
            "checkZones('x')",
            zonegraph_wasm::check_zones(JsValue::from_str("x")),
        ),
        (
            "checkZones([null])",
            zonegraph_wasm::check_zones(js_sys::Array::of1(&JsValue::NULL).into()),
        ),
        (
            "rollD20(1, 'a', 'b')",
            zonegraph_wasm::roll_d20(JsValue::from(1), "a".into(), "b".into()).map(JsValue::from),
        ),
        (
            "decodeShareLink(null)",
            zonegraph_wasm::decode_share_link(JsValue::NULL).map(JsValue::from),
        ),
        (
            "encodeShareLink(Symbol)",
            zonegraph_wasm::encode_share_link(JsValue::symbol(None)).map(JsValue::from),
        ),
    ];
    for (what, r) in cases {
        let err = r.expect_err(what);
        let e = error_json(&err);
        let code = e["code"].as_str().unwrap_or("");
        assert!(
            code == "invalid_argument" || code == "parse_error",
            "{what}: {e}"
        );
        assert!(!s(&e["message"]).is_empty(), "{what}");
    }
    // A cyclic object cannot be JSON: an Error, not a trap.
    let cyclic = js_sys::Object::new();
    js_sys::Reflect::set(&cyclic, &"self".into(), &cyclic).expect("set");
    let e = error_json(&zonegraph_wasm::check_zone(cyclic.into(), None).expect_err("cyclic"));
    assert_eq!(e["code"], "invalid_argument");
    // Parse errors say where.
    let e = error_json(
        &zonegraph_wasm::check_zone(JsValue::from_str("{\"format\": 1,\n  \"zone_id\": }"), None)
            .expect_err("malformed"),
    );
    assert_eq!(
        (e["code"].as_str(), e["line"].as_f64(), e["column"].as_f64()),
        (Some("parse_error"), Some(2.0), Some(14.0))
    );
}

#[wasm_bindgen_test]
fn version_info_matches_native() {
    let got = json_of(&zonegraph_wasm::version_info().expect("version"));
    assert_eq!(got, fixture()["version"]);
}

/// A fixture value as a JS object (through JSON, like a host would hold it).
fn js_of(v: &Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).expect("fixture value is JSON")
}

#[wasm_bindgen_test]
fn command_replays_the_native_transcripts() {
    let f = fixture();
    let zone_text = |name: &str| {
        f["zones"]
            .as_array()
            .expect("zones")
            .iter()
            .find(|z| z["name"] == name)
            .map(|z| JsValue::from_str(s(&z["input"])))
            .expect("zone of the transcript is in the fixture")
    };
    let calls = f["commands"].as_array().expect("commands");
    assert!(calls.len() > 100, "the fixture has transcripts");
    let mut views = 0;
    for (i, c) in calls.iter().enumerate() {
        let names = c["zones"].as_array().expect("zone names");
        // One zone is passed as itself, several as an array: both forms are tested.
        let zones = if names.len() == 1 {
            zone_text(s(&names[0]))
        } else {
            let arr = js_sys::Array::new();
            for n in names {
                arr.push(&zone_text(s(n)));
            }
            arr.into()
        };
        let options = (!c["options"].is_null()).then(|| js_of(&c["options"]));
        let got = zonegraph_wasm::command(
            zones,
            js_of(&c["player"]),
            JsValue::from_str(s(&c["text"])),
            c["now"].as_f64().expect("now"),
            JsValue::from_str(s(&c["run_id"])),
            options,
        );
        let got = outcome(got);
        assert_eq!(got, c["output"], "command {i}: {}", s(&c["text"]));
        // What the run-map page asks for after a command that changed the run.
        let v = &c["views"];
        if v.is_null() {
            continue;
        }
        views += 1;
        let player = &got["ok"]["player"];
        let (zone, run) = (zone_text(s(&v["zone"])), js_of(&player["run"]));
        let view = zonegraph_wasm::player_view(
            zone.clone(),
            run.clone(),
            Some(js_of(&player["character"])),
        );
        assert_eq!(
            outcome(view),
            v["playerView"],
            "playerView after command {i}"
        );
        let map = zonegraph_wasm::render_map(zone, Some(run), None).map(JsValue::from);
        assert_eq!(outcome(map), v["renderMap"], "renderMap after command {i}");
    }
    assert!(
        views > 50,
        "the transcripts look at the run after every step"
    );
}

#[wasm_bindgen_test]
fn engine_arguments_are_checked() {
    let zone = JsValue::from_str(s(&fixture()["zones"][0]["input"]));
    let e = error_json(
        &zonegraph_wasm::player_view(zone.clone(), JsValue::NULL, None).expect_err("no run"),
    );
    assert_eq!(e["code"], "invalid_argument");
    let bad_run = js_sys::JSON::parse(r#"{"run_id": 5}"#).expect("json");
    let e =
        error_json(&zonegraph_wasm::player_view(zone.clone(), bad_run, None).expect_err("bad run"));
    assert_eq!(e["code"], "invalid_argument");
    assert!(s(&e["message"]).starts_with("run: invalid type"), "{e}");
    let e = error_json(
        &zonegraph_wasm::command(
            zone.clone(),
            JsValue::NULL,
            "!zone list".into(),
            f64::NAN,
            "r".into(),
            None,
        )
        .expect_err("NaN"),
    );
    assert_eq!(e["code"], "invalid_argument");
    // command: a text that is no string, a player that is no object, unknown options.
    let bad = |player: JsValue, text: JsValue, options: Option<JsValue>| {
        let e = zonegraph_wasm::command(zone.clone(), player, text, 0.0, "r".into(), options)
            .expect_err("bad argument");
        error_json(&e)
    };
    let e = bad(JsValue::NULL, JsValue::from(3), None);
    assert_eq!(e["code"], "invalid_argument", "{e}");
    let e = bad(JsValue::from_str("p"), "!zone list".into(), None);
    assert_eq!(e["code"], "invalid_argument", "{e}");
    let options = js_sys::JSON::parse(r#"{"syntax": "shout"}"#).expect("json");
    let e = bad(JsValue::NULL, "!zone list".into(), Some(options));
    assert_eq!(e["code"], "invalid_argument", "{e}");
    assert_eq!(
        s(&e["message"]),
        "command: options.syntax must be \"chat\" or \"loose\""
    );
    let options = js_sys::JSON::parse(r#"{"sintax": "chat"}"#).expect("json");
    let e = bad(JsValue::NULL, "!zone list".into(), Some(options));
    assert!(s(&e["message"]).contains("unknown field `sintax`"), "{e}");
    let player = js_sys::JSON::parse(r#"{"character": {"level": "x"}}"#).expect("json");
    let e = bad(player, "!char".into(), None);
    assert!(
        s(&e["message"]).starts_with("player.character: invalid type"),
        "{e}"
    );
}
