//! The editor's Insight layer, pure: what players did in the open zone, read from the
//! server's `GET /api/zones/{zone_id}/insight` answer (the core's `insight::Insight` with its
//! `version`), turned into what the map draws (each room's reach, each passage's share of the
//! runs, drop-off rooms, locks that contradict the model) and the side panel's sections, worded
//! by the core ([`insight::sections`]) as the command line words them.
//!
//! The answer is read by hand from a `serde_json::Value` into the core's types (deriving
//! `Deserialize` for them would cost the page's bundle more than this): a count is a number or
//! `"hidden"` (1 to 4 runs, or one a sum would give such a count back by: [`Count::HIDDEN`]),
//! a rate over a hidden count or under 5 runs is `null`, and both stay so here: nothing hidden
//! is guessed at.

use serde_json::Value;
use zonegraph_core::format::LockKind;
use zonegraph_core::insight::{
    self, Count, ForkInsight, LockInsight, Outcomes, RoomInsight, RouteInsight, WayInsight,
    WinInsight, share,
};

use crate::model::{BOX_H, BOX_W, MapModel, num, percent};

/// A room as the layer draws it.
#[derive(Clone, Debug, PartialEq)]
pub struct RoomReach {
    pub id: String,
    pub reached: Count,
    /// Runs that reached it ÷ runs; `None` under 5 runs or for a hidden count.
    pub reach: Option<f64>,
    /// Runs that ended here without winning (lost, fled, abandoned, dead end, stranded).
    pub dropped: Count,
    /// Many runs ended here without winning ([`RoomInsight::is_drop_off`]): marked on the map.
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

/// A locked passage some run met: whether play disagrees with the model there.
#[derive(Clone, Debug, PartialEq)]
pub struct LockSeen {
    pub from: String,
    pub to: String,
    pub flagged: bool,
}

/// One zone version's insight, ready to draw and to read.
#[derive(Clone, Debug, PartialEq)]
pub struct Insight {
    pub version: u64,
    pub runs: Count,
    pub rooms: Vec<RoomReach>,
    pub flows: Vec<Flow>,
    pub locks: Vec<LockSeen>,
    /// The panel: headed sections of sentences ([`insight::sections`]).
    pub sections: Vec<(String, Vec<String>)>,
}

/// A count as the server gives it: a number, or `"hidden"` (an older server's `"< 5"`,
/// 1 to 4 runs, reads as [`Count::FEW`]).
fn count(v: &Value) -> Count {
    match v.as_u64() {
        Some(n) => Count(n),
        None if v.as_str() == Some(insight::HIDDEN_WORD) => Count::HIDDEN,
        None if v.is_string() => Count::FEW,
        None => Count(0),
    }
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn outcomes(o: &Value) -> Outcomes {
    Outcomes {
        won: count(&o["won"]),
        lost: count(&o["lost"]),
        fled: count(&o["fled"]),
        abandoned: count(&o["abandoned"]),
        dead_end: count(&o["dead_end"]),
        stranded: count(&o["stranded"]),
        active: count(&o["active"]),
    }
}

/// The server's answer as the core's [`insight::Insight`], with its version.
// Not inlined into `read`: apart, the page's bundle is smaller.
#[inline(never)]
fn answer(body: &str) -> Result<(u64, insight::Insight), String> {
    let v: Value = serde_json::from_str(body)
        .map_err(|_| "the server's answer is not the insight JSON".to_string())?;
    if !v["rooms"].is_array() {
        return Err("the server's answer lists no rooms".into());
    }
    let rooms = list(&v["rooms"])
        .iter()
        .map(|r| RoomInsight {
            id: text(&r["id"]),
            reached: count(&r["reached"]),
            ended_here: outcomes(&r["ended_here"]),
            timed_out: count(&r["timed_out"]),
        })
        .collect();
    let forks = list(&v["forks"])
        .iter()
        .map(|f| ForkInsight {
            at: text(&f["at"]),
            met: count(&f["met"]),
            ways: list(&f["ways"])
                .iter()
                .map(|w| WayInsight {
                    to: text(&w["to"]),
                    taken: count(&w["taken"]),
                    picked: count(&w["picked"]),
                    share: w["share"].as_f64(),
                })
                .collect(),
        })
        .collect();
    let locks = list(&v["locks"])
        .iter()
        .map(|l| LockInsight {
            from: text(&l["from"]),
            to: text(&l["to"]),
            // By name rather than through serde: the Value deserialiser's enum path costs
            // the page's bundle.
            kind: LockKind::ALL
                .into_iter()
                .find(|k| l["kind"].as_str() == Some(k.as_str()))
                .unwrap_or(LockKind::None),
            met: count(&l["met"]),
            passed: count(&l["passed"]),
            observed: l["observed"].as_f64(),
            predicted: l["predicted"].as_f64(),
            interval: l["interval"][0]
                .as_f64()
                .zip(l["interval"][1].as_f64())
                .map(|(lo, hi)| [lo, hi]),
            flagged: l["flagged"].as_bool().unwrap_or(false),
        })
        .collect();
    let routes = list(&v["routes"])
        .iter()
        .map(|r| RouteInsight {
            rooms: list(&r["rooms"]).iter().map(text).collect(),
            runs: count(&r["runs"]),
            share: r["share"].as_f64(),
            won: count(&r["won"]),
        })
        .collect();
    let w = &v["win"];
    let win = WinInsight {
        ended: count(&w["ended"]),
        won: count(&w["won"]),
        observed: w["observed"].as_f64(),
        predicted: w["predicted"].as_f64(),
        levels: list(&w["levels"])
            .iter()
            .filter_map(|l| l.as_u64().and_then(|l| u32::try_from(l).ok()))
            .collect(),
    };
    let i = insight::Insight {
        zone_id: text(&v["zone_id"]),
        runs: count(&v["runs"]),
        outcomes: outcomes(&v["outcomes"]),
        rooms,
        forks,
        locks,
        routes,
        win,
    };
    Ok((v["version"].as_u64().unwrap_or(0), i))
}

/// Reads the server's answer; `name` gives a room's label (or its id) for the panel. The
/// passages' flows are computed for `passages` (from, to), the zone's passages as drawn.
pub fn read(
    body: &str,
    passages: &[(String, String)],
    name: impl Fn(&str) -> String,
) -> Result<Insight, String> {
    let (version, i) = answer(body)?;
    let runs = i.runs;
    let rooms = i
        .rooms
        .iter()
        .map(|r| RoomReach {
            id: r.id.clone(),
            reached: r.reached,
            reach: r.reach(runs),
            dropped: r.ended_here.dropped(),
            drop_off: r.is_drop_off(runs),
            timed_out: r.timed_out,
        })
        .collect();
    let flows = passages
        .iter()
        .map(|(from, to)| {
            let fork = i.forks.iter().find(|f| &f.at == from);
            let one_way_in = passages.iter().filter(|p| &p.1 == to).count() == 1;
            let into = i.rooms.iter().find(|r| &r.id == to);
            let taken = match (fork, into) {
                (Some(f), _) => f
                    .ways
                    .iter()
                    .find(|w| &w.to == to)
                    .map_or(Count(0), |w| w.taken),
                // Every run that reached a room with one way in took that way.
                (None, Some(r)) if one_way_in => r.reached,
                _ => i
                    .routes
                    .iter()
                    .filter(|r| r.rooms.windows(2).any(|p| &p[0] == from && &p[1] == to))
                    .fold(Count(0), |sum, r| sum.plus(r.runs)),
            };
            Flow {
                from: from.clone(),
                to: to.clone(),
                taken,
                share: share(taken, runs),
            }
        })
        .collect();
    let locks = i
        .locks
        .iter()
        .map(|l| LockSeen {
            from: l.from.clone(),
            to: l.to.clone(),
            flagged: l.flagged,
        })
        .collect();
    let version_number = i64::try_from(version).unwrap_or(i64::MAX);
    Ok(Insight {
        version,
        runs,
        rooms,
        flows,
        locks,
        sections: insight::sections(version_number, &i, &name),
    })
}

/// The opacity of a room's reach shading: none for a room no run reached (or when the share
/// is not known), strong for one every run reaches.
pub fn reach_opacity(reach: Option<f64>) -> f64 {
    reach.map_or(0.0, |r| 0.7 * r.clamp(0.0, 1.0))
}

/// The stroke width of a passage's flow: from 3 (a share near 0) to 17 (every run); 2 for a
/// passage a hidden count of runs took; none for one no run took.
pub fn flow_width(f: &Flow) -> f64 {
    match (f.taken, f.share) {
        (Count(0), _) => 0.0,
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
            (None, c) => format!("{c} runs"),
        };
        let drop = if r.drop_off {
            format!(" · ⚑ {} ended here", r.dropped)
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

    #[test]
    fn a_hidden_count_stays_hidden_and_an_older_servers_few_stays_few() {
        assert_eq!(count(&serde_json::json!("hidden")), Count::HIDDEN);
        assert_eq!(count(&serde_json::json!("< 5")), Count::FEW);
        assert_eq!(count(&serde_json::json!(7)), Count(7));
        assert_eq!(Count::HIDDEN.to_string(), "hidden");
    }

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
        read(ANSWER, &passages(), |id| id.to_ascii_uppercase()).expect("read")
    }

    #[test]
    fn rooms_are_shaded_by_reach_and_drop_offs_marked() {
        let i = check();
        assert_eq!((i.version, i.runs), (3, Count(30)));
        let corridor = &i.rooms[1];
        assert_eq!(corridor.reach, Some(1.0));
        assert!(corridor.drop_off, "24 of 30 abandoned there");
        let fork = &i.rooms[2];
        assert_eq!(fork.reach, Some(0.2));
        assert_eq!(fork.dropped, Count::FEW);
        assert!(!fork.drop_off, "a few runs are no drop-off");
        assert_eq!(fork.timed_out, Count::FEW);
        let hall = &i.rooms[3];
        assert_eq!((hall.reached, hall.reach), (Count::FEW, None));
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
                (Count(30), Some(1.0)),
                (Count(6), Some(0.2)),
                // From the fork's ways.
                (Count(6), Some(0.2)),
                (Count(0), Some(0.0)),
            ]
        );
        let widths: Vec<f64> = i.flows.iter().map(flow_width).collect();
        assert_eq!(widths, [17.0, 3.0 + 14.0 * 0.2, 3.0 + 14.0 * 0.2, 0.0]);
        // A room with two ways in and no fork before it: the ended runs' routes (a lower
        // bound).
        let mut two_in = passages();
        two_in.push(("c.boss".into(), "c.corridor".into()));
        let i = read(ANSWER, &two_in, |id| id.to_string()).expect("read");
        assert_eq!(i.flows[0].taken, Count(24));
        let few = Flow {
            from: "a".into(),
            to: "b".into(),
            taken: Count::FEW,
            share: None,
        };
        assert_eq!(flow_width(&few), 2.0);
    }

