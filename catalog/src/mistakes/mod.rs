//! Deliberately wrong designs: each plants exactly one flaw in an otherwise correct copy of
//! the reference `TokenBucket`, the way a learner might, and the conformance suite
//! must reject it with the right diagnosis.
//!
//! Each design is one file: a `//!` header with the idea, what it breaks, the seed's mistake
//! it matches (quoted) and the smallest scenario that exposes it; the struct; one `impl` of
//! [`Limiter`](ratelimit_lab_api::Limiter) whose flaw is marked `// FLAW:`; and a test that
//! runs the same operations on the design and on `TokenBucket` and asserts the difference, so
//! it would fail if the flaw were removed. The correct pieces they share (state, validation
//! in the contract's order, exact refill, the ceiling retry estimate) live in one private
//! module and are the reference's own; a design writes its own code only where it goes
//! wrong. Every lock comes from `ratelimit_lab_api::sync`, so each design also runs under loom
//! and shuttle, and every design reports an honest [`snapshot`] of what it stores.
//!
//! **Breaks** names the primary requirement, then the invariant, as the seed tags them: I1
//! covers the exact balance equation the seed files under it (its "Token bucket" and
//! "Monotonic time" concepts), not only the stored bounds, and "none" means no invariant is
//! crossed. **Seen in** says what can observe the flaw: *outcomes* of sequential calls,
//! the *snapshot* (white-box), or *interleavings* only (real threads, loom, shuttle,
//! linearizability); sequentially, the six concurrent designs equal the reference.
//!
//! | design | breaks | seed mistake | exposing scenario | seen in |
//! |---|---|---|---|---|
//! | [`FixedWindowBucket`] | R1 / I1 | "Reset the balance every second and call it token bucket" | cap 10, rate 2: `allow(k, 10, 999999999)` then `allow(k, 10, 10⁹)`: both pass | outcomes |
//! | [`WholeTokenRefill`] | R1 / I1 | "Drop fractional refill on each request" | cap 10, rate 2: spend 10 at 0, then 1 every 250 ms: none passes | outcomes, snapshot |
//! | [`RejectionForgetsCredit`] | R1 / I1 | "Existing-key rejection still stores accrued fractional credit" (broken) | the trace table: 10 at 0, 1 at 0, 1 at 250 ms, 1 at 500 ms is refused | outcomes, snapshot |
//! | [`NewKeyStartsEmpty`] | R1 / none | "The first request for a new key starts full." (broken) | `allow(k, 1, 0)` on a new key is refused | outcomes |
//! | [`FloorRetryEstimate`] | R1 / none | "retryAfter uses ceiling division" (broken) | cap 1, rate 3: retry 333333333 ns, still refused then | outcomes |
//! | [`CeilWholeTokens`] | R1 / none | "wholeTokens floors the remaining fraction only in the response." (broken) | half a token (trace table at 250 ms) reported as 1 | outcomes |
//! | [`OverflowingUnits`] | R1 / I1 | "Multiply long capacity by a billion without checks" | cap 2^63−1, rate 1: spend all at 0, then all again at 2^64−2 passes | outcomes at extremes |
//! | [`AcceptsStaleTime`] | R1 / I1 | "Two threads sample 100 and 101; the 101 call arrives first." | `allow(k, 10, 1 s)`, `allow(k, 1, 0)` is served, `allow(k, 2, 1 s)` passes | outcomes, snapshot |
//! | [`ErrorMutatesState`] | R1 / none | "Reject invalid input or time reversal before mutation." (broken) | `allow(k, 1, 0)`, `allow(k, 0, 10)`, then `allow(k, 1, 5)` is `TimeWentBackwards` | outcomes, snapshot |
//! | [`WrongErrorOrder`] | R1 / none | "Validate cost and key before reading time." (broken) | `allow(k, 1, 10)`, then `allow(k, 0, 5)` is `TimeWentBackwards` | outcomes (two errors at once) |
//! | [`SplitReadWrite`] | R2 / I2 | "Read one token in two threads, then both write zero" | one token left, two concurrent `allow(k, 1, 0)`: both pass | interleavings |
//! | [`CheckThenDeduct`] | R2 / I2 | "Read one token in two threads" (checked under one lock, deducted under another) | capacity 1, two concurrent `allow(k, 1, 0)`: both pass (capacity 2 takes three callers) | interleavings |
//! | [`RacyObservedTime`] | R2 / I1 | "rejects values older than the last observed service time" (time checked with a load, published with a store after the key's lock) | new keys: `allow(a, 1, 2 s)` and `allow(b, 1, 1 s)` at once, b's store last: `allow(c, 1, 1.5 s)` passes | interleavings |
//! | [`TornSnapshot`] | R2 / none | none of the seed's: "Synchronized observation of retained buckets" (a snapshot copied shard by shard, the observed time read after) | `a`, `b` spent at 0; `allow(a, 1, 1 s)`, `allow(b, 1, 2 s)` and `snapshot()` at once: the copy holds `b` as of 0 with the observed time 2 s | interleavings, snapshot |
//! | [`LruEviction`] | R3 / I3 | "Evict any idle/LRU key under memory pressure" | `allow(k, 10, 0)`, `evict_full(1 s)` removes k, `allow(k, 10, 1 s)` passes | outcomes |
//! | [`UnboundedKeys`] | R3 / I3 | "At maxKeys, a new key is rejected with an explicit capacity error." (broken) | `max_keys` 1: a second key is tracked | outcomes, key count |
//! | [`SilentGrantAtCapacity`] | R3 / I3 | "do not silently grant untracked requests" | `max_keys` 1, cap 10: a second key gets 10 tokens, twice at 0 | outcomes |
//! | [`RacyKeyBound`] | R3 / I3 | "The map contains at most maxKeys" (the bound checked apart from the insert) | `max_keys` 2, `allow(a)`, then `allow(b)` and `allow(c)` at once: both pass, three keys | interleavings |
//! | [`RacyEvictFull`] | R3 / I3 | "the shared monitor prevents a concurrent consumption between the check and deletion" (broken) | cleanup lists full k, a concurrent `allow(k, 10)` empties it, k is removed and comes back full | interleavings |
//! | [`RetroactiveRate`] | R4 / I4 | "Changing rate two→four at 0.5s incorrectly credits two tokens" | the worked example: `allow(k, 1, 0.5 s)` after the cutover leaves 1, not 0 | outcomes, snapshot |
//! | [`TopUpOnCutover`] | R4 / I4 | "Increasing policy capacity never tops up existing buckets." (broken) | the worked example: `allow(k, 20, 0.5 s)` passes | outcomes |
//! | [`NoClampOnDecrease`] | I1 / R4 | "clamp to the new capacity" (left out) | 9 tokens, cutover to cap 5: 9 tokens stored | snapshot only |
//! | [`UnguardedVersion`] | R4 / none | "Use expectedVersion to prevent a stale administrator from overwriting a newer policy." | v2 (expected 1), then v3 (expected 1) succeeds | outcomes |
//! | [`ResetOnCutover`] | R4 / I4 | "Resetting all budgets ... must not be hidden behind a generic config update." | spend 10, bump the version, spend 10 again | outcomes, key count |
//! | [`RefillUnderNewCeiling`] | R4 / I4 | "Clamp to ceiling so a long idle period cannot bank unlimited burst credit." | 9 tokens, idle 60 s, cap 10 → 100: 100 tokens | outcomes |
//! | [`RustWhitespaceKeys`] | R1 / none | "Validate identity, cost and elapsed time" (`key.isBlank()` replaced by Rust's `trim`) | `allow("\u{1f}", 1, 0)` is admitted; `allow("\u{a0}", 1, 0)` is refused | outcomes |
//! | [`ZeroMeansUnbounded`] | R3 / I3 | "`if (maxKeys < 1) throw`" (broken) | `new(policy, 0)` builds a limiter with no key bound | construction |
//! | [`SaturatedRetry`] | R1 / none | "retryAfter ... saturates rather than overflowing" (saturating every estimate) | cap 10, rate 2: `allow(k, 10, 0)`, `allow(k, 1, 0)`: retry `MAX_QUANTITY`, not 500000000 | outcomes |
//! | [`WholeCapacityAlwaysPasses`] | R1 / I2 | "A request is admitted only if the refilled budget covers its entire cost" (broken) | cap 10: `allow(k, 10, 0)` twice: both pass | outcomes |
//! | [`RacyCutover`] | R4 / I2 | "Publish map, policy and observedTime together under the monitor." (broken) | the cutover copies k = 9, a concurrent spend of 9, the publish restores 9 | interleavings |
//! | [`StrictAdmission`] | R1 / none | "A request is admitted only if the refilled budget covers its entire cost" (`>` for `>=`) | cap 10: `allow(k, 10, 0)` on a new key is refused, retry 0 | outcomes |
//! | [`RetryIgnoresCredit`] | R1 / none | "retryAfter uses ceiling division" (of the whole cost, the credit left out) | the trace table at 250 ms: retry 500000000, not 250000000 | outcomes |
//! | [`FloorPlusOneRetry`] | R1 / none | "Ceiling(1e9/3)=333333334ns" (as floor + 1) | the trace table: retry 500000001, not 500000000 | outcomes |
//! | [`RetryOnAdmission`] | R1 / none | "Return rejection with ceiling retry estimate" (an admission given one too) | cap 10, rate 2: `allow(k, 4, 0)`, `allow(k, 6, 0)`: allowed with retry 3 s | outcomes |
//! | [`RoundedWholeTokens`] | R1 / none | "wholeTokens floors the remaining fraction only in the response." (rounded) | half a token (trace table at 250 ms) reported as 1 | outcomes |
//! | [`WholeTokensBeforeDeduction`] | R1 / none | "wholeTokens floors the remaining fraction" (of the balance before the spend) | `allow(k, 10, 0)` reports 10 tokens left | outcomes |
//! | [`RefillFromCreation`] | R1 / I1 | "oldUnits+elapsedNanos×tokensPerSecond" (elapsed from the key's creation) | the trace table, then `allow(k, 2, 750 ms)` passes | outcomes, snapshot |
//! | [`RejectionKeepsOldTime`] | R1 / I1 | "Existing-key rejection still stores accrued fractional credit and last observed time." (the time left out) | the trace table, then `allow(k, 1, 750 ms)` passes | outcomes, snapshot |
//! | [`ClampAfterSpend`] | R1 / I1 | "Clamp to ceiling so a long idle period cannot bank unlimited burst credit." (clamped after the spend) | cap 10: `allow(k, 10, 0)`, then `allow(k, 10, 60 s)` twice: both pass | outcomes |
//! | [`MillisecondRefill`] | R1 / I1 | "Store tokens in billionths so nanosecond elapsed time ... has an exact representation" (whole milliseconds) | cap 1, rate 3: `allow(k, 1, 333333334)` is refused | outcomes, snapshot |
//! | [`NewKeyChargedTwice`] | R1 / none | "The first request for a new key starts full." (created already charged) | `allow(k, 1, 0)` on a new key leaves 8 tokens | outcomes |
//! | [`ZeroCostAccepted`] | R1 / none | "request cost are positive longs" (`cost < 1` left out) | `allow(k, 0, 0)` is allowed | outcomes |
//! | [`OversizedCostRefused`] | R1 / none | "it does not receive a misleading finite retry time" (broken) | `allow(k, 11, 0)` is refused with retry 500000000 | outcomes |
//! | [`KeyCapacityBeforeTime`] | R1 / none | "Validate cost and key before reading time. New keys check capacity." (capacity first) | `max_keys` 1: `allow(a, 1, 10)`, `allow(b, 1, 5)` is `KeyCapacityReached` | outcomes (two errors at once) |
//! | [`VersionBeforeTime`] | R1 / none | "The older 100 call is rejected" (after the version check, not before it) | `allow(k, 4, 100)`, `replace_policy(v1, expected 7, at 5)` is `StalePolicyVersion` | outcomes (two errors at once) |
//! | [`RefusesEqualTime`] | R1 / none | "The older 100 call is rejected" (an equal time too) | `allow(k, 10, 0)`, `allow(k, 1, 0)` is `TimeWentBackwards` | outcomes |
//! | [`EvictKeepsObservedTime`] | R3 / I1 | "The older 100 call is rejected instead of silently earning negative credit." (not after a cleanup) | `allow(k, 1, 0)`, `evict_full(10 s)`, `allow(k, 1, 5 s)` is served | outcomes |
//! | [`EvictWithoutRefill`] | R3 / I3 | "evictFull refills for comparison and removes only full buckets." (no refill) | `allow(k, 1, 0)`, `evict_full(10 s)` keeps k | outcomes, key count |
//! | [`EvictNearlyFull`] | R3 / I3 | "eviction grants no extra tokens compared with keeping a full bucket" (fullness rounded up) | `allow(k, 1, 0)`, `evict_full(250 ms)` removes k at 9.5 tokens | outcomes |
//! | [`EvictEmptyBuckets`] | R3 / I3 | "An exhausted key is removed and returns immediately to a full bucket." (exhausted and not touched at the sweep's instant) | `allow(k, 10, 0)`, `evict_full(1 ns)` removes k, `allow(k, 10, 1 ns)` passes | outcomes |
//! | [`OneKeyOverBound`] | R3 / I3 | "At maxKeys, a new key is rejected" (at maxKeys + 1) | `max_keys` 1: a second key is tracked, a third refused | outcomes, key count |
//! | [`NewKeyAtOldCapacity`] | R4 / I4 | "New keys after cutover start at the new full capacity." (broken) | cutover to cap 20 at 0: `allow(n, 20, 0)` is refused | outcomes |
//! | [`VersionMayEqual`] | R4 / none (an R1 check catches it first; the failure is filed under R4, the step that differs) | "Reject stale expectedVersion or non-increasing next.version." (an equal one let through) | `replace_policy(v1, expected 1)` succeeds | outcomes |
//! | [`CutoverDropsCredit`] | R4 / I4 | "old policy earns all pre-cutover credit" (re-dated without a refill) | the worked example: `allow(k, 1, 0.5 s)` after the cutover is refused | outcomes, snapshot |
//! | [`PerKeyTime`] | R1 / I1 | "Accept a caller-sampled time older than one already seen" (checked per key, not against the limiter's observed time) | `allow(a, 1, 10)`, then `allow(b, 1, 5)` is served | outcomes |
//! | [`CutoverRefillsAtNewRate`] | R4 / I4 | "Changing rate two→four at 0.5s incorrectly credits two tokens" (settled under the new policy) | the worked example: `allow(k, 1, 0.5 s)` after the cutover leaves 1, not 0 | outcomes, snapshot |
//! | [`RefillOnCutover`] | R4 / I4 | "Resetting all budgets ... must not be hidden behind a generic config update." (the keys kept, refilled) | spend 10, bump the version, spend 10 again: one key still counted | outcomes |
//! | [`RejectionRefillsBucket`] | R1 / I1 | "Reset the balance every second and call it token bucket" (reset by a rejection) | cap 10: `allow(k, 10, 0)`, `allow(k, 1, 0)` refused, `allow(k, 10, 0)` passes | outcomes, snapshot |
//!
//! [`snapshot`]: ratelimit_lab_api::Limiter::snapshot

