//! Share links: a whole zone in a URL fragment, `z1:` + base64url(deflate(zone JSON)).
//!
//! [`encode`] writes a zlib-wrapped deflate stream (RFC 1950, what `pako.deflate` and Mermaid's
//! `#pako:` links use): its Adler-32 checksum turns a truncated or mistyped link into a clear
//! error instead of a wrong zone. [`decode`] accepts both zlib-wrapped and raw (RFC 1951)
//! streams, with or without base64 padding, and is bounded: a link comes from anyone, so it may
//! not make the reader allocate more than [`MAX_INFLATED`] bytes.

use miniz_oxide::inflate::{
    TINFLStatus, decompress_to_vec_with_limit, decompress_to_vec_zlib_with_limit,
};

/// The version prefix of a share-link fragment.
pub const PREFIX: &str = "z1:";

/// Largest accepted payload (the base64url text after the prefix), in bytes.
pub const MAX_PAYLOAD: usize = 64 * 1024;

/// Largest accepted zone JSON after inflating, in bytes.
pub const MAX_INFLATED: usize = 2 * 1024 * 1024;

/// Why a share link could not be made or read. Messages are lowercase, without a period.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    #[error("not a zonegraph share link: expected a fragment starting with `{PREFIX}`")]
    Prefix,
    #[error("share link is empty after `{PREFIX}`")]
    Empty,
    #[error("share link payload is {len} bytes, over the limit of {MAX_PAYLOAD}")]
    PayloadTooLarge { len: usize },
    #[error(
        "share link is not valid base64url: unexpected character `{found}` at position {position}"
    )]
    Base64 { position: usize, found: char },
    #[error("share link is not valid base64url: its length leaves a dangling character")]
    Base64Length,
    #[error("share link inflates to more than {MAX_INFLATED} bytes")]
    InflatedTooLarge,
    #[error("share link is corrupt: its data is not a complete deflate stream ({detail})")]
    Corrupt { detail: &'static str },
    #[error("share link does not contain UTF-8 text")]
    NotUtf8,
    #[error("zone is {len} bytes, over the share-link limit of {MAX_INFLATED}")]
    ZoneTooLarge { len: usize },
}

impl ShareError {
    /// A stable code for callers that branch on the kind of failure.
    pub fn code(&self) -> &'static str {
        match self {
            ShareError::Prefix => "share_prefix",
            ShareError::Empty => "share_empty",
            ShareError::PayloadTooLarge { .. } => "share_payload_too_large",
            ShareError::Base64 { .. } | ShareError::Base64Length => "share_base64",
            ShareError::InflatedTooLarge => "share_inflated_too_large",
            ShareError::Corrupt { .. } => "share_corrupt",
            ShareError::NotUtf8 => "share_not_utf8",
            ShareError::ZoneTooLarge { .. } => "share_zone_too_large",
        }
    }
}

/// Makes the fragment (without `#`) for a zone's JSON text: `z1:` + base64url, no padding.
///
/// Fails when the text or the link would exceed what [`decode`] accepts, so every link this
/// returns can be opened.
pub fn encode(zone_json: &str) -> Result<String, ShareError> {
    fits(zone_json)?;
    frame(&miniz_oxide::deflate::compress_to_vec_zlib(
        zone_json.as_bytes(),
        9,
    ))
}

/// Whether a zone's JSON text is small enough for a link: the first half of [`encode`], for
/// a caller that deflates it itself (the viewer has the browser's `CompressionStream` do it,
/// so its bundle carries no compressor) and then calls [`frame`].
pub fn fits(zone_json: &str) -> Result<(), ShareError> {
    if zone_json.len() > MAX_INFLATED {
        return Err(ShareError::ZoneTooLarge {
            len: zone_json.len(),
        });
    }
    Ok(())
}

/// The fragment for a zlib-wrapped deflate stream of a zone's JSON text (RFC 1950, what
/// `CompressionStream("deflate")` writes): `z1:` + base64url, no padding; refused when
/// [`decode`] would refuse it for its length.
pub fn frame(zlib: &[u8]) -> Result<String, ShareError> {
    let payload = base64url_encode(zlib);
    if payload.len() > MAX_PAYLOAD {
        return Err(ShareError::PayloadTooLarge { len: payload.len() });
    }
    Ok(format!("{PREFIX}{payload}"))
}

