//! The suite run the way a learner runs it: one macro line per design. The reference and the
//! specification itself must pass every check.
use ratelimit_lab::model::ModelLimiter;
use ratelimit_lab::reference::TokenBucket;

ratelimit_lab::conformance_suite!(reference => TokenBucket);
ratelimit_lab::conformance_suite!(specification => ModelLimiter);

#[test]
fn the_macro_expands_to_every_check_in_suite_order() {
    let listed: Vec<&str> = ratelimit_lab::suite::CHECKS
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(reference::CONFORMANCE_CHECKS, listed.as_slice());
}
