use std::fmt;

use serde::Serialize;

/// A mistake the seed names (in "Mistakes and counterexamples" or a "Counterexample:" line),
/// with its repair: what a failure most resembles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mistake {
    /// Reset the balance every second and call it token bucket.
    WindowReset,
    /// Start a new key with anything but a full bucket.
    NewKeyNotFull,
    /// Drop fractional refill on each request.
    DroppedFraction,
    /// Treat `retry_after` as guaranteed admission (or estimate it early).
    RetryEstimate,
    /// Multiply long capacity by a billion without checks.
    UncheckedFixedPoint,
    /// Accept a caller-sampled time older than one already seen.
    StaleTime,
    /// Refuse a valid input, or accept an invalid one (blank keys, impossible costs).
    InputValidation,
    /// Mutate state before every input is validated.
    MutationBeforeValidation,
    /// Read one token in two threads, then both write zero.
    DoubleSpend,
    /// Evict any idle/LRU key under memory pressure.
    IdleEviction,
    /// Keep the key bound wrong: serve a new key beyond it (silently, untracked), refuse a
    /// tracked key at it, or count a key that is gone.
    UntrackedKeys,
    /// Decide which buckets are full and delete them in separate critical sections.
    SplitEviction,
    /// Apply the new rate to time before the cutover.
    RetroactiveRate,
    /// Treat a capacity increase (or a reset) as a budget grant.
    CapacityTopUp,
    /// Let a stale administrator overwrite a newer policy.
    UnguardedVersion,
    /// Build the cut-over state and publish it in separate critical sections.
    SplitCutover,
    /// Check the key bound and insert the new key in separate critical sections.
    SplitKeyBound,
    /// Reset every budget at a policy change.
    BudgetReset,
    /// Check a call's time against the observed time and publish the new observed time in
    /// separate steps.
    SplitTimeCheck,
    /// Copy the state for `snapshot` piece by piece while calls go on (a lock per stripe, the
    /// observed time read apart): the copy mixes states from before and after a call. Not one
    /// of the seed's mistakes: the seed's one monitor makes every observation consistent.
    TornSnapshot,
}

impl Mistake {
    /// Every mistake, in declaration order.
    pub const ALL: [Mistake; 20] = [
        Mistake::WindowReset,
        Mistake::NewKeyNotFull,
        Mistake::DroppedFraction,
        Mistake::RetryEstimate,
        Mistake::UncheckedFixedPoint,
        Mistake::StaleTime,
        Mistake::InputValidation,
        Mistake::MutationBeforeValidation,
        Mistake::DoubleSpend,
        Mistake::IdleEviction,
        Mistake::UntrackedKeys,
        Mistake::SplitEviction,
        Mistake::RetroactiveRate,
        Mistake::CapacityTopUp,
        Mistake::UnguardedVersion,
        Mistake::SplitCutover,
        Mistake::SplitKeyBound,
        Mistake::BudgetReset,
        Mistake::SplitTimeCheck,
        Mistake::TornSnapshot,
    ];

