//! Share links on the web side: `z1:` + base64url(deflate(zone JSON)).
//!
//! A stand-in with the same contract as the core's share codec (written in parallel), kept
//! behind two functions so the swap at merge is one `use`: [`encode_share`] writes a
//! zlib-wrapped stream (RFC 1950, like `pako.deflate` and Mermaid's `#pako:` links);
//! [`decode_share`] accepts zlib-wrapped and raw (RFC 1951) streams, with or without base64
//! padding. Decoding is bounded: a link comes from anyone.

use std::fmt;

/// The version prefix of a share-link fragment.
pub const PREFIX: &str = "z1:";
/// Largest accepted payload (the base64url text after the prefix), in bytes.
pub const MAX_PAYLOAD: usize = 64 * 1024;
/// Largest accepted zone JSON after inflating, in bytes.
pub const MAX_INFLATED: usize = 2 * 1024 * 1024;
/// Most rooms a shared zone may have: the viewer stays responsive up to here.
pub const MAX_NODES: usize = 5_000;

/// Why a share link could not be made or read. Messages are lowercase, without a period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    Prefix,
    Empty,
    PayloadTooLarge { len: usize },
    Base64 { position: usize, found: char },
    Corrupt,
    InflatedTooLarge,
    NotUtf8,
    TooManyNodes { nodes: usize },
    ZoneTooLarge { len: usize },
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::Prefix => write!(
                f,
                "not a zonegraph share link: expected a fragment starting with `{PREFIX}`"
            ),
            ShareError::Empty => write!(f, "share link is empty after `{PREFIX}`"),
            ShareError::PayloadTooLarge { len } => write!(
                f,
                "share link payload is {len} bytes, over the limit of {MAX_PAYLOAD}"
            ),
            ShareError::Base64 { position, found } => write!(
                f,
                "share link is not valid base64url: unexpected character `{found}` at \
                 position {position}"
            ),
            ShareError::Corrupt => write!(
                f,
                "share link is corrupt or cut short: its data is not a complete deflate stream"
            ),
            ShareError::InflatedTooLarge => {
                write!(f, "share link inflates to more than {MAX_INFLATED} bytes")
            }
            ShareError::NotUtf8 => write!(f, "share link does not contain UTF-8 text"),
            ShareError::TooManyNodes { nodes } => write!(
                f,
                "shared zone has {nodes} rooms, over the viewer's limit of {MAX_NODES}"
            ),
            ShareError::ZoneTooLarge { len } => write!(
                f,
                "zone is too large to share as a link ({len} bytes of JSON; the link may \
                 carry {MAX_PAYLOAD} bytes after compression)"
            ),
        }
    }
}

impl std::error::Error for ShareError {}

/// The fragment (without `#`) for a zone's JSON text. Fails when the link would exceed what
/// [`decode_share`] accepts, so every link made here opens.
pub fn encode_share(json: &str) -> Result<String, ShareError> {
    if json.len() > MAX_INFLATED {
        return Err(ShareError::ZoneTooLarge { len: json.len() });
    }
    let packed = miniz_oxide::deflate::compress_to_vec_zlib(json.as_bytes(), 9);
    let payload = base64url_encode(&packed);
    if payload.len() > MAX_PAYLOAD {
        return Err(ShareError::ZoneTooLarge { len: json.len() });
    }
    Ok(format!("{PREFIX}{payload}"))
}

/// The zone JSON in a fragment (`z1:…`, with or without the leading `#`).
pub fn decode_share(fragment: &str) -> Result<String, ShareError> {
    let fragment = fragment.trim().trim_start_matches('#');
    let payload = fragment.strip_prefix(PREFIX).ok_or(ShareError::Prefix)?;
    let payload = payload.trim_end_matches('=');
    if payload.is_empty() {
        return Err(ShareError::Empty);
    }
    if payload.len() > MAX_PAYLOAD {
        return Err(ShareError::PayloadTooLarge { len: payload.len() });
    }
    let bytes = base64url_decode(payload)?;
    let inflated = inflate(&bytes)?;
    let text = String::from_utf8(inflated).map_err(|_| ShareError::NotUtf8)?;
    let nodes = count_nodes(&text);
    if nodes > MAX_NODES {
        return Err(ShareError::TooManyNodes { nodes });
    }
    Ok(text)
}

