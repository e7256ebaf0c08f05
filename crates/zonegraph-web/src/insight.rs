//! The editor's Insight layer, pure: what players did in the open zone, read from the
//! server's `GET /api/zones/{zone_id}/insight` answer (the core's `insight::Insight` with its
//! `version`), turned into what the map draws (each room's reach, each passage's share of the
//! runs, drop-off rooms, locks that contradict the model) and the side panel's lines.
//!
//! The answer is read as `serde_json::Value` (the core's type is only serialised): a count is
//! a number or `"< 5"` (1 to 4 runs, kept unreadable), a rate under 5 runs is `null`, and
//! both stay so here: nothing below 5 runs is guessed at.

use serde_json::Value;
use zonegraph_core::format::LockKind;
// Below this many runs the server hides a count ("< 5"); a drop-off needs at least this many.
use zonegraph_core::insight::MIN_CELL;

use crate::model::{BOX_H, BOX_W, MapModel, num, percent};
use crate::names;

/// A room is a drop-off when at least this share of all runs ended there without winning.
const DROP_OFF_SHARE: f64 = 0.1;

/// A number of runs as the server gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    N(u64),
    /// 1 to 4 runs.
    Few,
}

impl Count {
    fn of(v: &Value) -> Count {
        match v.as_u64() {
            Some(n) => Count::N(n),
            None if v.is_string() => Count::Few,
            None => Count::N(0),
        }
    }

    /// The exact number, when the server gave it.
    pub fn exact(self) -> Option<u64> {
        match self {
            Count::N(n) => Some(n),
            Count::Few => None,
        }
    }

    pub fn words(self) -> String {
        match self {
            Count::N(n) => n.to_string(),
            Count::Few => "< 5".into(),
        }
    }

    /// The sum of counts: exact while every part is; a few runs stay "a few" only when no
    /// part is a number over 0.
    fn add(self, other: Count) -> Count {
        match (self, other) {
            (Count::N(a), Count::N(b)) => Count::N(a + b),
            (Count::N(0), Count::Few) | (Count::Few, Count::N(0)) | (Count::Few, Count::Few) => {
                Count::Few
            }
            // At least the exact part: a lower bound, never a guess above it.
            (Count::N(n), Count::Few) | (Count::Few, Count::N(n)) => Count::N(n),
        }
    }
}

/// `k` of `n` as a share, when both are exact and `n` is at least 5.
fn share(k: Count, n: Count) -> Option<f64> {
    match (k, n) {
        (Count::N(k), Count::N(n)) if n >= MIN_CELL => Some(k as f64 / n as f64),
        _ => None,
    }
}

/// A room as the layer draws it.
#[derive(Clone, Debug, PartialEq)]
pub struct RoomReach {
    pub id: String,
    pub reached: Count,
    /// Runs that reached it ÷ runs; `None` under 5 runs or for "< 5".
    pub reach: Option<f64>,
    /// Runs that ended here without winning (lost, fled, abandoned, dead end, stranded).
    pub dropped: Count,
    /// What they were, in words ("abandoned 24, lost < 5"); empty for none.
    pub dropped_how: String,
    /// At least 5 and a tenth of all runs ended here without winning: marked on the map.
    pub drop_off: bool,
    /// Runs whose way on from here the fork timeout took (the player did not choose).
    pub timed_out: Count,
}

/// A passage's share of the runs: from its fork's ways; else the runs that reached its end
/// when that room has one way in; else from the routes of the ended runs (a lower bound: the
/// runs still going are on no route).
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub from: String,
    pub to: String,
    pub taken: Count,
    /// Runs that took it ÷ all runs.
    pub share: Option<f64>,
}

/// A locked passage some run met: observed against the model.
#[derive(Clone, Debug, PartialEq)]
pub struct LockSeen {
    pub from: String,
    pub to: String,
    pub flagged: bool,
    pub words: String,
}

/// One zone version's insight, ready to draw and to read.
#[derive(Clone, Debug, PartialEq)]
pub struct Insight {
    pub version: u64,
    pub runs: Count,
    pub rooms: Vec<RoomReach>,
    pub flows: Vec<Flow>,
    pub locks: Vec<LockSeen>,
    /// "30 runs: won 6, abandoned 24."
    pub summary: String,
    /// Observed win rate beside the model's.
    pub win: String,
    /// One line per fork: "At a: b 4 (67%), c 2 (33%)".
    pub forks: Vec<String>,
    /// One line per route, the most taken first.
    pub routes: Vec<String>,
}

