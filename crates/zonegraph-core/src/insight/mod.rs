//! What players actually do in a zone: stored runs of one zone version read together
//! (`zonegraph insight`, `GET /api/zones/{id}/insight`). Per room, the runs that reached it and
//! the runs that ended there, by outcome; per fork, the split of choices; per locked passage,
//! the observed pass rate of the characters who met it beside the rate the rules predict for
//! those same characters (from each run's frozen check: its modifier and DC), with a 95 %
//! binomial interval around the prediction and a flag when the observation falls outside it;
//! per route, its share of the ended runs; overall, the observed win rate beside the model's
//! ([`crate::difficulty`]) for the levels the runs started at.
//!
//! No player id goes in or out: the input is runs, the output counts. A count of 1–4 runs is
//! written `"hidden"`, and so is any other count from which, with the totals and parts the
//! answer gives beside it, one of those could be worked out (complementary suppression, see
//! [`protect`]); a rate or share is given only when both its counts are written and the
//! whole is at least 5, so no one player's path can be read off. Pure and deterministic
//! (rooms in file order, the rest sorted).
//!
//! Its words live here too ([`summary`], [`win_words`], [`room_words`], [`fork_words`],
//! [`lock_words`], [`route_words`], gathered by [`sections`]): the command line's
//! `zonegraph insight` and the editor's Insight panel say the same sentences.

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;

use serde::{Serialize, Serializer};

use crate::chat;
use crate::difficulty;
use crate::engine::view::{self, Phase};
use crate::engine::{Check, Outcome, Run};
use crate::format::LockKind;
use crate::text;
use crate::zone::Zone;

/// Below this many runs a count is hidden and a rate is not given.
pub const MIN_CELL: u64 = 5;

/// A room is a drop-off when at least [`MIN_CELL`] runs, and this share of all runs, ended
/// there without winning.
pub const DROP_OFF_SHARE: f64 = 0.1;

/// How many standard deviations the interval around a predicted pass rate spans (95 %).
const Z95: f64 = 1.96;

/// How insight writes a hidden count, whatever it hides: one word for a count of 1 to 4 and
/// for a larger one withheld beside it, so the two cannot be told apart.
pub const HIDDEN_WORD: &str = "hidden";

/// A number of runs: written as itself from [`MIN_CELL`] up (and 0); 1 to 4 as `"< 5"` (the
/// review's counts); [`Count::HIDDEN`] as `"hidden"` (insight's hidden counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Count(pub u64);

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.exact() {
            Some(n) => s.serialize_u64(n),
            None if *self == Count::HIDDEN => s.serialize_str(HIDDEN_WORD),
            None => s.serialize_str("< 5"),
        }
    }
}

impl Count {
    /// A count read back from `"< 5"`: known only to be 1 to 4, written "< 5" like them.
    pub const FEW: Count = Count(1);

    /// A count insight withholds: 1 to 4, or more withheld so that such a count cannot be
    /// worked out from the others ([`protect`]). Read `"hidden"` back as this.
    pub const HIDDEN: Count = Count(u64::MAX);

    /// The number, when it is written as itself (0, or [`MIN_CELL`] and up).
    pub fn exact(self) -> Option<u64> {
        (self != Count::HIDDEN && (self.0 == 0 || self.0 >= MIN_CELL)).then_some(self.0)
    }

    /// The sum as it may be written: exact while both parts are; a hidden part adds nothing
    /// to a written sum over 0 (a lower bound, so the hidden part cannot be read back off
    /// the sum), and hidden parts alone stay hidden.
    #[must_use]
    pub fn plus(self, other: Count) -> Count {
        match (self.exact(), other.exact()) {
            (Some(a), Some(b)) => Count(a + b),
            (Some(0), None) => other,
            (None, Some(0)) => self,
            (None, None) if self == Count::HIDDEN || other == Count::HIDDEN => Count::HIDDEN,
            (None, None) => Count::FEW,
            (Some(n), None) | (None, Some(n)) => Count(n),
        }
    }
}

