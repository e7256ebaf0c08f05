//! Chat command parsing: `!zone …` and `!char …` text into a typed [`Command`], or a typed
//! [`CommandError`]; [`crate::chat`] words both the help and the errors.
//!
//! Case-insensitive, any whitespace between words. [`parse`] wants the `!zone` / `!char`
//! prefix (chat); [`parse_loose`] also takes `status`, `go 2` or a bare `2` (a terminal).

use serde::Serialize;

use crate::engine::CharEdit;
use crate::rules::{LEVEL_RANGE, SCORE_RANGE};
use crate::zone::Ability;

/// One player command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    Help,
    List,
    /// The zone as typed (id or name); the host resolves it.
    Enter {
        zone: String,
    },
    Status,
    Advance,
    /// `go N` and `choose N`; the text is checked by [`crate::engine::choose`], which says
    /// what the valid range is.
    Go {
        choice: String,
    },
    Map,
    Abandon,
    /// Resolve the encounter of the current room (also what `!zone advance` does there).
    Fight,
    /// Run from the encounter: the run ends.
    Flee,
    CharShow,
    CharLevel {
        level: u32,
    },
    CharScore {
        ability: Ability,
        score: i32,
    },
    CharKeyAdd {
        key: String,
    },
    CharKeyRemove {
        key: String,
    },
    /// `!char set @user level 5`, `!char grant @user key`, `!char revoke @user key`: an
    /// admin's edit of another user's sheet, applied by the host (it stores that sheet).
    CharAdmin {
        user: String,
        edit: CharEdit,
    },
}

impl Command {
    /// The command as one stable word (two or three for `!char`'s), for a host's log or
    /// metrics: `"advance"`, `"go"` (also for `choose`), `"char level"`, `"char set"`. Never
    /// what the player typed after it (a zone's name, a choice, a key).
    pub fn verb(&self) -> &'static str {
        match self {
            Command::Help => "help",
            Command::List => "list",
            Command::Enter { .. } => "enter",
            Command::Status => "status",
            Command::Advance => "advance",
            Command::Go { .. } => "go",
            Command::Map => "map",
            Command::Abandon => "abandon",
            Command::Fight => "fight",
            Command::Flee => "flee",
            Command::CharShow => "char",
            Command::CharLevel { .. } => "char level",
            Command::CharScore { .. } => "char score",
            Command::CharKeyAdd { .. } => "char key add",
            Command::CharKeyRemove { .. } => "char key remove",
            Command::CharAdmin { edit, .. } => match edit {
                CharEdit::Level { .. } | CharEdit::Score { .. } => "char set",
                CharEdit::Grant { .. } => "char grant",
                CharEdit::Revoke { .. } => "char revoke",
            },
        }
    }
}

/// What was wrong with a command, as data: [`crate::chat::command_error`] words it (and
/// `Display`, lowercase with no trailing period, says the same words).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum CommandError {
    /// Nothing but whitespace.
    Empty,
    /// Chat text that does not start with `!zone` or `!char`.
    NotACommand {
        text: String,
    },
    /// `family` (`!zone`, `!char`, `!char key`, …) has no command `word`.
    Unknown {
        family: &'static str,
        word: String,
    },
    MissingArgument {
        what: &'static str,
        usage: &'static str,
    },
    UnexpectedArgument {
        extra: String,
        usage: &'static str,
    },
    BadNumber {
        what: &'static str,
        given: String,
        usage: &'static str,
    },
    OutOfRange {
        what: &'static str,
        given: i64,
        min: i64,
        max: i64,
    },
}

/// The words that address the bot in a chat room, as the first word of a line, in any case.
const PREFIXES: [&str; 2] = ["!zone", "!char"];

/// Whether chat text is for the bot: its first word is `!zone` or `!char`, in any case. The
/// one rule every transport uses to pick the lines it hands to [`parse`].
pub fn is_addressed(text: &str) -> bool {
    text.split_whitespace()
        .next()
        .is_some_and(|first| PREFIXES.iter().any(|p| first.eq_ignore_ascii_case(p)))
}