const ENDINGS: [&str; 5] = ["lost", "fled", "abandoned", "dead_end", "stranded"];

/// How an outcome key reads: "dead_end" is "dead end".
fn outcome_word(key: &str) -> &str {
    if key == "dead_end" { "dead end" } else { key }
}

/// "won 6, abandoned 24" for the outcomes in `keys` that are not 0.
fn outcomes_words(o: &Value, keys: &[&str]) -> String {
    keys.iter()
        .filter_map(|k| {
            let c = Count::of(&o[*k]);
            (c != Count::N(0)).then(|| format!("{} {}", outcome_word(k), c.words()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads the server's answer; `name` gives a room's label (or its id) for the lines. The
/// passages' flows are computed for `passages` (from, to), the zone's passages as drawn.
pub fn read(
    body: &str,
    passages: &[(String, String)],
    name: impl Fn(&str) -> String,
) -> Result<Insight, String> {
    let v: Value = serde_json::from_str(body)
        .map_err(|_| "the server's answer is not the insight JSON".to_string())?;
    let Some(rooms_json) = v["rooms"].as_array() else {
        return Err("the server's answer lists no rooms".into());
    };
    let runs = Count::of(&v["runs"]);
    let rooms = rooms_json
        .iter()
        .map(|r| {
            let reached = Count::of(&r["reached"]);
            let ended = &r["ended_here"];
            let dropped = ENDINGS
                .iter()
                .fold(Count::N(0), |sum, k| sum.add(Count::of(&ended[*k])));
            let drop_off = match (dropped, runs) {
                (Count::N(d), Count::N(n)) => {
                    d >= MIN_CELL && d as f64 >= DROP_OFF_SHARE * n as f64
                }
                _ => false,
            };
            RoomReach {
                id: r["id"].as_str().unwrap_or_default().to_string(),
                reached,
                reach: share(reached, runs),
                dropped,
                dropped_how: outcomes_words(ended, &ENDINGS),
                drop_off,
                timed_out: Count::of(&r["timed_out"]),
            }
        })
        .collect();

    let empty = Vec::new();
    let list = |key: &str| v[key].as_array().unwrap_or(&empty);
    let forks = list("forks");
    let routes = list("routes");
    let flows = passages
        .iter()
        .map(|(from, to)| {
            let fork = forks.iter().find(|f| f["at"] == from.as_str());
            let one_way_in = passages.iter().filter(|p| &p.1 == to).count() == 1;
            let into = rooms_json.iter().find(|r| r["id"] == to.as_str());
            let taken = match (fork, into) {
                (Some(f), _) => f["ways"]
                    .as_array()
                    .and_then(|ways| ways.iter().find(|w| w["to"] == to.as_str()))
                    .map_or(Count::N(0), |w| Count::of(&w["taken"])),
                // Every run that reached a room with one way in took that way.
                (None, Some(r)) if one_way_in => Count::of(&r["reached"]),
                _ => routes
                    .iter()
                    .filter(|r| {
                        r["rooms"].as_array().is_some_and(|rooms| {
                            rooms
                                .windows(2)
                                .any(|p| p[0] == from.as_str() && p[1] == to.as_str())
                        })
                    })
                    .fold(Count::N(0), |sum, r| sum.add(Count::of(&r["runs"]))),
            };
            Flow {
                from: from.clone(),
                to: to.clone(),
                taken,
                share: share(taken, runs),
            }
        })
        .collect();

    let pct = |x: &Value| x.as_f64().map(percent);
    let locks = list("locks")
        .iter()
        .map(|l| {
            let (from, to) = (
                l["from"].as_str().unwrap_or_default(),
                l["to"].as_str().unwrap_or_default(),
            );
            let flagged = l["flagged"].as_bool().unwrap_or(false);
            let mut words = format!(
                "{} → {} ({}): passed {} of {}",
                name(from),
                name(to),
                serde_json::from_value::<LockKind>(l["kind"].clone())
                    .map_or("lock", names::lock_name),
                Count::of(&l["passed"]).words(),
                Count::of(&l["met"]).words()
            );
            match (pct(&l["observed"]), pct(&l["predicted"])) {
                (Some(o), Some(p)) => {
                    let [lo, hi] = [0, 1].map(|i| pct(&l["interval"][i]).unwrap_or_default());
                    words.push_str(&format!(
                        " ({o}); the model predicts {p} (95% interval {lo}–{hi})"
                    ));
                }
                _ => words.push_str(" (under 5 runs: no rate)"),
            }
            if flagged {
                words.push_str(". Play disagrees with the model.");
            }
            LockSeen {
                from: from.to_string(),
                to: to.to_string(),
                flagged,
                words,
            }
        })
        .collect();

    let fork_lines = forks
        .iter()
        .map(|f| {
            let ways = f["ways"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .map(|w| {
                    let mut s = format!(
                        "{} {}",
                        name(w["to"].as_str().unwrap_or_default()),
                        Count::of(&w["taken"]).words()
                    );
                    if let Some(p) = pct(&w["share"]) {
                        s.push_str(&format!(" ({p})"));
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "At {} (met by {}): {ways}",
                name(f["at"].as_str().unwrap_or_default()),
                Count::of(&f["met"]).words()
            )
        })
        .collect();
    let route_lines = routes
        .iter()
        .map(|r| {
            let rooms = r["rooms"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .map(|id| name(id.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(" → ");
            let share = pct(&r["share"]).map_or_else(String::new, |p| format!(" ({p})"));
            format!(
                "{} runs{share}, {} won: {rooms}",
                Count::of(&r["runs"]).words(),
                Count::of(&r["won"]).words()
            )
        })
        .collect();

    let w = &v["win"];
    let levels = w["levels"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|l| l.as_u64().map(|l| l.to_string()))
        .collect::<Vec<_>>()
        .join(", ");
    let observed = pct(&w["observed"]).map_or_else(
        || "no rate (under 5 ended runs)".to_string(),
        |o| format!("{o} observed"),
    );
    let model = pct(&w["predicted"]).map_or_else(
        || "the model gives no odds (not modelled, or no level known)".to_string(),
        |p| format!("the model predicts {p} at the levels the runs started at ({levels})"),
    );
    let outcomes = outcomes_words(
        &v["outcomes"],
        &[
            "won",
            "lost",
            "fled",
            "abandoned",
            "dead_end",
            "stranded",
            "active",
        ],
    );
    Ok(Insight {
        version: v["version"].as_u64().unwrap_or(0),
        runs,
        rooms,
        flows,
        locks,
        summary: format!(
            "{} runs{}",
            runs.words(),
            if outcomes.is_empty() {
                String::new()
            } else {
                format!(": {outcomes}")
            }
        ),
        win: format!(
            "Wins: {} of {} ended runs, {observed}; {model}.",
            Count::of(&w["won"]).words(),
            Count::of(&w["ended"]).words()
        ),
        forks: fork_lines,
        routes: route_lines,
    })
}

impl RoomReach {
    /// The panel's line for the room: "Crypt Gate: reached by 30 of 30 (100%); 24 ended here
    /// without winning (abandoned 24)".
    pub fn line(&self, name: &str, runs: Count) -> String {
        let mut s = format!(
            "{name}: reached by {} of {}",
            self.reached.words(),
            runs.words()
        );
        if let Some(r) = self.reach {
            s.push_str(&format!(" ({})", percent(r)));
        }
        if self.dropped != Count::N(0) {
            s.push_str(&format!(
                "; {} ended here without winning ({})",
                self.dropped.words(),
                self.dropped_how
            ));
        }
        if self.drop_off {
            s.push_str(" — a drop-off");
        }
        if self.timed_out != Count::N(0) {
            s.push_str(&format!(
                "; the fork timeout chose the way on for {}",
                self.timed_out.words()
            ));
        }
        s
    }
}

/// The opacity of a room's reach shading: none for a room no run reached (or when the share
/// is not known), strong for one every run reaches.
pub fn reach_opacity(reach: Option<f64>) -> f64 {
    reach.map_or(0.0, |r| 0.7 * r.clamp(0.0, 1.0))
}

/// The stroke width of a passage's flow: from 3 (a share near 0) to 17 (every run); 2 for a
/// passage "< 5" runs took; none for one no run took.
pub fn flow_width(f: &Flow) -> f64 {
    match (f.taken, f.share) {
        (Count::N(0), _) => 0.0,
        (_, Some(s)) => 3.0 + 14.0 * s.clamp(0.0, 1.0),
        _ => 2.0,
    }
}

/// The Insight layer's SVG over the map `m`: each room's reach shading with "reached N%" above
/// it (a drop-off framed, with "⚑ N ended here"), then a band under each passage runs took, as
/// wide as its share ([`flow_width`]), then a ring and "⚠ play ≠ model" at each flagged lock.
/// Only numbers and fixed words go into the markup, never a zone's text.
pub fn svg(m: &MapModel, i: &Insight) -> String {
    let mut svg = String::new();
    for (r, shape) in i.rooms.iter().filter_map(|r| {
        let shape = m.rooms.iter().find(|s| s.id == r.id)?;
        Some((r, shape))
    }) {
        let (x, y) = (shape.x - BOX_W / 2.0 - 10.0, shape.y - BOX_H / 2.0 - 10.0);
        let reached = match (r.reach, r.reached) {
            (Some(p), _) => percent(p),
            (None, c) => format!("{} runs", c.words()),
        };
        let drop = if r.drop_off {
            format!(" · ⚑ {} ended here", r.dropped.words())
        } else {
            String::new()
        };
        svg.push_str(&format!(
            "<g class=\"reach{}\"><rect x=\"{}\" y=\"{}\" width=\"204\" height=\"76\" rx=\"16\" fill-opacity=\"{}\"></rect>\
             <text x=\"{}\" y=\"{}\">reached {reached}{drop}</text></g>",
            if r.drop_off { " drop-off" } else { "" },
            num(x),
            num(y),
            num(reach_opacity(r.reach)),
            num(x + 8.0),
            num(y - 5.0),
        ));
    }
    for (f, p) in i.flows.iter().flat_map(|f| {
        m.passages
            .iter()
            .filter(move |p| p.from == f.from && p.to == f.to)
            .map(move |p| (f, p))
    }) {
        let w = flow_width(f);
        if w > 0.0 {
            svg.push_str(&format!(
                "<path class=\"flow\" d=\"{}\" stroke-width=\"{}\"></path>",
                p.d,
                num(w)
            ));
        }
    }
    for l in i.locks.iter().filter(|l| l.flagged) {
        let Some(p) = m.passages.iter().find(|p| p.from == l.from && p.to == l.to) else {
            continue;
        };
        let (x, y) = match &p.mark {
            Some((x, y, _)) => (*x, *y),
            None => ((p.bbox.0 + p.bbox.2) / 2.0, (p.bbox.1 + p.bbox.3) / 2.0),
        };
        svg.push_str(&format!(
            "<g class=\"flagged\"><circle cx=\"{}\" cy=\"{}\" r=\"22\"></circle><text x=\"{}\" y=\"{}\">⚠ play ≠ model</text></g>",
            num(x),
            num(y),
            num(x + 26.0),
            num(y + 4.0),
        ));
    }
    svg
}

/// What the editor says when the insight could not be loaded from `url`.
pub fn error_words(status: u16, body: &str, url: &str, zone_id: &str) -> String {
    let json: Value = serde_json::from_str(body).unwrap_or_default();
    let detail = json["error"]
        .as_str()
        .map_or_else(String::new, |e| format!(" ({e})"));
    let why = match status {
        401 => "the server did not take that token".to_string(),
        403 => "this token may not read insight: it needs the publish or admin scope (zonegraph token new --scope publish)".to_string(),
        404 => format!("the server serves no zone {zone_id}, or not that version"),
        _ => format!("the server answered {status}"),
    };
    format!("Insight not loaded from {url}: {why}{detail}.")
}

/// The insight URL of zone `zone_id` on the server at `server`.
pub fn url(server: &str, zone_id: &str) -> String {
    format!("{}/insight", crate::editor::zone_url(server, zone_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer as the server gives it for the Crypt's first rooms: 30 runs, 24 abandoned
    /// in the corridor, 6 through the fork's first way; the lock observed outside the model.
    const ANSWER: &str = r#"{
        "version": 3, "zone_id": "c", "runs": 30,
        "outcomes": {"won": 0, "lost": 0, "fled": 0, "abandoned": 24, "dead_end": 0, "stranded": 0, "active": 6},
        "rooms": [
            {"id": "c.entry", "reached": 30, "ended_here": {"won": 0, "lost": 0, "fled": 0, "abandoned": 0, "dead_end": 0, "stranded": 0, "active": 0}},
            {"id": "c.corridor", "reached": 30, "ended_here": {"won": 0, "lost": 0, "fled": 0, "abandoned": 24, "dead_end": 0, "stranded": 0, "active": 0}},
            {"id": "c.fork", "reached": 6, "timed_out": "< 5", "ended_here": {"won": 0, "lost": "< 5", "fled": 0, "abandoned": 0, "dead_end": 0, "stranded": 0, "active": 0}},
            {"id": "c.hall", "reached": "< 5", "ended_here": {"won": 0, "lost": 0, "fled": 0, "abandoned": 0, "dead_end": 0, "stranded": 0, "active": "< 5"}},
            {"id": "c.boss", "reached": 0, "ended_here": {"won": 0, "lost": 0, "fled": 0, "abandoned": 0, "dead_end": 0, "stranded": 0, "active": 0}}
        ],
        "forks": [{"at": "c.fork", "met": 6, "ways": [
            {"to": "c.hall", "taken": 6, "picked": 0, "share": 1.0},
            {"to": "c.boss", "taken": 0, "picked": 0, "share": 0.0}]}],
        "locks": [{"from": "c.fork", "to": "c.boss", "kind": "perception_check", "met": 6, "passed": 0,
            "observed": 0.0, "predicted": 0.55, "interval": [0.15, 0.95], "flagged": true}],
        "routes": [
            {"rooms": ["c.entry", "c.corridor"], "runs": 24, "share": 1.0, "won": 0}
        ],
        "win": {"ended": 24, "won": 0, "observed": 0.0, "predicted": 0.4, "levels": [1]}
    }"#;

    fn passages() -> Vec<(String, String)> {
        [
            ("c.entry", "c.corridor"),
            ("c.corridor", "c.fork"),
            ("c.fork", "c.hall"),
            ("c.fork", "c.boss"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .to_vec()
    }

    fn check() -> Insight {
        read(ANSWER, &passages(), |id| id.to_uppercase()).expect("read")
    }

    #[test]
    fn rooms_are_shaded_by_reach_and_drop_offs_marked() {
        let i = check();
        assert_eq!((i.version, i.runs), (3, Count::N(30)));
        let corridor = &i.rooms[1];
        assert_eq!(corridor.reach, Some(1.0));
        assert!(corridor.drop_off, "24 of 30 abandoned there");
        assert_eq!(
            corridor.line("Corridor", i.runs),
            "Corridor: reached by 30 of 30 (100%); 24 ended here without winning (abandoned 24) — a drop-off"
        );
        let fork = &i.rooms[2];
        assert_eq!(fork.reach, Some(0.2));
        assert_eq!(fork.dropped, Count::Few);
        assert!(!fork.drop_off, "a few runs are no drop-off");
        assert_eq!(
            fork.line("Fork", i.runs),
            "Fork: reached by 6 of 30 (20%); < 5 ended here without winning (lost < 5); the fork timeout chose the way on for < 5"
        );
        let hall = &i.rooms[3];
        assert_eq!((hall.reached, hall.reach), (Count::Few, None));
        assert_eq!(reach_opacity(hall.reach), 0.0);
        assert!(reach_opacity(Some(1.0)) > reach_opacity(fork.reach));
        assert_eq!(
            reach_opacity(Some(0.0)),
            0.0,
            "an unreached room is not shaded"
        );
    }

    #[test]
    fn passages_take_their_share_from_forks_and_routes() {
        let i = check();
        let taken: Vec<(Count, Option<f64>)> = i.flows.iter().map(|f| (f.taken, f.share)).collect();
        assert_eq!(
            taken,
            [
                // The runs that reached a room with one way in.
                (Count::N(30), Some(1.0)),
                (Count::N(6), Some(0.2)),
                // From the fork's ways.
                (Count::N(6), Some(0.2)),
                (Count::N(0), Some(0.0)),
            ]
        );
        let widths: Vec<f64> = i.flows.iter().map(flow_width).collect();
        assert_eq!(widths, [17.0, 3.0 + 14.0 * 0.2, 3.0 + 14.0 * 0.2, 0.0]);
        // A room with two ways in and no fork before it: the ended runs' routes (a lower
        // bound).
        let mut two_in = passages();
        two_in.push(("c.boss".into(), "c.corridor".into()));
        let i = read(ANSWER, &two_in, |id| id.to_string()).expect("read");
        assert_eq!(i.flows[0].taken, Count::N(24));
        let few = Flow {
            from: "a".into(),
            to: "b".into(),
            taken: Count::Few,
            share: None,
        };
        assert_eq!(flow_width(&few), 2.0);
    }

    #[test]
    fn the_panel_says_the_numbers_in_words() {
        let i = check();
        assert_eq!(i.summary, "30 runs: abandoned 24, active 6");
        assert_eq!(
            i.win,
            "Wins: 0 of 24 ended runs, 0% observed; the model predicts 40% at the levels the runs started at (1)."
        );
        assert_eq!(
            i.forks,
            ["At C.FORK (met by 6): C.HALL 6 (100%), C.BOSS 0 (0%)"]
        );
        assert_eq!(
            i.locks[0].words,
            "C.FORK → C.BOSS (Perception check): passed 0 of 6 (0%); the model predicts 55% (95% interval 15%–95%). Play disagrees with the model."
        );
        assert!(i.locks[0].flagged);
        assert_eq!(i.routes, ["24 runs (100%), 0 won: C.ENTRY → C.CORRIDOR"]);
    }

    #[test]
    fn counts_under_five_stay_hidden_when_summed() {
        assert_eq!(Count::N(0).add(Count::Few), Count::Few);
        assert_eq!(Count::N(7).add(Count::Few), Count::N(7));
        assert_eq!(Count::N(7).add(Count::N(5)), Count::N(12));
        assert_eq!(share(Count::N(3), Count::N(4)), None, "under 5 runs");
    }

    #[test]
    fn refusals_say_what_and_where() {
        let url = url("http://h:1/", "crypt");
        assert_eq!(url, "http://h:1/api/zones/crypt/insight");
        assert_eq!(
            error_words(403, r#"{"error":"publish scope needed"}"#, &url, "crypt"),
            "Insight not loaded from http://h:1/api/zones/crypt/insight: this token may not read insight: it needs the publish or admin scope (zonegraph token new --scope publish) (publish scope needed)."
        );
        assert!(error_words(404, "", &url, "crypt").contains("serves no zone crypt"));
        assert!(error_words(401, "", &url, "crypt").contains("did not take that token"));
        assert!(read("<html>", &[], |s| s.to_string()).is_err());
    }

    #[test]
    fn the_layer_draws_reach_bands_drop_offs_and_flagged_locks_over_the_map() {
        let file = zonegraph_core::format::parse(include_str!("../../../zones/crypt_valdris.json"))
            .expect("the crypt");
        let l = crate::doc::generated("crypt", &file);
        let m = crate::model::build(&l.zone, &l.layout, None);
        let passages: Vec<(String, String)> = file
            .edges
            .iter()
            .flatten()
            .map(|e| (e.from_node.clone(), e.to_node.clone()))
            .collect();
        let answer = ANSWER
            .replace("c.entry", "crypt_valdris.entry")
            .replace("c.corridor", "crypt_valdris.corridor")
            .replace("c.fork", "crypt_valdris.fork")
            .replace("c.hall", "crypt_valdris.main_hall")
            .replace("c.boss", "crypt_valdris.side_chapel");
        let i = read(&answer, &passages, |id| id.to_string()).expect("read");
        let svg = svg(&m, &i);
        assert_eq!(svg.matches("<g class=\"reach").count(), 5, "{svg}");
        assert_eq!(svg.matches("reach drop-off").count(), 1, "{svg}");
        assert!(svg.contains("reached 100% · ⚑ 24 ended here"), "{svg}");
        assert!(svg.contains("reached < 5 runs"), "{svg}");
        // entry → corridor, corridor → fork, fork → main hall: the passages runs took.
        assert_eq!(svg.matches("class=\"flow\"").count(), 3, "{svg}");
        assert!(svg.contains("stroke-width=\"17\""), "{svg}");
        // The fork's lock to the side chapel: play disagrees with the model.
        assert_eq!(svg.matches("⚠ play ≠ model").count(), 1, "{svg}");
    }
}
