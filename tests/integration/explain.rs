//! `docs/codes/`: every diagnostic code's page, as `zonegraph explain CODE` prints it. Its
//! example zone must have the code, and the output it shows must be what `zonegraph check`
//! prints for it.

use std::collections::BTreeSet;

use clap::Parser;
use zonegraph_core::{Code, Severity, check_sources};
use zonegraph_server::cli::explain::explanation;
use zonegraph_server::cli::{Cli, Cmd, check};

use crate::support::root;

/// Codes an example may have besides its own, because one mistake is two findings there.
fn companions(code: Code) -> &'static [Code] {
    match code {
        // A boss without a passage into it is also an orphan.
        Code::BossUnreachable => &[Code::OrphanNode],
        _ => &[],
    }
}

fn severity(code: Code) -> &'static str {
    match code.severity() {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// The body of the `## name` section (up to the next `## `), if there is one.
fn section<'a>(page: &'a str, name: &str) -> Option<&'a str> {
    let start = page.find(&format!("\n## {name}\n"))? + name.len() + 5;
    let body = &page[start..];
    Some(body.find("\n## ").map_or(body, |end| &body[..end]))
}

/// The first fenced block of `lang` in `text` (its lines, each ending in a newline), and the
/// text after it.
fn fenced<'a>(text: &'a str, lang: &str) -> Option<(&'a str, &'a str)> {
    let open = format!("```{lang}\n");
    let start = text.find(&open)? + open.len();
    let len = text[start..].find("\n```")? + 1;
    Some((&text[start..start + len], &text[start + len..]))
}

/// What `zonegraph check <code>.json` prints for `zone`, run in a folder of its own.
fn check_output(code: Code, zone: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join(format!("{code}.json"));
    std::fs::write(&file, zone).expect("write the example");
    let file = file.to_string_lossy().into_owned();
    let Cmd::Check(args) = Cli::try_parse_from(["zonegraph", "check", file.as_str()])
        .expect("valid arguments")
        .command
    else {
        unreachable!("parsed a check command")
    };
    let (out, _) = check::report(&args).expect("check runs");
    out.replace(&format!("{}/", dir.path().display()), "")
}

/// What is wrong with `code`'s page, if anything.
fn page_problems(code: Code) -> Vec<String> {
    let page = explanation(code);
    let mut problems = Vec::new();
    let title = format!("# {code} ({})\n", severity(code));
    if !page.starts_with(&title) {
        problems.push(format!("does not start with {title:?}"));
    }
    if section(page, "Fix").is_none_or(|fix| fix.trim().is_empty()) {
        problems.push("has no ## Fix section".into());
    }
    if let (Some(example), Some(fix)) = (page.find("\n## Example\n"), page.find("\n## Fix\n"))
        && fix < example
    {
        problems.push("has its ## Fix before its ## Example".into());
    }
    let Some(example) = section(page, "Example") else {
        problems.push("has no ## Example section".into());
        return problems;
    };
    let Some((zone, rest)) = fenced(example, "json") else {
        problems.push("has no ```json zone in its example".into());
        return problems;
    };
    let checked = check_sources(&[(format!("{code}.json"), zone.to_string())]);
    let Some(c) = checked.first() else {
        problems.push("example gave no result".into());
        return problems;
    };
    if let Some(e) = &c.parse_error {
        problems.push(format!("example does not parse: {}", e.message));
    }
    let found: BTreeSet<Code> = c.diagnostics.iter().map(|d| d.code).collect();
    if !found.contains(&code) {
        problems.push(format!("example does not have {code}, only {found:?}"));
    }
    let others: Vec<Code> = found
        .iter()
        .copied()
        .filter(|&f| f != code && !companions(code).contains(&f))
        .collect();
    if !others.is_empty() {
        problems.push(format!("example also has {others:?}"));
    }
    let printed = check_output(code, zone);
    match fenced(rest, "text") {
        Some((shown, _)) if shown == printed => {}
        Some((shown, _)) => problems.push(format!(
            "example shows\n{shown}but `zonegraph check {code}.json` prints\n{printed}"
        )),
        None => problems.push(format!(
            "example shows no ```text output; `zonegraph check {code}.json` prints\n{printed}"
        )),
    }
    problems
}

#[test]
fn every_code_has_a_page_whose_example_has_the_code() {
    let mut report = String::new();
    for code in Code::ALL {
        for p in page_problems(code) {
            report.push_str(&format!("docs/codes/{code}.md {p}\n"));
        }
    }
    assert!(report.is_empty(), "{report}");
}

#[test]
fn the_index_lists_every_code_and_no_other_page() {
    let index = std::fs::read_to_string(root().join("docs/codes/README.md")).expect("index");
    for code in Code::ALL {
        let row = format!("| [`{code}`]({code}.md) | {} | ", severity(code));
        assert!(
            index.contains(&row),
            "docs/codes/README.md has no row {row:?}"
        );
    }
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs/codes"))
        .expect("docs/codes")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name != "README.md")
        .collect();
    pages.sort();
    let mut expected: Vec<String> = Code::ALL.iter().map(|c| format!("{c}.md")).collect();
    expected.sort();
    assert_eq!(
        pages, expected,
        "docs/codes/ holds a page for every code, and only those"
    );
}