mod accepts_stale_time;
mod in_words;
pub use in_words::in_words;
pub(crate) mod base;
mod ceil_whole_tokens;
mod check_then_deduct;
mod error_mutates_state;
mod fixed_window_bucket;
mod floor_retry_estimate;
mod lru_eviction;
mod new_key_starts_empty;
mod no_clamp_on_decrease;
mod overflowing_units;
mod racy_cutover;
mod racy_evict_full;
mod racy_key_bound;
mod racy_observed_time;
mod refill_on_cutover;
mod refill_under_new_ceiling;
mod rejection_forgets_credit;
mod reset_on_cutover;
mod retroactive_rate;
mod silent_grant_at_capacity;
mod split_read_write;
mod top_up_on_cutover;
mod torn_snapshot;
mod unbounded_keys;
mod unguarded_version;
mod whole_token_refill;
mod wrong_error_order;

pub use accepts_stale_time::AcceptsStaleTime;
pub use ceil_whole_tokens::CeilWholeTokens;
pub use check_then_deduct::CheckThenDeduct;
pub use error_mutates_state::ErrorMutatesState;
pub use fixed_window_bucket::FixedWindowBucket;
pub use floor_retry_estimate::FloorRetryEstimate;
pub use lru_eviction::LruEviction;
pub use new_key_starts_empty::NewKeyStartsEmpty;
pub use no_clamp_on_decrease::NoClampOnDecrease;
pub use overflowing_units::OverflowingUnits;
pub use racy_cutover::RacyCutover;
pub use racy_evict_full::RacyEvictFull;
pub use racy_key_bound::RacyKeyBound;
pub use racy_observed_time::RacyObservedTime;
pub use refill_on_cutover::RefillOnCutover;
pub use refill_under_new_ceiling::RefillUnderNewCeiling;
pub use rejection_forgets_credit::RejectionForgetsCredit;
pub use reset_on_cutover::ResetOnCutover;
pub use retroactive_rate::RetroactiveRate;
pub use silent_grant_at_capacity::SilentGrantAtCapacity;
pub use split_read_write::SplitReadWrite;
pub use top_up_on_cutover::TopUpOnCutover;
pub use torn_snapshot::TornSnapshot;
pub use unbounded_keys::UnboundedKeys;
pub use unguarded_version::UnguardedVersion;
pub use whole_token_refill::WholeTokenRefill;
pub use wrong_error_order::WrongErrorOrder;
mod rust_whitespace_keys;
mod saturated_retry;
mod whole_capacity_always_passes;
mod zero_means_unbounded;
pub use rust_whitespace_keys::RustWhitespaceKeys;
pub use saturated_retry::SaturatedRetry;
pub use whole_capacity_always_passes::WholeCapacityAlwaysPasses;
pub use zero_means_unbounded::ZeroMeansUnbounded;
mod clamp_after_spend;
mod cutover_drops_credit;
mod cutover_refills_at_new_rate;
mod evict_empty_buckets;
mod evict_keeps_observed_time;
mod evict_nearly_full;
mod evict_without_refill;
mod floor_plus_one_retry;
mod key_capacity_before_time;
mod millisecond_refill;
mod new_key_at_old_capacity;
mod new_key_charged_twice;
mod one_key_over_bound;
mod oversized_cost_refused;
mod per_key_time;
mod refill_from_creation;
mod refuses_equal_time;
mod rejection_keeps_old_time;
mod rejection_refills_bucket;
mod retry_ignores_credit;
mod retry_on_admission;
mod rounded_whole_tokens;
mod strict_admission;
mod version_before_time;
mod version_may_equal;
mod whole_tokens_before_deduction;
mod zero_cost_accepted;
pub use clamp_after_spend::ClampAfterSpend;
pub use cutover_drops_credit::CutoverDropsCredit;
pub use cutover_refills_at_new_rate::CutoverRefillsAtNewRate;
pub use evict_empty_buckets::EvictEmptyBuckets;
pub use evict_keeps_observed_time::EvictKeepsObservedTime;
pub use evict_nearly_full::EvictNearlyFull;
pub use evict_without_refill::EvictWithoutRefill;
pub use floor_plus_one_retry::FloorPlusOneRetry;
pub use key_capacity_before_time::KeyCapacityBeforeTime;
pub use millisecond_refill::MillisecondRefill;
pub use new_key_at_old_capacity::NewKeyAtOldCapacity;
pub use new_key_charged_twice::NewKeyChargedTwice;
pub use one_key_over_bound::OneKeyOverBound;
pub use oversized_cost_refused::OversizedCostRefused;
pub use per_key_time::PerKeyTime;
pub use refill_from_creation::RefillFromCreation;
pub use refuses_equal_time::RefusesEqualTime;
pub use rejection_keeps_old_time::RejectionKeepsOldTime;
pub use rejection_refills_bucket::RejectionRefillsBucket;
pub use retry_ignores_credit::RetryIgnoresCredit;
pub use retry_on_admission::RetryOnAdmission;
pub use rounded_whole_tokens::RoundedWholeTokens;
pub use strict_admission::StrictAdmission;
pub use version_before_time::VersionBeforeTime;
pub use version_may_equal::VersionMayEqual;
pub use whole_tokens_before_deduction::WholeTokensBeforeDeduction;
pub use zero_cost_accepted::ZeroCostAccepted;
