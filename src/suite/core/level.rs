//! The seed's levels, "Engineer → Senior → Staff", as the card grades them.
//!
//! The seed spells out what the first level implements ("Implement correct fractional refill
//! and explicit input behavior. Executed: token bucket and fixed-window comparison, weighted
//! costs, exact boundaries and overflow-safe arithmetic."): that is R1. It names the other
//! two levels without their text; their share of the problem statement ("It must atomically
//! refill and consume tokens for concurrent callers, preserve fractional credit, bound
//! tracked-key memory and change policy without granting a fresh budget to existing
//! callers") is this crate's reading: the shared-state rules, R2 and R3, for Senior, and the
//! versioned cutover, R4, for Staff. A level is reached when every check of it and of every
//! level before it passes.
use crate::Requirement;

/// One of the seed's three levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Exact fractional refill and explicit input behavior (R1).
    Engineer,
    /// Atomic admission for concurrent callers and bounded keys with safe cleanup (R2, R3).
    Senior,
    /// Versioned policy cutover that grants no fresh budget (R4).
    Staff,
}

impl Level {
    /// The levels in the seed's order.
    pub const ALL: [Level; 3] = [Level::Engineer, Level::Senior, Level::Staff];

    /// The level's name, as the seed writes it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Engineer => "Engineer",
            Level::Senior => "Senior",
            Level::Staff => "Staff",
        }
    }

    /// What the level is expected to get right, in the seed's words.
    pub fn expects(self) -> &'static str {
        match self {
            Level::Engineer => "correct fractional refill and explicit input behavior",
            Level::Senior => "atomic admission for concurrent callers, bounded keys",
            Level::Staff => "policy change without granting a fresh budget",
        }
    }

    /// The level whose checks include those of `requirement`.
    pub fn of(requirement: Requirement) -> Level {
        match requirement {
            Requirement::R1 => Level::Engineer,
            Requirement::R2 | Requirement::R3 => Level::Senior,
            Requirement::R4 => Level::Staff,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::checks::table::CHECKS;

    #[test]
    fn every_level_grades_some_checks_and_every_check_has_one_level() {
        for level in Level::ALL {
            assert!(
                CHECKS.iter().any(|c| Level::of(c.requirement) == level),
                "{level:?}"
            );
        }
        let engineer = CHECKS
            .iter()
            .filter(|c| Level::of(c.requirement) == Level::Engineer);
        assert!(engineer.clone().any(|c| c.name == "seed_change_exercise"));
        assert!(engineer.clone().all(|c| c.requirement == Requirement::R1));
    }
}
