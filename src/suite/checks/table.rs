use serde::Serialize;

use crate::suite::host::subject::Subject;

use crate::suite::checks::arithmetic;
use crate::suite::checks::concurrency;
use crate::suite::checks::examples;
use crate::suite::checks::lesson_fixtures;
use crate::suite::checks::properties;
use crate::suite::core::failure::Failure;
use crate::Mistake;
use crate::{Invariant, Requirement};

/// The kind of evidence a check gathers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A fixed scenario from the seed or a requirement's edge cases.
    Scenario,
    /// Generated operation sequences compared with the specification, shrunk on failure.
    Property,
    /// Real threads; histories checked for linearizability.
    Concurrency,
}

/// What a check guards and how it is graded. The `name` is the stable id: it is the test
/// function's name in [`conformance_suite!`](crate::conformance_suite), the filter that
/// reruns it, and its name in reports.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CheckInfo {
    /// The stable id, e.g. `r1_fractional_credit_is_kept`.
    pub name: &'static str,
    /// The requirement it guards.
    pub requirement: Requirement,
    /// The invariant it guards, if one.
    pub invariant: Option<Invariant>,
    /// One line: what a pass means.
    pub guards: &'static str,
    /// The seed mistake a failure most resembles, unless the failure names a better one.
    pub mistake: Option<Mistake>,
    /// The kind of evidence.
    pub kind: Kind,
    /// Points in a graded report.
    pub points: u32,
}

