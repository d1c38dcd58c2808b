//! Which checks are running right now, on disk: a graded test marks its check as running in
//! the report directory before the check starts and removes the mark when its result is
//! written. A test process that ends early (`std::process::exit` in a design, an abort, a
//! stack overflow, or a runner killing it at its time limit) leaves the marks of the checks it
//! was running, so whoever completes the report can say which check that was.
use std::fs;
use std::path::{Path, PathBuf};

/// The directory, inside a report directory, that holds one empty file per running check.
pub const RUNNING_DIR: &str = ".running";

/// A check marked as running; the mark is removed when this is dropped (when the test that
/// runs the check returns or unwinds, not when its process ends).
#[derive(Debug)]
pub struct Running {
    path: Option<PathBuf>,
}

impl Running {
    /// Marks the test called `test_name` as running in `report_dir`, when there is one. A
    /// mark that cannot be written is left out: the report is then less precise about an
    /// early end, and nothing else changes.
    pub fn mark(report_dir: Option<&Path>, test_name: &str) -> Running {
        let path = report_dir.and_then(|dir| {
            let dir = dir.join(RUNNING_DIR);
            let path = dir.join(file_name(test_name));
            (fs::create_dir_all(&dir).is_ok() && fs::write(&path, test_name).is_ok())
                .then_some(path)
        });
        Running { path }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = fs::remove_file(path);
        }
    }
}

/// The tests still marked as running in `report_dir`, sorted; each mark holds its test's name.
pub fn still_running(report_dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(report_dir.join(RUNNING_DIR)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| fs::read_to_string(e.path()).ok())
        .filter(|name| !name.is_empty())
        .collect();
    names.sort();
    names
}

/// A file name for a test name: `::` and anything outside `[A-Za-z0-9_]` become `-`.
fn file_name(test_name: &str) -> String {
    test_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_lasts_while_its_check_runs_and_is_gone_after() {
        let dir =
            std::env::temp_dir().join(format!("ratelimit-lab-running-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        {
            let _a = Running::mark(Some(&dir), "first::seed_trace_table");
            let _b = Running::mark(Some(&dir), "r1_new_key_starts_full");
            assert_eq!(
                still_running(&dir),
                ["first::seed_trace_table", "r1_new_key_starts_full"]
            );
        }
        assert!(still_running(&dir).is_empty());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_a_report_directory_nothing_is_marked() {
        let r = Running::mark(None, "seed_trace_table");
        assert!(r.path.is_none());
    }
}
