//! The game played over HTTP: the Crypt end to end with a perception check passed and one
//! failed, a boss that must be fought and three wounds that end a run, and the README's
//! example host game deciding the encounters.

use std::time::Duration;

use zonegraph_core::rules::EncounterKind;

use super::{ENCOUNTER_FIRST, chapel_roll, secret_roll, token_of, user_where, wins_at, wins_first};
use crate::support::{ADMIN, Ctx, root, say, say1};

#[test]
fn crypt_end_to_end_with_a_perception_pass_and_a_fail() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();

    // WIS 10 (+0): DC 12 into the chapel, DC 15 into the reliquary.
    let finder = user_where("finder", |r| {
        chapel_roll(r) >= 12
            && secret_roll(r) >= 15
            && wins_first(r, "crypt_valdris.boss", EncounterKind::Boss)
    });
    let t = say1(&mut c, &finder, "!zone enter crypt_valdris");
    assert!(t.contains("You enter Crypt of Valdris."), "{t}");
    assert!(t.contains("Room 1 of 6: Crypt Threshold"), "{t}");
    assert!(say1(&mut c, &finder, "!zone advance").contains("Room 2 of 6: Bone Corridor"));
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(t.contains("1. Main Hall (elite)"), "{t}");
    assert!(t.contains("2. Side Chapel (exploration)"), "{t}");
    let t = say1(&mut c, &finder, "!zone status");
    assert!(t.contains("A fork waits for your choice"), "{t}");
    assert!(say1(&mut c, &finder, "!zone go 2").contains("Side Chapel"));
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(
        t.contains("Hidden Reliquary"),
        "the passed check names the secret: {t}"
    );
    assert!(say1(&mut c, &finder, "!zone choose 2").contains("Hidden Reliquary"));
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(t.contains("Valdris's Sanctum"), "{t}");
    let map = say1(&mut c, &finder, "!zone map");
    assert!(map.contains("Hidden Reliquary"), "{map}");
    assert!(
        map.contains(&format!("Run map: {}/run/", server.url())),
        "{map}"
    );
    let t = say1(&mut c, &finder, "!zone advance");
    assert!(t.contains("Victory!"), "{t}");
    let t = say1(&mut c, &finder, "!zone status");
    assert!(t.contains("This run is over: victory."), "{t}");

    let blind = user_where("blind", |r| {
        chapel_roll(r) < 12
            && wins_first(r, "crypt_valdris.main_hall", EncounterKind::Elite)
            && wins_first(r, "crypt_valdris.boss", EncounterKind::Boss)
    });
    say(&mut c, &blind, "!zone enter Crypt of Valdris");
    say(&mut c, &blind, "!zone advance");
    let t = say1(&mut c, &blind, "!zone advance");
    assert!(t.contains("A faint draft from a crack in the wall."), "{t}");
    assert!(
        !t.contains("Side Chapel"),
        "an unnoticed passage is not named: {t}"
    );
    let t = say1(&mut c, &blind, "!zone go 2");
    assert!(
        t.contains(&format!(
            "Option 2 is locked: Perception {} vs DC 12.",
            chapel_roll(&format!("{blind}/1"))
        )),
        "{t}"
    );
    assert!(say1(&mut c, &blind, "!zone go 1").contains("Main Hall"));
    let t = say1(&mut c, &blind, "!zone fight");
    assert!(
        t.contains("Elite check: ") && t.contains("— you win."),
        "{t}"
    );
    assert!(t.contains("Valdris's Sanctum"), "{t}");
    let map = say1(&mut c, &blind, "!zone map");
    assert!(map.contains("◉♛ Valdris's Sanctum"), "{map}");
    assert!(say1(&mut c, &blind, "!zone advance").contains("Victory!"));

    // Refusals come back as replies too: the run ended with the victory.
    assert_eq!(
        say1(&mut c, &blind, "!zone go 1"),
        "This run is over (victory). Start another with !zone enter <zone>."
    );
    let t = say1(&mut c, "@newbie:test", "!zone enter cinder_spire");
    assert!(t.contains("level 13"), "{t}");
    let t = say1(&mut c, "@newbie:test", "!zone enter atlantis");
    assert!(
        t.contains("crypt_valdris"),
        "unknown zones list the known ones: {t}"
    );
    let t = say1(&mut c, "@newbie:test", "!zone dance");
    assert!(t.contains("!zone help"), "{t}");
    // A player's sheet is the admins' to set.
    let t = say1(&mut c, "@newbie:test", "!char wis 18");
    assert!(t.contains("admins"), "{t}");
    let t = say1(&mut c, ADMIN, "!char set @newbie:test wis 18");
    assert!(t.contains("WIS 18"), "{t}");
    let t = say1(&mut c, "@newbie:test", "!zone list");
    assert!(t.contains("Crypt of Valdris"), "{t}");
}

