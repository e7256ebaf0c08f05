//! gogobee's databases at every stage of their schema: `zonegraph migrate` and `serve` carry
//! every row (or name the ones they cannot), the players play on, and gogobee sees our writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use zonegraph_server::cli::migrate;
use zonegraph_server::db;
use zonegraph_server::server::Server;

use super::{CHAPEL, NO_CHOICE};
use crate::support::{self, ADMIN, Ctx, connect, root, say1};

/// gogobee's database at one stage of its schema: `tests/fixtures/gogobee_{stage}.sql`.
fn gogobee_db(dir: &Path, stage: &str) -> PathBuf {
    let path = dir.join(format!("{stage}.db"));
    let conn = rusqlite::Connection::open(&path).expect("db");
    let sql = std::fs::read_to_string(root().join(format!("tests/fixtures/gogobee_{stage}.sql")))
        .expect("fixture");
    conn.execute_batch(&sql).expect("fixture loads");
    path
}

/// A server on gogobee's database at `path`, told gogobee no longer serves zones from it
/// (`--gogobee-stopped`: without it a database with gogobee's run columns is refused).
fn gogobee_ctx(path: &Path) -> Ctx {
    Ctx::sqlite(path).with(|c| c.gogobee_stopped = true)
}

/// Each run id with whether gogobee counts the run active.
fn gogobee_active(path: &Path) -> BTreeMap<String, bool> {
    let conn = rusqlite::Connection::open(path).expect("db");
    let mut st = conn
        .prepare(
            "SELECT run_id, completed_at IS NULL AND abandoned = 0 AND boss_defeated = 0
             FROM dnd_zone_run",
        )
        .expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .collect::<rusqlite::Result<_>>()
        .expect("rows")
}

/// Every row of `dnd_zone_run` and the old game's `dnd_character`, as text.
fn dump_runs(path: &Path) -> Vec<String> {
    dump_tables(path, &["dnd_zone_run", "dnd_character"])
}

/// Every row of `tables`, in row order, as text.
fn dump_tables(path: &Path, tables: &[&str]) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("db");
    let mut out = Vec::new();
    for table in tables {
        let mut st = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
            .expect("query");
        let n = st.column_count();
        let mut rows = st.query([]).expect("rows");
        while let Some(r) = rows.next().expect("row") {
            out.push(
                (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).expect("value")))
                    .collect::<Vec<_>>()
                    .join(" | "),
            );
        }
    }
    out
}

/// What opening one stage of gogobee's database must do.
struct Stage {
    name: &'static str,
    /// Rows that cannot be carried: run id and the reason given.
    stuck: &'static [(&'static str, &'static str)],
    /// An older active run of a player with two.
    superseded: &'static str,
    /// A player waiting at a fork gogobee offered.
    at_fork: Option<&'static str>,
    /// A player in a linear run, and what `!zone status` says.
    linear: Option<(&'static str, &'static str)>,
}

const STAGES: [Stage; 3] = [
    Stage {
        name: "before_graph",
        stuck: &[
            ("g1-dara-a", "zone hollow_barrow is not loaded"),
            (
                "g1-fen-0",
                "zone crypt_valdris is a graph, and current_room 2 names a room only in a zone \
                 given as room_kinds",
            ),
        ],
        superseded: "g1-cato-a",
        at_fork: None,
        linear: Some(("@ash:gogobee.test", "room 4 of 9")),
    },
    Stage {
        name: "dual_write",
        stuck: &[
            (
                "g2-ivy-a",
                "node crypt_valdris.ossuary is not in zone crypt_valdris",
            ),
            ("g2-jo-a", "zone hollow_barrow is not loaded"),
        ],
        superseded: "g2-gus-a",
        at_fork: Some("@fen:gogobee.test"),
        linear: Some(("@ash:gogobee.test", "room 4 of 9")),
    },
    Stage {
        name: "after_purge",
        stuck: &[
            (
                "g3-ivy-a",
                "node crypt_valdris.ossuary is not in zone crypt_valdris",
            ),
            ("g3-jo-a", "zone hollow_barrow is not loaded"),
        ],
        superseded: "g3-gus-a",
        at_fork: Some("@fen:gogobee.test"),
        linear: None,
    },
];

