//! Many callers making one call at once: the seed's "Release twenty concurrent unit requests
//! at t=0 with capacity ten; exactly ten must succeed", as a walkthrough step.
//!
//! The callers make identical calls at one instant, so every sequential order gives the same
//! outcomes, only permuted: a correct design returns exactly that multiset whatever the
//! schedule, and the step's counts and last outcome do not depend on it.
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::model::{Model, Op, Outcome};
use crate::reference::TokenBucket;
use crate::Limiter;

/// The most callers a step may release at once.
pub const MAX_CONTENDERS: usize = 64;

/// How many callers make a step's call at once, and how many of them are allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contenders {
    /// The callers, in `2..=MAX_CONTENDERS`.
    pub threads: usize,
    /// How many are allowed.
    pub allowed: usize,
    /// How many are rejected (`allowed + rejected == threads`).
    pub rejected: usize,
}

impl Contenders {
    /// The counts of `outcomes` (an error counts as neither).
    pub fn of(outcomes: &[Outcome]) -> Contenders {
        let allowed = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Decision(d) if d.allowed))
            .count();
        let rejected = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Decision(d) if !d.allowed))
            .count();
        Contenders {
            threads: outcomes.len(),
            allowed,
            rejected,
        }
    }
}

/// `op` applied `n` times to the model, one after another.
pub(crate) fn on_model(model: &mut Model, op: &Op, n: usize) -> Vec<Outcome> {
    (0..n).map(|_| model.apply(op)).collect()
}

/// `op` called by `n` threads released together on the reference; one after another when
/// the build's `sync` is a controlled scheduler's (which runs no real threads outside it).
pub(crate) fn on_threads(reference: &TokenBucket, op: &Op, n: usize) -> Vec<Outcome> {
    if cfg!(any(loom, feature = "shuttle")) {
        return (0..n).map(|_| op.run_on(reference)).collect();
    }
    let barrier = std::sync::Barrier::new(n);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    op.run_on(reference)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// `op` made `n` times on any design, one after another (a contrast or a learner's design).
pub(crate) fn on_design(design: &dyn Limiter, op: &Op, n: usize) -> Vec<Outcome> {
    (0..n).map(|_| op.run_on(design)).collect()
}

/// Whether two lists hold the same outcomes, in any order.
pub(crate) fn same_multiset(a: &[Outcome], b: &[Outcome]) -> bool {
    fn count(list: &[Outcome]) -> HashMap<&Outcome, usize> {
        let mut m = HashMap::new();
        for o in list {
            *m.entry(o).or_default() += 1;
        }
        m
    }
    a.len() == b.len() && count(a) == count(b)
}
