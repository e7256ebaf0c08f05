//! A season's data: a command's latency, the fork-timeout sweep, the housekeeper's round and
//! play insight on a database that has served a season, against the same on an empty one, on
//! SQLite and on PostgreSQL (one instance).
//!
//! The season: 100,000 players with a character and 1,000,000 runs of the shipped zones over
//! 90 days. A hundredth of the players are regulars with most of the runs (970 each); the
//! rest played once or not at all. As the housekeeper leaves it, each regular's 20 newest
//! ended runs are in `dnd_zone_run`, plus the one they ended since its last round (the
//! round's work: a thousand, what it moves at a time), and the older ones in
//! `zone_run_history`; 1 player in 50 is in a run, 1 in 10 of those at a fork offered more
//! than the fork timeout ago (as after a restart); 50,000 delivered notices. Each run's JSON is
//! one of a few hundred runs played through the bot's command pipeline in memory
//! (`zonegraph_tests::seed::played_runs`), stored with the server's own statements, then
//! copied by bulk SQL to many rows with their own ids, players and times; the runs in play are
//! played and stored one by one.
//!
//! The load: players complete Crypt runs through `POST /api/command`
//! (`zonegraph_tests::client::load`), on the empty database, then on the season's by new
//! players and by regulars, rounds interleaved so that the machine's other work falls on
//! all three alike.
//!
//! `cargo bench -p zonegraph-tests --bench season` (ZONEGRAPH_BENCH_RUNS, default 1000000;
//! ZONEGRAPH_BENCH_PLAYERS, default 100000; ZONEGRAPH_BENCH_LOAD_PLAYERS, default 50;
//! ZONEGRAPH_BENCH_LOAD_RUNS, default 2; ZONEGRAPH_BENCH_ROUNDS, default 5). Needs PostgreSQL
//! (`cargo xtask setup`). ZONEGRAPH_BENCH_ONLY=sqlite or postgres runs one;
//! ZONEGRAPH_BENCH_DIR keeps the SQLite files there; ZONEGRAPH_BENCH_SEASON_SQL is run on the
//! season's databases after seeding (a change to try: an index). Figures go to BENCHMARKS.md.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use zonegraph_core::bot::{self, Authority, Context, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{Character, Run};
use zonegraph_core::zone::Zone;
use zonegraph_server::db::{self, Database, DbAt, Upgrade};
use zonegraph_server::server::{self as serve, Server, ServerConfig, sweep_interval};
use zonegraph_server::service::{ARCHIVE_EACH_ROUND, HOUSEKEEPING_EVERY};
use zonegraph_server::store::catalog::Catalog;
use zonegraph_server::store::sweep::{KEEP_DELIVERED_NOTICES_MS, KEEP_ENDED_RUNS};
use zonegraph_server::store::{CharacterRules, CommandSettings, Store, random_run_ids};
use zonegraph_tests::client::load::{crypt_runs_from, env_usize, percentile};

/// The API token of the benchmark's servers.
const TOKEN: &str = "bench";

/// A season: 90 days.
const SEASON_MS: i64 = 90 * 24 * 3600 * 1000;

/// The runs each zone's played runs start from (some stop before their end and are left out).
const PLAYED_PER_ZONE: usize = 64;

/// The zone insight is asked about.
const INSIGHT_ZONE: &str = "crypt_valdris";

fn zones_dir() -> PathBuf {
    zonegraph_tests::synapse::root().join("zones")
}

fn now_ms() -> i64 {
    zonegraph_server::clock::now_ms()
}