/// The check list, written once: calls `$crate::__suite_checks_apply!` with the list and
/// `[$mode]`, which expands it as the [`CHECKS`] table and dispatcher (`[table]`, inside this
/// module) or as one `#[test]` per check for a design (`[tests Type]`, inside
/// [`conformance_suite!`](crate::conformance_suite)). Each line is
/// `cNN name: requirement, invariant, mistake, kind, points, module, "what a pass means";`,
/// where `cNN` is the check's place in the suite: each test is expanded in a module of that
/// name, so that test names (`c01::seed_trace_table`) sort in suite order.
#[doc(hidden)]
#[macro_export]
macro_rules! __suite_checks {
    ($($mode:tt)*) => {
        $crate::__suite_checks_apply! { [$($mode)*]
            c01 seed_trace_table: R1, Some(I1), Some(DroppedFraction), Scenario, 2, examples,
                "the seed's trace table: burst, rejection with retry 500000000, half a token kept, admission at 500 ms";
            c02 seed_burst_then_retry: R1, Some(I1), Some(RetryEstimate), Scenario, 2, examples,
                "worked example 1: capacity 10, rate 2, cost 10 then 1 at t=0 gives retry 500000000";
            c03 seed_cutover_one_token: R4, Some(I4), Some(RetroactiveRate), Scenario, 2, examples,
                "worked example 2: one token at cutover, not two or twenty; one more by 0.75 s";
            c04 seed_change_exercise: R1, Some(I1), Some(DroppedFraction), Scenario, 2, examples,
                "change exercise: capacity 1, rate 3 first passes at 333333334 ns, not 333333333";
            c05 r1_new_key_starts_full: R1, Some(I1), None, Scenario, 1, examples,
                "a key seen for the first time starts with the full capacity";
            c06 r1_boundaries_are_exact: R1, Some(I1), Some(DroppedFraction), Scenario, 1, examples,
                "499999999 ns at rate 2 is not a token; 500000000 ns is";
            c07 r1_fractional_credit_is_kept: R1, Some(I1), Some(DroppedFraction), Scenario, 1, examples,
                "rejections keep fractional credit exactly (checks every 250 ms at rate 2 do pass)";
            c08 r1_no_burst_across_a_second_boundary: R1, Some(I1), Some(WindowReset), Scenario, 1, examples,
                "ten just before a second boundary and ten just after do not all pass";
            c09 r1_refill_stops_at_capacity: R1, Some(I1), None, Scenario, 1, examples,
                "a long idle period banks at most the capacity";
            c10 r1_retry_after_is_a_ceiling: R1, None, Some(RetryEstimate), Scenario, 1, examples,
                "retry_after_nanos is the exact ceiling and saturates at MAX_QUANTITY";
            c11 r1_whole_tokens_are_floored: R1, None, Some(DroppedFraction), Scenario, 1, examples,
                "whole_tokens is the floor of the exact balance";
            c12 r1_invalid_input_is_refused: R1, None, Some(InputValidation), Scenario, 1, examples,
                "blank keys (Java's white space) and impossible costs are refused, the key first; other keys are served";
            c13 r1_errors_change_nothing: R1, None, Some(MutationBeforeValidation), Scenario, 1, examples,
                "a refused call changes no balance, no observed time and no key";
            c14 r1_time_reversal_is_refused: R1, Some(I1), Some(StaleTime), Scenario, 1, examples,
                "every method refuses a time below the observed time; equal times are fine";
            c15 r1_errors_win_in_order: R1, None, Some(MutationBeforeValidation), Scenario, 1, examples,
                "when several errors apply: key, then cost, then time, then key capacity; time before version";
            c16 r1_extremes_are_exact: R1, Some(I1), Some(UncheckedFixedPoint), Scenario, 1, examples,
                "MAX_QUANTITY capacity, rate and cost and times near u64::MAX come out exactly";
            c17 r3_key_capacity_is_enforced: R3, Some(I3), Some(UntrackedKeys), Scenario, 1, examples,
                "at max_keys a new key gets KeyCapacityReached and existing keys keep working";
            c18 r3_evict_full_drops_only_full_buckets: R3, Some(I3), Some(IdleEviction), Scenario, 2, examples,
                "evict_full keeps depleted keys (0.5 s) and drops full ones (5.5 s)";
            c19 r3_eviction_makes_room: R3, Some(I3), Some(IdleEviction), Scenario, 1, examples,
                "after evicting a full key a new key fits; a refilled key comes back full";
            c20 r3_zero_max_keys_is_refused: R3, Some(I3), Some(UntrackedKeys), Scenario, 1, examples,
                "new(policy, 0) is InvalidMaxKeys and a new limiter tracks no keys";
            c21 r4_cutover_refills_under_the_old_rate: R4, Some(I4), Some(RetroactiveRate), Scenario, 2, examples,
                "credit before a cutover is earned at the old rate, faster or slower";
            c22 r4_cutover_clamps_and_never_tops_up: R4, Some(I4), Some(CapacityTopUp), Scenario, 2, examples,
                "a capacity increase grants nothing, a decrease clamps, a spent bucket stays spent";
            c23 r4_new_keys_start_at_the_new_capacity: R4, Some(I4), None, Scenario, 1, examples,
                "keys first seen after a cutover start at the new capacity; costs are checked against it";
            c24 r4_stale_versions_are_refused: R4, Some(I4), Some(UnguardedVersion), Scenario, 2, examples,
                "stale expected versions and non-increasing next versions are refused";
            c25 r1_refill_in_two_steps_equals_one: R1, Some(I1), Some(DroppedFraction), Property, 2, arithmetic,
                "quickcheck: a rejected call in between changes no later outcome (one long refill equals two short ones)";
            c26 r1_retry_after_is_tight: R1, None, Some(RetryEstimate), Property, 2, arithmetic,
                "quickcheck: at now + retry the request passes with no competitor; at now + retry - 1 it does not";
            c27 r1_whole_tokens_floor_the_balance: R1, Some(I1), Some(DroppedFraction), Property, 1, arithmetic,
                "quickcheck: whole_tokens is floor(balance / 10⁹) of a balance derived from first principles";
            c28 r1_random_admissions_match_the_model: R1, Some(I1), None, Property, 3, properties,
                "proptest: random allow sequences over a few keys agree with the specification step by step";
            c29 r3_random_evictions_match_the_model: R3, Some(I3), Some(IdleEviction), Property, 3, properties,
                "proptest: random allow / evict_full / key_count sequences under a small key bound agree with the specification";
            c30 r4_random_cutovers_match_the_model: R4, Some(I4), None, Property, 3, properties,
                "proptest: random sequences with policy cutovers agree with the specification";
            c31 i1_extreme_sequences_stay_exact: R1, Some(I1), Some(UncheckedFixedPoint), Property, 2, properties,
                "proptest: sequences at MAX_QUANTITY and near u64::MAX agree with the specification and stay within capacity";
            c32 r2_twenty_contenders_ten_pass: R2, Some(I2), Some(DoubleSpend), Concurrency, 3, concurrency,
                "twenty threads (three under loom) spend a token each from a full bucket of ten (two): exactly that many pass";
            c33 i2_each_cost_is_deducted_once: R2, Some(I2), Some(DoubleSpend), Concurrency, 2, concurrency,
                "threads spending mixed costs at one instant: admitted costs add up to what the bucket lost";
            c34 i3_concurrent_new_keys_respect_max_keys: R3, Some(I3), Some(UntrackedKeys), Concurrency, 2, concurrency,
                "threads racing to create keys: exactly max_keys succeed";
            c35 r3_eviction_never_undoes_a_spend: R3, Some(I3), Some(SplitEviction), Concurrency, 2, concurrency,
                "evict_full racing spends on many full keys never drops a bucket a spend emptied in between";
            c36 r4_cutover_never_undoes_a_spend: R4, Some(I4), Some(SplitCutover), Concurrency, 2, concurrency,
                "replace_policy racing spends on many keys never publishes balances read before a spend";
            c37 r2_concurrent_histories_linearize: R2, Some(I2), Some(DoubleSpend), Concurrency, 4, concurrency,
                "the last token contended, times across keys, random allow / evict_full / replace_policy: every history linearizes";
            c38 r1_lesson_fixtures_replay: R1, Some(I1), None, Scenario, 1, lesson_fixtures,
                "the lesson's verified fixtures of refill, boundaries, errors and extremes replay step by step, states included";
            c39 r3_lesson_fixtures_replay: R3, Some(I3), None, Scenario, 1, lesson_fixtures,
                "the lesson's verified fixtures of eviction and the key bound replay step by step, states included";
            c40 r4_lesson_fixtures_replay: R4, Some(I4), None, Scenario, 1, lesson_fixtures,
                "the lesson's verified fixtures of policy cutover replay step by step, states included";
        }
    };
}

