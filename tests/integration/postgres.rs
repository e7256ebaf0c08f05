//! Several `zonegraph serve` instances on one PostgreSQL database (skipped with a message
//! where PostgreSQL is not installed): a race split across instances applies once, the fork
//! timeout fires once, a zone published on one is served by the other, and a database
//! restart leaves every instance answering again by itself, and insight and review on one
//! read the runs played on the other.

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use zonegraph_server::server::Server;
use zonegraph_server::store::DbAt;
use zonegraph_tests::client::Conn;
use zonegraph_tests::postgres::{self, Cluster};
use zonegraph_tests::room_told;

use crate::support::{self, Ctx, Process, TOKEN, connect, replies, take_notices as notices};

/// An instance on `url` with its own copy of the shipped zones in `dir`.
fn instance(url: &str, dir: &Path, fork_timeout: Duration) -> Server {
    Ctx::postgres(url, dir)
        .zones(support::copy_zones(dir))
        .fork_timeout(fork_timeout)
        .start()
}

/// The reply texts of one command, one a line, asserting a 200.
fn say(c: &mut Conn, user: &str, text: &str) -> String {
    let r = c.command(user, text, None).expect("request");
    assert_eq!(r.status, 200, "{text}: {}", r.text());
    replies(&r.json())
}

#[test]
fn two_instances_share_one_database() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let a = instance(&url, &dir.path().join("a"), Duration::from_secs(3600));
    let b = instance(&url, &dir.path().join("b"), Duration::from_secs(3600));
    let (mut ca, mut cb) = (connect(&a), connect(&b));

    // One player's commands go to either instance: one run, one story.
    let user = "@racer:test";
    say(&mut ca, user, "!zone enter crypt_valdris");
    say(&mut cb, user, "!zone advance");
    let t = say(&mut ca, user, "!zone advance");
    assert!(t.contains("Branching Passage"), "{t}");
    let t = say(&mut cb, user, "!zone enter crypt_valdris");
    assert!(
        t.contains("already"),
        "one active run across instances: {t}"
    );

    // Fifty `!zone go 1` at once, split across the two: exactly one moves.
    let n = 50;
    let barrier = Arc::new(Barrier::new(n));
    let addrs = [a.addr, b.addr];
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (barrier, addr) = (barrier.clone(), addrs[i % 2]);
            std::thread::spawn(move || {
                let mut c = Conn::connect(addr)
                    .expect("connect")
                    .with_token(Some(TOKEN));
                barrier.wait();
                let r = c.command(user, "!zone go 1", None).expect("request");
                assert_eq!(r.status, 200, "{}", r.text());
                replies(&r.json())
            })
        })
        .collect();
    let all: Vec<String> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    let moved = all.iter().filter(|r| r.contains("Main Hall")).count();
    assert_eq!(moved, 1, "{all:#?}");

    // A zone published on one instance is served by the other (within 2 s: see world.rs).
    let zone = support::zone_text("crypt_valdris")
        .replace("\"crypt_valdris", "\"crypt_copy")
        .replace("Crypt of Valdris", "Copied Crypt");
    let r = ca
        .request(
            "POST",
            "/api/zones",
            &[("content-type", "application/json")],
            zone.as_bytes(),
        )
        .expect("publish");
    assert_eq!(r.status, 200, "{}", r.text());
    let deadline = Instant::now() + Duration::from_secs(2);
    while !cb
        .get("/api/zones")
        .expect("zones")
        .text()
        .contains("crypt_copy")
    {
        assert!(
            Instant::now() < deadline,
            "B does not serve the published zone"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = say(&mut cb, "@visitor:test", "!zone enter crypt_copy");
    assert!(t.contains("Copied Crypt"), "{t}");
}

#[test]
fn the_fork_timeout_fires_once_under_two_instances() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let timeout = Duration::from_millis(300);
    let a = instance(&url, &dir.path().join("a"), timeout);
    let b = instance(&url, &dir.path().join("b"), timeout);
    let (mut ca, mut cb) = (connect(&a), connect(&b));
    let users: Vec<String> = (0..10).map(|i| format!("@idle{i}:test")).collect();
    for u in &users {
        say(&mut ca, u, "!zone enter crypt_valdris");
        say(&mut ca, u, "!zone advance");
        say(&mut ca, u, "!zone advance");
    }
    // Both sweepers run every 50 ms; each fork is picked once, with one notice.
    let deadline = Instant::now() + Duration::from_secs(20);
    for u in &users {
        let list = loop {
            let list = notices(&mut cb, u);
            if !list.is_empty() || Instant::now() > deadline {
                break list;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(list.len(), 1, "{u}: {list:?}");
    }
    // And no second notice comes later.
    std::thread::sleep(Duration::from_millis(500));
    for u in &users {
        assert_eq!(notices(&mut ca, u).len(), 1, "{u}");
        let t = say(&mut cb, u, "!zone status");
        assert!(t.contains("Main Hall"), "{u}: {t}");
    }
}

#[test]
fn a_database_restart_leaves_the_instance_answering_again() {
    if !postgres::installed() {
        eprintln!("postgres: not installed; skipped");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    // A cluster of its own: this test stops it.
    let cluster = Cluster::start(&dir.path().join("pg"));
    cluster.psql("postgres", "CREATE DATABASE restart");
    let a = instance(
        &cluster.url("restart"),
        dir.path(),
        Duration::from_secs(3600),
    );
    let mut c = connect(&a);
    say(&mut c, "@before:test", "!zone enter crypt_valdris");
    let held = a
        .store
        .hold_sync_lock("@bot:test")
        .expect("lock")
        .expect("taken");

    // Players keep coming while the database restarts: each is answered 200 (and their run
    // is stored) or 503 (try again); never anything else.
    let addr = a.addr;
    let load = std::thread::spawn(move || {
        let mut acknowledged = Vec::new();
        let mut unavailable = 0;
        for i in 0..400 {
            let user = format!("@p{i}:test");
            let mut c = Conn::connect(addr)
                .expect("connect")
                .with_token(Some(TOKEN));
            let r = c
                .command(&user, "!zone enter crypt_valdris", None)
                .expect("request");
            match r.status {
                200 => acknowledged.push(user),
                503 => unavailable += 1,
                s => panic!("{user}: {s} {}", r.text()),
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        (acknowledged, unavailable)
    });
    std::thread::sleep(Duration::from_millis(500));
    cluster.restart();
    let (acknowledged, unavailable) = load.join().expect("load");
    eprintln!(
        "postgres restart: {} commands acknowledged, {unavailable} answered 503",
        acknowledged.len()
    );
    // Answering again by itself, within a few seconds. (A new connection: the server closes
    // one left idle past its header-read timeout, as HTTP/1.1 lets it.)
    let mut c = connect(&a);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = c
            .command("@after:test", "!zone enter crypt_valdris", None)
            .expect("request");
        if r.status == 200 {
            break;
        }
        assert_eq!(r.status, 503, "{}", r.text());
        assert!(Instant::now() < deadline, "still 503 after 30 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    // The Matrix sync lock went with the old connection: the instance knows it (and stops
    // syncing) and can take it again.
    assert!(!a.store.still_holds(&held), "a lock held across a restart");
    drop(held);
    assert!(a.store.hold_sync_lock("@bot:test").expect("lock").is_some());
    // Every acknowledged command is there.
    let stored = cluster.psql("restart", "SELECT user_id FROM dnd_zone_run");
    for user in &acknowledged {
        assert!(
            stored.lines().any(|l| l == user),
            "{user} was told 200 but has no run"
        );
    }
}

#[test]
fn a_sqlite_database_is_copied_whole_and_played_on() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = dir.path().join("bot.db");
    let user = "@mover:test";
    {
        let (server, mut c) = Ctx::sqlite(&sqlite).spawn();
        say(&mut c, "@admin:test", &format!("!char set {user} level 4"));
        say(&mut c, user, "!zone enter crypt_valdris");
        say(&mut c, user, "!zone advance");
        say(&mut c, user, "!zone advance");
        say(&mut c, "@other:test", "!zone enter crypt_valdris");
        server.stop().expect("stops");
    }
    let url = cluster.fresh_db();
    let args = zonegraph_server::cli::migrate::Args {
        db: None,
        from: Some(format!("sqlite:{}", sqlite.display())),
        to: Some(zonegraph_server::db::DbAt::parse(&url)),
        zones: None,
        purge_legacy: false,
        dry_run: false,
    };
    let report = zonegraph_server::cli::migrate::migrate(&args).expect("copies");
    assert!(report.contains("dnd_zone_run: 2"), "{report}");
    assert!(report.contains("player_character: 2"), "{report}");
    assert!(report.contains("zone_meta: 7"), "{report}");
    // A second copy into the same database is refused: nothing is merged.
    let err = zonegraph_server::cli::migrate::migrate(&args).expect_err("refused");
    assert!(format!("{err:#}").contains("already has"), "{err:#}");

    let a = instance(&url, &dir.path().join("pg"), Duration::from_secs(3600));
    let mut c = connect(&a);
    let t = say(&mut c, user, "!zone status");
    assert!(t.contains("Branching Passage"), "{t}");
    let t = say(&mut c, user, "!char");
    assert!(t.contains("Level 4"), "{t}");
    let t = say(&mut c, user, "!zone go 1");
    assert!(t.contains("Main Hall"), "{t}");
    // An operator's `zonegraph char` works on the shared database too.
    let granted = zonegraph_server::cli::character::run(&zonegraph_server::cli::character::Args {
        db: zonegraph_server::cli::args::DbArg {
            at: DbAt::Postgres(url.clone()),
        },
        action: zonegraph_server::cli::character::Action::Grant {
            user: user.into(),
            key: vec!["moon_key".into()],
        },
    })
    .expect("char grant");
    assert_eq!(granted, std::process::ExitCode::SUCCESS);
    let t = say(&mut c, user, "!char");
    assert!(t.contains("moon_key"), "{t}");
    // New rows get keys after the copied ones.
    let t = say(&mut c, "@third:test", "!zone enter crypt_valdris");
    assert!(t.contains("Crypt of Valdris"), "{t}");
}

/// `zonegraph serve` on `url` as a process of its own (so it can be killed): a free loopback
/// port, no rate limit, the shipped zones, no viewer, and the database URL and API token in
/// the environment, as operators of several instances set them.
pub(crate) fn serve_process(url: &str, dir: &Path, token: &str) -> std::process::Command {
    let mut c = support::serve_command(&support::zones(), dir);
    c.env("ZONEGRAPH_DATABASE_URL", url)
        .env("ZONEGRAPH_API_TOKEN", token);
    c
}

/// An instance as a real process on `url`, and where it listens.
fn process(url: &str, dir: &Path) -> (std::process::Child, std::net::SocketAddr) {
    let p = Process::spawn(serve_process(url, dir, TOKEN));
    (p.child, p.addr)
}

#[test]
fn sigkill_of_one_instance_loses_no_acknowledged_move() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut a, addr_a) = process(&url, dir.path());
    let (mut b, addr_b) = process(&url, dir.path());
    // Players on instance A walk the Crypt's corridor and back into new runs; each remembers
    // the room each acknowledged move told them.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let players: Vec<_> = (0..8)
        .map(|i| {
            let (stop, acked) = (stop.clone(), acked.clone());
            std::thread::spawn(move || {
                let user = format!("@walker{i}:test");
                let mut told = 0;
                let Ok(c) = Conn::connect(addr_a) else {
                    return (user, told);
                };
                let mut c = c.with_token(Some(TOKEN));
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for cmd in [
                        "!zone enter crypt_valdris",
                        "!zone advance",
                        "!zone advance",
                        "!zone abandon",
                    ] {
                        let Ok(r) = c.command(&user, cmd, None) else {
                            return (user, told);
                        };
                        if r.status != 200 {
                            return (user, told);
                        }
                        acked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        told = if cmd == "!zone abandon" {
                            0
                        } else {
                            room_told(&replies(&r.json())).unwrap_or(told)
                        };
                    }
                }
                (user, told)
            })
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(30);
    while acked.load(std::sync::atomic::Ordering::Relaxed) < 200 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    a.kill().expect("SIGKILL");
    let _ = a.wait();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let told: Vec<(String, usize)> = players
        .into_iter()
        .map(|h| h.join().expect("player"))
        .collect();
    eprintln!(
        "postgres sigkill: {} commands acknowledged by the killed instance",
        acked.load(std::sync::atomic::Ordering::Relaxed)
    );
    // The other instance has every acknowledged move: a player told "Room N" is in a run at
    // room N or beyond (a move whose answer was lost with the process may be there too).
    let mut c = Conn::connect(addr_b)
        .expect("connect")
        .with_token(Some(TOKEN));
    let mid_run = told.iter().filter(|(_, room)| *room > 0).count();
    assert!(mid_run > 0, "no player was mid-run at the kill: {told:?}");
    for (user, room) in told {
        if room == 0 {
            continue;
        }
        let t = say(&mut c, &user, "!zone status");
        let now = room_told(&t).unwrap_or(0);
        assert!(
            now >= room,
            "{user} was told room {room}, the database says {now}: {t}"
        );
    }
    let _ = b.kill();
    let _ = b.wait();
}

/// A committed move wakes every instance listening (PostgreSQL's own `psql` LISTENs here),
/// and the notification is not sent inside the players' transactions: no trigger on the
/// run or sheet tables is left (a notifying transaction commits under a cluster-wide lock).
#[test]
fn a_move_wakes_the_listeners_from_outside_its_transaction() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let store = support::store(&DbAt::Postgres(url.clone()));
    let db = url.rsplit('/').next().expect("a database name").to_string();
    let triggers = cluster.psql(
        &db,
        "SELECT count(*) FROM pg_trigger
         WHERE tgname IN ('zonegraph_run_changed', 'zonegraph_sheet_changed')",
    );
    assert_eq!(triggers.trim(), "0");
    let listener = std::process::Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", &db, "-p"])
        .arg(cluster.port.to_string())
        .args(["-c", "LISTEN zonegraph", "-c", "SELECT pg_sleep(3)"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("psql starts");
    let s = support::settings();
    let mover = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1000));
        let a = store
            .command("@woken:test", "!zone enter crypt_valdris", &s)
            .expect("command");
        assert!(!a.replies.is_empty());
        // The instance lives on (a server does) while it tells the others.
        std::thread::sleep(Duration::from_millis(500));
    });
    let out = listener.wait_with_output().expect("psql runs");
    mover.join().expect("mover");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("Asynchronous notification \"zonegraph\""),
        "no notification: {said}"
    );
}

