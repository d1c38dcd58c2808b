//! The `ratelimit-lab` binary, run as a user runs it.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ratelimit-lab"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("output is UTF-8")
}

/// The rows of the walkthrough tables in `stdout`, each cell whole: a line whose step cell is
/// empty continues the row above it (the table wraps long cells to fit 120 columns).
fn table_rows(stdout: &str) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for line in stdout.lines().filter(|l| l.contains(" | ")) {
        let cells: Vec<&str> = line.split(" | ").map(str::trim).collect();
        match rows.last_mut() {
            Some(row) if cells.first() == Some(&"") => {
                for (whole, part) in row.iter_mut().zip(&cells).skip(1) {
                    if !part.is_empty() {
                        whole.push(' ');
                        whole.push_str(part);
                    }
                }
            }
            _ => rows.push(cells.iter().map(|c| (*c).to_owned()).collect()),
        }
    }
    rows
}

/// Whether some row of the walkthrough tables has a cell equal to `cell` or starting with it.
fn has_cell(stdout: &str, cell: &str) -> bool {
    table_rows(stdout)
        .iter()
        .any(|row| row.iter().any(|c| c.starts_with(cell)))
}

#[test]
fn walkthrough_prints_every_checked_table() {
    let out = run(&["walkthrough"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    let headers: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("step "))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(
        headers.len(),
        ratelimit_lab::lesson::walkthroughs().unwrap().len(),
        "one table per walkthrough: {stdout}"
    );
    for h in &headers {
        assert_eq!(
            h,
            &["step", "action", "outcome", "state after", "invariant"]
        );
    }
    // The trace table, worked example 1 and the change exercise, with their exact numbers.
    assert!(has_cell(&stdout, "At 250000000 ns consume 1"), "{stdout}");
    assert!(
        has_cell(&stdout, "k: 0.5 tokens (500000000 units)"),
        "{stdout}"
    );
    assert!(
        has_cell(&stdout, "Rejected; retry after 500000000 ns"),
        "{stdout}"
    );
    assert!(stdout.contains("333333334"), "{stdout}");
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 120,
            "a line over 120 columns: {line}"
        );
    }
    assert!(
        stdout.contains("the model, the reference and the lesson agree on every one"),
        "{stdout}"
    );
}

#[test]
fn walkthrough_id_selects_one() {
    let out = run(&[
        "walkthrough",
        "--id",
        "change_exercise_first_pass_at_333333334",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        has_cell(&stdout, "Rejected; retry after 333333334 ns"),
        "{stdout}"
    );
    assert!(
        has_cell(&stdout, "k: 0.999999999 tokens (999999999 units)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("burst_rejection_fractional_refill"),
        "{stdout}"
    );
    assert!(stdout.contains("1 walkthroughs, 4 steps"), "{stdout}");
}

#[test]
fn unknown_id_is_a_usage_error_listing_valid_ids() {
    let out = run(&["walkthrough", "--id", "nope"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        stderr.contains("unknown walkthrough id \"nope\""),
        "{stderr}"
    );
    assert!(stderr.contains("valid ids are"), "{stderr}");
    assert!(
        stderr.contains("burst_rejection_fractional_refill"),
        "{stderr}"
    );
    assert!(stderr.contains("time_reversal_rejected"), "{stderr}");
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["walkthrough", "--format", "xml"][..],
        &["walkthrough", "--nope"][..],
        &["no-such-command"][..],
        &[][..],
    ] {
        let out = run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn walkthrough_json_parses_and_carries_the_checked_numbers() {
    let out = run(&["walkthrough", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let walkthroughs = doc.as_array().expect("an array of walkthroughs");
    assert_eq!(
        walkthroughs.len(),
        ratelimit_lab::lesson::walkthroughs().unwrap().len()
    );
    let trace = walkthroughs
        .iter()
        .find(|w| w["id"] == "burst_rejection_fractional_refill")
        .expect("the trace table");
    let steps = trace["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    assert_eq!(steps[1]["outcome"]["retry_after_nanos"], 500_000_000);
    assert_eq!(steps[2]["action"], "At 250000000 ns consume 1");
    assert_eq!(
        steps[2]["seed_outcome"],
        "Rejected; half a token accumulated"
    );
    assert_eq!(steps[2]["invariant"], "Fractional credit retained exactly");
    assert_eq!(steps[2]["balances"]["k"], 500_000_000);
    assert_eq!(steps[2]["state_after"], "k: 0.5 tokens (500000000 units)");

    let one = run(&[
        "walkthrough",
        "--format",
        "json",
        "--id",
        "worked_example_2_policy_cutover",
    ]);
    assert_eq!(one.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let steps = doc[0]["steps"].as_array().unwrap();
    assert_eq!(steps[1]["op"]["op"], "replace_policy");
    assert_eq!(steps[1]["balances"]["k"], 1_000_000_000);
    assert_eq!(steps[2]["outcome"]["whole_tokens"], 1);
}

#[test]
fn help_documents_the_subcommand() {
    let out = run(&["walkthrough", "--help"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout.contains("--id <ID>"), "{stdout}");
    assert!(stdout.contains("--format <FORMAT>"), "{stdout}");
    assert!(
        stdout.contains("table") && stdout.contains("json"),
        "{stdout}"
    );
}

#[test]
fn explore_refuses_an_unknown_design_and_a_bad_counterexample_clearly() {
    let out = run(&["explore", "--design", "nope"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains("no catalogued design is called \"nope\"")
            && stderr.contains("SplitReadWrite"),
        "{stderr}"
    );
    let missing = std::env::temp_dir().join(format!(
        "ratelimit-lab-no-such-counterexample-{}.json",
        std::process::id()
    ));
    let out = run(&[
        "explore",
        "--design",
        "SplitReadWrite",
        "--replay",
        missing.to_str().expect("a UTF-8 temp path"),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains("cannot read the counterexample"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing runs on a bad file");
}

#[test]
fn explore_names_its_own_command_to_rerun() {
    // A design already wrong with its calls one at a time fails the concurrency checks on every
    // run, so the rerun lines are there whatever the threads did.
    let out = run(&["explore", "--design", "RetroactiveRate"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let reruns: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("to rerun it:"))
        .collect();
    assert!(!reruns.is_empty(), "{stdout}");
    for line in reruns {
        assert!(
            line.ends_with("-- explore --design RetroactiveRate"),
            "a rerun line that is not explore's: {line}"
        );
    }
}
