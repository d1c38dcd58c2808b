//! The design a check runs on, with its type erased.
//!
//! The suite's entry points are generic over the design ([`grade`](crate::suite::grade),
//! [`run_check`](crate::suite::run::isolation::run_check), the `conformance_suite!` tests), but the checks themselves
//! are not: each entry point turns its type into a [`Subject`] (how to build one instance
//! behind a `Box<dyn Limiter>`) and hands that to checks compiled once. A crate that grades
//! sixty designs, or a learner's crate that grades one, compiles the suite once rather than
//! once per design; a call through the trait object costs one indirect jump, nothing beside
//! what a check does around it.
use crate::{LimitError, Limiter, Policy};

/// Builds a fresh instance of a design, as [`Suspect::build`](crate::suite::diagnose::suspects::Suspect).
pub type Build = fn(Policy, usize) -> Result<Box<dyn Limiter>, LimitError>;

/// [`Build`] for a design type.
pub(crate) fn boxed<L: Limiter>(
    policy: Policy,
    max_keys: usize,
) -> Result<Box<dyn Limiter>, LimitError> {
    // Every instance the suite builds is watched: a call that never returns is named, and a
    // panic in its `Drop` is a failure of the check, not the end of the process.
    crate::suite::core::watch::Watched::<L>::new(policy, max_keys)
        .map(|l| Box::new(l) as Box<dyn Limiter>)
}

/// The design under test, as the checks see it: a way to build fresh instances.
#[derive(Clone, Copy)]
pub struct Subject {
    build: Build,
    /// The same design with each instance in a controlled execution of its own (loom's
    /// thread limit, see [`hosted`](crate::suite::host::hosted)).
    #[cfg(loom)]
    hosted: Build,
}

impl Subject {
    /// The design `L`.
    pub fn of<L: Limiter>() -> Subject {
        Subject {
            build: boxed::<L>,
            #[cfg(loom)]
            hosted: boxed::<crate::suite::host::hosted::Hosted<L>>,
        }
    }

    /// A fresh instance: what `L::new(policy, max_keys)` returns, boxed. A panic of `new`
    /// unwinds from here.
    ///
    /// # Errors
    ///
    /// Whatever the design's `new` returns.
    pub fn build(self, policy: Policy, max_keys: usize) -> Result<Box<dyn Limiter>, LimitError> {
        (self.build)(policy, max_keys)
    }

    /// How [`build`](Subject::build) is done, as a plain function (the diagnosis replays on it).
    pub(crate) fn builder(self) -> Build {
        self.build
    }

    /// The same design, each instance hosted in an execution of its own.
    #[cfg(loom)]
    pub(crate) fn hosted(self) -> Subject {
        Subject {
            build: self.hosted,
            hosted: self.hosted,
        }
    }
}

impl std::fmt::Debug for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Subject")
    }
}
