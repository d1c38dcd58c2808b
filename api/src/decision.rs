use serde::{Deserialize, Serialize};

/// What one admission decided: an observation, not a balance of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Decision {
    /// `true` when the whole cost was deducted.
    pub allowed: bool,
    /// The balance left after the decision, floored to whole tokens (the balance itself keeps
    /// its fraction). Never above the policy's capacity.
    pub whole_tokens: u64,
    /// `0` when allowed. Otherwise the least number of nanoseconds after which the same
    /// request would pass under an unchanged policy with no competing caller:
    /// `⌈(cost × UNITS_PER_TOKEN − balance) / tokens_per_second⌉`, saturating at
    /// [`MAX_QUANTITY`](crate::MAX_QUANTITY). An estimate, not a reservation.
    pub retry_after_nanos: u64,
}
