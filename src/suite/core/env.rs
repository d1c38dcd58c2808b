//! The environment variables that tune a run. Each has a default that keeps a full grade of
//! one design within seconds on a two-core machine.

/// Number of generated cases per property check. Defaults to 256.
pub const CASES: &str = "RATELIMIT_LAB_CASES";
/// Seed (a `u64`) for every generated input, so a grade is reproducible. Defaults to a fixed
/// value; set it to explore other inputs.
pub const SEED: &str = "RATELIMIT_LAB_SEED";
/// Seconds one call into the design may take before the check reports it as a hang, naming
/// the call. Defaults to 10 with real threads and 60 under shuttle and loom (loom and shuttle
/// report a deadlock themselves; the limit catches a call that never returns). The harness's
/// own work is not timed by it: see [`BUDGET`].
pub const TIMEOUT: &str = "RATELIMIT_LAB_TIMEOUT_SECS";
/// Seconds of the harness's own search (schedules explored, perturbed runs, stress rounds,
/// shrinking) per concurrency check. Defaults to 10 with real threads and 60 under shuttle
/// and loom. A search that reaches it stops early and the report says what it covered: the
/// budget costs coverage, never a verdict.
pub const BUDGET: &str = "RATELIMIT_LAB_BUDGET_SECS";
/// Rounds of each concurrency check. Defaults to 200.
pub const ROUNDS: &str = "RATELIMIT_LAB_ROUNDS";
/// A directory: when set, every check's result is added to `results.json` (Exercism v3) and
/// `gradescope.json` (Gradescope) there as soon as it finishes.
pub const REPORT_DIR: &str = "RATELIMIT_LAB_REPORT_DIR";

/// A counterexample file a failed concurrency check saved under shuttle or loom: when set,
/// that check explores only the file's scenario, so the same failure is reported again (see
/// [`Counterexample`](crate::suite::search::counterexample::Counterexample)).
pub const REPLAY: &str = "RATELIMIT_LAB_REPLAY";

const DEFAULT_SEED: u64 = 0x5eed_2026_0013;

fn number(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// [`CASES`].
pub fn cases() -> u32 {
    u32::try_from(number(CASES, 256)).unwrap_or(u32::MAX).max(1)
}

/// [`SEED`].
pub fn seed() -> u64 {
    number(SEED, DEFAULT_SEED)
}

/// [`SEED`], spread over the 32 bytes proptest's ChaCha generator takes.
pub fn seed_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    let mut x = seed();
    for chunk in bytes.chunks_mut(8) {
        x = splitmix(x);
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    bytes
}

/// [`TIMEOUT`].
pub fn timeout() -> std::time::Duration {
    let default = if crate::suite::core::backend::Backend::current().is_controlled() {
        60
    } else {
        10
    };
    std::time::Duration::from_secs(number(TIMEOUT, default).max(1))
}

/// [`BUDGET`].
pub fn budget() -> std::time::Duration {
    let default = if crate::suite::core::backend::Backend::current().is_controlled() {
        60
    } else {
        10
    };
    std::time::Duration::from_secs(number(BUDGET, default))
}

/// [`ROUNDS`].
pub fn rounds() -> u64 {
    number(ROUNDS, 200).max(1)
}

pub use super::random::splitmix;
