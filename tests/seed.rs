//! The Rate Limiter lesson, line by line: one test per worked example, trace-table row,
//! change exercise and "Test:" line, each run on the reference `TokenBucket` and on the
//! executable specification `ModelLimiter`, with the lesson's exact numbers.
//!
//! Every error case also checks that the error left the state exactly as it was.
//!
//! These tests drive the designs with real `std` threads, so they are compiled out when the
//! `sync` facade is routed to loom or shuttle.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::fmt::Debug;
use std::sync::{Arc, Barrier};
use std::thread;

use ratelimit_lab::{
    BucketState, Decision, LimitError, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN,
};
use ratelimit_lab_model::ModelLimiter;
use ratelimit_lab_reference::{FixedWindow, SlidingLog, TokenBucket};

/// Units in one token.
const UNIT: u128 = UNITS_PER_TOKEN as u128;
/// 250 ms, 0.5 s, 0.75 s, 5.5 s in nanoseconds.
const MS_250: u64 = 250_000_000;
const MS_500: u64 = 500_000_000;
const MS_750: u64 = 750_000_000;
const S_5_5: u64 = 5_500_000_000;

fn policy(version: u64, capacity: u64, tokens_per_second: u64) -> Policy {
    Policy::new(version, capacity, tokens_per_second).unwrap()
}

/// The lesson's policy: capacity 10, rate 2 tokens per second.
fn ten_at_two() -> Policy {
    policy(1, 10, 2)
}

fn decision(allowed: bool, whole_tokens: u64, retry_after_nanos: u64) -> Decision {
    Decision {
        allowed,
        whole_tokens,
        retry_after_nanos,
    }
}

fn allowed(whole_tokens: u64) -> Decision {
    decision(true, whole_tokens, 0)
}

fn rejected(whole_tokens: u64, retry_after_nanos: u64) -> Decision {
    decision(false, whole_tokens, retry_after_nanos)
}

/// One design under test, named in every failure message.
struct Design<'a> {
    name: &'static str,
    limiter: &'a dyn Limiter,
}

impl Design<'_> {
    /// Asserts that `allow(key, cost, now)` returns exactly `expected`.
    fn allow(&self, key: &str, cost: u64, now: u64, expected: Decision) {
        assert_eq!(
            self.limiter.allow(key, cost, now),
            Ok(expected),
            "{}: allow({key:?}, {cost}, {now})",
            self.name
        );
    }

    fn evict_full(&self, now: u64, removed: usize) {
        assert_eq!(
            self.limiter.evict_full(now),
            Ok(removed),
            "{}: evict_full({now})",
            self.name
        );
    }

    fn replace(&self, next: Policy, expected_version: u64, now: u64) {
        assert_eq!(
            self.limiter.replace_policy(next, expected_version, now),
            Ok(()),
            "{}: replace_policy({next:?}, {expected_version}, {now})",
            self.name
        );
    }

    fn snapshot(&self) -> Snapshot {
        self.limiter
            .snapshot()
            .unwrap_or_else(|| panic!("{}: no snapshot", self.name))
    }

    /// The stored bucket of `key`.
    fn bucket(&self, key: &str) -> BucketState {
        *self
            .snapshot()
            .buckets
            .get(key)
            .unwrap_or_else(|| panic!("{}: {key:?} is not tracked", self.name))
    }

    fn assert_bucket(&self, key: &str, units: u128, last_nanos: u64) {
        assert_eq!(
            self.bucket(key),
            BucketState { units, last_nanos },
            "{}: bucket {key:?}",
            self.name
        );
    }

    fn assert_keys(&self, keys: usize) {
        assert_eq!(self.limiter.key_count(), keys, "{}: key_count", self.name);
        assert_eq!(
            self.snapshot().buckets.len(),
            keys,
            "{}: snapshot",
            self.name
        );
    }

    /// Asserts that `call` fails with exactly `expected` and changes no state.
    fn rejects<T: Debug + PartialEq>(
        &self,
        call: impl FnOnce(&dyn Limiter) -> Result<T, LimitError>,
        expected: LimitError,
    ) {
        let before = self.snapshot();
        let keys = self.limiter.key_count();
        assert_eq!(call(self.limiter), Err(expected), "{}", self.name);
        assert_eq!(
            self.snapshot(),
            before,
            "{}: an error changed the state",
            self.name
        );
        assert_eq!(self.limiter.key_count(), keys, "{}: key_count", self.name);
    }
}

