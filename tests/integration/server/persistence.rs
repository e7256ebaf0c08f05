//! What the server stores survives: a restart, fifty racing moves, a SIGKILL under load, two
//! servers on one database, and a run's row read back exactly.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use zonegraph_core::rules::EncounterKind;
use zonegraph_server::db;
use zonegraph_tests::client::Conn;

use super::{ENCOUNTER_FIRST, NO_CHOICE, spawn_process, token_of, two_stores, visited_ids};
use crate::support::{ADMIN, Ctx, TOKEN, connect, say, say1};

#[test]
fn runs_and_characters_survive_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("z.db");
    let user = "@restart:test";
    {
        let (server, mut c) = Ctx::sqlite(&db).spawn();
        say(&mut c, ADMIN, &format!("!char set {user} level 3"));
        say(&mut c, ADMIN, &format!("!char grant {user} Skull_Key"));
        say(&mut c, user, "!zone enter crypt_valdris");
        say(&mut c, user, "!zone advance");
        say(&mut c, user, "!zone advance");
        server.stop().expect("stops");
    }
    let (_server, mut c) = Ctx::sqlite(&db).spawn();
    let t = say1(&mut c, user, "!zone status");
    assert!(t.contains("You are in Branching Passage"), "{t}");
    assert!(t.contains("Keys: Skull Key."), "{t}");
    let t = say1(&mut c, user, "!char");
    assert!(t.contains("3"), "{t}");
    assert!(say1(&mut c, user, "!zone go 1").contains("Main Hall"));
    let t = say1(&mut c, user, "!zone enter crypt_valdris");
    assert!(t.contains("already"), "one active run per player: {t}");
}

#[test]
fn fifty_concurrent_go_1_apply_exactly_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path()).start();
    let user = "@racer:test";
    let mut c = connect(&server);
    say(&mut c, user, "!zone enter crypt_valdris");
    say(&mut c, user, "!zone advance");
    say(&mut c, user, "!zone advance");
    let token = token_of(&say1(&mut c, user, "!zone map"));

    let n = 50;
    let barrier = Arc::new(Barrier::new(n));
    let addr = server.addr;
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut c = Conn::connect(addr)
                    .expect("connect")
                    .with_token(Some(TOKEN));
                barrier.wait();
                say1(&mut c, user, "!zone go 1")
            })
        })
        .collect();
    let replies: Vec<String> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    let moved = replies.iter().filter(|r| r.contains("Main Hall")).count();
    let refused = replies
        .iter()
        .filter(|r| r.contains(NO_CHOICE) || r.contains(ENCOUNTER_FIRST))
        .count();
    assert_eq!((moved, refused), (1, n - 1), "{replies:#?}");

    let view = c
        .get(&format!("/api/runs/{token}"))
        .expect("run view")
        .json();
    let visited = visited_ids(&view);
    assert_eq!(
        visited,
        [
            "crypt_valdris.entry",
            "crypt_valdris.corridor",
            "crypt_valdris.fork",
            "crypt_valdris.main_hall"
        ]
    );
}

/// The Crypt played by `go 1`: the opening moves, then `!zone advance` (which fights the
/// elite and the boss, as often as the dice need) until the run ends, at most
/// [`MAX_ADVANCES`] times; a run still going then is abandoned.
const OPENING: &[&str] = &[
    "!zone enter crypt_valdris",
    "!zone advance",
    "!zone advance",
    "!zone go 1",
];
const MAX_ADVANCES: usize = 12;

