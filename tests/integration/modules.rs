//! No circles between the top-level modules of any crate: each crate's modules form layers,
//! so a module can be read, tested and replaced knowing only the ones below it.
//!
//! A top-level module is `src/X.rs` or the folder `src/X/`; it depends on `Y` when any of its
//! files names `crate::Y` (also inside `use crate::{Y, …}`); a top-level module names the
//! others by `crate::`, so `super::` is not read. Comments do not count (doc links are not
//! dependencies); `#[cfg(test)]` code does: a test that needs a module above its own belongs
//! in this binary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module → the modules it names, with the first place each is named (file:line).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules of the crate whose sources are in `src`, with their files.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(src).expect("read src") {
        let p = e.expect("dir entry").path();
        let name = p.file_stem().expect("name").to_string_lossy().into_owned();
        if p.is_dir() {
            let mut files = Vec::new();
            rust_files(&p, &mut files);
            out.entry(name).or_default().extend(files);
        } else if p.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            out.entry(name).or_default().push(p);
        }
    }
    out
}

/// The names right after `crate::` on one line of code.
fn named(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut names = Vec::new();
    {
        let prefix = "crate::";
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue; // `$crate::`, `my_crate::`
            }
            if let Some(group) = rest.strip_prefix('{') {
                // Top-level items of `{a, b::c, d::{e, f}}`.
                let (mut depth, mut item) = (0, String::new());
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            names.push(std::mem::take(&mut item));
                            continue;
                        }
                        _ => {}
                    }
                    if depth == 0 {
                        item.push(c);
                    }
                }
                names.push(item);
            } else {
                names.push(rest.to_string());
            }
        }
    }
    names
        .iter()
        .map(|n| {
            n.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

fn graph(src: &Path) -> Graph {
    let mods = modules(src);
    let mut g = Graph::new();
    for (m, files) in &mods {
        let deps = g.entry(m.clone()).or_default();
        for f in files {
            let text = std::fs::read_to_string(f).expect("read source");
            for (i, line) in text.lines().enumerate() {
                for n in named(line) {
                    if n != *m && mods.contains_key(&n) {
                        let file = f.strip_prefix(src).unwrap_or(f);
                        deps.entry(n)
                            .or_insert_with(|| format!("{}:{}", file.display(), i + 1));
                    }
                }
            }
        }
    }
    g
}

/// The groups of modules that reach one another (strongly connected, more than one).
fn circles(g: &Graph) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for d in g.get(&m).into_iter().flat_map(|d| d.keys()) {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen
    };
    let all: BTreeMap<&String, BTreeSet<String>> = g.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (m, r) in &all {
        if !r.contains(*m) || out.iter().any(|c| c.contains(*m)) {
            continue;
        }
        let group: BTreeSet<String> = all
            .iter()
            .filter(|(n, rn)| r.contains(**n) && rn.contains(*m))
            .map(|(n, _)| (*n).clone())
            .collect();
        out.push(group);
    }
    out
}

/// Each circle with the references that make it, for the failure message.
fn describe(g: &Graph, circles: &[BTreeSet<String>]) -> String {
    let mut s = String::new();
    for c in circles {
        s.push_str(&format!(
            "circle: {}\n",
            c.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
        for m in c {
            for (d, at) in &g[m] {
                if c.contains(d) {
                    s.push_str(&format!("  {m} -> {d} ({at})\n"));
                }
            }
        }
    }
    s
}

#[test]
fn no_crate_has_a_circle_between_its_top_level_modules() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("entry").path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() >= 5, "found the crates: {crates:?}");
    let mut report = String::new();
    for src in &crates {
        let g = graph(src);
        let found = circles(&g);
        if !found.is_empty() {
            let name = src.strip_prefix(&root).unwrap_or(src);
            report.push_str(&format!("{}:\n{}", name.display(), describe(&g, &found)));
        }
    }
    assert!(report.is_empty(), "module circles:\n{report}");
}

#[test]
fn a_planted_circle_is_found_and_comments_are_not_dependencies() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("b")).expect("mkdir");
    let write = |p: &str, text: &str| std::fs::write(src.join(p), text).expect("write");
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n");
    write(
        "a.rs",
        "use crate::c::X;\n/// See [`crate::d`].\nfn f() {}\n",
    );
    write("b/mod.rs", "mod inner;\n");
    write("b/inner.rs", "use crate::{c::Y, a};\n");
    write(
        "c.rs",
        "// crate::d is only mentioned\nfn g() { crate::b::h() }\n",
    );
    write("d.rs", "fn k() { let _ = crate::a::f; m!($crate::c) }\n");
    let g = graph(&src);
    assert_eq!(g["a"].keys().collect::<Vec<_>>(), ["c"], "{g:?}");
    assert_eq!(g["b"].keys().collect::<Vec<_>>(), ["a", "c"], "{g:?}");
    assert_eq!(g["c"].keys().collect::<Vec<_>>(), ["b"], "{g:?}");
    assert_eq!(g["d"].keys().collect::<Vec<_>>(), ["a"], "{g:?}");
    let found = circles(&g);
    assert_eq!(found.len(), 1, "{found:?}");
    let names: Vec<&str> = found[0].iter().map(String::as_str).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let text = describe(&g, &found);
    assert!(text.contains("b -> a ("), "{text}");
    assert!(text.contains("inner.rs:1)"), "{text}");

    // Take the back edge away: no circle.
    write("c.rs", "fn g() {}\n");
    assert!(circles(&graph(&src)).is_empty());
}
