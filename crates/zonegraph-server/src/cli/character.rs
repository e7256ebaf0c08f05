//! `zonegraph char`: an operator shows or sets a user's character sheet on a database, with
//! the same edits (and limits) as the chat's `!char set`, `!char grant` and `!char revoke`.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use zonegraph_core::chat;
use zonegraph_core::command;

use crate::db;
use crate::store;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: super::args::DbArg,
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Print a user's sheet.
    Show { user: String },
    /// Set a user's level or an ability score: `set @p:example.org level 5`, `set @p wis 14`.
    Set {
        user: String,
        /// `level`, or an ability (str, dex, con, int, wis, cha).
        what: String,
        value: String,
    },
    /// Give a user a key.
    Grant { user: String, key: Vec<String> },
    /// Take a key from a user.
    Revoke { user: String, key: Vec<String> },
}

/// Runs `zonegraph char`: the sheet (after the edit) on stdout, the change logged on stderr.
pub fn run(args: &Args) -> Result<ExitCode> {
    let db = db::Database::open_existing(&args.db.at)?;
    let (verb, user, rest): (&str, &str, Vec<&str>) = match &args.action {
        Action::Show { user } => {
            let first = first_sheet(&db)?;
            let c = db.read(|tx| match tx.character(user)? {
                Some(s) => Ok(s.character),
                None => first.of(tx, user),
            })?;
            println!("{}", chat::character(&c).text);
            return Ok(ExitCode::SUCCESS);
        }
        Action::Set { user, what, value } => ("set", user, vec![what, value]),
        Action::Grant { user, key } => ("grant", user, key.iter().map(String::as_str).collect()),
        Action::Revoke { user, key } => ("revoke", user, key.iter().map(String::as_str).collect()),
    };
    let mut words = vec![user];
    words.extend(rest);
    let (user, edit) = command::parse_admin(verb, &words)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("cannot {verb} the sheet"))?;
    let now = crate::clock::now_ms();
    let first = first_sheet(&db)?;
    let (who, what) = (user.clone(), edit.clone());
    let result = db.write(
        move |tx| store::edit_character(tx, &who, &what, now, &first),
        Result::is_ok,
    )?;
    let by = format!(
        "zonegraph char ({})",
        crate::store::catalog::operator_name()
    );
    store::log_edit(&by, &user, &edit, &result);
    match result {
        Ok(c) => {
            println!("{}", chat::admin_edited(&user, &edit, &c).text);
            Ok(ExitCode::SUCCESS)
        }
        Err(refusal) => {
            eprintln!("{}", chat::refusal(&refusal).text);
            Ok(ExitCode::FAILURE)
        }
    }
}

/// A first sheet as the server makes it, on the zones in the database.
fn first_sheet(db: &db::Database) -> Result<crate::gogobee::carry::FirstSheet> {
    Ok(crate::gogobee::carry::FirstSheet::new(
        zonegraph_core::rules::STARTING_SCORES,
        &db.read(|tx| {
            Ok(tx
                .table_zones()?
                .into_iter()
                .map(|(_, z)| z)
                .collect::<Vec<_>>())
        })?,
    ))
}