/// `zonegraph migrate` of the binary: its output, asserting exit 0.
fn migrate_cli(path: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .arg("migrate")
        .arg("--db")
        .arg(path)
        .arg("--zones")
        .arg(support::zones())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// No row lost, every run as active or over as gogobee had it (but the superseded one).
fn check_carried(stage: &Stage, path: &Path, before: &BTreeMap<String, bool>) {
    let mut expected = before.clone();
    expected.insert(stage.superseded.to_string(), false);
    assert_eq!(&gogobee_active(path), &expected, "{}", stage.name);
    assert!(before[stage.superseded], "{}: active before", stage.name);
}

/// The players of a stage play on, through the server.
fn check_play(stage: &Stage, server: &Server) {
    let mut c = connect(server);
    if let Some((user, status)) = stage.linear {
        let t = say1(&mut c, user, "!zone status");
        assert!(t.contains(status), "{}: {t}", stage.name);
    }
    if let Some(user) = stage.at_fork {
        let t = say1(&mut c, user, "!zone go 1");
        assert!(t.contains("Main Hall"), "{}: {t}", stage.name);
    }
}

#[test]
fn gogobee_databases_at_every_stage_migrate_without_losing_a_row() {
    for stage in &STAGES {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        let before = gogobee_active(&path);
        let report = migrate_cli(&path);
        let migrated = format!("schema 0 -> {}", zonegraph_server::db::SCHEMA_VERSION);
        assert!(report.contains(&migrated), "{}: {report}", stage.name);
        for (run_id, why) in stage.stuck {
            assert!(
                report.contains(&format!("kept run {run_id} ")) && report.contains(why),
                "{}: {run_id}: {report}",
                stage.name
            );
        }
        assert!(
            report.contains(&format!("abandoned run {} ", stage.superseded)),
            "{}: {report}",
            stage.name
        );
        check_carried(stage, &path, &before);
        if stage.at_fork.is_some() {
            assert!(
                report.contains("carried 1 pending fork"),
                "{}: {report}",
                stage.name
            );
        }

        // A second migrate changes nothing, and still lists what it cannot carry.
        let rows = dump_runs(&path);
        let again = migrate_cli(&path);
        assert_eq!(dump_runs(&path), rows, "{}: {again}", stage.name);
        assert!(again.contains("warmed up 0"), "{}: {again}", stage.name);
        for (run_id, _) in stage.stuck {
            assert!(again.contains(run_id), "{}: {again}", stage.name);
        }

        let server = gogobee_ctx(&path).start();
        check_play(stage, &server);
        server.stop().expect("stops");
        assert_eq!(gogobee_active(&path).len(), before.len(), "{}", stage.name);
    }
}

/// While gogobee's linear run columns are there, `serve` does not claim it can share the
/// database with gogobee: it refuses, says why and what to do, and changes nothing, unless
/// told gogobee has stopped serving zones from it. After the purge it needs no telling.
#[test]
fn serve_refuses_to_share_a_database_gogobee_may_still_serve() {
    for stage in &STAGES {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        let bytes = std::fs::read(&path).expect("read");
        if stage.name == "after_purge" {
            Ctx::sqlite(&path).start().stop().expect("stops");
            continue;
        }
        let err = format!("{:#}", Ctx::sqlite(&path).refused());
        for says in [
            "gogobee's linear run columns",
            "--gogobee-stopped",
            "--purge-legacy",
            "Nothing was changed",
        ] {
            assert!(err.contains(says), "{}: {err}", stage.name);
        }
        assert_eq!(
            std::fs::read(&path).expect("read"),
            bytes,
            "{}: unchanged",
            stage.name
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(
            names.len(),
            1,
            "{}: nothing made beside it: {names:?}",
            stage.name
        );
    }
}

#[test]
fn serve_opens_gogobee_databases_at_every_stage_directly() {
    for stage in &STAGES {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        let before = gogobee_active(&path);
        let server = gogobee_ctx(&path).start();
        // While gogobee's linear columns exist, the start says what sharing cannot do.
        assert_eq!(
            server
                .opened
                .warnings
                .iter()
                .any(|w| w == zonegraph_server::gogobee::carry::GOGOBEE_SHARED),
            stage.name != "after_purge",
            "{}: {:?}",
            stage.name,
            server.opened.warnings
        );
        let warm = &server.opened.warm_up;
        let mut stuck: Vec<(&str, &str)> = warm
            .stuck
            .iter()
            .map(|s| (s.run_id.as_str(), s.why.as_str()))
            .collect();
        stuck.sort_unstable();
        assert_eq!(stuck, stage.stuck, "{}", stage.name);
        assert_eq!(
            warm.abandoned
                .iter()
                .map(|s| s.run_id.as_str())
                .collect::<Vec<_>>(),
            [stage.superseded],
            "{}",
            stage.name
        );
        check_carried(stage, &path, &before);
        check_play(stage, &server);
        server.stop().expect("stops");
        if stage.name == "after_purge" {
            // gogobee's count of rooms entered follows the move through the fork.
            let conn = rusqlite::Connection::open(&path).expect("db");
            let n: i64 = conn
                .query_row(
                    "SELECT rooms_traversed FROM dnd_zone_run WHERE run_id = 'g3-fen-a'",
                    [],
                    |r| r.get(0),
                )
                .expect("rooms_traversed");
            assert_eq!(n, 4);
        }
        // Opening it again changes nothing.
        let rows = dump_runs(&path);
        let server = gogobee_ctx(&path).start();
        server.stop().expect("stops");
        assert_eq!(dump_runs(&path), rows, "{}", stage.name);
    }
}

#[test]
fn a_carried_fork_keeps_gogobees_outcome_and_gogobee_sees_our_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "dual_write");
    let server = gogobee_ctx(&path).start();
    let fen = server
        .store
        .all_runs()
        .expect("runs")
        .into_iter()
        .find(|r| r.run.run_id == "g2-fen-a")
        .expect("fen's run");
    let fork = fen.run.pending_fork.expect("the fork is pending");
    assert_eq!(fork.at.as_str(), "crypt_valdris.fork");
    let open: Vec<(&str, bool)> = fork
        .options
        .iter()
        .map(|o| (o.to_node.as_str(), o.open))
        .collect();
    assert_eq!(
        open,
        [("crypt_valdris.main_hall", true), (CHAPEL, false)],
        "gogobee's unlocked flags, in the zone's menu order"
    );
    assert!(
        fen.run
            .missed_passages
            .contains(&(fork.at.clone(), zonegraph_core::zone::NodeId(CHAPEL.into()))),
        "a failed perception check is a missed passage"
    );
    let mut c = connect(&server);
    // Gus keeps his newer run, past the fork: nothing pending.
    let t = say1(&mut c, "@gus:gogobee.test", "!zone go 1");
    assert!(t.contains(NO_CHOICE), "{t}");
    say1(&mut c, "@gus:gogobee.test", "!zone abandon");
    // Ash's warmed run stands in an elite room (room 4 of 9): it is fought before the run
    // goes on, as in any run (gogobee kept no fight in its rows).
    let t = say1(&mut c, "@ash:gogobee.test", "!zone status");
    assert!(
        t.contains("room 4 of 9") && t.contains("An elite bars the way on"),
        "{t}"
    );
    let t = say1(&mut c, "@ash:gogobee.test", "!zone advance");
    assert!(
        t.contains("Elite check: ") && t.contains(" vs DC 16 — you lose."),
        "{t}"
    );
    // With STR 30 (+10) the next round is won and the run walks on.
    say1(&mut c, ADMIN, "!char set @ash:gogobee.test str 30");
    let t = say1(&mut c, "@ash:gogobee.test", "!zone fight");
    assert!(t.contains(" + 10 vs DC 16 — you win."), "{t}");
    assert!(t.contains("Room 5 of 9"), "{t}");
    // Rows that could not be carried answer, and can be given up.
    for user in ["@ivy:gogobee.test", "@jo:gogobee.test"] {
        say1(&mut c, user, "!zone status");
        let t = say1(&mut c, user, "!zone abandon");
        assert!(t.to_lowercase().contains("abandon"), "{user}: {t}");
    }
    // A new run goes into gogobee's table, with gogobee's columns filled in.
    let t = say1(&mut c, "@jo:gogobee.test", "!zone enter crypt_valdris");
    assert!(t.contains("Crypt Threshold"), "{t}");
    server.stop().expect("stops");
    let active = gogobee_active(&path);
    assert!(
        active
            .iter()
            .any(|(id, &on)| id.starts_with("@jo:gogobee.test/") && on),
        "{active:?}"
    );
    assert!(!active["g2-jo-a"] && !active["g2-ivy-a"], "{active:?}");

    // gogobee's columns say what happened.
    let conn = rusqlite::Connection::open(&path).expect("db");
    let (room, completed, abandoned): (i64, Option<String>, i64) = conn
        .query_row(
            "SELECT current_room, completed_at, abandoned FROM dnd_zone_run
             WHERE run_id = 'g2-ash-a'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("ash");
    assert_eq!((room, completed, abandoned), (4, None, 0));
    let (completed, abandoned): (String, i64) = conn
        .query_row(
            "SELECT completed_at, abandoned FROM dnd_zone_run WHERE run_id = 'g2-gus-b'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("gus");
    assert_eq!(abandoned, 1);
    assert!(
        completed.starts_with("20") && completed.len() == 19,
        "{completed}"
    );
}

#[test]
fn purging_refuses_while_a_gogobee_row_cannot_be_warmed_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "before_graph");
    let args = migrate::Args {
        db: Some(path.clone()),
        from: None,
        to: None,
        zones: Some(support::zones()),
        purge_legacy: true,
        dry_run: false,
    };
    let err = migrate::migrate(&args).expect_err("refuses");
    assert!(
        err.to_string().contains("runs g1-fen-0, g1-dara-a"),
        "{err}"
    );
    let conn = db::open(&path).expect("open");
    let n: i64 = conn
        .query_row("SELECT count(*) FROM dnd_zone_run", [], |r| r.get(0))
        .expect("count");
    assert_eq!(n, 8, "nothing dropped");
    assert!(db::has_legacy_columns(&conn).expect("columns"));
    drop(conn);

    // Once the rows are dealt with (here: removed by the operator), the purge goes through
    // and the server plays on without the old columns.
    let conn = rusqlite::Connection::open(&path).expect("db");
    conn.execute(
        "DELETE FROM dnd_zone_run WHERE run_id IN ('g1-dara-a', 'g1-fen-0')",
        [],
    )
    .expect("delete");
    drop(conn);
    let report = migrate::migrate(&args).expect("purges");
    assert!(report.contains("dropped the legacy columns"), "{report}");
    let report = migrate::migrate(&args).expect("purges again");
    assert!(report.contains("already gone"), "{report}");
    let (_server, mut c) = gogobee_ctx(&path).spawn();
    assert!(say1(&mut c, "@ash:gogobee.test", "!zone advance").contains("Room 5 of 9"));
}

