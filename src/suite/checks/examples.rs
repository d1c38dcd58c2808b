//! The deterministic checks: the seed's worked examples, trace table, change exercise and
//! "Test:" lines, and each requirement's edge cases, all run against the specification
//! step by step through [`Probe`].
use crate::suite::host::subject::Subject;
use crate::{LimitError, Policy, MAX_QUANTITY};

use crate::suite::core::failure::Failure;
use crate::suite::core::panics::guarded;
use crate::suite::oracle::probe::{build, expect_new_error, Probe};

/// A policy known valid at compile time.
const fn must(p: Result<Policy, LimitError>) -> Policy {
    match p {
        Ok(p) => p,
        Err(_) => panic!("invalid policy constant"),
    }
}

const CAP10_RATE2: Policy = must(Policy::new(1, 10, 2));
const CAP1_RATE3: Policy = must(Policy::new(1, 1, 3));
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const M: u64 = MAX_QUANTITY;

type Check = Result<(), Failure>;

/// The trace table: 10 at 0 ns; 1 at 0 ns (retry 500000000); 1 at 250 ms (half a token kept);
/// 1 at 500 ms (allowed).
pub(crate) fn seed_trace_table(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    p.allow("k", 1, 0)?;
    p.allow("k", 1, 250 * MS)?;
    p.allow("k", 1, 500 * MS)?;
    Ok(())
}

/// Worked example 1: capacity 10, rate 2; cost 10 then cost 1 at t=0 → retry 500000000.
pub(crate) fn seed_burst_then_retry(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    p.allow("k", 1, 0)?;
    Ok(())
}

/// Worked example 2: empty bucket at rate 2, cutover to capacity 20 / rate 4 at 0.5 s: one
/// token at cutover (a cost of 2 is refused with 1 whole token), one more by 0.75 s.
pub(crate) fn seed_cutover_one_token(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    p.replace(must(Policy::new(2, 20, 4)), 1, 500 * MS)?;
    p.allow("k", 2, 500 * MS)?;
    p.allow("k", 2, 750 * MS)?;
    Ok(())
}

/// The change exercise: capacity 1, rate 3: the first pass is at 333333334 ns, not at
/// 333333333.
pub(crate) fn seed_change_exercise(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP1_RATE3, 10)?;
    p.allow("k", 1, 0)?;
    p.allow("k", 1, 333_333_333)?;
    p.allow("k", 1, 333_333_334)?;
    let mut q = Probe::of(subject, CAP1_RATE3, 10)?;
    q.allow("k", 1, 0)?;
    q.allow("k", 1, 333_333_334)?;
    Ok(())
}

/// A key seen for the first time starts full, whenever it first appears.
pub(crate) fn r1_new_key_starts_full(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("a", 10, 0)?;
    p.allow("b", 10, 7)?;
    p.allow("c", 1, 100 * S)?;
    p.allow("c", 10, 100 * S)?;
    Ok(())
}

/// 499999999 ns of refill at rate 2 is short of a token by 2 units; 500000000 ns is exactly one.
pub(crate) fn r1_boundaries_are_exact(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    p.allow("k", 1, 499_999_999)?;
    p.allow("k", 1, 500_000_000)?;
    let mut q = Probe::of(subject, CAP10_RATE2, 10)?;
    q.allow("k", 10, 0)?;
    q.allow("k", 1, 500_000_000)?;
    q.allow("k", 1, 999_999_999)?;
    q.allow("k", 1, 1_000_000_000)?;
    Ok(())
}

/// Rejections every 250 ms at rate 2 keep their half tokens; every 111111111 ns at rate 3 keep
/// their thirds.
pub(crate) fn r1_fractional_credit_is_kept(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    for i in 1..=8 {
        p.allow("k", 1, i * 250 * MS)?;
    }
    let mut q = Probe::of(subject, CAP1_RATE3, 10)?;
    q.allow("k", 1, 0)?;
    for i in 1..=4 {
        q.allow("k", 1, i * 111_111_111)?;
    }
    Ok(())
}

