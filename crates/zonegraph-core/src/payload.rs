//! The run page's payload: what `GET /api/runs/{token}` and the run's live events send, and
//! what the run page reads. One type, written by the server and read by the page, so the two
//! cannot disagree on its shape.

use serde::{Deserialize, Serialize};

use crate::chat::{self, Reply};
use crate::engine;
use crate::layout::Drawing;

/// `GET /api/runs/{token}`: what the player's run-map page shows, all of it from the player
/// view.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunView {
    /// [`engine::player_view`] of the run.
    pub view: engine::PlayerView,
    /// The view laid out ([`Drawing::of_view`]): rooms' cells and passages' polylines, so
    /// the run page draws it with no layout code of its own.
    pub map: Drawing,
    /// The chat's `!zone status` words for it.
    pub status: Reply,
}

impl RunView {
    /// The page of a player view: laid out, and worded as the chat's `!zone status`.
    pub fn of(view: engine::PlayerView) -> RunView {
        RunView {
            map: Drawing::of_view(&view),
            status: chat::status(&view.status),
            view,
        }
    }
}
