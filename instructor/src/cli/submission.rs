//! `submission`: grade a learner's sources with the course's own crate, within time limits,
//! always leaving valid graded reports (`results.json` for Exercism, `gradescope.json` for
//! Gradescope, and from those `junit.xml` and `classroom.json`), whatever the submission does: fail to compile, panic, end the process, never
//! return, or write reports of its own.
//!
//! 0. The learner's `src/` (by default; `--take`) is copied into a fresh copy of the course's
//!    template crate (`--template`: its `Cargo.toml`, `Cargo.lock`, `tests/`, profile); see
//!    [`course`](super::course). A submission's own manifest, tests or build script are not
//!    built, and the report says so in one line.
//! 1. `cargo test --no-run --message-format=json` builds the crate's test binaries within the
//!    build limit. A build that fails (or overruns) is graded `error`, with the compiler's
//!    first errors as the message; a submission that names what a learner's crate cannot
//!    reach (`ratelimit_lab::reference`, `::model`, `::catalog`) is told so in one line each.
//! 2. Each test binary is listed (`--list`); those that hold the conformance suite run its
//!    checks, with the report directory set, so every check's result is on disk as soon as it
//!    finishes and every running check is marked (see `ratelimit_lab::suite::_runner_support::marks`).
//! 3. The run ends by itself or is killed at the test limit. Its records are held against
//!    libtest's own outcome lines ([`outcomes`](super::outcomes)): a record libtest does not
//!    confirm is refused. The reports are completed with an error entry for every check
//!    without a result: the running ones "did not finish" (the limit struck, or the process
//!    ended while they ran), the rest "not run". The runner writes the final reports itself,
//!    over whatever the output directory held.
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ratelimit_lab::suite::_runner_support::marks::still_running;
use ratelimit_lab::suite::_runner_support::unfinished::{
    check_of, complete, merge, not_graded, Ending, Leftovers,
};
use ratelimit_lab::suite::{env, write_reports};
use serde_json::Value;

use super::course::{self, Prepared};
use super::outcomes::{self, Libtest};
use super::{fail, print_out, EXIT_FAILURE};

/// The template this repository ships, the course crate `--template` defaults to.
const SHIPPED_TEMPLATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../templates/learner");

/// Arguments of `submission`.
#[derive(Clone, Debug, clap::Args)]
pub struct Args {
    /// The learner's crate: the directory that holds its `src/`.
    solution: PathBuf,

    /// The course's crate the learner's sources are graded in: its `Cargo.toml`,
    /// `Cargo.lock`, `tests/` and profile are used, never the submission's. Defaults to the
    /// learner template this repository ships.
    #[arg(long, value_name = "DIR", default_value = SHIPPED_TEMPLATE)]
    template: PathBuf,

    /// What is taken from the submission, relative to its directory (repeat for several);
    /// everything else comes from the template.
    #[arg(long, value_name = "PATH", default_value = "src")]
    take: Vec<PathBuf>,

    /// Where to write `results.json` (Exercism), `gradescope.json`, `junit.xml` and
    /// `classroom.json` (created when missing; earlier reports there are replaced).
    #[arg(long, value_name = "DIR", default_value = "out")]
    out: PathBuf,

    /// Seconds the build may take before it is stopped and graded `error`.
    #[arg(long, value_name = "SECS", default_value_t = 900)]
    build_limit_secs: u64,

    /// Seconds the checks may take, all test binaries together, before the run is stopped;
    /// checks without a result are then reported as errors. Each check also has its own
    /// limit (`RATELIMIT_LAB_TIMEOUT_SECS`), which reports a hang as that check's failure.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    test_limit_secs: u64,

    /// Further arguments for `cargo test`, after `--`: for example `-- --release --features
    /// shuttle` to grade under shuttle.
    #[arg(last = true, value_name = "CARGO_ARGS")]
    cargo_args: Vec<String>,
}

