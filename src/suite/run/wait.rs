//! Waiting for a check's thread: the result, or why there is none (a call into the design
//! that has not returned within the limit, or the thread's end), and the check's threads as
//! a group whose blocked members can be named.
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Why [`wait_for_check`] stopped waiting without a result.
pub(crate) enum Waited {
    /// A call into the design had not returned within the limit: the call, in words (empty
    /// when the whole check ran past [`BACKSTOP`] times the limit with every call returning).
    Hung(String),
    /// The check's thread ended without sending its result.
    Ended,
}

/// How many call limits a whole check may take, its calls all returning, before it is
/// stopped: the harness's searches end at their budget long before, so only a design whose
/// every call is slow (each under the limit) gets here.
pub(crate) const BACKSTOP: u64 = 30;

/// How often the runner looks at the check's calls in flight.
const POLL: Duration = Duration::from_millis(200);

/// Waits for the check's result. The check is stopped only when one of the design's calls
/// has been running for `limit` (see [`watch`](crate::suite::core::watch)), or, as a backstop, when the
/// whole check has run [`BACKSTOP`] times `limit`.
pub(crate) fn wait_for_check<Done>(
    rx: &mpsc::Receiver<Done>,
    calls: u64,
    limit: Duration,
    started: Instant,
) -> Result<Done, Waited> {
    let backstop = limit.saturating_mul(u32::try_from(BACKSTOP).unwrap_or(u32::MAX));
    loop {
        match rx.recv_timeout(POLL.min(limit)) {
            Ok(done) => return Ok(done),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Waited::Ended),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some((call, _)) = crate::suite::core::watch::overdue(calls, limit) {
                    return Err(Waited::Hung(call));
                }
                if started.elapsed() >= backstop {
                    return Err(Waited::Hung(String::new()));
                }
            }
        }
    }
}

/// The check's threads, for [`Status::TimedOut`]: under std they form a group of the facade's
/// [`waits`](crate::sync::waits), which lists those blocked in its locks; shuttle and loom
/// detect a deadlock themselves.
pub(crate) mod waits {
    /// A group name no other run of a check uses (the same check may run for several designs
    /// at once).
    pub(crate) fn group_name(check: &str) -> String {
        use std::sync::atomic::{AtomicU64, Ordering};
        static RUNS: AtomicU64 = AtomicU64::new(0);
        format!("{check} #{}", RUNS.fetch_add(1, Ordering::Relaxed))
    }

    #[cfg(not(any(loom, feature = "shuttle")))]
    pub(crate) use crate::sync::waits::join_group as join;

    #[cfg(not(any(loom, feature = "shuttle")))]
    pub(crate) fn waiting(group: &str) -> Vec<String> {
        crate::sync::waits::waiting_in(group)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Under shuttle and loom nothing records a thread's group.
    #[cfg(any(loom, feature = "shuttle"))]
    pub(crate) struct Unrecorded;

    #[cfg(any(loom, feature = "shuttle"))]
    pub(crate) fn join(_group: &str) -> Unrecorded {
        Unrecorded
    }

    #[cfg(any(loom, feature = "shuttle"))]
    pub(crate) fn waiting(_group: &str) -> Vec<String> {
        Vec::new()
    }
}
