//! Play insight (`zonegraph_core::insight`) against a history the test knows: 10,000 runs of
//! two versions of the Crypt of Valdris played through the bot's one command pipeline by
//! synthetic players with known characters and choices. The test tallies what it saw from
//! the events the pipeline answered with (not from the stored runs insight reads) and checks
//! every figure of the insight against its own counts; a lock made harder in play than the
//! rules (a host game refusing some passes) is flagged, and the untouched ones are not.

use std::collections::BTreeMap;

use zonegraph_core::Zone;
use zonegraph_core::bot::{self, Context, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{Character, Event, ExitState, Outcome, Run};
use zonegraph_core::format::LockKind;
use zonegraph_core::insight::{Count, Insight, insight};
use zonegraph_core::zone;

use crate::support::zone_text;

/// What the test saw of one version's runs.
#[derive(Debug, Default)]
struct Seen {
    runs: u64,
    reached: BTreeMap<String, u64>,
    /// Room where each run stands or ended → outcome name → runs.
    ended: BTreeMap<(String, &'static str), u64>,
    /// (fork, way) → taken.
    taken: BTreeMap<(String, String), u64>,
    /// (from, to) of a locked way at a fork → (met, passed).
    locks: BTreeMap<(String, String), (u64, u64)>,
    won: u64,
    ended_runs: u64,
}

/// The outcome names insight's JSON uses, as [`outcome_name`] gives them.
const OUTCOMES: [&str; 7] = [
    "won",
    "lost",
    "fled",
    "abandoned",
    "dead_end",
    "stranded",
    "active",
];

fn outcome_name(run: &Run) -> &'static str {
    match run.outcome {
        Some(Outcome::Victory) => "won",
        Some(Outcome::Defeat) => "lost",
        Some(Outcome::Fled) => "fled",
        Some(Outcome::Abandoned) => "abandoned",
        Some(Outcome::DeadEnd) => "dead_end",
        None if run
            .pending_fork
            .as_ref()
            .is_some_and(|f| f.options.iter().all(|o| !o.open)) =>
        {
            "stranded"
        }
        None => "active",
    }
}

/// Plays `n` runs of `zone`, player `i` with level `1 + i % 4` and Wisdom from 8 to 18; at a
/// fork an even player takes the first open way, an odd one the last; a player with no open
/// way abandons when `i % 3 == 0`, else stays (stranded). Returns the stored runs.
fn play(zone: &Zone, version: &str, n: usize, seen: &mut Seen) -> Vec<Run> {
    let zones = std::slice::from_ref(zone);
    let mut runs = Vec::with_capacity(n);
    for i in 0..n {
        let mut character = Character::standard(1 + (i % 4) as u32);
        character.scores[4] = 8 + (i % 11) as i32;
        let mut player = Player {
            character,
            run: None,
        };
        let cx = |t: i64| Context {
            now: 1_700_000_000_000 + t,
            new_run_id: format!("{version}-{i}"),
            run_link: None,
            fork_timeout_ms: i64::MAX,
            syntax: Syntax::Chat,
            authority: bot::Authority::Player,
        };
        let mut text = format!("!zone enter {}", zone.id);
        for step in 0..60 {
            let r = bot::handle(zones, &mut player, &text, &cx(step));
            for e in &r.events {
                match e {
                    Event::Arrived { node, .. } => {
                        *seen.reached.entry(node.0.clone()).or_default() += 1;
                    }
                    Event::ForkOffered { at, options, .. } => {
                        for o in options.iter().filter(|o| o.lock != LockKind::None) {
                            let run = player.run.as_ref().expect("a run");
                            let fork = run.pending_fork.as_ref().expect("the fork");
                            let to = &fork.options[o.number - 1].to_node;
                            let t = seen.locks.entry((at.0.clone(), to.0.clone())).or_default();
                            t.0 += 1;
                            t.1 += u64::from(o.state == ExitState::Open);
                        }
                    }
                    _ => {}
                }
            }
            let run = player.run.as_ref().expect("a run");
            if run.is_over() {
                break;
            }
            text = if run.encounter.is_some() {
                "!zone fight".into()
            } else if let Some(fork) = &run.pending_fork {
                let open: Vec<usize> = (0..fork.options.len())
                    .filter(|&k| fork.options[k].open)
                    .collect();
                match (open.first(), open.last()) {
                    (Some(&first), Some(&last)) => {
                        let k = if i % 2 == 0 { first } else { last };
                        *seen
                            .taken
                            .entry((fork.at.0.clone(), fork.options[k].to_node.0.clone()))
                            .or_default() += 1;
                        format!("!zone go {}", k + 1)
                    }
                    _ if i % 3 == 0 => "!zone abandon".into(),
                    _ => break,
                }
            } else {
                "!zone advance".into()
            };
        }
        let run = player.run.expect("a run");
        seen.runs += 1;
        let name = outcome_name(&run);
        *seen
            .ended
            .entry((run.current_node.0.clone(), name))
            .or_default() += 1;
        if run.is_over() {
            seen.ended_runs += 1;
            seen.won += u64::from(name == "won");
        }
        runs.push(run);
    }
    runs
}

fn count(n: u64) -> Count {
    Count(n)
}

fn check(i: &Insight, seen: &Seen) {
    assert_eq!(i.runs, count(seen.runs));
    let by = |o: &zonegraph_core::insight::Outcomes, name: &str| match name {
        "won" => o.won,
        "lost" => o.lost,
        "fled" => o.fled,
        "abandoned" => o.abandoned,
        "dead_end" => o.dead_end,
        "stranded" => o.stranded,
        _ => o.active,
    };
    for name in OUTCOMES {
        let total: u64 = seen
            .ended
            .iter()
            .filter(|((_, n), _)| *n == name)
            .map(|(_, c)| c)
            .sum();
        assert_eq!(by(&i.outcomes, name), count(total), "{name}");
    }
    for room in &i.rooms {
        assert_eq!(
            room.reached,
            count(seen.reached.get(&room.id).copied().unwrap_or(0)),
            "reached {}",
            room.id
        );
        for name in OUTCOMES {
            let want = seen
                .ended
                .get(&(room.id.clone(), name))
                .copied()
                .unwrap_or(0);
            assert_eq!(
                by(&room.ended_here, name),
                count(want),
                "{} {name}",
                room.id
            );
        }
    }
    let mut ways = 0;
    for fork in &i.forks {
        for way in &fork.ways {
            let want = seen
                .taken
                .get(&(fork.at.clone(), way.to.clone()))
                .copied()
                .unwrap_or(0);
            assert_eq!(way.taken, count(want), "{} -> {}", fork.at, way.to);
            ways += want;
        }
    }
    assert_eq!(
        ways,
        seen.taken.values().sum::<u64>(),
        "every choice is in a fork"
    );
    for ((from, to), (met, passed)) in &seen.locks {
        let l = i
            .locks
            .iter()
            .find(|l| &l.from == from && &l.to == to)
            .unwrap_or_else(|| panic!("no lock {from} -> {to} in the insight"));
        assert_eq!(
            (l.met, l.passed),
            (count(*met), count(*passed)),
            "{from} -> {to}"
        );
    }
    assert_eq!(i.win.won, count(seen.won));
    assert_eq!(i.win.ended, count(seen.ended_runs));
    let routes: u64 = i.routes.iter().map(|r| r.runs.0).sum();
    assert_eq!(routes, seen.ended_runs, "every ended run is on one route");
    assert_eq!(i.win.levels, [1, 2, 3, 4]);
    assert!(i.win.predicted.is_some(), "the crypt is modelled");
}

#[test]
fn insight_counts_what_ten_thousand_runs_on_two_versions_did() {
    let v1_text = zone_text("crypt_valdris");
    // Version 2: the chapel's Perception lock is harder (DC 12 -> 16).
    let v2_text = v1_text.replacen("\"dc\": 12", "\"dc\": 16", 1);
    assert_ne!(v1_text, v2_text, "the crypt's chapel lock has DC 12");
    let (v1, _) = zone::load(&v1_text).expect("v1");
    let (v2, _) = zone::load(&v2_text).expect("v2");
    let (mut s1, mut s2) = (Seen::default(), Seen::default());
    let runs1 = play(&v1, "v1", 6_000, &mut s1);
    let runs2 = play(&v2, "v2", 4_000, &mut s2);
    let (i1, i2) = (insight(&v1, &runs1), insight(&v2, &runs2));
    check(&i1, &s1);
    check(&i2, &s2);
    // The dice are the rules': no lock of either version disagrees with the model.
    for l in i1.locks.iter().chain(&i2.locks) {
        assert!(!l.flagged, "{l:?}");
    }
    let chapel = |i: &Insight| {
        i.locks
            .iter()
            .find(|l| l.to == "crypt_valdris.side_chapel")
            .cloned()
            .expect("the chapel lock was met")
    };
    // The harder DC shows in play and in the model alike.
    let (c1, c2) = (chapel(&i1), chapel(&i2));
    assert!(
        c2.observed < c1.observed && c2.predicted < c1.predicted,
        "{c1:?} {c2:?}"
    );

    // In play harder than in the model: a host game that refuses every other pass of the
    // chapel's lock. The model still predicts the rules' chance; the observation is flagged.
    let mut harsher = runs1.clone();
    let mut refused = 0;
    for run in &mut harsher {
        for met in run.forks_met.iter_mut() {
            for o in met.options.iter_mut() {
                if o.to_node.0 == "crypt_valdris.side_chapel" && o.open {
                    refused += 1;
                    if refused % 2 == 0 {
                        o.open = false;
                    }
                }
            }
        }
    }
    let h = chapel(&insight(&v1, &harsher));
    assert!(h.flagged, "{h:?}");
    assert_eq!(h.predicted, c1.predicted);

    // Forks the timeout decided: every seventh run's fork, counted on the fork's room and on
    // the way it took.
    let mut idle = runs1.clone();
    let mut picked = 0u64;
    for (k, run) in idle.iter_mut().enumerate() {
        if k % 7 == 0
            && let Some(met) = run
                .forks_met
                .iter_mut()
                .find(|m| m.at.0 == "crypt_valdris.fork")
        {
            met.picked = true;
            picked += 1;
        }
    }
    let i = insight(&v1, &idle);
    let fork = |i: &Insight| {
        i.rooms
            .iter()
            .find(|r| r.id == "crypt_valdris.fork")
            .cloned()
            .expect("the fork")
    };
    assert!(picked > 500, "{picked}");
    assert_eq!(fork(&i).timed_out, count(picked));
    assert_eq!(fork(&i1).timed_out, count(0));
    let ways_picked: u64 = i.forks[0].ways.iter().map(|w| w.picked.0).sum();
    assert_eq!(ways_picked, picked);
}

#[test]
fn small_cells_are_hidden_and_no_player_is_named() {
    let (v1, _) = zone::load(&zone_text("crypt_valdris")).expect("v1");
    let mut seen = Seen::default();
    let runs = play(&v1, "few", 3, &mut seen);
    let i = insight(&v1, &runs);
    let json = serde_json::to_value(&i).expect("JSON");
    assert_eq!(json["runs"], "hidden");
    assert!(json["win"]["observed"].is_null());
    assert!(
        json["routes"]
            .as_array()
            .expect("routes")
            .iter()
            .all(|r| r["share"].is_null() && r["runs"] == "hidden")
    );
    let text = json.to_string();
    assert!(!text.contains("few-"), "a run id is in the insight");
}

/// The crypt with both ways out of the side chapel under a key nobody holds: a route the
/// runs took is now stranded there.
fn chapel_sealed(v1_text: &str) -> String {
    let mut file: serde_json::Value = serde_json::from_str(v1_text).expect("JSON");
    for e in file["edges"].as_array_mut().expect("edges") {
        if e["from_node"] == "crypt_valdris.side_chapel" {
            e["lock_kind"] = "key_required".into();
            e["lock_data"] = serde_json::json!({"key_id": "lost_sigil"});
        }
    }
    serde_json::to_string(&file).expect("JSON")
}

#[test]
fn replay_on_a_version_that_strands_a_route_counts_the_runs_it_strands() {
    use zonegraph_core::impact::impact;
    use zonegraph_core::insight::Standing;
    use zonegraph_core::review::review;

    let v1_text = zone_text("crypt_valdris");
    let v3_text = chapel_sealed(&v1_text);
    let (v1, _) = zone::load(&v1_text).expect("v1");
    let (v3, _) = zone::load(&v3_text).expect("v3");
    let mut seen = Seen::default();
    let runs = play(&v1, "r", 2_000, &mut seen);
    let parse = |t: &str| zonegraph_core::format::parse(t).expect("file");
    let i = impact(&parse(&v1_text), &parse(&v3_text));
    // The open way gains a lock; the secret way's Perception check becomes the key.
    assert_eq!(
        (i.changes.locks_added.len(), i.changes.locks_changed.len()),
        (1, 1),
        "{:?}",
        i.changes
    );
    let r = review(&v1, &v3, &i, &runs).replay;

    // What the test saw: every run that reached the chapel went on from it (it holds no
    // encounter), so each is stranded there now; the others play out as they did.
    let through_chapel = seen.reached["crypt_valdris.side_chapel"];
    assert!(
        through_chapel > 100 && through_chapel < 2_000,
        "{through_chapel}"
    );
    let won_through_chapel = runs
        .iter()
        .filter(|r| {
            r.outcome == Some(Outcome::Victory)
                && r.visited_nodes
                    .iter()
                    .any(|n| n.0 == "crypt_valdris.side_chapel")
        })
        .count() as u64;
    assert_eq!(r.runs, count(2_000));
    // The characters are known from the runs (level, and Wisdom from the fork's Perception
    // roll every run met), the encounters are the built-in rules': every run comes out as
    // stored on its own version.
    assert_eq!(r.not_reproduced, count(0), "{r:?}");
    assert_eq!(r.reproduced, count(2_000));
    assert_eq!(r.ended_differently, count(through_chapel));
    assert_eq!(r.now_stranded, count(through_chapel));
    assert_eq!(r.no_longer_won, count(won_through_chapel));
    assert_eq!(r.now_won, count(0));
    assert_eq!(r.unchanged, count(2_000 - through_chapel));
    assert_eq!(r.rerouted, count(0));
    let total: u64 = r.transitions.iter().map(|t| t.runs.0).sum();
    assert_eq!(total, through_chapel);
    assert!(
        r.transitions
            .iter()
            .all(|t| t.to == Some(Standing::Stranded))
    );
    assert_eq!(r.examples.len(), 3);
    for e in &r.examples {
        let after = e.after.as_ref().expect("let in");
        assert_eq!(after.standing, Standing::Stranded);
        assert_eq!(
            after.rooms.last().map(String::as_str),
            Some("crypt_valdris.side_chapel")
        );
        // Its way on from the chapel is locked now.
        assert_eq!(e.diverged_at.as_deref(), Some("crypt_valdris.side_chapel"));
        let stored = runs
            .iter()
            .find(|r| zonegraph_core::roll::reference(&r.run_id) == e.run)
            .expect("a run");
        assert_eq!(
            after.rooms,
            e.before.rooms[..after.rooms.len()],
            "{stored:?}"
        );
    }
    // Against its own version, nothing changes.
    let same = review(&v1, &v1, &impact(&parse(&v1_text), &parse(&v1_text)), &runs).replay;
    assert_eq!(same.unchanged, count(2_000));
    assert!(same.examples.is_empty() && same.transitions.is_empty());
    // The words say it.
    let words = zonegraph_core::review::words(3, &review(&v1, &v3, &i, &runs)).join("\n");
    assert!(
        words.contains(&format!("{through_chapel} now stranded")),
        "{words}"
    );
}

#[test]
fn a_fork_choice_whose_way_is_gone_diverges_to_the_first_open_way() {
    use zonegraph_core::impact::impact;
    use zonegraph_core::insight::Standing;
    use zonegraph_core::review::review;

    let v1_text = zone_text("crypt_valdris");
    // The chapel's secret way is gone: runs that took it take the antechamber instead.
    let mut file: serde_json::Value = serde_json::from_str(&v1_text).expect("JSON");
    file["edges"]
        .as_array_mut()
        .expect("edges")
        .retain(|e| e["to_node"] != "crypt_valdris.secret_chamber");
    file["nodes"]
        .as_array_mut()
        .expect("nodes")
        .retain(|n| n["node_id"] != "crypt_valdris.secret_chamber");
    let v2_text = serde_json::to_string(&file).expect("JSON");
    let (v1, _) = zone::load(&v1_text).expect("v1");
    let (v2, _) = zone::load(&v2_text).expect("v2");
    let mut seen = Seen::default();
    let runs = play(&v1, "d", 2_000, &mut seen);
    let parse = |t: &str| zonegraph_core::format::parse(t).expect("file");
    let i = impact(&parse(&v1_text), &parse(&v2_text));
    let r = review(&v1, &v2, &i, &runs).replay;
    let secret = seen
        .taken
        .get(&(
            "crypt_valdris.side_chapel".to_string(),
            "crypt_valdris.secret_chamber".to_string(),
        ))
        .copied()
        .unwrap_or(0);
    assert!(secret >= 5, "{secret}");
    // Same ending by other rooms, or another ending (the boss is the same roll, but the
    // secret room's XP is not there): every run through the secret room is touched.
    assert_eq!(r.not_reproduced, count(0), "{r:?}");
    assert_eq!(r.rerouted.0 + r.ended_differently.0, secret, "{r:?}");
    assert_eq!(r.unchanged, count(2_000 - secret));
    for e in &r.examples {
        assert_eq!(e.diverged_at.as_deref(), Some("crypt_valdris.side_chapel"));
        let after = e.after.as_ref().expect("let in");
        assert!(
            !after
                .rooms
                .iter()
                .any(|r| r == "crypt_valdris.secret_chamber")
        );
        assert_ne!(after.standing, Standing::Stranded);
    }
}
