use ratelimit_lab_api::{LimitError, Limiter, Policy};
use serde::{Deserialize, Serialize};

use crate::{Model, Op, Outcome};

/// A limiter's starting configuration and the operations applied to it, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The policy the limiter is built with.
    pub policy: Policy,
    /// The bound on tracked keys.
    pub max_keys: usize,
    /// The operations, applied one after another.
    pub ops: Vec<Op>,
}

impl Trace {
    /// The outcomes the specification gives for every operation, in order.
    ///
    /// # Errors
    ///
    /// [`LimitError::InvalidMaxKeys`] when `max_keys` is `0` (no limiter can be built).
    pub fn expected(&self) -> Result<Vec<Outcome>, LimitError> {
        let mut model = Model::new(self.policy, self.max_keys)?;
        Ok(self.ops.iter().map(|op| model.apply(op)).collect())
    }

    /// Runs every operation, in order, on `limiter` (built by the caller from `policy` and
    /// `max_keys`) and returns what each returned.
    pub fn run_on<L: Limiter + ?Sized>(&self, limiter: &L) -> Vec<Outcome> {
        self.ops.iter().map(|op| op.run_on(limiter)).collect()
    }
}
