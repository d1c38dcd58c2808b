//! Deliberately wrong designs: each breaks one requirement or invariant the way a learner
//! might, and the conformance suite must reject it with the right diagnosis.

mod base;
mod fixed_window_bucket;
pub use fixed_window_bucket::FixedWindowBucket;
mod rejection_forgets_credit;
mod whole_token_refill;
pub use rejection_forgets_credit::RejectionForgetsCredit;
pub use whole_token_refill::WholeTokenRefill;
mod ceil_whole_tokens;
mod floor_retry_estimate;
mod new_key_starts_empty;
pub use ceil_whole_tokens::CeilWholeTokens;
pub use floor_retry_estimate::FloorRetryEstimate;
pub use new_key_starts_empty::NewKeyStartsEmpty;
mod overflowing_units;
pub use overflowing_units::OverflowingUnits;
mod accepts_stale_time;
mod error_mutates_state;
mod wrong_error_order;
pub use accepts_stale_time::AcceptsStaleTime;
pub use error_mutates_state::ErrorMutatesState;
pub use wrong_error_order::WrongErrorOrder;
