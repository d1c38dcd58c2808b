//! A concurrency counterexample saved to a file, and its deterministic replay.
//!
//! When a concurrency check fails under shuttle or loom, the shrunk scenario, the backend,
//! the search that found the failing execution and its number are written as JSON to
//! `<target dir>/ratelimit-lab/<check>-<hash>.json`, in the target directory
//! of the crate whose tests (or command) ran ([`directory`]). Setting [`REPLAY`](crate::suite::core::env::REPLAY) to
//! that file and running the same check again, built in the same mode, explores only that
//! scenario; the searches are seeded (shuttle) or exhaustive in a fixed order (loom), so the
//! same execution fails again and prints the same report.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::suite::core::backend::{built_in, shown, Backend};
use crate::suite::core::env;
use crate::suite::core::failure::Failure;
use crate::suite::host::runtime::Search;
use crate::suite::oracle::linearizability::Event;
use crate::suite::search::scenario::Scenario;
use crate::Snapshot;

/// What a replay needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counterexample {
    /// The check that failed, e.g. `r3_eviction_never_undoes_a_spend`.
    pub check: String,
    /// `"shuttle"` or `"loom"`: the mode the replay must be built in.
    pub backend: String,
    /// The search that found the failing execution, e.g. `Random(300)`.
    pub search: String,
    /// The failing execution's number within that search, from 1.
    pub execution: usize,
    /// The (shrunk) scenario.
    pub scenario: Scenario,
    /// The failing execution's history: every call with its thread, outcome and logical
    /// times (the interleaving), when it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Event>,
    /// The design's state at the end of that execution, when it offers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Snapshot>,
    /// Why no sequential order explains that execution, as the judge wrote it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub verdict: String,
}

impl Counterexample {
    /// Writes it in [`directory`] (atomically: a temporary file, then a rename) and returns
    /// the path. The name holds the check and 32 bits of a hash of the content, so the same
    /// counterexample found twice is one file, and the command that replays it fits a line.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created or the file written.
    pub fn save(&self) -> std::io::Result<PathBuf> {
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let dir = directory();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!(
            "{}-{:08x}.json",
            self.check,
            fnv1a(json.as_bytes()) >> 32
        ));
        let partial = dir.join(format!(
            ".{}-{}-{:?}.partial",
            self.check,
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&partial, json + "\n")?;
        std::fs::rename(&partial, &path)?;
        Ok(path)
    }

    /// Reads one back.
    ///
    /// # Errors
    ///
    /// A failure naming the file when it cannot be read or is not a counterexample.
    pub fn load(path: &Path) -> Result<Counterexample, Failure> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::new(format!(
                "cannot read the counterexample {}: {e}",
                path.display()
            ))
        })?;
        serde_json::from_str(&text).map_err(|e| {
            Failure::new(format!(
                "{} is not a counterexample file: {e}",
                path.display()
            ))
        })
    }
}

/// Where counterexamples are saved: `ratelimit-lab` in the cargo target
/// directory holding the running executable (the nearest ancestor with cargo's
/// `CACHEDIR.TAG`), so that each crate keeps its own and `cargo clean` removes them; outside a
/// target directory, `ratelimit-lab` in the system's temporary directory.
pub fn directory() -> PathBuf {
    match built_in() {
        Some(target) => target.join("ratelimit-lab"),
        None => std::env::temp_dir().join("ratelimit-lab"),
    }
}

/// The command a failure prints to replay a saved counterexample, when not the test run's.
static REPLAY_COMMAND: OnceLock<String> = OnceLock::new();

/// Makes failures say `{command} FILE` to replay a counterexample, instead of rerunning the
/// check with [`REPLAY`](env::REPLAY) set: for a command-line tool whose own option replays
/// one (`ratelimit-lab explore --design X --replay`). The first call in a process wins.
pub fn replay_with(command: String) {
    let _ = REPLAY_COMMAND.set(command);
}

/// The lines that tell how to replay the counterexample saved at `path` for `check`.
pub(crate) fn how_to_replay(path: &Path, check: &str) -> String {
    replay_lines(REPLAY_COMMAND.get().map(String::as_str), path, check)
}

/// [`how_to_replay`] with the command given: `{command} FILE`, or the check's test run with
/// [`REPLAY`](env::REPLAY) set.
fn replay_lines(command: Option<&str>, path: &Path, check: &str) -> String {
    match command {
        Some(command) => format!("  {command} {}\n", shown(path)),
        None => format!(
            "  {}={} \\\n  {} \\\n  -- {check}\n",
            env::REPLAY,
            shown(path),
            Backend::current().cargo_here("test"),
        ),
    }
}

