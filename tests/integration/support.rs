//! Set-up shared by the integration tests: the shipped zones and copies of them in a
//! temporary directory, the test servers' configuration ([`Ctx`]) and a client that sends
//! their token, replies as text, a store on either database, and `zonegraph serve` as a
//! process of its own. Synapse and PostgreSQL themselves are the test library's
//! (`zonegraph_tests`).

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use zonegraph_core::format::is_zone_file_name;
use zonegraph_server::server::{self as serve, Auth, Server, ServerConfig};
use zonegraph_server::store::{CharacterRules, CommandSettings, DbAt, RunIds, Store};
use zonegraph_tests::client::Conn;

pub use zonegraph_tests::synapse::root;

/// The API token of the servers [`Ctx`] makes.
pub const TOKEN: &str = "test-token";
/// The one admin of the SQLite servers [`Ctx`] makes (`--admin`).
pub const ADMIN: &str = "@admin:test";

/// The shipped zones directory, `zones/`.
pub fn zones() -> PathBuf {
    root().join("zones")
}

/// The text of the shipped zone `id`.
pub fn zone_text(id: &str) -> String {
    std::fs::read_to_string(root().join(format!("zones/{id}.json"))).expect("zone file")
}

/// A copy of every shipped zone in `dir/zones`, for tests that change the files.
pub fn copy_zones(dir: &Path) -> PathBuf {
    let zones = dir.join("zones");
    std::fs::create_dir_all(&zones).expect("zones dir");
    for entry in std::fs::read_dir(self::zones()).expect("zones") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if is_zone_file_name(name) {
            std::fs::copy(&path, zones.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    zones
}

/// A zones directory `dir/name` holding copies of the shipped `ids`.
pub fn copy_zones_of(dir: &Path, name: &str, ids: &[&str]) -> PathBuf {
    let zones = dir.join(name);
    std::fs::create_dir_all(&zones).expect("zones dir");
    for id in ids {
        std::fs::copy(
            root().join(format!("zones/{id}.json")),
            zones.join(format!("{id}.json")),
        )
        .expect("copy");
    }
    zones
}

/// Run ids `"{user}/{n}"` for the user's n-th run: known rolls, unique ids.
pub fn per_user_run_ids() -> RunIds {
    let counts: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    Arc::new(move |user: &str| {
        let mut c = counts.lock().expect("run id counter");
        let n = c.entry(user.to_string()).or_insert(0);
        *n += 1;
        format!("{user}/{n}")
    })
}

/// The command settings of a store the tests drive directly: run ids `"{user}/{n}"`,
/// [`ADMIN`] the one admin, sheets set by the admins.
pub fn settings() -> CommandSettings {
    CommandSettings {
        public_url: "http://zonegraph.test".into(),
        fork_timeout_ms: 60_000,
        run_ids: per_user_run_ids(),
        admins: Arc::new(BTreeSet::from([ADMIN.to_string()])),
        characters: CharacterRules::AdminsOnly,
    }
}

/// A store on `db` with the shipped zones.
pub fn store(db: &DbAt) -> Store {
    Store::open_at(db, &zones()).expect("the store opens").0
}

/// A test server's configuration, started as the test says: `Ctx::new(dir).spawn()`.
#[derive(Debug)]
pub struct Ctx(ServerConfig);

impl Ctx {
    /// A server on the SQLite file `dir/z.db`; see [`Ctx::sqlite`].
    pub fn new(dir: &Path) -> Ctx {
        Ctx::sqlite(&dir.join("z.db"))
    }

    /// A server on the SQLite file `db`: the shipped zones, 127.0.0.1:0, no viewer, the API
    /// token [`TOKEN`], [`ADMIN`] its admin, run ids `"{user}/{n}"`, the sweeper every 50 ms
    /// and no rate limit (tests fire commands faster than a player; the limit has its own
    /// test).
    pub fn sqlite(db: &Path) -> Ctx {
        let mut c = Ctx::base(db.to_path_buf(), db.with_file_name("no-viewer-here")).0;
        c.run_ids = per_user_run_ids();
        c.admins = vec![ADMIN.into()];
        Ctx(c)
    }

    /// An instance on the PostgreSQL database `url`, its files in `dir`: as [`Ctx::sqlite`],
    /// but with the server's own run ids and no admin.
    pub fn postgres(url: &str, dir: &Path) -> Ctx {
        Ctx::base(DbAt::Postgres(url.to_string()), dir.join("no-viewer-here"))
    }

    fn base(db: impl Into<DbAt>, web: PathBuf) -> Ctx {
        let mut c = ServerConfig::new(db, zones(), "127.0.0.1:0".parse().expect("address"));
        c.web = web;
        c.sweep_every = Duration::from_millis(50);
        c.auth = Auth::Token(TOKEN.into());
        c.limits.rate = None;
        Ctx(c)
    }

    /// Zones from `dir` instead of the shipped ones.
    pub fn zones(mut self, dir: PathBuf) -> Ctx {
        self.0.zones = dir;
        self
    }

    pub fn fork_timeout(mut self, timeout: Duration) -> Ctx {
        self.0.fork_timeout = timeout;
        self
    }

    pub fn auth(mut self, auth: Auth) -> Ctx {
        self.0.auth = auth;
        self
    }

    /// Any other change to the configuration.
    pub fn with(mut self, change: impl FnOnce(&mut ServerConfig)) -> Ctx {
        change(&mut self.0);
        self
    }

    /// The server, started.
    pub fn start(self) -> Server {
        serve::spawn(self.0).expect("server starts")
    }

    /// The server, started, and a client that sends its token.
    pub fn spawn(self) -> (Server, Conn) {
        let server = self.start();
        let conn = connect(&server);
        (server, conn)
    }

    /// Why the server does not start.
    pub fn refused(self) -> anyhow::Error {
        serve::spawn(self.0).expect_err("refused")
    }
}

/// A connection to `server` that sends its API token.
pub fn connect(server: &Server) -> Conn {
    Conn::connect(server.addr)
        .expect("connect")
        .with_token(server.api_token())
}

/// The reply texts of one command, asserting a 200.
pub fn say(conn: &mut Conn, user: &str, text: &str) -> Vec<String> {
    let r = conn.command(user, text, None).expect("request");
    assert_eq!(r.status, 200, "{text}: {}", r.text());
    r.json()["replies"]
        .as_array()
        .expect("replies")
        .iter()
        .map(|r| r["text"].as_str().expect("text").to_string())
        .collect()
}

/// The reply texts of one command as one text, asserting a 200.
pub fn say1(conn: &mut Conn, user: &str, text: &str) -> String {
    say(conn, user, text).join("\n")
}

/// The reply texts of a command's answer, one a line.
pub fn replies(v: &Value) -> String {
    v["replies"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// `POST /api/notices` for `user`: the queued notices, asserting a 200.
pub fn take_notices(c: &mut Conn, user: &str) -> Vec<Value> {
    let r = c
        .post_json("/api/notices", &serde_json::json!({ "user": user }))
        .expect("notices");
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["notices"].as_array().cloned().unwrap_or_default()
}

/// `zonegraph serve` as a process of its own (so it can be killed): a free loopback port, no
/// rate limit, the zones in `zones`, no viewer (in `dir`). The caller names the database.
pub fn serve_command(zones: &Path, dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"));
    c.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--rate-limit",
        "off",
        "--zones",
    ])
    .arg(zones)
    .arg("--web")
    .arg(dir.join("none"));
    c
}

/// A server process, from the line that says where it listens.
#[derive(Debug)]
pub struct Process {
    pub child: Child,
    pub addr: SocketAddr,
    /// What it printed so far.
    pub stdout: Arc<Mutex<Vec<String>>>,
}

impl Process {
    /// Spawns `command` (its stderr dropped) and waits for its first line; its stdout is
    /// drained from then on, so the process never blocks on a full pipe.
    pub fn spawn(command: Command) -> Process {
        Process::spawn_with_stderr(command, Stdio::null())
    }

    /// [`Process::spawn`], its stderr appended to the file `log`.
    pub fn spawn_logged(command: Command, log: &Path) -> Process {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("the log file");
        Process::spawn_with_stderr(command, Stdio::from(file))
    }

    fn spawn_with_stderr(mut command: Command, stderr: Stdio) -> Process {
        use std::io::BufRead;
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the server process starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = std::io::BufReader::new(stdout).lines();
        let first = lines.next().expect("a first line").expect("utf-8");
        let said = Arc::new(Mutex::new(vec![first.clone()]));
        let addr = zonegraph_tests::listening_at(&first);
        let keep = said.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                keep.lock().expect("stdout").push(line);
            }
        });
        Process {
            child,
            addr,
            stdout: said,
        }
    }
}
