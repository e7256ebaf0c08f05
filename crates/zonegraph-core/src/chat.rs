//! Every player-facing word: events, the fork prompt, `!zone status`, refusals, help and
//! `!char`. The bot, the terminal and the browser all call this one module, so they say
//! exactly the same thing.
//!
//! Each reply has a plain-text body and an HTML body in which every label, hint and
//! narration is escaped.

use serde::{Deserialize, Serialize};

use crate::command::CommandError;
use crate::engine::PlayerView;
use crate::engine::view::RoomView;
use crate::engine::{
    CharEdit, Character, EncounterCheck, Event, ExitState, ExitView, LockReason, Outcome, Phase,
    Refusal, Status, Verdict,
};
use crate::format::{LockKind, NodeKind};
use crate::rules::{self, EncounterKind, LEVEL_RANGE, SCORE_RANGE};
use crate::text::capitalise;
use crate::zone::{Ability, Zone};

pub mod viewer;

/// One chat reply.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    pub text: String,
    pub html: String,
    /// For the player's eyes only (their run-map link, their sheet): a transport that
    /// answers in a room others read sends it to the player privately instead. Decided here,
    /// with the words; omitted from JSON when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub private: bool,
    /// The run-map link the words carry, as data, so a transport that must shorten the words
    /// (a size limit) can still point at the map; omitted from JSON when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The numbered options the words list (a fork's menu), as data: a page shows them as
    /// buttons without reading numbers back out of the text; omitted from JSON when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<Choice>,
}

/// One numbered option of a reply: `!zone go {number}`, listed on line `line` of the text
/// (0 is the first line) as `words` (the line after its number).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    pub number: usize,
    pub line: usize,
    pub words: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Reply {
    /// The same reply, for the player's eyes only.
    #[must_use]
    pub fn private(mut self) -> Reply {
        self.private = true;
        self
    }
}

/// Escapes text for HTML bodies and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Builds the text and HTML bodies side by side.
#[derive(Default)]
struct Out {
    text: String,
    html: String,
    choices: Vec<Choice>,
}

impl Out {
    fn put(&mut self, s: &str) -> &mut Self {
        self.text.push_str(s);
        self.html.push_str(&escape(s));
        self
    }

    fn bold(&mut self, s: &str) -> &mut Self {
        self.text.push_str(s);
        self.html.push_str("<b>");
        self.html.push_str(&escape(s));
        self.html.push_str("</b>");
        self
    }

    fn italic(&mut self, s: &str) -> &mut Self {
        self.text.push_str(s);
        self.html.push_str("<i>");
        self.html.push_str(&escape(s));
        self.html.push_str("</i>");
        self
    }

    fn code(&mut self, s: &str) -> &mut Self {
        self.text.push_str(s);
        self.html.push_str("<code>");
        self.html.push_str(&escape(s));
        self.html.push_str("</code>");
        self
    }

    fn nl(&mut self) -> &mut Self {
        if !self.text.is_empty() {
            self.text.push('\n');
            self.html.push_str("<br>\n");
        }
        self
    }

    fn done(self) -> Reply {
        Reply {
            text: self.text.trim_end().to_string(),
            html: self.html.trim_end().trim_end_matches("<br>").to_string(),
            private: false,
            link: None,
            choices: self.choices,
        }
    }
}

/// At most this many arrivals are told in one reply; the middle of a long walk through merge
/// rooms is summarised so a reply stays chat-sized.
const MAX_ARRIVALS: usize = 10;
/// At most this many fork options are listed.
const MAX_OPTIONS: usize = 30;

/// Words a batch of events from one engine call.
pub fn events(events: &[Event]) -> Reply {
    let arrivals = events
        .iter()
        .filter(|e| matches!(e, Event::Arrived { .. }))
        .count();
    let (keep_head, keep_tail) = (MAX_ARRIVALS / 2, MAX_ARRIVALS / 2);
    let skipped = arrivals.saturating_sub(MAX_ARRIVALS);
    let mut arrival = 0usize;
    let mut skipping = false;
    let mut out = Out::default();
    for e in events {
        if let Event::Arrived { .. } = e {
            arrival += 1;
            skipping = skipped > 0 && arrival > keep_head && arrival <= arrivals - keep_tail;
            if skipping && arrival == keep_head + 1 {
                out.nl()
                    .italic(&format!("… you pass through {skipped} more rooms …"));
            }
        }
        if skipping && matches!(e, Event::Arrived { .. } | Event::Narration { .. }) {
            continue;
        }
        event(&mut out, e);
    }
    out.done()
}

