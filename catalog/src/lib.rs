//! The catalog: designs the conformance suite must judge, with the verdict it must reach.
//!
//! - [`alternatives`]: correct designs built differently from the reference (an `RwLock`
//!   map, lazy policy migration, per-key locks, `u64` whole-plus-fraction arithmetic, one
//!   owner thread behind a channel, GCRA arrival times, a snapshot dated at the observed
//!   time). The suite must accept each of them.
//! - [`mistakes`]: deliberately wrong designs, one planted flaw each, tied to the seed's words
//!   where the seed has them. The suite must reject each one, first on the [`Requirement`] it
//!   breaks, and name the [`Mistake`] it makes.
//!
//! This crate depends on the contract alone (`ratelimit-lab-api`). The harness runs the
//! suite on every design listed in [`DESIGNS`] and replays a learner's failing trace on the
//! wrong ones to diagnose it; [`for_each_design!`] hands the same list, with the types, to a
//! macro of the caller's, so that the list is written once.
#![deny(missing_docs, missing_debug_implementations)]

pub mod alternatives;
pub mod mistakes;

use std::fmt;

use ratelimit_lab_api::{LimitError, Limiter, Mistake, Policy, Requirement};

/// What the suite must conclude about a catalogued design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A correct design: it passes every check.
    Correct,
    /// A wrong design: it fails, first on a check guarding `breaks`, diagnosed as `mistake`.
    Wrong {
        /// The requirement its first failed check must guard.
        breaks: Requirement,
        /// The seed mistake it makes.
        mistake: Mistake,
    },
}

/// Builds a fresh instance of a design behind a trait object.
pub type Build = fn(Policy, usize) -> Result<Box<dyn Limiter>, LimitError>;

/// One catalogued design.
#[derive(Clone, Copy)]
pub struct Design {
    /// The type's name, e.g. `SplitReadWrite`.
    pub name: &'static str,
    /// What the suite must conclude.
    pub verdict: Verdict,
    /// A fresh instance: whatever the design's [`Limiter::new`] returns.
    pub build: Build,
}

impl fmt::Debug for Design {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Design")
            .field("name", &self.name)
            .field("verdict", &self.verdict)
            .finish_non_exhaustive()
    }
}

/// [`Limiter::new`] behind a trait object: a [`Build`] for any design type.
pub fn boxed<L: Limiter>(policy: Policy, max_keys: usize) -> Result<Box<dyn Limiter>, LimitError> {
    L::new(policy, max_keys).map(|l| Box::new(l) as Box<dyn Limiter>)
}

