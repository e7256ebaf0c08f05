//! What publishing a new version of a zone does to its players, before it is published
//! (`zonegraph review`, `POST /api/zones/{zone_id}/review`): the players in the zone now
//! whose room or pending fork the change removes or locks, and the stored runs of the served
//! version replayed on the new one.
//!
//! **Replay.** A stored run's choices are played again with its own run id, so every roll
//! (locks, encounters, loot) is the same roll. The character is read back from the run: its
//! starting level, the scores its frozen checks show (a Perception modifier of +2 is Wisdom
//! 14), the keys its key checks found held; the rest is [`Character::standard`]. At each fork
//! the run takes the way it took then (rooms renamed by [`crate::impact`] followed); where
//! that way is gone or locked it takes the first open way, as the fork timeout would, and the
//! run has *diverged* there. A run the player left (abandoned, fled) stops at the same point,
//! or, once diverged, after as many rooms as it had. Runs still going are not replayed: their
//! ending is not known yet (they are the players now). Encounters are fought by the built-in rules, so a run a host
//! game decided may not come out as it did: each run is first replayed on its own version,
//! and only the runs that come out there exactly as stored (same rooms, same ending) are
//! compared; the others are counted as not reproduced.
//!
//! No player id goes in or out; counts under 5 are written "< 5" ([`Count`]). Pure and
//! deterministic.

use serde::Serialize;

use crate::Ability;
use crate::engine::{self, Character, Check, Outcome, Run};
use crate::impact::{Impact, Renamed};
use crate::insight::{Count, Standing};
use crate::rules::EncounterKind;
use crate::text;
use crate::zone::Zone;

/// How many example runs a replay shows.
pub const EXAMPLES: usize = 3;

/// Why a player in the zone now is touched by the change.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Touch {
    /// The run stands in a room the new version removes.
    StandsInRemoved,
    /// The run waits at a fork with a way into a room or passage the new version removes.
    ForkIntoRemoved,
    /// The run waits at a fork with a way the new version locks (or locks differently).
    ForkIntoLocked,
}

/// One room (or fork) where players now are touched.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TouchedRoom {
    /// The room the runs stand in (its id in the served version).
    pub room: String,
    pub why: Touch,
    pub runs: Count,
}

/// The players in the zone now (the served version's runs still going).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlayersNow {
    /// Runs still going (stranded ones too).
    pub active: Count,
    /// Of them, runs in a room the change removes, or at a fork it changes a way of.
    pub touched: Count,
    pub stands_in_removed: Count,
    pub fork_into_removed: Count,
    pub fork_into_locked: Count,
    /// Where, the most runs first.
    pub rooms: Vec<TouchedRoom>,
}

/// One run's route and ending.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Played {
    pub standing: Standing,
    /// Rooms in the order reached.
    pub rooms: Vec<String>,
}

/// A run that ends differently on the new version.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Example {
    /// The run, by a reference that does not give its run id away
    /// ([`crate::roll::reference`]).
    pub run: String,
    /// As stored (the served version).
    pub before: Played,
    /// Replayed on the new version; `None` when the new version does not let it in (its
    /// level is below the new `min_level`, or the zone has no entry).
    pub after: Option<Played>,
    /// The first fork where the run could not take the way it took then (gone, locked, or no
    /// fork any more), if any.
    pub diverged_at: Option<String>,
}

/// How many runs went from one standing to another.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transition {
    pub from: Standing,
    /// `None`: the new version does not let it in.
    pub to: Option<Standing>,
    pub runs: Count,
}

/// The served version's stored runs replayed on the new version.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Replay {
    /// Stored runs replayed: the ended and the stranded ones.
    pub runs: Count,
    /// Runs still going, not replayed (their ending is not known yet): see [`PlayersNow`].
    pub still_going: Count,
    /// Of them, runs whose replay on their own version came out as stored: the ones compared.
    pub reproduced: Count,
    /// Runs that did not (a host game decided an encounter, or the character is not fully
    /// known from the run): left out.
    pub not_reproduced: Count,
    /// Reproduced runs that end the same way and by the same rooms on the new version.
    pub unchanged: Count,
    /// Reproduced runs that end the same way by other rooms.
    pub rerouted: Count,
    /// Reproduced runs that end differently (the transitions below).
    pub ended_differently: Count,
    /// Of those, runs now stranded, now won, no longer won.
    pub now_stranded: Count,
    pub now_won: Count,
    pub no_longer_won: Count,
    /// Each change of ending, the most runs first.
    pub transitions: Vec<Transition>,
    /// Up to [`EXAMPLES`] runs that end differently, one per kind of change first.
    pub examples: Vec<Example>,
}

