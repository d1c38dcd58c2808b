//! Which tests this test process runs, read from its command line the way libtest reads it:
//! name filters (a test runs when its name contains one, or equals one with `--exact`),
//! `--skip` filters, and `--ignored` (only ignored tests, which the suite's are not).
//!
//! A check that fails for the same cause as an earlier one points at that one only when the
//! earlier check runs in this process too, so that what it points at is on the same screen.

/// libtest's options that take a value as the next argument.
const WITH_VALUE: [&str; 7] = [
    "--skip",
    "--test-threads",
    "--format",
    "--logfile",
    "--color",
    "--shuffle-seed",
    "-Z",
];

/// The tests a process's arguments select.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
    nothing: bool,
}

impl Selection {
    /// This process's selection, from its arguments.
    pub(crate) fn of_this_process() -> Selection {
        Selection::from_args(std::env::args().skip(1))
    }

    /// The selection `args` (without the program's name) make.
    pub(crate) fn from_args(args: impl IntoIterator<Item = String>) -> Selection {
        let mut selection = Selection::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--exact" => selection.exact = true,
                "--ignored" | "--list" => selection.nothing = true,
                "--skip" => selection.skips.extend(args.next()),
                option if WITH_VALUE.contains(&option) => {
                    args.next();
                }
                option if option.starts_with("--skip=") => {
                    selection.skips.push(option["--skip=".len()..].to_string());
                }
                option if option.starts_with('-') => {}
                filter => selection.filters.push(filter.to_string()),
            }
        }
        selection
    }

    /// Whether the test called `name` runs.
    pub(crate) fn selects(&self, name: &str) -> bool {
        let matches = |filter: &String| {
            if self.exact {
                name == filter
            } else {
                name.contains(filter.as_str())
            }
        };
        !self.nothing
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skips.iter().any(matches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(args: &[&str]) -> Selection {
        Selection::from_args(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn filters_skips_and_exact_select_as_libtest_does() {
        let name = "c10::r1_retry_after_is_a_ceiling";
        assert!(of(&[]).selects(name));
        assert!(of(&["--test-threads", "1", "--nocapture"]).selects(name));
        assert!(of(&["r1_"]).selects(name));
        assert!(!of(&["r3_"]).selects(name));
        assert!(of(&["r3_", "c10"]).selects(name));
        assert!(!of(&["--exact", "r1_retry_after_is_a_ceiling"]).selects(name));
        assert!(of(&["--exact", name]).selects(name));
        assert!(!of(&["--skip", "c10"]).selects(name));
        assert!(!of(&["--skip=c10"]).selects(name));
        assert!(of(&["--skip", "c1", "--exact"]).selects(name));
        assert!(!of(&["--ignored"]).selects(name));
        // A value after an option that takes one is not a filter.
        assert!(of(&["--format", "terse"]).selects(name));
        assert!(of(&["--color", "never", "c10"]).selects(name));
    }
}