/// Parses chat text that starts with `!zone` or `!char`.
pub fn parse(text: &str) -> Result<Command, CommandError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(first) = words.first() else {
        return Err(CommandError::Empty);
    };
    if !is_addressed(text) {
        return Err(CommandError::NotACommand {
            text: text.trim().to_string(),
        });
    }
    if first.eq_ignore_ascii_case("!zone") {
        zone(&words[1..])
    } else {
        character(&words[1..])
    }
}

/// How strictly chat text is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Syntax {
    /// A chat room: only `!zone …` and `!char …` are commands ([`parse`]).
    #[default]
    Chat,
    /// A terminal or a playtest box, where everything typed is meant for the bot: the `!`
    /// and the `!zone` prefix are optional ([`parse_loose`]).
    Loose,
}

/// Parses `text` as `syntax` says.
pub fn parse_with(text: &str, syntax: Syntax) -> Result<Command, CommandError> {
    match syntax {
        Syntax::Chat => parse(text),
        Syntax::Loose => parse_loose(text),
    }
}

/// Like [`parse`], but the `!` and the `!zone` prefix are optional: `status`, `go 2`, `2`,
/// `char level 3`.
pub fn parse_loose(text: &str) -> Result<Command, CommandError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(first) = words.first() else {
        return Err(CommandError::Empty);
    };
    match first.to_ascii_lowercase().trim_start_matches('!') {
        "zone" => zone(&words[1..]),
        "char" => character(&words[1..]),
        w if w.bytes().all(|b| b.is_ascii_digit()) && words.len() == 1 => Ok(Command::Go {
            choice: w.to_string(),
        }),
        _ => zone(&words),
    }
}

fn zone(words: &[&str]) -> Result<Command, CommandError> {
    let Some(sub) = words.first() else {
        return Ok(Command::Help);
    };
    let rest = &words[1..];
    let sub = sub.to_ascii_lowercase();
    let bare = |cmd: Command, usage: &'static str| no_more(rest, usage).map(|()| cmd);
    match sub.trim_start_matches('!') {
        "help" => bare(Command::Help, "!zone help"),
        "list" => bare(Command::List, "!zone list"),
        "status" => bare(Command::Status, "!zone status"),
        "advance" => bare(Command::Advance, "!zone advance"),
        "map" => bare(Command::Map, "!zone map"),
        "abandon" => bare(Command::Abandon, "!zone abandon"),
        "fight" => bare(Command::Fight, "!zone fight"),
        "flee" => bare(Command::Flee, "!zone flee"),
        "enter" => {
            if rest.is_empty() {
                return Err(CommandError::MissingArgument {
                    what: "zone",
                    usage: "!zone enter <zone>",
                });
            }
            Ok(Command::Enter {
                zone: rest.join(" "),
            })
        }
        "go" | "choose" => {
            let usage = "!zone go <n>";
            match rest {
                // The ways again (the fork menu, as `!zone status` shows it).
                [] => Ok(Command::Status),
                [n] => Ok(Command::Go {
                    choice: (*n).to_string(),
                }),
                [_, extra @ ..] => Err(CommandError::UnexpectedArgument {
                    extra: extra.join(" "),
                    usage,
                }),
            }
        }
        _ => Err(CommandError::Unknown {
            family: "!zone",
            word: sub,
        }),
    }
}

fn character(words: &[&str]) -> Result<Command, CommandError> {
    let Some(sub) = words.first() else {
        return Ok(Command::CharShow);
    };
    let rest = &words[1..];
    let sub = sub.to_ascii_lowercase();
    if sub == "show" {
        return no_more(rest, "!char").map(|()| Command::CharShow);
    }
    if matches!(sub.as_str(), "set" | "grant" | "revoke") {
        return parse_admin(&sub, rest).map(|(user, edit)| Command::CharAdmin { user, edit });
    }
    if sub == "level" {
        let usage = "!char level <n>";
        let n = one_number(rest, "level", usage)?;
        let level = in_range(n, "level", *LEVEL_RANGE.start(), *LEVEL_RANGE.end())?;
        return Ok(Command::CharLevel { level });
    }
    if sub == "key" || sub == "keys" {
        let usage = "!char key add|remove <key>";
        let (action, key) = match rest {
            [] => {
                return Err(CommandError::MissingArgument {
                    what: "add or remove",
                    usage,
                });
            }
            [_] => {
                return Err(CommandError::MissingArgument { what: "key", usage });
            }
            [action, key @ ..] => (action.to_ascii_lowercase(), key.join(" ")),
        };
        return match action.as_str() {
            "add" => Ok(Command::CharKeyAdd { key }),
            "remove" | "rm" | "del" | "delete" => Ok(Command::CharKeyRemove { key }),
            _ => Err(CommandError::Unknown {
                family: "!char key",
                word: action,
            }),
        };
    }
    if let Some(ability) = ability(&sub) {
        let usage = "!char <str|dex|con|int|wis|cha> <n>";
        let n = one_number(rest, "score", usage)?;
        let score = in_range(n, "score", *SCORE_RANGE.start(), *SCORE_RANGE.end())?;
        return Ok(Command::CharScore { ability, score });
    }
    Err(CommandError::Unknown {
        family: "!char",
        word: sub,
    })
}

