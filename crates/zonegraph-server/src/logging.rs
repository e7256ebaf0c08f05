//! The process's log: every line the server logs is a `tracing` event with fields, and so
//! are the dependencies' own (matrix-sdk, hyper-util, deadpool speak `tracing`; tokio-postgres
//! and reqwest speak `log`, brought in by `tracing-log`). [`init`] sets the one subscriber
//! up, once, before a subcommand runs: a `RUST_LOG`-style filter ([`DEFAULT_FILTER`] unless
//! told otherwise) and one line per event on stderr, text for a person or JSON for a log
//! shipper. What a subcommand prints for a person as its result is not logging: it stays
//! plain output.
//!
//! No event carries a secret: not the API's or a scoped token, a password, a recovery key, a
//! store passphrase, a run link's token, nor the text a player typed (a command is logged by
//! its verb).

use std::io::IsTerminal as _;

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _, Registry};

/// What is logged unless `--log` or `RUST_LOG` says otherwise: zonegraph's own events from
/// `info` up, every dependency's warnings and errors (at their levels, under their targets).
pub const DEFAULT_FILTER: &str = "warn,zonegraph_server=info";

/// How each event is written: a line of text, or a JSON object per line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// `TIME LEVEL target: message field=value …`, for a person (and `journalctl`).
    #[default]
    Text,
    /// `{"timestamp","level","target","message",fields…}` on one line, for log shippers.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(format!("{s:?} is not a log format: text or json")),
        }
    }
}

/// What to log and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSettings {
    /// `RUST_LOG`-style directives (`info`, `warn,zonegraph_server=debug,matrix_sdk=info`).
    pub filter: String,
    pub format: LogFormat,
}

impl Default for LogSettings {
    fn default() -> LogSettings {
        LogSettings {
            filter: DEFAULT_FILTER.to_string(),
            format: LogFormat::Text,
        }
    }
}

/// The filter of `directives`, or why they are not one (an unknown level, a bad regex).
pub fn filter(directives: &str) -> Result<EnvFilter, String> {
    EnvFilter::builder()
        .parse(directives)
        .map_err(|e| format!("{directives:?} is not a log filter: {e}"))
}

/// The subscriber `settings` describe, writing to `writer` (colours only when `ansi`).
pub fn subscriber<W>(
    settings: &LogSettings,
    writer: W,
    ansi: bool,
) -> Result<impl tracing::Subscriber + Send + Sync + 'static, String>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = filter(&settings.filter)?;
    let layer = match settings.format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_ansi(ansi)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_writer(writer)
            .boxed(),
    };
    Ok(Registry::default().with(layer.with_filter(filter)))
}

/// Sets the process's subscriber up (on stderr) and brings the `log` crate's records into
/// it. Once per process: a second call (tests that run the command line in memory) leaves
/// the first in place.
pub fn init(settings: &LogSettings) -> Result<(), String> {
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let subscriber = subscriber(settings, std::io::stderr, ansi)?;
    // Already set: the first one stays.
    let _ = subscriber.try_init();
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What a subscriber wrote, shared with the test.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> MakeWriter<'w> for Captured {
        type Writer = Captured;

        fn make_writer(&'w self) -> Captured {
            self.clone()
        }
    }

    /// The lines `settings` let through of a dependency's WARN and DEBUG and of zonegraph's
    /// INFO and DEBUG.
    fn logged(settings: &LogSettings) -> Vec<String> {
        let out = Captured::default();
        let subscriber = subscriber(settings, out.clone(), false).expect("a subscriber");
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(target: "matrix_sdk_crypto::machine", room = "!r:x", "no olm session");
            tracing::debug!(target: "matrix_sdk::sync", "sync response");
            tracing::info!(target: "zonegraph_server::service", verb = "advance", "command");
            tracing::debug!(target: "zonegraph_server::service", "a detail");
        });
        let text = String::from_utf8(out.0.lock().expect("captured").clone()).expect("utf-8");
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn the_default_filter_lets_a_dependencys_warnings_through_at_their_level() {
        let lines = logged(&LogSettings::default());
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].contains("WARN matrix_sdk_crypto::machine: no olm session")
                && lines[0].contains("room=\"!r:x\""),
            "{lines:#?}"
        );
        assert!(
            lines[1].contains("INFO zonegraph_server::service: command verb=\"advance\""),
            "{lines:#?}"
        );
    }

    #[test]
    fn log_directives_replace_the_default() {
        let settings = LogSettings {
            filter: "error,matrix_sdk=debug".into(),
            ..LogSettings::default()
        };
        // A target is matched by its start: `matrix_sdk` also names `matrix_sdk_crypto`.
        let lines = logged(&settings);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].contains("WARN matrix_sdk_crypto::machine: no olm session")
                && lines[1].contains("DEBUG matrix_sdk::sync: sync response"),
            "{lines:#?}"
        );
        let all = logged(&LogSettings {
            filter: "debug".into(),
            ..LogSettings::default()
        });
        assert_eq!(all.len(), 4, "{all:#?}");
        assert!(filter("zonegraph_server=loud").is_err());
    }

    #[test]
    fn json_is_one_object_per_line_with_the_fields_at_the_top() {
        let lines = logged(&LogSettings {
            format: LogFormat::Json,
            ..LogSettings::default()
        });
        assert_eq!(lines.len(), 2, "{lines:#?}");
        let v: Vec<serde_json::Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(v[0]["level"], "WARN");
        assert_eq!(v[0]["target"], "matrix_sdk_crypto::machine");
        assert_eq!(v[0]["message"], "no olm session");
        assert_eq!(v[0]["room"], "!r:x");
        assert_eq!(v[1]["verb"], "advance");
        assert!(v[1]["timestamp"].is_string(), "{}", lines[1]);
    }

    #[test]
    fn a_log_format_is_text_or_json() {
        assert_eq!("text".parse(), Ok(LogFormat::Text));
        assert_eq!("json".parse(), Ok(LogFormat::Json));
        assert!("xml".parse::<LogFormat>().is_err());
    }
}
