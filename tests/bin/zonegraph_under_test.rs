//! The `zonegraph` command line as a binary of the test package, so integration tests can
//! run it as a real process (and kill it).

fn main() -> std::process::ExitCode {
    zonegraph_server::cli::main()
}