/// How a child process ended, or that the limit struck first.
enum Waited {
    Exited(ExitStatus),
    LimitStruck,
}

/// Builds and grades the submission; exit status 0 whenever both reports were written (the
/// grade is in them), 1 when they could not be.
pub fn run(args: &Args) -> ExitCode {
    let started = Instant::now();
    // Absolute, because the test binaries run in the solution's directory and write their
    // reports where the runner reads them.
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let args = &Args {
        solution: absolute(&args.solution),
        template: absolute(&args.template),
        out: absolute(&args.out),
        ..args.clone()
    };
    let (exercism, mut gradescope) = grade(args, started);
    if let Some(g) = gradescope.as_object_mut() {
        g.insert(
            "execution_time".into(),
            Value::from(started.elapsed().as_secs_f64()),
        );
    }
    if let Err(e) = write_reports(&args.out, &exercism, &gradescope) {
        return fail(
            EXIT_FAILURE,
            &format!("could not write the reports in {}: {e}", args.out.display()),
        );
    }
    let message = exercism["message"].as_str().unwrap_or_default();
    let status = exercism["status"].as_str().unwrap_or("error");
    let _ = print_out(&format!(
        "{message}\n\nstatus: {status}; wrote {} and {}\n",
        args.out.join("results.json").display(),
        args.out.join("gradescope.json").display()
    ));
    ExitCode::SUCCESS
}

/// Both reports for the submission.
fn grade(args: &Args, started: Instant) -> (Value, Value) {
    let work = args.out.join(".work");
    let _ = fs::remove_dir_all(&work);
    if let Err(e) = fs::create_dir_all(&work) {
        return not_graded(
            &format!("could not create {}: {e}", work.display()),
            started.elapsed(),
        );
    }
    let prepared = match course::prepare(
        &args.template,
        &args.solution,
        &args.take,
        &work.join("crate"),
        &args.out,
    ) {
        Ok(prepared) => prepared,
        Err(message) => {
            let _ = fs::remove_dir_all(&work);
            return not_graded(&message, started.elapsed());
        }
    };
    let note = prepared.note(&args.take);
    let (mut exercism, mut gradescope) = grade_prepared(args, &prepared, &work, started);
    let _ = fs::remove_dir_all(&work);
    if let Some(note) = note {
        for (report, key) in [(&mut exercism, "message"), (&mut gradescope, "output")] {
            let earlier = report[key].as_str().unwrap_or_default().to_string();
            report[key] = if earlier.is_empty() {
                note.clone().into()
            } else {
                format!("{note}\n\n{earlier}").into()
            };
        }
    }
    (exercism, gradescope)
}

/// Both reports for the course crate `prepared`, built and run in `work`.
fn grade_prepared(
    args: &Args,
    prepared: &Prepared,
    work: &Path,
    started: Instant,
) -> (Value, Value) {
    let crate_dir = prepared.dir.as_path();
    let manifest = crate_dir.join("Cargo.toml");
    touch_sources(crate_dir);
    let binaries = match build(args, &manifest, work) {
        Ok(binaries) => binaries,
        Err(message) => return not_graded(&message, started.elapsed()),
    };
    // Every binary is listed before any runs: a binary that cannot list its tests is left
    // out (it holds no suite the runner can grade), not a reason to grade nothing.
    let mut suites = Vec::new();
    let mut unlisted = Vec::new();
    for binary in &binaries {
        match list(binary, crate_dir, deadline_after(LIST_LIMIT_SECS)) {
            Ok(tests) if tests.is_empty() => {}
            Ok(tests) => suites.push((binary, tests)),
            Err(message) => unlisted.push(message),
        }
    }
    if suites.is_empty() && !unlisted.is_empty() {
        return not_graded(&unlisted.join("\n"), started.elapsed());
    }
    let deadline = deadline_after(args.test_limit_secs);
    let mut parts = Vec::new();
    for (i, (binary, expected)) in suites.into_iter().enumerate() {
        let dir = work.join(format!("run-{i}"));
        parts.push(run_suite(binary, crate_dir, &dir, expected, deadline, args));
    }
    merge(parts).unwrap_or_else(|| {
        not_graded(
            "no conformance suite found: none of the course crate's test binaries runs a \
             check. The course's template needs `ratelimit_lab::conformance_suite!(…);` in a \
             file under tests/.",
            started.elapsed(),
        )
    })
}

