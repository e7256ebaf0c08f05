//! Move → map latency across two instances on one PostgreSQL: a player's move is made on
//! instance A, and the run page's live stream is open on instance B; the time from A's reply
//! (the move committed) to B's stream sending the new view. With LISTEN/NOTIFY (B is woken at
//! the commit) and without it (B finds the change by polling, as behind a pooler), each idle
//! and under the storage benchmark's load on both instances at once.
//!
//! `cargo bench -p zonegraph-tests --bench world` (ZONEGRAPH_BENCH_SAMPLES, default 100;
//! ZONEGRAPH_BENCH_PLAYERS for the load, default 50). Needs PostgreSQL (`cargo xtask setup`).
//! Figures go to BENCHMARKS.md.

use std::io::{BufRead as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use zonegraph_server::server::{self as serve, Server, ServerConfig};
use zonegraph_server::store::DbAt;
use zonegraph_tests::client::Conn;
use zonegraph_tests::client::load::{crypt_runs, env_usize, percentile};

const TOKEN: &str = "bench";

fn server(url: &str, listen_db: bool) -> anyhow::Result<Server> {
    let zones = zonegraph_tests::synapse::root().join("zones");
    let mut config = ServerConfig::new(
        DbAt::Postgres(url.to_string()),
        zones,
        "127.0.0.1:0".parse()?,
    );
    config.limits.rate = None;
    config.auth = serve::Auth::Token(TOKEN.into());
    config.game.starting_scores = [30; 6];
    config.web = PathBuf::from("/nonexistent");
    config.listen_db = listen_db;
    serve::spawn(config)
}

/// A stream of run-view events: the reader after the response head.
fn open_stream(addr: SocketAddr, token: &str) -> anyhow::Result<std::io::BufReader<TcpStream>> {
    let mut s = TcpStream::connect(addr)?;
    write!(
        s,
        "GET /api/runs/{token}/events HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\n\r\n"
    )?;
    let mut r = std::io::BufReader::new(s);
    loop {
        let mut line = String::new();
        r.read_line(&mut line)?;
        if line.trim_end().is_empty() {
            return Ok(r);
        }
    }
}

/// The next event's JSON data.
fn next_event(r: &mut std::io::BufReader<TcpStream>) -> anyhow::Result<serde_json::Value> {
    r.get_ref()
        .set_read_timeout(Some(Duration::from_secs(10)))?;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            anyhow::bail!("the stream ended");
        }
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            return Ok(serde_json::from_str(data)?);
        }
    }
}

fn command(c: &mut Conn, user: &str, text: &str) -> anyhow::Result<String> {
    let r = c.command(user, text, None)?;
    anyhow::ensure!(r.status == 200, "{text}: {}", r.text());
    Ok(r.text())
}

/// `samples` moves made on `a`, each seen on `b`'s stream: the latencies, sorted.
fn latencies(a: &Server, b: &Server, samples: usize, tag: &str) -> anyhow::Result<Vec<Duration>> {
    let mut ca = Conn::connect(a.addr)?.with_token(Some(TOKEN));
    let mut out = Vec::with_capacity(samples);
    for i in 0..samples {
        let user = format!("@{tag}{i}:bench");
        command(&mut ca, &user, "!zone enter crypt_valdris")?;
        let map = command(&mut ca, &user, "!zone map")?;
        let at = map
            .find("/run/")
            .ok_or_else(|| anyhow::anyhow!("no link"))?
            + 5;
        let token = map[at..at + 32].to_string();
        let mut stream = open_stream(b.addr, &token)?;
        let first = next_event(&mut stream)?;
        anyhow::ensure!(first["view"]["status"]["room_number"] == 1, "{first}");
        command(&mut ca, &user, "!zone advance")?;
        let committed = Instant::now();
        loop {
            let v = next_event(&mut stream)?;
            if v["view"]["status"]["room_number"] == 2 {
                break;
            }
        }
        out.push(committed.elapsed());
    }
    out.sort();
    Ok(out)
}

fn report(what: &str, lat: &[Duration]) {
    println!(
        "  {what:<44} p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms  ({} moves)",
        percentile(lat, 0.50).as_secs_f64() * 1e3,
        percentile(lat, 0.99).as_secs_f64() * 1e3,
        lat.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
        lat.len()
    );
}

fn main() -> anyhow::Result<()> {
    let samples = env_usize("ZONEGRAPH_BENCH_SAMPLES", 100);
    let players = env_usize("ZONEGRAPH_BENCH_PLAYERS", 50);
    let Some(cluster) = zonegraph_tests::postgres::shared() else {
        anyhow::bail!("PostgreSQL is not installed: `cargo xtask setup`");
    };
    println!(
        "zonegraph move -> map across two instances: {samples} moves on A, seen on B's stream"
    );
    for (listen, name) in [
        (true, "LISTEN/NOTIFY"),
        (false, "polling only (--no-listen)"),
    ] {
        let url = cluster.fresh_db();
        let a = server(&url, true)?;
        let b = server(&url, listen)?;
        let idle = latencies(&a, &b, samples, &format!("idle{listen}"))?;
        report(&format!("{name}, idle"), &idle);
        // The storage benchmark's load on both instances while the moves are measured.
        let stop = Arc::new(AtomicBool::new(false));
        let addrs = [a.addr, b.addr];
        let loader = {
            let stop = stop.clone();
            std::thread::spawn(move || -> anyhow::Result<usize> {
                let mut commands = 0;
                while !stop.load(Ordering::SeqCst) {
                    let (_, lat) = crypt_runs(&addrs, TOKEN, players, 1)?;
                    commands += lat.len();
                }
                Ok(commands)
            })
        };
        std::thread::sleep(Duration::from_secs(1));
        let started = Instant::now();
        let busy = latencies(&a, &b, samples, &format!("busy{listen}"))?;
        let took = started.elapsed();
        stop.store(true, Ordering::SeqCst);
        let commands = loader
            .join()
            .map_err(|_| anyhow::anyhow!("the load panicked"))??;
        report(&format!("{name}, under load ({players} players)"), &busy);
        println!(
            "    load: {commands} commands in about {:.0} s",
            took.as_secs_f64() + 1.0
        );
        a.stop()?;
        b.stop()?;
    }
    Ok(())
}
