//! Test support: random sequential histories run on a design and on the reference
//! `TokenBucket`, compared call by call, outcome by outcome, and after every call by the
//! balance each key holds at the observed time (a design may date its buckets differently).
use ratelimit_lab_api::{BucketState, Limiter, Policy, Snapshot, MAX_QUANTITY, UNITS_PER_TOKEN};
use ratelimit_lab_reference::TokenBucket;

const SECOND: u64 = 1_000_000_000;

/// xorshift64*: a fixed seed, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[usize::try_from(self.below(items.len() as u64)).unwrap_or(0)]
    }
}

/// `min(F, units + (t − last) × rate)`.
fn balance_at(b: &BucketState, policy: &Policy, t: u64) -> u128 {
    let full = u128::from(policy.capacity()) * u128::from(UNITS_PER_TOKEN);
    let earned =
        u128::from(t.saturating_sub(b.last_nanos)) * u128::from(policy.tokens_per_second());
    b.units.saturating_add(earned).min(full)
}

/// What the design's snapshot gets wrong against the reference's, if anything: policy,
/// observed time, keys, a bucket dated after the observed time or above capacity, or a
/// balance at the observed time.
fn difference(got: &Snapshot, want: &Snapshot) -> Option<String> {
    if got.policy != want.policy || got.observed_nanos != want.observed_nanos {
        return Some(format!("policy/observed {got:?} vs {want:?}"));
    }
    if !got.buckets.keys().eq(want.buckets.keys()) {
        return Some(format!("keys {got:?} vs {want:?}"));
    }
    let full = u128::from(got.policy.capacity()) * u128::from(UNITS_PER_TOKEN);
    for (key, b) in &got.buckets {
        if b.units > full || b.last_nanos > got.observed_nanos {
            return Some(format!("invalid bucket {key:?}: {b:?} in {got:?}"));
        }
        let mine = balance_at(b, &got.policy, got.observed_nanos);
        let theirs = balance_at(&want.buckets[key], &want.policy, want.observed_nanos);
        if mine != theirs {
            return Some(format!("{key:?}: {mine} units vs {theirs}"));
        }
    }
    None
}

/// Runs 3,000 random histories of 40 calls on `L` and on the reference; panics with the
/// history at the first difference.
pub(crate) fn against_reference<L: Limiter>() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3_000 {
        let capacity = rng.pick(&[1, 2, 3, 10, MAX_QUANTITY]);
        let rate = rng.pick(&[1, 2, 3, 7, SECOND, MAX_QUANTITY]);
        let policy = Policy::new(1, capacity, rate).expect("a valid policy");
        let max_keys = 1 + usize::try_from(rng.below(3)).unwrap_or(0);
        let design = L::new(policy, max_keys).expect("valid max_keys");
        let reference = TokenBucket::new(policy, max_keys).expect("valid max_keys");
        let mut trace: Vec<String> = vec![format!("{policy:?}, max_keys {max_keys}")];
        for _ in 0..40 {
            let state = reference
                .snapshot()
                .expect("the reference reports its state");
            let (now, capacity, version) = (
                state.observed_nanos,
                state.policy.capacity(),
                state.policy.version(),
            );
            let at = match rng.below(40) {
                0 => u64::MAX - rng.below(2),
                1..=4 => now,
                5..=7 => now.saturating_sub(1 + rng.below(SECOND)),
                8..=9 => now.saturating_add(rng.below(1 << 40)),
                _ => now.saturating_add(rng.below(2 * SECOND)),
            };
            let (call, got, want) = match rng.below(12) {
                0 => (
                    format!("evict_full({at})"),
                    format!("{:?}", design.evict_full(at)),
                    format!("{:?}", reference.evict_full(at)),
                ),
                1 => {
                    let next = Policy::new(
                        version + rng.pick(&[0, 1, 2]),
                        rng.pick(&[1, 2, 3, 10, 20, MAX_QUANTITY]),
                        rng.pick(&[1, 2, 4, SECOND, MAX_QUANTITY]),
                    )
                    .expect("a valid policy");
                    let expected = rng.pick(&[version, version, version.saturating_sub(1)]);
                    (
                        format!("replace_policy({next:?}, {expected}, {at})"),
                        format!("{:?}", design.replace_policy(next, expected, at)),
                        format!("{:?}", reference.replace_policy(next, expected, at)),
                    )
                }
                2 => (
                    "key_count()".to_string(),
                    format!("{:?}", design.key_count()),
                    format!("{:?}", reference.key_count()),
                ),
                _ => {
                    let key = rng.pick(&["a", "b", "c", "a", "b", " "]);
                    let cost = match rng.below(8) {
                        0 => 0,
                        1 => capacity.saturating_add(1),
                        2 => capacity,
                        _ => 1 + rng.below(capacity.min(4)),
                    };
                    (
                        format!("allow({key:?}, {cost}, {at})"),
                        format!("{:?}", design.allow(key, cost, at)),
                        format!("{:?}", reference.allow(key, cost, at)),
                    )
                }
            };
            trace.push(call);
            assert_eq!(
                got, want,
                "the design, then the reference, after {trace:#?}"
            );
            let got = design.snapshot().expect("the design reports its state");
            let want = reference
                .snapshot()
                .expect("the reference reports its state");
            if let Some(why) = difference(&got, &want) {
                panic!("{why} after {trace:#?}");
            }
        }
    }
}

/// The comparison has teeth: wrong designs fail it, on an outcome and on a stored balance.
mod tests {
    #[test]
    #[should_panic(expected = "the design, then the reference")]
    fn a_rounded_retry_estimate_is_caught() {
        super::against_reference::<crate::mistakes::FloorRetryEstimate>();
    }

    #[test]
    #[should_panic(expected = "after [")]
    fn a_cutover_at_the_new_rate_is_caught() {
        super::against_reference::<crate::mistakes::CutoverRefillsAtNewRate>();
    }

    #[test]
    #[should_panic(expected = "units vs")]
    fn a_lost_fraction_is_caught_in_the_stored_state() {
        super::against_reference::<crate::mistakes::RejectionForgetsCredit>();
    }
}
