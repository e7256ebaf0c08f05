//! Stored runs made fast, for the tests and benchmarks that need many: runs played through
//! the bot's command pipeline in memory, then stored with the server's own statements.

use anyhow::Result;
use zonegraph_core::bot::{self, Authority, Context, Player};
use zonegraph_core::command::Syntax;
use zonegraph_core::engine::{Character, Run};
use zonegraph_server::db::Database;

/// `n` runs of `zone`, ended or stopped after 60 commands more than four a room: players of
/// the zone's four lowest levels (1–4 in the Crypt), the even ones taking the first open way
/// at each fork, the odd ones the last; a fork with no open way is abandoned. Run `i` is
/// `bench-{i}`, started at a millisecond of its own.
pub fn played_runs(zone: &zonegraph_core::Zone, n: usize) -> Vec<Run> {
    let zones = std::slice::from_ref(zone);
    let most = 4 * zone.graph.node_count() + 60;
    (0..n)
        .map(|i| {
            let mut player = Player {
                character: Character::standard(
                    (zone.min_level + (i % 4) as u32).min(zone.max_level),
                ),
                run: None,
            };
            let cx = Context {
                now: 1_700_000_000_000 + i as i64,
                new_run_id: format!("bench-{i}"),
                run_link: None,
                fork_timeout_ms: i64::MAX,
                syntax: Syntax::Chat,
                authority: Authority::Player,
            };
            let mut text = format!("!zone enter {}", zone.id);
            for _ in 0..most {
                bot::handle(zones, &mut player, &text, &cx);
                let Some(run) = player.run.as_ref() else {
                    break;
                };
                if run.is_over() {
                    break;
                }
                text = if run.encounter.is_some() {
                    "!zone fight".into()
                } else if let Some(f) = &run.pending_fork {
                    let open: Vec<usize> = (0..f.options.len())
                        .filter(|&k| f.options[k].open)
                        .collect();
                    match if i % 2 == 0 {
                        open.first()
                    } else {
                        open.last()
                    } {
                        Some(k) => format!("!zone go {}", k + 1),
                        None => "!zone abandon".into(),
                    }
                } else {
                    "!zone advance".into()
                };
            }
            player.run.expect("a run")
        })
        .collect()
}

/// Stores `runs` as runs of version `seq` in `db`'s run table, each of a player of its own
/// (`@p{k}:bench`), 5,000 to a transaction.
pub fn store_runs(db: &Database, seq: i64, runs: &[Run]) -> Result<()> {
    for (c, chunk) in runs.chunks(5_000).enumerate() {
        let chunk = chunk.to_vec();
        db.write(
            move |tx| {
                for (i, run) in chunk.iter().enumerate() {
                    let k = c * 5_000 + i;
                    let st = tx.run_insert(
                        &format!("@p{k}:bench"),
                        run,
                        0,
                        Some(seq),
                        &format!("{k:032x}"),
                    )?;
                    tx.all_hold(&[st])?;
                }
                Ok(())
            },
            |_| true,
        )?;
    }
    Ok(())
}
