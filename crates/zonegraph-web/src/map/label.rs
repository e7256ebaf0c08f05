//! A room's label as drawn in its box: one line, or two broken between words, cut with an
//! ellipsis when too long, from an estimate of its width (no DOM measuring).
//!
//! Pure, so it is tested natively.

/// Room labels are 13 px bold from 48 px into the 184 px box, which leaves 132 px to the clip
/// edge: in [`char_em`]'s estimate (within a few per cent of the rendered width of Chromium's
/// bold sans-serif here) that is 10.2 em a line. The clip path catches the rest.
pub(super) const LABEL_EM: f64 = 10.2;
/// A line of a two-line label may be this much wider than [`LABEL_EM`]; it is drawn
/// condensed to the line (class `tight`, `scaleX(.8)` in map.css). The marks layer
/// (`.marks`) lets clicks through to the rooms and passages under it; the run page's zoom
/// buttons sit on a bar under the map (run.css), where they cover no room.
const SQUEEZE: f64 = 1.25;

/// Labels up to this many characters are shown whole, on two lines where needed.
pub const LABEL_FULL_CHARS: usize = 32;

/// A character's advance in em, rounded up by class (narrow, medium, wide, capitals, other
/// ASCII, anything else): a cheap estimate of a label's width without measuring the DOM.
fn char_em(c: char) -> f64 {
    match c {
        'i' | 'l' | 'j' | 'I' | '\'' | '.' | ',' | ':' | ';' | '!' | '|' => 0.36,
        'f' | 't' | 'r' | ' ' | '(' | ')' | '-' | '’' => 0.46,
        'm' | 'w' | 'M' | 'W' => 1.0,
        'A'..='Z' => 0.78,
        c if c.is_ascii() => 0.64,
        // Accented Latin is about as wide; CJK and symbols are a full em.
        _ => 1.0,
    }
}

pub(super) fn width_em(s: &str) -> f64 {
    s.chars().map(char_em).sum()
}

/// A label as drawn in its room box: one line, or two broken between words, and whether it
/// was cut (then the full label is the room's tooltip; its accessible name always is). A
/// label of up to [`LABEL_FULL_CHARS`] characters is never cut unless a single word is too
/// wide for a line; a longer one is cut after its last whole word that fits, with an
/// ellipsis, so the visible words are the start of the accessible name.
pub fn label_lines(label: &str) -> (String, Option<String>, bool) {
    if width_em(label) <= LABEL_EM {
        return (label.to_string(), None, false);
    }
    let words: Vec<&str> = label.split(' ').collect();
    let space = char_em(' ');
    // `ends[k]`: the width of the first `k` words with their spaces.
    let mut ends = vec![0.0];
    for (i, w) in words.iter().enumerate() {
        ends.push(ends[i] + width_em(w) + if i > 0 { space } else { 0.0 });
    }
    let total = ends[words.len()];
    let line = |a: usize, b: usize| words[a..b].join(" ");
    // The most even break between words, for a label short enough; lines may be condensed
    // a little.
    let mut best = (f64::MAX, 0);
    for (k, &a) in ends.iter().enumerate().take(words.len()).skip(1) {
        let widest = a.max(total - a - space);
        if widest < best.0 {
            best = (widest, k);
        }
    }
    if label.chars().count() <= LABEL_FULL_CHARS && best.0 <= LABEL_EM * SQUEEZE {
        let k = best.1;
        return (line(0, k), Some(line(k, words.len())), false);
    }
    // The longest first line of whole words that fits.
    let first = ends.iter().rposition(|&e| e <= LABEL_EM).unwrap_or(0);
    if first == 0 {
        // One word wider than a line: cut it, as one line.
        return (cut(label, LABEL_EM), None, true);
    }
    // Too long: the second line ends after its last whole word that fits, then "…".
    let start = ends[first] + space;
    let last = ends
        .iter()
        .rposition(|&e| e - start + 0.85 <= LABEL_EM)
        .unwrap_or(first);
    let line2 = if last > first {
        let mut l = line(first, last);
        l.push('…');
        l
    } else {
        cut(&line(first, words.len()), LABEL_EM)
    };
    (line(0, first), Some(line2), true)
}

/// `s` cut to `em` of estimated width, with an ellipsis.
fn cut(s: &str, em: f64) -> String {
    let mut out = String::new();
    let mut width = 0.85; // the ellipsis
    for c in s.chars() {
        width += char_em(c);
        if width > em {
            break;
        }
        out.push(c);
    }
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::{LABEL_FULL_CHARS, label_lines};

    fn lines(label: &str) -> (String, Option<String>, bool) {
        label_lines(label)
    }

    #[test]
    fn labels_take_two_lines_and_long_ones_are_cut_at_a_word() {
        let one = |s: &str| (s.to_string(), None, false);
        let two = |a: &str, b: &str| (a.to_string(), Some(b.to_string()), false);
        assert_eq!(lines("Crypt Threshold"), one("Crypt Threshold"));
        assert_eq!(lines("Valdris's Sanctum"), one("Valdris's Sanctum"));
        assert_eq!(lines("Branching Passage"), two("Branching", "Passage"));
        assert_eq!(lines("Processional Steps"), two("Processional", "Steps"));
        assert_eq!(
            lines("Mother Bristleback's Den"),
            two("Mother", "Bristleback's Den")
        );
        assert_eq!(
            lines("Crypt of the First Abbot's Guard"),
            two("Crypt of the First", "Abbot's Guard")
        );
        assert_eq!(
            lines("High Altar of the Last Pilgrimage Road"),
            (
                "High Altar of the".to_string(),
                Some("Last Pilgrimage…".to_string()),
                true
            )
        );
        assert_eq!(
            lines("WWWWWWWWWWWW"),
            ("WWWWWWWWW…".to_string(), None, true)
        );
        assert_eq!(
            lines("大广间大广间大广间大广间"),
            ("大广间大广间大广间…".to_string(), None, true)
        );
    }

    /// Every label of the shipped zones and the gallery's fixtures of up to 32 characters
    /// is drawn whole; the words drawn are always the start of the label.
    #[test]
    fn fixture_labels_up_to_32_characters_are_whole() {
        let fixtures = [
            include_str!("../../../../web/fixtures/zones/gilded_processional.json"),
            include_str!("../../../../web/fixtures/zones/pilgrim_road.json"),
        ];
        let texts = crate::zones::SHIPPED
            .iter()
            .map(|(_, t)| *t)
            .chain(fixtures);
        let mut long = 0;
        for text in texts {
            let (zone, _) = zonegraph_core::zone::load(text).expect("parses");
            for ix in zone.node_indices() {
                let label = zone.node(ix).label.as_str();
                let (a, b, cut) = lines(label);
                let shown = match &b {
                    Some(b) => format!("{a} {b}"),
                    None => a.clone(),
                };
                if label.chars().count() <= LABEL_FULL_CHARS {
                    assert!(!cut, "{label:?} was cut: {shown:?}");
                    assert_eq!(shown, label);
                } else {
                    long += 1;
                    assert!(cut, "{label:?}");
                    let words = shown.trim_end_matches('…');
                    assert!(label.starts_with(words), "{label:?} drawn as {shown:?}");
                }
            }
        }
        assert!(long >= 2, "the fixtures have labels over 32 characters");
    }
}