/// The players now and the replay together: what the review adds to the [`Impact`].
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Review {
    pub players: PlayersNow,
    pub replay: Replay,
    /// Ended runs of the served version not replayed: older than the most recent ones a
    /// server replays (its `--review-runs`). 0 when every stored run was.
    pub left_out: Count,
}

/// What changing `old` into `new` (whose [`Impact`] is `impact`) does to `runs`, the stored
/// runs of `old`'s version.
pub fn review(old: &Zone, new: &Zone, impact: &Impact, runs: &[Run]) -> Review {
    let never = || false;
    review_until(old, new, impact, runs, &never).unwrap_or_else(|| unreachable!())
}

/// [`review`], given up (`None`) as soon as `stop` says so; it is asked before each run is
/// replayed, so a review nobody waits for any more ends within one run's replay.
pub fn review_until(
    old: &Zone,
    new: &Zone,
    impact: &Impact,
    runs: &[Run],
    stop: &dyn Fn() -> bool,
) -> Option<Review> {
    Some(Review {
        players: players_now(impact, runs),
        replay: replay_until(old, new, &impact.renamed, runs, stop)?,
        left_out: Count(0),
    })
}

/// `id` under its new name if the change renamed it.
fn renamed<'a>(renames: &'a [Renamed], id: &'a str) -> &'a str {
    renames
        .iter()
        .find(|r| r.from == id)
        .map_or(id, |r| r.to.as_str())
}

/// The runs still going among `runs`, and which of them the change touches.
pub fn players_now(impact: &Impact, runs: &[Run]) -> PlayersNow {
    let c = &impact.changes;
    let removed = |id: &str| c.rooms_removed.iter().any(|r| r == id);
    let passage_in = |list: &[crate::diff::PassageKey], from: &str, to: &str| {
        list.iter().any(|p| p.from == from && p.to == to)
    };
    let mut out = PlayersNow::default();
    let mut rooms: Vec<(String, Touch, u64)> = Vec::new();
    for run in runs.iter().filter(|r| !r.is_over()) {
        out.active.0 += 1;
        let at = renamed(&impact.renamed, run.current_node.as_str());
        let why = if removed(at) {
            Some(Touch::StandsInRemoved)
        } else if let Some(fork) = &run.pending_fork {
            let ways = fork
                .options
                .iter()
                .map(|o| renamed(&impact.renamed, o.to_node.as_str()));
            let mut why = None;
            for to in ways {
                if removed(to) || passage_in(&c.passages_removed, at, to) {
                    why = Some(Touch::ForkIntoRemoved);
                    break;
                }
                let locked = c
                    .locks_added
                    .iter()
                    .chain(&c.locks_changed)
                    .any(|l| l.passage.from == at && l.passage.to == to);
                if locked {
                    why = why.or(Some(Touch::ForkIntoLocked));
                }
            }
            why
        } else {
            None
        };
        let Some(why) = why else { continue };
        out.touched.0 += 1;
        match why {
            Touch::StandsInRemoved => out.stands_in_removed.0 += 1,
            Touch::ForkIntoRemoved => out.fork_into_removed.0 += 1,
            Touch::ForkIntoLocked => out.fork_into_locked.0 += 1,
        }
        let room = run.current_node.0.clone();
        match rooms.iter_mut().find(|(r, w, _)| *r == room && *w == why) {
            Some(slot) => slot.2 += 1,
            None => rooms.push((room, why, 1)),
        }
    }
    text::sort_by(&mut rooms, |a, b| {
        b.2.cmp(&a.2).then_with(|| (&a.0, a.1).cmp(&(&b.0, b.1)))
    });
    out.rooms = rooms
        .into_iter()
        .map(|(room, why, n)| TouchedRoom {
            room,
            why,
            runs: Count(n),
        })
        .collect();
    out
}