fn event(out: &mut Out, e: &Event) {
    match e {
        Event::Entered { zone_name, .. } => {
            out.nl().put("You enter ").bold(zone_name).put(".");
        }
        Event::Moved { .. } => {}
        Event::RegionTransition {
            from_region,
            from_name,
            to_region,
            to_name,
        } => {
            out.nl();
            match (from_region.is_empty(), to_region.is_empty()) {
                (true, _) => out.put("You cross into ").bold(to_name).put("."),
                (false, true) => out.put("You leave ").bold(from_name).put(" behind."),
                (false, false) => out
                    .put("You leave ")
                    .bold(from_name)
                    .put(" behind and cross into ")
                    .bold(to_name)
                    .put("."),
            };
        }
        Event::Arrived {
            kind,
            label,
            room_number,
            room_total,
            ..
        } => {
            out.nl()
                .put(&format!("Room {room_number} of {room_total}: "))
                .bold(label)
                .put(&format!(" ({})", kind_word(*kind)));
        }
        Event::Narration { text, .. } => {
            out.nl().italic(text);
        }
        Event::RoomCleared { label, .. } => {
            out.nl().put("You clear ").bold(label).put(".");
        }
        Event::KeyGranted { name, .. } => {
            out.nl().put("You find a key: ").bold(name).put(".");
        }
        Event::Harvested { name, .. } => {
            out.nl()
                .put("You gather what grows here: ")
                .bold(name)
                .put(".");
        }
        Event::ForkOffered {
            label,
            options,
            waiting,
            ..
        } => fork_menu(out, label, options, *waiting),
        Event::PickedForYou { option, label, .. } => {
            out.nl()
                .put(&format!(
                    "You lingered too long at the fork, so option {option} was picked for you: "
                ))
                .bold(label)
                .put(".");
        }
        Event::Victory { label, .. } => {
            out.nl()
                .put("Victory! ")
                .bold(label)
                .put(" falls and the zone is conquered.");
        }
        Event::DeadEnd { label, .. } => {
            out.nl()
                .put("There is no way on from ")
                .bold(label)
                .put(". Your run ends here.");
        }
        Event::Abandoned { label, .. } => {
            out.nl().put("You abandon the run in ").bold(label).put(".");
        }
        Event::Rested { healed, .. } => {
            out.nl().put(&format!(
                "You rest by the fire and your {} heal{}.",
                plural(*healed, "wound"),
                if *healed == 1 { "s" } else { "" }
            ));
        }
        Event::EncounterStarted { kind, label, .. } => {
            out.nl()
                .put(encounter_intro(*kind))
                .bold(label)
                .put(". Face it with ")
                .code("!zone fight")
                .put(" or run with ")
                .code("!zone flee")
                .put(".");
        }
        Event::EncounterRolled { check } => {
            out.nl().put(&encounter_check(check)).put(".");
        }
        Event::HostDecided {
            kind,
            outcome,
            message,
            ..
        } => {
            out.nl();
            match message {
                Some(m) if !m.trim().is_empty() => out.put(m.trim()),
                _ => out.put(&format!(
                    "The game master rules the {}: {}.",
                    kind.as_str(),
                    match outcome {
                        Verdict::Won => "you win",
                        Verdict::Lost => "you lose",
                        Verdict::Fled => "you flee",
                    }
                )),
            };
        }
        Event::Wounded { wounds, max } => {
            out.nl()
                .put(&format!("You are wounded ({wounds} of {max})."));
            // The last wound is followed by the defeat.
            if wounds < max {
                out.put(" Try again with ")
                    .code("!zone fight")
                    .put(" or run with ")
                    .code("!zone flee")
                    .put(".");
                if wounds.saturating_add(1) == *max {
                    out.put(" One more wound ends the run.");
                }
            }
        }
        Event::Defeated { label, .. } => {
            out.nl()
                .put("You fall in ")
                .bold(label)
                .put(". Your run ends in defeat.");
        }
        Event::Fled { label, .. } => {
            out.nl()
                .put("You flee from ")
                .bold(label)
                .put(". Your run ends here.");
        }
        Event::XpGained { amount, .. } => {
            out.nl().put(&format!("You gain {amount} XP."));
        }
        Event::LevelUp { level } => {
            out.nl().bold(&format!("You reach level {level}!"));
        }
        Event::LootRolled {
            d20,
            loot_bias,
            total,
            dc,
            found,
            ..
        } => {
            out.nl().put("Loot roll: ");
            if matches!(loot_bias.as_str(), "1" | "1.0") {
                out.put(&format!("{d20}"));
            } else {
                out.put(&format!("{d20} × {loot_bias} = {total}"));
            }
            out.put(&format!(
                " vs {dc} — {}.",
                if *found {
                    "you find treasure"
                } else {
                    "nothing of value"
                }
            ));
        }
    }
}