fn server(at: DbAt) -> Result<Server> {
    let mut config = ServerConfig::new(at, zones_dir(), "127.0.0.1:0".parse()?);
    config.limits.rate = None;
    config.auth = serve::Auth::Token(TOKEN.into());
    config.game.starting_scores = [30; 6];
    config.web = PathBuf::from("/nonexistent");
    serve::spawn(config)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The season's shape from the two sizes (see the module).
#[derive(Clone, Copy, Debug)]
struct Season {
    runs: i64,
    players: i64,
    /// Players `0..regulars` are the regulars, `per_regular` runs each.
    regulars: i64,
    per_regular: i64,
    /// Runs `0..archived` are in the history (the regulars' oldest).
    archived: i64,
    /// Delivered notices.
    notices: i64,
}

/// One player in this many is in a run.
const ACTIVE_EVERY: i64 = 50;

impl Season {
    fn new(runs: i64, players: i64) -> Season {
        let regulars = (players / 100).max(1);
        let per_regular = (runs - runs * 3 / 100) / regulars;
        let in_table = (KEEP_ENDED_RUNS + 1).min(per_regular);
        Season {
            runs,
            players,
            regulars,
            per_regular,
            archived: regulars * (per_regular - in_table),
            notices: players / 2,
        }
    }

    /// The players in a run (casual players only, so the load's regulars start theirs).
    fn active_players(self) -> impl Iterator<Item = i64> {
        (self.regulars..self.players).filter(|k| k % ACTIVE_EVERY == ACTIVE_EVERY / 2)
    }
}

fn user(k: i64) -> String {
    format!("@player{k}:bench")
}

/// The database dialects the seeding SQL is written in: everything but these is the same.
#[derive(Clone, Copy, Debug)]
enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// A `WITH` clause naming the integers `0..n` `series(g)`.
    fn series(self, n: i64) -> String {
        match self {
            Dialect::Sqlite => format!(
                "WITH RECURSIVE series(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM series \
                 WHERE g + 1 < {n})"
            ),
            Dialect::Postgres => {
                format!("WITH series(g) AS (SELECT generate_series(0::BIGINT, {n} - 1))")
            }
        }
    }

    /// `expr` (a non-negative integer) as `width` lowercase hex digits.
    fn hex(self, expr: &str, width: usize) -> String {
        match self {
            Dialect::Sqlite => format!("printf('%0{width}x', {expr})"),
            Dialect::Postgres => format!("lpad(to_hex({expr}), {width}, '0')"),
        }
    }

    /// The length of the JSON list `expr`.
    fn json_len(self, expr: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_array_length({expr})"),
            Dialect::Postgres => format!("json_array_length({expr}::json)"),
        }
    }
}

/// A database the bench makes and reaches with SQL of its own besides the server's.
#[derive(Clone, Debug)]
enum Base {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Base {
    fn at(&self) -> DbAt {
        match self {
            Base::Sqlite(p) => DbAt::Sqlite(p.clone()),
            Base::Postgres(url) => DbAt::Postgres(url.clone()),
        }
    }

