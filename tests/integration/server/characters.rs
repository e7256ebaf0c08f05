//! Character sheets over HTTP: set by the admins (or by each player on a sandbox server),
//! by `zonegraph char` on the database, and written by compare-and-set.

use std::sync::{Arc, Barrier};

use zonegraph_server::store::CharacterRules;

use super::two_stores;
use crate::support::{ADMIN, Ctx, say, say1};

#[test]
fn only_admins_set_character_sheets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path()).spawn();
    let p = "@p:test";
    for text in ["!char level 20", "!char wis 14", "!char key add skull_key"] {
        let t = say1(&mut c, p, text);
        assert!(
            t.contains("set by this server's admins") && t.contains("!char set <you> level <n>"),
            "{text}: {t}"
        );
    }
    assert!(say1(&mut c, p, "!char").starts_with("Level 1 "));
    let t = say1(&mut c, "@other:test", &format!("!char set {p} level 20"));
    assert!(t.contains("Only this server's admins"), "{t}");
    let t = say1(&mut c, ADMIN, &format!("!char set {p} level 20"));
    assert!(t.starts_with("@p:test's sheet: level 20."), "{t}");
    let t = say1(&mut c, ADMIN, &format!("!char set {p} wis 14"));
    assert!(t.contains("WIS 14 (+2)"), "{t}");
    say(&mut c, ADMIN, &format!("!char grant {p} Skull_Key"));
    let t = say1(&mut c, p, "!char");
    assert!(t.starts_with("Level 20 "), "{t}");
    assert!(
        t.contains("WIS 14") && t.contains("Keys: skull_key."),
        "{t}"
    );
    let t = say1(&mut c, ADMIN, &format!("!char revoke {p} skull_key"));
    assert!(
        t.contains("revoked skull_key") && t.contains("Keys: none."),
        "{t}"
    );
    // The key limits hold for admins too.
    let long = "k".repeat(65);
    let t = say1(&mut c, ADMIN, &format!("!char grant {p} {long}"));
    assert!(t.contains("too long"), "{t}");
    // An admin edits their own sheet as well.
    let t = say1(&mut c, ADMIN, "!char level 4");
    assert!(t.starts_with("Level 4 "), "{t}");
}

#[test]
fn a_sandbox_server_lets_players_edit_their_own_sheet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .with(|c| c.characters = CharacterRules::Sandbox)
        .spawn();
    let t = say1(&mut c, "@designer:test", "!char level 5");
    assert!(t.starts_with("Level 5 "), "{t}");
    say(&mut c, "@designer:test", "!char key add skull_key");
    let t = say1(&mut c, "@designer:test", "!char");
    assert!(t.contains("Keys: skull_key."), "{t}");
    // Setting someone else's sheet stays with the admins.
    let t = say1(&mut c, "@designer:test", "!char set @p:test level 5");
    assert!(t.contains("Only this server's admins"), "{t}");
}

#[test]
fn the_char_command_sets_and_shows_a_sheet_on_a_database() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    Ctx::sqlite(&db).start().stop().expect("stops");
    let char_cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
            .arg("char")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, out, log) = char_cli(&["set", "@p:test", "level", "7"]);
    assert!(ok, "{out}{log}");
    assert!(out.contains("level 7"), "{out}");
    assert!(
        log.contains("character @p:test: level 7 (by zonegraph char"),
        "{log}"
    );
    let (ok, _, log) = char_cli(&["grant", "@p:test", "Skull_Key"]);
    assert!(ok, "{log}");
    let (ok, out, _) = char_cli(&["show", "@p:test"]);
    assert!(ok);
    assert!(
        out.starts_with("Level 7 ") && out.contains("Keys: skull_key."),
        "{out}"
    );
    let (ok, _, log) = char_cli(&["set", "@p:test", "level", "21"]);
    assert!(!ok && log.contains("level 21 is outside 1-20"), "{log}");
    // The server sees what the command set.
    let (_server, mut c) = Ctx::sqlite(&db).spawn();
    assert!(say1(&mut c, "@p:test", "!char").starts_with("Level 7 "));
}

#[test]
fn character_writes_are_compare_and_set_between_two_servers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stores, settings) = two_stores(dir.path());
    let user = "@keys:test";
    // At most as many writers as a command's compare-and-set attempts: each loses only to
    // another's win.
    let n = 16;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let store = stores[i % 2].clone();
            let settings = settings.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                store
                    .command(user, &format!("!char key add key{i}"), &settings)
                    .expect("command");
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    let sheet = stores[0]
        .command(user, "!char", &settings)
        .expect("sheet")
        .replies[0]
        .text
        .clone();
    for i in 0..n {
        assert!(sheet.contains(&format!("key{i}")), "key{i} lost: {sheet}");
    }
}