/// `k` of `n` as a share, when both are written as themselves and `n` is at least
/// [`MIN_CELL`].
pub fn share(k: Count, n: Count) -> Option<f64> {
    match (k.exact(), n.exact()) {
        (Some(k), Some(n)) if n >= MIN_CELL => Some(k as f64 / n as f64),
        _ => None,
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Count {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Count".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A number of runs: 0, or 5 and up. \"hidden\" (insight) for 1 to 4, or for a larger count withheld because, with the totals and parts given beside it, a count of 1 to 4 could be worked out from it; \"< 5\" (review) for 1 to 4. No one player's play can be read off",
            "oneOf": [
                {"type": "integer", "minimum": 0},
                {"const": "hidden"},
                {"const": "< 5"}
            ]
        })
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.exact() {
            Some(n) => write!(f, "{n}"),
            None if *self == Count::HIDDEN => f.write_str(HIDDEN_WORD),
            None => f.write_str("< 5"),
        }
    }
}

/// Runs by how they stand.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Outcomes {
    /// The boss was beaten.
    pub won: Count,
    /// Defeated by an encounter.
    pub lost: Count,
    pub fled: Count,
    pub abandoned: Count,
    /// Ended in a room with no way on.
    pub dead_end: Count,
    /// Still going, at a fork none of whose ways opened: waiting never helps.
    pub stranded: Count,
    /// Still going.
    pub active: Count,
}

impl Outcomes {
    fn add(&mut self, run: &Run) {
        self.slot(Standing::of(run)).0 += 1;
    }

    fn slot(&mut self, s: Standing) -> &mut Count {
        match s {
            Standing::Won => &mut self.won,
            Standing::Lost => &mut self.lost,
            Standing::Fled => &mut self.fled,
            Standing::Abandoned => &mut self.abandoned,
            Standing::DeadEnd => &mut self.dead_end,
            Standing::Stranded => &mut self.stranded,
            Standing::Active => &mut self.active,
        }
    }

    /// Runs that ended without winning (lost, fled, abandoned, dead end) or stand stranded,
    /// summed by [`Count::plus`].
    pub fn dropped(&self) -> Count {
        Standing::DROPPED
            .iter()
            .fold(Count(0), |sum, s| sum.plus(self.get(*s)))
    }

    /// The runs that stand as `s`.
    pub fn get(&self, s: Standing) -> Count {
        match s {
            Standing::Won => self.won,
            Standing::Lost => self.lost,
            Standing::Fled => self.fled,
            Standing::Abandoned => self.abandoned,
            Standing::DeadEnd => self.dead_end,
            Standing::Stranded => self.stranded,
            Standing::Active => self.active,
        }
    }

    /// Each standing and its runs, in [`Standing::ALL`] order.
    pub fn each(&self) -> [(Standing, Count); 7] {
        Standing::ALL.map(|s| (s, self.get(s)))
    }
}

/// How a run stands: how it ended, or whether it is still going or stranded.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    Won,
    Lost,
    Fled,
    Abandoned,
    DeadEnd,
    /// Still going, at a fork none of whose ways opened: waiting never helps.
    Stranded,
    Active,
}

impl Standing {
    pub const ALL: [Standing; 7] = [
        Standing::Won,
        Standing::Lost,
        Standing::Fled,
        Standing::Abandoned,
        Standing::DeadEnd,
        Standing::Stranded,
        Standing::Active,
    ];

    /// The standings of a run that did not win and is not going on.
    pub const DROPPED: [Standing; 5] = [
        Standing::Lost,
        Standing::Fled,
        Standing::Abandoned,
        Standing::DeadEnd,
        Standing::Stranded,
    ];

    pub fn of(run: &Run) -> Standing {
        match view::phase(run) {
            Phase::Over { outcome } => match outcome {
                Outcome::Victory => Standing::Won,
                Outcome::Defeat => Standing::Lost,
                Outcome::Fled => Standing::Fled,
                Outcome::Abandoned => Standing::Abandoned,
                Outcome::DeadEnd => Standing::DeadEnd,
            },
            Phase::Waiting => Standing::Stranded,
            Phase::Fork | Phase::InRoom => Standing::Active,
        }
    }

