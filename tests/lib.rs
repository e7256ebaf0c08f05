//! Test support shared by the integration tests and the benchmarks (the integration tests
//! themselves live in `integration/`).

pub mod client;
pub mod seed;

/// A free TCP port on the loopback address (for a server the tests start as a process).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Where a `zonegraph serve` process listens, from the first line it prints
/// ("zonegraph: serving … on http://127.0.0.1:PORT …").
pub fn listening_at(first_line: &str) -> std::net::SocketAddr {
    first_line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .expect("the URL is printed")
        .parse()
        .expect("address")
}

/// Whether the slow tests (Synapse) run: `ZONEGRAPH_SLOW_TESTS=1`, which `cargo xtask test`
/// sets after `tests/synapse/synapse.sh setup`. Says so on stderr when they do not.
pub fn slow_tests(what: &str) -> bool {
    let on = std::env::var("ZONEGRAPH_SLOW_TESTS").as_deref() == Ok("1");
    if !on {
        eprintln!(
            "{what}: not run: it runs with ZONEGRAPH_SLOW_TESTS=1 (after \
             `tests/synapse/synapse.sh setup`; see crates/xtask/src/matrix.rs)"
        );
    }
    on
}

/// The highest "Room N of" (or the status line's "room N of") a reply tells: the visited-room
/// count it acknowledges.
pub fn room_told(text: &str) -> Option<usize> {
    let text = text.to_lowercase();
    text.match_indices("room ")
        .filter_map(|(i, _)| {
            let digits: String = text[i + 5..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .max()
}

/// A throwaway Synapse for the Matrix test and benchmark (`tests/synapse/synapse.sh`).
pub mod synapse {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// The workspace root.
    pub fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("tests/ sits in the workspace")
            .to_path_buf()
    }

    /// `tests/synapse/synapse.sh`.
    pub fn script() -> PathBuf {
        root().join("tests/synapse/synapse.sh")
    }

    /// Stops the Synapse it started, pass or fail.
    #[derive(Debug)]
    pub struct Synapse {
        pub dir: PathBuf,
        pub url: String,
    }

    impl Synapse {
        /// Starts Synapse on a free loopback port, its files in `dir`, its rate limits raised
        /// so a test is never throttled.
        pub fn start(dir: &Path) -> Synapse {
            Synapse::start_as(dir, "raised")
        }

        /// [`Synapse::start`] with Synapse's own default rate limits (`rc_message` 0.2/s,
        /// burst 10, and the rest), as a homeserver an operator installs has them.
        pub fn start_with_default_limits(dir: &Path) -> Synapse {
            Synapse::start_as(dir, "default-limits")
        }

        /// [`Synapse::start`] with only `rc_message` at Synapse's default (0.2 messages/s,
        /// burst 10): the limit a bot meets when it answers; logins and joins stay raised (by
        /// default one address logs in 5 times, then once every 5 minutes).
        pub fn start_with_default_message_limit(dir: &Path) -> Synapse {
            Synapse::start_as(dir, "default-message-limit")
        }

        fn start_as(dir: &Path, limits: &str) -> Synapse {
            let port = super::free_port();
            let status = Command::new(script())
                .arg("start")
                .arg(dir)
                .arg(port.to_string())
                .arg(limits)
                .status()
                .expect("run tests/synapse/synapse.sh");
            let s = Synapse {
                dir: dir.to_path_buf(),
                url: format!("http://127.0.0.1:{port}"),
            };
            assert!(
                status.success(),
                "Synapse did not start: see {}",
                dir.display()
            );
            s
        }

        /// Registers `user` with the shared secret.
        pub fn register(&self, user: &str, password: &str) {
            let port = self.url.rsplit(':').next().expect("port");
            let status = Command::new(script())
                .args(["register"])
                .arg(&self.dir)
                .args([port, user, password])
                .status()
                .expect("run synapse.sh register");
            assert!(status.success(), "cannot register {user}");
        }
    }

    impl Drop for Synapse {
        fn drop(&mut self) {
            let _ = Command::new(script()).arg("stop").arg(&self.dir).status();
        }
    }
}

/// A throwaway PostgreSQL for the storage tests (`tests/postgres/pg.sh`): one cluster per
/// test process, started on first use, each test in a database of its own. A watchdog stops
/// the cluster and removes its files when the test process ends.
pub mod postgres {
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// `tests/postgres/pg.sh`.
    pub fn script() -> PathBuf {
        super::synapse::root().join("tests/postgres/pg.sh")
    }

    /// Whether PostgreSQL's server programs are installed.
    pub fn installed() -> bool {
        Command::new(script())
            .arg("bin")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// A running cluster on a loopback port.
    #[derive(Debug)]
    pub struct Cluster {
        pub dir: PathBuf,
        pub port: u16,
    }

    impl Cluster {
        /// Starts a cluster in `dir` that stops when this process ends.
        pub fn start(dir: &Path) -> Cluster {
            let port = super::free_port();
            let status = Command::new(script())
                .arg("start")
                .arg(dir)
                .arg(port.to_string())
                .arg(std::process::id().to_string())
                .status()
                .expect("run tests/postgres/pg.sh");
            assert!(
                status.success(),
                "PostgreSQL did not start: see {}/log",
                dir.display()
            );
            Cluster {
                dir: dir.to_path_buf(),
                port,
            }
        }

        /// The URL of database `name`.
        pub fn url(&self, name: &str) -> String {
            format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
        }

        /// A new, empty database; its URL.
        pub fn fresh_db(&self) -> String {
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let name = format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed));
            self.psql("postgres", &format!("CREATE DATABASE {name}"));
            self.url(&name)
        }

        /// Runs one SQL statement as the superuser in database `db`; what it printed.
        pub fn psql(&self, db: &str, sql: &str) -> String {
            let out = Command::new("psql")
                .args(["-h", "127.0.0.1", "-U", "postgres", "-d", db, "-Atc", sql])
                .arg("-p")
                .arg(self.port.to_string())
                .output()
                .expect("run psql");
            assert!(
                out.status.success(),
                "psql {sql}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        }

        /// Stops the cluster at once, as a crash would, and starts it again.
        pub fn restart(&self) {
            let status = Command::new(script())
                .arg("restart")
                .arg(&self.dir)
                .arg(self.port.to_string())
                .status()
                .expect("run tests/postgres/pg.sh");
            assert!(status.success(), "PostgreSQL did not start again");
        }
    }

    /// The process's shared cluster, or `None` (with the reason printed once) when
    /// PostgreSQL is not installed here.
    pub fn shared() -> Option<&'static Cluster> {
        static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
        CLUSTER
            .get_or_init(|| {
                if !installed() {
                    // `cargo xtask test` installed it: a missing server there is a failure.
                    assert!(
                        std::env::var_os("ZONEGRAPH_POSTGRES_REQUIRED").is_none(),
                        "PostgreSQL is not installed but ZONEGRAPH_POSTGRES_REQUIRED is set"
                    );
                    eprintln!(
                        "postgres: not installed (`cargo xtask setup` installs Debian's \
                         postgresql); the PostgreSQL half of the storage tests is skipped"
                    );
                    return None;
                }
                let dir = std::env::temp_dir().join(format!(
                    "zonegraph-pg-{}-{}",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos())
                ));
                Some(Cluster::start(&dir))
            })
            .as_ref()
    }
}
