//! quickcheck properties of the refill arithmetic, each derived from first principles rather
//! than from the specification's code:
//!
//! - a rejected call in between changes no later outcome (one long refill equals two short
//!   ones, until the cap);
//! - the retry estimate is tight: at `now + retry` the same request passes with no
//!   competitor, at `now + retry − 1` it does not;
//! - `whole_tokens` is the floor of the balance `min(cap·10⁹, (cap − spent)·10⁹ + t·rate)`.
//!
//! Each property drives fresh designs (a call changes state, so every alternative history gets
//! its own limiter). Inputs are seeded by [`env::SEED`](crate::suite::core::env::SEED).
use crate::suite::host::subject::Subject;
use std::cell::{Cell, RefCell};

use quickcheck::{Gen, QuickCheck, TestResult};

use crate::{Decision, Limiter, Policy, MAX_QUANTITY, UNITS_PER_TOKEN};

use crate::suite::core::cause::Cause;
use crate::suite::core::env;
use crate::suite::core::failure::Failure;
use crate::suite::core::failure::TraceRow;
use crate::suite::core::panics::guarded;
use crate::suite::oracle::probe::build;

const S: u64 = 1_000_000_000;

thread_local! {
    /// The last failing input's report: after shrinking, the minimal one.
    static LAST_FAILURE: RefCell<Option<Failure>> = const { RefCell::new(None) };
    /// The design the running property builds (quickcheck takes plain functions, which
    /// capture nothing; it runs them on the calling thread).
    static SUBJECT: Cell<Option<Subject>> = const { Cell::new(None) };
    /// How many inputs the property has run on since its first failure (while quickcheck
    /// shrinks it).
    static SHRINK_RUNS: Cell<u32> = const { Cell::new(0) };
}

/// The most inputs a property runs on while a failure is shrunk, as the proptest checks'
/// `max_shrink_iters`. quickcheck's shrinking has no bound of its own, and a failure that only
/// some residues of an input show (a large time is `d` with `d % 8 == 7`) can take it a step
/// of one at a time through 64-bit values: minutes, blamed on the design by the check's time
/// limit. Counted, not timed, so the shrunk input is the same on every machine.
const MAX_SHRINK_RUNS: u32 = 4096;

/// Whether the shrinking of a failure has run out of its [`MAX_SHRINK_RUNS`]: then a
/// property answers every further input as discarded without running it, and quickcheck ends
/// with the smallest failure found so far (the one [`LAST_FAILURE`] holds).
fn shrinking_spent() -> bool {
    if LAST_FAILURE.with(|slot| slot.borrow().is_none()) {
        return false;
    }
    let runs = SHRINK_RUNS.with(|n| {
        n.set(n.get().saturating_add(1));
        n.get()
    });
    runs > MAX_SHRINK_RUNS
}

/// The case a property runs on, or `None` when it runs on none: the policy is not valid, or
/// the shrinking of a failure has run out of its [`MAX_SHRINK_RUNS`].
fn case(raw: Raw) -> Option<(Input, Policy)> {
    if shrinking_spent() {
        return None;
    }
    let input = Input::from_raw(raw);
    Some((input, input.policy()?))
}

/// The design of the property running on this thread.
fn subject() -> Result<Subject, Failure> {
    SUBJECT
        .with(Cell::get)
        .ok_or_else(|| Failure::new("the property ran with no design to build"))
}

type Raw = (u64, u64, u64, u64, u64);

/// A case: a policy, a first spend at t = 0, a time `t` and a cost asked for at `t`.
#[derive(Clone, Copy, Debug)]
struct Input {
    capacity: u64,
    rate: u64,
    spent: u64,
    t: u64,
    cost: u64,
}

impl Input {
    fn from_raw((a, b, c, d, e): Raw) -> Input {
        let capacity = match a % 16 {
            15 => MAX_QUANTITY - (a / 16) % 2,
            _ => 1 + (a / 16) % 20,
        };
        let rate = match b % 8 {
            7 => [MAX_QUANTITY, S, 999_999_999][((b / 8) % 3) as usize],
            _ => 1 + (b / 8) % 12,
        };
        let t = match d % 8 {
            7 => d,
            _ => (d / 8) % (4 * S),
        };
        Input {
            capacity,
            rate,
            spent: 1 + c % capacity,
            t,
            cost: 1 + e % capacity,
        }
    }