/// "Boss check: 14 + 3 vs DC 16 — you win".
pub fn encounter_check(c: &EncounterCheck) -> String {
    format!(
        "{} check: {} {} {} vs DC {} — {}",
        capitalise(c.kind.as_str()),
        c.d20,
        if c.modifier < 0 { "-" } else { "+" },
        c.modifier.unsigned_abs(),
        c.dc,
        if c.won { "you win" } else { "you lose" }
    )
}

fn encounter_intro(kind: EncounterKind) -> &'static str {
    match kind {
        EncounterKind::Trap => "A trap bars the way in ",
        EncounterKind::Elite => "A fearsome foe guards ",
        EncounterKind::Boss => "The master of this zone awaits in ",
    }
}

fn plural(n: u32, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The numbered fork menu (also used by `!zone status`).
fn fork_menu(out: &mut Out, label: &str, options: &[ExitView], waiting: bool) {
    out.nl();
    if waiting {
        out.put("Every way on from ")
            .bold(label)
            .put(" is barred, and waiting will not open it. Leave with ")
            .code("!zone abandon")
            .put(" (")
            .code("!zone go <n>")
            .put(" tells what a way needs):");
    } else {
        out.put("The way splits at ")
            .bold(label)
            .put(". Choose with ")
            .code("!zone go <n>")
            .put(":");
    }
    exit_lines(out, options, true);
}

fn exit_lines(out: &mut Out, options: &[ExitView], numbered: bool) {
    for o in options.iter().take(MAX_OPTIONS) {
        out.nl();
        if numbered {
            out.put(&format!("  {}. ", o.number));
        } else {
            out.put("  - ");
        }
        let words_at = out.text.len();
        match &o.label {
            Some(label) => out.bold(label),
            None => out.put("something"),
        };
        if let (ExitState::Open, Some(kind)) = (o.state, o.kind) {
            out.put(&format!(" ({})", kind_word(kind)));
        }
        if let Some(teaser) = &o.teaser {
            out.put(" (locked");
            // Said again once a refused `!zone go` told it.
            if let Some(reason) = &o.revealed {
                out.put(&format!(": {}", lock_reason(reason)));
            }
            out.put(" — ").italic(teaser).put(")");
        }
        if numbered {
            out.choices.push(Choice {
                number: o.number,
                line: out.text.matches('\n').count(),
                words: out.text[words_at..].to_string(),
            });
        }
    }
    if options.len() > MAX_OPTIONS {
        out.nl().put(&format!(
            "  … and {} more (options 1-{})",
            options.len() - MAX_OPTIONS,
            options.len()
        ));
    }
}

/// `!zone status`.
pub fn status(s: &Status) -> Reply {
    let mut out = Out::default();
    out.bold(&s.zone_name)
        .put(&format!(" — room {} of {}", s.room_number, s.room_total));
    out.nl().put("You are in ").bold(&s.label);
    match s.kind {
        Some(kind) => out.put(&format!(" ({}).", kind_word(kind))),
        None => out.put("."),
    };
    if let Some(region) = &s.region {
        out.nl().put("Region: ").bold(region).put(".");
    }
    match s.phase {
        Phase::Over { outcome } => {
            out.nl()
                .put(&format!("This run is over: {}.", outcome_words(outcome)));
        }
        Phase::Fork => {
            out.nl()
                .put("A fork waits for your choice. Pick one with ")
                .code("!zone go <n>")
                .put(":");
            exit_lines(&mut out, &s.exits, true);
        }
        Phase::Waiting => {
            out.nl()
                .put("Every way on is barred, and waiting will not open it. Leave with ")
                .code("!zone abandon")
                .put(" (")
                .code("!zone go <n>")
                .put(" tells what a way needs):");
            exit_lines(&mut out, &s.exits, true);
        }
        Phase::InRoom => {
            out.nl();
            match &s.encounter {
                Some(e) => out
                    .put(match e.kind {
                        EncounterKind::Trap => "A trap",
                        EncounterKind::Elite => "An elite",
                        EncounterKind::Boss => "A boss",
                    })
                    .put(" bars the way on: face it with ")
                    .code("!zone fight")
                    .put(" or run with ")
                    .code("!zone flee")
                    .put("."),
                None => out
                    .put("Clear this room with ")
                    .code("!zone advance")
                    .put("."),
            };
            if s.exits.is_empty() {
                out.nl().put("There is no way on from here.");
            } else {
                out.nl().put("Ways on:");
                exit_lines(&mut out, &s.exits, false);
            }
        }
    }
    if s.wounds > 0 {
        out.nl()
            .put(&format!("Wounds: {} of {}.", s.wounds, rules::MAX_WOUNDS));
    }
    if !s.key_names.is_empty() {
        out.nl().put("Keys: ").put(&s.key_names.join(", ")).put(".");
    }
    out.done()
}

/// `!zone map`: the rendered map (from `crate::map`, drawn elsewhere) in a `<pre>` block, and
/// the player's run-map link when the host has one. With the link the reply is private: the
/// link opens the player's own run.
pub fn map(rendered_map: &str, run_link: Option<&str>) -> Reply {
    let mut text = rendered_map.trim_end().to_string();
    let mut html = format!("<pre>{}</pre>", escape(rendered_map.trim_end()));
    if let Some(link) = run_link {
        text.push_str(&format!("\nRun map: {link}"));
        html.push_str(&format!("\nRun map: <a href=\"{0}\">{0}</a>", escape(link)));
    }
    Reply {
        text,
        html,
        private: run_link.is_some(),
        link: run_link.map(str::to_string),
        choices: Vec::new(),
    }
}

/// "rest camp" rather than "rest_camp".
fn kind_word(kind: NodeKind) -> String {
    kind_name(kind).to_string()
}

fn outcome_words(o: Outcome) -> &'static str {
    match o {
        Outcome::Victory => "victory",
        Outcome::DeadEnd => "it ended in a dead end",
        Outcome::Abandoned => "abandoned",
        Outcome::Defeat => "defeat",
        Outcome::Fled => "you fled",
    }
}