/// `openssl` with `args` in `dir`, asserting it worked.
fn openssl(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs (Debian's openssl package)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A certificate authority of the test's own (`ca.pem`) and a server certificate it signed
/// for `localhost` (`server.crt`, `server.key`), in `dir`; `prefix` names a second CA.
fn make_ca(dir: &Path, prefix: &str) {
    let (key, pem) = (format!("{prefix}ca.key"), format!("{prefix}ca.pem"));
    let subject = format!("/CN={prefix}zonegraph test CA");
    openssl(
        dir,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &pem,
            "-days", "2", "-subj", &subject,
        ],
    );
    if !prefix.is_empty() {
        return;
    }
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(dir.join("ext"), "subjectAltName=DNS:localhost\n").expect("ext");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "ext",
        ],
    );
}

/// Issue 24 item 2: PostgreSQL over TLS, `sslmode` and `sslrootcert` as libpq reads them,
/// against a cluster with `ssl = on` and a certificate of a CA the test makes (PostgreSQL's
/// own TLS, `openssl` for the certificates).
#[test]
fn tls_is_made_and_checked_as_sslmode_says() {
    let Some(plain) = postgres::shared() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let certs = dir.path().join("certs");
    std::fs::create_dir_all(&certs).expect("certs dir");
    make_ca(&certs, "");
    make_ca(&certs, "other-");
    let cluster = Cluster::start(&dir.path().join("pg"));
    let data = cluster.dir.join("data");
    for f in ["server.crt", "server.key"] {
        std::fs::copy(certs.join(f), data.join(f)).expect("copy into the data dir");
    }
    let run = |cmd: &str, args: &[&str]| {
        let ok = std::process::Command::new(cmd)
            .args(args)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "{cmd} {args:?}");
    };
    let key = data.join("server.key");
    run("chmod", &["600", &key.to_string_lossy()]);
    // The server runs as `postgres` when the tests run as root (tests/postgres/pg.sh): the
    // files go to the data directory's owner.
    let owner = data.join("PG_VERSION").to_string_lossy().into_owned();
    for f in [&key, &data.join("server.crt")] {
        run("chown", &["--reference", &owner, &f.to_string_lossy()]);
    }
    cluster.psql("postgres", "ALTER SYSTEM SET ssl = on");
    cluster.psql("postgres", "SELECT pg_reload_conf()");
    let ca = certs.join("ca.pem").to_string_lossy().into_owned();
    let other = certs.join("other-ca.pem").to_string_lossy().into_owned();
    let at = |host: &str, query: &str| {
        format!(
            "postgres://postgres@{host}:{}/postgres?{query}",
            cluster.port
        )
    };
    let ssl_in_use = |url: &str| -> anyhow::Result<bool> {
        let pg = zonegraph_server::db::pg::Pg::connect(url)?;
        pg.with_transaction(async |tx| {
            Ok(tx
                .query_one(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )
                .await?
                .get::<_, bool>(0))
        })
    };
    // Encrypted, the certificate unchecked (libpq's require).
    assert!(ssl_in_use(&at("127.0.0.1", "sslmode=require")).expect("require connects"));
    // The default (prefer) takes TLS when offered.
    assert!(ssl_in_use(&at("127.0.0.1", "")).expect("prefer connects"));
    // verify-ca: signed by the CA is enough, whatever the name.
    let q = format!("sslmode=verify-ca&sslrootcert={ca}");
    assert!(ssl_in_use(&at("127.0.0.1", &q)).expect("verify-ca connects"));
    // verify-full: and issued for the host in the URL.
    let q = format!("sslmode=verify-full&sslrootcert={ca}");
    assert!(ssl_in_use(&at("localhost", &q)).expect("verify-full connects to localhost"));
    let e = ssl_in_use(&at("127.0.0.1", &q)).expect_err("the wrong name");
    let said = format!("{e:#}");
    assert!(said.contains("not valid for name"), "{said}");
    assert!(
        said.contains("cannot reach the database at postgres://"),
        "{said}"
    );
    // Another CA's roots: refused, for verify-ca too; require with a root file checks it.
    for mode in ["verify-ca", "verify-full", "require"] {
        let q = format!("sslmode={mode}&sslrootcert={other}");
        let e = ssl_in_use(&at("localhost", &q)).expect_err("an unknown issuer");
        assert!(format!("{e:#}").contains("UnknownIssuer"), "{mode}: {e:#}");
    }
    // verify-full with no roots given names what it needs (no ~/.postgresql/root.crt here).
    if std::env::var_os("HOME")
        .is_some_and(|h| !Path::new(&h).join(".postgresql/root.crt").exists())
    {
        let e = ssl_in_use(&at("localhost", "sslmode=verify-full")).expect_err("no roots");
        assert!(format!("{e:#}").contains("sslrootcert"), "{e:#}");
    }
    // A server without TLS: require refuses to go plain; disable and prefer go plain.
    let no_tls = plain.url("postgres");
    let e = ssl_in_use(&format!("{no_tls}?sslmode=require")).expect_err("plain server");
    assert!(format!("{e:#}").to_lowercase().contains("tls"), "{e:#}");
    assert!(!ssl_in_use(&format!("{no_tls}?sslmode=disable")).expect("disable"));
    assert!(!ssl_in_use(&no_tls).expect("prefer falls back"));
    // The whole server on TLS: a player plays.
    let url = at(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let store = support::store(&DbAt::Postgres(url));
    let a = store
        .command(
            "@tls:test",
            "!zone enter crypt_valdris",
            &support::settings(),
        )
        .expect("a command over TLS");
    assert!(a.replies.iter().any(|r| r.text.contains("Crypt")), "{a:?}");
}

