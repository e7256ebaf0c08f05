//! One suite of storage tests, run against both databases: each check opens a fresh SQLite
//! file and a fresh PostgreSQL database (`zonegraph_tests::postgres`, skipped with a message
//! where PostgreSQL is not installed) and asks the same of the store on each.

use std::sync::{Arc, Barrier};

use zonegraph_core::engine::CharEdit;
use zonegraph_server::store::{CommandSettings, DbAt, Store};
use zonegraph_tests::postgres;

use crate::support::{self, settings, store as open};

/// Runs `check` on a fresh SQLite file, then on a fresh PostgreSQL database.
fn on_both(check: impl Fn(&DbAt, &str)) {
    let dir = tempfile::tempdir().expect("temp dir");
    check(&DbAt::Sqlite(dir.path().join("z.db")), "sqlite");
    if let Some(cluster) = postgres::shared() {
        check(&DbAt::Postgres(cluster.fresh_db()), "postgres");
    }
}

fn say(store: &Store, s: &CommandSettings, user: &str, text: &str) -> String {
    let answer = store.command(user, text, s).expect("the command runs");
    answer
        .replies
        .iter()
        .map(|r| r.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn zones_round_trip_through_the_tables() {
    on_both(|db, name| {
        let store = open(db);
        let paths = zonegraph_server::zones::expand(&[support::zones()]).expect("the zones");
        let files: Vec<(String, zonegraph_core::Zone)> = zonegraph_server::zones::read_all(&paths)
            .expect("the zone files")
            .into_iter()
            .map(|(file, text)| (file, zonegraph_core::zone::load(&text).expect("a zone").0))
            .collect();
        let loaded = store.zones();
        assert_eq!(loaded.len(), files.len(), "{name}");
        for ((file, want), got) in files.iter().zip(loaded.iter()) {
            assert_eq!(got.to_file(), want.to_file(), "{name}: {file}");
        }
        // A second start finds the schema in place and imports again.
        drop(store);
        let again = open(db);
        assert_eq!(again.zones().len(), files.len(), "{name}");
    });
}

#[test]
fn a_run_is_played_stored_and_read_back() {
    on_both(|db, name| {
        let s = settings();
        let user = "@walker:test";
        {
            let store = open(db);
            let t = say(&store, &s, user, "!zone enter crypt_valdris");
            assert!(t.contains("Crypt of Valdris"), "{name}: {t}");
            say(&store, &s, user, "!zone advance");
            say(&store, &s, user, "!zone advance");
            let t = say(&store, &s, user, "!zone status");
            assert!(t.contains("Branching Passage"), "{name}: {t}");
        }
        // Read back by a new store (a restart, or another instance).
        let store = open(db);
        let runs = store.all_runs().expect("runs");
        assert_eq!(runs.len(), 1, "{name}");
        let run = &runs[0];
        assert_eq!(run.user_id, user, "{name}");
        assert_eq!(run.run.visited_nodes.len(), 3, "{name}");
        assert_eq!(
            store.run_owner(&run.link_token).expect("owner").as_deref(),
            Some(user),
            "{name}"
        );
        let view = store
            .run_view(&run.link_token)
            .expect("view")
            .expect("a view");
        assert!(view.status.text.contains("Crypt of Valdris"), "{name}");
        let t = say(&store, &s, user, "!zone enter crypt_valdris");
        assert!(
            t.contains("already"),
            "{name}: one active run per player: {t}"
        );
    });
}

#[test]
fn fifty_concurrent_moves_at_a_fork_apply_once() {
    on_both(|db, name| {
        let store = Arc::new(open(db));
        let s = settings();
        let user = "@racer:test";
        say(&store, &s, user, "!zone enter crypt_valdris");
        say(&store, &s, user, "!zone advance");
        say(&store, &s, user, "!zone advance");
        let n = 50;
        let barrier = Arc::new(Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (store, s, barrier) = (store.clone(), s.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    say(&store, &s, user, "!zone go 1")
                })
            })
            .collect();
        let replies: Vec<String> = handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect();
        let moved = replies.iter().filter(|r| r.contains("Main Hall")).count();
        assert_eq!(moved, 1, "{name}: {replies:#?}");
        let runs = store.all_runs().expect("runs");
        assert_eq!(runs[0].run.visited_nodes.len(), 4, "{name}");
        assert_eq!(
            runs[0].version, 3,
            "{name}: enter, two advances and one move"
        );
    });
}