/// An admin's edit, `set <user> level|<ability> <n>`, `grant <user> <key>` or
/// `revoke <user> <key>`: `sub` is the verb (lowercase) and `rest` the words after it. The
/// chat's `!char set …` and the `zonegraph char` command both read edits with it.
pub fn parse_admin(sub: &str, rest: &[&str]) -> Result<(String, CharEdit), CommandError> {
    let usage = match sub {
        "set" => "!char set <user> level|<ability> <n>",
        "grant" => "!char grant <user> <key>",
        _ => "!char revoke <user> <key>",
    };
    let Some((user, rest)) = rest.split_first() else {
        return Err(CommandError::MissingArgument {
            what: "user",
            usage,
        });
    };
    let user = (*user).to_string();
    if sub != "set" {
        if rest.is_empty() {
            return Err(CommandError::MissingArgument { what: "key", usage });
        }
        let key = rest.join(" ");
        let edit = if sub == "grant" {
            CharEdit::Grant { key }
        } else {
            CharEdit::Revoke { key }
        };
        return Ok((user, edit));
    }
    let Some((what, rest)) = rest.split_first() else {
        return Err(CommandError::MissingArgument {
            what: "level or ability",
            usage,
        });
    };
    let what = what.to_ascii_lowercase();
    let edit = if what == "level" {
        let n = one_number(rest, "level", usage)?;
        let level = in_range(n, "level", *LEVEL_RANGE.start(), *LEVEL_RANGE.end())?;
        CharEdit::Level { level }
    } else if let Some(ability) = ability(&what) {
        let n = one_number(rest, "score", usage)?;
        let score = in_range(n, "score", *SCORE_RANGE.start(), *SCORE_RANGE.end())?;
        CharEdit::Score { ability, score }
    } else {
        return Err(CommandError::Unknown {
            family: "!char set <user>",
            word: what,
        });
    };
    Ok((user, edit))
}

/// `str` or `strength`, any case.
fn ability(word: &str) -> Option<Ability> {
    Ability::parse(word).or_else(|| {
        Ability::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(word))
    })
}

fn no_more(rest: &[&str], usage: &'static str) -> Result<(), CommandError> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(CommandError::UnexpectedArgument {
            extra: rest.join(" "),
            usage,
        })
    }
}

fn one_number(rest: &[&str], what: &'static str, usage: &'static str) -> Result<i64, CommandError> {
    match rest {
        [] => Err(CommandError::MissingArgument { what, usage }),
        [n] => n.parse::<i64>().map_err(|_| CommandError::BadNumber {
            what,
            given: (*n).to_string(),
            usage,
        }),
        [_, extra @ ..] => Err(CommandError::UnexpectedArgument {
            extra: extra.join(" "),
            usage,
        }),
    }
}

fn in_range<T>(n: i64, what: &'static str, min: T, max: T) -> Result<T, CommandError>
where
    T: Copy + Into<i64> + TryFrom<i64>,
{
    let (lo, hi) = (min.into(), max.into());
    if (lo..=hi).contains(&n)
        && let Ok(v) = T::try_from(n)
    {
        return Ok(v);
    }
    Err(CommandError::OutOfRange {
        what,
        given: n,
        min: lo,
        max: hi,
    })
}
