//! Arguments several commands share, each default written once: the database
//! ([`DbArg`], `--db` / `ZONEGRAPH_DATABASE_URL`), the log ([`LogArgs`]), durations, scores
//! and rate limits. Each parsed type prints as its flag is written, so a flag shows its
//! default from the constant.

use std::fmt;
use std::time::Duration;

use zonegraph_core::limits::Rate;
use zonegraph_core::rules::{SCORE_RANGE, STARTING_SCORES};

use crate::db::DbAt;
use crate::logging::{self, LogFormat, LogSettings};

/// The log's flags, taken by every subcommand (`serve` is the one that logs much): what to
/// log and how it is written on stderr.
#[derive(Debug, Clone, clap::Args)]
pub struct LogArgs {
    /// What to log, as RUST_LOG directives: `info`, `warn,zonegraph_server=debug`,
    /// `warn,zonegraph_server=info,matrix_sdk=info`. Also RUST_LOG.
    #[arg(
        long = "log",
        global = true,
        env = "RUST_LOG",
        value_name = "DIRECTIVES",
        default_value = logging::DEFAULT_FILTER,
        value_parser = parse_log_filter,
    )]
    pub filter: String,
    /// How the log's lines are written on stderr: text, or json (one object per line, for
    /// log shippers).
    #[arg(
        long,
        global = true,
        value_name = "text|json",
        default_value = "text",
        value_parser = parse_log_format,
    )]
    pub log_format: LogFormat,
}

impl LogArgs {
    /// The settings of [`logging::init`].
    pub fn settings(&self) -> LogSettings {
        LogSettings {
            filter: self.filter.clone(),
            format: self.log_format,
        }
    }
}

/// `--log` / `RUST_LOG`: directives the filter takes, kept as written; none (an empty
/// `RUST_LOG`) is the default.
pub fn parse_log_filter(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Ok(logging::DEFAULT_FILTER.to_string());
    }
    logging::filter(s).map(|_| s.to_string())
}

/// `--log-format`: `text` or `json`.
pub fn parse_log_format(s: &str) -> Result<LogFormat, String> {
    s.parse()
}

/// `--starting-scores`: six ability scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scores(pub [i32; 6]);

impl Scores {
    /// A new player's scores under the built-in rules.
    pub const STARTING: Scores = Scores(STARTING_SCORES);
}

/// As the flag takes them: comma-separated, STR to CHA.
impl fmt::Display for Scores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

/// Parses six comma-separated scores in STR, DEX, CON, INT, WIS, CHA order.
pub fn parse_scores(s: &str) -> Result<Scores, String> {
    let usage = || {
        format!(
            "{s:?} is not six scores like {} (STR to CHA, {}-{})",
            Scores::STARTING,
            SCORE_RANGE.start(),
            SCORE_RANGE.end()
        )
    };
    let parsed: Vec<i32> = s
        .split(',')
        .map(|p| p.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|_| usage())?;
    let scores: [i32; 6] = parsed.try_into().map_err(|_| usage())?;
    if !scores.iter().all(|v| SCORE_RANGE.contains(v)) {
        return Err(usage());
    }
    Ok(Scores(scores))
}

/// `--rate-limit`: a rate, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit(pub Option<Rate>);

/// As the flag takes it: `2/10`, `0.5/5` or `off`.
impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(rate) = self.0 else {
            return f.write_str("off");
        };
        let (whole, milli) = (rate.per_second_milli / 1000, rate.per_second_milli % 1000);
        if milli == 0 {
            write!(f, "{whole}/{}", rate.burst)
        } else {
            let frac = format!("{milli:03}");
            write!(f, "{whole}.{}/{}", frac.trim_end_matches('0'), rate.burst)
        }
    }
}

