//! The difficulty model ([`zonegraph_core::difficulty`]) against the engine it models: a Monte
//! Carlo of real runs on random zones, and the `too_hard` / `too_easy` lints.

use proptest::prelude::*;
use zonegraph_core::difficulty::{self, Model, Policy};
use zonegraph_core::engine::{self, Character, Event, Outcome, Referee};
use zonegraph_core::format::{LockKind, RegionFile, ZoneFile};
use zonegraph_core::{Code, NodeKind, rules, synth, validate, zone};

const T0: i64 = 1_767_225_600_000;

/// A layered zone from [`synth::layered`], made harder to model: passages turned into stat,
/// level, key and region locks by `locks` (one byte per passage, cycled), a key granted by
/// the room `grant` picks, rooms in regions two layers deep, and the given tier and levels.
fn random_zone(
    rooms: usize,
    width: usize,
    seed: u64,
    locks: &[u8],
    grant: usize,
    tier: u8,
    min_level: u32,
) -> zone::Zone {
    let mut file: ZoneFile = synth::layered("mc", rooms, width, seed);
    file.tier = tier;
    file.min_level = min_level;
    file.max_level = min_level + 5;
    let nodes = file.nodes.as_mut().expect("synth writes nodes");
    let last_row = nodes.iter().filter_map(|n| n.pos_y).max().unwrap_or(0);
    for n in nodes.iter_mut() {
        n.region_id = format!("r{}", n.pos_y.unwrap_or(0) / 2);
    }
    file.regions = (0..=last_row / 2)
        .map(|r| RegionFile {
            region_id: format!("r{r}"),
            name: format!("Region {r}"),
            order: u32::try_from(r).expect("few regions") + 1,
        })
        .collect();
    let granted = grant % nodes.len();
    nodes[granted].content.grants_key = Some("gem".into());
    let edges = file.edges.as_mut().expect("synth writes edges");
    for (i, e) in edges.iter_mut().enumerate() {
        let b = locks[i % locks.len()];
        let mut set = |kind: LockKind, key: &str, value: serde_json::Value| {
            e.lock_kind = kind;
            e.lock_data.clear();
            e.lock_data.insert(key.into(), value);
            e.hint = "Something about it.".into();
        };
        match b % 12 {
            0 => {
                let ability = ["str", "dex", "con", "int", "wis", "cha"][usize::from(b / 12 % 6)];
                set(LockKind::StatCheck, "dc", (8 + u32::from(b % 11)).into());
                e.lock_data.insert("stat".into(), ability.into());
            }
            1 => set(
                LockKind::LevelMin,
                "min_level",
                (min_level + u32::from(b / 12 % 6)).into(),
            ),
            2 => set(LockKind::KeyRequired, "key_id", "gem".into()),
            3 => set(
                LockKind::RegionClear,
                "region_id",
                format!("r{}", b / 12 % 3).into(),
            ),
            _ => {}
        }
    }
    let (zone, diags) = zone::build(&file);
    assert!(diags.is_empty(), "{diags:?}");
    zone
}

/// What `runs` runs of the real engine give, with `level` and the standard array, taking at
/// each fork the option `model` picks: (victories / runs, mean wounds, standard deviation of
/// the wounds). The character's level stays as it is: the model's assumption (the bot would
/// add the XP and level up between commands).
fn monte_carlo(zone: &zone::Zone, model: &Model, level: u32, runs: usize) -> (f64, f64, f64) {
    let character = Character {
        level,
        ..Character::starting(rules::STARTING_SCORES)
    };
    let (mut wins, mut sum, mut sum_sq) = (0usize, 0.0, 0.0);
    for i in 0..runs {
        let (mut run, _) =
            engine::start(zone, &format!("mc-{i}"), &character, T0).expect("the run starts");
        let mut wounds = 0u32;
        for _ in 0..10_000 {
            if run.is_over() {
                break;
            }
            let events = if engine::pending_encounter(zone, &run).is_some() {
                engine::fight(zone, &mut run, &character, Referee::BuiltIn, T0)
            } else if run.pending_fork.is_some() {
                // No open option: the run waits for ever, a loss.
                let Some(n) = model.pick(zone, &run) else {
                    break;
                };
                engine::choose(zone, &mut run, &character, &n.to_string(), T0)
            } else {
                engine::advance(zone, &mut run, &character, T0)
            }
            .expect("the engine accepts the step");
            let lost = events
                .iter()
                .filter(|e| matches!(e, Event::Wounded { .. }))
                .count();
            wounds += u32::try_from(lost).expect("few wounds");
        }
        wins += usize::from(run.outcome == Some(Outcome::Victory));
        sum += f64::from(wounds);
        sum_sq += f64::from(wounds) * f64::from(wounds);
    }
    let n = runs as f64;
    let mean = sum / n;
    let var = (sum_sq / n - mean * mean).max(0.0);
    (wins as f64 / n, mean, var.sqrt())
}