/// A saved [`Counterexample::search`] in words: "Random(300)" reads "shuttle's random search
/// (300 schedules)"; a text that is not a search the suite runs is returned as it is.
pub fn search_in_words(saved: &str) -> String {
    Search::from_saved(saved).map_or_else(|| saved.to_owned(), |s| s.to_string())
}

/// FNV-1a, 64 bits: a stable name for a file's content on every machine.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The counterexample [`REPLAY`](env::REPLAY) names, when it is set, names the check `check`, and
/// the backend explores schedules; an unreadable file is an error for that check.
pub(crate) fn requested(check: &str) -> Option<Result<(Counterexample, String), Failure>> {
    let file = std::env::var(env::REPLAY)
        .ok()
        .filter(|f| !f.trim().is_empty())?;
    if !Backend::current().is_controlled() {
        return Some(Err(Failure::new(format!(
            "{} is set, but this build runs real threads: a counterexample replays only built with shuttle or loom, in the mode it was found",
            env::REPLAY
        ))));
    }
    match Counterexample::load(std::path::Path::new(&file)) {
        Err(failure) => Some(Err(failure)),
        Ok(cx) if cx.check == check => Some(Ok((cx, file))),
        Ok(_) => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_saved_search_reads_as_words() {
        assert_eq!(
            super::search_in_words("Random(300)"),
            "shuttle's random search (300 schedules)"
        );
        assert_eq!(
            super::search_in_words("Pct(100, 3)"),
            "shuttle's PCT search (100 schedules, depth 3)"
        );
        assert_eq!(
            super::search_in_words("Exhaustive"),
            "loom's exhaustive search"
        );
        assert_eq!(super::search_in_words("Random(x)"), "Random(x)");
    }

    #[test]
    fn the_replay_line_is_the_command_that_ran_or_the_test_run() {
        let path = Path::new("/t/ratelimit-lab/c-1.json");
        assert_eq!(
            super::replay_lines(Some("cargo run -- explore --design X --replay"), path, "c"),
            "  cargo run -- explore --design X --replay /t/ratelimit-lab/c-1.json\n"
        );
        let test_run = super::replay_lines(None, path, "r3_check");
        assert!(
            test_run.starts_with("  RATELIMIT_LAB_REPLAY=/t/ratelimit-lab/c-1.json \\\n"),
            "{test_run}"
        );
        assert!(test_run.ends_with("  -- r3_check\n"), "{test_run}");
    }

    #[test]
    fn counterexamples_are_kept_in_the_target_directory_of_the_tests() {
        // This test runs from cargo's target directory, which holds CACHEDIR.TAG.
        let dir = super::directory();
        assert!(dir.ends_with("ratelimit-lab"), "{}", dir.display());
        let target = dir.parent();
        assert!(
            target.is_some_and(|t| t.join("CACHEDIR.TAG").is_file()),
            "{}",
            dir.display()
        );
    }

    use super::*;
    use crate::model::Op;
    use crate::Policy;

    #[test]
    fn a_counterexample_survives_the_file_and_a_bad_file_is_a_clear_error() {
        let c = Counterexample {
            check: "r2_twenty_contenders_ten_pass".into(),
            backend: "shuttle".into(),
            search: "Random(300)".into(),
            execution: 3,
            scenario: Scenario {
                policy: Policy::new(1, 10, 2).expect("a valid policy"),
                max_keys: 4,
                init: vec![],
                threads: vec![vec![Op::KeyCount], vec![Op::EvictFull { now: 5 }]],
                post: vec![Op::KeyCount],
            },
            history: Vec::new(),
            snapshot: None,
            verdict: String::new(),
        };
        let path = c.save().expect("saved");
        assert_eq!(Counterexample::load(&path), Ok(c.clone()));
        assert_eq!(c.save().expect("saved again"), path, "one file per content");
        let bad = path.with_extension(format!("{}.bad", std::process::id()));
        std::fs::write(&bad, "{\"check\": 1}").expect("written");
        let err = Counterexample::load(&bad).expect_err("not a counterexample");
        assert!(
            err.summary.contains("is not a counterexample file"),
            "{err:?}"
        );
        let missing = Counterexample::load(Path::new("/nonexistent/ratelimit-lab.json"));
        assert!(missing.is_err());
        let _ = std::fs::remove_file(bad);
    }
}
