//! The crate's layers hold, at two levels. At the top, each module of the crate (`lesson`,
//! `fixtures`, `suite`, ...) imports only the modules before it in the table of `src/lib.rs`'s
//! documentation. Inside the suite, every file under `src/suite/<layer>/` imports only its own
//! layer and the layers before it, no files of one
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
        // `prefix` must start a path: not preceded by an identifier character or `::`, and
        // not `$crate::` (a macro's path, resolved where the macro expands).
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '$') {
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

/// The crate's top-level modules in the order of the table in `src/lib.rs`'s documentation
/// (a row ``//! | `lesson` | ... |`` per module), each with the code of its files.
fn modules() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let text = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("//! | `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name.to_string())
        .collect();
    fn read_all(path: &Path, code: &mut String) {
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)
                .expect("a module folder")
                .flatten()
                .map(|e| e.path())
                .collect();
            entries.sort();
            for entry in entries {
                read_all(&entry, code);
            }
        } else if path.extension().and_then(|e| e.to_str()) == Some("rs") {
            code.push_str(&code_of(
                &std::fs::read_to_string(path).expect("a source file"),
            ));
        }
    }
    names
        .into_iter()
        .map(|name| {
            let (dir, file) = (src.join(&name), src.join(format!("{name}.rs")));
            assert!(
                dir.is_dir() || file.is_file(),
                "the table in src/lib.rs names `{name}`, which has no src/{name}/ or src/{name}.rs"
            );
            let mut code = String::new();
            read_all(if dir.is_dir() { &dir } else { &file }, &mut code);
            (name, code)
        })
        .collect()
}

/// The problems of the top-level imports, one line each.
fn top_level_problems(modules: &[(String, String)]) -> Vec<String> {
    let rank = |name: &str| modules.iter().position(|(m, _)| m == name);
    let mut problems = Vec::new();
    for (mine, (name, code)) in modules.iter().enumerate() {
        for (first, _) in paths_after(code, "crate::") {
            if let Some(there) = rank(first).filter(|&there| there > mine) {
                problems.push(format!(
                    "src/{name} imports crate::{first}: `{}` comes after `{name}` in the table of \
                     src/lib.rs",
                    modules[there].0
                ));
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

#[test]
fn every_module_imports_only_the_modules_before_it() {
    let modules = modules();
    assert!(
        modules.len() >= 2,
        "src/lib.rs's documentation lists its modules in a table"
    );
    let problems = top_level_problems(&modules);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_top_level_reader_finds_an_upward_import() {
    let modules: Vec<(String, String)> = [
        (
            "lesson",
            code_of("use crate::suite::Report;\nfn f() { $crate::site::x(); }\n"),
        ),
        ("suite", code_of("use crate::lesson::Walkthrough;\n")),
        ("site", String::new()),
    ]
    .map(|(m, c)| (m.to_string(), c))
    .to_vec();
    assert_eq!(
        top_level_problems(&modules),
        ["src/lesson imports crate::suite: `suite` comes after `lesson` in the table of src/lib.rs"]
    );
}

#[test]
fn every_layer_imports_only_the_layers_before_it_and_no_cycle() {
    let problems = problems();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_finds_upward_and_root_imports_outside_comments_and_tests() {
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
