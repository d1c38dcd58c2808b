//! The crate a submission is graded in: a fresh copy of the course's template crate (its
//! `Cargo.toml`, `Cargo.lock`, `tests/`, profile, everything but its build output) with only
//! the learner's sources copied in (`src/` by default). Whatever else a submission brings (its
//! own `Cargo.toml` with another dependency, an emptied `tests/`, a `build.rs`) is not
//! built, and the report says in one line what was left out.
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The course crate, ready to build.
#[derive(Debug)]
pub struct Prepared {
    /// Its directory (holding the course's `Cargo.toml`).
    pub dir: PathBuf,
    /// The submission's top-level entries that were not taken, for the report
    /// (`Cargo.toml`, `tests/`, `build.rs`), in name order.
    pub ignored: Vec<String>,
}

impl Prepared {
    /// The report's line about what the submission brought and the course did not take;
    /// `None` when it brought nothing else.
    pub fn note(&self, take: &[PathBuf]) -> Option<String> {
        if self.ignored.is_empty() {
            return None;
        }
        let taken: Vec<String> = take.iter().map(|p| shown(p, true)).collect();
        Some(format!(
            "Graded in the course's crate with the submission's {}; the submission's own {} \
             were ignored.",
            taken.join(", "),
            self.ignored.join(", ")
        ))
    }
}

/// `src/` for a directory, `build.rs` for a file.
fn shown(path: &Path, is_dir: bool) -> String {
    let name = path.display().to_string();
    if is_dir {
        format!("{name}/")
    } else {
        name
    }
}

/// Copies `template` into `into` (replaced when present), leaving out its build output and
/// hidden entries and every path in `take`; then copies each path in `take` from `solution`.
/// `output` (the runner's output directory, which may sit inside the submission) is neither
/// copied nor reported as ignored.
/// Relative dependency paths in the copied `Cargo.toml` are made absolute, so that the copy
/// builds against what the template built against.
///
/// # Errors
///
/// A message for the report: the template has no `Cargo.toml`, a path in `take` leaves the
/// crate (absolute, or with `..`), the submission lacks `src/`, or a copy failed.
pub fn prepare(
    template: &Path,
    solution: &Path,
    take: &[PathBuf],
    into: &Path,
    output: &Path,
) -> Result<Prepared, String> {
    let manifest = template.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(format!(
            "the course template {} has no Cargo.toml: give the directory of the course's crate \
             with --template",
            template.display()
        ));
    }
    for path in take {
        if path.as_os_str().is_empty()
            || !path.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(format!(
                "--take {}: give a path inside the crate, such as src",
                path.display()
            ));
        }
    }
    if !solution.is_dir() {
        return Err(format!(
            "{} is not a directory: give the directory of the learner's crate",
            solution.display()
        ));
    }
    let _ = fs::remove_dir_all(into);
    let copy_error = |e: std::io::Error| format!("could not prepare the course crate: {e}");
    copy_tree(template, into, &|relative| {
        take.iter().any(|t| relative == t.as_path())
    })
    .map_err(copy_error)?;
    let text = fs::read_to_string(&manifest).map_err(copy_error)?;
    fs::write(
        into.join("Cargo.toml"),
        absolute_dependency_paths(&text, template),
    )
    .map_err(copy_error)?;
    for path in take {
        let from = solution.join(path);
        if from.is_dir() {
            copy_tree(&from, &into.join(path), &|_| false).map_err(copy_error)?;
        } else if from.is_file() {
            if let Some(parent) = into.join(path).parent() {
                fs::create_dir_all(parent).map_err(copy_error)?;
            }
            fs::copy(&from, into.join(path)).map_err(copy_error)?;
        } else if path == Path::new("src") {
            return Err(format!(
                "the submission has no src/ in {}: the course grades the learner's src/ \
                 (give the directory of the learner's crate)",
                solution.display()
            ));
        }
    }
    Ok(Prepared {
        dir: into.to_path_buf(),
        ignored: ignored(solution, take, output),
    })
}

/// The submission's top-level entries outside `take`, leaving out build output and hidden
/// entries (which a grade never reads).
fn ignored(solution: &Path, take: &[PathBuf], output: &Path) -> Vec<String> {
    let output = fs::canonicalize(output).ok();
    let Ok(entries) = fs::read_dir(solution) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let skipped = name.starts_with('.')
                || name.starts_with("target")
                || output.is_some() && fs::canonicalize(entry.path()).ok() == output
                || take.iter().any(|t| t.as_os_str() == name.as_str());
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            (!skipped).then(|| shown(Path::new(&name), is_dir))
        })
        .collect();
    names.sort();
    names
}

/// Copies the directory `from` to `to`, leaving out build output (`target*`), hidden entries
/// and symbolic links (which could reach outside the crate), and every entry whose path
/// relative to `from` satisfies `leave_out`.
fn copy_tree(from: &Path, to: &Path, leave_out: &dyn Fn(&Path) -> bool) -> std::io::Result<()> {
    fn walk(
        root: &Path,
        relative: &Path,
        to: &Path,
        leave_out: &dyn Fn(&Path) -> bool,
    ) -> std::io::Result<()> {
        fs::create_dir_all(to.join(relative))?;
        for entry in fs::read_dir(root.join(relative))? {
            let entry = entry?;
            let name = entry.file_name();
            let text = name.to_string_lossy();
            let path = relative.join(&name);
            if text.starts_with('.')
                || (relative.as_os_str().is_empty() && text.starts_with("target"))
                || leave_out(&path)
            {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(root, &path, to, leave_out)?;
            } else if kind.is_file() {
                fs::copy(entry.path(), to.join(&path))?;
            }
        }
        Ok(())
    }
    walk(from, Path::new(""), to, leave_out)
}

