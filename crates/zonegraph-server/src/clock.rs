//! The time, read in one place: [`now_ms`] (the wall clock as Unix milliseconds, what every
//! row's time is), and the calendar through the `time` crate ([`utc`] for an operator's
//! line, [`parse_day`] for a `--since` day).

use time::{Date, Month, OffsetDateTime};

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Unix ms as `2026-12-02 08:00:00 UTC`.
pub fn utc(ms: i64) -> String {
    let at = OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// `YYYY-MM-DD` (1970 to 9999) as Unix milliseconds at 00:00 UTC.
pub fn parse_day(s: &str) -> Result<i64, String> {
    let bad = || format!("{s:?} is not a day: write YYYY-MM-DD (UTC), as 2026-12-01");
    let parts: Vec<&str> = s.trim().split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let (y, m, d): (i32, u8, u8) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1970..=9999).contains(&y) {
        return Err(bad());
    }
    let month = Month::try_from(m).map_err(|_| bad())?;
    let day = Date::from_calendar_date(y, month, d).map_err(|_| bad())?;
    Ok(day.midnight().assume_utc().unix_timestamp() * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_midnights_and_anything_else_is_refused() {
        assert_eq!(parse_day("1970-01-01"), Ok(0));
        assert_eq!(parse_day("2026-12-03"), Ok(1_796_256_000_000));
        assert_eq!(parse_day("2000-03-01"), Ok(951_868_800_000));
        for bad in ["", "2026-13-01", "2026-1", "yesterday", "2026-12-03T00:00"] {
            assert!(parse_day(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_are_told_in_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_796_083_200_000), "2026-12-01 00:00:00 UTC");
        assert_eq!(utc(951_786_123_000), "2000-02-29 01:02:03 UTC");
    }
}