    /// Its name in a designer's text: "won", "dead end", …
    pub fn name(self) -> &'static str {
        match self {
            Standing::Won => "won",
            Standing::Lost => "lost",
            Standing::Fled => "fled",
            Standing::Abandoned => "abandoned",
            Standing::DeadEnd => "dead end",
            Standing::Stranded => "stranded",
            Standing::Active => "active",
        }
    }
}

/// One room.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoomInsight {
    pub id: String,
    /// Runs that reached it.
    pub reached: Count,
    /// Runs that stand or ended in it, by outcome.
    pub ended_here: Outcomes,
    /// Runs whose way out of it the fork timeout took (the player did not choose).
    pub timed_out: Count,
}

/// One fork: which way the runs that left it took.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForkInsight {
    pub at: String,
    /// Runs that met it (left it, or wait at it).
    pub met: Count,
    /// Each way out, in menu order, and the runs that took it (`picked`: of them, by the
    /// fork timeout).
    pub ways: Vec<WayInsight>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WayInsight {
    pub to: String,
    pub taken: Count,
    pub picked: Count,
    /// Its share of the runs that left the fork; null when `taken` or the runs that left
    /// are hidden, or under 5 runs left.
    pub share: Option<f64>,
}

/// One locked passage: observed against predicted.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockInsight {
    pub from: String,
    pub to: String,
    pub kind: LockKind,
    /// Runs whose characters met it.
    pub met: Count,
    pub passed: Count,
    /// `passed` ÷ `met`; null when either is hidden or under 5 runs met it.
    pub observed: Option<f64>,
    /// The mean of the rules' pass chance for each of those characters; null when `met` is
    /// hidden (its spread would tell how many) or under 5.
    pub predicted: Option<f64>,
    /// 95 % of the pass rates the prediction allows for this many runs; null like
    /// `predicted`.
    pub interval: Option<[f64; 2]>,
    /// The observed rate, when given, falls outside the interval: play and the model
    /// disagree.
    pub flagged: bool,
}

/// One route: the rooms in the order the runs reached them.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouteInsight {
    pub rooms: Vec<String>,
    pub runs: Count,
    /// Its share of the ended runs; null when `runs` or the ended runs are hidden, or under
    /// 5 ended runs.
    pub share: Option<f64>,
    pub won: Count,
}

/// Observed against modelled victory.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WinInsight {
    /// Ended runs.
    pub ended: Count,
    pub won: Count,
    /// `won` ÷ `ended`; null when either is hidden or under 5 ended runs.
    pub observed: Option<f64>,
    /// The model's win chance at each ended run's starting level, averaged; null when the
    /// zone is not modelled or no level is known.
    pub predicted: Option<f64>,
    /// The starting levels seen, lowest first.
    pub levels: Vec<u32>,
}

/// A zone version's play, read from its runs.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Insight {
    pub zone_id: String,
    pub runs: Count,
    pub outcomes: Outcomes,
    /// Every room, in file order.
    pub rooms: Vec<RoomInsight>,
    /// Every fork some run met, in file order of its room.
    pub forks: Vec<ForkInsight>,
    /// Every locked passage some run met, sorted by its ends.
    pub locks: Vec<LockInsight>,
    /// The ended runs' routes, the most taken first, then those whose runs are hidden.
    pub routes: Vec<RouteInsight>,
    pub win: WinInsight,
}

/// A way out of a fork as counted: where it goes, runs that took it, of them picked.
type Way = (String, u64, u64);

/// Observations of one passage's lock: met, passed, and the predicted chances summed in
/// twentieths (a chance is the d20 faces that pass, of 20), so that the sums are exact and
/// do not depend on the order the runs are added in.
#[derive(Debug, Default)]
struct LockTally {
    kind: Option<LockKind>,
    met: u64,
    passed: u64,
    /// Σ faces that pass: the predicted passes × 20.
    faces: u64,
    /// Σ faces × (20 − faces): the predicted variance × 400.
    spread: u64,
}