/// Why a locked option cannot be taken: "Perception 11 vs DC 12", "requires level 5 (you
/// are 3)", ….
pub fn lock_reason(r: &LockReason) -> String {
    match r {
        LockReason::Perception { total, dc } => format!("Perception {total} vs DC {dc}"),
        LockReason::Stat { ability, total, dc } => {
            format!("{} {total} vs DC {dc}", ability.name())
        }
        LockReason::Level { min_level, level } => {
            format!("requires level {min_level} (you are {level})")
        }
        LockReason::Key => "you don't have the key".to_string(),
        LockReason::Region { region_name } => format!("requires clearing {region_name}"),
        LockReason::Sealed => "the way is sealed".to_string(),
    }
}

fn range(max: usize) -> String {
    if max == 1 {
        "1".to_string()
    } else {
        format!("1-{max}")
    }
}

/// A refused command.
pub fn refusal(r: &Refusal) -> Reply {
    let mut out = Out::default();
    match r {
        Refusal::NoRun => {
            out.put("You are not in a zone. Start a run with ")
                .code("!zone enter <zone>")
                .put(" (see ")
                .code("!zone list")
                .put(").");
        }
        Refusal::AlreadyInRun { zone_name } => {
            out.put("You are already in ")
                .bold(zone_name)
                .put(". Finish it, or leave with ")
                .code("!zone abandon")
                .put(".");
        }
        Refusal::UnknownZone { given, known } => {
            out.put(&format!("There is no zone called \"{given}\". "));
            if known.is_empty() {
                out.put("No zones are loaded.");
            } else {
                out.put("Known zones: ").put(&known.join(", ")).put(".");
            }
        }
        Refusal::Unplayable { zone_name } => {
            out.bold(zone_name)
                .put(" cannot be entered: it has no single entry room.");
        }
        Refusal::LevelTooLow {
            zone_name,
            min_level,
            level,
        } => {
            out.bold(zone_name)
                .put(&format!(" requires level {min_level} (you are {level})."));
        }
        Refusal::RunOver { outcome } => {
            out.put(&format!(
                "This run is over ({}). Start another with ",
                outcome_words(*outcome)
            ))
            .code("!zone enter <zone>")
            .put(".");
        }
        Refusal::WrongZone { run_zone, zone } => {
            out.put(&format!("This run belongs to zone {run_zone}, not {zone}."));
        }
        Refusal::UnknownRoom { node } => {
            out.put(&format!(
                "This run is in a room the zone no longer has ({node}). Leave with "
            ))
            .code("!zone abandon")
            .put(" and start again.");
        }
        Refusal::LegacyRoomUnknown {
            current_room,
            rooms,
        } => {
            out.put(&format!(
                "Legacy room index {current_room} is past the zone's {rooms} rooms."
            ));
        }
        Refusal::NoForkPending => {
            out.put("There is no choice to make right now. Use ")
                .code("!zone advance")
                .put(" to move on, or ")
                .code("!zone status")
                .put(" to look around.");
        }
        Refusal::ForkPending { options } => {
            out.put("A fork waits for your choice first: pick one with ")
                .code("!zone go <n>")
                .put(&format!(" ({}); ", range(*options)))
                .code("!zone go")
                .put(" alone shows the ways again.");
        }
        Refusal::ForkBarred { .. } => {
            out.put("Every way on from here is locked, and waiting will not open one: the checks were made when you arrived. Leave with ")
                .code("!zone abandon")
                .put(" (")
                .code("!zone go <n>")
                .put(" tells what a way needs).");
        }
        Refusal::NotANumber { given, max } => {
            out.put(&format!(
                "\"{given}\" is not a number. Pick an option with "
            ))
            .code("!zone go <n>")
            .put(&format!(" ({}).", range(*max)));
        }
        Refusal::OutOfRange { given, max } => {
            out.put(&format!(
                "There is no option {given}. Pick {}.",
                range(*max)
            ));
        }
        Refusal::Locked {
            option,
            label,
            reason,
        } => {
            out.put(&format!("Option {option} "));
            if let Some(label) = label {
                out.put("(").bold(label).put(") ");
            }
            out.put(&format!("is locked: {}.", lock_reason(reason)));
        }
        Refusal::KeyTooLong { max_bytes } => {
            out.put(&format!(
                "That key id is too long: at most {max_bytes} bytes."
            ));
        }
        Refusal::TooManyKeys { max } => {
            out.put(&format!(
                "You already hold {max} keys, the most a character may. Drop one with "
            ))
            .code("!char key remove <key>")
            .put(" first.");
        }
        Refusal::SheetLocked => {
            out.put(
                "Your character sheet is set by this server's admins, not by you: ask one to run ",
            )
            .code("!char set <you> level <n>")
            .put(" (or ")
            .code("!char grant <you> <key>")
            .put("). ")
            .code("!char")
            .put(" shows it.");
        }
        Refusal::AdminsOnly => {
            out.put("Only this server's admins (named with ")
                .code("--admin")
                .put(") may set another user's sheet.");
        }
        Refusal::AwaitingHost => {
            out.put("The game master is busy; nothing happened. Try again in a moment.");
        }
        Refusal::HostRefused { encounter } => {
            out.put(if *encounter {
                "The game master would not decide this encounter for you"
            } else {
                "The game master refused your character sheet"
            })
            .put("; nothing happened. If this goes on, tell this server's operator.");
        }
        Refusal::NoEncounter => {
            out.put("There is nothing to fight here. Use ")
                .code("!zone advance")
                .put(" to move on, or ")
                .code("!zone abandon")
                .put(" to give up the run.");
        }
        Refusal::EncounterPending { kind } => {
            out.put(&format!(
                "The {} bars the way on: face it with ",
                kind.as_str()
            ))
            .code("!zone fight")
            .put(" or run with ")
            .code("!zone flee")
            .put(".");
        }
        Refusal::ZoneWithdrawn { zone_id, run_over } => {
            out.put(&format!(
                "Your {} run is in {zone_id}, a zone that has been withdrawn from this server. ",
                if *run_over { "last" } else { "current" }
            ));
            if *run_over {
                out.put("Start another with ");
            } else {
                out.put("Leave it with ")
                    .code("!zone abandon")
                    .put(", then start another with ");
            }
            out.code("!zone enter <zone>")
                .put(" (see ")
                .code("!zone list")
                .put(").");
        }
    }
    out.done()
}

