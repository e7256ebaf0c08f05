//! The API speaks data: a command's answer carries its typed events and the run's link and
//! token; `GET /api/players/{user}/run` gives the player's view; `GET /api/openapi.json`
//! describes every route the router serves, and only those.

use std::collections::BTreeSet;

use serde_json::Value;
use zonegraph_server::http::api_paths;

use super::{chapel_roll, user_where};
use crate::support::{Ctx, connect, copy_zones};

fn events(answer: &Value) -> Vec<String> {
    answer["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["event"].as_str().expect("event tag").to_string())
        .collect()
}

#[test]
fn a_command_answers_with_its_events_and_the_runs_link() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path()).spawn();
    let user = user_where("eventful", |r| chapel_roll(r) >= 12);

    // Nothing happened: no events, no run yet.
    let help = c.command(&user, "!zone help", None).expect("help").json();
    assert_eq!(help["events"], Value::Array(vec![]), "{help}");
    assert_eq!(help["run"], Value::Null);
    let none = c.get(&format!("/api/players/{user}/run")).expect("no run");
    assert_eq!(none.status, 404, "{}", none.text());
    assert!(none.text().contains("has no run"), "{}", none.text());

    let entered = c
        .command(&user, "!zone enter crypt_valdris", None)
        .expect("enter")
        .json();
    let kinds = events(&entered);
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("entered"),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"arrived".to_string()), "{kinds:?}");
    assert_eq!(entered["events"][0]["zone_id"], "crypt_valdris");
    let run = &entered["run"];
    let token = run["token"].as_str().expect("token").to_string();
    assert_eq!(token.len(), 32, "{run}");
    assert_eq!(run["zone_id"], "crypt_valdris");
    assert_eq!(run["outcome"], Value::Null);
    assert!(
        run["link"]
            .as_str()
            .is_some_and(|l| l.ends_with(&format!("/run/{token}"))),
        "{run}"
    );
    // The rolls are drawn from the run id: it is never told.
    assert!(run.get("run_id").is_none(), "{run}");
    // The token in the answer is the run's: its page answers, and the chat map names it.
    assert_eq!(
        c.get(&format!("/api/runs/{token}")).expect("view").status,
        200
    );
    let map = c.command(&user, "!zone map", None).expect("map").json();
    assert!(map["replies"].to_string().contains(&token), "{map}");
    assert_eq!(map["run"]["token"], token.as_str());
    assert_eq!(map["events"], Value::Array(vec![]));

    // On to the fork: the options come as data.
    let mut offered = None;
    for _ in 0..4 {
        let a = c
            .command(&user, "!zone advance", None)
            .expect("advance")
            .json();
        if let Some(e) = a["events"]
            .as_array()
            .and_then(|l| l.iter().find(|e| e["event"] == "fork_offered"))
        {
            offered = Some(e.clone());
            break;
        }
    }
    let fork = offered.expect("the Crypt's fork is offered");
    let options = fork["options"].as_array().expect("options");
    assert_eq!(options.len(), 2, "{fork}");
    assert!(options.iter().all(|o| o["number"].is_u64()), "{fork}");
    assert_eq!(options[1]["lock"], "perception_check", "{fork}");

    // The player's run by user: the same token, the view at the fork.
    let by_user = c
        .get(&format!("/api/players/{user}/run"))
        .expect("player run");
    assert_eq!(by_user.status, 200, "{}", by_user.text());
    let v = by_user.json();
    assert_eq!(v["run"]["token"], token.as_str());
    assert_eq!(v["view"]["status"]["node"], "crypt_valdris.fork");
    assert!(
        v["status"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Crypt of Valdris"))
    );

    // Abandoned: the run ended, its outcome says so, its link stays.
    let gone = c
        .command(&user, "!zone abandon", None)
        .expect("abandon")
        .json();
    assert!(events(&gone).contains(&"abandoned".to_string()), "{gone}");
    assert_eq!(gone["run"]["outcome"], "abandoned");
    assert_eq!(gone["run"]["token"], token.as_str());

    // A new run: a new token, in the answer of the command that started it.
    let again = c
        .command(&user, "!zone enter crypt_valdris", None)
        .expect("again")
        .json();
    let second = again["run"]["token"].as_str().expect("token");
    assert_ne!(second, token);
    assert_eq!(
        c.get(&format!("/api/runs/{second}")).expect("view").status,
        200
    );
    let latest = c
        .get(&format!("/api/players/{user}/run"))
        .expect("latest")
        .json();
    assert_eq!(latest["run"]["token"], second);
}

#[test]
fn a_players_run_is_only_for_who_may_act_as_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    c.command("@alice:test", "!zone enter crypt_valdris", None)
        .expect("enter");
    let mut anonymous = connect(&server).with_token(None);
    let r = anonymous
        .get("/api/players/@alice:test/run")
        .expect("no token");
    assert_eq!(r.status, 401, "{}", r.text());
    let r = c.get("/api/players/%20/run").expect("blank user");
    assert_eq!(r.status, 422, "{}", r.text());
}