#[test]
fn over_http_a_boss_must_be_fought_and_three_wounds_end_a_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut c) = Ctx::new(dir.path()).spawn();
    const HALL: &str = "crypt_valdris.main_hall";
    const BOSS: &str = "crypt_valdris.boss";

    // The boss wins the first round and loses the second.
    let hero = user_where("hero", |r| {
        wins_at(r, HALL, EncounterKind::Elite, 1)
            && !wins_at(r, BOSS, EncounterKind::Boss, 1)
            && wins_at(r, BOSS, EncounterKind::Boss, 2)
    });
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
    ] {
        say(&mut c, &hero, cmd);
    }
    say(&mut c, &hero, "!zone go 1");
    let t = say1(&mut c, &hero, "!zone fight");
    assert!(t.contains("You gain 40 XP."), "{t}");
    assert!(
        t.contains("The master of this zone awaits in Valdris's Sanctum."),
        "{t}"
    );
    let t = say1(&mut c, &hero, "!zone advance");
    assert!(t.starts_with("Boss check: "), "{t}");
    assert!(t.contains(" vs DC 13 — you lose."), "{t}");
    assert!(t.contains("You are wounded (1 of 3)."), "{t}");
    let t = say1(&mut c, &hero, "!zone status");
    assert!(t.contains("A boss bars the way on"), "{t}");
    assert!(t.contains("Wounds: 1 of 3."), "{t}");
    let t = say1(&mut c, &hero, "!zone fight");
    assert!(t.contains(" vs DC 13 — you win."), "{t}");
    assert!(t.contains("You gain 100 XP."), "{t}");
    assert!(t.contains("Victory!"), "{t}");
    assert!(t.contains("You reach level 2!"), "{t}");
    // Corridor 10 + elite 40 + boss 100, kept on the sheet.
    let t = say1(&mut c, &hero, "!char");
    assert!(
        t.starts_with("Level 2 (150 XP) · STR 15 (+2) · DEX 14 (+2)"),
        "{t}"
    );

    // Three lost rounds at the Main Hall.
    let loser = user_where("loser", |r| {
        (1..=3).all(|a| !wins_at(r, HALL, EncounterKind::Elite, a))
    });
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone go 1",
    ] {
        say(&mut c, &loser, cmd);
    }
    let t = say1(&mut c, &loser, "!zone go 2");
    assert!(t.contains(ENCOUNTER_FIRST), "no way around the fight: {t}");
    say(&mut c, &loser, "!zone fight");
    let t = say1(&mut c, &loser, "!zone advance");
    assert!(t.contains("One more wound ends the run."), "{t}");
    let t = say1(&mut c, &loser, "!zone fight");
    assert!(t.contains("You are wounded (3 of 3)."), "{t}");
    assert!(
        t.contains("You fall in Main Hall. Your run ends in defeat."),
        "{t}"
    );
    let token = token_of(&say1(&mut c, &loser, "!zone map"));
    let v = c.get(&format!("/api/runs/{token}")).expect("view").json();
    assert_eq!(v["view"]["status"]["phase"]["outcome"], "defeat", "{v}");
    // The defeat is stored: another server on the database says the same.
    drop(c);
    server.stop().expect("stops");
    let (_server, mut c) = Ctx::new(dir.path()).spawn();
    let t = say1(&mut c, &loser, "!zone status");
    assert!(t.contains("This run is over: defeat."), "{t}");
    let t = say1(&mut c, &hero, "!char");
    assert!(t.starts_with("Level 2 (150 XP)"), "{t}");
}