/// Runs `check` on a fresh reference `TokenBucket`, then on a fresh `ModelLimiter`, both
/// built from `policy` and `max_keys`.
fn both(policy: Policy, max_keys: usize, check: impl Fn(&Design<'_>)) {
    let reference = TokenBucket::new(policy, max_keys).unwrap();
    check(&Design {
        name: "reference TokenBucket",
        limiter: &reference,
    });
    let model = ModelLimiter::new(policy, max_keys).unwrap();
    check(&Design {
        name: "model",
        limiter: &model,
    });
}

// ---------------------------------------------------------------------------------------
// Worked examples
// ---------------------------------------------------------------------------------------

/// "Input: capacity=10, rate=2/sec. At t=0 request cost 10, then cost 1. Outcome: First
/// allowed with zero tokens. Second rejected with retryAfterNanos=500000000."
#[test]
fn worked_example_1_burst_then_retry_after_500000000() {
    both(ten_at_two(), 100, |d| {
        d.allow("k", 10, 0, allowed(0));
        d.allow("k", 1, 0, rejected(0, 500_000_000));
        // "refill restores one token every half-second"
        d.allow("k", 1, MS_500, allowed(0));
    });
}

/// "Input: Empty bucket, old rate=2/sec; change to rate=4/sec, capacity=20 at t=0.5sec.
/// Outcome: Existing key has one token at cutover, not two or twenty. At t=0.75sec it earns
/// one more under the new rate."
#[test]
fn worked_example_2_cutover_one_token_then_one_more_under_new_rate() {
    both(ten_at_two(), 100, |d| {
        d.allow("k", 10, 0, allowed(0));
        d.replace(policy(2, 20, 4), 1, MS_500);
        // One token: not two (new rate applied retroactively) nor twenty (topped up).
        d.assert_bucket("k", UNIT, MS_500);
        assert_eq!(d.snapshot().policy, policy(2, 20, 4), "{}", d.name);
        d.allow("k", 2, MS_500, rejected(1, 250_000_000));
        // 0.25 s at 4 tokens/s is one more token: two in all.
        d.allow("k", 2, MS_750, allowed(0));
    });
}

// ---------------------------------------------------------------------------------------
// The trace table "Burst, rejection and fractional refill", one test per row
// ---------------------------------------------------------------------------------------

/// The rows before `row`, each asserted.
fn trace_rows_before(d: &Design<'_>, row: usize) {
    if row > 1 {
        d.allow("k", 10, 0, allowed(0));
    }
    if row > 2 {
        d.allow("k", 1, 0, rejected(0, 500_000_000));
    }
    if row > 3 {
        d.allow("k", 1, MS_250, rejected(0, 250_000_000));
    }
}

/// "At 0 ns consume 10 | Allowed; 0 tokens remain | Budget never negative"
#[test]
fn trace_row_1_burst_of_ten_leaves_zero() {
    both(ten_at_two(), 100, |d| {
        trace_rows_before(d, 1);
        d.allow("k", 10, 0, allowed(0));
        d.assert_bucket("k", 0, 0);
    });
}

/// "At 0 ns consume 1 | Rejected; retry after 500000000 ns | No token spent on rejection"
#[test]
fn trace_row_2_rejection_spends_nothing_retry_500000000() {
    both(ten_at_two(), 100, |d| {
        trace_rows_before(d, 2);
        let before = d.snapshot();
        d.allow("k", 1, 0, rejected(0, 500_000_000));
        assert_eq!(
            d.snapshot(),
            before,
            "{}: a rejection at 0 ns spent",
            d.name
        );
    });
}

/// "At 250000000 ns consume 1 | Rejected; half a token accumulated | Fractional credit
/// retained exactly"
#[test]
fn trace_row_3_fractional_credit_retained() {
    both(ten_at_two(), 100, |d| {
        trace_rows_before(d, 3);
        d.allow("k", 1, MS_250, rejected(0, 250_000_000));
        d.assert_bucket("k", UNIT / 2, MS_250);
    });
}

/// "At 500000000 ns consume 1 | Allowed; 0 tokens remain | Refill and consumption form one
/// atomic decision"
#[test]
fn trace_row_4_refill_and_consume_at_500ms() {
    both(ten_at_two(), 100, |d| {
        trace_rows_before(d, 4);
        d.allow("k", 1, MS_500, allowed(0));
        d.assert_bucket("k", 0, MS_500);
    });
}

// ---------------------------------------------------------------------------------------
// Change exercise
// ---------------------------------------------------------------------------------------

/// "With capacity one and rate three/sec, calculate the first nanosecond at which a request
/// can pass. Ceiling(1e9/3)=333333334ns. The preceding nanosecond is insufficient. Keep
/// fractional credit so repeated checks do not destroy progress."
#[test]
fn change_exercise_first_pass_at_333333334() {
    let one_at_three = policy(1, 1, 3);
    both(one_at_three, 100, |d| {
        d.allow("k", 1, 0, allowed(0));
        d.allow("k", 1, 0, rejected(0, 333_333_334));
        d.allow("k", 1, 333_333_333, rejected(0, 1));
        d.assert_bucket("k", 999_999_999, 333_333_333);
        d.allow("k", 1, 333_333_334, allowed(0));
    });
    // Without the check at the preceding nanosecond, the first pass is the same.
    both(one_at_three, 100, |d| {
        d.allow("k", 1, 0, allowed(0));
        d.allow("k", 1, 333_333_334, allowed(0));
    });
    both(one_at_three, 100, |d| {
        d.allow("k", 1, 0, allowed(0));
        d.allow("k", 1, 333_333_333, rejected(0, 1));
    });
}

// ---------------------------------------------------------------------------------------
// "Test:" lines
// ---------------------------------------------------------------------------------------

/// "Test: At rate two, reject at 250ms with half-token retained; accept at 500ms."
#[test]
fn test_line_reject_at_250ms_accept_at_500ms() {
    both(ten_at_two(), 100, |d| {
        d.allow("k", 10, 0, allowed(0));
        d.allow("k", 1, MS_250, rejected(0, 250_000_000));
        d.assert_bucket("k", UNIT / 2, MS_250);
        d.allow("k", 1, MS_500, allowed(0));
        d.assert_bucket("k", 0, MS_500);
    });
}

/// "Test: Call with a smaller time and assert error" — on every method, before any other
/// check that could also apply to a valid request, and without changing state.
#[test]
fn test_line_smaller_time_is_an_error() {
    both(ten_at_two(), 100, |d| {
        // "Two threads sample 100 and 101; the 101 call arrives first."
        d.allow("k", 1, 101, allowed(9));
        let backwards = LimitError::TimeWentBackwards {
            now: 100,
            observed: 101,
        };
        d.rejects(|l| l.allow("k", 1, 100), backwards.clone());
        d.rejects(|l| l.allow("new", 1, 100), backwards.clone());
        d.rejects(|l| l.evict_full(100), backwards.clone());
        d.rejects(
            |l| l.replace_policy(policy(2, 20, 4), 1, 100),
            backwards.clone(),
        );
        // Time is checked before the version.
        d.rejects(
            |l| l.replace_policy(policy(1, 20, 4), 7, 100),
            backwards.clone(),
        );
        // Key and cost are checked before time.
        d.rejects(|l| l.allow(" ", 1, 100), LimitError::InvalidKey);
        d.rejects(
            |l| l.allow("k", 11, 100),
            LimitError::InvalidCost {
                cost: 11,
                capacity: 10,
            },
        );
        // A rejection also raises the observed time. At 200 ns the key has earned 99 ns × 2
        // units since 101 ns: short by 10^9 - 198 units, so the retry is (10^9 - 198) / 2.
        d.allow("k", 10, 200, rejected(9, 499_999_901));
        d.rejects(
            |l| l.allow("k", 1, 199),
            LimitError::TimeWentBackwards {
                now: 199,
                observed: 200,
            },
        );
        // An equal time is not a reversal, on any method.
        d.allow("k", 1, 200, allowed(8));
        d.evict_full(200, 0);
        d.replace(policy(2, 20, 4), 1, 200);
        assert_eq!(d.snapshot().observed_nanos, 200, "{}", d.name);
    });
}

/// "Test: ... use exactly 499999999 and 500000000 ns boundary inputs."
#[test]
fn test_line_boundaries_499999999_and_500000000() {
    both(ten_at_two(), 100, |d| {
        d.allow("k", 10, 0, allowed(0));
        d.allow("k", 1, 499_999_999, rejected(0, 1));
        d.assert_bucket("k", 999_999_998, 499_999_999);
        d.allow("k", 1, 500_000_000, allowed(0));
        d.assert_bucket("k", 0, 500_000_000);
        d.rejects(
            |l| l.allow("k", 1, 499_999_999),
            LimitError::TimeWentBackwards {
                now: 499_999_999,
                observed: 500_000_000,
            },
        );
    });
    // Each boundary on its own, with no earlier check.
    both(ten_at_two(), 100, |d| {
        d.allow("k", 10, 0, allowed(0));
        d.allow("k", 1, 500_000_000, allowed(0));
    });
}

/// Releases `callers` threads at once through a barrier, each calling `allow("k", 1, 0)` on
/// the same limiter, and returns their results.
fn release_at_once<L: Limiter>(
    limiter: Arc<L>,
    callers: usize,
) -> Vec<Result<Decision, LimitError>> {
    let barrier = Arc::new(Barrier::new(callers));
    let handles: Vec<_> = (0..callers)
        .map(|_| {
            let (limiter, barrier) = (Arc::clone(&limiter), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                limiter.allow("k", 1, 0)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn twenty_concurrent_unit_requests<L: Limiter>(name: &str) {
    for round in 0..25 {
        let limiter = Arc::new(L::new(ten_at_two(), 100).unwrap());
        let decisions = release_at_once(Arc::clone(&limiter), 20);
        let decisions: Vec<Decision> = decisions.into_iter().map(Result::unwrap).collect();
        let mut left: Vec<u64> = decisions
            .iter()
            .filter(|d| d.allowed)
            .map(|d| d.whole_tokens)
            .collect();
        left.sort_unstable();
        // Exactly ten pass, each seeing a distinct balance: every token deducted once (I2).
        assert_eq!(left, (0..10).collect::<Vec<_>>(), "{name}, round {round}");
        for d in decisions.iter().filter(|d| !d.allowed) {
            assert_eq!(*d, rejected(0, 500_000_000), "{name}, round {round}");
        }
        let snapshot = limiter.snapshot().unwrap();
        assert_eq!(
            snapshot.buckets["k"],
            BucketState {
                units: 0,
                last_nanos: 0
            },
            "{name}, round {round}"
        );
    }
}

/// "Test: Release twenty concurrent unit requests at t=0 with capacity ten; exactly ten must
/// succeed."
#[test]
fn test_line_twenty_concurrent_unit_requests_ten_pass() {
    twenty_concurrent_unit_requests::<TokenBucket>("reference TokenBucket");
    twenty_concurrent_unit_requests::<ModelLimiter>("model");
}

/// "Test: At t=0.5 depleted keys remain; at t=5.5 they are full and may be safely removed."
#[test]
fn test_line_evict_full_depleted_stay_full_go() {
    both(ten_at_two(), 100, |d| {
        d.allow("a", 10, 0, allowed(0));
        d.allow("b", 10, 0, allowed(0));
        d.evict_full(MS_500, 0);
        d.assert_keys(2);
        // A depleted key kept its depleted budget: one token at 0.5 s, not a fresh ten.
        d.allow("a", 2, MS_500, rejected(1, 500_000_000));
        // b is full only at 5 s exactly.
        d.evict_full(4_999_999_999, 0);
        d.assert_keys(2);
        d.evict_full(S_5_5, 2);
        d.assert_keys(0);
        // Recreation grants exactly what the retained full bucket held.
        d.allow("a", 10, S_5_5, allowed(0));
        d.rejects(
            |l| l.evict_full(S_5_5 - 1),
            LimitError::TimeWentBackwards {
                now: S_5_5 - 1,
                observed: S_5_5,
            },
        );
    });
}

/// "Test: Test old-rate earning, no top-up on capacity increase, clamp on decrease and
/// stale-version rejection."
#[test]
fn test_line_cutover_old_rate_no_top_up_clamp_stale_version() {
    // Old-rate earning: 0.5 s at 2/s is one token, not the two the new rate would give.
    both(ten_at_two(), 100, |d| {
        d.allow("k", 10, 0, allowed(0));
        d.replace(policy(2, 20, 4), 1, MS_500);
        d.assert_bucket("k", UNIT, MS_500);
    });
    // No top-up on increase: a bucket full at 10 stays at 10 under capacity 20.
    both(ten_at_two(), 100, |d| {
        d.allow("f", 1, 0, allowed(9));
        d.replace(policy(2, 20, 2), 1, MS_500);
        d.assert_bucket("f", 10 * UNIT, MS_500);
        d.allow("f", 11, MS_500, rejected(10, 500_000_000));
    });
    // Clamp on decrease: refilled to 10 under the old policy, then clamped to 4.
    both(ten_at_two(), 100, |d| {
        d.allow("k", 1, 0, allowed(9));
        d.replace(policy(2, 4, 2), 1, MS_500);
        d.assert_bucket("k", 4 * UNIT, MS_500);
        d.rejects(
            |l| l.allow("k", 5, MS_500),
            LimitError::InvalidCost {
                cost: 5,
                capacity: 4,
            },
        );
        d.allow("k", 1, MS_500, allowed(3));
    });
    // Stale expected version, and a next version that does not increase.
    both(ten_at_two(), 100, |d| {
        d.allow("k", 4, 0, allowed(6));
        d.replace(policy(2, 8, 2), 1, 0);
        d.rejects(
            |l| l.replace_policy(policy(3, 1, 2), 1, 0),
            LimitError::StalePolicyVersion {
                expected: 1,
                current: 2,
                next: 3,
            },
        );
        d.rejects(
            |l| l.replace_policy(policy(2, 1, 2), 2, 0),
            LimitError::StalePolicyVersion {
                expected: 2,
                current: 2,
                next: 2,
            },
        );
        d.rejects(
            |l| l.replace_policy(policy(1, 1, 2), 2, 0),
            LimitError::StalePolicyVersion {
                expected: 2,
                current: 2,
                next: 1,
            },
        );
        // Nothing was clamped to capacity 1.
        d.allow("k", 6, 0, allowed(0));
        d.replace(policy(3, 1, 2), 2, 0);
    });
}

// ---------------------------------------------------------------------------------------
// Baselines and other lesson statements
// ---------------------------------------------------------------------------------------

/// "ten requests at 999,999,999 ns followed by ten at 1,000,000,000 ns all pass for
/// capacity ten": the fixed window's contract. The sliding log and the token bucket refuse
/// the second ten.
#[test]
fn fixed_window_boundary_burst_twenty_pass_sliding_log_ten() {
    let window = FixedWindow::new(10).unwrap();
    let fixed = (0..10)
        .chain(10..20)
        .filter(|&i| {
            let now = if i < 10 { 999_999_999 } else { 1_000_000_000 };
            window.allow(now).unwrap()
        })
        .count();
    assert_eq!(fixed, 20);

    let log = SlidingLog::new(10, 1_000_000_000).unwrap();
    let sliding = (0..10).filter(|_| log.allow(999_999_999).unwrap()).count()
        + (0..10)
            .filter(|_| log.allow(1_000_000_000).unwrap())
            .count();
    assert_eq!(sliding, 10);

    both(ten_at_two(), 100, |d| {
        let passed = (0..10)
            .filter(|_| d.limiter.allow("k", 1, 999_999_999).unwrap().allowed)
            .count()
            + (0..10)
                .filter(|_| d.limiter.allow("k", 1, 1_000_000_000).unwrap().allowed)
                .count();
        assert_eq!(passed, 10, "{}", d.name);
    });
}

/// "At maxKeys, a new key is rejected with an explicit capacity error. Existing keys
/// continue to work."
#[test]
fn key_capacity_error_existing_keys_still_work() {
    both(ten_at_two(), 2, |d| {
        d.allow("a", 1, 0, allowed(9));
        d.allow("b", 1, 0, allowed(9));
        d.rejects(
            |l| l.allow("c", 1, 0),
            LimitError::KeyCapacityReached { max_keys: 2 },
        );
        // Cost and time are checked before key capacity.
        d.rejects(
            |l| l.allow("c", 0, 0),
            LimitError::InvalidCost {
                cost: 0,
                capacity: 10,
            },
        );
        d.allow("a", 1, 10, allowed(8));
        d.rejects(
            |l| l.allow("c", 1, 9),
            LimitError::TimeWentBackwards {
                now: 9,
                observed: 10,
            },
        );
        d.assert_keys(2);
        // Once b refills and is evicted, c fits.
        d.evict_full(MS_500, 1);
        d.allow("c", 1, MS_500, allowed(9));
        d.assert_keys(2);
    });
}

/// "New keys after cutover start at the new full capacity."
#[test]
fn new_keys_after_cutover_start_at_new_capacity() {
    both(ten_at_two(), 100, |d| {
        d.allow("a", 10, 0, allowed(0));
        d.replace(policy(2, 20, 4), 1, 0);
        d.allow("n", 1, 0, allowed(19));
        d.allow("a", 1, 0, rejected(0, 250_000_000));
    });
}

/// "Cost above capacity is invalid because the request can never be admitted; it does not
/// receive a misleading finite retry time." Blank keys and cost 0 are invalid too.
#[test]
fn invalid_key_and_cost_are_errors_not_rejections() {
    both(ten_at_two(), 100, |d| {
        d.allow("k", 1, 0, allowed(9));
        for key in ["", " ", "\t\n", "\u{2003}"] {
            d.rejects(|l| l.allow(key, 1, 0), LimitError::InvalidKey);
        }
        for cost in [0, 11, MAX_QUANTITY, u64::MAX] {
            d.rejects(
                |l| l.allow("k", cost, 0),
                LimitError::InvalidCost { cost, capacity: 10 },
            );
        }
        // The key is checked before the cost.
        d.rejects(|l| l.allow("", 0, 0), LimitError::InvalidKey);
        d.assert_keys(1);
    });
}

/// "A capacity of ten and rate two admits ten immediately, but not ten every second."
#[test]
fn interview_capacity_ten_rate_two_is_not_ten_every_second() {
    both(ten_at_two(), 100, |d| {
        let at = |now: u64| {
            (0..10)
                .filter(|_| d.limiter.allow("k", 1, now).unwrap().allowed)
                .count()
        };
        assert_eq!(at(0), 10, "{}", d.name);
        assert_eq!(at(1_000_000_000), 2, "{}", d.name);
        assert_eq!(at(2_000_000_000), 2, "{}", d.name);
    });
}

/// "Counterexample: Round each refill to whole tokens: repeated calls at quarter-second
/// intervals discard credit and may starve a caller." Exact credit passes every other call.
#[test]
fn counterexample_quarter_second_checks_do_not_starve() {
    both(ten_at_two(), 100, |d| {
        d.allow("k", 10, 0, allowed(0));
        for quarter in 1..=20u64 {
            let now = quarter * MS_250;
            let expected = if quarter % 2 == 0 {
                allowed(0)
            } else {
                rejected(0, 250_000_000)
            };
            d.allow("k", 1, now, expected);
        }
    });
}

/// "Elapsed refill restores only up to capacity."
#[test]
fn records_trace_refill_restores_only_up_to_capacity() {
    both(ten_at_two(), 100, |d| {
        d.allow("k", 1, 0, allowed(9));
        d.allow("k", 10, 100_000_000_000, allowed(0));
        d.allow("k", 1, u64::MAX, allowed(9));
        d.assert_bucket("k", 9 * UNIT, u64::MAX);
    });
}

fn last_token_callers<L: Limiter>(name: &str) {
    for round in 0..50 {
        let limiter = Arc::new(L::new(ten_at_two(), 100).unwrap());
        assert_eq!(limiter.allow("k", 9, 0), Ok(allowed(1)), "{name}");
        let decisions = release_at_once(Arc::clone(&limiter), 2);
        let mut decisions: Vec<Decision> = decisions.into_iter().map(Result::unwrap).collect();
        decisions.sort_by_key(|d| !d.allowed);
        assert_eq!(
            decisions,
            vec![allowed(0), rejected(0, 500_000_000)],
            "{name}, round {round}"
        );
    }
}

/// "Concurrent last-token callers serialize; one succeeds and the other is denied."
#[test]
fn records_trace_concurrent_last_token_callers_one_wins() {
    last_token_callers::<TokenBucket>("reference TokenBucket");
    last_token_callers::<ModelLimiter>("model");
}

/// "retryAfterNanos is a ceiling estimate ... Values beyond long range saturate to
/// Long.MAX_VALUE", and "test Long.MAX_VALUE parameters".
#[test]
fn retry_saturates_and_max_quantity_parameters_are_exact() {
    let m = MAX_QUANTITY;
    both(policy(1, m, 1), 1, |d| {
        d.allow("k", m, 0, allowed(0));
        d.allow("k", m, 0, rejected(0, m));
        d.allow("k", 1, 1_000_000_000, allowed(0));
    });
    both(policy(m, m, m), 1, |d| {
        d.allow("k", 1, 0, allowed(m - 1));
        d.assert_bucket("k", u128::from(m - 1) * UNIT, 0);
        d.allow("k", m, u64::MAX, allowed(0));
        d.rejects(
            |l| l.replace_policy(policy(m, 1, 1), m, u64::MAX),
            LimitError::StalePolicyVersion {
                expected: m,
                current: m,
                next: m,
            },
        );
        d.rejects(
            |l| l.allow("other", 1, u64::MAX),
            LimitError::KeyCapacityReached { max_keys: 1 },
        );
    });
}