    fn policy(&self) -> Option<Policy> {
        Policy::new(1, self.capacity, self.rate).ok()
    }
}

/// One call on a fresh design, with its trace row.
struct Run {
    design: Box<dyn Limiter>,
    rows: Vec<TraceRow>,
}

impl Run {
    fn new(subject: Subject, policy: Policy) -> Result<Self, Failure> {
        Ok(Run {
            design: build(subject, policy, 4)?,
            rows: Vec::new(),
        })
    }

    fn allow(&mut self, cost: u64, now: u64, expected: &str) -> Result<Decision, Failure> {
        let got = guarded(|| self.design.allow("k", cost, now));
        let step = self.rows.len() + 1;
        let shown = match &got {
            Ok(Ok(d)) => crate::model::Outcome::Decision(*d).to_string(),
            Ok(Err(e)) => format!("error: {e}"),
            Err(msg) => format!("panicked: {msg}"),
        };
        self.rows.push(TraceRow {
            step,
            action: format!("allow(\"k\", cost {cost}, at {now} ns)"),
            expected: expected.to_string(),
            got: shown,
        });
        match got {
            Ok(Ok(d)) => Ok(d),
            Ok(Err(e)) => Err(Failure::new(format!(
                "allow(\"k\", cost {cost}, at {now} ns) failed: {e}"
            ))
            .with_property_trace(self.rows.clone())),
            Err(msg) => Err(Failure::new(format!(
                "allow(\"k\", cost {cost}, at {now} ns) panicked: {msg}"
            ))
            .with_property_trace(self.rows.clone())
            .as_panic()),
        }
    }
}

fn record(failure: Failure) -> TestResult {
    LAST_FAILURE.with(|slot| *slot.borrow_mut() = Some(failure));
    TestResult::failed()
}

fn verdict(r: Result<TestResult, Failure>) -> TestResult {
    r.unwrap_or_else(record)
}

fn two_steps(raw: Raw, mid: u64) -> TestResult {
    let Some((input, policy)) = case(raw) else {
        return TestResult::discard();
    };
    let mid = mid % input.t.max(1);
    verdict((|| {
        let subject = subject()?;
        let mut long = Run::new(subject, policy)?;
        long.allow(input.spent, 0, "allowed (a new key starts full)")?;
        let one = long.allow(input.cost, input.t, "(the same as below)")?;
        let mut split = Run::new(subject, policy)?;
        split.allow(input.spent, 0, "allowed (a new key starts full)")?;
        let probe = split.allow(input.capacity, mid, "rejected unless full (a probe)")?;
        if probe.allowed {
            return Ok(TestResult::discard());
        }
        let two = split.allow(
            input.cost,
            input.t,
            &crate::model::Outcome::Decision(one).to_string(),
        )?;
        if one != two {
            return Err(Failure::new(format!(
                "with {policy}: after spending {} at 0, asking {} at {} ns gave \"{}\" directly but \"{}\" after a rejected probe at {mid} ns: a rejection lost or added credit",
                input.spent,
                input.cost,
                input.t,
                crate::model::Outcome::Decision(one),
                crate::model::Outcome::Decision(two)
            ))
            .with_property_trace(split.rows));
        }
        Ok(TestResult::passed())
    })())
}