/// A hostile corpus of `--db` values, each given to the real `zonegraph serve` (and one to
/// `zonegraph token`), as an operator would mistype them: each start fails at once with exit
/// code 2 and a message that says what is wrong, no password of the URL is printed in any
/// form, and nothing is made in the working directory. (No cluster needed: nothing listens
/// on port 1.)
#[test]
fn hostile_database_urls_get_a_clear_refusal_and_no_password_is_shown() {
    let corpus: &[(&str, &str)] = &[
        (
            "postgres://zg:pw-userinfo@127.0.0.1:1/zg",
            "cannot reach the database at postgres://zg@127.0.0.1:1/zg",
        ),
        (
            // Before: a `?` in the password made the rest of the URL its "query", printed.
            "postgres://zg:pw-quest?ion@127.0.0.1:1/zg",
            "cannot reach the database at postgres://zg@127.0.0.1:1/zg",
        ),
        (
            "postgres://zg@127.0.0.1:1/zg?password=pw-query&sslmode=bogus",
            "sslmode=bogus is not one of disable, allow, prefer, require, verify-ca, verify-full",
        ),
        (
            "postgres://zg:pw-bracket@[::1/zg",
            "is not a PostgreSQL URL",
        ),
        (
            "host=db.example user=zg password=pw-conninfo",
            "libpq connection string",
        ),
        (
            "postgresql://zg:pw-encoded%40x@127.0.0.1:1/zg",
            "cannot reach the database at postgres://zg@127.0.0.1:1/zg",
        ),
        (
            "postgres://zg:pw-rootcert@127.0.0.1:1/zg?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
            "cannot read sslrootcert /nonexistent/ca.pem",
        ),
        ("postgres://zg:pw-at@sign@127.0.0.1:1/zg", "write it as %40"),
        (
            "postgres://zg:pw-sslpassword@127.0.0.1:1/zg?sslpassword=pw-second",
            "unknown option `sslpassword`",
        ),
        (
            "postgres://zg:pw-attrs@127.0.0.1:1/zg?target_session_attrs=bogus",
            "target_session_attrs",
        ),
        ("postgres://", "host and hostaddr are missing"),
        (
            "/nonexistent/dir/z.db",
            "cannot create /nonexistent/dir/z.db",
        ),
        ("/", "is a directory"),
    ];
    let bin = env!("CARGO_BIN_EXE_zonegraph-under-test");
    let zones = support::zones();
    for (db, says) in corpus {
        let cwd = tempfile::tempdir().expect("temp dir");
        let started = Instant::now();
        let out = std::process::Command::new(bin)
            .current_dir(cwd.path())
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--web",
                "none",
                "--zones",
            ])
            .arg(&zones)
            .args(["--db", db])
            .env("ZONEGRAPH_API_TOKEN", "t")
            .env_remove("ZONEGRAPH_DATABASE_URL")
            .output()
            .expect("zonegraph serve runs");
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{db}: {printed}");
        assert!(printed.contains(says), "{db}: wanted {says:?} in {printed}");
        assert!(
            !printed.contains("pw-"),
            "{db}: a password is shown: {printed}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{db}: {:?}",
            started.elapsed()
        );
        let left: Vec<_> = std::fs::read_dir(cwd.path()).expect("cwd").collect();
        assert!(left.is_empty(), "{db}: made {left:?}");
    }
    // The other commands that take --db print it the same way.
    let out = crate::server::tokens::token_cmd("postgres://zg:pw-token@127.0.0.1:1/zg", &["list"]);
    let printed = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{printed}");
    assert!(
        printed.contains("postgres://zg@127.0.0.1:1/zg"),
        "{printed}"
    );
    assert!(!printed.contains("pw-token"), "{printed}");
}

