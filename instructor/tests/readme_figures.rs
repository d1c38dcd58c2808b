//! The README's counts, held against the program: the checks (in all, per requirement and per
//! level), the catalogued designs (correct, alternatives, wrong, sequential slips, races). A
//! figure that changes in the code fails here until the README says it too.
//!
//! The README is read with its whitespace collapsed, so a phrase may wrap anywhere.

use ratelimit_lab::suite::CHECKS;
use ratelimit_lab::Requirement;
use ratelimit_lab_instructor::catalog::{Role, DESIGNS};

/// The README with every run of whitespace made one space.
fn readme() -> String {
    let text = include_str!("../../README.md");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn checks_of(requirement: Requirement) -> usize {
    CHECKS
        .iter()
        .filter(|c| c.requirement == requirement)
        .count()
}

/// Asserts that the README holds `phrase`, saying which figure it should carry otherwise.
fn says(readme: &str, phrase: &str) {
    assert!(
        readme.contains(phrase),
        "the README should say \"{phrase}\" (the program's figure); it does not"
    );
}

#[test]
fn the_readme_counts_the_checks_the_suite_has() {
    let readme = readme();
    let all = CHECKS.len();
    says(
        &readme,
        &format!("{all} checks, each named by what it guards"),
    );
    says(&readme, &format!("pass all {all} checks"));
    let [r1, r2, r3, r4] = [
        Requirement::R1,
        Requirement::R2,
        Requirement::R3,
        Requirement::R4,
    ]
    .map(checks_of);
    assert_eq!(r1 + r2 + r3 + r4, all);
    // The seed's levels: Engineer is R1, Senior R2 and R3, Staff R4.
    says(&readme, &format!("| R1 ({r1} checks) |"));
    says(&readme, &format!("| R2 ({r2} checks), R3 ({r3} checks) |"));
    says(&readme, &format!("| R4 ({r4} checks) |"));
    // Any other "N checks" the README states is one of these figures.
    let known = [all, r1, r2, r3, r4];
    let words: Vec<&str> = readme.split(' ').collect();
    for pair in words.windows(2) {
        let number = pair[0].trim_start_matches('(');
        if pair[1].trim_end_matches([')', ',', '.', ';']) == "checks" {
            if let Ok(n) = number.parse::<usize>() {
                assert!(
                    known.contains(&n),
                    "the README speaks of {n} checks; the suite has {all} ({r1} R1, {r2} R2, \
                     {r3} R3, {r4} R4)"
                );
            }
        }
    }
}

#[test]
fn the_readme_counts_the_designs_the_catalog_has() {
    let readme = readme();
    let correct = DESIGNS
        .iter()
        .filter(|d| !matches!(d.role, Role::Wrong { .. }))
        .count();
    let races = DESIGNS
        .iter()
        .filter(|d| matches!(d.role, Role::Wrong { mistake, .. } if mistake.is_race()))
        .count();
    let wrong = DESIGNS.len() - correct;
    let slips = wrong - races;
    // The correct designs beyond the reference, `ShardedBucket` and the specification.
    let alternatives = ratelimit_lab_catalog::DESIGNS
        .iter()
        .filter(|d| d.verdict == ratelimit_lab_catalog::Verdict::Correct)
        .count();
    assert_eq!(
        alternatives + 3,
        correct,
        "the correct designs beyond the three named"
    );
    says(
        &readme,
        &format!(
            "The {correct} correct designs (the reference, `ShardedBucket`, the specification \
             and the {alternatives} alternatives)"
        ),
    );
    says(&readme, &format!("and {wrong} deliberately wrong ones"));
    says(&readme, &format!("{slips} sequential slips, derived"));
    says(&readme, &format!("and {races} races. It depends"));
    says(
        &readme,
        &format!("each of the {slips} wrong designs with a sequential flaw"),
    );
    says(&readme, &format!("The {races} racy designs ("));
    // The leave-one-out figure is measured on the sequential slips, every one of them.
    says(&readme, &format!("of {slips} cases, left unnamed in"));
}
