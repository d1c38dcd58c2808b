/// Expands to one `#[test]` per conformance check for a [`Limiter`](crate::Limiter) type.
///
/// Write it at module level in a test file, with the design's type in scope:
///
/// ```ignore
/// use my_crate::MyLimiter;
/// ratelimit_lab::conformance_suite!(MyLimiter);
/// ```
///
/// Several designs in one file each get their own module:
///
/// ```ignore
/// ratelimit_lab::conformance_suite!(first => MyLimiter);
/// ratelimit_lab::conformance_suite!(second => MyOtherLimiter);
/// ```
///
/// # Expansion
///
/// For every check in [`suite::CHECKS`](crate::suite::CHECKS), in suite order:
///
/// ```ignore
/// #[test]
/// fn r1_fractional_credit_is_kept() {
///     ratelimit_lab::_macro_support::run::<MyLimiter>("r1_fractional_credit_is_kept", module_path!());
/// }
/// ```
///
/// Each test runs its check isolated (own thread, time limit, panics caught), fails with a
/// full explanation, and, when `RATELIMIT_LAB_REPORT_DIR` is set, adds its result to the
/// graded reports there. Run one check with `cargo test -- --exact r1_fractional_credit_is_kept`.
#[macro_export]
macro_rules! conformance_suite {
    ($module:ident => $design:ty) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            $crate::conformance_suite!($design);
        }
    };
    ($design:ty) => {
        $crate::__conformance_tests!(
            $design;
            seed_trace_table,
            seed_burst_then_retry,
            seed_cutover_one_token,
            seed_change_exercise,
            r1_new_key_starts_full,
            r1_boundaries_are_exact,
            r1_fractional_credit_is_kept,
            r1_no_burst_across_a_second_boundary,
            r1_refill_stops_at_capacity,
            r1_retry_after_is_a_ceiling,
            r1_whole_tokens_are_floored,
            r1_invalid_input_is_refused,
            r1_errors_change_nothing,
            r1_time_reversal_is_refused,
            r1_errors_win_in_order,
            r1_extremes_are_exact,
            r3_key_capacity_is_enforced,
            r3_evict_full_drops_only_full_buckets,
            r3_eviction_makes_room,
            r3_zero_max_keys_is_refused,
            r4_cutover_refills_under_the_old_rate,
            r4_cutover_clamps_and_never_tops_up,
            r4_new_keys_start_at_the_new_capacity,
            r4_stale_versions_are_refused,
            r1_refill_in_two_steps_equals_one,
            r1_retry_after_is_tight,
            r1_whole_tokens_floor_the_balance,
            r1_random_admissions_match_the_model,
            r3_random_evictions_match_the_model,
            r4_random_cutovers_match_the_model,
            i1_extreme_sequences_stay_exact,
            r2_twenty_contenders_ten_pass,
            i2_each_cost_is_deducted_once,
            i3_concurrent_new_keys_respect_max_keys,
            r3_eviction_never_undoes_a_spend,
            r4_cutover_never_undoes_a_spend,
            r2_concurrent_histories_linearize,
        );
    };
}

/// The test functions behind [`conformance_suite!`]; not for direct use.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($design:ty; $($check:ident,)*) => {
        /// The checks this invocation expands to, in order.
        #[allow(dead_code)]
        pub(crate) const CONFORMANCE_CHECKS: &[&str] = &[$(stringify!($check)),*];
        $(
            #[test]
            fn $check() {
                $crate::_macro_support::run::<$design>(stringify!($check), module_path!());
            }
        )*
    };
}
