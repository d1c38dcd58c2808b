//! The site of the lesson's fixtures: walkthroughs authored by an instructor, checked step by
//! step, written as JSON with a picture each, and one page showing them all. The documents
//! and their loader are [`fixtures`](ratelimit_lab::fixtures)'s.
//!
//! # From a walkthrough file to a fixture
//!
//! An instructor writes walkthroughs in the format of `testdata/README.md` (a policy,
//! `max_keys`, steps with their operation, expected outcome, the lesson's words and the
//! invariant shown), one file each, in a directory. [`build()`] (the command
//! `ratelimit-lab fixtures build DIR --out OUT`) reads them
//! ([`source::read_dir`]), replays every step on the executable
//! specification, the reference and any baseline
//! ([`build::verify`]), and only when every step of every file agrees writes:
//!
//! - `OUT/walkthroughs/<id>.json`: the [`WalkthroughFixture`](ratelimit_lab::fixtures::WalkthroughFixture),
//!   schema [`WALKTHROUGH_SCHEMA`](ratelimit_lab::fixtures::WALKTHROUGH_SCHEMA), version
//!   [`FORMAT_VERSION`](ratelimit_lab::fixtures::FORMAT_VERSION);
//! - `OUT/walkthroughs/<id>.svg`: its picture ([`picture`]);
//! - `OUT/counterexamples/<Design>.json` and `.svg`: each concurrency counterexample saved
//!   in `DIR/counterexamples/` ([`race`]), judged again, with a picture of its interleaving;
//! - `OUT/index.json`: the [`Index`](ratelimit_lab::fixtures::Index) of them, in teaching order;
//! - `OUT/index.html`: one page with every table and picture, readable offline.
//!
//! A wrong expectation writes nothing and names the file, the step, the expected outcome and
//! what the specification and the reference returned. The shipped fixtures under
//! `fixtures/` are built from `testdata/lesson/` this way, and `cargo test` fails when a
//! byte of them differs from a fresh build ([`build::drift`]).
pub mod build;
mod page;
pub mod picture;
mod picture_lanes;
mod picture_layout;
mod picture_numbers;
mod picture_place;
mod picture_plot;
mod picture_text;
pub mod race;
pub mod race_picture;

use std::path::Path;

pub use build::{Artifact, Drift, Verified, Written};
use ratelimit_lab::fixtures::{source, FixtureError};
use ratelimit_lab::{Mistake, Requirement};
use ratelimit_lab_catalog::Verdict;

/// The requirement the catalogued wrong design called exactly `name` breaks and the mistake
/// it makes; `None` for a correct design or an unknown name.
fn catalogued_wrong(name: &str) -> Option<(Requirement, Mistake)> {
    match ratelimit_lab_catalog::find(name)?.verdict {
        Verdict::Wrong { breaks, mistake } => Some((breaks, mistake)),
        Verdict::Correct => None,
    }
}

/// Builds the fixture directory `out` from the walkthrough files of `dir`: reads, verifies
/// and renders everything, then writes (only files whose bytes change), so a failure at any
/// step leaves `out` untouched.
///
/// # Errors
///
/// As [`source::read_dir`], [`build::render`] and [`build::write`].
pub fn build(dir: &Path, out: &Path) -> Result<Written, FixtureError> {
    let sources = source::read_dir(dir)?;
    let races = race::read_races(dir)?;
    let artifacts = build::render(&sources, &races)?;
    build::write(out, &artifacts)
}

/// Every difference between the fixture directory `out` and a fresh build from `dir`
/// (empty when they are identical to the byte).
///
/// # Errors
///
/// As [`source::read_dir`] and [`build::render`]: a directory that does not verify has no
/// fresh build to compare with.
pub fn check(dir: &Path, out: &Path) -> Result<Vec<Drift>, FixtureError> {
    let sources = source::read_dir(dir)?;
    let races = race::read_races(dir)?;
    let artifacts = build::render(&sources, &races)?;
    Ok(build::drift(out, &artifacts))
}