/// How many of the runs standing in `rooms` (each a run's room, by its id in the version it
/// plays) changing `impact`'s old version into `new` leaves without their room or a way on
/// from it: the room not in `new` (after the change's renames), or a passage out of it that
/// the change removes. Publishing such a change over runs still going is, for those players,
/// a withdrawal in effect.
pub fn stranded_by(impact: &Impact, new: &crate::format::ZoneFile, rooms: &[String]) -> usize {
    let c = &impact.changes;
    let kept: std::collections::BTreeSet<&str> = new
        .nodes
        .iter()
        .flatten()
        .map(|n| n.node_id.as_str())
        .collect();
    rooms
        .iter()
        .filter(|room| {
            let at = renamed(&impact.renamed, room.as_str());
            !kept.contains(at) || c.passages_removed.iter().any(|p| p.from == at)
        })
        .count()
}

/// The character a stored run was played with, as far as the run shows it. A run moved to
/// the history keeps no list of the keys it was granted, so a key check it passed counts as
/// a key its character held.
pub fn character_of(run: &Run, zone: &Zone) -> Character {
    let level = if run.level == 0 {
        zone.min_level.max(1)
    } else {
        run.level
    };
    let mut c = Character::standard(level);
    let checks = run
        .forks_met
        .iter()
        .flat_map(|m| &m.options)
        .chain(run.pending_fork.iter().flat_map(|f| &f.options))
        .map(|o| &o.check);
    for check in checks {
        match check {
            Check::PerceptionCheck { modifier, .. } => {
                c.set_score(Ability::Wis, 10 + 2 * modifier);
            }
            Check::StatCheck {
                ability, modifier, ..
            } => c.set_score(*ability, 10 + 2 * modifier),
            Check::KeyRequired { key_id, held: true } if !run.keys_granted.contains(key_id) => {
                c.add_key(key_id);
            }
            _ => {}
        }
    }
    if let Some(last) = &run.last_check
        && last.kind == EncounterKind::Trap
    {
        c.set_score(Ability::Dex, 10 + 2 * last.modifier);
    }
    c
}

/// `stored` (a run of some version) played again on `zone`: its choices, its rolls, its
/// character ([`character_of`]), `renames` followed from the stored ids to `zone`'s. `None`
/// when `zone` does not let it in. With the run, the fork where it diverged, if any.
pub fn replay_run(
    zone: &Zone,
    stored: &Run,
    character: &Character,
    renames: &[Renamed],
) -> Option<(Run, Option<String>)> {
    let now = stored.started_at;
    let (mut run, _) = engine::start(zone, &stored.run_id, character, now).ok()?;
    // The choices the player made at forks (a lone locked passage is no choice).
    let chosen: Vec<(&str, &str)> = stored
        .forks_met
        .iter()
        .filter(|m| m.options.len() > 1)
        .filter_map(|m| {
            let to = m.options.get(m.taken)?;
            Some((
                renamed(renames, m.at.as_str()),
                renamed(renames, to.to_node.as_str()),
            ))
        })
        .collect();
    // A run the player left stops where it stopped, or (once it went another way) after as
    // many rooms as it had.
    let stops_on_its_own = matches!(
        Standing::of(stored),
        Standing::Abandoned | Standing::Fled | Standing::Active
    );
    let stop_room = renamed(renames, stored.current_node.as_str());
    let mut next = 0;
    let mut diverged: Option<String> = None;
    // Each step clears a room or takes a way; a run visits each room once except through
    // loops, and fights each encounter at most MAX_WOUNDS times.
    let limit = 4 * zone.graph.node_count() * (crate::rules::MAX_WOUNDS as usize + 1) + 16;
    for _ in 0..limit {
        if run.is_over() {
            break;
        }
        let stops_here = (next >= chosen.len() && run.current_node.as_str() == stop_room)
            || (diverged.is_some() && run.visited_nodes.len() >= stored.visited_nodes.len());
        if stops_on_its_own && stops_here {
            match stored.outcome {
                Some(Outcome::Fled) if engine::pending_encounter(zone, &run).is_some() => {
                    let _ = engine::flee(zone, &mut run, now);
                }
                Some(Outcome::Fled | Outcome::Abandoned) => {
                    let _ = engine::abandon(zone, &mut run, now);
                }
                _ => {}
            }
            break;
        }
        let step = if let Some(fork) = &run.pending_fork {
            let Some(first_open) = fork.options.iter().position(|o| o.open) else {
                break; // stranded: waiting never helps
            };
            let at = fork.at.as_str();
            let recorded = chosen[next..].iter().position(|(a, _)| *a == at);
            let way = recorded.and_then(|p| {
                let to = chosen[next + p].1;
                if p > 0 {
                    diverged.get_or_insert_with(|| at.to_string());
                }
                next += p + 1;
                fork.options
                    .iter()
                    .position(|o| o.open && o.to_node.as_str() == to)
            });
            let k = way.unwrap_or_else(|| {
                diverged.get_or_insert_with(|| at.to_string());
                first_open
            });
            engine::choose(zone, &mut run, character, &(k + 1).to_string(), now)
        } else {
            engine::advance(zone, &mut run, character, now)
        };
        if step.is_err() {
            break;
        }
    }
    // A choice the run came to but could not make (the fork is no fork now, or none of its
    // ways opened) is where it diverged too.
    if diverged.is_none() {
        diverged = chosen[next.min(chosen.len())..]
            .iter()
            .find(|(at, _)| run.visited_nodes.iter().any(|v| v.as_str() == *at))
            .map(|(at, _)| (*at).to_string());
    }
    Some((run, diverged))
}