/// Ten just before a one-second boundary and ten just after: the second ten find two units,
/// not a fresh burst.
pub(crate) fn r1_no_burst_across_a_second_boundary(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 999_999_999)?;
    for _ in 0..3 {
        p.allow("k", 1, 1_000_000_000)?;
    }
    p.allow("k", 10, 2 * S)?;
    Ok(())
}

/// A long idle period banks at most the capacity.
pub(crate) fn r1_refill_stops_at_capacity(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    p.allow("k", 10, 100 * S)?;
    p.allow("k", 1, 100 * S)?;
    p.allow("k", 4, 101 * S)?;
    Ok(())
}

/// Retry estimates are ceilings, and saturate at `MAX_QUANTITY`.
pub(crate) fn r1_retry_after_is_a_ceiling(subject: Subject) -> Check {
    let mut p = Probe::of(subject, must(Policy::new(1, 5, 7)), 10)?;
    p.allow("k", 5, 0)?;
    p.allow("k", 1, 0)?;
    p.allow("k", 3, 1)?;
    p.allow("k", 5, 300_000_000)?;
    let mut q = Probe::of(subject, must(Policy::new(1, M, 1)), 10)?;
    q.allow("k", M, 0)?;
    q.allow("k", M, 1)?;
    q.allow("k", 1, 2)?;
    Ok(())
}

/// `whole_tokens` is the floor of the balance, on admissions and on rejections.
pub(crate) fn r1_whole_tokens_are_floored(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    p.allow("k", 1, 750 * MS)?;
    p.allow("k", 1, 1_500 * MS)?;
    p.allow("k", 3, 1_999_999_999)?;
    Ok(())
}

/// A key no correct design refuses: long (140 bytes), with characters of several bytes.
pub(crate) const LONG_KEY: &str = concat!(
    "tenant-42/user:",
    "0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef",
    "0123456789abcdef",
    "/ключ/鍵"
);

/// Blank keys (in Java's sense of white space) and impossible costs are refused, the key
/// first; a no-break space, a long key, a key with a tab inside and DEL alone (a control
/// character that is not white space) are keys like any other.
pub(crate) fn r1_invalid_input_is_refused(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 5)?;
    p.allow("k", 4, 100)?;
    for key in ["", " ", "\t\n", "\u{2003}", "\u{1f}"] {
        p.allow(key, 1, 100)?;
    }
    p.allow("\u{a0}", 1, 100)?;
    p.allow(LONG_KEY, 1, 100)?;
    p.allow("a\tb", 1, 100)?;
    p.allow("\u{7f}", 1, 100)?;
    for cost in [0, 11, u64::MAX] {
        p.allow("k", cost, 100)?;
    }
    p.allow("", 0, 100)?;
    p.allow(" ", 11, 100)?;
    p.allow("k", 1, 100)?;
    Ok(())
}

/// A refused call changes nothing: not the balance, not the observed time, not the keys.
pub(crate) fn r1_errors_change_nothing(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 2)?;
    p.allow("k", 6, 0)?;
    p.allow("k", 11, S)?;
    p.allow(" ", 1, 2 * S)?;
    p.replace(must(Policy::new(1, 20, 4)), 1, 4 * S)?;
    p.allow("k", 5, 250 * MS)?;
    p.allow("k", 1, 250 * MS)?;
    p.allow("k", 0, 10 * S)?;
    p.allow("k", 1, 300 * MS)?;
    Ok(())
}

/// Every method refuses a time below the largest one a successful call has seen; equal
/// times are fine.
pub(crate) fn r1_time_reversal_is_refused(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 100)?;
    p.allow("k", 1, 99)?;
    p.allow("j", 1, 99)?;
    p.evict_full(99)?;
    p.replace(must(Policy::new(2, 10, 2)), 1, 99)?;
    p.allow("k", 1, 100)?;
    p.evict_full(100)?;
    p.replace(must(Policy::new(2, 10, 2)), 1, 150)?;
    p.allow("k", 1, 149)?;
    p.allow("k", 1, u64::MAX)?;
    p.evict_full(u64::MAX - 1)?;
    p.allow("k", 1, 0)?;
    Ok(())
}