/// Inflates a zlib stream, or a raw deflate stream when there is no zlib header.
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, ShareError> {
    use miniz_oxide::inflate::{
        TINFLStatus, decompress_to_vec_with_limit, decompress_to_vec_zlib_with_limit,
    };
    let zlib_header = bytes.len() >= 2
        && bytes[0] & 0x0f == 8
        && (u16::from(bytes[0]) << 8 | u16::from(bytes[1])) % 31 == 0;
    let result = if zlib_header {
        // A zlib stream over the limit stays that error; a bad one may still be raw deflate
        // whose first bytes happen to look like a zlib header.
        decompress_to_vec_zlib_with_limit(bytes, MAX_INFLATED).or_else(|e| {
            if e.status == TINFLStatus::HasMoreOutput {
                Err(e)
            } else {
                decompress_to_vec_with_limit(bytes, MAX_INFLATED)
            }
        })
    } else {
        decompress_to_vec_with_limit(bytes, MAX_INFLATED)
    };
    result.map_err(|e| match e.status {
        TINFLStatus::HasMoreOutput => ShareError::InflatedTooLarge,
        _ => ShareError::Corrupt,
    })
}

/// Rooms in a zone's JSON (`nodes` or `room_kinds`), without building it; 0 when unreadable
/// (the zone parser then says what is wrong).
fn count_nodes(text: &str) -> usize {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return 0;
    };
    ["nodes", "room_kinds"]
        .iter()
        .filter_map(|k| value.get(k).and_then(|v| v.as_array()).map(Vec::len))
        .max()
        .unwrap_or(0)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

fn base64url_decode(text: &str) -> Result<Vec<u8>, ShareError> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (position, c) in text.chars().enumerate() {
        // Standard base64's + and / are accepted too: people paste links through tools.
        let v = match c {
            'A'..='Z' => c as u32 - 'A' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 26,
            '0'..='9' => c as u32 - '0' as u32 + 52,
            '-' | '+' => 62,
            '_' | '/' => 63,
            _ => return Err(ShareError::Base64 { position, found: c }),
        };
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits & 0xff) as u8);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRYPT: &str = include_str!("../../../zones/crypt_valdris.json");

    #[test]
    fn round_trips_every_shipped_zone() {
        for (_, text) in crate::zones::SHIPPED {
            let link = encode_share(text).expect("shipped zones fit in a link");
            assert!(link.starts_with("z1:"));
            assert_eq!(decode_share(&format!("#{link}")).as_deref(), Ok(*text));
        }
    }

    #[test]
    fn accepts_raw_deflate_and_padding() {
        let raw = miniz_oxide::deflate::compress_to_vec(CRYPT.as_bytes(), 6);
        let mut payload = base64url_encode(&raw);
        payload.push_str("==");
        assert_eq!(decode_share(&format!("z1:{payload}")).as_deref(), Ok(CRYPT));
    }

    #[test]
    fn bad_links_say_what_is_wrong() {
        assert_eq!(decode_share("pako:abc"), Err(ShareError::Prefix));
        assert_eq!(decode_share("z1:"), Err(ShareError::Empty));
        assert!(matches!(
            decode_share("z1:ab$c"),
            Err(ShareError::Base64 {
                position: 2,
                found: '$'
            })
        ));
        let link = encode_share(CRYPT).expect("fits");
        let cut = &link[..link.len() / 2];
        assert_eq!(decode_share(cut), Err(ShareError::Corrupt));
        let huge = "z1:".to_string() + &"A".repeat(MAX_PAYLOAD + 1);
        assert!(matches!(
            decode_share(&huge),
            Err(ShareError::PayloadTooLarge { .. })
        ));
    }

    #[test]
    fn a_zip_bomb_stops_at_the_limit() {
        let bomb = vec![b' '; MAX_INFLATED + 10];
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(&bomb, 9);
        let link = format!("z1:{}", base64url_encode(&packed));
        assert_eq!(decode_share(&link), Err(ShareError::InflatedTooLarge));
    }

    #[test]
    fn too_many_rooms_is_refused() {
        let kinds = vec!["\"merge\""; MAX_NODES + 10].join(",");
        let json = format!(
            "{{\"format\":1,\"zone_id\":\"big\",\"name\":\"Big\",\"tier\":1,\
             \"min_level\":1,\"max_level\":2,\"room_kinds\":[{kinds}]}}"
        );
        let link = encode_share(&json).expect("compresses well");
        assert!(matches!(
            decode_share(&link),
            Err(ShareError::TooManyNodes { .. })
        ));
    }
}