#[test]
fn the_fork_timeout_queues_one_notice_until_acknowledged() {
    on_both(|db, name| {
        let store = open(db);
        let mut s = settings();
        s.fork_timeout_ms = 1;
        let user = "@idle:test";
        say(&store, &s, user, "!zone enter crypt_valdris");
        say(&store, &s, user, "!zone advance");
        say(&store, &s, user, "!zone advance");
        std::thread::sleep(std::time::Duration::from_millis(5));
        let due = store
            .due_users(zonegraph_server::clock::now_ms(), s.fork_timeout_ms)
            .expect("due");
        assert_eq!(
            due.iter().map(|(u, _)| u.as_str()).collect::<Vec<_>>(),
            [user],
            "{name}"
        );
        assert!(store.sweep_user(user, &s).expect("sweep"), "{name}");
        // Swept once: a second sweep finds nothing to do.
        assert!(!store.sweep_user(user, &s).expect("sweep"), "{name}");
        let notices = store.notices(user).expect("notices");
        assert_eq!(notices.len(), 1, "{name}: {notices:?}");
        assert_eq!(store.users_with_notices().expect("users"), [user], "{name}");
        // Handed out again until acknowledged, then never again.
        assert_eq!(store.notices(user).expect("notices").len(), 1, "{name}");
        let ids = vec![notices[0].id];
        assert_eq!(
            store.ack_notices(user, ids.clone()).expect("ack"),
            1,
            "{name}"
        );
        assert_eq!(store.ack_notices(user, ids).expect("ack"), 0, "{name}");
        assert!(store.notices(user).expect("notices").is_empty(), "{name}");
        // Delivered notices go 30 days after delivery (issue 24 item 8), not before.
        let now = zonegraph_server::clock::now_ms();
        assert_eq!(store.prune_notices(now).expect("prune"), 0, "{name}");
        let later = now + zonegraph_server::store::sweep::KEEP_DELIVERED_NOTICES_MS + 1000;
        assert_eq!(store.prune_notices(later).expect("prune"), 1, "{name}");
        assert_eq!(store.prune_notices(later).expect("prune"), 0, "{name}");
    });
}

#[test]
fn sheet_edits_are_stored_by_compare_and_set() {
    on_both(|db, name| {
        let store = Arc::new(open(db));
        let user = "@hero:test";
        let edit = CharEdit::Grant {
            key: "skull_key".into(),
        };
        let c = store
            .edit_character("@admin:test", user, &edit)
            .expect("edit")
            .expect("granted");
        assert!(c.keys.contains("skull_key"), "{name}");
        // Ten admins raising the level at once: every edit lands, none is lost.
        let handles: Vec<_> = (0..10)
            .map(|i| {
                let store = store.clone();
                std::thread::spawn(move || {
                    let key = CharEdit::Grant {
                        key: format!("key_{i}"),
                    };
                    for _ in 0..20 {
                        match store.edit_character("@admin:test", user, &key) {
                            Ok(r) => return r.is_ok(),
                            // Lost the compare-and-set: try again, as an admin would.
                            Err(_) => continue,
                        }
                    }
                    false
                })
            })
            .collect();
        for h in handles {
            assert!(h.join().expect("thread"), "{name}: an edit never landed");
        }
        let s = settings();
        let t = say(&store, &s, user, "!char");
        for i in 0..10 {
            assert!(t.contains(&format!("key_{i}")), "{name}: {t}");
        }
    });
}

#[test]
fn chat_events_are_claimed_once_and_dm_rooms_remembered() {
    on_both(|db, name| {
        let store = open(db);
        assert!(store.claim_event("$e1", "!room").expect("claim"), "{name}");
        assert!(!store.claim_event("$e1", "!room").expect("claim"), "{name}");
        assert!(store.claim_event("$e2", "!room").expect("claim"), "{name}");
        assert_eq!(
            store.prune_events().expect("prune"),
            0,
            "{name}: nothing old"
        );
        let user = "@dm:test";
        assert_eq!(store.dm_room(user).expect("dm"), None, "{name}");
        store.set_dm_room(user, "!a", true).expect("set");
        store.set_dm_room(user, "!b", true).expect("set");
        assert_eq!(
            store.dm_room(user).expect("dm").as_deref(),
            Some("!b"),
            "{name}"
        );
        store
            .set_dm_room(user, "!a", false)
            .expect("forget another room");
        assert_eq!(
            store.dm_room(user).expect("dm").as_deref(),
            Some("!b"),
            "{name}"
        );
        store.set_dm_room(user, "!b", false).expect("forget");
        assert_eq!(store.dm_room(user).expect("dm"), None, "{name}");
        store.healthy().expect("a write can be made");
    });
}