/// `!zone help`.
pub fn help() -> Reply {
    let mut out = Out::default();
    out.put("Zone commands:");
    command_list(&mut out);
    out.done()
}

/// Every command: usage and what it does (`{level}` and `{score}` stand for the ranges
/// [`command_list`] writes). `!zone help` and command errors list these. A table of `&str`
/// rather than `String`s made one by one: smaller in the browser's module.
const COMMANDS: [(&str, &str); 18] = [
    ("!zone help", "show this help"),
    ("!zone list", "zones you may enter"),
    ("!zone enter <zone>", "start a run in a zone"),
    ("!zone status", "where you are and the ways on"),
    ("!zone advance", "clear the current room and move on"),
    (
        "!zone fight",
        "face the trap, elite or boss in this room (advance does too)",
    ),
    ("!zone flee", "run from the encounter: the run ends"),
    (
        "!zone go <n>",
        "take option n at a fork (also !zone choose <n>)",
    ),
    ("!zone map", "the map of your run"),
    ("!zone abandon", "give up the current run"),
    ("!char", "show your character"),
    (
        "!char level <n>",
        "set your level ({level}; sandbox or admin)",
    ),
    (
        "!char <str|dex|con|int|wis|cha> <n>",
        "set an ability score ({score}; sandbox or admin)",
    ),
    ("!char key add <key>", "add a key (sandbox or admin)"),
    ("!char key remove <key>", "remove a key (sandbox or admin)"),
    (
        "!char set <user> level|<ability> <n>",
        "admins: set a user's level or score",
    ),
    ("!char grant <user> <key>", "admins: give a user a key"),
    (
        "!char revoke <user> <key>",
        "admins: take a key from a user",
    ),
];

