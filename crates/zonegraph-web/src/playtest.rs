//! A designer's playtest, pure (no browser): the bot's state for one player, the history for
//! step back and the transcript. Every line goes through the core's one command pipeline
//! ([`bot::handle`]), so a playtest says exactly what the chat bot says.

use zonegraph_core::Zone;
use zonegraph_core::bot::{self, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{self, Character, Run};

/// A playtest: the bot's state for one player, the history for step back, the transcript.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Playtest {
    pub player: Player,
    history: Vec<Player>,
    /// `(command as typed, the bot's reply text)`, oldest first.
    pub log: Vec<(String, String)>,
}

impl Playtest {
    /// A fresh playtest for this character: no run, nothing said yet.
    pub fn new(character: Character) -> Self {
        Self {
            player: Player {
                character,
                run: None,
            },
            ..Self::default()
        }
    }

    /// Runs one line of text through the bot's command pipeline ([`bot::handle`]), exactly
    /// as the chat bot would, in the loose syntax of a playtest box (`go 2`, `status`).
    pub fn command(&mut self, zone: &Zone, text: &str, run_id: &str) {
        self.history.push(self.player.clone());
        let cx = bot::Context {
            // The core takes the clock from its caller; steps keep playtests repeatable.
            now: 1_000 * (self.log.len() as i64 + 1),
            new_run_id: run_id.to_string(),
            run_link: None,
            // A playtest waits at a fork as long as the designer likes.
            fork_timeout_ms: i64::MAX,
            syntax: Syntax::Loose,
            authority: bot::Authority::Sandbox,
        };
        let out = bot::handle(std::slice::from_ref(zone), &mut self.player, text, &cx);
        let text_out: Vec<String> = out.replies.into_iter().map(|r| r.text).collect();
        self.log.push((text.to_string(), text_out.join("\n\n")));
    }

    /// Undoes the last command.
    pub fn step_back(&mut self) {
        if let Some(p) = self.history.pop() {
            self.player = p;
            self.log.pop();
        }
    }

    /// Whether there is a command to undo.
    pub fn can_step_back(&self) -> bool {
        !self.history.is_empty()
    }

    /// The player's run, once `!zone enter` has started one.
    pub fn run(&self) -> Option<&Run> {
        self.player.run.as_ref()
    }

    /// The run's status as the core reports it (phase, exits), when there is a run.
    pub fn status(&self, zone: &Zone) -> Option<engine::Status> {
        self.run()
            .map(|r| engine::status(zone, r, &self.player.character))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{doc, zones};

    #[test]
    fn playtest_speaks_like_the_bot_and_steps_back() {
        let (_, text) = zones::shipped("crypt_valdris").expect("shipped");
        let l = doc::load("c", text).expect("loads");
        let mut p = Playtest::new(Character::default());
        assert_eq!(p, Playtest::default());
        assert!(p.status(&l.zone).is_none() && !p.can_step_back());
        p.command(&l.zone, "!zone enter crypt_valdris", "t1");
        assert_eq!(p.run().map(|r| r.zone_id.as_str()), Some("crypt_valdris"));
        p.command(&l.zone, "advance", "t1");
        p.command(&l.zone, "advance", "t1");
        let at_fork = p.clone();
        assert!(p.log[2].1.contains("!zone go"), "{}", p.log[2].1);
        assert!(
            p.status(&l.zone)
                .is_some_and(|s| s.phase == engine::Phase::Fork)
        );
        p.command(&l.zone, "go 1", "t1");
        assert_ne!(p, at_fork);
        p.step_back();
        assert_eq!(p, at_fork);
        assert!(p.can_step_back());
        p.command(&l.zone, "dance", "t1");
        assert!(
            p.log
                .last()
                .is_some_and(|(_, r)| r.contains("Valid commands"))
        );
    }
}