/// The guide's example host game (`examples/host.py`, Python's standard library only) run
/// for real: it keeps the sheet (level 3, STR 14) and decides the elite and the boss, its
/// words shown as it sends them; it takes the events (`--events-url`), each checked against
/// its signature with Python's own `hmac`, all of them, in order. Skipped, saying so, where
/// no `python3` is installed.
#[test]
fn the_example_host_game_decides_encounters() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if !python.is_ok_and(|o| o.status.success()) {
        eprintln!("server: python3 not found; examples/host.py was not run");
        return;
    }
    let port = zonegraph_tests::free_port();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _host = Kill(
        std::process::Command::new("python3")
            .arg(root().join("examples/host.py"))
            .env("PORT", port.to_string())
            .env("ZONEGRAPH_HOST_HOOK_TOKEN", "let-me-in")
            .env("ZONEGRAPH_EVENTS_SECRET", "the-example-host-game-secret")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start examples/host.py"),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "examples/host.py did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let hook = zonegraph_server::host::HostHook::new(
        &format!("http://127.0.0.1:{port}"),
        Some("let-me-in".into()),
    )
    .expect("hook");
    let events = zonegraph_server::events_out::EventsOut::new(
        &format!("http://127.0.0.1:{port}/events"),
        "the-example-host-game-secret",
    )
    .expect("events url");
    let (server, mut conn) = Ctx::new(dir.path())
        .with(|c| {
            c.game.host_hook = Some(hook);
            c.events_out = Some(events);
        })
        .spawn();
    let user = "@hosted:test";
    let mut told = Vec::new();
    let mut say1 = |conn: &mut zonegraph_tests::client::Conn, user: &str, text: &str| {
        let r = conn.command(user, text, None).expect("request");
        assert_eq!(r.status, 200, "{text}: {}", r.text());
        let v = r.json();
        told.extend(v["events"].as_array().cloned().unwrap_or_default());
        crate::support::replies(&v)
    };
    // The sheet is the host's.
    let t = say1(&mut conn, user, "!char");
    assert!(t.starts_with("Level 3"), "{t}");
    assert!(t.contains("STR 14"), "{t}");
    say1(&mut conn, user, "!zone enter crypt_valdris");
    let mut seen = String::new();
    for _ in 0..40 {
        let t = say1(&mut conn, user, "!zone advance");
        seen.push_str(&t);
        seen.push('\n');
        if t.contains("This run is over") || t.contains("victory") || t.contains("defeat") {
            break;
        }
        if t.contains("fork") || t.contains("Choose") {
            seen.push_str(&say1(&mut conn, user, "!zone go 1"));
        }
    }
    // The host's own words, as it sent them: a win ("You best the …") or a loss ("… is too
    // much for you this time."), decided by the host, not by zonegraph's dice.
    assert!(
        seen.contains("You best the") || seen.contains("is too much for you this time"),
        "{seen}"
    );
    // Every event reached the host game, signed as Python checks it, in order.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.store.events_waiting().expect("outbox").0 > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the host game refused or missed events"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut host = zonegraph_tests::client::Conn::connect(
        format!("127.0.0.1:{port}").parse().expect("address"),
    )
    .expect("connect to the host game");
    let taken = host.get("/events").expect("the host's events").json();
    let taken: Vec<&serde_json::Value> = taken
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| &e["event"])
        .collect();
    assert!(!told.is_empty());
    assert_eq!(taken, told.iter().collect::<Vec<_>>());
    server.stop().expect("stops");
}