/// Parses `PER_SECOND/BURST` (`2/10`, `0.5/5`) or `off`.
pub fn parse_rate_limit(s: &str) -> Result<RateLimit, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("off") {
        return Ok(RateLimit(None));
    }
    let usage = || format!("{s:?} is not a rate limit like 2/10 (per second/burst) or off");
    let (rate, burst) = s.split_once('/').ok_or_else(usage)?;
    let (whole, frac) = rate.trim().split_once('.').unwrap_or((rate.trim(), ""));
    if whole.is_empty() && frac.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 3
    {
        return Err(usage());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| usage())?
    };
    let milli: u64 = format!("{frac:0<3}").parse().map_err(|_| usage())?;
    let per_second_milli = whole
        .checked_mul(1000)
        .and_then(|w| w.checked_add(milli))
        .ok_or_else(usage)?;
    let burst: u32 = burst.trim().parse().map_err(|_| usage())?;
    if per_second_milli == 0 || burst == 0 {
        return Err(format!(
            "{s:?} would refuse every command; use `off` for no limit"
        ));
    }
    Ok(RateLimit(Some(Rate {
        per_second_milli,
        burst,
    })))
}

/// A duration flag (`--fork-timeout`), printed as it is written: `6h`, `90s`, `500ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span(pub Duration);

/// In the largest unit that divides it whole.
impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1000)] {
            if ms > 0 && ms.is_multiple_of(size) {
                return write!(f, "{}{unit}", ms / size);
            }
        }
        write!(f, "{ms}ms")
    }
}

/// [`parse_duration`] as a [`Span`].
pub fn parse_span(s: &str) -> Result<Span, String> {
    parse_duration(s).map(Span)
}

/// Parses `6h`, `30m`, `90s`, `500ms`, `1h30m`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Ok(Duration::from_secs(n));
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!(
                "{s:?} is not a duration like 6h, 30m, 90s or 500ms"
            ));
        }
        let n: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{s:?}: number too large"))?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let part = match unit {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            "d" => Duration::from_secs(n.saturating_mul(86_400)),
            _ => {
                return Err(format!(
                    "{s:?}: unknown unit {unit:?} (use ms, s, m, h or d)"
                ));
            }
        };
        total = total.saturating_add(part);
    }
    Ok(total)
}

/// `--db` of the commands that work on an existing server's database.
#[derive(Debug, clap::Args)]
pub struct DbArg {
    /// The server's database: a SQLite file or a postgres:// URL (also
    /// ZONEGRAPH_DATABASE_URL).
    #[arg(
        long = "db",
        value_name = "DB",
        env = "ZONEGRAPH_DATABASE_URL",
        hide_env_values = true,
        default_value = DbArg::DEFAULT,
        value_parser = parse_db
    )]
    pub at: DbAt,
}

impl DbArg {
    /// The database when none is given: a SQLite file in the working directory.
    pub const DEFAULT: &'static str = "zonegraph.db";
}

/// `--db`: a PostgreSQL URL or a SQLite path.
pub fn parse_db(s: &str) -> Result<DbAt, String> {
    if s.trim().is_empty() {
        return Err("--db is empty: give a SQLite file or a postgres:// URL".into());
    }
    // A libpq `key=value …` string is refused when the database is opened
    // (`db::Database::open`): an error here would be printed with the value, password and all.
    Ok(DbAt::parse(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each flag type prints what its parser reads back, so a default shown by `--help` is
    /// the constant.
    #[test]
    fn flags_print_as_they_parse() {
        for s in ["6h", "30m", "90s", "500ms", "1h30m"] {
            let span = parse_span(s).expect(s);
            assert_eq!(parse_span(&span.to_string()), Ok(span), "{s}");
        }
        assert_eq!(Span(Duration::from_secs(6 * 3600)).to_string(), "6h");
        for s in ["2/10", "0.5/5", "1.25/3", "off"] {
            let rate = parse_rate_limit(s).expect(s);
            assert_eq!(rate.to_string(), s);
        }
        assert_eq!(Scores::STARTING.to_string(), "15,14,13,12,10,8");
        assert_eq!(
            parse_scores(&Scores::STARTING.to_string()),
            Ok(Scores::STARTING)
        );
    }
}