    #[test]
    fn the_panel_says_the_numbers_in_the_cores_words() {
        let i = check();
        let heads: Vec<&str> = i.sections.iter().map(|(h, _)| h.as_str()).collect();
        assert_eq!(
            heads,
            [
                "Version 3: 30 runs: abandoned 24, active 6",
                "Rooms: reach and endings",
                "Forks",
                "Locks, observed and predicted",
                "Routes"
            ]
        );
        let lines: Vec<&str> = i
            .sections
            .iter()
            .flat_map(|(_, l)| l)
            .map(String::as_str)
            .collect();
        assert_eq!(
            lines,
            [
                "Wins: 0 of 24 ended runs, 0% observed; the model predicts 40% at the levels the runs started at (1).",
                "C.ENTRY: reached by 30 of 30 (100%)",
                "C.CORRIDOR: reached by 30 of 30 (100%); 24 ended here without winning (abandoned 24) — a drop-off",
                "C.FORK: reached by 6 of 30 (20%); < 5 ended here without winning (lost < 5); the fork timeout chose the way on for < 5",
                "C.HALL: reached by < 5 of 30",
                "C.BOSS: reached by 0 of 30 (0%)",
                "At C.FORK (met by 6): C.HALL 6 (100%), C.BOSS 0 (0%)",
                "C.FORK → C.BOSS (Perception check): passed 0 of 6 (0%); the model predicts 55% (95% interval 15%–95%). Play disagrees with the model.",
                "24 runs (100%), 0 won: C.ENTRY → C.CORRIDOR",
            ]
        );
        assert!(i.locks[0].flagged);
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