    fn dialect(&self) -> Dialect {
        match self {
            Base::Sqlite(_) => Dialect::Sqlite,
            Base::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs `sql` (statements separated by `;`) in one transaction.
    fn batch(&self, sql: &str) -> Result<()> {
        match self {
            Base::Sqlite(path) => {
                let mut conn = rusqlite::Connection::open(path)?;
                conn.busy_timeout(Duration::from_secs(60))?;
                let tx = conn.transaction()?;
                tx.execute_batch(sql)?;
                tx.commit()?;
            }
            Base::Postgres(url) => {
                db::pg::Pg::connect(url)?.with_transaction(async |tx| {
                    tx.batch_execute(sql).await?;
                    Ok(())
                })?;
            }
        }
        Ok(())
    }

    /// The integer `sql` answers.
    fn number(&self, sql: &str) -> Result<i64> {
        Ok(match self {
            Base::Sqlite(path) => {
                rusqlite::Connection::open(path)?.query_row(sql, [], |r| r.get(0))?
            }
            Base::Postgres(url) => db::pg::Pg::connect(url)?
                .with_transaction(async |tx| Ok(tx.query_one(sql, &[]).await?.get::<_, i64>(0)))?,
        })
    }

    /// What a database that has served a while has had done to it: SQLite's WAL folded into
    /// the file; PostgreSQL's autovacuum (visibility and planner statistics).
    fn settle(&self, cluster: &zonegraph_tests::postgres::Cluster) -> Result<()> {
        match self {
            Base::Sqlite(path) => {
                rusqlite::Connection::open(path)?.query_row(
                    "PRAGMA wal_checkpoint(TRUNCATE)",
                    [],
                    |_| Ok(()),
                )?;
            }
            Base::Postgres(url) => {
                let name = url.rsplit('/').next().context("a database name")?;
                cluster.psql(name, "VACUUM ANALYZE");
            }
        }
        Ok(())
    }
}

/// The newest version of each zone: `(zone, seq)`.
fn zone_versions(db: &Database) -> Result<Vec<(Zone, i64)>> {
    let mut out = Vec::new();
    for v in db.read(|tx| tx.newest_versions())? {
        if v.withdrawn {
            continue;
        }
        let text = db
            .read(|tx| tx.version_file(v.seq))?
            .with_context(|| format!("version {} has no file", v.seq))?;
        let (zone, _) = zonegraph_core::zone::load(&text).map_err(|e| anyhow::anyhow!("{e}"))?;
        out.push((zone, v.seq));
    }
    Ok(out)
}

/// A run of `zone` by a new character of its lowest level, begun at `now`: stopped at its
/// first fork (`at_fork`), else after `steps` commands; `None` when it ended before.
fn run_in_play(
    zones: &[Zone],
    zone: &Zone,
    id: &str,
    now: i64,
    at_fork: bool,
    steps: usize,
) -> Option<Run> {
    let mut player = Player {
        character: Character::standard(zone.min_level),
        run: None,
    };
    let cx = Context {
        now,
        new_run_id: id.to_string(),
        run_link: None,
        fork_timeout_ms: i64::MAX,
        syntax: Syntax::Chat,
        authority: Authority::Player,
    };
    let mut text = format!("!zone enter {}", zone.id);
    for step in 0..4 * zone.graph.node_count() + 60 {
        bot::handle(zones, &mut player, &text, &cx);
        let run = player.run.as_ref()?;
        if run.is_over() {
            return None;
        }
        let open_way = run
            .pending_fork
            .as_ref()
            .map(|f| f.options.iter().position(|o| o.open));
        let fighting = run.encounter.is_some();
        let stop = match open_way {
            Some(_) => at_fork,
            None => !at_fork && !fighting && step + 1 >= steps,
        };
        if stop {
            return player.run;
        }
        text = match (fighting, open_way) {
            (true, _) => "!zone fight".into(),
            (false, Some(Some(k))) => format!("!zone go {}", k + 1),
            // A fork with no way open: not a run in play for long.
            (false, Some(None)) => return None,
            (false, None) => "!zone advance".into(),
        };
    }
    None
}

/// An empty database: the schema and the zones (as a server's first start leaves it).
fn make_empty(base: &Base) -> Result<()> {
    let db = Database::open_as(&base.at(), Upgrade::Migrate)?;
    Catalog::open(&db, &zones_dir())?;
    Ok(())
}

/// Fills `base` with `season` (see the module); how long it took.
fn seed(
    base: &Base,
    season: Season,
    cluster: &zonegraph_tests::postgres::Cluster,
) -> Result<Duration> {
    let start = Instant::now();
    let db = Database::open_as(&base.at(), Upgrade::Migrate)?;
    Catalog::open(&db, &zones_dir())?;
    let zones = zone_versions(&db)?;
    let served: Vec<Zone> = zones.iter().map(|(z, _)| z.clone()).collect();

    // The played runs, stored with the server's own statement, become the template table.
    let mut played = Vec::new();
    for (zone, seq) in &zones {
        for mut run in zonegraph_tests::seed::played_runs(zone, PLAYED_PER_ZONE) {
            if run.is_over() && run.pending_fork.is_none() {
                // Run ids are unique across zones too.
                run.run_id = format!("played-{}", played.len());
                played.push((run, *seq));
            }
        }
    }
    let n_played = i64::try_from(played.len())?;
    db.write(
        move |tx| {
            for (i, (run, seq)) in played.iter().enumerate() {
                let st =
                    tx.run_insert("@template:bench", run, 0, Some(*seq), &format!("{i:032x}"))?;
                tx.all_hold(&[st])?;
            }
            Ok(())
        },
        |_| true,
    )?;
    let d = base.dialect();
    let Season {
        runs,
        players,
        regulars,
        per_regular,
        archived,
        notices,
    } = season;
    let casuals = players - regulars;
    let by_regulars = regulars * per_regular;
    let slot = SEASON_MS / per_regular.max(1);
    let now = now_ms();
    let s0 = now - SEASON_MS - 3_600_000;
    let rooms = d.json_len("visited_nodes");
    // Run `g`: its player, and when it started and ended (`took` ms later). A regular's runs
    // are one a slot of the season apart, in order; a casual player's somewhere in it.
    let plan = format!(
        "{series},
         plan AS (
           SELECT g,
             CASE WHEN g < {by_regulars} THEN g % {regulars}
                  ELSE {regulars} + (g - {by_regulars}) % {casuals} END AS k,
             CASE WHEN g < {by_regulars}
                  THEN {s0} + (g / {regulars}) * {slot} + (g % {regulars}) * 7919 % {slot}
                  ELSE {s0} + ((g - {by_regulars}) * 104729 + 7) % {SEASON_MS} END AS started,
             60000 + g * 7919 % 1140000 AS took
           FROM series)",
        series = d.series(runs),
    );
    let run_id = format!(
        "{} || {}",
        d.hex("(g * 2654435761) % 4294967296", 8),
        d.hex("g", 24)
    );
    let link = d.hex("g + 4294967296", 32);
    let sql = format!(
        "CREATE TABLE season_played AS
           SELECT ROW_NUMBER() OVER (ORDER BY id) - 1 AS i, zone_id, zone_file_seq, current_node,
             visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
             revealed_secrets, missed_passages, outcome, boss_defeated, abandoned,
             {rooms} AS rooms
           FROM dnd_zone_run;
         CREATE UNIQUE INDEX season_played_i ON season_played(i);
         DELETE FROM dnd_zone_run;

         INSERT INTO player_character (user_id, level, str, dex, con, int, wis, cha, keys_json,
           updated_at_ms, version)
         {series}
         SELECT '@player' || g || ':bench', 1 + g % 4, 30, 30, 30, 30, 30, 30,
           CASE WHEN g % 3 = 0 THEN '[]'
                ELSE '{{\"keys\":[],\"xp\":' || (g * 37 % 300) || '}}' END,
           {s0} + g * 7919 % {SEASON_MS}, g % 40
         FROM series;

         {plan}
         INSERT INTO zone_run_history (run_id, user_id, zone_id, zone_file_seq, started_at_ms,
           completed_at_ms, outcome, boss_defeated, abandoned, rooms_visited, archived_at_ms,
           current_node, visited_nodes, node_choices)
         SELECT {run_id}, '@player' || k || ':bench', p.zone_id, p.zone_file_seq, started,
           started + took, p.outcome, p.boss_defeated, p.abandoned, p.rooms,
           started + took + {keep_slots}, p.current_node, p.visited_nodes, p.node_choices
         FROM plan JOIN season_played p ON p.i = plan.g % {n_played}
         WHERE g < {archived};

         {plan}
         INSERT INTO dnd_zone_run (user_id, zone_id, run_id, link_token, current_node,
           visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
           revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms, completed,
           boss_defeated, abandoned, outcome, fork_created_at_ms, missed_passages,
           zone_file_seq, version)
         SELECT '@player' || k || ':bench', p.zone_id, {run_id}, {link}, p.current_node,
           p.visited_nodes, p.node_choices, p.cleared_regions, p.harvested_nodes,
           p.keys_granted, p.revealed_secrets, started, started + took, started + took, 1,
           p.boss_defeated, p.abandoned, p.outcome, NULL, p.missed_passages, p.zone_file_seq,
           8 + g % 16
         FROM plan JOIN season_played p ON p.i = plan.g % {n_played}
         WHERE g >= {archived}
         ORDER BY started;

         DROP TABLE season_played;

         {notice_series}
         INSERT INTO zone_notice (user_id, run_id, text, html, created_at_ms, delivered_at_ms)
         SELECT '@player' || (g * 7 % {players}) || ':bench', {notice_run},
           'Time ran out at the fork: the way on was picked for you.',
           '<p>Time ran out at the fork: the way on was picked for you.</p>',
           created, created + 60000
         FROM (SELECT g, CASE WHEN g < {old_notices}
                         THEN {now} - {KEEP_DELIVERED_NOTICES_MS} - 120000 - g * 1000
                         ELSE {now} - 3600000 - g * 104729 % ({KEEP_DELIVERED_NOTICES_MS} - 7200000)
                         END AS created
               FROM series) AS n;",
        series = d.series(players),
        keep_slots = (KEEP_ENDED_RUNS + 1) * slot,
        notice_series = d.series(notices),
        notice_run = d.hex("g", 32),
        // An hour's worth of 30 days of notices is past the 30 days: the round's work.
        old_notices = notices / 720,
    );
    base.batch(&sql)?;

    // The runs in play, played and stored one by one (each from a time of its own).
    let timeout = zonegraph_core::engine::DEFAULT_FORK_TIMEOUT_MS;
    let mut in_play = Vec::new();
    for (j, k) in season.active_players().enumerate() {
        let j = i64::try_from(j)?;
        let (zone, seq) = &zones[usize::try_from(j)? % zones.len()];
        let id = format!("{:032x}", (1i64 << 62) + k);
        let run = match j % 10 {
            0 => run_in_play(
                &served,
                zone,
                &id,
                now - timeout - 3_600_000 - j * 1000,
                true,
                0,
            ),
            1 => run_in_play(
                &served,
                zone,
                &id,
                now - (j * 7919) % (timeout / 2),
                true,
                0,
            ),
            _ => run_in_play(
                &served,
                zone,
                &id,
                now - (j * 37_000) % 86_400_000,
                false,
                1 + usize::try_from(j % 4)?,
            ),
        };
        if let Some(run) = run {
            in_play.push((user(k), run, *seq, format!("{:032x}", (3i64 << 61) + k)));
        }
    }
    for chunk in in_play.chunks(1000) {
        let chunk = chunk.to_vec();
        db.write(
            move |tx| {
                for (u, run, seq, token) in &chunk {
                    let st = tx.run_insert(u, run, 0, Some(*seq), token)?;
                    tx.all_hold(&[st])?;
                }
                Ok(())
            },
            |_| true,
        )?;
    }
    drop(db);
    base.settle(cluster)?;
    Ok(start.elapsed())
}

/// What the sweep, the housekeeper and insight took on one database.
#[derive(Debug, Default)]
struct Chores {
    /// The sweep's query (median of 5), and how many players it found.
    due_query: Duration,
    due: usize,
    /// The sweep's round over those players, and how many were picked for.
    sweep_round: Duration,
    swept: usize,
    /// The housekeeper's round with a round's work (archive, notices), then again with none.
    archive: Duration,
    moved: u64,
    prune: Duration,
    pruned: u64,
    round_again: Duration,
    /// Insight over the zone's runs (median of 3), and its two parts: reading and decoding
    /// the runs, and the core's insight over them in memory.
    insight: Duration,
    insight_read: Duration,
    insight_core: Duration,
}

fn chores(base: &Base) -> Result<Chores> {
    let (store, _) = Store::open_at(&base.at(), &zones_dir())?;
    let timeout = zonegraph_core::engine::DEFAULT_FORK_TIMEOUT_MS;
    let mut c = Chores::default();
    let mut due = Vec::new();
    let mut took = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        due = store.due_users(now_ms(), timeout)?;
        took.push(t.elapsed());
    }
    c.due_query = median(took);
    c.due = due.len();
    let settings = CommandSettings {
        public_url: "http://127.0.0.1".into(),
        fork_timeout_ms: timeout,
        run_ids: random_run_ids(),
        admins: Arc::new(BTreeSet::new()),
        characters: CharacterRules::AdminsOnly,
    };
    let t = Instant::now();
    for (u, _) in store.due_users(now_ms(), timeout)? {
        c.swept += usize::from(store.sweep_user(&u, &settings)?);
    }
    c.sweep_round = t.elapsed();

    let t = Instant::now();
    c.moved = store.archive_runs(ARCHIVE_EACH_ROUND, now_ms())?;
    c.archive = t.elapsed();
    let t = Instant::now();
    c.pruned = store.prune_notices(now_ms())?;
    c.prune = t.elapsed();
    let t = Instant::now();
    store.archive_runs(ARCHIVE_EACH_ROUND, now_ms())?;
    store.prune_notices(now_ms())?;
    c.round_again = t.elapsed();

    let mut took = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        store.insight(INSIGHT_ZONE, None, 0)?;
        took.push(t.elapsed());
    }
    c.insight = median(took);