/// Reads a share link back into zone JSON text. Accepts the fragment with or without its `#`,
/// or a whole URL whose fragment is the link.
pub fn decode(link: &str) -> Result<String, ShareError> {
    let link = link.trim();
    let fragment = match link.find('#') {
        Some(i) => &link[i + 1..],
        None => link,
    };
    let payload = fragment.strip_prefix(PREFIX).ok_or(ShareError::Prefix)?;
    if payload.len() > MAX_PAYLOAD {
        return Err(ShareError::PayloadTooLarge { len: payload.len() });
    }
    if payload.is_empty() {
        return Err(ShareError::Empty);
    }
    let packed = base64url_decode(payload)?;
    let bytes = inflate(&packed)?;
    String::from_utf8(bytes).map_err(|_| ShareError::NotUtf8)
}

/// Inflates a zlib-wrapped stream, or a raw deflate stream when there is no zlib header.
fn inflate(data: &[u8]) -> Result<Vec<u8>, ShareError> {
    let zlib = match data {
        // CMF: deflate with a window of at most 32 KiB; FLG: no preset dictionary; checksum.
        [cmf, flg, ..] => {
            cmf & 0x0f == 8
                && cmf >> 4 <= 7
                && flg & 0x20 == 0
                && (u16::from(*cmf) * 256 + u16::from(*flg)) % 31 == 0
        }
        _ => false,
    };
    let result = if zlib {
        // A raw stream can start with bytes that look like a zlib header: fall back to raw.
        decompress_to_vec_zlib_with_limit(data, MAX_INFLATED)
            .or_else(|zerr| decompress_to_vec_with_limit(data, MAX_INFLATED).map_err(|_| zerr))
    } else {
        decompress_to_vec_with_limit(data, MAX_INFLATED)
    };
    result.map_err(|e| match e.status {
        TINFLStatus::HasMoreOutput => ShareError::InflatedTooLarge,
        TINFLStatus::Adler32Mismatch => ShareError::Corrupt {
            detail: "checksum mismatch",
        },
        TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
            ShareError::Corrupt {
                detail: "stream ends early",
            }
        }
        _ => ShareError::Corrupt {
            detail: "invalid data",
        },
    })
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// Decodes base64url; also takes the standard alphabet (`+`, `/`) and trailing `=` padding,
/// since links get pasted through tools that "fix" them.
fn base64url_decode(text: &str) -> Result<Vec<u8>, ShareError> {
    let body = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (position, c) in body.char_indices() {
        let v = match c {
            'A'..='Z' => c as u32 - 'A' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 26,
            '0'..='9' => c as u32 - '0' as u32 + 52,
            '-' | '+' => 62,
            '_' | '/' => 63,
            _ => return Err(ShareError::Base64 { position, found: c }),
        };
        acc = (acc << 6 | v) & 0xff_ffff;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if body.len() % 4 == 1 {
        return Err(ShareError::Base64Length);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZONE: &str = r#"{"format":1,"zone_id":"z","name":"Zed","tier":1,"min_level":1,"max_level":3,"room_kinds":["entry","boss"]}"#;

    fn link_of(packed: &[u8]) -> String {
        format!("{PREFIX}{}", base64url_encode(packed))
    }

    #[test]
    fn round_trips_and_accepts_prefixes() {
        let link = encode(ZONE).expect("encodes");
        assert!(link.starts_with("z1:"), "{link}");
        assert!(!link.contains(['+', '/', '=']), "{link}");
        assert_eq!(decode(&link).as_deref(), Ok(ZONE));
        assert_eq!(decode(&format!("#{link}")).as_deref(), Ok(ZONE));
        assert_eq!(
            decode(&format!("https://x.invalid/app/#{link}\n")).as_deref(),
            Ok(ZONE)
        );
        assert_eq!(
            decode(&encode("").expect("empty text encodes")).as_deref(),
            Ok("")
        );
    }

    #[test]
    fn base64_round_trips_every_length() {
        let data: Vec<u8> = (0..=255u8).collect();
        for n in 0..data.len() {
            let text = base64url_encode(&data[..n]);
            assert_eq!(base64url_decode(&text).as_deref(), Ok(&data[..n]), "{n}");
            let padded = format!("{text}{}", "=".repeat((4 - text.len() % 4) % 4));
            assert_eq!(base64url_decode(&padded).as_deref(), Ok(&data[..n]), "{n}");
        }
    }

    #[test]
    fn accepts_raw_and_zlib_streams() {
        let raw = miniz_oxide::deflate::compress_to_vec(ZONE.as_bytes(), 6);
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(ZONE.as_bytes(), 1);
        assert_eq!(decode(&link_of(&raw)).as_deref(), Ok(ZONE));
        assert_eq!(decode(&link_of(&zlib)).as_deref(), Ok(ZONE));
        // Standard base64 with padding, as some tools rewrite it.
        let std = link_of(&zlib).replace('-', "+").replace('_', "/") + "==";
        let std = &std[..std.len() - (std.len() - PREFIX.len()) % 4];
        assert_eq!(decode(std).as_deref(), Ok(ZONE));
    }

    #[test]
    fn rejects_bad_links_with_clear_errors() {
        let check = |link: &str, code: &str| {
            let err = decode(link).expect_err(link);
            assert_eq!(err.code(), code, "{link}: {err}");
            let msg = err.to_string();
            assert!(
                msg.starts_with(|c: char| c.is_lowercase()) && !msg.ends_with('.'),
                "{msg}"
            );
        };
        check("", "share_prefix");
        check("pako:eNqrVg", "share_prefix");
        check("z1:", "share_empty");
        check("z1:abc$def", "share_base64");
        check("z1:abcde", "share_base64");
        check("z1:AAAA", "share_corrupt");
        let mut link = encode(ZONE).expect("encodes");
        link.truncate(link.len() - 6);
        check(&link, "share_corrupt");
        // A flipped byte inside the compressed data: the checksum or the stream catches it.
        let mut packed = miniz_oxide::deflate::compress_to_vec_zlib(ZONE.as_bytes(), 9);
        let mid = packed.len() / 2;
        packed[mid] ^= 0x55;
        check(&link_of(&packed), "share_corrupt");
        check(&link_of(&[0xff, 0xfe, 0xfd]), "share_corrupt");
        let not_utf8 = miniz_oxide::deflate::compress_to_vec_zlib(&[0xff, 0xc0, 0x80], 9);
        check(&link_of(&not_utf8), "share_not_utf8");
    }

    #[test]
    fn bounds_payload_and_inflated_size() {
        let long = format!("z1:{}", "A".repeat(MAX_PAYLOAD + 1));
        assert_eq!(
            decode(&long),
            Err(ShareError::PayloadTooLarge {
                len: MAX_PAYLOAD + 1
            })
        );
        // A deflate bomb: a few KB that inflate past the limit.
        let bomb = miniz_oxide::deflate::compress_to_vec_zlib(&vec![b' '; MAX_INFLATED + 1], 9);
        assert!(bomb.len() < MAX_PAYLOAD);
        assert_eq!(decode(&link_of(&bomb)), Err(ShareError::InflatedTooLarge));
        let exact = miniz_oxide::deflate::compress_to_vec_zlib(&vec![b' '; MAX_INFLATED], 9);
        assert_eq!(decode(&link_of(&exact)).map(|s| s.len()), Ok(MAX_INFLATED));
        let too_big = " ".repeat(MAX_INFLATED + 1);
        assert_eq!(
            encode(&too_big),
            Err(ShareError::ZoneTooLarge {
                len: MAX_INFLATED + 1
            })
        );
    }

    #[test]
    fn garbage_never_panics() {
        // A small deterministic generator: no randomness of our own in the core, even in tests.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 64) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| (x >> (i % 8 * 8)) as u8 ^ i as u8)
                .collect();
            let mut link = link_of(&bytes);
            if round % 2 == 0 {
                // Keep a plausible zlib header so the inflater itself sees the garbage.
                link = link_of(&[[0x78, 0x9c].as_slice(), &bytes].concat());
            }
            let _ = decode(&link);
            let _ = decode(&String::from_utf8_lossy(&bytes));
        }
    }
}