/// Runs per zone and level.
const RUNS: usize = 1_500;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// The exact figures agree with the engine's outcomes on random zones.
    ///
    /// Tolerance: 5 standard errors of the sample mean (win chance: sqrt(p(1 − p) / RUNS), at
    /// most 0.013; wounds: the sample deviation / sqrt(RUNS)), plus 0.002 for the d20's slight
    /// non-uniformity (65536 mod 20 ≠ 0) and the sample deviation's own error. A correct
    /// model then fails one comparison with probability about 6e-7 (48 of them per run of
    /// this test); a wrong rule (no healing, no repeated fights, the wrong DC) moves a figure
    /// by far more on most zones.
    #[test]
    fn the_model_matches_a_monte_carlo_of_the_engine(
        rooms in 4usize..18,
        width in 1usize..4,
        seed in any::<u64>(),
        locks in proptest::collection::vec(any::<u8>(), 1..24),
        grant in any::<usize>(),
        tier in 1u8..6,
        min_level in 1u32..10,
    ) {
        let zone = random_zone(rooms, width, seed, &locks, grant, tier, min_level);
        for level in [zone.min_level, zone.max_level] {
            let model = Model::new(&zone, level, Policy::Best).expect("synthetic zones are modelled");
            let exact = model.start();
            let (win, wounds, sd) = monte_carlo(&zone, &model, level, RUNS);
            let n = RUNS as f64;
            let win_tol = 5.0 * (exact.win * (1.0 - exact.win) / n).sqrt() + 0.002;
            let wounds_tol = 5.0 * sd / n.sqrt() + 0.002;
            prop_assert!(
                (win - exact.win).abs() <= win_tol,
                "level {level}: win {win} by the engine, {} by the model (± {win_tol})",
                exact.win
            );
            prop_assert!(
                (wounds - exact.wounds).abs() <= wounds_tol,
                "level {level}: wounds {wounds} by the engine, {} by the model (± {wounds_tol})",
                exact.wounds
            );
        }
    }
}

/// `render`-like: the codes and messages of the difficulty lints of `file` checked alone.
fn difficulty_findings(file: &ZoneFile) -> Vec<String> {
    let text = serde_json::to_string(file).expect("a zone file serialises");
    let checked = validate::check_sources(&[("t.json".to_string(), text)]);
    checked[0]
        .diagnostics
        .iter()
        .filter(|d| matches!(d.code, Code::TooHard | Code::TooEasy))
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect()
}

#[test]
fn too_hard_and_too_easy_name_the_level_and_the_figure() {
    // A straight line entry → boss: one boss fight.
    let mut file = synth::layered("line", 2, 1, 1);
    // Tier 5, level 1: the boss (DC 17, +2) is won on 15+ (30 %): 1 − 0.7³ = 65.7 %.
    file.tier = 5;
    file.min_level = 1;
    file.max_level = 1;
    assert_eq!(difficulty_findings(&file), Vec::<String>::new());
    // Tier 9: DC 21, won on 19+ (10 %): 1 − 0.9³ = 27.1 %; tier 10: 5 %, 14.3 %.
    file.tier = 10;
    assert_eq!(
        difficulty_findings(&file),
        [
            "too_hard: a level 1 character beats the boss 14.3 % of the time on the best route \
          (too_hard below 25 %); lower the tier, ease the route or raise min_level"
        ]
    );
    // Tier 1, level 20: DC 13, +12: never lost.
    file.tier = 1;
    file.min_level = 20;
    file.max_level = 20;
    assert_eq!(
        difficulty_findings(&file),
        [
            "too_easy: a level 20 character loses 0.0 % of the time even on the worst route \
          (too_easy below 1 %), so no fork matters; raise the tier or lower max_level"
        ]
    );
    // Level 6 (+5 against DC 13, won on 8+: 65 %): loses 0.35³ = 4.3 %.
    file.min_level = 6;
    file.max_level = 6;
    assert_eq!(difficulty_findings(&file), Vec::<String>::new());
}

#[test]
fn too_easy_needs_every_route_to_be_safe() {
    // Level 20 at tier 1 wins every boss fight; synth's layered zones always keep an open way
    // on, so every route is safe: too_easy.
    let mut file = synth::layered("fork", 8, 2, 7);
    file.tier = 1;
    file.min_level = 20;
    file.max_level = 20;
    // Traps and elites do not get easier with levels (DEX, STR or DEX only): explorations.
    for n in file.nodes.as_mut().expect("nodes") {
        if matches!(n.kind, NodeKind::Trap | NodeKind::Elite) {
            n.kind = NodeKind::Exploration;
        }
    }
    let easy = difficulty_findings(&file);
    assert_eq!(easy.len(), 1, "{easy:?}");
    assert!(easy[0].starts_with("too_easy: a level 20 character loses 0.0 %"));
    // A dead-end side room behind a fork makes one route a sure loss: not too easy.
    let nodes = file.nodes.as_mut().expect("nodes");
    nodes.push(zonegraph_core::format::NodeFile::plain(
        "fork.pit",
        NodeKind::Exploration,
        "Pit",
        5,
        1,
    ));
    let edges = file.edges.as_mut().expect("edges");
    edges.push(zonegraph_core::format::EdgeFile::open(
        "fork.entry",
        "fork.pit",
    ));
    assert_eq!(difficulty_findings(&file), Vec::<String>::new());
    let z = zone::build(&file).0;
    let d = difficulty::difficulty(&z).expect("modelled");
    assert_eq!(d.max_level.win_chance, 1.0);
    let worst = Model::new(&z, 20, Policy::Worst).expect("modelled").start();
    assert_eq!(worst.win, 0.0);
}
