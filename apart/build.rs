//! Applies each design's patch (`designs/<set>/<name>.patch`, a unified diff against one of
//! `bases/`) and writes every design as a module of `$OUT_DIR/designs.rs`, with the table of
//! designs. A patch that does not apply exactly stops the build with the design's name.
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// One design: where it is filed, what its header says, its source.
struct Design {
    set: String,
    name: String,
    label: String,
    probed: String,
    source: String,
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!("cargo::rerun-if-changed=designs");
    println!("cargo::rerun-if-changed=bases");
    let mut designs = Vec::new();
    let mut sets: Vec<PathBuf> = entries(&root.join("designs"));
    sets.sort();
    for set in sets {
        let mut patches = entries(&set);
        patches.sort();
        for patch in patches
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "patch"))
        {
            designs.push(read(&root, &set, &patch).unwrap_or_else(|e| {
                panic!("{}: {e}", patch.display());
            }));
        }
    }
    let mut out = String::new();
    for d in &designs {
        module(&mut out, &format!("{}_{}", d.set, d.name), &d.source);
    }
    // The correct bases the designs are patches against, as modules too.
    let mut bases: Vec<PathBuf> = entries(&root.join("bases"));
    bases.sort();
    let mut base_names = Vec::new();
    for base in bases
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let name = base
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a base's file name is UTF-8")
            .to_string();
        let source = fs::read_to_string(base).expect("a base is readable");
        module(&mut out, &format!("base_{name}"), &source);
        base_names.push(name);
    }
    out.push_str("/// Every base, in name order.\npub static BASES: &[Base] = &[\n");
    for name in &base_names {
        let _ = writeln!(
            out,
            "    Base {{ name: {name:?}, probe: ratelimit_lab::suite::probed_mistake::<base_{name}::MyLimiter> }},"
        );
    }
    out.push_str("];\n");
    out.push_str("/// Every design, in set and name order.\npub static DESIGNS: &[Design] = &[\n");
    for d in &designs {
        let _ = writeln!(
            out,
            "    Design {{ set: {:?}, name: {:?}, label: {:?}, probed: {:?}, probe: ratelimit_lab::suite::probed_mistake::<{}_{}::MyLimiter> }},",
            d.set, d.name, d.label, d.probed, d.set, d.name
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("designs.rs");
    fs::write(dest, out).expect("OUT_DIR is writable");
}

/// A design's source as a module of the generated file; a learner's code is not linted here.
fn module(out: &mut String, name: &str, source: &str) {
    let _ = writeln!(
        out,
        "#[allow(warnings, clippy::all, clippy::pedantic)]\npub mod {name} {{\n{source}\n}}\n"
    );
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

/// A design from its patch: the header (`label:`, `probed:`, then the description), then the
/// diff against `bases/<base>.rs`.
fn read(root: &Path, set: &Path, patch: &Path) -> Result<Design, String> {
    let text = fs::read_to_string(patch).map_err(|e| e.to_string())?;
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .ok_or(format!("no `{key}` line"))
    };
    let (label, probed) = (field("label:")?, field("probed:")?);
    let diff_at = text.find("\n--- ").ok_or("no `--- bases/...` line")? + 1;
    let diff: Vec<&str> = text[diff_at..].lines().collect();
    let base = diff[0]
        .strip_prefix("--- bases/")
        .ok_or("the diff's first line is not `--- bases/<base>.rs`")?;
    let original = fs::read_to_string(root.join("bases").join(base.trim()))
        .map_err(|e| format!("base {base}: {e}"))?;
    let source = apply(&original, &diff[2..])?;
    let name = |p: &Path| p.file_stem().and_then(|s| s.to_str()).map(str::to_string);
    Ok(Design {
        set: name(set).ok_or("set name")?,
        name: name(patch).ok_or("design name")?,
        label,
        probed,
        source,
    })
}

/// Applies unified-diff hunks to `original`, exactly: every context and removed line must be
/// where the hunk says.
fn apply(original: &str, hunks: &[&str]) -> Result<String, String> {
    let old: Vec<&str> = original.lines().collect();
    let mut out: Vec<&str> = Vec::new();
    let mut next = 0; // the next line of `old` to copy
    let mut i = 0;
    while i < hunks.len() {
        let header = hunks[i];
        if header.is_empty() && i + 1 == hunks.len() {
            break;
        }
        let start: usize = header
            .strip_prefix("@@ -")
            .and_then(|r| r.split([',', ' ']).next())
            .and_then(|n| n.parse().ok())
            .ok_or(format!("not a hunk header: {header:?}"))?;
        // A hunk of no old lines starts after line `start`; otherwise at it.
        let from = if header.starts_with(&format!("@@ -{start},0 ")) {
            start
        } else {
            start.max(1) - 1
        };
        if from < next || from > old.len() {
            return Err(format!("hunk {header:?} out of order"));
        }
        out.extend_from_slice(&old[next..from]);
        next = from;
        i += 1;
        while i < hunks.len() && !hunks[i].starts_with("@@") {
            let line = hunks[i];
            match line.split_at_checked(1) {
                Some((" ", rest)) | Some(("-", rest)) => {
                    if old.get(next) != Some(&rest) {
                        return Err(format!("line {} is not {rest:?}", next + 1));
                    }
                    if line.starts_with(' ') {
                        out.push(rest);
                    }
                    next += 1;
                }
                Some(("+", rest)) => out.push(rest),
                Some(("\\", _)) => {}
                _ if line.is_empty() && i + 1 == hunks.len() => {}
                _ => return Err(format!("not a diff line: {line:?}")),
            }
            i += 1;
        }
    }
    out.extend_from_slice(&old[next..]);
    Ok(out.join("\n") + "\n")
}
