//! Designs written apart from the suite: each a learner's crate written from the README, the
//! lesson and the contract alone, from one of nine correct designs (`bases/`: a plain token
//! bucket, one that stores when each bucket is full, one that stores debt, a GCRA, a lazy
//! cutover, a sharded one, one with a lock per key and whole tokens kept apart from the
//! remainder, one keeping full keys in a set and the others by what they lack, one keeping
//! the clock reading at which each key was empty) with one slip of its own. Each base passes
//! every check in std, shuttle and loom mode, and `tests/probed.rs` checks that no probe fires
//! on any of them. Each is kept as a patch against its
//! base (`designs/<set>/<name>.patch`), whose header says:
//!
//! - `label:` the seed mistake whose hint fixes the design (`none` when no seed mistake's
//!   hint does);
//! - `probed:` what [`probed_mistake`](ratelimit_lab::suite::probed_mistake) finds in it,
//!   as recorded (`none` when nothing);
//! - then the slip, and a witness: calls on which the design and the contract differ.
//!
//! `tests/probed.rs` checks that the probes still find what each header records, and prints
//! how often that is the label. The designs were graded blind, a set at a time, before the
//! probes were changed for them; they are a record of what the probes must keep finding,
//! not designs the probes have never seen.
//!
//! To add a set: `diff -u bases/<base>.rs <design>/src/lib.rs`, the first two lines replaced
//! by `--- bases/<base>.rs` and `+++ <name>.rs`, under a header as above with `probed: ?`;
//! then `RATELIMIT_LAB_BLESS=1 cargo test -p ratelimit-lab-apart` writes what the probes
//! find into each header, and `git diff` shows it for review.
#![allow(clippy::doc_markdown)]

/// One correct design a set's designs are patches against.
pub struct Base {
    /// Its file name in `bases/`, without `.rs`.
    pub name: &'static str,
    /// Runs the diagnosis's probes on it.
    pub probe: fn() -> Option<ratelimit_lab::Mistake>,
}

/// One design written apart.
pub struct Design {
    /// The set it was written in (`set02` ...).
    pub set: &'static str,
    /// Its name within the set.
    pub name: &'static str,
    /// The seed mistake whose hint fixes it, or `none`.
    pub label: &'static str,
    /// What the probes found in it when last recorded, or `none`.
    pub probed: &'static str,
    /// Runs the diagnosis's probes on it.
    pub probe: fn() -> Option<ratelimit_lab::Mistake>,
}

include!(concat!(env!("OUT_DIR"), "/designs.rs"));