/// The expansions of [`__suite_checks!`]; not for direct use.
#[doc(hidden)]
#[macro_export]
macro_rules! __suite_checks_apply {
    ([table] $( $ordinal:ident $name:ident: $req:ident, $inv:expr, $mistake:expr, $kind:ident, $points:literal, $module:ident, $guards:literal; )*) => {
        /// Every check, in suite order (the order reports list them in).
        pub const CHECKS: &[CheckInfo] = &[
            $( CheckInfo {
                name: stringify!($name),
                requirement: Requirement::$req,
                invariant: $inv,
                guards: $guards,
                mistake: $mistake,
                kind: Kind::$kind,
                points: $points,
            }, )*
        ];

        /// Runs the check called `name` on `L`; `None` when there is no such check.
        pub(crate) fn dispatch(subject: Subject, name: &str) -> Option<Result<(), Failure>> {
            match name {
                $( stringify!($name) => Some($module::$name(subject)), )*
                _ => None,
            }
        }
    };
    ([tests $design:ty] $( $ordinal:ident $name:ident: $req:ident, $inv:expr, $mistake:expr, $kind:ident, $points:literal, $module:ident, $guards:literal; )*) => {
        $(
            #[doc = concat!("Check ", stringify!($ordinal), " of the suite.")]
            mod $ordinal {
                #[allow(unused_imports)]
                use super::*;
                #[doc = $guards]
                #[test]
                fn $name() {
                    $crate::_macro_support::run::<$design>(stringify!($name), module_path!());
                }
            }
        )*
    };
}

use Invariant::*;
use Mistake::*;

__suite_checks!(table);

impl CheckInfo {
    /// The name of this check's test in a [`conformance_suite!`](crate::conformance_suite)
    /// expansion: `cNN::name`, `NN` its place in the suite from `01`.
    pub fn test_name(&self) -> String {
        let place = CHECKS
            .iter()
            .position(|c| c.name == self.name)
            .map_or(0, |i| i + 1);
        format!("c{place:02}::{}", self.name)
    }
}

/// The check called `name`.
pub fn find(name: &str) -> Option<&'static CheckInfo> {
    CHECKS.iter().find(|c| c.name == name)
}
