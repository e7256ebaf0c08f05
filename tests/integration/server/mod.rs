//! The bot's server through its HTTP API on 127.0.0.1:0 with a temporary database, one
//! feature a file: the game played over HTTP, character sheets, run views and their event
//! streams, notices, the viewer's files, access, limits and hostile input, zone files and
//! publishing, persistence (restarts, races, SIGKILL), the log, the metrics and gogobee's
//! legacy databases. The set-up shared with the other tests is in `crate::support`; the
//! Crypt's dice and the server as a process are here.

mod api;
mod auth;
mod characters;
mod events;
mod insight;
mod legacy;
mod limits;
mod logs;
mod metrics;
mod notices;
mod persistence;
mod play;
mod player_view;
pub(crate) mod runs;
pub(crate) mod tokens;
mod viewer;
mod zones;

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use zonegraph_core::roll;
use zonegraph_core::rules::{self, EncounterKind};
use zonegraph_server::server as serve;
use zonegraph_server::store::{CharacterRules, CommandSettings, DbAt, Store};
use zonegraph_tests::client::Conn;

use crate::support::{self, Process};

const FORK: &str = "crypt_valdris.fork";
const CHAPEL: &str = "crypt_valdris.side_chapel";
const SECRET: &str = "crypt_valdris.secret_chamber";
const NO_CHOICE: &str = "There is no choice to make right now.";
/// `!zone go` refused while the room's encounter bars the way.
const ENCOUNTER_FIRST: &str = "bars the way on: face it with !zone fight";

/// A user whose first run's rolls satisfy `pred` (run ids are `"{user}/1"`).
fn user_where(prefix: &str, pred: impl Fn(&str) -> bool) -> String {
    (0..10_000)
        .map(|i| format!("@{prefix}{i}:test"))
        .find(|u| pred(&format!("{u}/1")))
        .expect("some user id rolls that way")
}

/// Whether a new player (the starting scores: STR 15, so +2 to an elite check and to a
/// level-1 boss check) wins the check of `room` (`kind`) of the tier-1 Crypt at the first try.
fn wins_first(run: &str, room: &str, kind: EncounterKind) -> bool {
    wins_at(run, room, kind, 1)
}

/// Whether a new player's `attempt`-th check of `room` in the tier-1 Crypt wins.
fn wins_at(run: &str, room: &str, kind: EncounterKind, attempt: u32) -> bool {
    let modifier = rules::encounter_modifier(kind, 1, &rules::STARTING_SCORES);
    let d20 = rules::encounter_d20(run, room, attempt);
    d20 as i32 + modifier >= rules::encounter_dc(1, kind) as i32
}

fn chapel_roll(run: &str) -> u32 {
    roll::d20(run, FORK, CHAPEL)
}

fn secret_roll(run: &str) -> u32 {
    roll::d20(run, CHAPEL, SECRET)
}

/// The visited rooms of a `GET /api/runs/{token}` answer, in visit order.
fn visited_ids(view: &Value) -> Vec<String> {
    let mut rooms: Vec<(u64, String)> = view["view"]["rooms"]
        .as_array()
        .expect("rooms")
        .iter()
        .filter_map(|r| Some((r["visit"].as_u64()?, r["id"].as_str()?.to_string())))
        .collect();
    rooms.sort();
    rooms.into_iter().map(|(_, id)| id).collect()
}

/// The run-map link token in a `!zone map` reply.
fn token_of(map_reply: &str) -> String {
    let at = map_reply.find("/run/").expect("a run-map link") + 5;
    map_reply[at..at + 32].to_string()
}

/// GET `path` with `Accept-Encoding: accept` (none when empty).
fn get_encoded(c: &mut Conn, path: &str, accept: &str) -> zonegraph_tests::client::Response {
    let headers: Vec<(&str, &str)> = if accept.is_empty() {
        vec![]
    } else {
        vec![("accept-encoding", accept)]
    };
    c.request("GET", path, &headers, b"").expect("request")
}

/// The server as a real process with the API token it made beside its database at the first
/// start.
struct Served {
    process: Process,
    token: String,
}

impl std::ops::Deref for Served {
    type Target = Process;
    fn deref(&self) -> &Process {
        &self.process
    }
}

impl std::ops::DerefMut for Served {
    fn deref_mut(&mut self) -> &mut Process {
        &mut self.process
    }
}

/// `zonegraph serve --db db` as a process of its own, with the shipped zones.
fn spawn_process(db: &Path) -> Served {
    spawn_process_in(db, &support::zones())
}

fn spawn_process_in(db: &Path, zones: &Path) -> Served {
    let dir = db.parent().expect("the database is in a directory");
    let mut command = support::serve_command(zones, dir);
    command
        .arg("--db")
        .arg(db)
        .env_remove("ZONEGRAPH_API_TOKEN");
    let process = Process::spawn(command);
    let token = std::fs::read_to_string(serve::token_file(db))
        .expect("the token file is made before the server answers")
        .trim()
        .to_string();
    Served { process, token }
}

/// Two stores on the SQLite file `dir/z.db`, and the settings of a sandbox server (players
/// edit their own sheets) with run ids `"{user}/{n}"`.
fn two_stores(dir: &Path) -> ([Arc<Store>; 2], CommandSettings) {
    let db = DbAt::Sqlite(dir.join("z.db"));
    let stores = [Arc::new(support::store(&db)), Arc::new(support::store(&db))];
    let settings = CommandSettings {
        public_url: "http://test".into(),
        fork_timeout_ms: 3_600_000,
        admins: Arc::default(),
        characters: CharacterRules::Sandbox,
        ..support::settings()
    };
    (stores, settings)
}