/// Reads `runs` (of `zone`'s version) together; small counts hidden ([`protect`]).
pub fn insight(zone: &Zone, runs: &[Run]) -> Insight {
    let mut tally = Tally::new(zone);
    for run in runs {
        tally.add(run);
    }
    tally.insight()
}

/// Runs read together one at a time, so that a caller reading a season of them from a
/// database holds one run, not all: [`Tally::add`] each, then [`Tally::insight`]. The answer
/// does not depend on the order the runs are added in (every sum is of integers, the floats
/// are worked out at the end), so a database may hand them over in any order; [`insight`]
/// over the same runs gives the same answer.
#[derive(Debug)]
pub struct Tally<'z> {
    zone: &'z Zone,
    runs: u64,
    reached: Vec<u64>,
    ended: Vec<Outcomes>,
    timed_out: Vec<u64>,
    outcomes: Outcomes,
    /// Per fork room: met, and per way (to) taken and picked.
    forks: BTreeMap<usize, (u64, Vec<Way>)>,
    locks: BTreeMap<(String, String), LockTally>,
    routes: BTreeMap<Vec<String>, (u64, u64)>,
    /// Per starting level of an ended run: the model's win chance there, and how many.
    win_levels: BTreeMap<u32, (Option<f64>, u64)>,
    ended_runs: u64,
    won: u64,
}