#[test]
fn insight_and_review_read_runs_played_on_another_instance() {
    let Some(cluster) = postgres::shared() else {
        return;
    };
    let url = cluster.fresh_db();
    let dir = tempfile::tempdir().expect("temp dir");
    let a = instance(&url, &dir.path().join("a"), Duration::from_secs(3600));
    let b = instance(&url, &dir.path().join("b"), Duration::from_secs(3600));
    let mut ca = connect(&a);
    // On instance A: 6 players wait at the fork, 5 runs end in the corridor.
    for p in 0..6 {
        let user = format!("@p{p}:test");
        say(&mut ca, &user, "!zone enter crypt_valdris");
        say(&mut ca, &user, "!zone advance");
        say(&mut ca, &user, "!zone advance");
    }
    for _ in 0..5 {
        say(&mut ca, "@ada:test", "!zone enter crypt_valdris");
        say(&mut ca, "@ada:test", "!zone advance");
        say(&mut ca, "@ada:test", "!zone abandon");
    }
    // Instance B, which shares no memory or folder with A, reads them from the database.
    let i = b
        .store
        .insight("crypt_valdris", None, 0)
        .expect("insight")
        .expect("the zone");
    let v = serde_json::to_value(&i).expect("JSON");
    assert_eq!(v["runs"], 11, "{v}");
    assert_eq!(v["outcomes"]["abandoned"], 5);
    assert_eq!(v["outcomes"]["active"], 6);
    let mut file: serde_json::Value =
        serde_json::from_str(&support::zone_text("crypt_valdris")).expect("JSON");
    for e in file["edges"].as_array_mut().expect("edges") {
        if e["to_node"] == "crypt_valdris.main_hall" {
            e["lock_kind"] = "level_min".into();
            e["lock_data"] = serde_json::json!({"min_level": 9});
        }
    }
    let r = b
        .store
        .review(
            "crypt_valdris",
            &file.to_string(),
            zonegraph_server::store::review::REVIEW_RUNS,
            &|| false,
        )
        .expect("review")
        .expect("the zone");
    let v = serde_json::to_value(&r).expect("JSON");
    assert_eq!(v["players"]["active"], 6, "{v}");
    assert_eq!(v["players"]["fork_into_locked"], 6, "{v}");
    assert_eq!(v["replay"]["runs"], 5, "{v}");
    assert_eq!(v["replay"]["not_reproduced"], 0, "{v}");
    assert_eq!(v["replay"]["unchanged"], 5, "{v}");
    assert_eq!(v["left_out"], 0, "{v}");
}
