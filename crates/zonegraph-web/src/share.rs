//! Share links in the viewer: the core's codec ([`zonegraph_core::share`]: `z1:` +
//! base64url(deflate(zone JSON)), bounded decode of zlib-wrapped or raw streams) plus the
//! viewer's own limit on rooms, so a link from anyone keeps the page responsive. The browser
//! deflates ([`browser::deflate`]): the core's compressor would add 5.2 KB to the designer's
//! wasm on the wire (BENCHMARKS.md); reading a link stays the core's, bounded and with its
//! precise errors.

use std::fmt;

use zonegraph_core::share;
pub use zonegraph_core::share::{MAX_INFLATED, MAX_PAYLOAD, PREFIX};

/// Most rooms a shared zone may have: the viewer stays responsive up to here.
pub const MAX_NODES: usize = 5_000;

/// Why a share link could not be made or read. Messages are lowercase, without a period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// The link itself: see [`share::ShareError`].
    Link(share::ShareError),
    TooManyNodes {
        nodes: usize,
    },
    /// The browser could not deflate the zone (no `CompressionStream`: a browser older than
    /// 2023).
    Deflate(String),
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::Link(e) => e.fmt(f),
            ShareError::TooManyNodes { nodes } => write!(
                f,
                "shared zone has {nodes} rooms, over the viewer's limit of {MAX_NODES}"
            ),
            ShareError::Deflate(e) => write!(f, "this browser cannot compress a link ({e})"),
        }
    }
}

impl std::error::Error for ShareError {}

/// The fragment (without `#`) for a zone's JSON text; every link made here opens: the core's
/// [`share::encode`], with the browser's deflate.
pub async fn encode_share(json: &str) -> Result<String, ShareError> {
    share::fits(json).map_err(ShareError::Link)?;
    let zlib = crate::browser::deflate(json)
        .await
        .map_err(ShareError::Deflate)?;
    share::frame(&zlib).map_err(ShareError::Link)
}

/// The zone JSON in a fragment (`z1:…`, with or without the leading `#`).
pub fn decode_share(fragment: &str) -> Result<String, ShareError> {
    let text = share::decode(fragment).map_err(ShareError::Link)?;
    let nodes = count_nodes(&text);
    if nodes > MAX_NODES {
        return Err(ShareError::TooManyNodes { nodes });
    }
    Ok(text)
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

#[cfg(test)]
mod tests {
    use super::*;

    // Links the viewer makes (the browser deflates them) are tested in the browser:
    // tests/browser.rs, `the_browser_deflates_links_the_core_reads`.

    #[test]
    fn bad_links_keep_the_core_error() {
        assert!(matches!(
            decode_share("pako:abc"),
            Err(ShareError::Link(share::ShareError::Prefix))
        ));
        assert_eq!(
            decode_share("pako:abc").map_err(|e| e.to_string()),
            Err("not a zonegraph share link: expected a fragment starting with `z1:`".into())
        );
    }

    #[test]
    fn too_many_rooms_is_refused() {
        let kinds = vec!["\"merge\""; MAX_NODES + 10].join(",");
        let json = format!(
            "{{\"format\":1,\"zone_id\":\"big\",\"name\":\"Big\",\"tier\":1,\
             \"min_level\":1,\"max_level\":2,\"room_kinds\":[{kinds}]}}"
        );
        let link = share::encode(&json).expect("compresses well");
        assert!(matches!(
            decode_share(&link),
            Err(ShareError::TooManyNodes { .. })
        ));
    }
}
