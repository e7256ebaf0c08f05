//! Small, size-conscious helpers shared by the core: number formatting, sorting and
//! capitalising.
//!
//! The core ships to browsers as WebAssembly, where every generic instantiation and every
//! formatting routine is downloaded by each visitor. `f64`'s `Display`/`Debug` pull in ~16 KB
//! of float printing; `slice::sort_by` is a fresh ~2–4 KB quicksort per element type and
//! closure. These helpers do the same job with one shared, non-generic body.

use std::cmp::Ordering;

/// `x` with up to six decimals, trailing zeros trimmed, always at least one decimal
/// (`1.0`, `1.5`, `0.25`) — what `{:?}` prints for the numbers zone files hold.
pub fn decimal(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "NaN".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    const SCALE: i64 = 1_000_000;
    // Saturates beyond ±9.2e12, far outside any number a zone file means.
    let scaled = (x * SCALE as f64).round() as i64;
    let sign = if scaled < 0 { "-" } else { "" };
    let abs = scaled.unsigned_abs();
    let (int, frac) = (abs / SCALE as u64, abs % SCALE as u64);
    let mut frac = format!("{frac:06}");
    while frac.len() > 1 && frac.ends_with('0') {
        frac.pop();
    }
    format!("{sign}{int}.{frac}")
}

/// A share as a whole percent: `0.404` reads "40%". By hand: printing an `f64` costs the
/// browser's module kilobytes.
pub fn percent(share: f64) -> String {
    let mut s = ((share * 100.0).round() as i64).to_string();
    s.push('%');
    s
}

/// `s` with its first letter upper-case: `trap` reads "Trap". Every capital the core and the
/// viewer write goes through here.
///
/// Only an ASCII first letter changes; any other first character (a digit, a quote, `é`) is
/// kept as written. Whole characters are kept, so any UTF-8 text is safe. The Unicode case
/// tables `char::to_uppercase` needs are kilobytes of wasm, and what is capitalised here
/// (kinds, ids, the core's own messages) starts with an ASCII letter.
pub fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out = String::with_capacity(s.len());
            out.push(first.to_ascii_uppercase());
            out.push_str(chars.as_str());
            out
        }
        None => String::new(),
    }
}

/// Lists up to this long are insertion-sorted in place.
const SMALL: usize = 12;

/// Sorts `v` stably by `cmp`, like `slice::sort_by`, through one shared merge sort over
/// indices (so each element type costs a few dozen bytes of wasm, not a whole sort).
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() <= SMALL {
        // Insertion sort in place: no allocation for the short lists most calls sort (a
        // room's exits). Moves an element left only past strictly greater ones: stable.
        for i in 1..v.len() {
            let mut j = i;
            while j > 0 && cmp(&v[j], &v[j - 1]) == Ordering::Less {
                v.swap(j, j - 1);
                j -= 1;
            }
        }
        return;
    }
    let order = sorted_indices(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    permute(v, &order);
}

/// Sorts `v` stably by the key `key` returns, like `slice::sort_by_key`.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` ascending (`sort_unstable`).
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Sorts `v` ascending and drops repeated values (`sort_unstable` + `dedup`).
pub fn sort_dedup<T: Ord>(v: &mut Vec<T>) {
    sort(v);
    v.dedup();
}

/// The stable order of `0..n` under `cmp`: a bottom-up merge sort, not generic.
fn sorted_indices(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut a: Vec<usize> = (0..n).collect();
    let mut b = a.clone();
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                // Take from the right run only when strictly smaller: stability.
                if cmp(a[j], a[i]) == Ordering::Less {
                    b[k] = a[j];
                    j += 1;
                } else {
                    b[k] = a[i];
                    i += 1;
                }
                k += 1;
            }
            b[k..k + (mid - i)].copy_from_slice(&a[i..mid]);
            k += mid - i;
            b[k..k + (end - j)].copy_from_slice(&a[j..end]);
            start = end;
        }
        std::mem::swap(&mut a, &mut b);
        width *= 2;
    }
    a
}

