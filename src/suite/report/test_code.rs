//! The `test_code` of a graded report's test: what a learner can run or read to see the
//! check for themselves. Always the command that runs the check alone; for a failed check
//! with a sequential trace, that trace as the calls to make on their own limiter, each with
//! the specification's outcome (and the design's, where they differ) beside it.
use crate::model::Op;

use crate::suite::checks::table::CheckInfo;
use crate::suite::core::failure::Failure;

/// The test code of `check`, run as the test `test_name` by the command `rerun`, failed with
/// `failure` when it did not pass.
pub(crate) fn test_code(
    check: &CheckInfo,
    test_name: &str,
    rerun: &str,
    failure: Option<&Failure>,
) -> String {
    let mut code = format!(
        "// {test_name} ({}): {}\n// run it alone: {rerun}\n",
        check.requirement, check.guards
    );
    let Some(replay) = failure.and_then(|f| f.replay.as_ref().map(|r| (r, &f.trace))) else {
        return code;
    };
    let (replay, trace) = replay;
    let p = replay.policy;
    code.push_str(&format!(
        "// the minimal failing trace, as calls:\nlet limiter = YourLimiter::new(Policy::new({}, {}, {})?, {})?;\n",
        p.version(),
        p.capacity(),
        p.tokens_per_second(),
        replay.max_keys
    ));
    for (i, op) in replay.ops.iter().enumerate() {
        let call = match op {
            Op::Allow { key, cost, now } => format!("limiter.allow({key:?}, {cost}, {now});"),
            Op::EvictFull { now } => format!("limiter.evict_full({now});"),
            Op::ReplacePolicy {
                next,
                expected_version,
                now,
            } => format!(
                "limiter.replace_policy(Policy::new({}, {}, {})?, {expected_version}, {now});",
                next.version(),
                next.capacity(),
                next.tokens_per_second()
            ),
            Op::KeyCount => "limiter.key_count();".to_string(),
            Op::Snapshot => "limiter.snapshot();".to_string(),
        };
        let comment = match trace.get(i) {
            Some(row) if row.expected == row.got => format!(" // {}", row.expected),
            Some(row) => format!(" // expected {}; got {}", row.expected, row.got),
            None => String::new(),
        };
        code.push_str(&format!("{call}{comment}\n"));
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::checks::table::find;
    use crate::suite::core::failure::{FailingTrace, TraceRow};
    use crate::Policy;

    #[test]
    fn a_failed_trace_becomes_calls_with_their_outcomes() {
        let check = find("seed_trace_table").expect("a check");
        let passed = test_code(
            check,
            "c01::seed_trace_table",
            "cargo test -- --exact c01::seed_trace_table",
            None,
        );
        assert_eq!(
            passed,
            format!("// c01::seed_trace_table (R1): {}\n// run it alone: cargo test -- --exact c01::seed_trace_table\n", check.guards)
        );
        let row = |step: usize, expected: &str, got: &str| TraceRow {
            step,
            action: String::new(),
            expected: expected.into(),
            got: got.into(),
        };
        let failure = Failure::new("step 2 differs")
            .with_trace(vec![
                row(1, "allowed", "allowed"),
                row(2, "rejected", "allowed"),
            ])
            .with_replay(FailingTrace {
                policy: Policy::new(1, 10, 2).expect("a policy"),
                max_keys: 100,
                ops: vec![
                    Op::Allow {
                        key: "k".into(),
                        cost: 10,
                        now: 0,
                    },
                    Op::Allow {
                        key: " ".into(),
                        cost: 1,
                        now: 0,
                    },
                ],
                observed: Vec::new(),
                snapshot: None,
            });
        let code = test_code(check, "c01::seed_trace_table", "cargo test", Some(&failure));
        assert!(
            code.ends_with(
                "let limiter = YourLimiter::new(Policy::new(1, 10, 2)?, 100)?;\n\
             limiter.allow(\"k\", 10, 0); // allowed\n\
             limiter.allow(\" \", 1, 0); // expected rejected; got allowed\n"
            ),
            "{code}"
        );
    }
}
