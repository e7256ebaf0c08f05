//! The `zonegraph` binary: hands the command line to the library's `cli`.

fn main() -> std::process::ExitCode {
    zonegraph_server::cli::main()
}