/// `text` (a `Cargo.toml`) with every `path = "…"` that names a crate directory relative to
/// `base` (a directory holding a `Cargo.toml`: a path dependency) made absolute. Target paths
/// (`[lib] path = "src/lib.rs"`) name files and stay as they are.
fn absolute_dependency_paths(text: &str, base: &Path) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_path_key(rest) {
        let (before, from_key) = rest.split_at(at);
        out.push_str(before);
        let Some(open) = from_key.find('"') else {
            out.push_str(from_key);
            return out;
        };
        let value_start = open + 1;
        let Some(len) = from_key[value_start..].find('"') else {
            out.push_str(from_key);
            return out;
        };
        let value = &from_key[value_start..value_start + len];
        let target = base.join(value);
        out.push_str(&from_key[..value_start]);
        if Path::new(value).is_relative() && target.join("Cargo.toml").is_file() {
            let absolute = fs::canonicalize(&target).unwrap_or(target);
            // TOML basic strings escape backslashes and quotes.
            let escaped = absolute
                .display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            out.push_str(&escaped);
        } else {
            out.push_str(value);
        }
        rest = &from_key[value_start + len..];
    }
    out.push_str(rest);
    out
}

/// Where the next `path` key (`path = "` or `path="`) starts in `text`, as a whole word.
fn find_path_key(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find("path") {
        let at = from + found;
        let word_start = at == 0
            || !text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
        let after = text[at + 4..].trim_start();
        if word_start && after.starts_with('=') && after[1..].trim_start().starts_with('"') {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ratelimit-lab-course-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch directory");
        dir
    }

    #[test]
    fn dependency_paths_become_absolute_and_target_paths_stay() {
        let base = scratch("paths");
        fs::create_dir_all(base.join("course/dep")).expect("dirs");
        fs::write(base.join("course/dep/Cargo.toml"), "[package]").expect("dep");
        let text = "[lib]\npath = \"src/lib.rs\"\n[dependencies]\ndep = { path = \"dep\" }\n\
                    other = { version = \"1\" }\nxpath = \"dep\"\n";
        let out = absolute_dependency_paths(text, &base.join("course"));
        let dep = fs::canonicalize(base.join("course/dep")).expect("canonical");
        assert!(out.contains("path = \"src/lib.rs\""), "{out}");
        assert!(
            out.contains(&format!("dep = {{ path = \"{}\" }}", dep.display())),
            "{out}"
        );
        assert!(out.contains("xpath = \"dep\""), "{out}");
        let _ = fs::remove_dir_all(base);
    }

    #[test]
    fn only_the_taken_sources_come_from_the_submission() {
        let base = scratch("take");
        let (course, learner, into) = (base.join("course"), base.join("learner"), base.join("w"));
        for dir in [
            course.join("src"),
            course.join("tests"),
            learner.join("src"),
        ] {
            fs::create_dir_all(dir).expect("dirs");
        }
        fs::create_dir_all(learner.join("tests")).expect("dirs");
        fs::write(course.join("Cargo.toml"), "[package]\nname = \"course\"").expect("write");
        fs::write(course.join("src/lib.rs"), "// the stub").expect("write");
        fs::write(course.join("tests/suite.rs"), "// the course's suite").expect("write");
        fs::write(learner.join("Cargo.toml"), "[package]\nname = \"mine\"").expect("write");
        fs::write(learner.join("src/lib.rs"), "// mine").expect("write");
        fs::write(learner.join("tests/suite.rs"), "").expect("write");
        fs::write(learner.join("build.rs"), "fn main() {}").expect("write");
        let take = [PathBuf::from("src")];
        fs::create_dir_all(learner.join("out")).expect("dirs");
        let prepared =
            prepare(&course, &learner, &take, &into, &learner.join("out")).expect("prepared");
        let read = |p: &str| fs::read_to_string(into.join(p)).expect("read");
        assert_eq!(read("src/lib.rs"), "// mine");
        assert_eq!(read("tests/suite.rs"), "// the course's suite");
        assert!(read("Cargo.toml").contains("course"));
        assert!(!into.join("build.rs").exists());
        assert_eq!(prepared.ignored, ["Cargo.toml", "build.rs", "tests/"]);
        let note = prepared.note(&take).expect("a note");
        assert_eq!(note.lines().count(), 1, "{note}");
        assert!(note.contains("src/") && note.contains("build.rs"), "{note}");
        // Without src/, nothing is graded, and the reason names it.
        fs::remove_dir_all(learner.join("src")).expect("remove");
        let err = prepare(&course, &learner, &take, &into, &base).expect_err("no src/");
        assert!(err.contains("no src/"), "{err}");
        let err =
            prepare(&course, &learner, &[PathBuf::from("../x")], &into, &base).expect_err("..");
        assert!(err.contains("inside the crate"), "{err}");
        let _ = fs::remove_dir_all(base);
    }
}
