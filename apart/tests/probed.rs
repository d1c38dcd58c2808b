//! The probes find in each design written apart what its header records; with
//! `RATELIMIT_LAB_BLESS=1`, the headers are rewritten to what they find.
use std::fmt::Write as _;
use std::path::PathBuf;

use ratelimit_lab_apart::{Design, BASES, DESIGNS};

fn found(d: &Design) -> String {
    (d.probe)().map_or("none".to_string(), |m| format!("{m:?}"))
}

#[test]
fn the_probes_find_what_each_design_records() {
    let bless = std::env::var_os("RATELIMIT_LAB_BLESS").is_some();
    let mut changed = String::new();
    let (mut right, mut other, mut none) = (0, 0, 0);
    for d in DESIGNS {
        let now = found(d);
        match now.as_str() {
            "none" => none += 1,
            m if m == d.label => right += 1,
            _ => other += 1,
        }
        if now == d.probed {
            continue;
        }
        let _ = writeln!(
            changed,
            "  {}/{}: recorded {}, found {} (label {})",
            d.set, d.name, d.probed, now, d.label
        );
        if bless {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("designs")
                .join(d.set)
                .join(format!("{}.patch", d.name));
            let text = std::fs::read_to_string(&path).expect("the design's patch is readable");
            let line = format!("probed: {}\n", d.probed);
            assert!(
                text.contains(&line),
                "{}: no `{}` line",
                path.display(),
                line.trim()
            );
            std::fs::write(&path, text.replacen(&line, &format!("probed: {now}\n"), 1))
                .expect("the design's patch is writable");
        }
    }
    let all = DESIGNS.len();
    println!(
        "{all} designs written apart: the probes name {right} by their label, {other} otherwise, {none} not at all"
    );
    assert!(
        bless || changed.is_empty(),
        "the probes find otherwise than recorded in:\n{changed}\
         (if the change is meant: RATELIMIT_LAB_BLESS=1 cargo test -p ratelimit-lab-apart, then review git diff)"
    );
    // The README states these figures; it must state the program's.
    let readme = include_str!("../../README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for phrase in [
        format!("holds the {all} wrong designs written apart"),
        format!(
            "the probes alone name {right} of the {all} by their label, {other} otherwise and {none} not at all"
        ),
    ] {
        assert!(
            bless || readme.contains(&phrase),
            "the README should say \"{phrase}\" (the program's figures); it does not"
        );
    }
}

/// A correct design shows no symptom: the probes compare a design with the specification, or
/// with itself where the contract makes two answers equal.
#[test]
fn no_probe_fires_on_a_correct_base() {
    let fired: Vec<String> = BASES
        .iter()
        .filter_map(|b| (b.probe)().map(|m| format!("{}: {m:?}", b.name)))
        .collect();
    assert_eq!(BASES.len(), 9);
    assert!(fired.is_empty(), "probes fired on correct bases: {fired:?}");
}