#[test]
fn a_gogobee_row_that_cannot_be_written_is_named_in_the_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "before_graph");
    {
        let mut conn = db::open(&path).expect("open");
        db::migrate(&mut conn).expect("migrate");
        conn.execute_batch(
            "CREATE TRIGGER refuse_bram BEFORE UPDATE OF current_node ON dnd_zone_run
             WHEN OLD.run_id = 'g1-bram-0' BEGIN SELECT RAISE(ABORT, 'bram is read-only'); END;",
        )
        .expect("trigger");
    }
    let err = format!("{:#}", gogobee_ctx(&path).refused());
    assert!(err.contains("run g1-bram-0"), "{err}");
    assert!(err.contains("bram is read-only"), "{err}");
}

/// On gogobee's own DDL (its NOT NULL `total_rooms`, its non-unique `idx_zone_run_active`):
/// the newest run by gogobee's rule (`started_at`) is kept whatever the row order, one active
/// run per player is guarded by an index of our own name, and a new player's first run is
/// written with every column gogobee requires.
#[test]
fn on_gogobees_schema_the_newest_run_is_kept_and_new_runs_are_whole() {
    for stage in STAGES.iter().filter(|s| s.name != "before_graph") {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        {
            // The run started later was written first (a lower rowid).
            let conn = rusqlite::Connection::open(&path).expect("db");
            for (run_id, started) in [("hal-new", "2026-03-01"), ("hal-old", "2026-02-01")] {
                conn.execute(
                    "INSERT INTO dnd_zone_run (run_id, user_id, zone_id, total_rooms, started_at,
                       last_action_at, current_node, visited_nodes)
                     VALUES (?1, '@hal:gogobee.test', 'crypt_valdris', 6, ?2 || ' 00:00:00',
                       ?2 || ' 00:05:00', 'crypt_valdris.corridor',
                       '[\"crypt_valdris.entry\",\"crypt_valdris.corridor\"]')",
                    [run_id, started],
                )
                .expect("insert");
            }
        }
        let server = gogobee_ctx(&path).start();
        let hal: Vec<(&str, &str)> = server
            .opened
            .warm_up
            .abandoned
            .iter()
            .filter(|s| s.user_id == "@hal:gogobee.test")
            .map(|s| (s.run_id.as_str(), s.kept_run_id.as_str()))
            .collect();
        assert_eq!(hal, [("hal-old", "hal-new")], "{}", stage.name);
        // Eight enters of one new player at once: one run, the others told they have one.
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let mut c = connect(&server);
                std::thread::spawn(move || {
                    say1(&mut c, "@new:gogobee.test", "!zone enter crypt_valdris")
                })
            })
            .collect();
        for h in handles {
            h.join().expect("an enter answered");
        }
        server.stop().expect("stops");
        let conn = rusqlite::Connection::open(&path).expect("db");
        let active = gogobee_active(&path);
        assert!(active["hal-new"] && !active["hal-old"], "{}", stage.name);
        let (runs, total): (i64, i64) = conn
            .query_row(
                "SELECT count(*), max(total_rooms) FROM dnd_zone_run
                 WHERE user_id = '@new:gogobee.test'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("new runs");
        let (crypt, _) = zonegraph_core::zone::load(&support::zone_text("crypt_valdris"))
            .expect("the Crypt loads");
        let longest = zonegraph_core::paths::longest_path_len(&crypt).expect("a route") as i64;
        assert_eq!((runs, total), (1, longest), "{}", stage.name);
        let index = |name: &str| -> Option<bool> {
            conn.query_row(
                "SELECT \"unique\" FROM pragma_index_list('dnd_zone_run') WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .ok()
        };
        assert_eq!(index(db::ACTIVE_INDEX), Some(true), "{}", stage.name);
        assert_eq!(
            index("idx_zone_run_active"),
            Some(false),
            "gogobee's index stays"
        );
    }
}

