//! Runs through the shipped zones, played by text through the bot's own pipeline
//! ([`bot::handle`]): the fixed and seeded random scenarios the viewer's tests draw, the run
//! payload of `GET /api/runs/{token}` for each, and the strings a player's page must not
//! show for it. The one support module of the viewer's tests (native and in the browser);
//! nothing in the app calls it, so it adds nothing to the bundle.

use std::collections::BTreeSet;

use zonegraph_core::bot::{self, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{self, Character, PlayerView};
use zonegraph_core::zone;
use zonegraph_core::zone::{Lock, Zone};

use crate::zones;

/// One player's state after a scripted play.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// What it shows, for messages ("crypt: failed Perception at the fork").
    pub name: String,
    pub zone: Zone,
    pub player: Player,
}

impl Scenario {
    /// The player view of the scenario's run, from the core.
    pub fn view(&self) -> PlayerView {
        let run = self.player.run.as_ref().expect("a scenario has a run");
        engine::player_view(&self.zone, run, &self.player.character)
    }

    /// The body of `GET /api/runs/{token}` for this run, as the server writes it (the
    /// core's `payload::RunView`): the player view, laid out, and the chat's `!zone status`.
    pub fn payload(&self) -> String {
        let page = zonegraph_core::payload::RunView::of(self.view());
        serde_json::to_string(&page).expect("a run page is JSON")
    }
}

/// Every shipped zone, built.
pub fn shipped_zones() -> Vec<Zone> {
    zones::SHIPPED
        .iter()
        .filter_map(|(_, text)| zone::load(text).ok().map(|(z, _)| z))
        .collect()
}

/// Plays `commands` (loose syntax, as in a playtest box) in order for a player with
/// `character`, starting with `enter <zone_id>`; a run started gets the id `run_id`.
pub fn play(zone_id: &str, run_id: &str, character: Character, commands: &[&str]) -> Scenario {
    let zones = shipped_zones();
    let mut player = Player {
        character,
        run: None,
    };
    let enter = format!("enter {zone_id}");
    for (i, text) in std::iter::once(enter.as_str())
        .chain(commands.iter().copied())
        .enumerate()
    {
        let cx = context(run_id, i);
        bot::handle(&zones, &mut player, text, &cx);
    }
    let zone = zones
        .into_iter()
        .find(|z| z.id == zone_id)
        .expect("a shipped zone");
    Scenario {
        name: format!("{zone_id} {run_id}: {}", commands.join(", ")),
        zone,
        player,
    }
}

fn context(run_id: &str, step: usize) -> bot::Context {
    bot::Context {
        now: 1_000 * (step as i64 + 1),
        new_run_id: run_id.to_string(),
        run_link: None,
        fork_timeout_ms: i64::MAX,
        syntax: Syntax::Loose,
        authority: bot::Authority::Sandbox,
    }
}

fn wis(score: i32) -> Character {
    let mut c = Character::default();
    c.set_score(zonegraph_core::zone::Ability::Wis, score);
    c
}

/// The run id whose Perception roll at the Crypt's fork fails for a Wisdom 10 character
/// (its d20 is 10, against DC 12): the Side Chapel stays "something".
pub const CRYPT_FAILED: &str = "crypt-1";

/// The fixed scenarios: the Crypt at the fork after a failed Perception check (and after a
/// refused `go 2` revealed the roll), with its secret undiscovered and discovered, and every
/// shipped zone just entered, in its middle and at its end.
pub fn fixed() -> Vec<Scenario> {
    let mut out = vec![
        play(
            "crypt_valdris",
            CRYPT_FAILED,
            wis(10),
            &["advance", "advance"],
        ),
        play(
            "crypt_valdris",
            CRYPT_FAILED,
            wis(10),
            &["advance", "advance", "go 2"],
        ),
        play(
            "crypt_valdris",
            CRYPT_FAILED,
            wis(10),
            &["advance", "advance", "go 1", "advance", "advance"],
        ),
        // Wisdom 30: both Perception checks pass, so the Hidden Reliquary is found.
        play(
            "crypt_valdris",
            "crypt-found",
            wis(30),
            &["advance", "advance", "go 2", "advance", "go 2"],
        ),
    ];
    for z in shipped_zones() {
        for steps in [0, 3, 40] {
            let mut c = wis(12);
            c.level = z.min_level.max(1);
            let mut s = play_on(&z, &format!("{}-{steps}", z.id), c, steps, 1);
            s.name = format!("{}: {steps} steps, first open option", z.id);
            out.push(s);
        }
    }
    out
}

/// `count` seeded random plays: a random shipped zone, character and number of steps, a
/// random option at every fork (a locked one is refused, which reveals its roll).
pub fn random(seed: u64, count: usize) -> Vec<Scenario> {
    let zones = shipped_zones();
    let mut rng = Lcg(seed);
    (0..count)
        .map(|i| {
            let z = &zones[rng.below(zones.len())];
            let mut c = wis(3 + rng.below(18) as i32);
            // At least the zone's level, so the run starts.
            c.level = z.min_level.max(1 + rng.below(12) as u32);
            let steps = rng.below(25);
            let mut s = play_on(z, &format!("prop-{seed}-{i}"), c, steps, rng.next());
            s.name = format!("random {seed}/{i}: {} {steps} steps", z.id);
            s
        })
        .collect()
}