fn command_list(out: &mut Out) {
    let level = format!("{}-{}", LEVEL_RANGE.start(), LEVEL_RANGE.end());
    let score = format!("{}-{}", SCORE_RANGE.start(), SCORE_RANGE.end());
    let width = COMMANDS.iter().map(|(u, _)| u.len()).max().unwrap_or(0);
    for (usage, what) in COMMANDS {
        out.nl()
            .put("  ")
            .code(usage)
            .put(&" ".repeat(width - usage.len() + 2));
        match what.split_once('{').zip(what.split_once('}')) {
            Some(((before, _), (named, after))) => {
                let range = if named.ends_with("level") {
                    &level
                } else {
                    &score
                };
                out.put(before).put(range).put(after);
            }
            None => {
                out.put(what);
            }
        }
    }
}

/// What was wrong with a command, lowercase with no trailing period: "unknown command !zone
/// dance". [`command_error`] makes it a sentence; `CommandError`'s `Display` says it too.
pub fn command_error_words(e: &CommandError) -> String {
    match e {
        CommandError::Empty => "empty command".into(),
        CommandError::NotACommand { text } => {
            format!("{text:?} is not a command (commands start with !zone or !char)")
        }
        CommandError::Unknown { family, word } => format!("unknown command {family} {word}"),
        CommandError::MissingArgument { what, usage } => format!("missing {what}: use {usage}"),
        CommandError::UnexpectedArgument { extra, usage } => {
            format!("unexpected {extra:?} after the command: use {usage}")
        }
        CommandError::BadNumber { what, given, usage } => {
            format!("{given:?} is not a valid {what}: use {usage}")
        }
        CommandError::OutOfRange {
            what,
            given,
            min,
            max,
        } => format!("{what} {given} is outside {min}-{max}"),
    }
}

// Here rather than in `command`, so the parser holds no words and names no module above it.
impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&command_error_words(self))
    }
}

impl std::error::Error for CommandError {}

/// A command that could not be parsed: what was wrong, and the valid commands.
pub fn command_error(e: &CommandError) -> Reply {
    let mut out = Out::default();
    out.put(&capitalise(&command_error_words(e))).put(".");
    out.nl().put("Valid commands:");
    command_list(&mut out);
    out.done()
}

/// `!char` (private: the player's own sheet).
pub fn character(c: &Character) -> Reply {
    let mut out = Out::default();
    sheet(&mut out, c);
    out.done().private()
}

fn sheet(out: &mut Out, c: &Character) {
    out.put(&format!("Level {}", c.level));
    if c.xp > 0 {
        out.put(&format!(" ({} XP)", c.xp));
    }
    for a in Ability::ALL {
        let m = c.modifier(a);
        out.put(&format!(
            " · {} {} ({}{m})",
            a.as_str().to_ascii_uppercase(),
            c.score(a),
            if m >= 0 { "+" } else { "" }
        ));
    }
    out.nl().put("Keys: ");
    if c.keys.is_empty() {
        out.put("none.");
    } else {
        let keys: Vec<&str> = c.keys.iter().map(String::as_str).collect();
        out.put(&keys.join(", ")).put(".");
    }
}

/// An admin's edit applied to `user`'s sheet: what changed and the sheet now (private to the
/// admin: it is that user's sheet).
pub fn admin_edited(user: &str, edit: &CharEdit, c: &Character) -> Reply {
    let mut out = Out::default();
    out.bold(user)
        .put(&format!("'s sheet: {}.", edit_words(edit)));
    out.nl();
    sheet(&mut out, c);
    out.done().private()
}

/// What an edit did, as the log and the admin's reply say it: `level 5`, `WIS 14`,
/// `granted skull_key`, `revoked skull_key`.
pub fn edit_words(edit: &CharEdit) -> String {
    match edit {
        CharEdit::Level { level } => format!("level {level}"),
        CharEdit::Score { ability, score } => {
            format!("{} {score}", ability.as_str().to_ascii_uppercase())
        }
        CharEdit::Grant { key } => format!("granted {}", crate::zone::normalize_key(key)),
        CharEdit::Revoke { key } => format!("revoked {}", crate::zone::normalize_key(key)),
    }
}

/// `!zone list`: every zone, marking those the character is not yet level for.
pub fn zone_list(zones: &[&Zone], c: &Character) -> Reply {
    let mut out = Out::default();
    if zones.is_empty() {
        out.put("No zones are loaded.");
        return out.done();
    }
    out.put("Zones (enter with ")
        .code("!zone enter <zone>")
        .put("):");
    for z in zones {
        out.nl()
            .put("  ")
            .code(&z.id)
            .put(" — ")
            .bold(&z.name)
            .put(&format!(
                " (tier {}, levels {}-{})",
                z.tier, z.min_level, z.max_level
            ));
        if c.level < z.min_level {
            out.put(&format!(" — requires level {}", z.min_level));
        }
    }
    out.done()
}

/// A short confirmation for `!char` changes and other host actions.
pub fn notice(text: &str) -> Reply {
    let mut out = Out::default();
    out.put(text);
    out.done()
}