fn played(run: &Run) -> Played {
    Played {
        standing: Standing::of(run),
        rooms: run.visited_nodes.iter().map(|n| n.0.clone()).collect(),
    }
}

/// `runs` (stored runs of `old`'s version) replayed on `new`.
pub fn replay(old: &Zone, new: &Zone, renames: &[Renamed], runs: &[Run]) -> Replay {
    let never = || false;
    replay_until(old, new, renames, runs, &never).unwrap_or_else(|| unreachable!())
}

/// [`replay`], given up (`None`) when `stop` says so before a run.
fn replay_until(
    old: &Zone,
    new: &Zone,
    renames: &[Renamed],
    runs: &[Run],
    stop: &dyn Fn() -> bool,
) -> Option<Replay> {
    let mut out = Replay::default();
    let mut changed: Vec<Example> = Vec::new();
    for stored in runs {
        if stop() {
            return None;
        }
        if Standing::of(stored) == Standing::Active {
            out.still_going.0 += 1;
            continue;
        }
        out.runs.0 += 1;
        let character = character_of(stored, old);
        let before = played(stored);
        let same_as_stored = replay_run(old, stored, &character, &[])
            .is_some_and(|(r, _)| played(&r) == before && r.current_node == stored.current_node);
        if !same_as_stored {
            out.not_reproduced.0 += 1;
            continue;
        }
        out.reproduced.0 += 1;
        let after = replay_run(new, stored, &character, renames);
        let renamed_rooms: Vec<String> = before
            .rooms
            .iter()
            .map(|r| renamed(renames, r).to_string())
            .collect();
        match &after {
            Some((run, _)) if Standing::of(run) == before.standing => {
                if played(run).rooms == renamed_rooms {
                    out.unchanged.0 += 1;
                } else {
                    out.rerouted.0 += 1;
                }
            }
            _ => {
                let to = after.as_ref().map(|(r, _)| Standing::of(r));
                out.ended_differently.0 += 1;
                if to == Some(Standing::Stranded) {
                    out.now_stranded.0 += 1;
                }
                if to == Some(Standing::Won) {
                    out.now_won.0 += 1;
                }
                if before.standing == Standing::Won {
                    out.no_longer_won.0 += 1;
                }
                changed.push(Example {
                    run: crate::roll::reference(&stored.run_id),
                    before: before.clone(),
                    diverged_at: after.as_ref().and_then(|(_, d)| d.clone()),
                    after: after.map(|(r, _)| played(&r)),
                });
            }
        }
    }
    let mut transitions: Vec<Transition> = Vec::new();
    for e in &changed {
        let to = e.after.as_ref().map(|p| p.standing);
        match transitions
            .iter_mut()
            .find(|t| t.from == e.before.standing && t.to == to)
        {
            Some(t) => t.runs.0 += 1,
            None => transitions.push(Transition {
                from: e.before.standing,
                to,
                runs: Count(1),
            }),
        }
    }
    text::sort_by(&mut transitions, |a, b| {
        b.runs
            .cmp(&a.runs)
            .then_with(|| (a.from, a.to).cmp(&(b.from, b.to)))
    });
    // One example of each change first (the most common first), then more of them.
    let mut examples: Vec<Example> = Vec::new();
    for t in &transitions {
        if let Some(e) = changed
            .iter()
            .find(|e| e.before.standing == t.from && e.after.as_ref().map(|p| p.standing) == t.to)
        {
            examples.push(e.clone());
        }
    }
    for e in &changed {
        if !examples.iter().any(|x| x.run == e.run) {
            examples.push(e.clone());
        }
    }
    examples.truncate(EXAMPLES);
    out.transitions = transitions;
    out.examples = examples;
    Some(out)
}

