//! What the store answers, as the API and the transports put it on the wire: a command's
//! [`Answer`], a run's reference ([`RunRef`], its link and token, never its run id), and the
//! run page's payloads ([`RunView`], the core's, and [`PlayerRun`]).

use serde::Serialize;
use zonegraph_core::chat::Reply;
use zonegraph_core::engine::{self, Event, PlayerView};
use zonegraph_core::layout::Drawing;

use crate::db::Notice;

/// `GET /api/runs/{token}` and the run's live events: the core's one type for the run
/// page's payload, which the page reads back.
pub use zonegraph_core::payload::RunView;

/// `GET /api/players/{user}/run`: the run, and what its page shows.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PlayerRun {
    pub run: RunRef,
    /// [`engine::player_view`] of the run: what the player may know of the zone.
    pub view: PlayerView,
    /// The view laid out, as the run page gets it ([`RunView::map`]).
    pub map: Drawing,
    /// The chat's `!zone status` words for it.
    pub status: Reply,
}

/// What a command gives back: the queued notices to show before the replies (they stay
/// queued until the transport acknowledges them with [`Store::ack_notices`]), then the
/// command's own replies, what happened as typed events, and the player's run after it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Answer {
    /// Queued notices ("picked for you"), oldest first; acknowledge them with
    /// `POST /api/notices/ack`.
    pub notices: Vec<Notice>,
    /// The command's replies, in order: what the chat shows.
    pub replies: Vec<Reply>,
    /// What the command did, in order (a fork timed out first, then the command): the same
    /// events the chat words, for a host game to act on (keys, loot, XP, the outcome).
    /// Empty when it changed nothing (help, a refusal, a status).
    pub events: Vec<Event>,
    /// The player's run after the command, active or ended (`None`: no run yet).
    pub run: Option<RunRef>,
}

/// A player's run as the API names it: its link (the run page) and the token in it. Not its
/// run id: every roll is drawn from it, so whoever knew it would know the dice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RunRef {
    pub zone_id: String,
    /// The token of its run page and `GET /api/runs/{token}`.
    pub token: String,
    /// The run page's address (`--public-url` + `/run/{token}`).
    pub link: String,
    /// How it ended; `None` while it goes on.
    pub outcome: Option<zonegraph_core::engine::Outcome>,
}

impl RunRef {
    pub(crate) fn of(run: &engine::Run, token: &str, public_url: &str) -> RunRef {
        RunRef {
            zone_id: run.zone_id.clone(),
            token: token.to_string(),
            link: run_link(public_url, token),
            outcome: run.outcome,
        }
    }
}

/// A run-map link token: 32 lowercase hex digits.
pub fn is_token(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `{public_url}/run/{token}`.
pub fn run_link(public_url: &str, token: &str) -> String {
    format!("{}/run/{token}", public_url.trim_end_matches('/'))
}