/// Seconds a test binary may take to list its tests.
const LIST_LIMIT_SECS: u64 = 60;

/// `secs` from now, or a century from now when that is beyond what an `Instant` holds.
fn deadline_after(secs: u64) -> Instant {
    let now = Instant::now();
    now.checked_add(Duration::from_secs(secs))
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// Sets the modification time of the crate's sources (`*.rs`, `Cargo.toml`, outside
/// `target*` and hidden directories) to now. Cargo decides whether a build is fresh by
/// comparing times, with paths relative to the crate: a submission copied in with older
/// times, into a target directory shared with an earlier submission of the same package,
/// would otherwise be graded on the earlier one's binaries. Symbolic links are not followed.
fn touch_sources(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            if !name.starts_with('.') && !name.starts_with("target") {
                touch_sources(&path);
            }
        } else if name.ends_with(".rs") || name == "Cargo.toml" {
            if let Ok(file) = File::options().append(true).open(&path) {
                let _ = file.set_modified(now);
            }
        }
    }
}

/// Builds the test binaries; returns their paths, or the message of a failed build.
fn build(args: &Args, manifest: &Path, work: &Path) -> Result<Vec<PathBuf>, String> {
    let stdout_path = work.join("build.json");
    let stderr_path = work.join("build.stderr");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "test",
            "--no-run",
            "--message-format=json",
            "--manifest-path",
        ])
        .arg(manifest)
        .args(&args.cargo_args)
        // Cargo reads configuration from the directory it runs in and its parents: the
        // course crate's, not the caller's.
        .current_dir(manifest.parent().unwrap_or(Path::new(".")))
        .env("CARGO_TERM_COLOR", "never");
    let limit = Duration::from_secs(args.build_limit_secs);
    let waited = spawn_and_wait(
        &mut command,
        &stdout_path,
        &stderr_path,
        deadline_after(args.build_limit_secs),
    )
    .map_err(|e| format!("could not run cargo: {e}"))?;
    let stdout = fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
    let mut errors = Vec::new();
    let mut beyond = Vec::new();
    let mut binaries = Vec::new();
    for message in stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        match message["reason"].as_str() {
            // rustc's closing "aborting due to N previous errors" is not an error of its own.
            Some("compiler-message")
                if message["message"]["level"] == "error"
                    && !message["message"]["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("aborting due to")) =>
            {
                match beyond_learner_api(&message["message"]) {
                    Some(line) if !beyond.contains(&line) => beyond.push(line),
                    Some(_) => {}
                    // The same error once, though rustc meets it in each target that
                    // compiles the file (the library and its unit tests).
                    None => {
                        if let Some(rendered) = message["message"]["rendered"].as_str() {
                            if !errors.iter().any(|e| e == rendered) {
                                errors.push(rendered.to_string());
                            }
                        }
                    }
                }
            }
            Some("compiler-artifact") if message["profile"]["test"] == true => {
                binaries.extend(message["executable"].as_str().map(PathBuf::from));
            }
            _ => {}
        }
    }
    match waited {
        Waited::LimitStruck => Err(format!(
            "the build did not finish within its limit of {} s",
            limit.as_secs()
        )),
        Waited::Exited(status) if !status.success() && !beyond.is_empty() => {
            let others = match errors.len() {
                0 => String::new(),
                1 => "\n(and 1 other compiler error)".to_string(),
                n => format!("\n(and {n} other compiler errors)"),
            };
            Err(format!(
                "the submission does not build: it names designs that pass the suite, which \
                 are not part of a learner's API (the reference, the specification `model`, \
                 the `catalog`); implement `Limiter` on a type of your own.\n\n{}{others}",
                beyond.join("\n")
            ))
        }
        Waited::Exited(status) if !status.success() => {
            let shown = if errors.is_empty() {
                // Not the compiler's: a manifest or dependency error, told on stderr.
                let from = stderr.find("error").unwrap_or(0);
                first_lines(&stderr[from..], 30)
            } else {
                let count = errors.len();
                let mut shown: Vec<String> =
                    errors.iter().take(5).map(|e| first_lines(e, 30)).collect();
                if count > 5 {
                    shown.push(format!("… and {} more errors", count - 5));
                }
                shown.join("\n")
            };
            Err(format!(
                "the submission does not build ({}):\n\n{shown}",
                describe(status)
            ))
        }
        Waited::Exited(_) => Ok(binaries),
    }
}