/// A run whose zone was withdrawn from the server, abandoned (by `!zone abandon`, or to enter
/// another zone).
pub fn abandoned_withdrawn(zone_id: &str) -> Reply {
    let mut out = Out::default();
    out.put(&format!(
        "You abandon your run in {zone_id}: that zone has been withdrawn from this server."
    ));
    out.done()
}

/// The notice to a player whose run is in a zone an operator has just withdrawn: the run
/// goes on, on the graph it started on, but no new run can start there.
pub fn zone_withdrawn(zone_name: &str, zone_id: &str) -> Reply {
    let mut out = Out::default();
    out.put(&format!(
        "{zone_name} ({zone_id}) has been withdrawn from this server. Your run there goes on \
         as it was: finish it, or leave it with "
    ))
    .code("!zone abandon")
    .put(". No new run can start there.");
    out.done()
}

/// A command refused by the rate limit: try again after `retry_after_ms`.
pub fn slow_down(retry_after_ms: u64) -> Reply {
    let mut out = Out::default();
    out.put("Slow down: you are sending commands faster than I take them. ");
    if retry_after_ms == u64::MAX {
        out.put("Commands are paused for now.");
    } else {
        let s = retry_after_ms.div_ceil(1000).max(1);
        out.put(&format!(
            "Try again in {s} second{}.",
            if s == 1 { "" } else { "s" }
        ));
    }
    out.done()
}

/// A queued notice, told that `dropped` older ones were dropped before it (too many waited).
pub fn after_dropped_notices(notice: &Reply, dropped: u64) -> Reply {
    if dropped == 0 {
        return notice.clone();
    }
    let mut out = Out::default();
    out.italic(&format!(
        "({dropped} older notice{} dropped: too many were waiting.)",
        if dropped == 1 { " was" } else { "s were" }
    ));
    Reply {
        text: format!("{}\n{}", out.text, notice.text),
        html: format!("{}<br>\n{}", out.html, notice.html),
        private: notice.private,
        link: notice.link.clone(),
        // The notice's lines come after the one line said first.
        choices: notice
            .choices
            .iter()
            .map(|c| Choice {
                line: c.line + 1 + out.text.matches('\n').count(),
                ..c.clone()
            })
            .collect(),
    }
}

/// Several replies as one message, in order, a blank line between them: a transport whose
/// homeserver limits messages per second sends one per command. Private if any part is
/// (join only replies bound for the same place); the first link; the choices renumbered to
/// their lines in the whole. None for no reply.
pub fn one_message(replies: &[Reply]) -> Option<Reply> {
    let (first, rest) = replies.split_first()?;
    let mut whole = first.clone();
    for r in rest {
        let offset = whole.text.matches('\n').count() + 2;
        whole.text = format!("{}\n\n{}", whole.text, r.text);
        whole.html = format!("{}<br>\n<br>\n{}", whole.html, r.html);
        whole.private |= r.private;
        whole.link = whole.link.take().or_else(|| r.link.clone());
        whole.choices.extend(r.choices.iter().map(|c| Choice {
            line: c.line + offset,
            ..c.clone()
        }));
    }
    Some(whole)
}

/// A chat message longer than a host accepts.
pub fn too_long(max_bytes: usize) -> Reply {
    notice(&format!(
        "That command is too long (over {max_bytes} bytes)."
    ))
}

/// What ends a reply a host had to cut to fit its message size: where the rest is (the run
/// map at `link`, or `!zone map` for it). Plain text and HTML, as every reply.
pub fn cut_short(link: Option<&str>) -> Reply {
    let (text, html) = match link {
        Some(l) => (
            format!("… too long for one message: the whole map is at {l}"),
            format!(
                "<p>… too long for one message: the whole map is at <a href=\"{0}\">{0}</a></p>",
                escape(l)
            ),
        ),
        None => (
            "… too long for one message: `!zone map` has the run-map link".to_string(),
            "<p>… too long for one message: <code>!zone map</code> has the run-map link</p>"
                .to_string(),
        ),
    };
    Reply {
        text,
        html,
        private: false,
        link: link.map(str::to_string),
        choices: Vec::new(),
    }
}

/// The host failed to answer (the details are in its log).
pub fn server_error() -> Reply {
    notice("Something went wrong on the server; try again.")
}

/// The host game (the server's `--host-hook`) did not answer in time or failed: nothing
/// changed, and the command may simply be sent again.
pub fn host_busy() -> Reply {
    refusal(&Refusal::AwaitingHost)
}

/// Said when the host game refused this player's call (`encounter`: the encounter's, else
/// the sheet's): theirs alone.
pub fn host_refused(encounter: bool) -> Reply {
    refusal(&Refusal::HostRefused { encounter })
}

