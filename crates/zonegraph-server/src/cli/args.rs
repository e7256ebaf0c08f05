//! Arguments several commands share, each default written once: the database
//! ([`DbArg`], `--db` / `ZONEGRAPH_DATABASE_URL`), durations, scores and rate limits.

use std::time::Duration;

use zonegraph_core::limits::Rate;

use crate::db::DbAt;

/// `--starting-scores`: six ability scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scores(pub [i32; 6]);

/// Parses six comma-separated scores in STR, DEX, CON, INT, WIS, CHA order.
pub fn parse_scores(s: &str) -> Result<Scores, String> {
    let usage = || format!("{s:?} is not six scores like 15,14,13,12,10,8 (STR to CHA, 1-30)");
    let parsed: Vec<i32> = s
        .split(',')
        .map(|p| p.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|_| usage())?;
    let scores: [i32; 6] = parsed.try_into().map_err(|_| usage())?;
    if !scores
        .iter()
        .all(|v| zonegraph_core::rules::SCORE_RANGE.contains(v))
    {
        return Err(usage());
    }
    Ok(Scores(scores))
}

/// `--rate-limit`: a rate, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit(pub Option<Rate>);

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
        default_value = "zonegraph.db",
        value_parser = parse_db
    )]
    pub at: DbAt,
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
