//! Every design the project ships, with what the suite must conclude about it: the
//! reference and the specification pass, the correct alternatives pass, and each wrong design
//! fails first on the requirement it breaks, matched to the seed mistake it makes.
//!
//! The catalog is also how a failure is explained: a learner's failing trace is replayed on
//! every wrong design, and one that returns exactly the same outcomes names the mistake
//! (see [`resembling`]).
mod resemblance;

pub use resemblance::resembling;

use std::fmt;

use crate::model::ModelLimiter;
use crate::reference::{alternatives, mistakes, TokenBucket};
use crate::suite::{grade, Mistake, Report, Requirement};
use crate::{LimitError, Limiter, Policy};

/// What a design is in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The exact reference design.
    Reference,
    /// The executable specification, run as a limiter.
    Specification,
    /// A correct design built differently.
    Correct,
    /// A deliberately wrong design.
    Wrong {
        /// The requirement its first failed check must guard.
        breaks: Requirement,
        /// The seed mistake it makes.
        mistake: Mistake,
    },
}

/// One catalogued design.
pub struct Design {
    /// The type's name, e.g. `SplitReadWrite`.
    pub name: &'static str,
    /// What the suite must conclude.
    pub role: Role,
    build: fn(Policy, usize) -> Result<Box<dyn Limiter>, LimitError>,
    grade: fn() -> Report,
}

impl fmt::Debug for Design {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Design")
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Design {
    /// A fresh instance behind a trait object.
    ///
    /// # Errors
    ///
    /// Whatever the design's `new` returns.
    pub fn build(&self, policy: Policy, max_keys: usize) -> Result<Box<dyn Limiter>, LimitError> {
        (self.build)(policy, max_keys)
    }

    /// Runs the whole suite on it.
    pub fn grade(&self) -> Report {
        (self.grade)()
    }

    /// `true` for the reference, the specification and the correct alternatives.
    pub fn should_pass(&self) -> bool {
        !matches!(self.role, Role::Wrong { .. })
    }
}

fn boxed<L: Limiter>(policy: Policy, max_keys: usize) -> Result<Box<dyn Limiter>, LimitError> {
    L::new(policy, max_keys).map(|l| Box::new(l) as Box<dyn Limiter>)
}

macro_rules! designs {
    ($( $path:path => $name:ident: $role:expr; )*) => {
        /// Every catalogued design: reference, specification, correct alternatives, then the
        /// wrong designs.
        pub static DESIGNS: &[Design] = &[
            $( Design {
                name: stringify!($name),
                role: $role,
                build: boxed::<$path>,
                grade: grade::<$path>,
            }, )*
        ];
    };
}

const fn wrong(breaks: Requirement, mistake: Mistake) -> Role {
    Role::Wrong { breaks, mistake }
}

use Mistake::*;
use Requirement::*;

designs! {
    TokenBucket => TokenBucket: Role::Reference;
    ModelLimiter => ModelLimiter: Role::Specification;
    alternatives::RwLockBucket => RwLockBucket: Role::Correct;
    alternatives::LazyMigration => LazyMigration: Role::Correct;
    alternatives::ShardedLocks => ShardedLocks: Role::Correct;
    alternatives::CheckedU64Bucket => CheckedU64Bucket: Role::Correct;
    mistakes::FixedWindowBucket => FixedWindowBucket: wrong(R1, WindowReset);
    mistakes::WholeTokenRefill => WholeTokenRefill: wrong(R1, DroppedFraction);
    mistakes::RejectionForgetsCredit => RejectionForgetsCredit: wrong(R1, DroppedFraction);
    mistakes::NewKeyStartsEmpty => NewKeyStartsEmpty: wrong(R1, NewKeyNotFull);
    mistakes::FloorRetryEstimate => FloorRetryEstimate: wrong(R1, RetryEstimate);
    mistakes::CeilWholeTokens => CeilWholeTokens: wrong(R1, DroppedFraction);
    mistakes::OverflowingUnits => OverflowingUnits: wrong(R1, UncheckedFixedPoint);
    mistakes::AcceptsStaleTime => AcceptsStaleTime: wrong(R1, StaleTime);
    mistakes::ErrorMutatesState => ErrorMutatesState: wrong(R1, MutationBeforeValidation);
    mistakes::WrongErrorOrder => WrongErrorOrder: wrong(R1, MutationBeforeValidation);
    mistakes::RustWhitespaceKeys => RustWhitespaceKeys: wrong(R1, InputValidation);
    mistakes::SplitReadWrite => SplitReadWrite: wrong(R2, DoubleSpend);
    mistakes::LruEviction => LruEviction: wrong(R3, IdleEviction);
    mistakes::UnboundedKeys => UnboundedKeys: wrong(R3, UntrackedKeys);
    mistakes::SilentGrantAtCapacity => SilentGrantAtCapacity: wrong(R3, UntrackedKeys);
    mistakes::ZeroMeansUnbounded => ZeroMeansUnbounded: wrong(R3, UntrackedKeys);
    mistakes::RacyEvictFull => RacyEvictFull: wrong(R3, SplitEviction);
    mistakes::RetroactiveRate => RetroactiveRate: wrong(R4, RetroactiveRate);
    mistakes::TopUpOnCutover => TopUpOnCutover: wrong(R4, CapacityTopUp);
    mistakes::NoClampOnDecrease => NoClampOnDecrease: wrong(R4, CapacityTopUp);
    mistakes::UnguardedVersion => UnguardedVersion: wrong(R4, UnguardedVersion);
    mistakes::ResetOnCutover => ResetOnCutover: wrong(R4, CapacityTopUp);
    mistakes::RefillUnderNewCeiling => RefillUnderNewCeiling: wrong(R4, CapacityTopUp);
    mistakes::RacyCutover => RacyCutover: wrong(R4, SplitCutover);
}

/// The catalogued design called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Design> {
    DESIGNS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}