/// One line for a compiler error (rustc's JSON `message`) that names a module of
/// `ratelimit_lab` a learner's crate cannot reach: `src/lib.rs:3: ratelimit_lab::reference is
/// not part of a learner's API`. `None` for every other error, a learner's own private
/// module of the same name included.
fn beyond_learner_api(message: &Value) -> Option<String> {
    if message["code"]["code"] != "E0603" {
        return None;
    }
    let text = message["message"].as_str()?;
    let name = ["reference", "model", "catalog"].into_iter().find(|name| {
        [
            format!("crate `{name}` is private"),
            format!("module `{name}` is private"),
        ]
        .iter()
        .any(|m| text == m)
    })?;
    let span = message["spans"]
        .as_array()?
        .iter()
        .find(|s| s["is_primary"] == true)?;
    let source: String = span["text"]
        .as_array()?
        .iter()
        .filter_map(|t| t["text"].as_str())
        .collect();
    let path = format!("ratelimit_lab::{name}");
    if !source.replace(' ', "").contains(&path) {
        return None;
    }
    Some(format!(
        "{}:{}: {path} is not part of a learner's API",
        span["file_name"].as_str().unwrap_or("?"),
        span["line_start"].as_u64().unwrap_or(0)
    ))
}

/// The suite's tests in `binary`, by test name.
fn list(binary: &Path, solution: &Path, deadline: Instant) -> Result<Vec<String>, String> {
    let work = std::env::temp_dir();
    let out = work.join(format!("ratelimit-lab-list-{}.txt", std::process::id()));
    let err = work.join(format!("ratelimit-lab-list-{}.stderr", std::process::id()));
    let mut command = Command::new(binary);
    command
        .args(["--list", "--format", "terse"])
        .current_dir(solution);
    let waited = spawn_and_wait(&mut command, &out, &err, deadline)
        .map_err(|e| format!("could not run the test binary {}: {e}", binary.display()))?;
    let text = fs::read_to_string(&out).unwrap_or_default();
    let _ = (fs::remove_file(&out), fs::remove_file(&err));
    match waited {
        Waited::Exited(status) if status.success() => Ok(text
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            // The suite's tests only (`cNN::check`, perhaps in a design's module), not a
            // learner's own test that happens to share a check's name.
            .filter(|name| {
                check_of(name).is_some_and(|c| {
                    let test = c.test_name();
                    *name == test || name.ends_with(&format!("::{test}"))
                })
            })
            .map(str::to_string)
            .collect()),
        Waited::Exited(status) => Err(format!(
            "the test binary {} could not list its tests ({})",
            binary.display(),
            describe(status)
        )),
        Waited::LimitStruck => Err("the test limit struck while listing the tests".to_string()),
    }
}