    let db = Database::open(&base.at())?;
    let seq = db
        .read(|tx| tx.versions_of(INSIGHT_ZONE))?
        .last()
        .context("the zone was imported")?
        .seq;
    let text = db.read(|tx| tx.version_file(seq))?.context("its file")?;
    let (zone, _) = zonegraph_core::zone::load(&text).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (mut read, mut core) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let t = Instant::now();
        let mut runs = Vec::new();
        db.read(|tx| tx.each_version_run(INSIGHT_ZONE, seq, 0, &mut |run| runs.push(run)))?;
        read.push(t.elapsed());
        let t = Instant::now();
        zonegraph_core::insight::insight(&zone, &runs);
        core.push(t.elapsed());
    }
    c.insight_read = median(read);
    c.insight_core = median(core);
    Ok(c)
}

/// The load's latencies, sorted, round by round: on the empty database ([`EMPTY`]), and on
/// the season's by new players ([`NEW_PLAYERS`]) and by regulars ([`REGULARS`]).
#[derive(Debug, Default)]
struct Loads {
    rounds: Vec<[Vec<Duration>; 3]>,
}

const EMPTY: usize = 0;
const NEW_PLAYERS: usize = 1;
const REGULARS: usize = 2;

impl Loads {
    /// Load `i`'s latencies over all rounds, sorted.
    fn pooled(&self, i: usize) -> Vec<Duration> {
        let mut all: Vec<Duration> = self.rounds.iter().flat_map(|r| r[i].clone()).collect();
        all.sort();
        all
    }