#[test]
fn sigkill_mid_load_loses_no_acknowledged_move() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let mut p = spawn_process(&db_path);
    let addr = p.addr;
    let token = p.token.clone();
    let players = 12;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Per player: (link token of each run, acknowledged visited count of that run).
    type Acks = Vec<(String, usize, bool)>;
    let handles: Vec<std::thread::JoinHandle<Acks>> = (0..players)
        .map(|i| {
            let stop = stop.clone();
            let acked = acked.clone();
            let token = token.clone();
            std::thread::spawn(move || {
                let user = format!("@load{i}:test");
                let mut acks: Acks = Vec::new();
                let Ok(c) = Conn::connect(addr) else {
                    return acks;
                };
                let mut c = c.with_token(Some(&token));
                'outer: while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let script = OPENING
                        .iter()
                        .copied()
                        .chain(std::iter::repeat_n("!zone advance", MAX_ADVANCES))
                        .chain(["!zone abandon"]);
                    for (step, cmd) in script.enumerate() {
                        let Ok(r) = c.command(&user, cmd, None) else {
                            break 'outer;
                        };
                        if r.status != 200 {
                            break 'outer;
                        }
                        acked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let text = r.json()["replies"][0]["text"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string();
                        if step == 0 {
                            let Ok(m) = c.command(&user, "!zone map", None) else {
                                break 'outer;
                            };
                            let map = m.json()["replies"][0]["text"]
                                .as_str()
                                .unwrap_or_default()
                                .to_string();
                            acks.push((token_of(&map), 1, false));
                        } else if let Some(last) = acks.last_mut() {
                            if let Some(n) = zonegraph_tests::room_told(&text) {
                                last.1 = last.1.max(n);
                            }
                            last.2 = text.contains("Victory!");
                        }
                        if text.contains("Victory!")
                            || text.contains("defeat")
                            || text.contains("You abandon")
                        {
                            break;
                        }
                    }
                }
                acks
            })
        })
        .collect();
    // Kill in the middle of the load: once 300 commands were acknowledged (or after 30 s on
    // a very slow machine), while every player keeps sending.
    let until = Instant::now() + Duration::from_secs(30);
    while acked.load(std::sync::atomic::Ordering::Relaxed) < 300 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    p.child.kill().expect("SIGKILL"); // std's kill is SIGKILL on Unix
    let _ = p.child.wait();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let acks: Vec<Acks> = handles
        .into_iter()
        .map(|h| h.join().expect("player thread"))
        .collect();
    let total: usize = acks.iter().map(Vec::len).sum();
    eprintln!("sigkill: {total} runs acknowledged before the kill");
    assert!(
        total >= players,
        "the load ran before the kill: {total} runs"
    );

    let mut p = spawn_process(&db_path);
    let mut c = Conn::connect(p.addr)
        .expect("connect")
        .with_token(Some(&p.token));
    for (i, runs) in acks.iter().enumerate() {
        for (token, visited, won) in runs {
            let v = c.get(&format!("/api/runs/{token}")).expect("view");
            assert_eq!(v.status, 200, "run {token} of player {i} loads");
            let v = v.json();
            let have = visited_ids(&v).len();
            assert!(
                have >= *visited,
                "player {i}: acknowledged {visited} rooms, stored {have}"
            );
            if *won {
                assert_eq!(
                    v["view"]["status"]["phase"]["outcome"], "victory",
                    "player {i}"
                );
            }
        }
        if !runs.is_empty() {
            let t = say1(&mut c, &format!("@load{i}:test"), "!zone status");
            assert!(t.contains("Crypt of Valdris"), "{t}");
        }
    }
    let _ = p.child.kill();
    let _ = p.child.wait();
    // Every row still reads as a run.
    let conn = db::open(&db_path).expect("open");
    let runs = lite(&conn).all_runs().expect("every row parses");
    assert!(
        runs.len() >= total,
        "{} rows for {total} acknowledged runs",
        runs.len()
    );
}

#[test]
fn the_compare_and_set_holds_between_two_servers_on_one_database() {
    // Two stores on one file are two writers with no lock in common (two processes, or the
    // sweeper of one and the commands of another): only the row's version keeps them honest.
    let dir = tempfile::tempdir().expect("temp dir");
    let (stores, settings) = two_stores(dir.path());
    let user = "@twice:test";
    for cmd in [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
    ] {
        stores[0].command(user, cmd, &settings).expect("command");
    }
    let n = 50;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let store = stores[i % 2].clone();
            let settings = settings.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let answer = store
                    .command(user, "!zone go 1", &settings)
                    .expect("command");
                answer
                    .replies
                    .iter()
                    .map(|r| r.text.clone())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        })
        .collect();
    let replies: Vec<String> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    let moved = replies.iter().filter(|r| r.contains("Main Hall")).count();
    let refused = replies
        .iter()
        .filter(|r| r.contains(NO_CHOICE) || r.contains(ENCOUNTER_FIRST))
        .count();
    assert_eq!((moved, refused), (1, n - 1), "{replies:#?}");
    let runs = stores[1].all_runs().expect("runs");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run.visited_nodes.len(), 4);
    assert_eq!(
        runs[0].version, 3,
        "enter, advance, advance, go: three updates"
    );
}

