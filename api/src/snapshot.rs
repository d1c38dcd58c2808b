use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Policy;

/// A bucket as a design stores it: `units` of balance as of `last_nanos`, under the policy in
/// force.
///
/// `units` is at most `capacity × UNITS_PER_TOKEN` (invariant I1) and `last_nanos` is at most
/// the snapshot's `observed_nanos`. The balance at a later time `t` is
/// `min(capacity × UNITS_PER_TOKEN, units + (t − last_nanos) × tokens_per_second)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BucketState {
    /// Balance in fixed-point units (one token is `UNITS_PER_TOKEN` units).
    pub units: u128,
    /// The time, in nanoseconds, at which `units` was the balance.
    pub last_nanos: u64,
}

/// A consistent picture of a design's whole state, for white-box checks (I1, I3).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Snapshot {
    /// The policy in force.
    pub policy: Policy,
    /// The largest time a successful call has seen (`0` before any).
    pub observed_nanos: u64,
    /// Every tracked key and its bucket.
    pub buckets: BTreeMap<String, BucketState>,
}
