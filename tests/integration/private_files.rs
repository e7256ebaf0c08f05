//! The files that hold secrets — the database's copies (every run link's token is in them),
//! the Matrix session and stores — are private from their first byte and never written
//! through a symlink planted where they go.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use zonegraph_server::{db, private};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
}

/// A SQLite database with one row at `path`.
fn database(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('zgr_secret');")
        .expect("a row");
    conn
}

/// Before: `VACUUM INTO` made `<db>.pre-purge.bak` and the dry run's copy with the process's
/// umask (0644 here). Now both are 0600, and hold the data.
#[test]
fn database_copies_are_private() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("z.db");
    let conn = database(&path);
    let kept = db::keep_a_copy(&conn, "pre-purge")
        .expect("copied")
        .expect("a file database has a copy");
    assert_eq!(kept, dir.path().join("z.db.pre-purge.bak"));
    assert_eq!(mode(&kept), 0o600, "{}", kept.display());
    let again = db::keep_a_copy(&conn, "pre-purge")
        .expect("copied")
        .expect("a copy");
    assert_ne!(again, kept, "a second copy never overwrites the first");
    assert_eq!(mode(&again), 0o600);

    let rehearsal = dir.path().join("rehearsal.db");
    db::copy_database(&path, &rehearsal).expect("copied");
    assert_eq!(mode(&rehearsal), 0o600);
    let x: String = rusqlite::Connection::open(&rehearsal)
        .expect("open the copy")
        .query_row("SELECT x FROM t", [], |r| r.get(0))
        .expect("the row is in the copy");
    assert_eq!(x, "zgr_secret");
}

/// A symlink where a private file goes: the write fails (or, for an atomic write's `.tmp`,
/// the link is removed, not followed), and what the link points at is never written. Before,
/// `private::open` (then `create_private`) opened the link's target.
#[test]
fn a_planted_symlink_is_never_followed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "").expect("victim");
    let empty = |what: &str| {
        assert_eq!(
            std::fs::read(&victim).expect("victim").len(),
            0,
            "{what}: the link's target is untouched"
        );
    };

    // A database copy onto a link to an empty file (Debian's SQLite writes through it; the
    // bundled one refused it already, and now the copy's file is made first, no link followed).
    let path = dir.path().join("z.db");
    let _conn = database(&path);
    let copy = dir.path().join("copy.db");
    std::os::unix::fs::symlink(&victim, &copy).expect("link");
    let err = db::copy_database(&path, &copy).expect_err("refused");
    assert!(format!("{err:#}").contains("copy.db"), "{err:#}");
    empty("copy_database");

    // A private file opened where a link stands (the Matrix lock and store files).
    let lock = dir.path().join("lock");
    std::os::unix::fs::symlink(&victim, &lock).expect("link");
    private::open(&lock).expect_err("refused");
    private::create_new(&lock).expect_err("refused");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert_eq!(mode(&victim), 0o644, "not narrowed through the link either");
    empty("open");

    // An atomic write whose `.tmp` is a planted link.
    let session = dir.path().join("session.json");
    std::os::unix::fs::symlink(&victim, dir.path().join("session.json.tmp")).expect("link");
    private::write(&session, b"{\"access_token\":\"secret\"}").expect("written");
    assert_eq!(
        std::fs::read(&session).expect("read"),
        b"{\"access_token\":\"secret\"}"
    );
    assert_eq!(mode(&session), 0o600);
    empty("write");
}