#[test]
fn a_run_round_trips_through_its_row_exactly() {
    use zonegraph_core::engine::{
        Check, EncounterCheck, ForkOption, PendingEncounter, PendingFork, Run,
    };
    use zonegraph_core::zone::NodeId;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut conn = db::open(&dir.path().join("z.db")).expect("db");
    db::migrate(&mut conn).expect("migrate");
    let run = Run {
        run_id: "r\"1'".into(),
        zone_id: "sunless_deep".into(),
        current_node: NodeId("sunless_deep.gate".into()),
        visited_nodes: vec![NodeId("a".into()), NodeId("b".into())],
        pending_fork: Some(PendingFork {
            at: NodeId("b".into()),
            created_at: 42,
            options: vec![ForkOption {
                to_node: NodeId("c".into()),
                open: false,
                check: Check::PerceptionCheck {
                    d20: 3,
                    modifier: -1,
                    dc: 12,
                },
                revealed: true,
            }],
        }),
        // The way the run went at a fork it left, and the level it started at.
        forks_met: vec![zonegraph_core::engine::MetFork {
            at: NodeId("a".into()),
            options: vec![zonegraph_core::engine::ForkOption {
                to_node: NodeId("b".into()),
                open: true,
                check: zonegraph_core::engine::Check::PerceptionCheck {
                    d20: 14,
                    modifier: 1,
                    dc: 12,
                },
                revealed: false,
            }],
            taken: 0,
            picked: true,
        }],
        level: 7,
        cleared_regions: ["upper".to_string()].into(),
        harvested: [(NodeId("a".into()), "moss".to_string())].into(),
        keys_granted: ["skull_key".to_string()].into(),
        revealed_secrets: [NodeId("s".into())].into(),
        missed_passages: [(NodeId("b".into()), NodeId("c".into()))].into(),
        encounter: Some(PendingEncounter {
            at: NodeId("b".into()),
            kind: EncounterKind::Elite,
            attempts: 2,
        }),
        wounds: 2,
        xp_earned: 70,
        loot: [NodeId("a".into())].into(),
        last_check: Some(EncounterCheck {
            node: NodeId("b".into()),
            kind: EncounterKind::Elite,
            attempt: 2,
            d20: 4,
            modifier: 2,
            dc: 12,
            won: false,
        }),
        started_at: 1,
        last_action_at: 2,
        completed_at: Some(3),
        boss_defeated: true,
        abandoned: false,
        outcome: Some(zonegraph_core::Outcome::Victory),
        visited_index: Default::default(),
    };
    // The encounter state, the forks met and the starting level ride in `node_choices`, with
    // or without a fork beside it.
    for r in [
        Run {
            pending_fork: None,
            run_id: "no-fork".into(),
            ..run.clone()
        },
        Run {
            pending_fork: None,
            encounter: None,
            wounds: 0,
            xp_earned: 0,
            loot: Default::default(),
            last_check: None,
            forks_met: Vec::new(),
            level: 0,
            run_id: "plain".into(),
            ..run.clone()
        },
    ] {
        let tx = conn.transaction().expect("tx");
        let stored = lite(&tx)
            .insert_run("@v:test", &r, 6, None)
            .expect("insert")
            .expect("no active run in the way");
        tx.commit().expect("commit");
        let back = lite(&conn)
            .run_by_token(&stored.link_token)
            .expect("read")
            .expect("found");
        assert_eq!(back.run, r);
        let choices: String = conn
            .query_row(
                "SELECT node_choices FROM dnd_zone_run WHERE run_id = ?1",
                [&r.run_id],
                |row| row.get(0),
            )
            .expect("row");
        if r.run_id == "plain" {
            assert_eq!(
                choices, "{}",
                "a run without encounter state reads as before"
            );
        }
    }
    let tx = conn.transaction().expect("tx");
    let stored = lite(&tx)
        .insert_run("@u:test", &run, 6, None)
        .expect("insert")
        .expect("no active run in the way");
    tx.commit().expect("commit");
    let back = lite(&conn)
        .run_by_token(&stored.link_token)
        .expect("read")
        .expect("found");
    assert_eq!(back.run, run);
    let tx = conn.transaction().expect("tx");
    assert!(
        lite(&tx)
            .update_run_cas(back.id, back.version, &run)
            .expect("cas")
    );
    assert!(
        !lite(&tx)
            .update_run_cas(back.id, back.version, &run)
            .expect("cas"),
        "a stale version loses"
    );
}

/// The store's transaction on a bare SQLite connection (no gogobee columns).
fn lite(conn: &rusqlite::Connection) -> db::Tx<'_> {
    db::Tx::new(conn, db::LegacyColumns::default())
}

/// The database holds every run-link token: a new one, and its `-wal` and `-shm` files, can
/// be read by their owner only.
#[cfg(unix)]
#[test]
fn a_new_database_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("z.db");
    let (server, mut c) = Ctx::sqlite(&path).spawn();
    say1(&mut c, "@p:test", "!zone enter crypt_valdris");
    for suffix in ["", "-wal", "-shm"] {
        let file = dir.path().join(format!("z.db{suffix}"));
        let mode = std::fs::metadata(&file)
            .expect("exists")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{}: {mode:o}", file.display());
    }
    server.stop().expect("stops");
}