fn retry_tight(raw: Raw) -> TestResult {
    let Some((input, policy)) = case(raw) else {
        return TestResult::discard();
    };
    verdict((|| {
        let subject = subject()?;
        let prefix = |run: &mut Run| -> Result<Decision, Failure> {
            run.allow(input.spent, 0, "allowed (a new key starts full)")?;
            run.allow(input.cost, input.t, "rejected with a retry estimate")
        };
        let mut first = Run::new(subject, policy)?;
        let d = prefix(&mut first)?;
        if d.allowed || d.retry_after_nanos >= MAX_QUANTITY {
            return Ok(TestResult::discard());
        }
        if d.retry_after_nanos == 0 {
            return Err(Failure::new(format!(
                "a rejection at {} ns reported retry_after_nanos 0: the same request would still fail then",
                input.t
            ))
            .with_property_trace(first.rows)
            .because(Cause::quantity("allow", "retry_after_nanos", false)));
        }
        let Some(at) = input.t.checked_add(d.retry_after_nanos) else {
            return Ok(TestResult::discard());
        };
        let mut on_time = Run::new(subject, policy)?;
        prefix(&mut on_time)?;
        let passed = on_time.allow(input.cost, at, "allowed: the estimate has elapsed")?;
        if !passed.allowed {
            return Err(Failure::new(format!(
                "retry_after_nanos {} is too early: asking again at {at} ns was still rejected",
                d.retry_after_nanos
            ))
            .with_property_trace(on_time.rows)
            .because(Cause::quantity("allow", "retry_after_nanos", false)));
        }
        let mut early = Run::new(subject, policy)?;
        prefix(&mut early)?;
        let before = early.allow(input.cost, at - 1, "rejected: one nanosecond short")?;
        if before.allowed {
            return Err(Failure::new(format!(
                "retry_after_nanos {} is too late: asking again one nanosecond earlier, at {} ns, already passed",
                d.retry_after_nanos,
                at - 1
            ))
            .with_property_trace(early.rows)
            .because(Cause::quantity("allow", "retry_after_nanos", true)));
        }
        Ok(TestResult::passed())
    })())
}

fn whole_tokens(raw: Raw) -> TestResult {
    let Some((input, policy)) = case(raw) else {
        return TestResult::discard();
    };
    let unit = u128::from(UNITS_PER_TOKEN);
    let ceiling = u128::from(input.capacity) * unit;
    let left = u128::from(input.capacity - input.spent) * unit;
    let balance = (left + u128::from(input.t) * u128::from(input.rate)).min(ceiling);
    let need = u128::from(input.cost) * unit;
    let allowed = balance >= need;
    let after = if allowed { balance - need } else { balance };
    let whole = u64::try_from(after / unit).unwrap_or(u64::MAX);
    verdict((|| {
        let subject = subject()?;
        let mut run = Run::new(subject, policy)?;
        run.allow(input.spent, 0, "allowed (a new key starts full)")?;
        let expected = format!(
            "{}, {whole} tokens left (balance {after} units)",
            if allowed { "allowed" } else { "rejected" }
        );
        let d = run.allow(input.cost, input.t, &expected)?;
        if d.allowed != allowed || d.whole_tokens != whole {
            return Err(Failure::new(format!(
                "with {policy}: the balance at {} ns is {balance} units, so asking {} is {} with floor({after} / 10⁹) = {whole} whole tokens left; the design said allowed={} with {} whole tokens",
                input.t,
                input.cost,
                if allowed { "allowed" } else { "rejected" },
                d.allowed,
                d.whole_tokens
            ))
            .with_property_trace(run.rows)
            .because(if d.allowed != allowed {
                Cause::new(if d.allowed {
                    "allow admitted a request the specification rejects"
                } else {
                    "allow rejected a request the specification admits"
                })
            } else {
                Cause::quantity("allow", "whole_tokens", d.whole_tokens > whole)
            }));
        }
        Ok(TestResult::passed())
    })())
}

/// Runs `property` on [`env::cases`](crate::suite::core::env::cases) generated inputs (drawing up to 20
/// times as many, since a property discards inputs its premise does not cover) and fails
/// unless at least half of the requested cases actually ran: a design that makes the premise
/// unreachable (every rejection answering `MAX_QUANTITY`, say) must not pass on zero cases.
fn check<A: quickcheck::Testable>(subject: Subject, property: A) -> Result<(), Failure> {
    LAST_FAILURE.with(|slot| slot.borrow_mut().take());
    SHRINK_RUNS.with(|n| n.set(0));
    SUBJECT.with(|slot| slot.set(Some(subject)));
    let tests = u64::from(env::cases());
    let required = tests.div_ceil(2);
    let mut qc = QuickCheck::new()
        .tests(tests)
        .max_tests(tests * 20)
        .rng(Gen::from_size_and_seed(100, env::seed()));
    match qc.quicktest(property) {
        Ok(ran) if ran >= required => Ok(()),
        Ok(ran) => Err(Failure::new(format!(
            "only {ran} of the {tests} generated cases reached what the property checks (at least {required} must): \
             on the other {} inputs tried, the design's answers left nothing to check \
             (for example every rejection saturating its retry estimate, or every probe admitted)",
            tests * 20 - ran
        ))),
        Err(result) => Err(LAST_FAILURE
            .with(|slot| slot.borrow_mut().take())
            .unwrap_or_else(|| Failure::new(format!("the property failed: {result:?}")))),
    }
}

