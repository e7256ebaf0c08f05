//! `zonegraph play`: the bot's engine on stdin/stdout, interactive or piped.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use zonegraph_core::bot::{self, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{self, Character};
use zonegraph_core::{Ability, chat, rules};

use crate::zones;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A zone id found in --zones, or a zone file's path.
    zone: String,
    /// Directory of zone files.
    #[arg(long, default_value = "zones")]
    zones: PathBuf,
    /// Run id: it decides every roll, so the same id and input replay exactly.
    #[arg(long, default_value = "play")]
    run_id: String,
    /// Character level [default: the zone's min_level].
    #[arg(long, value_parser = clap::value_parser!(u32).range(i64::from(*rules::LEVEL_RANGE.start())..=i64::from(*rules::LEVEL_RANGE.end())))]
    level: Option<u32>,
    /// Scores default to the standard ones a new player gets (15 14 13 12 10 8), as the
    /// difficulty figures of `zonegraph check --stats` assume.
    #[arg(long = "str", value_parser = score)]
    strength: Option<i32>,
    #[arg(long = "dex", value_parser = score)]
    dexterity: Option<i32>,
    #[arg(long = "con", value_parser = score)]
    constitution: Option<i32>,
    #[arg(long = "int", value_parser = score)]
    intelligence: Option<i32>,
    #[arg(long = "wis", value_parser = score)]
    wisdom: Option<i32>,
    #[arg(long = "cha", value_parser = score)]
    charisma: Option<i32>,
    /// A key the character holds (repeat for more).
    #[arg(long = "key")]
    keys: Vec<String>,
}

fn score(s: &str) -> Result<i32, String> {
    let n: i32 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number"))?;
    if rules::SCORE_RANGE.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "ability scores are {}-{}",
            rules::SCORE_RANGE.start(),
            rules::SCORE_RANGE.end()
        ))
    }
}

/// Plays on the process's stdin and stdout.
pub fn run(args: &Args) -> Result<ExitCode> {
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    session(
        args,
        stdin.lock(),
        &mut std::io::stdout().lock(),
        interactive,
    )
}

/// Plays reading commands from `input` and writing replies to `out`. Piped input is echoed
/// (`> go 2`) so a transcript reads like the chat.
pub fn session(
    args: &Args,
    input: impl BufRead,
    out: &mut impl Write,
    interactive: bool,
) -> Result<ExitCode> {
    let loaded = zones::load_for_play(&args.zone, &args.zones)?;
    let min_level = loaded
        .zones
        .iter()
        .find(|z| z.id == loaded.chosen)
        .map_or(1, |z| z.min_level);
    let mut character = Character::standard(args.level.unwrap_or(min_level));
    for (ability, value) in [
        (Ability::Str, args.strength),
        (Ability::Dex, args.dexterity),
        (Ability::Con, args.constitution),
        (Ability::Int, args.intelligence),
        (Ability::Wis, args.wisdom),
        (Ability::Cha, args.charisma),
    ] {
        if let Some(value) = value {
            character.set_score(ability, value);
        }
    }
    for k in &args.keys {
        character.add_key(k);
    }
    let mut player = Player {
        character,
        run: None,
    };

    let zone_id = loaded.chosen.clone();
    writeln!(
        out,
        "zonegraph play — run id {:?}. Commands as in chat (`help` lists them; `quit` leaves).",
        args.run_id
    )?;
    let enter = format!("!zone enter {zone_id}");
    say(
        out,
        &bot::handle(&loaded.zones, &mut player, &enter, &context(&args.run_id)).replies,
    )?;

    let mut lines = input.lines();
    loop {
        if interactive {
            write!(out, "> ")?;
            out.flush()?;
        }
        let Some(line) = lines.next() else { break };
        let line = line.context("cannot read the command")?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if !interactive {
            // Echo piped commands so the transcript reads like the chat.
            writeln!(out, "> {text}")?;
        }
        if matches!(text.to_lowercase().as_str(), "quit" | "exit" | "q") {
            break;
        }
        let response = bot::handle(&loaded.zones, &mut player, text, &context(&args.run_id));
        say(out, &response.replies)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn context(run_id: &str) -> bot::Context {
    bot::Context {
        now: crate::clock::now_ms(),
        new_run_id: run_id.to_string(),
        run_link: None,
        fork_timeout_ms: engine::DEFAULT_FORK_TIMEOUT_MS,
        syntax: Syntax::Loose,
        authority: bot::Authority::Sandbox,
    }
}

fn say(out: &mut impl Write, replies: &[chat::Reply]) -> Result<()> {
    for r in replies {
        writeln!(out, "{}", r.text)?;
    }
    writeln!(out)?;
    Ok(())
}
