//! The suite's layers hold: every file under `src/suite/<layer>/` imports only its own layer
//! and the layers before it, no files of one
//! layer import each other in a cycle, and no layer reaches the suite's own entry points or
//! re-exports (it names what it uses by its home path). The order is the layer table in
//! `src/suite/mod.rs`'s documentation.
//!
//! The references read are the paths in the code (not in comments, not in a file's unit
//! tests, which may use anything to test it): `crate::suite::<layer>::<file>`,
//! `super::<file>` (a file of the same layer), `super::super::<layer>::<file>`, and any
//! `crate::suite::<name>` or `crate::explore` that is not a layer (the entry points above
//! every layer).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The suite's directory.
const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/suite");

/// The layers in the order of the table in `src/suite/mod.rs`'s documentation (a row
/// ``//! | `core` | ... |`` per layer, first the one that imports no other), each checked
/// to be declared there as `pub(crate) mod <layer>;`.
fn layers() -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(SUITE).join("mod.rs")).expect("suite/mod.rs");
    let layers: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("//! | `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(layer, _)| layer.to_string())
        .collect();
    for layer in &layers {
        assert!(
            text.contains(&format!("pub(crate) mod {layer};")),
            "the layer table names `{layer}`, which src/suite/mod.rs does not declare"
        );
    }
    layers
}

/// `text` without its comments and without its unit tests (a `#[cfg(test)]` or
/// `#[cfg(all(test, ...))]` module at the end of the file).
fn code_of(text: &str) -> String {
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") || trimmed.starts_with("#[cfg(all(test") {
            // Attributes, then the tests module: the rest of the file is its tests.
            let mut rest = lines
                .clone()
                .skip_while(|l| l.trim_start().starts_with("#["));
            if rest
                .next()
                .is_some_and(|l| l.trim_start().starts_with("mod tests"))
            {
                break;
            }
        }
        let code = match line.find("//") {
            // A `//` inside a string literal is rare in this code and would only drop the
            // rest of that line.
            Some(at) => &line[..at],
            None => line,
        };
        kept.push_str(code);
        kept.push('\n');
    }
    kept
}

/// Every `prefix::<ident>(::<ident>)?` in `code`: the one or two path segments after it.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<(&'a str, Option<&'a str>)> {
    let ident = |s: &'a str| -> &'a str {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    };
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        // `prefix` must start a path: not preceded by an identifier character or `::`.
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let first = ident(&code[from..]);
        if first.is_empty() {
            continue;
        }
        let after = &code[from + first.len()..];
        let second = after
            .strip_prefix("::")
            .map(ident)
            .filter(|s| !s.is_empty());
        found.push((first, second));
    }
    found
}

/// One file of a layer.
struct File {
    layer: String,
    module: String,
    code: String,
}

fn files(layers: &[String]) -> Vec<File> {
    let mut all = Vec::new();
    for layer in layers {
        let dir = Path::new(SUITE).join(layer);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("the layer {layer} has no folder {}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&path).expect("a source file");
            all.push(File {
                layer: layer.clone(),
                module: if stem == "mod" {
                    String::new()
                } else {
                    stem.to_string()
                },
                code: code_of(&text),
            });
        }
    }
    all
}

/// Each file's references to files of the suite, as `(layer, module)`; and the references
/// to the suite's root (entry points and re-exports) it makes.
fn references(file: &File, layers: &[String]) -> (BTreeSet<(String, String)>, BTreeSet<String>) {
    let (mut to, mut root) = (BTreeSet::new(), BTreeSet::new());
    let mut reach = |layer: &str, module: Option<&str>| {
        if layers.iter().any(|l| l == layer) {
            to.insert((layer.to_string(), module.unwrap_or_default().to_string()));
        } else {
            root.insert(layer.to_string());
        }
    };
    for (first, second) in paths_after(&file.code, "crate::suite::") {
        reach(first, second);
    }
    for (first, second) in paths_after(&file.code, "super::super::") {
        reach(first, second);
    }
    for (first, _) in paths_after(&file.code, "super::") {
        if first != "super" && !file.module.is_empty() {
            to.insert((file.layer.clone(), first.to_string()));
        }
    }
    if !paths_after(&file.code, "crate::explore::").is_empty() {
        root.insert("explore".to_string());
    }
    (to, root)
}

/// The problems of the suite's imports, one line each.
fn problems() -> Vec<String> {
    let layers = layers();
    assert!(
        layers.len() >= 2,
        "src/suite/mod.rs's documentation lists its layers in a table: {layers:?}"
    );
    let rank = |layer: &str| layers.iter().position(|l| l == layer);
    let mut problems = Vec::new();
    let mut within: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in files(&layers) {
        let here = format!("suite/{}/{}", file.layer, file.module);
        let (to, root) = references(&file, &layers);
        for name in root {
            problems.push(format!(
                "{here} names crate::suite::{name}: the suite's root is above every layer; \
                 import what it re-exports from its home file"
            ));
        }
        for (layer, module) in to {
            match (rank(&layer), rank(&file.layer)) {
                (Some(there), Some(mine)) if there > mine => problems.push(format!(
                    "{here} imports suite/{layer}/{module}: `{layer}` comes after `{}` in the \
                     layer order",
                    file.layer
                )),
                _ if layer == file.layer && !module.is_empty() && module != file.module => {
                    within
                        .entry((file.layer.clone(), file.module.clone()))
                        .or_default()
                        .insert(module);
                }
                _ => {}
            }
        }
    }
    // Cycles among the files of one layer.
    for ((layer, start), _) in within.iter() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((at, path)) = stack.pop() {
            for next in within
                .get(&(layer.clone(), at.clone()))
                .into_iter()
                .flatten()
            {
                if next == start {
                    let mut cycle = path.clone();
                    cycle.push(next.clone());
                    // Reported once, from its smallest file.
                    if cycle.iter().min() == Some(start) {
                        problems.push(format!(
                            "suite/{layer}: an import cycle: {}",
                            cycle.join(" -> ")
                        ));
                    }
                } else if !path.contains(next) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

#[test]
fn every_layer_imports_only_the_layers_before_it_and_no_cycle() {
    let problems = problems();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_finds_upward_imports_and_cycles() {
    let file = |layer: &str, module: &str, code: &str| File {
        layer: layer.to_string(),
        module: module.to_string(),
        code: code_of(code),
    };
    let layers: Vec<String> = ["core", "oracle"].map(String::from).to_vec();
    let (to, root) = references(
        &file(
            "core",
            "failure",
            "use crate::suite::oracle::probe::Probe;\nuse super::env;\n\
             // crate::suite::oracle::hidden in a comment\nfn f() { crate::suite::grade(); }\n\
             #[cfg(test)]\nmod tests {\n    use crate::suite::oracle::minimal;\n}\n",
        ),
        &layers,
    );
    let to: Vec<(String, String)> = to.into_iter().collect();
    assert_eq!(
        to,
        [
            ("core".to_string(), "env".to_string()),
            ("oracle".to_string(), "probe".to_string())
        ]
    );
    assert_eq!(root.into_iter().collect::<Vec<_>>(), ["grade"]);
}