#[test]
fn postgres_migrations_apply_once_when_instances_start_together() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let db = DbAt::Postgres(url.clone());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || open(&db).zones().len())
        })
        .collect();
    for h in handles {
        assert!(h.join().expect("an instance started") > 0);
    }
    let name = url.rsplit('/').next().expect("a database name");
    let version = cluster.psql(name, "SELECT version FROM zonegraph_schema");
    assert_eq!(
        version.trim(),
        zonegraph_server::db::SCHEMA_VERSION.to_string(),
        "one schema version row, at this build's version"
    );
    // A database a newer zonegraph wrote is refused, and says so.
    cluster.psql(name, "UPDATE zonegraph_schema SET version = 99");
    let err = Store::open_at(&db, &support::zones())
        .map(|_| ())
        .expect_err("a newer schema is refused");
    assert!(
        format!("{err:#}").contains("newer than this zonegraph"),
        "{err:#}"
    );
}

#[test]
fn one_instance_at_a_time_holds_the_matrix_sync_lock() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let db = DbAt::Postgres(cluster.fresh_db());
    let (a, b) = (open(&db), open(&db));
    let bot = "@zonebot:example.org";
    let held = a
        .hold_sync_lock(bot)
        .expect("lock")
        .expect("the first takes it");
    assert!(a.still_holds(&held));
    assert!(
        b.hold_sync_lock(bot).expect("lock").is_none(),
        "the second waits"
    );
    // Another bot account is another lock.
    let other = b.hold_sync_lock("@otherbot:example.org").expect("lock");
    assert!(other.is_some());
    // The holder goes (its connection ends): the other takes over.
    drop(held);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if b.hold_sync_lock(bot).expect("lock").is_some() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never taken over");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue 23 item 7: a command is one transaction of at most three round trips to PostgreSQL
/// (its reads sent together with the BEGIN, its compare-and-sets together, the commit),
/// counted by the store's connection as it waits on each. Statements are prepared once per
/// connection: a warm-up run goes first, and preparing is counted apart.
#[test]
fn a_command_costs_at_most_three_round_trips_on_postgres() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let store = open(&DbAt::Postgres(cluster.fresh_db()));
    let s = settings();
    let run = [
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone go 1",
        "!zone advance",
        "!zone advance",
        "!zone status",
        "!zone abandon",
        "!zone enter crypt_valdris",
    ];
    for user in ["@warm1:test", "@warm2:test"] {
        for cmd in run {
            say(&store, &s, user, cmd);
        }
    }
    let mut costs = Vec::new();
    for cmd in run {
        let before = store.round_trips().expect("PostgreSQL counts round trips");
        let said = say(&store, &s, "@counted:test", cmd);
        let after = store.round_trips().expect("PostgreSQL counts round trips");
        costs.push((
            cmd,
            after.waited - before.waited,
            after.prepared - before.prepared,
            said,
        ));
    }
    // Preparing is once per statement and pooled connection, and which connection a command
    // gets is the pool's choice: it is counted apart, and not held to a number.
    for (cmd, waited, prepared, said) in &costs {
        assert!(
            *waited <= 3,
            "{cmd}: {waited} round trips (and {prepared} statements prepared) ({said})"
        );
    }
    eprintln!(
        "round trips per command: {:?}",
        costs.iter().map(|(c, w, ..)| (*c, *w)).collect::<Vec<_>>()
    );
    // The count is of real work: a command that changes the run reads, writes and commits.
    let (_, moved, ..) = costs[1];
    assert_eq!(moved, 3, "{costs:#?}");
    // One that changes nothing only reads.
    let (_, status, ..) = costs[6];
    assert_eq!(status, 1, "{costs:#?}");
}

/// Issue 24 item 8: a player's ended runs past their newest 20 leave the run table for the
/// history, which keeps what statistics need; the newest stay (their links answer), the
/// active run is never touched, and a second pass moves nothing.
#[test]
fn old_ended_runs_move_to_the_history() {
    on_both(|db, name| {
        let store = open(db);
        let s = settings();
        let user = "@veteran:test";
        for _ in 0..25 {
            say(&store, &s, user, "!zone enter crypt_valdris");
            say(&store, &s, user, "!zone advance");
            say(&store, &s, user, "!zone abandon");
        }
        say(&store, &s, user, "!zone enter crypt_valdris");
        let runs = || {
            store
                .all_runs()
                .expect("runs")
                .into_iter()
                .filter(|r| r.user_id == user)
                .collect::<Vec<_>>()
        };
        assert_eq!(runs().len(), 26, "{name}");
        let newest_ended = runs()[24].link_token.clone();
        let now = zonegraph_server::clock::now_ms();
        // At most 3 a pass, then the rest.
        assert_eq!(store.archive_runs(3, now).expect("archive"), 3, "{name}");
        assert_eq!(store.archive_runs(1000, now).expect("archive"), 2, "{name}");
        assert_eq!(store.archive_runs(1000, now).expect("archive"), 0, "{name}");
        let left = runs();
        assert_eq!(left.len(), 21, "{name}");
        assert_eq!(
            left.iter().filter(|r| r.run.outcome.is_none()).count(),
            1,
            "{name}: the active run stays"
        );
        assert!(
            store.run_view(&newest_ended).expect("view").is_some(),
            "{name}"
        );
        let t = say(&store, &s, user, "!zone advance");
        assert!(!t.is_empty(), "{name}");
        assert_eq!(store.history_count(user).expect("history"), 5, "{name}");
    });
}

