//! The load benchmark on each database, side by side in one run: N players complete Crypt of
//! Valdris runs through `POST /api/command` against SQLite, PostgreSQL with one instance, and
//! PostgreSQL with two instances (players split between them), each followed by its bare
//! ceiling: a loop of single-row update transactions with the same durability settings.
//!
//! `cargo bench -p zonegraph-tests --bench storage` (ZONEGRAPH_BENCH_PLAYERS, default 100;
//! ZONEGRAPH_BENCH_RUNS, default 2). Needs PostgreSQL (`cargo xtask setup`). Figures go to
//! BENCHMARKS.md.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zonegraph_server::db;
use zonegraph_server::server::{self as serve, Server, ServerConfig};
use zonegraph_server::store::DbAt;
use zonegraph_tests::client::load::{crypt_runs, env_usize, percentile};

/// The API token of the benchmark's servers.
const TOKEN: &str = "bench";

fn zones() -> PathBuf {
    zonegraph_tests::synapse::root().join("zones")
}

fn server(db: DbAt) -> anyhow::Result<Server> {
    let mut config = ServerConfig::new(db, zones(), "127.0.0.1:0".parse()?);
    config.limits.rate = None;
    config.auth = serve::Auth::Token(TOKEN.into());
    config.game.starting_scores = [30; 6];
    config.web = PathBuf::from("/nonexistent");
    serve::spawn(config)
}

/// Commands per second and the sorted latencies of the benchmarks' load (see
/// [`crypt_runs`]), player `i` on `addrs[i % addrs.len()]`.
fn load(addrs: &[SocketAddr], players: usize, runs: usize) -> anyhow::Result<(f64, Vec<Duration>)> {
    let (elapsed, lat) = crypt_runs(addrs, TOKEN, players, runs)?;
    Ok((lat.len() as f64 / elapsed.as_secs_f64(), lat))
}