/// Every `$ref` in `v`.
fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref"
                    && let Some(r) = x.as_str()
                {
                    out.insert(r.to_string());
                }
                refs(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[test]
fn the_openapi_document_describes_every_route_and_only_those() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    // Open to all, like the run pages.
    let mut anonymous = connect(&server).with_token(None);
    let r = anonymous.get("/api/openapi.json").expect("document");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let doc = r.json();
    assert_eq!(doc["openapi"], "3.1.0");
    // The whole document: a change to the API shows here, in review, as a change of it.
    insta::assert_json_snapshot!("openapi_document", doc);

    let documented: BTreeSet<&str> = doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .map(String::as_str)
        .collect();
    let served: BTreeSet<&str> = api_paths().into_iter().collect();
    assert_eq!(
        documented, served,
        "the router's paths and the document's differ"
    );

    // Each path answers exactly the methods the document gives it (405 for the others).
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        let concrete = path
            .replace("{zone_id}", "no_such_zone")
            .replace("{token}", "0123456789abcdef0123456789abcdef")
            .replace("{user}", "@nobody:test");
        assert!(
            !concrete.contains('{'),
            "a path parameter not filled in: {path}"
        );
        for method in ["get", "post", "delete", "put", "patch"] {
            if path.ends_with("/events") && method == "get" {
                continue; // a stream of a run that does not exist: 404, checked below
            }
            let r = c
                .request(
                    &method.to_uppercase(),
                    &concrete,
                    &[("content-type", "application/json")],
                    b"{}",
                )
                .expect("request");
            if ops.get(method).is_some() {
                assert_ne!(
                    r.status, 405,
                    "{method} {path} is documented but not served"
                );
                let statuses = ops[method]["responses"].as_object().expect("responses");
                assert!(
                    statuses.contains_key(&r.status.to_string()),
                    "{method} {path} answered {} which the document does not list: {}",
                    r.status,
                    r.text()
                );
            } else {
                assert_eq!(
                    r.status, 405,
                    "{method} {path} is served but not documented"
                );
            }
        }
    }
    let stream = c
        .get("/api/runs/0123456789abcdef0123456789abcdef/events")
        .expect("stream");
    assert_eq!(stream.status, 404);

    // Every reference resolves, and the command's answer names its typed events.
    let mut all = BTreeSet::new();
    refs(&doc, &mut all);
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    for r in &all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a reference outside the components: {r}"));
        assert!(schemas.contains_key(name), "{r} does not resolve");
    }
    for name in [
        "Answer",
        "Event",
        "RunRef",
        "PlayerView",
        "ZoneFile",
        "PlayerRun",
    ] {
        assert!(schemas.contains_key(name), "no schema {name}");
    }
    let events = schemas["Event"].to_string();
    for tag in [
        "entered",
        "moved",
        "fork_offered",
        "key_granted",
        "loot_rolled",
        "xp_gained",
        "level_up",
        "victory",
        "defeated",
        "abandoned",
        "encounter_rolled",
        "host_decided",
    ] {
        assert!(
            events.contains(&format!("\"{tag}\"")),
            "the Event schema lacks {tag}"
        );
    }
}

#[test]
fn published_names_and_extra_are_kept_and_passed_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    // Published files are written to the zones folder: a copy, not the shipped one.
    let zones = copy_zones(dir.path());
    let zone = serde_json::json!({
        "format": 1, "zone_id": "grove", "name": "Grove", "tier": 1, "min_level": 1, "max_level": 3,
        "keys": {"tidewarden_sigil": "the Tidewarden's Sigil"},
        "harvests": {"glowcap": "Glowcap Mushrooms"},
        "nodes": [
            {"node_id": "grove.gate", "kind": "entry", "label": "Gate", "is_entry": true},
            {"node_id": "grove.beds", "kind": "harvest", "label": "Beds",
             "content": {"harvest_ref": "glowcap", "grants_key": "tidewarden_sigil",
                         "extra": {"music": "grove_theme", "phase": 2}}},
            {"node_id": "grove.boss", "kind": "boss", "label": "Old Root", "is_boss": true}
        ],
        "edges": [
            {"from_node": "grove.gate", "to_node": "grove.beds"},
            {"from_node": "grove.beds", "to_node": "grove.boss"}
        ]
    });
    {
        let (server, mut c) = Ctx::sqlite(&db).zones(zones.clone()).spawn();
        let r = c.post_json("/api/zones", &zone).expect("publish");
        assert_eq!(r.status, 200, "{}", r.text());
        server.stop().expect("stops");
    }
    // Another start on the same database: the zone comes back from its tables as written.
    let (_server, mut c) = Ctx::sqlite(&db).zones(zones).spawn();
    let file = c.get("/api/zones/grove").expect("zone").json();
    assert_eq!(file["keys"], zone["keys"], "{file}");
    assert_eq!(file["harvests"], zone["harvests"], "{file}");
    assert_eq!(
        file["nodes"][1]["content"]["extra"],
        zone["nodes"][1]["content"]["extra"]
    );

    let user = "@grower:test";
    c.command(user, "!zone enter grove", None).expect("enter");
    let a = c
        .command(user, "!zone advance", None)
        .expect("advance")
        .json();
    let arrived = a["events"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["event"] == "arrived"))
        .cloned()
        .expect("arrived");
    assert_eq!(
        arrived["extra"],
        serde_json::json!({"music": "grove_theme", "phase": 2})
    );
    let a = c
        .command(user, "!zone advance", None)
        .expect("advance")
        .json();
    let words = a["replies"].to_string();
    assert!(
        words.contains("You find a key: the Tidewarden's Sigil."),
        "{words}"
    );
    assert!(words.contains("Glowcap Mushrooms"), "{words}");
}