/// Rearranges `v` in place so that `v[k]` becomes the old `v[order[k]]`, one cycle of the
/// permutation at a time.
fn permute<T>(v: &mut [T], order: &[usize]) {
    let mut done = vec![false; v.len()];
    for start in 0..v.len() {
        let mut k = start;
        while !done[k] {
            done[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `slice::sort_by`, which [`sort_by`] replaces: the reference of the differential tests.
    #[allow(clippy::disallowed_methods)] // the std sort is the reference here
    fn std_sort_by<T>(v: &mut [T], cmp: impl FnMut(&T, &T) -> Ordering) {
        v.sort_by(cmp);
    }

    /// `char::to_uppercase` on the first character, which [`capitalise`] replaces for ASCII.
    #[allow(clippy::disallowed_methods)] // the std upper-casing is the reference here
    fn std_capitalise(s: &str) -> String {
        let mut chars = s.chars();
        match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => String::new(),
        }
    }

    #[test]
    fn percents_are_whole() {
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(0.404), "40%");
        assert_eq!(percent(0.555), "56%");
        assert_eq!(percent(1.0), "100%");
    }

    #[test]
    fn capitalise_raises_an_ascii_first_letter_only() {
        assert_eq!(capitalise(""), "");
        assert_eq!(capitalise("trap"), "Trap");
        assert_eq!(capitalise("Boss"), "Boss");
        assert_eq!(capitalise("x"), "X");
        assert_eq!(
            capitalise("\"x\" is not a command"),
            "\"x\" is not a command"
        );
        assert_eq!(capitalise("2 keys"), "2 keys");
        // Outside ASCII the first character is kept as written, whole.
        assert_eq!(capitalise("élan vital"), "élan vital");
        assert_eq!(capitalise("ßx"), "ßx");
        assert_eq!(capitalise("🗝 key"), "🗝 key");
    }

    proptest! {
        #[test]
        fn capitalise_is_to_uppercase_on_ascii(s in "[ -~][ -~é🗝]{0,12}") {
            prop_assert_eq!(capitalise(&s), std_capitalise(&s));
        }

        #[test]
        fn capitalise_changes_at_most_the_first_character(s in "\\PC{0,12}") {
            let out = capitalise(&s);
            prop_assert_eq!(out.len(), s.len());
            prop_assert!(out.chars().skip(1).eq(s.chars().skip(1)));
            prop_assert_eq!(out.chars().next(), s.chars().next().map(|c| c.to_ascii_uppercase()));
        }
    }

    /// What `{:.6}` prints for `x`, trimmed to [`decimal`]'s form: trailing zeros dropped
    /// but one decimal kept, and no sign on zero.
    fn std_decimal(x: f64) -> String {
        let mut s = format!("{x:.6}");
        while s.ends_with('0') && !s.ends_with(".0") {
            s.pop();
        }
        if s == "-0.0" { "0.0".into() } else { s }
    }

    /// Numbers of every size a decimal is printed for: large, tiny (that round to zero, with
    /// or without a sign), and exact halves of the last place (ties).
    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            -1e9f64..1e9,
            -1e-5f64..1e-5,
            (-2_000_000i64..2_000_000).prop_map(|n| n as f64 / 2e6),
        ]
    }

    /// `(key, position)` pairs: equal keys keep their positions apart, so a sort that is
    /// not stable gives a different sequence.
    fn tagged(keys: Vec<u8>) -> Vec<(u8, usize)> {
        keys.into_iter().zip(0..).collect()
    }

    proptest! {
        // Lengths well past SMALL, so both the insertion sort and the merge sort run; few
        // distinct keys, so there are many ties.
        #[test]
        fn sort_by_is_std_stable_sort(keys in prop::collection::vec(0u8..6, 0..100)) {
            let v = tagged(keys);
            let mut ours = v.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std = v.clone();
            std_sort_by(&mut std, |a, b| a.0.cmp(&b.0));
            prop_assert_eq!(&ours, &std);
            // The other way round too: stability does not depend on the direction.
            let mut ours = v.clone();
            sort_by(&mut ours, |a, b| b.0.cmp(&a.0));
            let mut std = v;
            std_sort_by(&mut std, |a, b| b.0.cmp(&a.0));
            prop_assert_eq!(ours, std);
        }

        #[test]
        fn sort_by_key_is_std_stable_sort(keys in prop::collection::vec(any::<u8>(), 0..100)) {
            let v = tagged(keys);
            let mut ours = v.clone();
            sort_by_key(&mut ours, |p| p.0 / 16);
            let mut std = v;
            std_sort_by(&mut std, |a, b| (a.0 / 16).cmp(&(b.0 / 16)));
            prop_assert_eq!(ours, std);
        }

        #[test]
        fn sort_and_sort_dedup_are_std(v in prop::collection::vec(any::<i16>(), 0..100)) {
            let mut ours = v.clone();
            sort(&mut ours);
            let mut std = v.clone();
            std_sort_by(&mut std, i16::cmp);
            prop_assert_eq!(&ours, &std);
            let mut ours = v;
            sort_dedup(&mut ours);
            std.dedup();
            prop_assert_eq!(ours, std);
        }

        // The contract: `x · 10⁶` rounded half away from zero (`f64::round`), printed in full.
        // `{:.6}` rounds ties to even on the exact value instead, so the reference is given
        // the number already rounded the same way.
        #[test]
        fn decimal_is_format_of_the_same_rounding(x in number()) {
            let rounded = (x * 1e6).round() / 1e6;
            prop_assert_eq!(decimal(x), std_decimal(rounded));
        }

        // Away from a tie the two roundings agree, so `{:.6}` of `x` itself is the reference.
        #[test]
        fn decimal_is_format_away_from_ties(x in -1e6f64..1e6) {
            let frac = (x * 1e6).abs().fract();
            prop_assume!((frac - 0.5).abs() > 0.01);
            prop_assert_eq!(decimal(x), std_decimal(x));
        }

        // What its doc promises: `{:?}` of the numbers zone files hold (up to six decimals,
        // not so small that `{:?}` switches to an exponent).
        #[test]
        fn decimal_is_debug_for_zone_numbers(n in -1_000_000_000i64..1_000_000_000, places in 0u32..=6) {
            let x = n as f64 / 10f64.powi(places as i32);
            prop_assume!(x == 0.0 || x.abs() >= 1e-4);
            prop_assert_eq!(decimal(x), format!("{x:?}"));
        }
    }

    #[test]
    fn decimal_prints_like_debug_for_zone_numbers() {
        for (x, s) in [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (0.25, "0.25"),
            (-2.0, "-2.0"),
            (0.0, "0.0"),
            (-0.0, "0.0"),
            (1e-7, "0.0"),
            (-1e-7, "0.0"),
            (123.456, "123.456"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(decimal(x), s, "{x}");
        }
    }

    #[test]
    fn sort_dedup_sorts_and_dedups() {
        let mut v = vec![3, 1, 3, 2, 1];
        sort_dedup(&mut v);
        assert_eq!(v, [1, 2, 3]);
    }
}