/// Calls `$callback! { … }` with every catalogued design, in catalog order (correct designs,
/// then wrong ones), one entry per design:
///
/// ```text
/// $crate::alternatives::RwLockBucket => RwLockBucket: Correct;
/// $crate::mistakes::SplitReadWrite => SplitReadWrite: Wrong(R2, DoubleSpend);
/// ```
///
/// that is, `path => Name: Correct;` or `path => Name: Wrong(Requirement, Mistake);`, where
/// the requirement and mistake are variant names of [`Requirement`] and [`Mistake`]. The
/// harness uses it to build a table that grades each type with the generic suite; this crate
/// uses it to build [`DESIGNS`].
#[macro_export]
macro_rules! for_each_design {
    ($callback:ident) => {
        $callback! {
            $crate::alternatives::RwLockBucket => RwLockBucket: Correct;
            $crate::alternatives::LazyMigration => LazyMigration: Correct;
            $crate::alternatives::ShardedLocks => ShardedLocks: Correct;
            $crate::alternatives::CheckedU64Bucket => CheckedU64Bucket: Correct;
            $crate::alternatives::OwnerThread => OwnerThread: Correct;
            $crate::alternatives::GcraBucket => GcraBucket: Correct;
            $crate::alternatives::ObservedTimeSnapshot => ObservedTimeSnapshot: Correct;
            $crate::mistakes::FixedWindowBucket => FixedWindowBucket: Wrong(R1, WindowReset);
            $crate::mistakes::WholeTokenRefill => WholeTokenRefill: Wrong(R1, DroppedFraction);
            $crate::mistakes::RejectionForgetsCredit => RejectionForgetsCredit: Wrong(R1, DroppedFraction);
            $crate::mistakes::NewKeyStartsEmpty => NewKeyStartsEmpty: Wrong(R1, NewKeyNotFull);
            $crate::mistakes::FloorRetryEstimate => FloorRetryEstimate: Wrong(R1, RetryEstimate);
            $crate::mistakes::CeilWholeTokens => CeilWholeTokens: Wrong(R1, DroppedFraction);
            $crate::mistakes::OverflowingUnits => OverflowingUnits: Wrong(R1, UncheckedFixedPoint);
            $crate::mistakes::AcceptsStaleTime => AcceptsStaleTime: Wrong(R1, StaleTime);
            $crate::mistakes::ErrorMutatesState => ErrorMutatesState: Wrong(R1, MutationBeforeValidation);
            $crate::mistakes::WrongErrorOrder => WrongErrorOrder: Wrong(R1, MutationBeforeValidation);
            $crate::mistakes::RustWhitespaceKeys => RustWhitespaceKeys: Wrong(R1, InputValidation);
            $crate::mistakes::SaturatedRetry => SaturatedRetry: Wrong(R1, RetryEstimate);
            $crate::mistakes::WholeCapacityAlwaysPasses => WholeCapacityAlwaysPasses: Wrong(R1, WindowReset);
            $crate::mistakes::SplitReadWrite => SplitReadWrite: Wrong(R2, DoubleSpend);
            $crate::mistakes::CheckThenDeduct => CheckThenDeduct: Wrong(R2, DoubleSpend);
            $crate::mistakes::RacyObservedTime => RacyObservedTime: Wrong(R2, SplitTimeCheck);
            $crate::mistakes::TornSnapshot => TornSnapshot: Wrong(R2, TornSnapshot);
            $crate::mistakes::LruEviction => LruEviction: Wrong(R3, IdleEviction);
            $crate::mistakes::UnboundedKeys => UnboundedKeys: Wrong(R3, UntrackedKeys);
            $crate::mistakes::SilentGrantAtCapacity => SilentGrantAtCapacity: Wrong(R3, UntrackedKeys);
            $crate::mistakes::ZeroMeansUnbounded => ZeroMeansUnbounded: Wrong(R3, UntrackedKeys);
            $crate::mistakes::RacyKeyBound => RacyKeyBound: Wrong(R3, SplitKeyBound);
            $crate::mistakes::RacyEvictFull => RacyEvictFull: Wrong(R3, SplitEviction);
            $crate::mistakes::RetroactiveRate => RetroactiveRate: Wrong(R4, RetroactiveRate);
            $crate::mistakes::TopUpOnCutover => TopUpOnCutover: Wrong(R4, CapacityTopUp);
            $crate::mistakes::NoClampOnDecrease => NoClampOnDecrease: Wrong(R4, CapacityTopUp);
            $crate::mistakes::UnguardedVersion => UnguardedVersion: Wrong(R4, UnguardedVersion);
            $crate::mistakes::ResetOnCutover => ResetOnCutover: Wrong(R4, BudgetReset);
            $crate::mistakes::RefillUnderNewCeiling => RefillUnderNewCeiling: Wrong(R4, CapacityTopUp);
            $crate::mistakes::RacyCutover => RacyCutover: Wrong(R4, SplitCutover);
            $crate::mistakes::StrictAdmission => StrictAdmission: Wrong(R1, RetryEstimate);
            $crate::mistakes::RetryIgnoresCredit => RetryIgnoresCredit: Wrong(R1, RetryEstimate);
            $crate::mistakes::FloorPlusOneRetry => FloorPlusOneRetry: Wrong(R1, RetryEstimate);
            $crate::mistakes::RetryOnAdmission => RetryOnAdmission: Wrong(R1, RetryEstimate);
            $crate::mistakes::RoundedWholeTokens => RoundedWholeTokens: Wrong(R1, DroppedFraction);
            $crate::mistakes::WholeTokensBeforeDeduction => WholeTokensBeforeDeduction: Wrong(R1, DroppedFraction);
            $crate::mistakes::RefillFromCreation => RefillFromCreation: Wrong(R1, WindowReset);
            $crate::mistakes::RejectionKeepsOldTime => RejectionKeepsOldTime: Wrong(R1, DroppedFraction);
            $crate::mistakes::ClampAfterSpend => ClampAfterSpend: Wrong(R1, WindowReset);
            $crate::mistakes::MillisecondRefill => MillisecondRefill: Wrong(R1, DroppedFraction);
            $crate::mistakes::NewKeyChargedTwice => NewKeyChargedTwice: Wrong(R1, NewKeyNotFull);
            $crate::mistakes::ZeroCostAccepted => ZeroCostAccepted: Wrong(R1, InputValidation);
            $crate::mistakes::OversizedCostRefused => OversizedCostRefused: Wrong(R1, InputValidation);
            $crate::mistakes::KeyCapacityBeforeTime => KeyCapacityBeforeTime: Wrong(R1, MutationBeforeValidation);
            $crate::mistakes::VersionBeforeTime => VersionBeforeTime: Wrong(R1, StaleTime);
            $crate::mistakes::RefusesEqualTime => RefusesEqualTime: Wrong(R1, StaleTime);
            $crate::mistakes::EvictKeepsObservedTime => EvictKeepsObservedTime: Wrong(R3, StaleTime);
            $crate::mistakes::EvictWithoutRefill => EvictWithoutRefill: Wrong(R3, IdleEviction);
            $crate::mistakes::EvictNearlyFull => EvictNearlyFull: Wrong(R3, IdleEviction);
            $crate::mistakes::EvictEmptyBuckets => EvictEmptyBuckets: Wrong(R3, IdleEviction);
            $crate::mistakes::OneKeyOverBound => OneKeyOverBound: Wrong(R3, UntrackedKeys);
            $crate::mistakes::NewKeyAtOldCapacity => NewKeyAtOldCapacity: Wrong(R4, NewKeyNotFull);
            $crate::mistakes::VersionMayEqual => VersionMayEqual: Wrong(R4, UnguardedVersion);
            $crate::mistakes::CutoverDropsCredit => CutoverDropsCredit: Wrong(R4, RetroactiveRate);
            $crate::mistakes::CutoverRefillsAtNewRate => CutoverRefillsAtNewRate: Wrong(R4, RetroactiveRate);
            $crate::mistakes::PerKeyTime => PerKeyTime: Wrong(R1, StaleTime);
            $crate::mistakes::RefillOnCutover => RefillOnCutover: Wrong(R4, BudgetReset);
            $crate::mistakes::RejectionRefillsBucket => RejectionRefillsBucket: Wrong(R1, WindowReset);
        }
    };
}

macro_rules! design_table {
    ($( $path:path => $name:ident: $verdict:ident $(($req:ident, $mistake:ident))?; )*) => {
        /// Every catalogued design, in catalog order: the correct alternatives, then the wrong
        /// designs.
        pub static DESIGNS: &[Design] = &[
            $( Design {
                name: stringify!($name),
                verdict: design_table!(@verdict $verdict $(($req, $mistake))?),
                build: boxed::<$path>,
            }, )*
        ];
    };
    (@verdict Correct) => { Verdict::Correct };
    (@verdict Wrong ($req:ident, $mistake:ident)) => {
        Verdict::Wrong { breaks: Requirement::$req, mistake: Mistake::$mistake }
    };
}

for_each_design!(design_table);

/// The catalogued design called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Design> {
    DESIGNS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}