/// `r1_refill_in_two_steps_equals_one`.
pub(crate) fn r1_refill_in_two_steps_equals_one(subject: Subject) -> Result<(), Failure> {
    check(subject, two_steps as fn(Raw, u64) -> TestResult)
}

/// `r1_retry_after_is_tight`.
pub(crate) fn r1_retry_after_is_tight(subject: Subject) -> Result<(), Failure> {
    check(subject, retry_tight as fn(Raw) -> TestResult)
}

/// `r1_whole_tokens_floor_the_balance`.
pub(crate) fn r1_whole_tokens_floor_the_balance(subject: Subject) -> Result<(), Failure> {
    check(subject, whole_tokens as fn(Raw) -> TestResult)
}

#[cfg(all(test, not(loom), not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::{rules, LimitError};
    use std::sync::Mutex;

    /// A limiter whose refill earns nothing once `elapsed × rate` overflows `u64` (checked,
    /// falling back to 0), as a learner's design did: `two_steps` fails on it only where a
    /// probe about 1.6 × 10¹⁹ ns in lets the second request through, a narrow band that
    /// quickcheck's shrinking closed in on by a few thousand nanoseconds a step.
    struct EarnsNothingOnOverflow {
        policy: Policy,
        // (units, last) of the one key "k"; observed time.
        state: Mutex<(Option<(u128, u64)>, u64)>,
    }

    impl Limiter for EarnsNothingOnOverflow {
        fn new(policy: Policy, max_keys: usize) -> Result<Self, LimitError> {
            rules::check_max_keys(max_keys)?;
            Ok(EarnsNothingOnOverflow {
                policy,
                state: Mutex::new((None, 0)),
            })
        }

        fn allow(&self, key: &str, cost: u64, now: u64) -> Result<Decision, LimitError> {
            rules::check_key(key)?;
            rules::check_cost(&self.policy, cost)?;
            let mut s = self.state.lock().map_err(|_| LimitError::InvalidKey)?;
            rules::check_time(now, s.1)?;
            let unit = u128::from(UNITS_PER_TOKEN);
            let cap = u128::from(self.policy.capacity()) * unit;
            let balance = match s.0 {
                Some((units, last)) => {
                    let earned = (now - last)
                        .checked_mul(self.policy.tokens_per_second())
                        .unwrap_or(0);
                    cap.min(units + u128::from(earned))
                }
                None => cap,
            };
            let need = u128::from(cost) * unit;
            let allowed = balance >= need;
            let after = if allowed { balance - need } else { balance };
            let wait = (need.saturating_sub(after))
                .div_ceil(u128::from(self.policy.tokens_per_second()))
                .min(u128::from(MAX_QUANTITY));
            *s = (Some((after, now)), now);
            Ok(Decision {
                allowed,
                whole_tokens: u64::try_from(after / unit).unwrap_or(u64::MAX),
                retry_after_nanos: if allowed {
                    0
                } else {
                    u64::try_from(wait).unwrap_or(0)
                },
            })
        }

        fn evict_full(&self, _now: u64) -> Result<usize, LimitError> {
            Ok(0)
        }

        fn replace_policy(
            &self,
            _next: Policy,
            _expected_version: u64,
            _now: u64,
        ) -> Result<(), LimitError> {
            Ok(())
        }

        fn key_count(&self) -> usize {
            self.state.lock().map_or(0, |s| usize::from(s.0.is_some()))
        }
    }

    #[test]
    fn shrinking_a_failure_runs_a_bounded_number_of_inputs() {
        let failure = r1_refill_in_two_steps_equals_one(Subject::of::<EarnsNothingOnOverflow>())
            .expect_err("a refill earning nothing on overflow fails the property");
        assert!(
            failure.summary.contains("a rejection lost or added credit"),
            "{}",
            failure.summary
        );
        // The shrinking used its whole allowance and stopped: without one, this check ran
        // for minutes.
        assert!(SHRINK_RUNS.with(Cell::get) > MAX_SHRINK_RUNS);
    }
}