/// When several errors apply, the documented one wins: key, cost, time, key capacity in
/// `allow`; time, then version, in `replace_policy`.
pub(crate) fn r1_errors_win_in_order(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 1)?;
    p.allow("k", 4, 100)?;
    p.allow("", 0, 5)?;
    p.allow("k", 0, 5)?;
    p.allow("k", 11, 5)?;
    p.allow("new", 1, 5)?;
    p.allow("new", 11, 5)?;
    p.replace(must(Policy::new(1, 10, 2)), 7, 5)?;
    p.allow("k", 1, 100)?;
    Ok(())
}

/// Capacity, rate and cost at `MAX_QUANTITY` and times near `u64::MAX`, exactly.
pub(crate) fn r1_extremes_are_exact(subject: Subject) -> Check {
    let mut p = Probe::of(subject, must(Policy::new(M, M, M)), 2)?;
    p.allow("k", M, 0)?;
    p.allow("k", M, 1)?;
    p.allow("k", M, 2)?;
    p.allow("k", 1, u64::MAX - 1)?;
    p.allow("k", M, u64::MAX)?;
    let mut q = Probe::of(subject, must(Policy::new(1, M, 1)), 2)?;
    q.allow("k", M, 0)?;
    q.allow("k", M, u64::MAX)?;
    q.allow("j", M - 1, u64::MAX)?;
    let mut r = Probe::of(subject, must(Policy::new(1, 1, M)), 2)?;
    r.allow("k", 1, 0)?;
    r.allow("k", 1, 0)?;
    r.allow("k", 1, 1)?;
    r.allow("k", 1, u64::MAX)?;
    Ok(())
}

/// At `max_keys` a new key is refused with its own error; existing keys keep working.
pub(crate) fn r3_key_capacity_is_enforced(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 2)?;
    p.allow("a", 10, 0)?;
    p.allow("b", 1, 0)?;
    p.allow("c", 1, 0)?;
    p.allow("a", 1, 0)?;
    p.allow("b", 1, S)?;
    p.allow("c", 1, 10 * S)?;
    Ok(())
}

/// `evict_full` drops only buckets that are full at that instant: depleted keys stay at
/// 0.5 s, and are full (so removable) at 5.5 s; a removed key comes back full.
pub(crate) fn r3_evict_full_drops_only_full_buckets(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 3)?;
    p.allow("a", 10, 0)?;
    p.allow("b", 10, 0)?;
    p.allow("c", 1, 0)?;
    p.evict_full(500 * MS)?;
    p.allow("b", 1, 4_999_999_999)?;
    p.evict_full(4_999_999_999)?;
    p.evict_full(5_500 * MS)?;
    p.evict_full(5_500 * MS)?;
    p.allow("a", 10, 5_500 * MS)?;
    p.allow("a", 1, 5_500 * MS)?;
    Ok(())
}

/// Eviction is how room is made: after it, a new key fits.
pub(crate) fn r3_eviction_makes_room(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 1)?;
    p.allow("a", 10, 0)?;
    p.allow("b", 1, S)?;
    p.evict_full(S)?;
    p.allow("b", 1, S)?;
    p.evict_full(5 * S)?;
    p.allow("b", 1, 5 * S)?;
    p.allow("a", 1, 5 * S)?;
    Ok(())
}

/// `max_keys = 0` is refused.
pub(crate) fn r3_zero_max_keys_is_refused(subject: Subject) -> Check {
    expect_new_error(subject, CAP10_RATE2, 0, LimitError::InvalidMaxKeys)?;
    let design = build(subject, CAP10_RATE2, 1)?;
    let count = guarded(|| design.key_count())
        .map_err(|msg| Failure::new(format!("key_count() panicked: {msg}")).as_panic())?;
    if count != 0 {
        return Err(Failure::new(format!(
            "a new limiter reports {count} keys, not 0"
        )));
    }
    Ok(())
}

