//! The accept loop: HTTP/1.1 connections served until the server stops, and the open-file
//! limit a live stream's socket counts against.

use std::time::Duration;

/// start its next one: a half-sent request holds a socket no longer than this.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `stop` ends, then waits for the open connections (the
/// event streams end when told to). HTTP/1.1 by hyper with its timer, so that
/// [`HEADER_READ_TIMEOUT`] is in force (`axum::serve` sets none). An accept that fails (out
/// of open files) is tried again after a pause rather than in a busy loop.
pub(super) async fn serve_http(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    stop: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let mut failing = crate::service::Failing::default();
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if let Some(line) = failing.ok("accepting connections again") {
                        tracing::info!("{line}");
                    }
                    stream
                }
                Err(e) => {
                    if let Some(line) = failing.failed(&format!("cannot accept a connection ({e})")) {
                        tracing::error!("{line}");
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let conn =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The process's open-file limit (soft), or a common default where it cannot be read.
pub fn open_file_limit() -> u64 {
    #[cfg(unix)]
    if let Ok((soft, _)) = rlimit::getrlimit(rlimit::Resource::NOFILE) {
        return soft;
    }
    1_024
}

/// Raises the soft open-file limit to the hard one (a live stream is a socket) and says
/// what it is now.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => tracing::info!("open-file limit: {n}"),
        Err(e) => tracing::warn!(
            error = %e,
            "cannot raise the open-file limit; it stays {}",
            open_file_limit()
        ),
    }
}
