//! A minimal blocking HTTP/1.1 client for a zonegraph server on this machine: keep-alive,
//! Content-Length and chunked bodies. The tests and the load benchmark drive the server with
//! it (and send it broken requests a full client would refuse to write).

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One response.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// A keep-alive connection.
#[derive(Debug)]
pub struct Conn {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
    /// Sent as `Authorization: Bearer …` with every request that has none of its own.
    token: Option<String>,
}

impl Conn {
    pub fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            addr,
            reader: BufReader::new(stream),
            token: None,
        })
    }

    /// Sends `token` as the bearer token of every request from now on.
    pub fn with_token(mut self, token: Option<&str>) -> Conn {
        self.token = token.map(str::to_string);
        self
    }

    /// Sends raw bytes and reads one response.
    pub fn raw(&mut self, request: &[u8]) -> io::Result<Response> {
        self.reader.get_mut().write_all(request)?;
        self.reader.get_mut().flush()?;
        read_response(&mut self.reader)
    }

    /// Sends a request with optional extra headers and body.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<Response> {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n",
            self.addr,
            body.len()
        );
        for (n, v) in headers {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        if let Some(t) = &self.token
            && !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        {
            req.push_str(&format!("authorization: Bearer {t}\r\n"));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        self.raw(&bytes)
    }

    /// `POST /api/command` with `{"user","text"}`.
    pub fn command(&mut self, user: &str, text: &str, token: Option<&str>) -> io::Result<Response> {
        let body = serde_json::json!({ "user": user, "text": text }).to_string();
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("authorization", a.as_str()));
        }
        self.request("POST", "/api/command", &headers, body.as_bytes())
    }

    pub fn get(&mut self, path: &str) -> io::Result<Response> {
        self.request("GET", path, &[], b"")
    }

    /// `POST path` with a JSON body.
    pub fn post_json(&mut self, path: &str, body: &serde_json::Value) -> io::Result<Response> {
        self.request(
            "POST",
            path,
            &[("content-type", "application/json")],
            body.to_string().as_bytes(),
        )
    }
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

pub(crate) fn read_response(r: &mut impl BufRead) -> io::Result<Response> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((n, v)) = l.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let find = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if let Some(len) = find("content-length") {
        let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
        body.resize(len, 0);
        r.read_exact(&mut body)?;
    } else if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            r.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("bad chunk size"))?;
            let mut chunk = vec![0; size + 2];
            r.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if status != 204 && status != 304 {
        r.read_to_end(&mut body)?;
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// The load the benchmarks put on a server: `players` players (one thread and one keep-alive
/// connection each, player `i` on `addrs[i % addrs.len()]`) each complete `runs` Crypt of
/// Valdris runs by the main hall, starting together. Every command changes the run; `!zone
/// advance` fights the elite and the boss until the run ends (a lost round is a wound, which
/// changes the run too). Returns how long it took and every command's latency, sorted.
/// Players with strong sheets (`--starting-scores 30,…`) win most fights in one round.
pub mod load {
    use std::net::SocketAddr;
    use std::sync::{Arc, Barrier};
    use std::time::{Duration, Instant};

    use anyhow::{Result, anyhow, ensure};

    use super::Conn;

    /// The opening of a run: every command changes it.
    const OPENING: &[&str] = &[
        "!zone enter crypt_valdris",
        "!zone advance",
        "!zone advance",
        "!zone go 1",
    ];
    /// Most fights per run: 3 wounds end a run, so two encounters never take more.
    const MAX_FIGHTS: usize = 6;

    /// Runs the load (see the module); `token` is the server's API token.
    pub fn crypt_runs(
        addrs: &[SocketAddr],
        token: &str,
        players: usize,
        runs: usize,
    ) -> Result<(Duration, Vec<Duration>)> {
        crypt_runs_from(addrs, token, 0, players, runs)
    }

    /// [`crypt_runs`] played by `@player{first}:bench` and the `players - 1` after it: which
    /// players a database already knows, or new ones.
    pub fn crypt_runs_from(
        addrs: &[SocketAddr],
        token: &str,
        first: usize,
        players: usize,
        runs: usize,
    ) -> Result<(Duration, Vec<Duration>)> {
        let barrier = Arc::new(Barrier::new(players + 1));
        let threads: Vec<_> = (0..players)
            .map(|i| {
                let (barrier, addr, token) =
                    (barrier.clone(), addrs[i % addrs.len()], token.to_string());
                std::thread::spawn(move || -> Result<Vec<Duration>> {
                    let user = format!("@player{}:bench", first + i);
                    let mut c = Conn::connect(addr)?.with_token(Some(&token));
                    let mut lat = Vec::with_capacity(runs * (OPENING.len() + 2));
                    barrier.wait();
                    for _ in 0..runs {
                        let fights = std::iter::repeat_n(&"!zone advance", MAX_FIGHTS);
                        for cmd in OPENING.iter().chain(fights) {
                            let t = Instant::now();
                            let r = c.command(&user, cmd, None)?;
                            lat.push(t.elapsed());
                            ensure!(r.status == 200, "{cmd}: {}", r.text());
                            let said = r.text();
                            if said.contains("Victory!") || said.contains("defeat") {
                                break;
                            }
                        }
                        let last = c.command(&user, "!zone status", None)?.text();
                        ensure!(last.contains("This run is over"), "run not over: {last}");
                    }
                    Ok(lat)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let mut lat = Vec::new();
        for t in threads {
            lat.extend(t.join().map_err(|_| anyhow!("player thread panicked"))??);
        }
        let elapsed = start.elapsed();
        lat.sort();
        Ok((elapsed, lat))
    }

    /// The `p` quantile (0 to 1) of sorted latencies.
    pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
        if sorted.is_empty() {
            return Duration::ZERO;
        }
        let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted[i.min(sorted.len() - 1)]
    }

    /// A benchmark setting from the environment, or its default.
    pub fn env_usize(name: &str, default: usize) -> usize {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
}
