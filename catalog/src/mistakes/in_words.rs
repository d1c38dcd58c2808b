//! Each wrong design in one sentence, as its own documentation opens (emphasis dropped): what
//! a learner reads when their design behaves like it. A test keeps each sentence equal to the
//! first paragraph of the design's module documentation.

/// What the catalogued wrong design called `name` does wrong, in one sentence; `None` for a
/// name that is not one of the wrong designs.
pub fn in_words(name: &str) -> Option<&'static str> {
    Some(match name {
        "AcceptsStaleTime" => "No time-reversal check: a call older than the last one observed is served, its elapsed time saturating to zero, and the bucket's time is moved back to it.",
        "CeilWholeTokens" => "The response rounds the remaining balance up to whole tokens, so it reports a token the caller does not have.",
        "CheckThenDeduct" => "Admission in two critical sections that never undo a spend: the first checks that the balance covers the cost, the lock is released, and the second deducts the cost from whatever the balance is by then, stopping at zero.",
        "ClampAfterSpend" => "The refill is compared with the cost before it is clamped to the capacity; the clamp comes after the spend, on what is stored. A long idle period is a bank the next request spends from, and what is left is still a full bucket.",
        "CutoverDropsCredit" => "The cutover re-dates every bucket to the cutover time and clamps it, but does not refill it first: the credit earned since each bucket's last update is lost.",
        "CutoverRefillsAtNewRate" => "The cutover settles every bucket to the cutover time, but under the new policy: the time since each bucket's last update earns at the new rate, up to the new capacity.",
        "ErrorMutatesState" => "The bucket is settled (refilled to `now` and saved, observed time raised) before the cost is validated, so a call that fails with `InvalidCost` has already changed the state.",
        "EvictEmptyBuckets" => "`evict_full` also removes buckets with no whole token left that nobody touched at the sweep's instant, as dead weight: an exhausted key is dropped and comes back full.",
        "EvictKeepsObservedTime" => "`evict_full` checks the time but does not record it as observed: a later call with an earlier time is served.",
        "EvictNearlyFull" => "`evict_full` counts a bucket as full when its balance rounded up to whole tokens is the capacity, so a bucket a fraction of a token short of full is removed.",
        "EvictWithoutRefill" => "`evict_full` judges fullness on the stored balance, without refilling it to `now`: only buckets that were full at their last update go, never ones that have refilled since.",
        "FixedWindowBucket" => "A fixed window dressed as a token bucket: the balance snaps back to full at every one-second boundary, with no gradual refill in between.",
        "FloorPlusOneRetry" => "The retry estimate rounds the shortfall over the rate down and adds one nanosecond, a ceiling that is one nanosecond late whenever the division is exact.",
        "FloorRetryEstimate" => "The retry estimate divides the shortfall by the rate rounding down, so it can name an instant at which the same request still fails.",
        "KeyCapacityBeforeTime" => "`allow` checks the key bound before the time: a new key arriving with a stale time at a full map is told `KeyCapacityReached` instead of `TimeWentBackwards`.",
        "LruEviction" => "Cleanup by idleness: `evict_full` also removes any bucket untouched for a second or more, whatever its balance, as a time-to-live cache would.",
        "MillisecondRefill" => "Refill counts whole milliseconds of elapsed time, while the bucket's time still moves to `now`: the sub-millisecond remainder is thrown away on every call.",
        "NewKeyAtOldCapacity" => "A new key's bucket is filled to the capacity the limiter was built with, not to the capacity of the policy in force: keys first seen after a cutover start at the old size.",
        "NewKeyChargedTwice" => "A new key's bucket is created with the cost of its first request already taken out, and that request is then judged and charged like any other: the first cost is paid twice.",
        "NewKeyStartsEmpty" => "A key seen for the first time starts with an empty bucket instead of a full one.",
        "NoClampOnDecrease" => "The cutover refills each bucket under the old policy but does not clamp it to a smaller new capacity, so stored balances sit above the new ceiling.",
        "OneKeyOverBound" => "The key bound is checked with `>` instead of `>=`: the map takes one key more than `max_keys` before it refuses.",
        "OverflowingUnits" => "Fixed point in `u64` with wrapping arithmetic: `capacity × 10⁹`, `elapsed × rate` and `balance + earning` silently wrap once they pass 2^64.",
        "OversizedCostRefused" => "A cost above the capacity is treated as an ordinary request that the balance does not cover: it is refused with a retry estimate instead of being an error.",
        "PerKeyTime" => "`allow` checks the time against the key's own last time instead of the limiter's observed time: a call older than another key's last call is served, and a new key takes any time.",
        "RacyCutover" => "Policy change in two critical sections: the first validates and builds the settled map from a copy of the state, the lock is released, and the second publishes map and policy.",
        "RacyEvictFull" => "Cleanup in two critical sections: the first lists the buckets that are full, the lock is released, and the second removes every listed key without looking again.",
        "RacyKeyBound" => "The key bound checked in one critical section and the new key inserted in another: the first validates the call and, for a key not yet tracked, refuses it at `max_keys`; the lock is released; the second decides and stores without looking at the bound again.",
        "TornSnapshot" => "The sharded design of `ShardedLocks`, with a `snapshot` that copies its shards one at a time, each under its own lock, and reads the observed time after them: the copy is not one cut of the state.",
        "RacyObservedTime" => "Per-key locks with the observed time in an atomic that is checked with a `load` and published with a `store` after the key's lock is released: the time check and the time's publication are not one step.",
        "RefillFromCreation" => "`allow` stores the new balance but never moves the bucket's time: every refill counts the time since the key was created (or last cut over), though earlier refills already earned part of it.",
        "RefillUnderNewCeiling" => "The cutover refills with the old rate but clamps only to the new capacity, skipping the old capacity's clamp: a long idle period banks credit beyond the old burst when the capacity grows.",
        "RefusesEqualTime" => "`allow` demands that time move forward for a key: a second request at the instant of the key's last update is refused as `TimeWentBackwards`.",
        "RejectionForgetsCredit" => "A rejection saves the new time but not the refilled balance: the bucket's time moves to `now` while its units stay where they were before the refill.",
        "RejectionKeepsOldTime" => "A rejection stores the refilled balance but keeps the bucket's old time: the credit just stored is earned a second time by the next refill.",
        "RejectionRefillsBucket" => "A rejection stores a full bucket: the request it refuses restores the whole burst.",
        "RefillOnCutover" => "A policy change refills every tracked bucket to the new capacity: the keys stay, their spent budgets do not.",
        "ResetOnCutover" => "A policy change forgets every bucket, so each key comes back with a full new burst.",
        "RetroactiveRate" => "Policy change swaps the policy and nothing else: buckets are not settled at the cutover, so the new rate is applied to time that passed under the old one.",
        "RetryIgnoresCredit" => "The retry estimate is the time to earn the whole cost, as if the bucket were empty: the credit it already holds is left out of the shortfall.",
        "RetryOnAdmission" => "An admitted request also gets a retry estimate: the wait until the same request would pass again, instead of 0.",
        "RoundedWholeTokens" => "The response rounds the remaining balance to the nearest whole token, so half a token or more is reported as a token the caller does not have.",
        "RustWhitespaceKeys" => "Blank keys judged by Rust's `str::trim` instead of the contract's white space (Java's `String::isBlank`, which `is_blank_key` implements).",
        "SaturatedRetry" => "Every rejection answers the largest retry estimate there is, `MAX_QUANTITY`, instead of the wait the refill needs.",
        "SilentGrantAtCapacity" => "At `max_keys`, a new key is admitted as if it had a fresh full bucket but is not tracked: the request is silently granted instead of refused with `KeyCapacityReached`.",
        "SplitReadWrite" => "Admission in two critical sections: the first reads, refills and decides, the lock is released, and the second writes the decided balance back.",
        "StrictAdmission" => "Admission compares the balance with the cost strictly (`>`), so a request that would leave the bucket at exactly zero is refused.",
        "TopUpOnCutover" => "A capacity increase fills every existing bucket to the new capacity, as if raising the limit were a grant.",
        "UnboundedKeys" => "No key bound: a new key is always tracked, however many are already in the map.",
        "UnguardedVersion" => "`expected_version` is ignored: any administrator may replace the policy as long as the new version is larger, even one who read an older policy.",
        "VersionBeforeTime" => "`replace_policy` checks the versions before the time: a stale administrator arriving with a stale time is told `StalePolicyVersion` instead of `TimeWentBackwards`.",
        "VersionMayEqual" => "The version guard refuses only a lower next version: a policy carrying the current version number replaces the current one.",
        "WholeCapacityAlwaysPasses" => "A request for the whole capacity is treated as a fresh burst: it is always admitted and leaves the bucket empty, whatever the balance.",
        "WholeTokenRefill" => "Refill rounded down to whole tokens on every request, while the bucket's time still moves to `now`: the fraction earned since the last call is thrown away each time.",
        "WholeTokensBeforeDeduction" => "The response reports the whole tokens of the balance before the deduction: an admitted request is told the tokens it has just spent are still there.",
        "WrongErrorOrder" => "Time is checked before the cost: a call with both an impossible cost and a stale time reports `TimeWentBackwards` instead of `InvalidCost`.",
        "ZeroCostAccepted" => "The cost check rejects only costs above the capacity: a cost of 0 is served as a free request.",
        "ZeroMeansUnbounded" => "`max_keys = 0` read as \"no limit\": the constructor accepts it and tracks any number of keys instead of refusing the configuration.",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::in_words;

    /// The first paragraph of a module's `//!` documentation, on one line, emphasis dropped.
    fn first_paragraph(source: &str) -> String {
        source
            .lines()
            .map_while(|l| l.strip_prefix("//!"))
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
            .replace('*', "")
    }

    #[test]
    fn each_sentence_is_its_design_documentation_and_every_wrong_design_has_one() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/mistakes");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).expect("the mistakes folder") {
            let path = entry.expect("an entry").path();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            if ["mod", "base", "in_words"].contains(&stem) {
                continue;
            }
            let name: String = stem
                .split('_')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect::<String>())
                        .unwrap_or_default()
                })
                .collect();
            let source = std::fs::read_to_string(&path).expect("readable");
            assert_eq!(
                in_words(&name),
                Some(first_paragraph(&source).as_str()),
                "{name}"
            );
            checked += 1;
        }
        for design in crate::DESIGNS {
            if matches!(design.verdict, crate::Verdict::Wrong { .. }) {
                assert!(
                    in_words(design.name).is_some(),
                    "{} has no sentence",
                    design.name
                );
            }
        }
        assert!(checked >= 50, "{checked} designs checked");
        assert_eq!(in_words("TokenBucket"), None);
    }
}
