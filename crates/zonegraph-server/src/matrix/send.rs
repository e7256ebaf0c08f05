//! What the bot sends: a reply as an `m.notice` (plain and HTML bodies, maps in
//! `<pre><code>`, cut under the event size limit with a pointer to the run map), and the
//! send itself with retries.

use std::time::Duration;

use matrix_sdk::Room;
use matrix_sdk::ruma::api::error::{ErrorKind, RetryAfter};
use matrix_sdk::ruma::events::room::message::RoomMessageEventContent;

use zonegraph_core::chat::{self, Reply, escape};

/// Largest serialized event content we send; Matrix caps a whole event at 65,536 bytes and
/// the server adds its own fields (and encryption a third), so stay far below.
pub const MAX_CONTENT_BYTES: usize = 32 * 1024;

/// The event content of one reply: an `m.notice` with a plain body and an HTML body (the map
/// in `<pre><code>`), cut to stay under [`MAX_CONTENT_BYTES`].
pub fn notice(reply: &Reply) -> RoomMessageEventContent {
    notice_within(reply, MAX_CONTENT_BYTES)
}

/// [`notice`] with an explicit size limit (tests).
pub fn notice_within(reply: &Reply, limit: usize) -> RoomMessageEventContent {
    let html = code_blocks(&reply.html);
    let content = RoomMessageEventContent::notice_html(reply.text.clone(), html);
    if content_len(&content) <= limit {
        return content;
    }
    let pointer = chat::cut_short(reply.link.as_deref());
    let (pointer, pointer_html) = (pointer.text, pointer.html);
    // Cut the text at line ends, halving until the escaped, serialized event fits.
    let mut budget = reply.text.len().min(limit);
    loop {
        let cut = cut_lines(&reply.text, budget);
        let body = format!("{cut}\n{pointer}");
        let html = format!("<pre><code>{}</code></pre>{pointer_html}", escape(cut));
        let content = RoomMessageEventContent::notice_html(body, html);
        if content_len(&content) <= limit || budget == 0 {
            return content;
        }
        budget /= 2;
    }
}

/// The core puts maps in `<pre>`; Matrix clients expect `<pre><code>`. Labels are escaped,
/// so a literal `<pre>` is always a tag.
fn code_blocks(html: &str) -> String {
    html.replace("<pre>", "<pre><code>")
        .replace("</pre>", "</code></pre>")
        .replace("<pre><code><code>", "<pre><code>")
        .replace("</code></code></pre>", "</code></pre>")
}

/// The longest prefix of `text` of at most `max` bytes ending at a line end (or a char
/// boundary when the first line alone is longer).
fn cut_lines(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) if nl > 0 => &text[..nl],
        _ => &text[..end],
    }
}

fn content_len(content: &RoomMessageEventContent) -> usize {
    serde_json::to_vec(content).map_or(usize::MAX, |v| v.len())
}

/// Why a notice was not sent, and whether trying again later could help.
#[derive(Debug)]
pub struct SendError {
    /// Forbidden, unknown room, bad request: a retry cannot fix it.
    pub permanent: bool,
    pub error: anyhow::Error,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

/// How long one notice waits out a homeserver's rate limit before it is given up. Synapse's
/// default (`rc_message`: 0.2/s, burst 10) answers a burst of 30 commands from 10 players in
/// about 100 s; a reply must not be lost to a busy minute.
/// (Three seconds in the mock-homeserver tests.)
pub const RATE_LIMITED_FOR: Duration = Duration::from_secs(if cfg!(test) { 3 } else { 600 });

/// Sends one notice. A rate limit (`M_LIMIT_EXCEEDED`) is waited out for as long as the
/// homeserver asks (`retry_after_ms`), for up to [`RATE_LIMITED_FOR`], and is not a failed
/// attempt; other failures that may pass (network, 5xx) get a few slower attempts on top of
/// the SDK's own retries, for a homeserver that is down for a while.
pub async fn send_notice(
    room: &Room,
    content: RoomMessageEventContent,
) -> std::result::Result<(), SendError> {
    // Short in tests, which exercise the retries against a mock homeserver.
    let mut delay = Duration::from_millis(if cfg!(test) { 10 } else { 500 });
    let mut attempt = 1;
    let limited_until = tokio::time::Instant::now() + RATE_LIMITED_FOR;
    loop {
        match room.send(content.clone()).await {
            Ok(_) => {
                crate::metrics::matrix_sent();
                return Ok(());
            }
            Err(e)
                if let Some(wait) = rate_limited(&e)
                    && tokio::time::Instant::now() + wait < limited_until =>
            {
                crate::metrics::matrix_rate_limited();
                tokio::time::sleep(wait).await;
            }
            Err(e) if attempt < 4 && !is_permanent(&e) && rate_limited(&e).is_none() => {
                tracing::warn!(
                    room = %room.room_id(),
                    attempt,
                    error = %e,
                    "sending failed; retrying in {delay:?}"
                );
                tokio::time::sleep(delay).await;
                delay *= 4;
                attempt += 1;
            }
            Err(e) => {
                crate::metrics::matrix_send_failed();
                return Err(SendError {
                    permanent: is_permanent(&e),
                    error: anyhow::Error::new(e)
                        .context(format!("cannot send to {}", room.room_id())),
                });
            }
        }
    }
}

/// How long a rate-limited homeserver asks to wait (`retry_after_ms`; a second when it does
/// not say), or None for any other error.
fn rate_limited(e: &matrix_sdk::Error) -> Option<Duration> {
    let api = e.as_client_api_error()?;
    if api.status_code.as_u16() != 429 {
        return None;
    }
    let asked = match api.error_kind() {
        Some(ErrorKind::LimitExceeded(l)) => match l.retry_after {
            Some(RetryAfter::Delay(d)) => Some(d),
            Some(RetryAfter::DateTime(at)) => at.duration_since(std::time::SystemTime::now()).ok(),
            None => None,
        },
        _ => None,
    };
    Some(
        asked
            .unwrap_or(Duration::from_secs(1))
            .max(Duration::from_millis(10)),
    )
}

/// Errors that a retry cannot fix (forbidden, unknown room, bad request).
fn is_permanent(e: &matrix_sdk::Error) -> bool {
    e.as_client_api_error()
        .is_some_and(|api| api.status_code.is_client_error() && api.status_code.as_u16() != 429)
}