impl<'z> Tally<'z> {
    /// No run read yet, of `zone`'s version.
    pub fn new(zone: &'z Zone) -> Tally<'z> {
        let rooms = zone.graph.node_count();
        Tally {
            zone,
            runs: 0,
            reached: vec![0; rooms],
            ended: vec![Outcomes::default(); rooms],
            timed_out: vec![0; rooms],
            outcomes: Outcomes::default(),
            forks: BTreeMap::new(),
            locks: BTreeMap::new(),
            routes: BTreeMap::new(),
            win_levels: BTreeMap::new(),
            ended_runs: 0,
            won: 0,
        }
    }

    /// How many runs were added.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// One more run of the zone's version.
    pub fn add(&mut self, run: &Run) {
        let zone = self.zone;
        let at = |id: &str| zone.node_index(id).map(|ix| ix.index());
        self.runs += 1;
        self.outcomes.add(run);
        for v in &run.visited_nodes {
            if let Some(i) = at(v.as_str()) {
                self.reached[i] += 1;
            }
        }
        if let Some(i) = at(run.current_node.as_str()) {
            self.ended[i].add(run);
        }
        let met = run
            .forks_met
            .iter()
            .map(|m| (&m.at, &m.options, Some((m.taken, m.picked))))
            .chain(run.pending_fork.iter().map(|f| (&f.at, &f.options, None)));
        for (from, options, taken) in met {
            if options.len() >= 2
                && let Some(i) = at(from.as_str())
            {
                // The fork's ways in the zone's order, whichever run met it first.
                let fork = self.forks.entry(i).or_insert_with(|| {
                    let ways = zone
                        .exits(NodeIndex::new(i))
                        .into_iter()
                        .map(|e| (zone.node(zone.target(e)).id.0.clone(), 0, 0))
                        .collect();
                    (0, ways)
                });
                fork.0 += 1;
                if let Some((_, true)) = taken {
                    self.timed_out[i] += 1;
                }
                if let Some((t, picked)) = taken
                    && let Some(o) = options.get(t)
                    && let Some(way) = fork.1.iter_mut().find(|w| w.0 == o.to_node.0)
                {
                    way.1 += 1;
                    way.2 += u64::from(picked);
                }
            }
            for o in options.iter().filter(|o| o.check != Check::None) {
                let t = self
                    .locks
                    .entry((from.0.clone(), o.to_node.0.clone()))
                    .or_default();
                let faces = passing_faces(&o.check);
                t.kind = Some(o.check.lock_kind());
                t.met += 1;
                t.passed += u64::from(o.open);
                t.faces += faces;
                t.spread += faces * (20 - faces);
            }
        }
        if run.outcome.is_some() {
            self.ended_runs += 1;
            let victory = run.outcome == Some(Outcome::Victory);
            self.won += u64::from(victory);
            let route = self
                .routes
                .entry(run.visited_nodes.iter().map(|n| n.0.clone()).collect())
                .or_default();
            route.0 += 1;
            route.1 += u64::from(victory);
            if run.level > 0 {
                self.win_levels
                    .entry(run.level)
                    .or_insert_with(|| {
                        let p = difficulty::at_level(zone, run.level).map(|d| d.win_chance);
                        (p, 0)
                    })
                    .1 += 1;
            }
        }
    }

    /// The runs added, read together; small counts hidden ([`protect`]).
    pub fn insight(self) -> Insight {
        protect(&self.figures())
    }

    /// The runs read together, every count as it is and every rate over 5 runs or more: the
    /// figures before [`protect`] hides what must not be read.
    fn figures(self) -> Insight {
        let Tally {
            zone,
            runs,
            reached,
            ended,
            timed_out,
            outcomes,
            forks,
            locks,
            routes,
            win_levels,
            ended_runs,
            won,
        } = self;
        // The model's win chance over the ended runs, the levels added up in order.
        let (predicted_sum, predicted_n) = win_levels
            .values()
            .filter_map(|&(p, n)| Some((p?, n)))
            .fold((0.0, 0u64), |(sum, all), (p, n)| {
                (sum + p * n as f64, all + n)
            });
        let ids: Vec<String> = zone
            .graph
            .node_indices()
            .map(|ix| zone.node(ix).id.0.clone())
            .collect();
        let rate = |k: u64, n: u64| (n >= MIN_CELL).then(|| round4(k as f64 / n as f64));
        let rooms = ids
            .iter()
            .zip(reached.iter().zip(ended).zip(&timed_out))
            .map(|(id, ((&r, e), &t))| RoomInsight {
                id: id.clone(),
                reached: Count(r),
                ended_here: e,
                timed_out: Count(t),
            })
            .collect();
        let forks = forks
            .into_iter()
            .map(|(i, (met, ways))| {
                let left: u64 = ways.iter().map(|w| w.1).sum();
                ForkInsight {
                    at: ids[i].clone(),
                    met: Count(met),
                    ways: ways
                        .into_iter()
                        .map(|(to, taken, picked)| WayInsight {
                            to,
                            taken: Count(taken),
                            picked: Count(picked),
                            share: rate(taken, left),
                        })
                        .collect(),
                }
            })
            .collect();
        let locks = locks
            .into_iter()
            .map(|((from, to), t)| {
                let enough = t.met >= MIN_CELL;
                let n = t.met as f64;
                let (mean, var) = (t.faces as f64 / 20.0, t.spread as f64 / 400.0);
                let (lo, hi) = (
                    ((mean - Z95 * var.sqrt()) / n).max(0.0),
                    ((mean + Z95 * var.sqrt()) / n).min(1.0),
                );
                let observed = t.passed as f64 / n;
                // A tiny tolerance: with no variance the interval is one point.
                let flagged = enough && (observed < lo - 1e-9 || observed > hi + 1e-9);
                LockInsight {
                    from,
                    to,
                    kind: t.kind.unwrap_or(LockKind::None),
                    met: Count(t.met),
                    passed: Count(t.passed),
                    observed: rate(t.passed, t.met),
                    predicted: enough.then(|| round4(mean / n)),
                    interval: enough.then(|| [round4(lo), round4(hi)]),
                    flagged,
                }
            })
            .collect();
        let routes: Vec<RouteInsight> = routes
            .into_iter()
            .map(|(rooms, (n, w))| RouteInsight {
                rooms,
                runs: Count(n),
                share: rate(n, ended_runs),
                won: Count(w),
            })
            .collect();
        Insight {
            zone_id: zone.id.clone(),
            runs: Count(runs),
            outcomes,
            rooms,
            forks,
            locks,
            routes,
            win: WinInsight {
                ended: Count(ended_runs),
                won: Count(won),
                observed: rate(won, ended_runs),
                predicted: (predicted_n > 0).then(|| round4(predicted_sum / predicted_n as f64)),
                levels: win_levels.into_keys().collect(),
            },
        }
    }
}

/// The rules' chance that a character with this check's modifier passes it: every d20 tried
/// through the engine's own test; a lock decided by the sheet alone (a key, a level, a
/// region) is 1 or 0 as it went.
pub fn pass_chance(check: &Check) -> f64 {
    passing_faces(check) as f64 / 20.0
}

/// Of the d20's 20 faces, how many pass `check` for its character ([`pass_chance`] × 20).
fn passing_faces(check: &Check) -> u64 {
    let with = |d20: u32| match check {
        Check::PerceptionCheck { modifier, dc, .. } => Check::PerceptionCheck {
            d20,
            modifier: *modifier,
            dc: *dc,
        },
        Check::StatCheck {
            ability,
            modifier,
            dc,
            ..
        } => Check::StatCheck {
            ability: *ability,
            d20,
            modifier: *modifier,
            dc: *dc,
        },
        other => other.clone(),
    };
    (1..=20).filter(|&d| with(d).passes()).count() as u64
}

impl RoomInsight {
    /// Runs that reached it ÷ all `runs`; `None` under [`MIN_CELL`] runs or for "< 5".
    pub fn reach(&self, runs: Count) -> Option<f64> {
        share(self.reached, runs)
    }

