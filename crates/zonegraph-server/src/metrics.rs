//! The process's Prometheus metrics (`GET /metrics`): what each metric is called, what it
//! counts, and the one recorder they go to.
//!
//! Where a thing happens, the code calls one of the functions here (a command answered, a call
//! to the host game, a fork timeout taken, a Matrix message sent); what is a state rather than
//! an event (live streams, zones served, the events outbox, the host's pause) is read when
//! `/metrics` is asked and given to [`render`] in a [`Scrape`]. No metric has a user, a run or
//! a token as a label: labels are a verb, an outcome or a kind, from short fixed lists.
//!
//! The `metrics` facade with `metrics-exporter-prometheus` (rather than `prometheus-client`):
//! the call sites need no handle passed down to them (the store's blocking threads, the Matrix
//! tasks, the sweeper), and the exporter writes the classic text format Prometheus and
//! `promtool` read. The exporter's own HTTP listener is not built: our router serves the text,
//! behind the API's tokens (the `metrics` scope). The recorder is one per process
//! ([`install`]); a process runs one server, so its figures are that server's.

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Commands by `verb` and `outcome` (counter).
pub const COMMANDS: &str = "zonegraph_commands_total";
/// How long each command took, from its arrival to its answer (histogram, seconds).
pub const COMMAND_SECONDS: &str = "zonegraph_command_duration_seconds";
/// The run pages' live streams open now (gauge).
pub const STREAMS: &str = "zonegraph_run_streams";
/// Zones served now (gauge).
pub const ZONES: &str = "zonegraph_zones_served";
/// Events waiting in the outbox for the host game (gauge; `--events-url` only).
pub const OUTBOX_EVENTS: &str = "zonegraph_events_outbox_waiting";
/// Age of the oldest event waiting in the outbox (gauge, seconds; `--events-url` only).
pub const OUTBOX_OLDEST: &str = "zonegraph_events_outbox_oldest_age_seconds";
/// Calls to the host game by `kind` and `outcome` (counter; `--host-hook` only).
pub const HOST_CALLS: &str = "zonegraph_host_hook_calls_total";
/// Times the host game was left alone after failing in a row (counter).
pub const HOST_PAUSES: &str = "zonegraph_host_hook_pauses_total";
/// Whether the host game is being left alone now (gauge, 0 or 1; `--host-hook` only).
pub const HOST_PAUSED: &str = "zonegraph_host_hook_paused";
/// Forks decided for their player by the sweeper's timeout (counter).
pub const FORK_TIMEOUTS: &str = "zonegraph_fork_timeouts_total";
/// Matrix messages the bot sent (counter).
pub const MATRIX_SENT: &str = "zonegraph_matrix_messages_sent_total";
/// Matrix messages not sent: refused, or failing past their retries (counter).
pub const MATRIX_SEND_FAILED: &str = "zonegraph_matrix_send_failures_total";
/// Waits because the homeserver said "too many requests" (429), past the SDK's own retries
/// (counter).
pub const MATRIX_RATE_LIMITED: &str = "zonegraph_matrix_rate_limited_waits_total";
/// Matrix commands taken and not yet answered, waiting or running (gauge).
pub const MATRIX_QUEUED: &str = "zonegraph_matrix_queued_commands";
/// Matrix commands dropped because their player's queue was full (counter).
pub const MATRIX_DROPPED: &str = "zonegraph_matrix_dropped_commands_total";
/// Encrypted Matrix messages the bot could not decrypt (counter).
pub const MATRIX_UNDECRYPTABLE: &str = "zonegraph_matrix_undecryptable_events_total";

/// The command latency histogram's buckets, in seconds: 1 ms to 10 s.
pub const COMMAND_BUCKETS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed at the first call (a server's start): what is recorded
/// before it is lost. Later calls give the same one.
pub fn install() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(COMMAND_SECONDS.into()), &COMMAND_BUCKETS)
            // Only an empty bucket list is refused, and ours is not empty.
            .expect("the command buckets are not empty")
            .build_recorder();
        let handle = recorder.handle();
        if let Err(e) = ::metrics::set_global_recorder(recorder) {
            tracing::warn!(error = %e, "another metrics recorder is installed: /metrics stays empty");
        }
        describe();
        handle
    })
}

