//! Deterministic dice: every roll is a pure function of (run id, from, to), so the bot, the
//! viewer and the tests agree on it.

use sha1::{Digest, Sha1};

/// The d20 for the lock on the passage `from → to` in run `run_id`: the first two bytes of
/// SHA-1 of `"{run_id}|{from}|{to}"` as a big-endian u16, mod 20, plus 1.
pub fn d20(run_id: &str, from: &str, to: &str) -> u32 {
    let mut h = Sha1::new();
    h.update(run_id.as_bytes());
    h.update(b"|");
    h.update(from.as_bytes());
    h.update(b"|");
    h.update(to.as_bytes());
    let digest = h.finalize();
    u32::from(u16::from_be_bytes([digest[0], digest[1]])) % 20 + 1
}

/// A deterministic index in `0..len` from a seed string (used for flavour-line choice).
pub fn pick(seed: &str, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let digest = Sha1::digest(seed.as_bytes());
    let n = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    usize::try_from(n).unwrap_or(0) % len
}

/// The ability modifier of a score: floor((score − 10) / 2).
/// A short reference to `id` that does not give it away: the first 8 hex digits of SHA-1
/// over `"ref|{id}"` (a run named in a designer's review without its run id, which may
/// carry a player's).
pub fn reference(id: &str) -> String {
    let digest = Sha1::digest(format!("ref|{id}").as_bytes());
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

pub fn modifier(score: i32) -> i32 {
    // In i64 so that any score a character file can hold (even i32::MIN) cannot overflow;
    // the result always fits back into an i32.
    let m = (i64::from(score) - 10).div_euclid(2);
    i32::try_from(m).unwrap_or(if m < 0 { i32::MIN } else { i32::MAX })
}

/// Chance that d20 + `modifier` ≥ `dc`, in `0.0..=1.0` (no automatic success or failure).
pub fn pass_chance(modifier: i32, dc: u32) -> f64 {
    let need = i64::from(dc) - i64::from(modifier); // the d20 face needed
    let faces = (21 - need).clamp(0, 20);
    faces as f64 / 20.0
}