/// Said in a shared room when a private reply went to the player's direct messages.
pub fn sent_privately(user: &str) -> Reply {
    notice(&format!("{user}: sent you a direct message."))
}

/// Said in a shared room when a private reply could not be sent privately (the direct
/// message could not be opened); the reply itself is not shown in the room.
pub fn private_failed(user: &str) -> Reply {
    notice(&format!(
        "{user}: that answer is for you alone, and I could not open a direct message with \
         you. Invite me to one and ask again there."
    ))
}

/// Said once in a room whose message the host could not decrypt (the sender's device did
/// not share the room key with the bot's device).
pub fn undecryptable() -> Reply {
    notice(
        "I could not decrypt your last message: your device did not share its key with mine. \
         Send it again; if it keeps happening, verify or re-open this chat.",
    )
}

// ---- the run page's details panel -------------------------------------------------------

/// One line of a details panel: a caption and its text.
pub type DetailRow = (&'static str, String);

/// What an unknown room is called wherever a name is needed.
pub const UNKNOWN_ROOM: &str = "unknown room";

/// The display name of a room kind ("rest camp").
pub fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::RestCamp => "rest camp",
        k => k.as_str(),
    }
}

/// Human words for a lock kind.
pub fn lock_name(kind: LockKind) -> &'static str {
    match kind {
        LockKind::None => "open",
        LockKind::PerceptionCheck => "Perception check",
        LockKind::StatCheck => "ability check",
        LockKind::KeyRequired => "key",
        LockKind::LevelMin => "minimum level",
        LockKind::RegionClear => "region clear",
    }
}

/// A room's name as the player knows it: its label, or "unknown room".
pub fn room_name(room: &RoomView) -> &str {
    room.label.as_deref().unwrap_or(UNKNOWN_ROOM)
}

/// What the player's details panel says about room `i` of `view`.
pub fn room_details(view: &PlayerView, i: usize) -> Vec<DetailRow> {
    let Some(r) = view.rooms.get(i) else {
        return Vec::new();
    };
    let mut rows: Vec<DetailRow> = vec![("Room", room_name(r).to_string())];
    match r.kind {
        Some(kind) => rows.push(("Kind", kind_name(kind).to_string())),
        None => rows.push((
            "Kind",
            "unknown: you did not notice what is there".to_string(),
        )),
    }
    if r.is_entry {
        rows.push(("Role", "entry".into()));
    }
    if r.is_boss {
        rows.push(("Role", "boss".into()));
    }
    if let Some(region) = view.regions.iter().find(|g| g.region_id == r.region_id) {
        rows.push(("Region", region.name.clone()));
    }
    if let Some(v) = r.visit {
        rows.push(("Run", format!("visited as room {v}")));
    }
    if r.current {
        rows.push(("Run", "you are here".into()));
    }
    if let Some(n) = r.option {
        rows.push(("Option", option_words(view, n)));
    }
    for p in view.passages.iter().filter(|p| p.from == i) {
        let to = view.rooms.get(p.to).map_or(UNKNOWN_ROOM, room_name);
        let mut line = String::new();
        if let Some(n) = p.option {
            line.push_str(&format!("{n}. "));
        }
        line.push_str(to);
        line.push_str(" — ");
        line.push_str(lock_name(p.lock));
        rows.push(("Exit", line));
    }
    rows
}

/// What the player's details panel says about passage `j` of `view`.
pub fn passage_details(view: &PlayerView, j: usize) -> Vec<DetailRow> {
    let Some(p) = view.passages.get(j) else {
        return Vec::new();
    };
    let name = |i: usize| {
        view.rooms
            .get(i)
            .map_or(UNKNOWN_ROOM, room_name)
            .to_string()
    };
    let mut rows: Vec<DetailRow> = vec![
        ("From", name(p.from)),
        ("To", name(p.to)),
        ("Lock", lock_name(p.lock).to_string()),
    ];
    if !p.hint.trim().is_empty() {
        rows.push(("Hint", p.hint.clone()));
    }
    if p.walked {
        rows.push(("Run", "you walked it".into()));
    }
    if let Some(n) = p.option {
        rows.push(("This run", option_words(view, n)));
    }
    rows
}

/// "go 2 — locked: Perception 11 vs DC 12": an option of the pending fork as the chat has
/// told it (a roll only once a refused `!zone go` revealed it).
fn option_words(view: &PlayerView, n: usize) -> String {
    let mut s = format!("go {n}");
    if let Some(x) = view.status.exits.iter().find(|x| x.number == n) {
        s.push_str(match x.state {
            ExitState::Open => " — open",
            ExitState::Locked => " — locked",
            ExitState::Unchecked => " — not tested yet",
        });
        if let Some(reason) = &x.revealed {
            s.push_str(": ");
            s.push_str(&lock_reason(reason));
        }
    }
    s
}