/// Every metric's help text and unit (what `# HELP` says).
fn describe() {
    use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        COMMANDS,
        "Chat commands by verb and outcome (ok, refused, not_understood, host_failed, too_long, rate_limited, error)"
    );
    describe_histogram!(
        COMMAND_SECONDS,
        Unit::Seconds,
        "Time from a command's arrival to its answer, the user's lock and the commit included"
    );
    describe_gauge!(STREAMS, "Run pages' live streams open on this instance");
    describe_gauge!(ZONES, "Zones served");
    describe_gauge!(
        OUTBOX_EVENTS,
        "Events waiting in the outbox for the host game (the database's, the same on every instance)"
    );
    describe_gauge!(
        OUTBOX_OLDEST,
        Unit::Seconds,
        "Age of the oldest event waiting in the outbox (0 when none waits)"
    );
    describe_counter!(
        HOST_CALLS,
        "Calls to the host game by kind (character, encounter) and outcome (ok, refused, unwell, paused)"
    );
    describe_counter!(
        HOST_PAUSES,
        "Times the host game was left alone after failing several times in a row"
    );
    describe_gauge!(
        HOST_PAUSED,
        "1 while the host game is being left alone, else 0"
    );
    describe_counter!(
        FORK_TIMEOUTS,
        "Forks the sweeper decided for their player when the fork timeout passed"
    );
    describe_counter!(MATRIX_SENT, "Matrix messages the bot sent");
    describe_counter!(
        MATRIX_SEND_FAILED,
        "Matrix messages not sent: refused by the homeserver, or failing past their retries"
    );
    describe_counter!(
        MATRIX_RATE_LIMITED,
        "Waits because the homeserver answered 429 (M_LIMIT_EXCEEDED) past the Matrix SDK's own retries"
    );
    describe_gauge!(
        MATRIX_QUEUED,
        "Matrix commands taken and not answered yet, waiting or running"
    );
    describe_counter!(
        MATRIX_DROPPED,
        "Matrix commands dropped because their player's queue was full"
    );
    describe_counter!(
        MATRIX_UNDECRYPTABLE,
        "Encrypted Matrix messages the bot could not decrypt, nor find in the key backup"
    );
}

/// What `/metrics` reads at the moment it is asked.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scrape {
    pub streams: usize,
    pub zones: usize,
    /// The events outbox (`--events-url`): events waiting and the oldest one's age.
    pub outbox: Option<(i64, Duration)>,
    /// Whether the host game is left alone now (`--host-hook`).
    pub host_paused: Option<bool>,
}

/// The text `/metrics` answers: every metric in the Prometheus text format, the states of
/// `now` included.
pub fn render(now: &Scrape) -> String {
    let handle = install();
    let gauge = |name: &'static str, v: f64| ::metrics::gauge!(name).set(v);
    gauge(STREAMS, now.streams as f64);
    gauge(ZONES, now.zones as f64);
    if let Some((waiting, oldest)) = now.outbox {
        gauge(OUTBOX_EVENTS, waiting as f64);
        gauge(OUTBOX_OLDEST, oldest.as_secs_f64());
    }
    if let Some(paused) = now.host_paused {
        gauge(HOST_PAUSED, if paused { 1.0 } else { 0.0 });
    }
    handle.render()
}

/// Keeps the recorder's memory bounded between scrapes (the histogram's samples); the
/// housekeeper calls it.
pub fn upkeep() {
    install().run_upkeep();
}

