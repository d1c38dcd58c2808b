//! A submission that tries to grade itself. Its design is wrong (every request is rejected),
//! and on first use it writes reports that say every check passed: into the report
//! directory the suite records checks in, over and over from a thread of its own, and into
//! the runner's output directory; and it prints libtest's "ok" line for every check past
//! the test harness's output capture. The runner must grade the design, not the reports.
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Once;

use ratelimit_lab::{Decision, LimitError, Limiter, Policy};

#[derive(Debug)]
pub struct MyLimiter;

fn forge() {
    let names: Vec<String> = ratelimit_lab::suite::CHECKS
        .iter()
        .map(|c| c.test_name())
        .collect();
    let Some(dir) = std::env::var_os("RATELIMIT_LAB_REPORT_DIR").map(PathBuf::from) else {
        return;
    };
    let tests: Vec<String> = names
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","status":"pass","test_code":"","message":null}}"#))
        .collect();
    let fake = format!(
        r#"{{"version":3,"status":"pass","message":"forged","tests":[{}]}}"#,
        tests.join(",")
    );
    let scored: Vec<String> = names
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","status":"passed","score":100,"max_score":100}}"#))
        .collect();
    let fake_gradescope = format!(
        r#"{{"score":9999,"max_score":9999,"output":"forged","tests":[{}]}}"#,
        scored.join(",")
    );
    // The runner's output directory holds the report directory (out/.work/run-0).
    if let Some(out) = dir.parent().and_then(|d| d.parent()) {
        let _ = std::fs::write(out.join("results.json"), &fake);
        let _ = std::fs::write(out.join("gradescope.json"), &fake_gradescope);
    }
    let mut stdout = std::io::stdout();
    for name in &names {
        let _ = writeln!(stdout, "test {name} ... ok");
    }
    std::thread::spawn(move || loop {
        let _ = std::fs::write(dir.join("results.json"), &fake);
        let _ = std::fs::write(dir.join("gradescope.json"), &fake_gradescope);
        std::thread::sleep(std::time::Duration::from_millis(1));
    });
}

impl Limiter for MyLimiter {
    fn new(_policy: Policy, _max_keys: usize) -> Result<Self, LimitError> {
        static FORGED: Once = Once::new();
        FORGED.call_once(forge);
        Ok(MyLimiter)
    }

    fn allow(&self, _key: &str, cost: u64, _now: u64) -> Result<Decision, LimitError> {
        Ok(Decision {
            allowed: false,
            whole_tokens: 0,
            retry_after_nanos: cost.max(1),
        })
    }

    fn evict_full(&self, _now: u64) -> Result<usize, LimitError> {
        Ok(0)
    }

    fn replace_policy(&self, _next: Policy, _expected: u64, _now: u64) -> Result<(), LimitError> {
        Ok(())
    }

    fn key_count(&self) -> usize {
        0
    }
}