/// gogobee's characters play on: a player's first sheet carries gogobee's level, XP and the
/// scores they chose, and of their items (not those in the vault) the keys a served zone
/// asks for; gogobee's own tables are only read. A character gogobee's rules could not hold
/// (level 0) starts afresh.
#[test]
fn gogobee_characters_keep_their_level_scores_and_keys() {
    for stage in &STAGES {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        let vault = stage.name == "after_purge";
        {
            let conn = rusqlite::Connection::open(&path).expect("db");
            conn.execute_batch(
                "INSERT INTO dnd_character (user_id, dnd_level, dnd_xp, str_score, dex_score,
                   con_score, int_score, wis_score, cha_score, pending_setup)
                 VALUES ('@kay:gogobee.test', 14, 2000, 16, 12, 14, 10, 13, 8, 0),
                        ('@lee:gogobee.test', 0, 0, 8, 8, 8, 8, 8, 8, 1);
                 INSERT INTO adventure_inventory (user_id, name, item_type, tier, value)
                 VALUES ('@kay:gogobee.test', 'Tidewarden_Sigil', 'key', 1, 0),
                        ('@kay:gogobee.test', 'Iron Sword', 'weapon', 1, 10);",
            )
            .expect("a gogobee character");
            if vault {
                conn.execute_batch(
                    "INSERT INTO adventure_inventory (user_id, name, item_type, tier, value,
                       in_vault)
                     VALUES ('@kay:gogobee.test', 'orrery_winding_key', 'key', 1, 0, 1);",
                )
                .expect("a vaulted item");
            }
        }
        let gogobee_rows =
            |path: &Path| dump_tables(path, &["dnd_character", "adventure_inventory"]);
        let before = gogobee_rows(&path);
        let server = gogobee_ctx(&path).start();
        let mut c = connect(&server);
        let sheet = say1(&mut c, "@kay:gogobee.test", "!char");
        assert!(
            // gogobee's 2,000 of level 14's 4,000 toward 15: halfway through level 14 here
            // (7,600 to 9,200).
            sheet.contains("Level 14 (8400 XP)")
                && sheet.contains("STR 16")
                && sheet.contains("WIS 13")
                && sheet.contains("Keys: tidewarden_sigil."),
            "{}: {sheet}",
            stage.name
        );
        let fresh = say1(&mut c, "@lee:gogobee.test", "!char");
        assert!(
            fresh.starts_with("Level 1 ") && fresh.contains("STR 15"),
            "{}: {fresh}",
            stage.name
        );
        server.stop().expect("stops");
        assert_eq!(
            gogobee_rows(&path),
            before,
            "{}: gogobee's rows",
            stage.name
        );
    }
}

