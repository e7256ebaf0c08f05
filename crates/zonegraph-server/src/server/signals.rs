//! The process's signals: SIGHUP reloads the zone files, Ctrl-C or SIGTERM stops.

#[cfg(unix)]
use std::sync::Arc;

#[cfg(unix)]
use crate::store::Store;

/// SIGHUP reloads the zone files, all or nothing: a directory with any error leaves the
/// zones served as they were, and says why in the log.
#[cfg(unix)]
pub async fn reload_on_hangup(store: Arc<Store>) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "SIGHUP will not reload the zones");
            return;
        }
    };
    while hangups.recv().await.is_some() {
        let s = store.clone();
        match tokio::task::spawn_blocking(move || s.reload()).await {
            Ok(Ok((warnings, imported))) => {
                for w in warnings {
                    tracing::warn!("{w}");
                }
                for line in imported {
                    tracing::info!("{line}");
                }
                let zones = store.zones().len();
                tracing::info!(zones, "SIGHUP: reloaded the zones");
            }
            Ok(Err(e)) => tracing::warn!(
                error = %format_args!("{e:#}"),
                "SIGHUP: the zones served are unchanged"
            ),
            Err(e) => tracing::error!(error = %e, "SIGHUP: the reload failed"),
        }
    }
}

/// Ctrl-C, or SIGTERM (a service manager) on Unix. Stopping is graceful, but nothing depends
/// on it: every acknowledged command is already committed.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
