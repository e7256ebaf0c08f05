//! Test support shared by the integration tests and the benchmarks (the integration tests
//! themselves live in `integration/`).

/// A throwaway Synapse for the Matrix test and benchmark (`tests/synapse/synapse.sh`).
pub mod synapse {
    use std::net::TcpListener;
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
        /// Starts Synapse on a free loopback port, its files in `dir`.
        pub fn start(dir: &Path) -> Synapse {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let status = Command::new(script())
                .arg("start")
                .arg(dir)
                .arg(port.to_string())
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
