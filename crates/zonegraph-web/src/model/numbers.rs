//! Numbers as the drawing prints them: SVG coordinates, CSS transforms, percentages.
//!
//! Written out by hand because `f64`'s `Display` brings ~10 KB of float printing into the
//! WebAssembly; a differential test against `format!` (in the model's tests) keeps them honest.

/// Appends `x` rounded to `places` decimals (at most 6), trailing zeros dropped ("12",
/// "12.5", "-0.025"): SVG numbers and CSS transforms. Written out by hand because `f64`'s
/// `Display` brings ~10 KB of float printing into the WebAssembly.
pub fn push_dec(s: &mut String, x: f64, places: u32) {
    let scale = 10u64.pow(places.min(6));
    let v = (x * scale as f64).round() as i64;
    if v < 0 {
        s.push('-');
    }
    let a = v.unsigned_abs();
    s.push_str(&(a / scale).to_string());
    let (mut frac, mut digits) = (a % scale, scale / 10);
    if frac != 0 {
        s.push('.');
        while frac != 0 {
            s.push(char::from(b'0' + (frac / digits) as u8));
            frac %= digits;
            digits /= 10;
        }
    }
}

/// [`push_dec`] with one decimal.
pub fn push_num(s: &mut String, x: f64) {
    push_dec(s, x, 1);
}

/// [`push_num`] into a new string.
pub fn num(x: f64) -> String {
    let mut s = String::new();
    push_num(&mut s, x);
    s
}

/// A probability as a whole percentage: "45%".
pub fn percent(p: f64) -> String {
    let mut s = ((p * 100.0).round() as i64).to_string();
    s.push('%');
    s
}