/// `zonegraph migrate --dry-run` on gogobee's database at each stage: the report says what
/// the migration would do (the schema step, runs warmed up or abandoned and why, the
/// characters to carry), the database's bytes are unchanged and nothing is left beside it;
/// the real migration then reports the same steps.
#[test]
fn a_dry_run_reports_the_migration_and_writes_nothing() {
    for stage in &STAGES {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = gogobee_db(dir.path(), stage.name);
        let bytes = std::fs::read(&path).expect("read");
        let listing = || {
            let mut names: Vec<_> = std::fs::read_dir(dir.path())
                .expect("dir")
                .map(|e| e.expect("entry").file_name())
                .collect();
            names.sort();
            names
        };
        let files = listing();
        let args = |dry_run| migrate::Args {
            db: Some(path.clone()),
            from: None,
            to: None,
            zones: Some(support::zones()),
            purge_legacy: false,
            dry_run,
        };
        let rehearsal = migrate::migrate(&args(true)).expect("a dry run");
        assert!(
            rehearsal.starts_with(&format!("dry run: {} was only read", path.display())),
            "{rehearsal}"
        );
        assert!(
            rehearsal.contains(&format!("abandoned run {}", stage.superseded)),
            "{rehearsal}"
        );
        for (run_id, why) in stage.stuck {
            assert!(
                rehearsal.contains(&format!("kept run {run_id} ")),
                "{rehearsal}"
            );
            assert!(rehearsal.contains(why), "{rehearsal}");
        }
        assert!(rehearsal.contains("gogobee character"), "{rehearsal}");
        assert!(rehearsal.contains("dnd_zone_run: "), "{rehearsal}");
        assert_eq!(std::fs::read(&path).expect("read"), bytes, "{}", stage.name);
        assert_eq!(listing(), files, "{}: nothing left beside it", stage.name);
        // The migration itself does what the rehearsal said, line for line.
        let done = migrate::migrate(&args(false)).expect("migrates");
        let said: Vec<String> = rehearsal
            .lines()
            .skip(1)
            .map(|l| l.trim().to_string())
            .collect();
        let did: Vec<String> = done.lines().map(|l| l.trim().to_string()).collect();
        assert_eq!(said, did, "{}", stage.name);
    }
}

