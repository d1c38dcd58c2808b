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