/// A number of runs in a sentence: "< 5 runs", "1,250 runs" (one run is "< 5").
fn runs(c: Count) -> String {
    format!("{} runs", thousands(c))
}

fn thousands(c: Count) -> String {
    let s = c.to_string();
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return s;
    }
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn standing_name(s: Option<Standing>) -> &'static str {
    s.map_or("not let in", Standing::name)
}

/// The review as sentences a designer reads before publishing over version `version`: the
/// players now, then the replay, its changes of ending and its examples. The one wording
/// of a review (the command line prints it, the API sends it, the designer shows it).
pub fn words(version: i64, r: &Review) -> Vec<String> {
    let mut out = Vec::new();
    let p = &r.players;
    if p.active.0 == 0 {
        out.push(format!("No run is in version {version} now."));
    } else if p.touched.0 == 0 {
        out.push(format!(
            "{} in version {version} now; this change touches none of them.",
            runs(p.active)
        ));
    } else {
        let mut parts = Vec::new();
        for (n, what) in [
            (p.stands_in_removed, "stand in a room this change removes"),
            (p.fork_into_removed, "wait at a fork with a way it removes"),
            (p.fork_into_locked, "wait at a fork with a way it locks"),
        ] {
            if n.0 > 0 {
                parts.push(format!("{} {what}", thousands(n)));
            }
        }
        let rooms: Vec<&str> = p.rooms.iter().take(5).map(|t| t.room.as_str()).collect();
        out.push(format!(
            "{} in version {version} now; {} touched by this change: {} ({}). They keep playing version {version} until their runs end; new runs start on the new version.",
            runs(p.active),
            thousands(p.touched),
            parts.join(", "),
            rooms.join(", ")
        ));
    }
    let x = &r.replay;
    if x.runs.0 == 0 {
        out.push(format!("Version {version} has no ended runs to replay."));
        return out;
    }
    let left_out = if x.not_reproduced.0 == 0 {
        String::new()
    } else {
        format!(
            "; {} did not come out as stored on their own version (a host game decided an encounter, or the run does not show the whole character) and are left out",
            thousands(x.not_reproduced)
        )
    };
    let most_recent = if r.left_out.0 == 0 {
        String::new()
    } else {
        format!(
            " (the most recent; {} older are not replayed)",
            thousands(r.left_out)
        )
    };
    out.push(format!(
        "Replayed on the new version with their own rolls: the {} of version {version} that ended or are stranded{most_recent}{left_out}.",
        runs(x.runs)
    ));
    if x.reproduced.0 > 0 {
        let mut parts = vec![
            format!(
                "{} end the same way by the same rooms",
                thousands(x.unchanged)
            ),
            format!("{} by other rooms", thousands(x.rerouted)),
            format!("{} end differently", thousands(x.ended_differently)),
        ];
        for (n, what) in [
            (x.now_stranded, "now stranded"),
            (x.now_won, "now won"),
            (x.no_longer_won, "no longer won"),
        ] {
            if n.0 > 0 {
                parts.push(format!("{} {what}", thousands(n)));
            }
        }
        out.push(format!(
            "Of the {} compared: {}.",
            runs(x.reproduced),
            parts.join(", ")
        ));
    }
    for t in &x.transitions {
        out.push(format!(
            "{} → {}: {}.",
            t.from.name(),
            standing_name(t.to),
            runs(t.runs)
        ));
    }
    for e in &x.examples {
        let after = match &e.after {
            Some(a) => format!(
                "now {} ({} rooms: {})",
                a.standing.name(),
                a.rooms.len(),
                route(&a.rooms)
            ),
            None => "now not let in".into(),
        };
        let diverged = e
            .diverged_at
            .as_ref()
            .map(|at| format!(", its way at {at} gone or locked"))
            .unwrap_or_default();
        out.push(format!(
            "For example run {}: {} ({} rooms: {}); {after}{diverged}.",
            e.run,
            e.before.standing.name(),
            e.before.rooms.len(),
            route(&e.before.rooms)
        ));
    }
    out
}

/// A route in a sentence: its first two and last two rooms when it is long.
fn route(rooms: &[String]) -> String {
    if rooms.len() <= 5 {
        return rooms.join(" → ");
    }
    format!(
        "{} → {} → … → {} → {}",
        rooms[0],
        rooms[1],
        rooms[rooms.len() - 2],
        rooms[rooms.len() - 1]
    )
}
