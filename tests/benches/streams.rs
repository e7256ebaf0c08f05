//! Idle live streams on one instance (issue 23 item 8): what a run page's open event stream
//! costs the server, and whether 10,000 of them are held without slowing anyone down.
//!
//! A `zonegraph serve` process of its own (the test package's `zonegraph-under-test`, on
//! SQLite) at the machine's hard open-file limit (it raises its soft limit to it), whose
//! stream cap is the default 10,000 or, below 20,256 open files, half of what is left after
//! 256: as many streams as that cap are opened, 8 (the cap per run link) on each of as many
//! players' runs, and left idle. The server's resident memory
//! (`VmRSS`) is read before and after; with all of them open, another player's commands are
//! timed, one more stream is asked for (refused: the instance is full), and a move of one of
//! the 1,250 players is timed to the first of its 8 streams.
//!
//! `cargo bench -p zonegraph-tests --bench streams` (ZONEGRAPH_BENCH_STREAMS, default the cap).

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use zonegraph_tests::client::Conn;
use zonegraph_tests::client::load::{env_usize, percentile};

const TOKEN: &str = "bench-token";
const PER_RUN: usize = 8;

/// The server's resident memory in KiB.
fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("no VmRSS")
}

fn start(dir: &Path) -> Result<(Child, SocketAddr)> {
    let zones = zonegraph_tests::synapse::root().join("zones");
    let mut child = Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .args(["serve", "--listen", "127.0.0.1:0", "--rate-limit", "off"])
        .arg("--zones")
        .arg(&zones)
        .arg("--db")
        .arg(dir.join("z.db"))
        .arg("--web")
        .arg(dir.join("none"))
        .env("ZONEGRAPH_API_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("the server")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let first = lines.next().context("the server said nothing")??;
    // Keep reading what it prints, so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok((child, zonegraph_tests::listening_at(&first)))
}

/// The run-link token in a reply (`…/run/<token>`).
fn token_in(text: &str) -> Option<String> {
    let at = text.find("/run/")? + "/run/".len();
    let token: String = text[at..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (!token.is_empty()).then_some(token)
}

/// An event stream on `token`'s run, once its first event (the whole view) came.
fn open_stream(addr: SocketAddr, token: &str) -> Result<BufReader<TcpStream>> {
    let mut s = TcpStream::connect(addr)?;
    write!(
        s,
        "GET /api/runs/{token}/events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n"
    )?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut r = BufReader::with_capacity(1024, s);
    let mut line = String::new();
    r.read_line(&mut line)?;
    ensure!(line.starts_with("HTTP/1.1 200"), "stream refused: {line}");
    while !line.starts_with("data: ") {
        line.clear();
        ensure!(
            r.read_line(&mut line)? > 0,
            "the stream ended before its first event"
        );
    }
    Ok(r)
}

/// The status line of one more stream's answer.
fn one_more(addr: SocketAddr, token: &str) -> Result<String> {
    let mut s = TcpStream::connect(addr)?;
    write!(
        s,
        "GET /api/runs/{token}/events HTTP/1.1\r\nHost: bench\r\n\r\n"
    )?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    Ok(line.trim_end().to_string())
}

/// The hard open-file limit of this process (the server's, which inherits it).
fn hard_open_files() -> Result<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits")?;
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4))
        .and_then(|v| v.parse().ok())
        .context("no open-file limit in /proc/self/limits")
}

fn main() -> Result<()> {
    let hard = hard_open_files()?;
    let cap = 10_000.min(usize::try_from(hard.saturating_sub(256) / 2)?);
    let streams = env_usize("ZONEGRAPH_BENCH_STREAMS", cap);
    let runs = streams.div_ceil(PER_RUN);
    let dir = tempfile::tempdir()?;
    let (mut child, addr) = start(dir.path())?;
    let pid = child.id();
    let result = (|| -> Result<()> {
        let mut c = Conn::connect(addr)?.with_token(Some(TOKEN));
        let mut tokens = Vec::with_capacity(runs);
        for i in 0..runs {
            let user = format!("@idle{i}:bench");
            let r = c.command(&user, "!zone enter crypt_valdris", None)?;
            ensure!(r.status == 200, "{}", r.text());
            let r = c.command(&user, "!zone map", None)?;
            tokens.push(token_in(&r.text()).context("no run link in the map")?);
        }
        // A few streams opened and closed first, so the runtime's buffers are warm.
        for t in tokens.iter().take(16) {
            drop(open_stream(addr, t)?);
        }
        std::thread::sleep(Duration::from_millis(500));
        let before = rss_kib(pid)?;
        let started = Instant::now();
        let mut open = Vec::with_capacity(streams);
        for i in 0..streams {
            open.push(open_stream(addr, &tokens[i / PER_RUN])?);
        }
        let opening = started.elapsed();
        std::thread::sleep(Duration::from_secs(2));
        let after = rss_kib(pid)?;
        println!(
            "zonegraph idle streams: {streams} on {runs} run links ({PER_RUN} each), one instance \
             (hard open-file limit {hard}: the instance's cap is {cap})"
        );
        println!(
            "  opened in {:.1} s; server memory {:.1} MiB before, {:.1} MiB after: {:.1} KiB per idle stream",
            opening.as_secs_f64(),
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after.saturating_sub(before)) as f64 / streams as f64
        );
        let refused = one_more(addr, &tokens[runs - 1])?;
        println!("  one more stream: {refused}");
        // Another player's commands with every stream open (on a new connection: the first
        // was idle past the server's 5 s and is closed).
        let mut c = Conn::connect(addr)?.with_token(Some(TOKEN));
        let mut lat = Vec::new();
        for i in 0..50 {
            let cmd = if i == 0 {
                "!zone enter crypt_valdris"
            } else {
                "!zone status"
            };
            let t = Instant::now();
            let r = c.command("@other:bench", cmd, None)?;
            lat.push(t.elapsed());
            ensure!(r.status == 200, "{}", r.text());
        }
        lat.sort();
        println!(
            "  another player's command: p50 {:.2} ms, max {:.2} ms (50 commands)",
            percentile(&lat, 0.5).as_secs_f64() * 1e3,
            percentile(&lat, 1.0).as_secs_f64() * 1e3
        );
        // A move of a player with 8 idle streams: the time to the first one's event.
        let stream = &mut open[0];
        let t = Instant::now();
        let r = c.command("@idle0:bench", "!zone advance", None)?;
        ensure!(r.status == 200, "{}", r.text());
        let mut line = String::new();
        loop {
            line.clear();
            if stream.read_line(&mut line)? == 0 {
                bail!("the stream ended");
            }
            if line.starts_with("data: ") {
                break;
            }
        }
        println!(
            "  a move to its stream's event: {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        drop(open);
        Ok(())
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}