    /// The median over the rounds of load `i`'s quantile `p` over the empty database's in
    /// the same round: what the machine's other work, which comes and goes, moves least.
    fn round_ratio(&self, i: usize, p: f64) -> f64 {
        let mut r: Vec<f64> = self
            .rounds
            .iter()
            .map(|r| {
                percentile(&r[i], p).as_secs_f64()
                    / percentile(&r[EMPTY], p).as_secs_f64().max(1e-9)
            })
            .collect();
        r.sort_by(f64::total_cmp);
        r.get(r.len() / 2).copied().unwrap_or(f64::NAN)
    }
}

fn loads(empty: &Base, season: &Base, s: Season) -> Result<Loads> {
    let players = env_usize("ZONEGRAPH_BENCH_LOAD_PLAYERS", 50);
    let runs = env_usize("ZONEGRAPH_BENCH_LOAD_RUNS", 2);
    let rounds = env_usize("ZONEGRAPH_BENCH_ROUNDS", 5);
    let (a, b) = (server(empty.at())?, server(season.at())?);
    // The housekeeper's round at start is over before the load.
    std::thread::sleep(Duration::from_secs(3));
    let known = usize::try_from(s.players)?;
    // A round not counted first, by players of its own: a server that has served a while
    // has its caches warm.
    let warm = rounds * players;
    crypt_runs_from(&[a.addr], TOKEN, warm, players, runs)?;
    crypt_runs_from(&[b.addr], TOKEN, known + warm, players, runs)?;
    crypt_runs_from(&[b.addr], TOKEN, warm, players, runs)?;
    let mut out = Loads::default();
    for r in 0..rounds {
        let mut round: [Vec<Duration>; 3] = Default::default();
        for (what, addr, first, i) in [
            ("empty database", a.addr, r * players, EMPTY),
            (
                "season, new players",
                b.addr,
                known + r * players,
                NEW_PLAYERS,
            ),
            ("season, regulars", b.addr, r * players, REGULARS),
        ] {
            let (took, lat) = crypt_runs_from(&[addr], TOKEN, first, players, runs)?;
            println!(
                "  round {r}, {what:<20} {:>5.0} commands/s  p50 {:>6.2} ms  p99 {:>7.2} ms",
                lat.len() as f64 / took.as_secs_f64(),
                ms(percentile(&lat, 0.50)),
                ms(percentile(&lat, 0.99)),
            );
            round[i] = lat;
        }
        out.rounds.push(round);
    }
    a.stop()?;
    b.stop()?;
    Ok(out)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Everything measured on one database.
#[derive(Debug)]
struct Figures {
    name: &'static str,
    seeded: Duration,
    rows: (i64, i64, i64),
    insight_runs: i64,
    empty: Chores,
    season: Chores,
    loads: Loads,
}

fn on(
    name: &'static str,
    empty: Base,
    season: Base,
    s: Season,
    cluster: &zonegraph_tests::postgres::Cluster,
) -> Result<Figures> {
    println!("{name}: seeding…");
    make_empty(&empty)?;
    let seeded = seed(&season, s, cluster)?;
    // A change to try on the season's database (an index, say), the same on both.
    if let Ok(sql) = std::env::var("ZONEGRAPH_BENCH_SEASON_SQL") {
        println!("{name}: applying {sql}");
        season.batch(&sql)?;
        season.settle(cluster)?;
    }
    let rows = (
        season.number("SELECT count(*) FROM zone_run_history")?,
        season.number("SELECT count(*) FROM dnd_zone_run")?,
        season.number("SELECT count(*) FROM player_character")?,
    );
    let insight_runs = season.number(&format!(
        "SELECT (SELECT count(*) FROM zone_run_history WHERE zone_id = '{INSIGHT_ZONE}')
              + (SELECT count(*) FROM dnd_zone_run WHERE zone_id = '{INSIGHT_ZONE}')"
    ))?;
    println!(
        "{name}: seeded in {seeded:.1?}: {} runs in the history, {} in the run table, {} characters",
        rows.0, rows.1, rows.2
    );
    let empty_chores = chores(&empty)?;
    let season_chores = chores(&season)?;
    println!("{name}: {season_chores:?}");
    let loads = loads(&empty, &season, s)?;
    Ok(Figures {
        name,
        seeded,
        rows,
        insight_runs,
        empty: empty_chores,
        season: season_chores,
        loads,
    })
}

/// `season / empty`, as a ratio.
fn ratio(season: Duration, empty: Duration) -> String {
    format!(
        "{:.2}×",
        season.as_secs_f64() / empty.as_secs_f64().max(1e-9)
    )
}

fn table(s: Season, all: &[Figures]) {
    let sweep_every = sweep_interval(ServerConfig::DEFAULT_FORK_TIMEOUT);
    println!();
    let mut head = String::from("| what | goal |");
    let mut rule = String::from("|---|---|");
    for f in all {
        head.push_str(&format!(" {}: empty | {}: season |", f.name, f.name));
        rule.push_str("---|---|");
    }
    println!("{head}\n{rule}");
    let row = |what: &str, goal: &str, cell: &dyn Fn(&Figures) -> (String, String)| {
        let mut line = format!("| {what} | {goal} |");
        for f in all {
            let (e, s) = cell(f);
            line.push_str(&format!(" {e} | {s} |"));
        }
        println!("{line}");
    };
    for (label, p) in [("p50", 0.50), ("p99", 0.99)] {
        for (who, i) in [("new players", NEW_PLAYERS), ("regulars", REGULARS)] {
            row(
                &format!("command {label}, {who} (all rounds; the rounds' median ratio)"),
                "≤ 1.2× empty",
                &|f| {
                    let e = percentile(&f.loads.pooled(EMPTY), p);
                    let v = percentile(&f.loads.pooled(i), p);
                    (
                        format!("{:.2} ms", ms(e)),
                        format!(
                            "{:.2} ms ({}; {:.2}×)",
                            ms(v),
                            ratio(v, e),
                            f.loads.round_ratio(i, p)
                        ),
                    )
                },
            );
        }
    }
    row(
        "sweep: the query of due forks (median of 5)",
        &format!("≤ {sweep_every:?} (interval)"),
        &|f| {
            (
                format!("{:.2} ms", ms(f.empty.due_query)),
                format!("{:.2} ms ({} due)", ms(f.season.due_query), f.season.due),
            )
        },
    );
    row(
        "sweep: a round, every due fork picked for",
        &format!("≤ {sweep_every:?} (interval)"),
        &|f| {
            (
                format!("{:.2} ms", ms(f.empty.sweep_round)),
                format!(
                    "{:.0} ms ({} picked)",
                    ms(f.season.sweep_round),
                    f.season.swept
                ),
            )
        },
    );
    row(
        &format!("housekeeper: moving ended runs ({ARCHIVE_EACH_ROUND} at most)"),
        &format!("≤ {HOUSEKEEPING_EVERY:?} (tick; hourly)"),
        &|f| {
            (
                format!("{:.2} ms", ms(f.empty.archive)),
                format!("{:.0} ms ({} moved)", ms(f.season.archive), f.season.moved),
            )
        },
    );
    row(
        "housekeeper: deleting old notices",
        &format!("≤ {HOUSEKEEPING_EVERY:?}"),
        &|f| {
            (
                format!("{:.2} ms", ms(f.empty.prune)),
                format!("{:.1} ms ({} deleted)", ms(f.season.prune), f.season.pruned),
            )
        },
    );
    row(
        "housekeeper: a round with nothing to do",
        &format!("≤ {HOUSEKEEPING_EVERY:?}"),
        &|f| {
            (
                format!("{:.2} ms", ms(f.empty.round_again)),
                format!("{:.0} ms", ms(f.season.round_again)),
            )
        },
    );
    row(
        &format!("insight, {INSIGHT_ZONE} (median of 3)"),
        "≤ 1 s",
        &|f| {
            (
                format!("{:.2} ms", ms(f.empty.insight)),
                format!("{:.0} ms ({} runs)", ms(f.season.insight), f.insight_runs),
            )
        },
    );
    row("of which reading and decoding the runs", "", &|f| {
        (
            format!("{:.2} ms", ms(f.empty.insight_read)),
            format!("{:.0} ms", ms(f.season.insight_read)),
        )
    });
    row(
        "of which the core's insight over them in memory",
        "",
        &|f| {
            (
                format!("{:.2} ms", ms(f.empty.insight_core)),
                format!("{:.0} ms", ms(f.season.insight_core)),
            )
        },
    );
    row("seeding the season", "", &|f| {
        (
            String::new(),
            format!(
                "{:.0?} ({} + {} runs, {} players)",
                f.seeded, f.rows.0, f.rows.1, f.rows.2
            ),
        )
    });
    println!(
        "\n{} runs, {} players ({} regulars of {} runs each), {} archived",
        s.runs, s.players, s.regulars, s.per_regular, s.archived
    );
}

fn main() -> Result<()> {
    let s = Season::new(
        i64::try_from(env_usize("ZONEGRAPH_BENCH_RUNS", 1_000_000))?,
        i64::try_from(env_usize("ZONEGRAPH_BENCH_PLAYERS", 100_000))?,
    );
    anyhow::ensure!(s.players > s.regulars, "too few players");
    let Some(cluster) = zonegraph_tests::postgres::shared() else {
        anyhow::bail!("PostgreSQL is not installed: `cargo xtask setup`");
    };
    // The SQLite files, kept for a look with `sqlite3` when a directory is given.
    let temp = tempfile::tempdir()?;
    let dir =
        std::env::var_os("ZONEGRAPH_BENCH_DIR").map_or(temp.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&dir)?;
    for f in ["empty.db", "season.db"] {
        for end in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(dir.join(format!("{f}{end}")));
        }
    }
    println!(
        "zonegraph season: {} runs, {} players with a character",
        s.runs, s.players
    );
    let mut all = Vec::new();
    let only = std::env::var("ZONEGRAPH_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "sqlite" {
        all.push(on(
            "SQLite",
            Base::Sqlite(dir.join("empty.db")),
            Base::Sqlite(dir.join("season.db")),
            s,
            cluster,
        )?);
    }
    if only.is_empty() || only == "postgres" {
        all.push(on(
            "PostgreSQL",
            Base::Postgres(cluster.fresh_db()),
            Base::Postgres(cluster.fresh_db()),
            s,
            cluster,
        )?);
    }
    table(s, &all);
    Ok(())
}