/// Credit before the cutover is earned at the old rate, whether the new one is faster or
/// slower.
pub(crate) fn r4_cutover_refills_under_the_old_rate(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("k", 10, 0)?;
    p.replace(must(Policy::new(2, 10, 8)), 1, 500 * MS)?;
    p.allow("k", 2, 500 * MS)?;
    p.allow("k", 2, 625 * MS)?;
    let mut q = Probe::of(subject, must(Policy::new(1, 10, 8)), 10)?;
    q.allow("k", 10, 0)?;
    q.replace(must(Policy::new(5, 10, 1)), 1, 500 * MS)?;
    q.allow("k", 5, 500 * MS)?;
    q.allow("k", 1, 1_500 * MS)?;
    Ok(())
}

/// A capacity increase tops nothing up; a decrease clamps; a spent bucket stays spent.
pub(crate) fn r4_cutover_clamps_and_never_tops_up(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("full", 1, 0)?;
    p.allow("spent", 10, 0)?;
    p.allow("part", 7, 0)?;
    p.replace(must(Policy::new(2, 20, 2)), 1, 500 * MS)?;
    p.allow("full", 11, 500 * MS)?;
    p.allow("spent", 2, 500 * MS)?;
    p.allow("part", 5, 500 * MS)?;
    p.replace(must(Policy::new(3, 4, 2)), 2, 600 * MS)?;
    p.allow("full", 4, 600 * MS)?;
    p.allow("full", 1, 600 * MS)?;
    p.allow("part", 1, 600 * MS)?;
    // A bucket idle for long banks the OLD capacity only, even when the new one is larger.
    let mut q = Probe::of(subject, CAP10_RATE2, 10)?;
    q.allow("idle", 1, 0)?;
    q.replace(must(Policy::new(2, 20, 2)), 1, 100 * S)?;
    q.allow("idle", 11, 100 * S)?;
    q.allow("idle", 10, 100 * S)?;
    Ok(())
}

/// Keys first seen after a cutover start at the new capacity, and costs are validated
/// against it.
pub(crate) fn r4_new_keys_start_at_the_new_capacity(subject: Subject) -> Check {
    let mut p = Probe::of(subject, CAP10_RATE2, 10)?;
    p.allow("old", 15, 0)?;
    p.replace(must(Policy::new(2, 20, 4)), 1, 0)?;
    p.allow("new", 20, 0)?;
    p.allow("old", 15, 0)?;
    p.replace(must(Policy::new(3, 5, 4)), 2, 0)?;
    p.allow("newer", 6, 0)?;
    p.allow("newer", 5, 0)?;
    Ok(())
}

/// Stale `expected_version`s and non-increasing next versions are refused, time first.
pub(crate) fn r4_stale_versions_are_refused(subject: Subject) -> Check {
    let mut p = Probe::of(subject, must(Policy::new(5, 10, 2)), 10)?;
    p.allow("k", 10, 0)?;
    p.replace(must(Policy::new(6, 20, 4)), 4, S)?;
    p.replace(must(Policy::new(5, 20, 4)), 5, S)?;
    p.replace(must(Policy::new(4, 20, 4)), 5, S)?;
    p.replace(must(Policy::new(6, 20, 4)), 6, S)?;
    p.allow("k", 1, 2 * S)?;
    p.replace(must(Policy::new(9, 20, 4)), 4, S)?;
    p.replace(must(Policy::new(9, 20, 4)), 5, 2 * S)?;
    p.replace(must(Policy::new(10, 20, 4)), 5, 2 * S)?;
    p.replace(must(Policy::new(M, 1, 1)), 9, 2 * S)?;
    p.replace(must(Policy::new(M, 1, 1)), M, 2 * S)?;
    p.allow("k", 1, 2 * S)?;
    Ok(())
}