/// Runs the suite's tests of one binary and returns its completed reports.
fn run_suite(
    binary: &Path,
    solution: &Path,
    dir: &Path,
    expected: Vec<String>,
    deadline: Instant,
    args: &Args,
) -> (Value, Value) {
    let _ = fs::create_dir_all(dir);
    let mut command = Command::new(binary);
    command
        .arg("--exact")
        .args(&expected)
        .current_dir(solution)
        .env(env::REPORT_DIR, dir)
        .env("CARGO_MANIFEST_DIR", solution);
    let waited = spawn_and_wait(
        &mut command,
        &dir.join("stdout"),
        &dir.join("stderr"),
        deadline,
    );
    let running = still_running(dir);
    let libtest = Libtest::parse(&fs::read_to_string(dir.join("stdout")).unwrap_or_default());
    let ending = match waited {
        Err(e) => Ending::Ended {
            how: format!("it could not start: {e}"),
        },
        Ok(Waited::LimitStruck) => Ending::LimitStruck {
            limit: Duration::from_secs(args.test_limit_secs),
        },
        // A libtest binary exits with 0 or 101 when it ran every test it was given, after
        // its summary line; a check still marked running, or no summary, means the design
        // ended the process with one of those codes.
        Ok(Waited::Exited(status))
            if matches!(status.code(), Some(0 | 101))
                && running.is_empty()
                && libtest.summarized =>
        {
            Ending::Finished
        }
        Ok(Waited::Exited(status)) => Ending::Ended {
            how: describe(status),
        },
    };
    let read = |file: &str| {
        fs::read_to_string(dir.join(file))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
    };
    let (mut exercism, mut gradescope) = (read("results.json"), read("gradescope.json"));
    let refused = outcomes::confirm(&mut exercism, &mut gradescope, &libtest);
    if !refused.is_empty() {
        // The process's own summary is no more trusted than its refused records.
        for (report, key) in [(&mut exercism, "message"), (&mut gradescope, "output")] {
            if let Some(report) = report.as_mut() {
                report[key] = Value::from("");
            }
        }
    }
    let leftovers = Leftovers {
        exercism,
        gradescope,
        expected,
        running,
    };
    let (mut exercism, mut gradescope) = complete(&leftovers, &ending);
    outcomes::recount(&mut exercism, &mut gradescope);
    outcomes::mark_refused(&mut exercism, &mut gradescope, &refused);
    (exercism, gradescope)
}

/// Starts `command` with its output in files (never a pipe nobody reads) and its own
/// process group, and waits for it until `deadline`; at the deadline the whole group is
/// killed.
fn spawn_and_wait(
    command: &mut Command,
    stdout: &Path,
    stderr: &Path,
    deadline: Instant,
) -> std::io::Result<Waited> {
    command
        .stdin(Stdio::null())
        .stdout(File::create(stdout)?)
        .stderr(File::create(stderr)?);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    let mut child = command.spawn()?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Waited::Exited(status));
        }
        if Instant::now() >= deadline {
            kill(&mut child);
            return Ok(Waited::LimitStruck);
        }
        thread::sleep(Duration::from_millis(25));
    }
}

/// Kills `child` and, on Unix, every process of its group (cargo's compilers, threads a
/// design left behind live in the one process anyway).
fn kill(child: &mut Child) {
    #[cfg(unix)]
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// `exit status 3`, `signal 6 (SIGABRT)`.
fn describe(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        let name = match signal {
            6 => " (SIGABRT: an abort, or a stack overflow)",
            9 => " (SIGKILL)",
            11 => " (SIGSEGV)",
            _ => "",
        };
        return format!("signal {signal}{name}");
    }
    status.to_string()
}

/// At most `n` lines of `text`, noting what was left out.
fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let mut shown = lines[..lines.len().min(n)].join("\n");
    if lines.len() > n {
        shown.push_str(&format!("\n… ({} more lines)", lines.len() - n));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_with_a_note() {
        assert_eq!(first_lines("a\nb\nc\n", 2), "a\nb\n… (1 more lines)");
        assert_eq!(first_lines("a\nb", 5), "a\nb");
    }
}
