//! The host-game hook (`serve --host-hook`) against a fake host game on loopback.

use std::time::Duration;

use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use zonegraph_server::host::{HOOK_TIMEOUT, HostHook};

use crate::support::Ctx;

/// A real `serve` against a fake host game: the host's sheet, a slow host (the player is
/// told to try again and nothing changes), then its decision in its own words.
#[test]
fn serve_hands_encounters_to_the_host_game() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let host = rt.block_on(MockServer::start());
    let sheet = serde_json::json!({
        "level": 3,
        "scores": {"str": 12, "dex": 16, "con": 10, "int": 10, "wis": 10, "cha": 10},
        "keys": ["Host Key"]
    });
    let decision = serde_json::json!({
        "outcome": "won",
        "message": "The hall's champion yields to you. (the host game's words)",
        "keys": ["hall_seal"]
    });
    rt.block_on(async {
        Mock::given(method("POST"))
            .and(path("/game/character"))
            .and(header("authorization", "Bearer hook-secret"))
            .respond_with(ResponseTemplate::new(200).set_body_json(&sheet))
            .mount(&host)
            .await;
        // The first decision comes too late; the next one in time.
        Mock::given(method("POST"))
            .and(path("/game/encounter"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(&decision)
                    .set_delay(HOOK_TIMEOUT + Duration::from_millis(500)),
            )
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&host)
            .await;
        Mock::given(method("POST"))
            .and(path("/game/encounter"))
            .and(header("authorization", "Bearer hook-secret"))
            .respond_with(ResponseTemplate::new(200).set_body_json(&decision))
            .with_priority(2)
            .mount(&host)
            .await;
    });

    let dir = tempfile::tempdir().expect("temp dir");
    let hook = HostHook::new(&format!("{}/game/", host.uri()), Some("hook-secret".into()))
        .expect("hook url");
    let (server, mut c) = Ctx::new(dir.path())
        .with(|c| c.game.host_hook = Some(hook))
        .spawn();
    let mut say = |text: &str| -> String {
        let r = c.command("@hero:test", text, None).expect("request");
        assert_eq!(r.status, 200, "{text}: {}", r.text());
        r.json()["replies"]
            .as_array()
            .expect("replies")
            .iter()
            .filter_map(|r| r["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };

    let t = say("!char");
    assert!(t.starts_with("Level 3 · STR 12 (+1) · DEX 16 (+3)"), "{t}");
    assert!(t.contains("Keys: host key."), "{t}");
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
    ] {
        say(cmd);
    }
    let t = say("!zone go 1");
    assert!(t.contains("A fearsome foe guards Main Hall."), "{t}");

    let t = say("!zone fight");
    assert_eq!(
        t,
        "The game master is busy; nothing happened. Try again in a moment."
    );
    let t = say("!zone status");
    assert!(t.contains("An elite bars the way on"), "{t}");
    assert!(!t.contains("Wounds"), "the slow host changed nothing: {t}");

    let t = say("!zone advance");
    assert!(
        t.starts_with("The hall's champion yields to you. (the host game's words)\n"),
        "{t}"
    );
    assert!(t.contains("You find a key: hall_seal."), "{t}");
    assert!(!t.contains("XP"), "the host keeps the sheet: {t}");
    assert!(t.contains("Valdris's Sanctum"), "moved on: {t}");

    let asked = rt.block_on(host.received_requests()).expect("recorded");
    let encounters: Vec<serde_json::Value> = asked
        .iter()
        .filter(|r| r.url.path() == "/game/encounter")
        .map(|r| serde_json::from_slice(&r.body).expect("json body"))
        .collect();
    assert_eq!(encounters.len(), 2, "asked again on the next command");
    let q = &encounters[1];
    assert_eq!(q["user"], "@hero:test");
    assert_eq!(q["zone_id"], "crypt_valdris");
    assert_eq!(q["tier"], 1);
    assert_eq!(q["room"]["node_id"], "crypt_valdris.main_hall");
    assert_eq!(q["room"]["kind"], "elite");
    assert_eq!(q["character"]["level"], 3);
    assert_eq!(q["character"]["keys"], serde_json::json!(["host key"]));
    let token = q["run_token"].as_str().expect("run token");
    let view = c.get(&format!("/api/runs/{token}")).expect("run view");
    assert_eq!(view.status, 200, "the token names the run");
    assert!(
        asked
            .iter()
            .all(|r| r.url.path() != "/game/character" || r.headers.get("authorization").is_some()),
        "the token goes with every call"
    );
    server.stop().expect("stops");
}