    /// The seed's name for the mistake, quoted.
    pub fn seed_text(self) -> &'static str {
        match self {
            Mistake::WindowReset => "Reset the balance every second and call it token bucket",
            Mistake::NewKeyNotFull => "The first request for a new key starts full",
            Mistake::DroppedFraction => "Drop fractional refill on each request",
            Mistake::RetryEstimate => "Treat retryAfter as guaranteed admission",
            Mistake::UncheckedFixedPoint => "Multiply long capacity by a billion without checks",
            Mistake::StaleTime => "Two threads sample 100 and 101; the 101 call arrives first",
            Mistake::InputValidation => "Validate identity, cost and elapsed time",
            Mistake::MutationBeforeValidation => "Reject invalid input or time reversal before mutation",
            Mistake::DoubleSpend => "Read one token in two threads, then both write zero",
            Mistake::IdleEviction => "Evict any idle/LRU key under memory pressure",
            Mistake::UntrackedKeys => "At maxKeys, a new key is rejected with an explicit capacity error. Existing keys continue to work.",
            Mistake::SplitEviction => "The shared monitor prevents a concurrent consumption between the check and deletion",
            Mistake::SplitCutover => "Publish map, policy and observedTime together under the monitor",
            Mistake::RetroactiveRate => "Changing rate two→four at 0.5s incorrectly credits two tokens",
            Mistake::CapacityTopUp => "Increasing policy capacity never tops up existing buckets",
            Mistake::UnguardedVersion => "Use expectedVersion to prevent a stale administrator from overwriting a newer policy",
            Mistake::SplitKeyBound => "The map contains at most maxKeys",
            Mistake::BudgetReset => "Resetting all budgets ... must not be hidden behind a generic config update",
            Mistake::SplitTimeCheck => "rejects values older than the last observed service time",
            Mistake::TornSnapshot => "Synchronized observation of retained buckets",
        }
    }

    /// `true` for the mistakes only an interleaving of concurrent calls can show (a design
    /// making one of them is sequentially correct): [`DoubleSpend`](Mistake::DoubleSpend),
    /// [`SplitEviction`](Mistake::SplitEviction), [`SplitCutover`](Mistake::SplitCutover) and
    /// [`SplitKeyBound`](Mistake::SplitKeyBound), [`SplitTimeCheck`](Mistake::SplitTimeCheck)
    /// and [`TornSnapshot`](Mistake::TornSnapshot).
    /// Real threads show them by chance; a controlled scheduler (loom, shuttle) every time.
    pub fn is_race(self) -> bool {
        matches!(
            self,
            Mistake::DoubleSpend
                | Mistake::SplitEviction
                | Mistake::SplitCutover
                | Mistake::SplitKeyBound
                | Mistake::SplitTimeCheck
                | Mistake::TornSnapshot
        )
    }

    /// What to do instead.
    pub fn hint(self) -> &'static str {
        match self {
            Mistake::WindowReset => "Refill by elapsed time: units += (now - last) × tokens_per_second, clamped to capacity × 10⁹; neither a second's boundary nor a rejection restores the whole burst.",
            Mistake::NewKeyNotFull => "A key seen for the first time gets a bucket holding capacity × 10⁹ units, dated now, whenever it first appears (also after a cutover, at the new capacity); its first request is then judged and charged like any other.",
            Mistake::DroppedFraction => "Keep the balance in exact units (1 token = 10⁹ units), store it on every call, rejections included, and report it so in snapshot(); floor only whole_tokens in the Decision, taken from the balance left after the cost is deducted.",
            Mistake::RetryEstimate => "retry_after_nanos = ⌈(cost × 10⁹ − balance) / tokens_per_second⌉, saturating at MAX_QUANTITY, and a balance equal to the cost admits (compare with ≥): at now + retry the request passes, one nanosecond earlier it does not.",
            Mistake::UncheckedFixedPoint => "capacity × 10⁹ and elapsed × rate overflow u64: use u128 (products stay below 2^127) or checked arithmetic, and test MAX_QUANTITY.",
            Mistake::StaleTime => "Keep the largest time a successful call has seen and return TimeWentBackwards for anything older, on every method, before changing anything.",
            Mistake::InputValidation => "A key is blank when every character is white space in the contract's sense (ratelimit_lab::is_blank_key, Java's isBlank: U+001C–U+001F count, no-break spaces do not); a cost must be in 1..=capacity; both are errors, not rejections. A cost the balance cannot cover yet is a rejection, and new() builds a limiter for every Policy and every max_keys from 1.",
            Mistake::MutationBeforeValidation => "Check key, then cost, then time, then key capacity, and return the first error before touching any state.",
            Mistake::DoubleSpend => "Do lookup, refill, comparison, deduction and write under one lock acquisition: a read in one critical section and a write in another lets two callers spend the same token.",
            Mistake::IdleEviction => "evict_full drops exactly the buckets whose balance refilled to now equals capacity (every one of them, no other), checked and removed under the same lock that allow takes; allow never drops a bucket to make room (at max_keys a new key gets KeyCapacityReached).",
            Mistake::UntrackedKeys => "At max_keys a new key, and only a new key, gets KeyCapacityReached: tracked keys keep working, and a key evict_full removed frees its place (key_count is the number of buckets held). Never admit a key untracked, never evict a non-full bucket to make room, and refuse max_keys 0 with InvalidMaxKeys.",
            Mistake::SplitEviction => "Check fullness and remove in one critical section, the one allow also takes: a bucket listed as full and spent before its removal must not be dropped.",
            Mistake::SplitCutover => "Validate, refill under the old policy, clamp, and publish the map, policy and observed time in one critical section; a spend between a copy and its publication is otherwise undone.",
            Mistake::RetroactiveRate => "At cutover, first refill every bucket to now under the OLD rate and capacity, then clamp to the new capacity; only later time earns at the new rate.",
            Mistake::CapacityTopUp => "A cutover clamps balances to the new capacity but never raises them; only keys created after it start at the new capacity.",
            Mistake::UnguardedVersion => "Return StalePolicyVersion unless expected_version equals the current version and next.version() is greater.",
            Mistake::SplitKeyBound => "Check max_keys and insert the new key in one critical section: two callers that both saw room for one more key both insert it otherwise.",
            Mistake::BudgetReset => "A cutover keeps every tracked bucket: refill it under the old policy and clamp it to the new capacity; dropping or refilling the buckets grants every key a fresh burst.",
            Mistake::SplitTimeCheck => "Check a call's time and raise the observed time in one step (under the lock the admission takes, or in one compare-and-swap loop that refuses an older time): a check with load and a later store lets a smaller time be published last, and a call older than the largest time already seen is then admitted.",
            Mistake::TornSnapshot => "Take snapshot() at one instant of the design's history: hold, while copying, every lock that calls changing the copied state take (all stripes at once, or the one lock), and read the observed time and policy inside that cut; a copy made stripe by stripe while calls run can show a state no order of the calls produces.",
        }
    }
}

impl fmt::Display for Mistake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.seed_text())
    }
}

#[cfg(test)]
mod tests {
    use super::Mistake;

    /// A new variant breaks this exhaustive match until it is listed in `ALL` too.
    fn position(mistake: Mistake) -> usize {
        match mistake {
            Mistake::WindowReset => 0,
            Mistake::NewKeyNotFull => 1,
            Mistake::DroppedFraction => 2,
            Mistake::RetryEstimate => 3,
            Mistake::UncheckedFixedPoint => 4,
            Mistake::StaleTime => 5,
            Mistake::InputValidation => 6,
            Mistake::MutationBeforeValidation => 7,
            Mistake::DoubleSpend => 8,
            Mistake::IdleEviction => 9,
            Mistake::UntrackedKeys => 10,
            Mistake::SplitEviction => 11,
            Mistake::RetroactiveRate => 12,
            Mistake::CapacityTopUp => 13,
            Mistake::UnguardedVersion => 14,
            Mistake::SplitCutover => 15,
            Mistake::SplitKeyBound => 16,
            Mistake::BudgetReset => 17,
            Mistake::SplitTimeCheck => 18,
            Mistake::TornSnapshot => 19,
        }
    }

    #[test]
    fn all_lists_every_mistake_once_in_order() {
        for (i, mistake) in Mistake::ALL.iter().enumerate() {
            assert_eq!(position(*mistake), i, "{mistake:?}");
        }
    }
}