/// PostgreSQL update transactions per second for 3 s, each through the pool as the store's
/// (fsync and synchronous_commit on, PostgreSQL's defaults), from `threads` threads at once.
fn bare_postgres(url: &str, threads: usize) -> anyhow::Result<f64> {
    let pg = Arc::new(db::pg::Pg::connect(url)?);
    pg.with_transaction(async |tx| {
        tx.batch_execute(
            "CREATE TABLE bare (id BIGINT PRIMARY KEY, v TEXT NOT NULL);
             INSERT INTO bare SELECT g, '' FROM generate_series(0, 63) g;",
        )
        .await?;
        Ok(())
    })?;
    let cpu = CpuSample::now();
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let pg = pg.clone();
            std::thread::spawn(move || -> anyhow::Result<u64> {
                let payload = "x".repeat(600);
                let mut n = 0u64;
                while start.elapsed() < Duration::from_secs(3) {
                    let v = format!("{payload}{n}");
                    let id = t as i64;
                    pg.with_transaction(async |tx| {
                        tx.execute("UPDATE bare SET v = $1 WHERE id = $2", &[&v, &id])
                            .await?;
                        Ok(())
                    })?;
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    let mut n = 0;
    for h in handles {
        n += h
            .join()
            .map_err(|_| anyhow::anyhow!("bare loop panicked"))??;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    // Sampled while its connections are open (a backend's CPU leaves /proc with it).
    let split = CpuSample::now().per_command(&cpu, n.max(1) as usize);
    println!(
        "  (bare loop, {threads} threads, CPU per transaction {})",
        shown(&split)
    );
    Ok(rate)
}

fn report(name: &str, cps: f64, lat: &[Duration], ceiling: f64, ceiling_what: &str) {
    println!(
        "  {name:<26} {cps:>6.0} commands/s  p50 {:>6.2} ms  p99 {:>7.2} ms  max {:>7.2} ms   ceiling {ceiling:>6.0}/s ({ceiling_what}, {:.0} %)",
        percentile(lat, 0.50).as_secs_f64() * 1e3,
        percentile(lat, 0.99).as_secs_f64() * 1e3,
        percentile(lat, 1.0).as_secs_f64() * 1e3,
        100.0 * cps / ceiling,
    );
}

/// CPU time, in seconds, as Linux counts it (`utime + stime` of `/proc/…/stat`).
fn cpu_of(stat: &str) -> Option<(String, f64)> {
    // `pid (comm) state …`: the comm may hold spaces, the fields after it do not.
    let (head, rest) = stat.rsplit_once(") ")?;
    let comm = head.split_once(" (")?.1.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some((comm, ticks / 100.0))
}

/// Where the CPU goes: this process's threads by name (the servers' runtimes, the
/// PostgreSQL driver's, the load's clients) and every `postgres` process on the machine.
#[derive(Default)]
struct CpuSample {
    threads: std::collections::HashMap<String, (String, f64)>,
    process: f64,
    postgres: f64,
}

impl CpuSample {
    fn now() -> CpuSample {
        let read = |p: &std::path::Path| std::fs::read_to_string(p).ok();
        let mut s = CpuSample::default();
        if let Some((_, t)) = read("/proc/self/stat".as_ref()).as_deref().and_then(cpu_of) {
            s.process = t;
        }
        for e in std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Some(c) = read(&e.path().join("stat")).as_deref().and_then(cpu_of) {
                s.threads
                    .insert(e.file_name().to_string_lossy().into_owned(), c);
            }
        }
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            if let Some((comm, t)) = read(&e.path().join("stat")).as_deref().and_then(cpu_of)
                && comm == "postgres"
            {
                s.postgres += t;
            }
        }
        s
    }

    /// CPU ms per command since `before`, by thread name (this process's threads that
    /// ended meanwhile, the load's clients, under "ended threads"; `tokio-rt-worker` the
    /// servers' HTTP and command threads; `zonegraph-pg` the PostgreSQL driver's), and
    /// `postgres` for every postgres process.
    fn per_command(&self, before: &CpuSample, commands: usize) -> Vec<(String, f64)> {
        let mut by: std::collections::BTreeMap<String, f64> = Default::default();
        let mut counted = 0.0;
        for (tid, (comm, t)) in &self.threads {
            let was = before.threads.get(tid).map_or(0.0, |(_, t)| *t);
            *by.entry(comm.clone()).or_default() += t - was;
            counted += t - was;
        }
        let ended = (self.process - before.process) - counted;
        // The load's client threads end with the load: theirs is most of this.
        by.insert("ended threads".into(), ended.max(0.0));
        by.insert("postgres".into(), self.postgres - before.postgres);
        let mut out: Vec<(String, f64)> = by
            .into_iter()
            .map(|(k, v)| (k, 1e3 * v / commands as f64))
            .filter(|(_, ms)| *ms >= 0.001)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }
}

/// `name 0.123 ms, …`, and their sum.
fn shown(split: &[(String, f64)]) -> String {
    let total: f64 = split.iter().map(|(_, ms)| ms).sum();
    let parts: Vec<String> = split.iter().map(|(n, ms)| format!("{n} {ms:.3}")).collect();
    format!("{total:.3} ms: {}", parts.join(", "))
}

/// The load on `servers`, and the round trips to PostgreSQL it cost per command (the
/// watchers' polls and the sweepers' reads in those seconds included).
fn load_counted(
    servers: &[&Server],
    players: usize,
    runs: usize,
) -> anyhow::Result<(f64, Vec<Duration>)> {
    let trips = || -> u64 {
        servers
            .iter()
            .filter_map(|s| s.store.round_trips())
            .map(|t| t.waited + t.prepared)
            .sum()
    };
    let before = trips();
    let cpu = CpuSample::now();
    let addrs: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();
    let (cps, lat) = load(&addrs, players, runs)?;
    let split = CpuSample::now().per_command(&cpu, lat.len());
    println!(
        "  ({:.2} round trips to PostgreSQL per command; CPU per command {})",
        (trips() - before) as f64 / lat.len() as f64,
        shown(&split)
    );
    Ok((cps, lat))
}

fn main() -> anyhow::Result<()> {
    let players = env_usize("ZONEGRAPH_BENCH_PLAYERS", 100);
    let runs = env_usize("ZONEGRAPH_BENCH_RUNS", 2);
    let Some(cluster) = zonegraph_tests::postgres::shared() else {
        anyhow::bail!("PostgreSQL is not installed: `cargo xtask setup`");
    };
    let dir = tempfile::tempdir()?;
    println!(
        "zonegraph storage load: {players} players x {runs} Crypt runs, all commands state-changing"
    );

    let sqlite = server(DbAt::Sqlite(dir.path().join("load.db")))?;
    let (cps, lat) = load(&[sqlite.addr], players, runs)?;
    sqlite.stop()?;
    let bare = db::bare_write_rate(&dir.path().join("bare.db"))?;
    report(
        "SQLite, one instance",
        cps,
        &lat,
        bare,
        "1 writer, WAL, FULL",
    );

    let url = cluster.fresh_db();
    let one = server(DbAt::Postgres(url))?;
    let (cps, lat) = load_counted(&[&one], players, runs)?;
    one.stop()?;
    let bare1 = bare_postgres(&cluster.fresh_db(), 16)?;
    report(
        "PostgreSQL, one instance",
        cps,
        &lat,
        bare1,
        "16 connections",
    );

    let url = cluster.fresh_db();
    let (a, b) = (
        server(DbAt::Postgres(url.clone()))?,
        server(DbAt::Postgres(url))?,
    );
    let (cps, lat) = load_counted(&[&a, &b], players, runs)?;
    a.stop()?;
    b.stop()?;
    let bare2 = bare_postgres(&cluster.fresh_db(), 32)?;
    report(
        "PostgreSQL, two instances",
        cps,
        &lat,
        bare2,
        "32 connections",
    );
    Ok(())
}