    /// At least [`MIN_CELL`] runs, and [`DROP_OFF_SHARE`] of all `runs`, ended here without
    /// winning ([`Outcomes::dropped`]).
    pub fn is_drop_off(&self, runs: Count) -> bool {
        match (self.ended_here.dropped().exact(), runs.exact()) {
            (Some(d), Some(n)) => d >= MIN_CELL && d as f64 >= DROP_OFF_SHARE * n as f64,
            _ => false,
        }
    }
}

/// A room's name for the sentences: its label in the editor, its id on the command line.
pub type Namer<'a> = &'a dyn Fn(&str) -> String;

/// "won 6, abandoned 24": each standing of `o` that is not 0, in [`Standing::ALL`] order;
/// empty for none.
pub fn outcome_words(o: &Outcomes) -> String {
    standing_words(o, &Standing::ALL)
}

fn standing_words(o: &Outcomes, which: &[Standing]) -> String {
    which
        .iter()
        .filter(|s| o.get(**s) != Count(0))
        .map(|s| format!("{} {}", s.name(), o.get(*s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "30 runs: abandoned 24, active 6".
pub fn summary(runs: Count, outcomes: &Outcomes) -> String {
    let said = outcome_words(outcomes);
    if said.is_empty() {
        format!("{runs} runs")
    } else {
        format!("{runs} runs: {said}")
    }
}

/// "Wins: 6 of 24 ended runs, 25% observed; the model predicts 40% at the levels the runs
/// started at (1, 2)."
pub fn win_words(w: &WinInsight) -> String {
    let observed = w.observed.map_or_else(
        || "no rate (under 5 ended runs, or hidden)".to_string(),
        |o| format!("{} observed", text::percent(o)),
    );
    let model = w.predicted.map_or_else(
        || "the model gives no odds (not modelled, or no level known)".to_string(),
        |p| {
            let levels: Vec<String> = w.levels.iter().map(u32::to_string).collect();
            format!(
                "the model predicts {} at the levels the runs started at ({})",
                text::percent(p),
                levels.join(", ")
            )
        },
    );
    format!(
        "Wins: {} of {} ended runs, {observed}; {model}.",
        w.won, w.ended
    )
}

/// "Corridor: reached by 30 of 30 (100%); 24 ended here without winning (abandoned 24) — a
/// drop-off; the fork timeout chose the way on for hidden".
pub fn room_words(name: &str, r: &RoomInsight, runs: Count) -> String {
    let mut s = format!("{name}: reached by {} of {runs}", r.reached);
    if let Some(p) = r.reach(runs) {
        s.push_str(&format!(" ({})", text::percent(p)));
    }
    let dropped = r.ended_here.dropped();
    if dropped != Count(0) {
        s.push_str(&format!(
            "; {dropped} ended here without winning ({})",
            standing_words(&r.ended_here, &Standing::DROPPED)
        ));
    }
    if r.is_drop_off(runs) {
        s.push_str(" — a drop-off");
    }
    if r.timed_out != Count(0) {
        s.push_str(&format!(
            "; the fork timeout chose the way on for {}",
            r.timed_out
        ));
    }
    s
}

/// "At Fork (met by 6): Main Hall 6 (100%, hidden by the fork timeout), Side Chapel 0 (0%)".
pub fn fork_words(f: &ForkInsight, name: Namer) -> String {
    let ways: Vec<String> = f
        .ways
        .iter()
        .map(|w| {
            let mut notes: Vec<String> = w.share.map(text::percent).into_iter().collect();
            if w.picked != Count(0) {
                notes.push(format!("{} by the fork timeout", w.picked));
            }
            if notes.is_empty() {
                format!("{} {}", name(&w.to), w.taken)
            } else {
                format!("{} {} ({})", name(&w.to), w.taken, notes.join(", "))
            }
        })
        .collect();
    format!("At {} (met by {}): {}", name(&f.at), f.met, ways.join(", "))
}

/// "Fork → Side Chapel (Perception check): passed 0 of 6 (0%); the model predicts 55% (95%
/// interval 15%–95%). Play disagrees with the model."
pub fn lock_words(l: &LockInsight, name: Namer) -> String {
    let mut s = format!(
        "{} → {} ({}): passed {} of {}",
        name(&l.from),
        name(&l.to),
        chat::lock_name(l.kind),
        l.passed,
        l.met
    );
    match l.observed {
        Some(o) => s.push_str(&format!(" ({})", text::percent(o))),
        None => s.push_str(" (no rate: under 5 runs, or hidden)"),
    }
    // The prediction is given whenever `met` is shown, the observed rate or not.
    if let Some(p) = l.predicted {
        let interval = l.interval.map_or_else(String::new, |[lo, hi]| {
            format!(
                " (95% interval {}–{})",
                text::percent(lo),
                text::percent(hi)
            )
        });
        s.push_str(&format!(
            "; the model predicts {}{interval}",
            text::percent(p)
        ));
    }
    if l.flagged {
        s.push_str(". Play disagrees with the model.");
    }
    s
}

/// "24 runs (80%), 6 won: Entry → Corridor → …".
pub fn route_words(r: &RouteInsight, name: Namer) -> String {
    let share = r
        .share
        .map_or_else(String::new, |p| format!(" ({})", text::percent(p)));
    let rooms: Vec<String> = r.rooms.iter().map(|id| name(id)).collect();
    format!(
        "{} runs{share}, {} won: {}",
        r.runs,
        r.won,
        rooms.join(" → ")
    )
}

/// The insight of version `version` as headed sections of sentences: the summary with the win
/// rates, then rooms, forks, locks and routes (a section with no lines is left out). The one
/// wording of insight: the command line prints it, the editor's panel shows it.
// Not inlined into the editor's reading of the answer: apart, the viewer's bundle is smaller.
#[inline(never)]
pub fn sections(version: i64, i: &Insight, name: Namer) -> Vec<(String, Vec<String>)> {
    let rooms = i
        .rooms
        .iter()
        .map(|r| room_words(&name(&r.id), r, i.runs))
        .collect();
    let forks = i.forks.iter().map(|f| fork_words(f, name)).collect();
    let locks = i.locks.iter().map(|l| lock_words(l, name)).collect();
    let routes = i.routes.iter().map(|r| route_words(r, name)).collect();
    let all: [(String, Vec<String>); 5] = [
        (
            format!("Version {version}: {}", summary(i.runs, &i.outcomes)),
            vec![win_words(&i.win)],
        ),
        ("Rooms: reach and endings".into(), rooms),
        ("Forks".into(), forks),
        ("Locks, observed and predicted".into(), locks),
        ("Routes".into(), routes),
    ];
    all.into_iter()
        .filter(|(_, lines)| !lines.is_empty())
        .collect()
}

fn round4(x: f64) -> f64 {
    difficulty::round4(x)
}

mod protect;
use protect::protect;

#[cfg(test)]
mod tests;
