//! Small, size-conscious helpers shared by the core: number formatting and sorting.
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
    use super::*;

    #[test]
    fn decimal_prints_like_debug_for_zone_numbers() {
        for (x, s) in [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (0.25, "0.25"),
            (-2.0, "-2.0"),
            (0.0, "0.0"),
            (1e-7, "0.0"),
            (123.456, "123.456"),
        ] {
            assert_eq!(decimal(x), s, "{x}");
        }
    }

    #[test]
    fn sort_by_matches_std_stable_sort() {
        // A small deterministic pseudo-random sequence with many ties.
        let mut state = 7u32;
        for n in 0..200 {
            let v: Vec<(u32, usize)> = (0..n)
                .map(|i| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    ((state >> 16) % 7, i)
                })
                .collect();
            let mut ours = v.clone();
            sort_by_key(&mut ours, |p| p.0);
            let mut std = v;
            std.sort_by_key(|p| p.0);
            assert_eq!(ours, std, "n = {n}");
        }
    }

    #[test]
    fn sort_dedup_sorts_and_dedups() {
        let mut v = vec![3, 1, 3, 2, 1];
        sort_dedup(&mut v);
        assert_eq!(v, [1, 2, 3]);
    }
}
