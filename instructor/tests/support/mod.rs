//! What the tests that grade submissions share: submissions and course crates made from
//! `testdata/submissions/` and the learner template, and the JUnit schema check.
//!
//! A submission is a directory holding `src/` (its `lib.rs` from `testdata/submissions/`,
//! beside the correct design `design.rs` it may build on, made from the catalog's
//! `RwLockBucket` by [`design_source`]). Each test grades it in a course
//! crate of its own, a copy of the learner template under its own package name (so that
//! builds sharing a target directory never share a binary). They build in `target/learner`,
//! where CI's template step builds the template too.
#![allow(dead_code)] // each test file uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (this crate lives in `instructor/`).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Where submissions build: the directory CI's template step shares.
pub fn learner_target() -> PathBuf {
    Path::new(ROOT).join("target/learner")
}

/// A fresh submission at `target/tmp/submissions/<name>`: `src/lib.rs` from
/// `testdata/submissions/<source>.rs`, `src/design.rs` ([`design_source`]) beside it.
pub fn submission_from(name: &str, source: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("submissions")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("create the submission");
    let data = Path::new(ROOT).join("testdata/submissions");
    std::fs::copy(data.join(format!("{source}.rs")), dir.join("src/lib.rs"))
        .expect("copy the submission");
    std::fs::write(dir.join("src/design.rs"), design_source()).expect("write the design");
    dir
}

/// A correct design written as a learner writes one: the catalog's `RwLockBucket`
/// (`catalog/src/alternatives/rwlock_bucket.rs`, without its unit tests) against
/// `ratelimit_lab` alone, under the name `Design`. The submissions in `testdata/submissions/`
/// build on it, each with one planted problem; graded alone (`correct.rs`) it passes every
/// check.
pub fn design_source() -> String {
    let path = Path::new(ROOT).join("catalog/src/alternatives/rwlock_bucket.rs");
    let catalog = std::fs::read_to_string(&path).expect("the catalog's RwLockBucket");
    let design = catalog
        .split("\n#[cfg(all(test")
        .next()
        .unwrap_or_default()
        .replace("ratelimit_lab_api", "ratelimit_lab")
        .replace("RwLockBucket", "Design");
    format!(
        "//! A correct design written as a learner writes one, against `ratelimit_lab` alone (the\n\
         //! catalog's `RwLockBucket`, renamed).\n//!\n{}\n",
        design.trim_end()
    )
}

/// The course crate `name` is graded in: the learner template at
/// `target/tmp/courses/<name>` under the package name `course-<name>` (still the library
/// `my_limiter`), its dependency on this repository by absolute path.
pub fn course(name: &str) -> PathBuf {
    let template = Path::new(ROOT).join("templates/learner");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("courses")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("create the course");
    std::fs::create_dir_all(dir.join("tests")).expect("create the course");
    let root = std::fs::canonicalize(ROOT).expect("the repository");
    let manifest = std::fs::read_to_string(template.join("Cargo.toml")).expect("the template");
    let manifest = manifest
        .replace(
            "name = \"my-limiter\"",
            &format!("name = \"course-{}\"", name.replace('_', "-")),
        )
        .replace(
            "path = \"../..\"",
            &format!("path = {:?}", root.display().to_string()),
        )
        + "\n[lib]\nname = \"my_limiter\"\n";
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("write Cargo.toml");
    for file in ["Cargo.lock", "tests/conformance.rs", "src/lib.rs"] {
        std::fs::copy(template.join(file), dir.join(file)).expect("copy from the template");
    }
    dir
}

/// A process's standard output and error, one after the other.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Validates each of `files` against the JUnit schema CI servers read (`junit-10.xsd`, the
/// schema Jenkins' xUnit plugin validates with; GitLab reads the same elements), with the
/// JDK's XML Schema validator (`testdata/junit/Validate.java`). Panics with the validator's
/// reasons when a file is not valid.
pub fn assert_valid_junit(files: &[PathBuf]) {
    let output = validate_junit(files);
    assert!(
        output.status.success(),
        "junit.xml does not match the JUnit schema:\n{}",
        text(&output)
    );
}

/// Runs the schema validator on `files`: exit status 0 when every one is valid.
pub fn validate_junit(files: &[PathBuf]) -> Output {
    let data = Path::new(ROOT).join("testdata/junit");
    Command::new("java")
        .arg(data.join("Validate.java"))
        .arg(data.join("junit-10.xsd"))
        .args(files)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "the JUnit schema test needs a JDK 17 or newer (`java` on PATH, as the README \
                 says): {e}"
            )
        })
}

/// Standard base64 (with `=` padding, line breaks ignored) decoded; `None` for anything else.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let symbols: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !symbols.len().is_multiple_of(4) {
        return None;
    }
    let mut bytes = Vec::with_capacity(symbols.len() / 4 * 3);
    for quad in symbols.chunks(4) {
        let padding = quad.iter().rev().take_while(|&&b| b == b'=').count();
        let mut word = 0u32;
        for &b in quad {
            let value = match b {
                b'=' => 0,
                _ => ALPHABET.iter().position(|&a| a == b)? as u32,
            };
            word = word << 6 | value;
        }
        let [_, a, b, c] = word.to_be_bytes();
        bytes.extend_from_slice(&[a, b, c][..3 - padding.min(2)]);
    }
    Some(bytes)
}