/// Before the first migration, gogobee's database is copied beside itself as it was (the purge's
/// copy: `import::legacy_runs_of_imported_zones_warm_up_and_the_purge_succeeds`); a database
/// zonegraph made itself is not copied.
#[test]
fn a_copy_is_kept_before_the_first_migration_and_the_purge() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "after_purge");
    let rows = |p: &Path| -> (i64, i64, bool) {
        let conn = rusqlite::Connection::open(p).expect("db");
        let n = conn
            .query_row("SELECT count(*) FROM dnd_zone_run", [], |r| r.get(0))
            .expect("count");
        let v = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .expect("version");
        let cols: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info('dnd_zone_run')")
            .expect("columns")
            .query_map([], |r| r.get(0))
            .expect("columns")
            .collect::<rusqlite::Result<_>>()
            .expect("columns");
        (n, v, cols.iter().any(|c| c == "current_room"))
    };
    let before = rows(&path);
    migrate_cli(&path);
    let first = PathBuf::from(format!("{}.pre-zonegraph.bak", path.display()));
    assert_eq!(
        rows(&first),
        before,
        "the copy is the database as gogobee left it"
    );
    // A second migration has nothing irreversible to do: no second copy.
    migrate_cli(&path);
    let copies = |dir: &Path| {
        std::fs::read_dir(dir)
            .expect("dir")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".bak"))
            })
            .count()
    };
    assert_eq!(copies(dir.path()), 1);
    // A database zonegraph made is not copied.
    let ours = tempfile::tempdir().expect("temp dir");
    let server = Ctx::sqlite(&ours.path().join("z.db")).start();
    server.stop().expect("stops");
    assert_eq!(copies(ours.path()), 0);
}