/// A command answered or turned away: its `verb` (`none` for text that is no command) and
/// `outcome`, and how long it took.
pub fn command(verb: Option<&'static str>, outcome: &'static str, took: Duration) {
    let verb = verb.unwrap_or("none");
    ::metrics::counter!(COMMANDS, "verb" => verb, "outcome" => outcome).increment(1);
    ::metrics::histogram!(COMMAND_SECONDS).record(took.as_secs_f64());
}

/// A call to the host game: `kind` (`character`, `encounter`) and `outcome` (`ok`,
/// `refused`, `unwell`, `paused`: not made, the host being left alone).
pub fn host_call(kind: &'static str, outcome: &'static str) {
    ::metrics::counter!(HOST_CALLS, "kind" => kind, "outcome" => outcome).increment(1);
}

/// The host game is left alone after failing in a row.
pub fn host_paused() {
    ::metrics::counter!(HOST_PAUSES).increment(1);
}

/// The sweeper decided a fork for its player.
pub fn fork_timeout() {
    ::metrics::counter!(FORK_TIMEOUTS).increment(1);
}

/// A Matrix message sent.
pub fn matrix_sent() {
    ::metrics::counter!(MATRIX_SENT).increment(1);
}

/// A Matrix message not sent (refused, or failing past its retries).
pub fn matrix_send_failed() {
    ::metrics::counter!(MATRIX_SEND_FAILED).increment(1);
}

/// A wait the homeserver asked for (429).
pub fn matrix_rate_limited() {
    ::metrics::counter!(MATRIX_RATE_LIMITED).increment(1);
}

/// A Matrix command taken into its player's queue (`+1`) or answered (`-1`).
pub fn matrix_queued(delta: f64) {
    ::metrics::gauge!(MATRIX_QUEUED).increment(delta);
}

/// A Matrix command dropped: its player's queue was full.
pub fn matrix_dropped() {
    ::metrics::counter!(MATRIX_DROPPED).increment(1);
}

/// An encrypted Matrix message that could not be decrypted (counted once, by the instance
/// that claimed it).
pub fn matrix_undecryptable() {
    ::metrics::counter!(MATRIX_UNDECRYPTABLE).increment(1);
}

/// The value of counter `series` (its name and labels as written) now, 0 before its first
/// count (for the unit tests of the code that counts; they share the process's recorder, so
/// they compare before and after).
#[cfg(test)]
pub(crate) fn counted(series: &str) -> f64 {
    tests::sample(&install().render(), &format!("{series} ")).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample `series` (its name and labels as written) in `text`.
    pub(super) fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
    }

    #[test]
    fn what_is_recorded_is_rendered_with_its_help_and_labels() {
        install();
        let before = render(&Scrape::default());
        let count = |t: &str| {
            sample(
                t,
                "zonegraph_commands_total{verb=\"unit_test\",outcome=\"refused\"}",
            )
            .unwrap_or(0.0)
        };
        command(Some("unit_test"), "refused", Duration::from_millis(3));
        fork_timeout();
        let after = render(&Scrape {
            streams: 2,
            zones: 5,
            outbox: Some((7, Duration::from_millis(1500))),
            host_paused: Some(true),
        });
        assert_eq!(count(&after) - count(&before), 1.0, "{after}");
        assert!(
            after.contains("# TYPE zonegraph_command_duration_seconds histogram"),
            "{after}"
        );
        assert!(
            after.contains("zonegraph_command_duration_seconds_bucket{le=\"0.005\"}"),
            "{after}"
        );
        assert!(
            after.contains("# HELP zonegraph_fork_timeouts_total"),
            "{after}"
        );
        for (series, v) in [
            ("zonegraph_run_streams", 2.0),
            ("zonegraph_zones_served", 5.0),
            ("zonegraph_events_outbox_waiting", 7.0),
            ("zonegraph_events_outbox_oldest_age_seconds", 1.5),
            ("zonegraph_host_hook_paused", 1.0),
        ] {
            assert_eq!(sample(&after, &format!("{series} ")), Some(v), "{after}");
        }
    }
}
