use crate::{Decision, LimitError, Policy, Snapshot};

/// A keyed token-bucket limiter: the interface every design implements and the conformance
/// suite grades.
///
/// All methods take `&self`: a design owns its synchronization, and every method must appear
/// to take effect at one instant between its call and its return (linearizability).
///
/// Time (`now`) is nanoseconds from one monotonic origin. A method that returns an error
/// changes no state; the order in which errors win is documented on [`LimitError`].
pub trait Limiter: Send + Sync + 'static {
    /// A limiter with no keys under `policy`, tracking at most `max_keys` keys, whose observed
    /// time is `0`.
    ///
    /// # Errors
    ///
    /// [`LimitError::InvalidMaxKeys`] when `max_keys` is `0`.
    fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError>
    where
        Self: Sized;

    /// Refills `key`'s bucket to `now`, then deducts `cost` whole tokens if the balance
    /// covers all of it; one atomic decision (R1, R2).
    ///
    /// A key seen for the first time starts full. A rejection still stores the refilled
    /// balance (fractional credit is kept). A successful call, allowed or not, raises the
    /// observed time to `now`.
    ///
    /// # Errors
    ///
    /// In this order: [`LimitError::InvalidKey`] (blank key), [`LimitError::InvalidCost`]
    /// (`cost` is `0` or above capacity), [`LimitError::TimeWentBackwards`],
    /// [`LimitError::KeyCapacityReached`] (a new key while `max_keys` are tracked).
    fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError>;

    /// Removes every bucket whose balance refilled to `now` equals the capacity, and returns
    /// how many it removed; a removed key comes back full, exactly as it would have been (R3).
    /// Raises the observed time to `now`.
    ///
    /// # Errors
    ///
    /// [`LimitError::TimeWentBackwards`].
    fn evict_full(&self, now: u64) -> Result<usize, LimitError>;

    /// Cuts over to `next` at `now`: every bucket is refilled to `now` under the *old* rate and
    /// capacity, then clamped to the new capacity (never topped up); afterwards the new rate
    /// applies and new keys start at the new capacity (R4). Raises the observed time to `now`.
    ///
    /// # Errors
    ///
    /// In this order: [`LimitError::TimeWentBackwards`], [`LimitError::StalePolicyVersion`]
    /// (`expected_version` is not the current version, or `next.version()` is not above it).
    fn replace_policy(
        &self,
        next: Policy,
        expected_version: u64,
        now: u64,
    ) -> Result<(), LimitError>;

    /// The number of tracked keys; never above `max_keys`.
    fn key_count(&self) -> usize;

    /// A consistent copy of the whole state. Designs that return `Some` get white-box
    /// invariant checks (I1, I3) and state comparison with the specification.
    fn snapshot(&self) -> Option<Snapshot> {
        None
    }
}