/// `serve --no-migrate` (issue 24 item 5): a database not at this zonegraph's schema (one of
/// gogobee's, a new file, a new PostgreSQL database) is refused with what to run instead,
/// and nothing of it is changed or copied; one at the schema serves.
#[test]
fn no_migrate_refuses_an_old_schema_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let refused = |db: &str| {
        let mut c = support::serve_command(&root().join("zones"), dir.path());
        let out = c
            // (gogobee is stopped: this is about --no-migrate.)
            .args(["--no-migrate", "--gogobee-stopped", "--db", db])
            .env("ZONEGRAPH_API_TOKEN", support::TOKEN)
            .output()
            .expect("serve runs");
        assert!(!out.status.success(), "{db} was served");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let old = gogobee_db(dir.path(), "dual_write");
    let bytes = std::fs::read(&old).expect("the database");
    let said = refused(&old.to_string_lossy());
    assert!(
        said.contains("--no-migrate") && said.contains("zonegraph migrate"),
        "{said}"
    );
    assert!(
        std::fs::read(&old).expect("the database") == bytes,
        "the file changed"
    );
    let beside: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !beside
            .iter()
            .any(|n| n.contains(".bak") || n.ends_with("-wal")),
        "{beside:?}"
    );
    // A file that is not there is not made.
    let missing = dir.path().join("new.db");
    let said = refused(&missing.to_string_lossy());
    assert!(said.contains("there is no database there"), "{said}");
    assert!(!missing.exists());
    // Once migrated (as `zonegraph migrate` does), it serves.
    let migrated = dir.path().join("migrated.db");
    drop(db::Database::open(&db::DbAt::Sqlite(migrated.clone())).expect("migrates"));
    let mut c = support::serve_command(&root().join("zones"), dir.path());
    c.args(["--no-migrate", "--db"])
        .arg(&migrated)
        .env("ZONEGRAPH_API_TOKEN", support::TOKEN);
    let mut p = support::Process::spawn(c);
    let mut conn = zonegraph_tests::client::Conn::connect(p.addr)
        .expect("connect")
        .with_token(Some(support::TOKEN));
    assert_eq!(conn.get("/healthz").expect("healthz").status, 200);
    let _ = p.child.kill();
    let _ = p.child.wait();
    // A new PostgreSQL database has no schema: refused too.
    if let Some(cluster) = zonegraph_tests::postgres::shared() {
        let said = refused(&cluster.fresh_db());
        assert!(said.contains("no zonegraph schema yet"), "{said}");
    }
}

/// Plays `user` through `zone` until they stand in the room labelled `target`, the run is
/// over, or 60 commands have gone: at each fork the option labelled one of `prefer` (else
/// the first); an encounter is fought. Returns every command and its replies.
fn walk_to(
    c: &mut zonegraph_tests::client::Conn,
    user: &str,
    zone: &str,
    prefer: &[&str],
    target: &str,
) -> String {
    let mut log = say1(c, user, &format!("!zone enter {zone}"));
    for _ in 0..60 {
        let status = say1(c, user, "!zone status");
        if standing_in(&status, target) || status.contains("is over") {
            break;
        }
        let next = if status.contains("!zone fight") {
            "!zone fight".to_string()
        } else if let Some(n) = fork_option(&status, prefer) {
            format!("!zone go {n}")
        } else {
            "!zone advance".to_string()
        };
        log.push_str(&format!("\n> {next}\n{}", say1(c, user, &next)));
    }
    log
}

/// Whether a `!zone status` says the player stands in the room labelled `label`.
fn standing_in(status: &str, label: &str) -> bool {
    status.contains(&format!("You are in {label} ("))
}

/// The number of the open fork option in `status` labelled one of `prefer`, else of the
/// first open one; `None` when no fork is offered.
fn fork_option(status: &str, prefer: &[&str]) -> Option<usize> {
    let options: Vec<(usize, &str)> = status
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.trim_start().split_once(". ")?;
            Some((n.parse().ok()?, rest))
        })
        .collect();
    let open = |rest: &&str| !rest.contains("locked");
    options
        .iter()
        .filter(|(_, rest)| open(rest))
        .find(|(_, rest)| prefer.iter().any(|p| rest.starts_with(p)))
        .or_else(|| options.iter().find(|(_, rest)| open(rest)))
        .map(|(n, _)| *n)
}

