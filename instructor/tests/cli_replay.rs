//! `ratelimit-lab replay`: traces in, outcomes out, checked against the specification.
use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `ratelimit-lab replay ARGS` with `input` as its standard input. The input is a file,
/// not a pipe: the binary may exit before it reads anything (a bad `--design` is refused
/// first), and writing into a pipe nobody reads would then fail by chance.
fn replay(args: &[&str], input: &str) -> Output {
    static N: AtomicUsize = AtomicUsize::new(0);
    let path: PathBuf = std::env::temp_dir().join(format!(
        "ratelimit-lab-replay-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::write(&path, input).expect("the input file is written");
    let stdin = File::open(&path).expect("the input file opens");
    let out = Command::new(env!("CARGO_BIN_EXE_ratelimit-lab"))
        .arg("replay")
        .args(args)
        .stdin(Stdio::from(stdin))
        .output()
        .expect("the binary runs");
    let _ = std::fs::remove_file(&path);
    out
}

const CUTOVER: &str = r#"{"policy":{"version":1,"capacity":10,"tokens_per_second":2},"max_keys":100,"ops":[
  {"op":"allow","key":"k","cost":10,"now":0},
  {"op":"allow","key":"k","cost":1,"now":0},
  {"op":"replace_policy","next":{"version":2,"capacity":20,"tokens_per_second":4},"expected_version":1,"now":500000000},
  {"op":"allow","key":"k","cost":2,"now":500000000},
  {"op":"evict_full","now":1},
  {"op":"key_count"}]}"#;

#[test]
fn a_trace_gives_the_seed_numbers_and_agrees_with_the_specification() {
    let out = replay(&["--check", "-"], CUTOVER);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON out");
    let outcomes = got["outcomes"].as_array().expect("outcomes");
    assert_eq!(outcomes.len(), 6);
    assert_eq!(outcomes[1]["retry_after_nanos"], 500_000_000);
    assert_eq!(outcomes[3]["whole_tokens"], 1, "one token at cutover");
    assert_eq!(outcomes[3]["retry_after_nanos"], 250_000_000);
    assert_eq!(outcomes[4]["error"], "time_went_backwards");
    assert_eq!(outcomes[5]["keys"], 1);
}

#[test]
fn an_array_of_scenarios_gives_an_array_and_a_bad_limiter_an_error() {
    let input = format!(
        r#"[{CUTOVER}, {{"policy":{{"version":1,"capacity":1,"tokens_per_second":1}},"max_keys":0,"ops":[]}}]"#
    );
    let out = replay(&["--check", "-"], &input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON out");
    assert_eq!(got[1]["error"]["error"], "invalid_max_keys");
}

#[test]
fn a_wrong_design_disagrees_with_the_specification_and_says_where() {
    let input = r#"{"policy":{"version":1,"capacity":10,"tokens_per_second":2},"max_keys":1,"ops":[
      {"op":"allow","key":"k","cost":10,"now":999999999},{"op":"allow","key":"k","cost":10,"now":1000000000}]}"#;
    let out = replay(&["--design", "FixedWindowBucket", "--check", "-"], input);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step 2"), "{err}");
    assert!(err.contains("retry after 4999999999 ns"), "{err}");
}

#[test]
fn bad_input_and_unknown_designs_are_clear_errors() {
    let out = replay(
        &["-"],
        r#"{"policy":{"version":1,"capacity":0,"tokens_per_second":1},"max_keys":1,"ops":[]}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("capacity must be in 1..="));
    let out = replay(&["--design", "nope", "-"], CUTOVER);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("TokenBucket"));
}