#[test]
fn the_outbox_gives_events_up_to_its_dead_letters_and_the_next_goes_on() {
    use zonegraph_server::db::{DeadCause, OutboxLimits, Sent};
    on_both(|db, name| {
        let mut store = open(db);
        store.set_events_out(Some(OutboxLimits {
            per_player: 3,
            total: 4,
            ..OutboxLimits::default()
        }));
        let s = settings();
        let events = |user: &str, texts: &[&str]| -> usize {
            texts
                .iter()
                .map(|t| {
                    store
                        .command(user, t, &s)
                        .expect("the command runs")
                        .events
                        .len()
                })
                .sum()
        };
        // Ada's queue keeps her newest three; the older are shed, the commands kept.
        let ada = events(
            "@ada:test",
            &[
                "!zone enter crypt_valdris",
                "!zone advance",
                "!zone advance",
            ],
        );
        assert!(ada > 3, "{name}: {ada}");
        assert_eq!(store.events_waiting().expect("waiting").0, 3, "{name}");
        // Her oldest is refused for good: given up, her next is due at once.
        let head = store.claim_due_events(10).expect("due");
        assert_eq!(head.len(), 1, "{name}");
        let refused = Sent::Dead {
            cause: DeadCause::Refused,
            error: "the receiver answered 400 Bad Request".into(),
        };
        store.event_sent(head[0].id, refused).expect("given up");
        let next = store.claim_due_events(10).expect("due");
        assert_eq!(next.len(), 1, "{name}");
        assert!(next[0].id > head[0].id, "{name}");
        // Bo's three and Ada's two are over the total of four: the oldest goes.
        let bo = events("@bo:test", &["!zone enter crypt_valdris", "!zone advance"]);
        assert!(bo >= 3, "{name}: {bo}");
        let now = zonegraph_server::clock::now_ms();
        assert_eq!(store.shed_events_out(now).expect("shed"), 1, "{name}");
        assert_eq!(store.events_waiting().expect("waiting").0, 4, "{name}");
        // As the metrics read it: as many waiting, the oldest queued a moment ago.
        let (waiting, age_ms) = store.events_outbox().expect("read").expect("an outbox");
        assert_eq!(waiting, 4, "{name}");
        assert!((0..60_000).contains(&age_ms), "{name}: {age_ms}");

        let dead = store.dead_events(100).expect("dead letters");
        let causes = |cause| dead.iter().filter(|d| d.cause == cause).count();
        assert_eq!(causes(DeadCause::PlayerCap), ada - 3 + bo - 3, "{name}");
        assert_eq!(causes(DeadCause::Refused), 1, "{name}");
        assert_eq!(causes(DeadCause::TotalCap), 1, "{name}");
        let given_up = dead.iter().find(|d| d.cause == DeadCause::Refused);
        let given_up = given_up.expect("the refused one");
        assert_eq!(
            (
                given_up.event.id,
                given_up.event.attempts,
                given_up.event.user.as_str()
            ),
            (head[0].id, 1, "@ada:test"),
            "{name}"
        );
        assert_eq!(given_up.last_error, "the receiver answered 400 Bad Request");
        let counted: i64 = store
            .events_given_up(0, now + 1)
            .expect("counted")
            .iter()
            .map(|(_, n)| n)
            .sum();
        assert_eq!(
            counted,
            i64::try_from(dead.len()).expect("a count"),
            "{name}"
        );
        // Kept 30 days, then pruned.
        store.prune_events_out(now).expect("pruned");
        assert_eq!(
            store.dead_events(100).expect("dead").len(),
            dead.len(),
            "{name}"
        );
        store
            .prune_events_out(now + 31 * 24 * 3600 * 1000)
            .expect("pruned");
        assert!(store.dead_events(100).expect("dead").is_empty(), "{name}");
    });
}
