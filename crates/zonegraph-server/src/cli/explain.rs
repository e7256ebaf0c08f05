//! `zonegraph explain CODE`: what a finding's code means, an example and the fix, as
//! `rustc --explain` does.
//!
//! The words live only in `docs/codes/<code>.md` (one page per code, and `README.md`, the
//! index), compiled in: a page that is missing fails the build, and so does a new [`Code`]
//! without a page.

use std::process::ExitCode;

use anyhow::{Result, bail};
use zonegraph_core::Code;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A finding's code as `zonegraph check` prints it (`soft_lock`; `soft-lock` works too).
    /// Without one, the index of all codes.
    code: Option<String>,
}

/// The page of `docs/codes/` for `code`: a `# code (severity)` title, what it means, an
/// `## Example` zone with what `zonegraph check` prints for it, and the `## Fix`.
pub fn explanation(code: Code) -> &'static str {
    match code {
        Code::NoNodes => include_str!("../../../../docs/codes/no_nodes.md"),
        Code::EntryCount => include_str!("../../../../docs/codes/entry_count.md"),
        Code::BossCount => include_str!("../../../../docs/codes/boss_count.md"),
        Code::DuplicateNode => include_str!("../../../../docs/codes/duplicate_node.md"),
        Code::UnknownNode => include_str!("../../../../docs/codes/unknown_node.md"),
        Code::SelfLoop => include_str!("../../../../docs/codes/self_loop.md"),
        Code::OrphanNode => include_str!("../../../../docs/codes/orphan_node.md"),
        Code::BossUnreachable => include_str!("../../../../docs/codes/boss_unreachable.md"),
        Code::Cycle => include_str!("../../../../docs/codes/cycle.md"),
        Code::BadLockData => include_str!("../../../../docs/codes/bad_lock_data.md"),
        Code::UnknownRegion => include_str!("../../../../docs/codes/unknown_region.md"),
        Code::KindFlagMismatch => include_str!("../../../../docs/codes/kind_flag_mismatch.md"),
        Code::ExtraTooLarge => include_str!("../../../../docs/codes/extra_too_large.md"),
        Code::TooFewForks => include_str!("../../../../docs/codes/too_few_forks.md"),
        Code::SecretLootBias => include_str!("../../../../docs/codes/secret_loot_bias.md"),
        Code::MissingHint => include_str!("../../../../docs/codes/missing_hint.md"),
        Code::SoftLock => include_str!("../../../../docs/codes/soft_lock.md"),
        Code::DeadEnd => include_str!("../../../../docs/codes/dead_end.md"),
        Code::KeyNeverGranted => include_str!("../../../../docs/codes/key_never_granted.md"),
        Code::LevelAboveZone => include_str!("../../../../docs/codes/level_above_zone.md"),
        Code::ImpossibleDc => include_str!("../../../../docs/codes/impossible_dc.md"),
        Code::TrivialDc => include_str!("../../../../docs/codes/trivial_dc.md"),
        Code::BossHasExits => include_str!("../../../../docs/codes/boss_has_exits.md"),
        Code::TooHard => include_str!("../../../../docs/codes/too_hard.md"),
        Code::TooEasy => include_str!("../../../../docs/codes/too_easy.md"),
    }
}

/// The index of every code (`docs/codes/README.md`).
pub fn index() -> &'static str {
    include_str!("../../../../docs/codes/README.md")
}

/// The code named `name` as `zonegraph check` prints it, with `-` accepted for `_` and case
/// ignored.
pub fn parse_code(name: &str) -> Option<Code> {
    let name = name.trim().replace('-', "_");
    Code::ALL
        .into_iter()
        .find(|c| c.as_str().eq_ignore_ascii_case(&name))
}

/// What `zonegraph explain` prints: the code's page, or the index without a code; an unknown
/// code is an error that lists the known ones.
pub fn text(args: &Args) -> Result<&'static str> {
    let Some(name) = &args.code else {
        return Ok(index());
    };
    match parse_code(name) {
        Some(code) => Ok(explanation(code)),
        None => {
            let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
            bail!("unknown code {name:?}; known codes: {}", known.join(", "))
        }
    }
}

pub fn run(args: &Args) -> Result<ExitCode> {
    print!("{}", text(args)?);
    Ok(ExitCode::SUCCESS)
}
