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
/// For every check in [`suite::CHECKS`](crate::suite::CHECKS), a module named by its place in
/// the suite (`c01`, `c02`, … one per check) holding one test named by the check, so that test names sort,
/// and `cargo test` prints failures, in suite order:
///
/// ```ignore
/// mod c07 {
///     use super::*;
///     #[test]
///     fn r1_fractional_credit_is_kept() {
///         ratelimit_lab::_macro_support::run::<MyLimiter>("r1_fractional_credit_is_kept", module_path!());
///     }
/// }
/// ```
///
/// Each test runs its check isolated (own thread, time limit, panics caught), fails with a
/// full explanation, and, when `RATELIMIT_LAB_REPORT_DIR` is set, adds its result to the
/// graded reports there. Run one check with `cargo test -- r1_fractional_credit_is_kept` (or
/// `cargo test -- --exact c07::r1_fractional_credit_is_kept`).
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
        $crate::__suite_checks!(tests $design);
    };
}