/// A character carried from gogobee walks through the locks its sheet opens: level 14 opens
/// the Drowned Belfry's level-5 rope to the tower (a level-3 player is refused it, with the
/// lock's hint), and the Tidewarden Sigil from gogobee's inventory opens the Sunless Deep's
/// sealed vault. With `--gogobee-write-back`, the XP earned is written to gogobee's row on
/// gogobee's curve; a player gogobee does not know is not written anywhere there.
#[test]
fn a_carried_gogobee_character_opens_the_locks_its_sheet_allows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = gogobee_db(dir.path(), "after_purge");
    {
        let conn = rusqlite::Connection::open(&path).expect("db");
        conn.execute_batch(
            "INSERT INTO dnd_character (user_id, class, dnd_level, dnd_xp, str_score, dex_score,
               con_score, int_score, wis_score, cha_score, hp_current, hp_max, pending_setup)
             VALUES ('@kay:gogobee.test', 'fighter', 14, 2000, 16, 12, 14, 10, 13, 8, 100, 116,
               0);
             INSERT INTO adventure_inventory (user_id, name, item_type, tier, value)
             VALUES ('@kay:gogobee.test', 'Tidewarden_Sigil', 'key', 1, 0);",
        )
        .expect("a gogobee character");
    }
    let server = gogobee_ctx(&path)
        .with(|c| c.game.gogobee_write_back = true)
        .start();
    let mut c = connect(&server);
    let kay = "@kay:gogobee.test";
    let tower = ["Tower Landing"];
    let log = walk_to(&mut c, kay, "drowned_belfry", &tower, "Tower Landing");
    assert!(
        log.contains("3. Tower Landing (fork)"),
        "open to level 14: {log}"
    );
    assert!(
        say1(&mut c, kay, "!zone status").contains("You are in Tower Landing ("),
        "{log}"
    );

    // A level-3 player at the same fork: locked, with its hint, and refused.
    let new = "@new:gogobee.test";
    say1(&mut c, ADMIN, &format!("!char set {new} level 3"));
    say1(&mut c, new, "!zone enter drowned_belfry");
    let fork = say1(&mut c, new, "!zone advance");
    assert!(
        fork.contains("3. Tower Landing (locked — A frayed bell rope"),
        "{fork}"
    );
    let refused = say1(&mut c, new, "!zone go 3");
    assert!(!refused.contains("Room 3 of"), "{refused}");
    assert!(say1(&mut c, new, "!zone status").contains("You are in Pew Maze ("));

    // The vault's seal opens for the sigil gogobee's inventory holds.
    say1(&mut c, kay, "!zone abandon");
    let prefer = ["Drowned Archive", "Tidewarden's Vault"];
    let log = walk_to(&mut c, kay, "sunless_deep", &prefer, "Tidewarden's Vault");
    assert!(log.contains("2. Tidewarden's Vault (secret)"), "{log}");
    let status = say1(&mut c, kay, "!zone status");
    assert!(
        status.contains("You are in Tidewarden's Vault ("),
        "{log}\n{status}"
    );

    // Written back: level 14 and the progress the sheet shows, on gogobee's curve.
    let sheet = say1(&mut c, kay, "!char");
    let xp: u32 = sheet
        .split("Level 14 (")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a level-14 sheet: {sheet}"));
    assert!(xp > 8_400, "XP was earned: {sheet}");
    server.stop().expect("stops");
    let conn = rusqlite::Connection::open(&path).expect("db");
    let row: (i64, i64, i64, i64) = conn
        .query_row(
            "SELECT dnd_level, dnd_xp, hp_max, hp_current FROM dnd_character WHERE user_id = ?1",
            [kay],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("kay's row");
    let (_, toward) = zonegraph_server::gogobee::takeover::xp_to_gogobee(14, xp);
    assert_eq!(row, (14, i64::from(toward), 116, 100));
    assert!(toward > 2_000);
    let made: i64 = conn
        .query_row(
            "SELECT count(*) FROM dnd_character WHERE user_id = ?1",
            [new],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(made, 0, "no row is made for a player gogobee does not know");
}