/// Enters `zone` and takes `steps` commands: `advance` in a room; at a fork option 1 when
/// `pick` is 1, else a pseudo-random option from `pick`'s stream, then the first open one
/// if that was refused.
fn play_on(zone: &Zone, run_id: &str, character: Character, steps: usize, pick: u64) -> Scenario {
    let zones = shipped_zones();
    let mut player = Player {
        character,
        run: None,
    };
    let mut rng = Lcg(pick);
    bot::handle(
        &zones,
        &mut player,
        &format!("enter {}", zone.id),
        &context(run_id, 0),
    );
    for step in 1..=steps {
        let Some(run) = player.active_run() else {
            break;
        };
        let text = match &run.pending_fork {
            Some(f) if pick == 1 => match f.options.iter().position(|o| o.open) {
                Some(i) => format!("go {}", i + 1),
                None => "status".to_string(),
            },
            Some(f) => {
                let n = 1 + rng.below(f.options.len().max(1));
                let tried = format!("go {n}");
                bot::handle(&zones, &mut player, &tried, &context(run_id, step));
                match player
                    .run
                    .as_ref()
                    .and_then(|r| r.pending_fork.as_ref())
                    .and_then(|f| f.options.iter().position(|o| o.open))
                {
                    // Refused, or every option barred: the roll is revealed either way.
                    Some(i) if rng.below(2) == 0 => format!("go {}", i + 1),
                    _ => "status".to_string(),
                }
            }
            None => "advance".to_string(),
        };
        bot::handle(&zones, &mut player, &text, &context(run_id, step));
    }
    Scenario {
        name: String::new(),
        zone: zone.clone(),
        player,
    }
}

/// A small deterministic generator (64-bit LCG, Knuth's constants): seeded plays need no
/// randomness crate.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// What the page of `view` must not show: every room id and label of `zone`, every key id,
/// and every "DC n" that the view does not hold, and every level badge ("Lv n").
pub fn forbidden(zone: &Zone, view: &PlayerView) -> BTreeSet<String> {
    let held = serde_json::to_string(view).unwrap_or_default();
    let revealed_dc: BTreeSet<u32> = view
        .status
        .exits
        .iter()
        .filter_map(|x| match x.revealed {
            Some(engine::LockReason::Perception { dc, .. })
            | Some(engine::LockReason::Stat { dc, .. }) => Some(dc),
            _ => None,
        })
        .collect();
    let mut out = BTreeSet::new();
    let mut unless_held = |s: &str| {
        if !s.trim().is_empty() && !held.contains(s) {
            out.insert(s.to_string());
        }
    };
    for ix in zone.graph.node_indices() {
        let n = zone.node(ix);
        unless_held(n.id.as_str());
        unless_held(&n.label);
        if let Some(key) = &n.content.grants_key {
            unless_held(key);
        }
    }
    let mut always = BTreeSet::new();
    for e in zone.graph.edge_indices() {
        match &zone.graph[e].lock {
            Lock::PerceptionCheck { dc } | Lock::StatCheck { dc, .. }
                if !revealed_dc.contains(dc) =>
            {
                always.insert(format!("DC {dc}"));
            }
            Lock::LevelMin { min_level } => {
                always.insert(format!("Lv {min_level}"));
            }
            Lock::KeyRequired { key_id } => unless_held(key_id),
            _ => {}
        }
    }
    out.extend(always);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use zonegraph_core::engine::{ExitState, Knowledge};

    #[test]
    fn the_crypt_scenario_fails_its_perception_check() {
        let s = &fixed()[0];
        let view = s.view();
        let exits = &view.status.exits;
        assert_eq!(exits.len(), 2, "{}", s.name);
        assert_eq!(exits[1].state, ExitState::Locked);
        assert_eq!(exits[1].label, None, "the Side Chapel is \"something\"");
        assert_eq!(view.rooms.len(), 7, "the Hidden Reliquary is absent");
        assert_eq!(view.rooms.iter().filter(|r| r.id.is_none()).count(), 1);
        let run = s.player.run.as_ref().expect("run");
        let k = engine::view::knowledge(&s.zone, run);
        assert!(k.contains(&Knowledge::Hidden) && k.contains(&Knowledge::Unknown));
        let bad = forbidden(&s.zone, &view);
        for s in [
            "crypt_valdris.side_chapel",
            "Side Chapel",
            "crypt_valdris.secret_chamber",
            "Hidden Reliquary",
            "DC 12",
            "DC 15",
        ] {
            assert!(bad.contains(s), "{s} is not forbidden: {bad:?}");
        }
        assert!(!bad.contains("Main Hall") && !bad.contains("crypt_valdris.fork"));
    }

    #[test]
    fn the_found_secret_is_on_the_map() {
        let s = &fixed()[3];
        let view = s.view();
        assert!(
            view.rooms
                .iter()
                .any(|r| r.label.as_deref() == Some("Hidden Reliquary") && r.current),
            "{}: {:?}",
            s.name,
            s.player.run
        );
    }

    #[test]
    fn random_plays_are_repeatable() {
        let a: Vec<_> = random(7, 5).into_iter().map(|s| s.player).collect();
        let b: Vec<_> = random(7, 5).into_iter().map(|s| s.player).collect();
        assert_eq!(a, b);
    }
}
