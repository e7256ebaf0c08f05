//! What the store answers, as the API and the transports put it on the wire: a command's
//! [`Answer`], a run's reference ([`RunRef`], its link and token, never its run id), and the
//! run page's payloads ([`RunView`], the core's, and [`PlayerRun`]).

use serde::Serialize;
use zonegraph_core::bot;
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
    /// What became of the command, for the server's log: not sent.
    #[serde(skip)]
    pub handled: Handled,
}

/// What became of a command, for the server's log (never sent, and never the text typed):
/// its verb, whether it was carried out, and why not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Handled {
    /// The command's word ([`zonegraph_core::command::Command::verb`]); `None` for text that
    /// was no command.
    pub verb: Option<&'static str>,
    pub outcome: Outcome,
    /// Why it was not carried out, by kind (`no_fork_pending`, `admins_only`, `unknown`,
    /// `host_unwell`), as the core's refusals and parse errors are named in JSON.
    pub reason: Option<String>,
}

/// Whether a command was carried out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outcome {
    /// Carried out (a status, a move, a sheet shown…).
    #[default]
    Ok,
    /// Understood and refused by the game's rules.
    Refused,
    /// Not a command the bot understands.
    NotUnderstood,
    /// The host game (`--host-hook`) could not be asked, or refused the player.
    HostFailed,
}

impl Outcome {
    /// As the log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
            Outcome::NotUnderstood => "not_understood",
            Outcome::HostFailed => "host_failed",
        }
    }
}

impl Handled {
    /// What the core's pipeline says of the command it answered.
    pub fn of(verb: Option<&'static str>, handled: &bot::Handled) -> Handled {
        let (outcome, reason) = match handled {
            bot::Handled::Done => (Outcome::Ok, None),
            bot::Handled::Refused(r) => (Outcome::Refused, kind(r, "refusal")),
            bot::Handled::NotUnderstood(e) => (Outcome::NotUnderstood, kind(e, "error")),
        };
        Handled {
            verb,
            outcome,
            reason,
        }
    }

    /// A command the host game failed (`why`: `host_unwell`, `host_refused`); its verb read
    /// from the `text` typed, which is not kept.
    pub fn host_failed(text: &str, why: &str) -> Handled {
        Handled {
            verb: zonegraph_core::command::parse(text).ok().map(|c| c.verb()),
            outcome: Outcome::HostFailed,
            reason: Some(why.to_string()),
        }
    }

    /// The refusal `r` of an admin's edit (applied by the store after the pipeline).
    pub fn refused(verb: Option<&'static str>, r: &engine::Refusal) -> Handled {
        Handled {
            verb,
            outcome: Outcome::Refused,
            reason: kind(r, "refusal"),
        }
    }
}

/// The name of `value`'s variant, as its JSON tag `tag` says it (the core's refusals and
/// parse errors are tagged enums): the kind, without what the player typed.
fn kind(value: &impl Serialize, tag: &str) -> Option<String> {
    let v = serde_json::to_value(value).ok()?;
    v.get(tag)?.as_str().map(str::to_string)
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

#[cfg(test)]
mod tests {
    use zonegraph_core::command::CommandError;
    use zonegraph_core::engine::Refusal;

    use super::*;

    #[test]
    fn a_command_is_logged_by_its_kind_of_refusal_never_by_what_was_typed() {
        let refused = Handled::of(Some("status"), &bot::Handled::Refused(Refusal::NoRun));
        assert_eq!(refused.outcome.as_str(), "refused");
        assert_eq!(refused.reason.as_deref(), Some("no_run"));
        let unknown = bot::Handled::NotUnderstood(CommandError::Unknown {
            family: "!zone",
            word: "hunter2".into(),
        });
        let h = Handled::of(None, &unknown);
        assert_eq!(
            (h.verb, h.outcome, h.reason.as_deref()),
            (None, Outcome::NotUnderstood, Some("unknown"))
        );
        let h = Handled::host_failed("!zone advance", "host_unwell");
        assert_eq!(h.verb, Some("advance"));
        assert_eq!(
            Handled::of(Some("map"), &bot::Handled::Done).outcome,
            Outcome::Ok
        );
    }
}
