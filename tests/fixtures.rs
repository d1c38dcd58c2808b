//! The committed walkthrough fixtures are exactly what the verified replay produces now.
use std::process::Command;

#[test]
fn committed_walkthrough_fixtures_match_a_fresh_verified_replay() {
    let out = Command::new(env!("CARGO_BIN_EXE_ratelimit-lab"))
        .args(["walkthrough", "--format", "json"])
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fresh = String::from_utf8(out.stdout).expect("UTF-8 output");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/walkthroughs.json");
    let committed = std::fs::read_to_string(path).expect("fixtures/walkthroughs.json exists");
    assert!(
        fresh == committed,
        "fixtures/walkthroughs.json is stale: regenerate it with \
         `cargo run --release -- walkthrough --format json > fixtures/walkthroughs.json`, \
         review the difference and commit it"
    );
    let parsed: serde_json::Value = serde_json::from_str(&committed).expect("valid JSON");
    assert!(parsed.as_array().is_some_and(|a| a.len() >= 4));
}
