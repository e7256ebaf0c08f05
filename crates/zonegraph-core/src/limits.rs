//! Rate limits as pure arithmetic: a token bucket that hosts feed with their clock, so every
//! transport (HTTP, Matrix) limits a player the same way.

/// A sustained rate and the burst allowed above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Tokens added per second, in thousandths (2 per second is 2000; 0.5 is 500).
    pub per_second_milli: u64,
    /// The most tokens the bucket holds: commands allowed back to back.
    pub burst: u32,
}

impl Rate {
    /// `per_second` whole tokens a second, up to `burst`.
    pub fn new(per_second: u32, burst: u32) -> Rate {
        Rate {
            per_second_milli: u64::from(per_second) * 1000,
            burst,
        }
    }
}

/// Millionths of a token: a thousandth of a token per second adds this many per millisecond.
const ONE: u64 = 1_000_000;

/// A token bucket: full at first, one token per command, refilled at [`Rate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    rate: Rate,
    /// In millionths of a token.
    level: u64,
    /// When `level` was last brought up to date (Unix ms).
    at_ms: i64,
}

impl TokenBucket {
    /// A full bucket at `now_ms`.
    pub fn new(rate: Rate, now_ms: i64) -> TokenBucket {
        TokenBucket {
            rate,
            level: u64::from(rate.burst) * ONE,
            at_ms: now_ms,
        }
    }

    fn refill(&mut self, now_ms: i64) {
        // A clock that steps back adds nothing (and takes nothing away).
        let elapsed = u64::try_from(now_ms.saturating_sub(self.at_ms)).unwrap_or(0);
        let cap = u64::from(self.rate.burst) * ONE;
        self.level = self
            .level
            .saturating_add(elapsed.saturating_mul(self.rate.per_second_milli))
            .min(cap);
        self.at_ms = self.at_ms.max(now_ms);
    }

    /// Takes one token at `now_ms`; when there is none, how many milliseconds until there
    /// is (`u64::MAX` for a rate that never refills).
    pub fn take(&mut self, now_ms: i64) -> Result<(), u64> {
        self.refill(now_ms);
        if self.level >= ONE {
            self.level -= ONE;
            return Ok(());
        }
        match self.rate.per_second_milli {
            0 => Err(u64::MAX),
            r => Err((ONE - self.level).div_ceil(r)),
        }
    }

    /// Whether the bucket is full at `now_ms`: it is then no different from a new one, so a
    /// host may forget it.
    pub fn is_full(&self, now_ms: i64) -> bool {
        let mut b = self.clone();
        b.refill(now_ms);
        b.level == u64::from(b.rate.burst) * ONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes at each time, expecting `Ok` or the wait in ms.
    fn check(rate: Rate, steps: &[(i64, Result<(), u64>)]) {
        let mut b = TokenBucket::new(rate, 0);
        for (i, (now, want)) in steps.iter().enumerate() {
            assert_eq!(b.take(*now), *want, "step {i} at {now} ms");
        }
    }

    #[test]
    fn a_burst_then_the_rate() {
        // 2 per second, burst 3: three at once, then one every 500 ms.
        check(
            Rate::new(2, 3),
            &[
                (0, Ok(())),
                (0, Ok(())),
                (0, Ok(())),
                (0, Err(500)),
                (499, Err(1)),
                (500, Ok(())),
                (500, Err(500)),
                (1500, Ok(())),
                (1500, Ok(())),
                (1500, Err(500)),
            ],
        );
    }

    #[test]
    fn fractional_rates_and_no_refill() {
        check(
            Rate {
                per_second_milli: 500,
                burst: 1,
            },
            &[(0, Ok(())), (1000, Err(1000)), (2000, Ok(()))],
        );
        check(
            Rate {
                per_second_milli: 0,
                burst: 1,
            },
            &[(0, Ok(())), (1_000_000, Err(u64::MAX))],
        );
        check(Rate::new(5, 0), &[(0, Err(200))]);
    }

    #[test]
    fn the_clock_stepping_back_neither_refills_nor_panics() {
        check(
            Rate::new(1, 1),
            &[
                (10_000, Ok(())),
                (0, Err(1000)),
                (i64::MIN, Err(1000)),
                (11_000, Ok(())),
                (i64::MAX, Ok(())),
            ],
        );
    }

    #[test]
    fn a_full_bucket_can_be_forgotten() {
        let mut b = TokenBucket::new(Rate::new(2, 2), 0);
        assert!(b.is_full(0));
        assert_eq!(b.take(0), Ok(()));
        assert!(!b.is_full(0));
        assert!(!b.is_full(499));
        assert!(b.is_full(500));
    }
}
