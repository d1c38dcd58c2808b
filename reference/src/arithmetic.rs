//! The bucket arithmetic both reference designs share: exact, in `u128` fixed point
//! (one token is 10⁹ units), with every bound proved below.
//!
//! Balances are `u128` units. With every quantity at most `M = 2^63 − 1` and time below
//! `2^64`:
//!
//! - a ceiling is `capacity × 10⁹ ≤ M × 10⁹ < 2^63 × 2^30 = 2^93`;
//! - an earning is `elapsed × rate < 2^64 × 2^63 = 2^127`;
//! - a stored balance never exceeds its ceiling (I1), so `balance + earning < 2^93 + 2^127 <
//!   2^128` before the clamp;
//! - a shortfall is at most a ceiling, so `shortfall + rate − 1 < 2^93 + 2^63` in the retry
//!   estimate.
//!
//! No intermediate can overflow anywhere in the domain.
use ratelimit_lab_api::{BucketState, Decision, Policy, MAX_QUANTITY, UNITS_PER_TOKEN};

/// `capacity × 10⁹`: below 2^93.
pub(crate) fn ceiling(policy: &Policy) -> u128 {
    u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN)
}

/// The balance of `bucket` at `now` under `policy`. Requires `bucket.last_nanos <= now` and
/// `bucket.units <= ceiling(policy)`, both kept by every method.
pub(crate) fn refilled(bucket: &BucketState, policy: &Policy, now: u64) -> u128 {
    let elapsed = now.saturating_sub(bucket.last_nanos);
    let earned = u128::from(elapsed) * u128::from(policy.tokens_per_second());
    (bucket.units + earned).min(ceiling(policy))
}

/// Refills `bucket` to `now`, deducts `cost` tokens if the balance covers them, and stores
/// the balance at `now` either way. Requires what [`refilled`] requires and `cost` in
/// `1..=capacity`.
pub(crate) fn spend(bucket: &mut BucketState, policy: &Policy, cost: u64, now: u64) -> Decision {
    let balance = refilled(bucket, policy, now);
    let need = u128::from(cost) * u128::from(UNITS_PER_TOKEN);
    let (allowed, after, retry_after_nanos) = if balance >= need {
        (true, balance - need, 0)
    } else {
        let retry = retry_after(need - balance, policy.tokens_per_second());
        (false, balance, retry)
    };
    *bucket = BucketState {
        units: after,
        last_nanos: now,
    };
    Decision {
        allowed,
        whole_tokens: whole_tokens(after),
        retry_after_nanos,
    }
}

/// `floor(units / 10⁹)`, for a balance `units ≤ capacity × 10⁹`, so the quotient is at most
/// the capacity and fits a `u64`.
///
/// A balance below 2^64 units (every balance of a bucket of up to 18,446,744,073 tokens) is
/// divided as a `u64`, which compiles to a multiplication by a constant; a larger one as a
/// `u128`, which is a call into the runtime's 128-bit division. Both give the same quotient.
fn whole_tokens(units: u128) -> u64 {
    match u64::try_from(units) {
        Ok(small) => small / UNITS_PER_TOKEN,
        Err(_) => u64::try_from(units / u128::from(UNITS_PER_TOKEN)).unwrap_or(MAX_QUANTITY),
    }
}

/// `ceil(shortfall / rate)` nanoseconds, saturated at [`MAX_QUANTITY`]: when a rejected
/// request would pass with no competitor. `shortfall ≤ capacity × 10⁹ < 2^93` and
/// `rate ≥ 1`; below 2^64 the division is a `u64` one, above it a `u128` one, with the same
/// quotient.
fn retry_after(shortfall: u128, rate: u64) -> u64 {
    let wait = match u64::try_from(shortfall) {
        Ok(small) => small.div_ceil(rate),
        Err(_) => {
            let wide = shortfall.div_ceil(u128::from(rate));
            u64::try_from(wide).unwrap_or(u64::MAX)
        }
    };
    wait.min(MAX_QUANTITY)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const M: u64 = MAX_QUANTITY;

    #[test]
    fn the_largest_earning_and_balance_fit() {
        let p = Policy::new(M, M, M).unwrap();
        let b = BucketState {
            units: ceiling(&p) - 1,
            last_nanos: 0,
        };
        assert_eq!(refilled(&b, &p, u64::MAX), ceiling(&p));
        assert!(ceiling(&p) < 1u128 << 93);
        assert!(u128::from(u64::MAX) * u128::from(M) < 1u128 << 127);
    }

    #[test]
    fn the_narrow_divisions_agree_with_the_wide_ones_around_2_pow_64() {
        let unit = u128::from(UNITS_PER_TOKEN);
        let edge = 1u128 << 64;
        for units in [
            0,
            1,
            unit - 1,
            unit,
            edge - unit,
            edge - 1,
            edge,
            edge + 1,
            ceiling(&Policy::new(1, M, 1).unwrap()),
        ] {
            assert_eq!(u128::from(whole_tokens(units)), units / unit, "{units}");
            for rate in [1, 2, 3, 999_999_999, UNITS_PER_TOKEN, M] {
                let wide = units.div_ceil(u128::from(rate)).min(u128::from(M));
                assert_eq!(
                    u128::from(retry_after(units, rate)),
                    wide,
                    "{units} / {rate}"
                );
            }
        }
    }
}
