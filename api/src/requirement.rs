use std::fmt;

use serde::Serialize;

/// A requirement of the seed's contract; every check guards one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Requirement {
    /// R1: a request is admitted only if the refilled budget covers its entire cost.
    R1,
    /// R2: concurrent requests share one atomic refill-and-consume decision.
    R2,
    /// R3: key count stays at or below `max_keys` without resetting depleted budgets.
    R3,
    /// R4: policy change is version-guarded and preserves accumulated credit.
    R4,
}

/// An invariant of the seed's contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Invariant {
    /// I1: every bucket holds between `0` and `capacity × 10⁹` units.
    I1,
    /// I2: each accepted cost is deducted once from the state all contenders share.
    I2,
    /// I3: at most `max_keys` keys; eviction grants nothing a kept full bucket would not.
    I3,
    /// I4: at cutover the old policy earns all earlier credit; budgets are clamped, never
    /// replenished by a capacity increase.
    I4,
}

impl Requirement {
    /// The seed's wording.
    pub fn text(self) -> &'static str {
        match self {
            Requirement::R1 => {
                "A request is admitted only if the refilled budget covers its entire cost."
            }
            Requirement::R2 => "Concurrent requests share one atomic refill-and-consume decision.",
            Requirement::R3 => {
                "Key count stays at or below maxKeys without resetting depleted budgets."
            }
            Requirement::R4 => "Policy change is version-guarded and preserves accumulated credit.",
        }
    }

    /// What a design must do to meet the requirement, for a failure that no catalogued
    /// mistake explains: where to look, in the contract's terms.
    pub fn hint(self) -> &'static str {
        match self {
            Requirement::R1 => {
                "refill exactly (elapsed ns × tokens per second units, 10^9 units a token), clamp \
                 to capacity, admit only when the whole cost is covered and deduct it; report \
                 floor(units / 10^9) whole tokens and, when refused, a retry of ceil(missing units \
                 / rate) ns; validate key, cost and time before any change. Compare the failing \
                 step's numbers with these."
            }
            Requirement::R2 => {
                "make refill, compare, deduct and save one critical section: nothing another \
                 caller does may land between reading a balance and writing it back."
            }
            Requirement::R3 => {
                "track at most max_keys keys, refuse a new key beyond them with \
                 KeyCapacityReached (never admit it untracked), and let evict_full remove only \
                 buckets that are full at its time, refilled under the current policy."
            }
            Requirement::R4 => {
                "accept a policy only when expected_version is the current version and the new \
                 version is higher; refill every bucket under the old rate up to the cutover \
                 time, then clamp it to the new capacity, never top it up; publish the new \
                 policy and the buckets together."
            }
        }
    }
}

impl Invariant {
    /// The seed's wording.
    pub fn text(self) -> &'static str {
        match self {
            Invariant::I1 => "For every bucket, 0 <= fixed-point units <= capacity × 1,000,000,000.",
            Invariant::I2 => "Each accepted cost is deducted once from the same synchronized state used by all contenders.",
            Invariant::I3 => "The map contains at most maxKeys; eviction grants no extra tokens compared with keeping a full bucket.",
            Invariant::I4 => "At policy cutover, old policy earns all pre-cutover credit; existing budgets are clamped, never replenished merely by increasing capacity.",
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
