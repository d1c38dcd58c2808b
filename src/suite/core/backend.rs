//! The backend [`sync`](crate::sync) is built with: its name as files and reports write it,
//! and the `cargo` line that builds in its mode.
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The backend [`sync`](crate::sync) is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// `std::sync` and real threads.
    Std,
    /// shuttle's controlled scheduler (feature `shuttle`).
    Shuttle,
    /// loom's exhaustive explorer (`--cfg loom`).
    Loom,
}

impl Backend {
    /// Every backend.
    pub const ALL: [Backend; 3] = [Backend::Std, Backend::Shuttle, Backend::Loom];

    /// The backend of this build.
    pub const fn current() -> Backend {
        if cfg!(loom) {
            Backend::Loom
        } else if cfg!(feature = "shuttle") {
            Backend::Shuttle
        } else {
            Backend::Std
        }
    }

    /// `true` for shuttle and loom: schedules are chosen by the backend, not the OS.
    pub const fn is_controlled(self) -> bool {
        !matches!(self, Backend::Std)
    }

    /// `"std"`, `"shuttle"` or `"loom"`: the name a counterexample file records.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Std => "std",
            Backend::Shuttle => "shuttle",
            Backend::Loom => "loom",
        }
    }

    /// `cargo <subcommand>` with what a build in this mode needs: nothing for std;
    /// `--release --features shuttle` and its own target directory for shuttle; the loom cfg
    /// and its own target directory for loom (as the README's learner steps set them up:
    /// `target-shuttle`, `target-loom`).
    pub fn cargo(self, subcommand: &str) -> String {
        let target = match self {
            Backend::Std => "target",
            Backend::Shuttle => "target-shuttle",
            Backend::Loom => "target-loom",
        };
        self.cargo_in(subcommand, target)
    }

    /// [`cargo`](Self::cargo) for a command run again from the current directory by the
    /// person reading this process's output: in shuttle and loom mode the target directory is
    /// the one the running executable was built in (so that the rerun reuses that build), or
    /// the README's when the executable is not in a target directory.
    pub fn cargo_here(self, subcommand: &str) -> String {
        match built_in() {
            Some(dir) if self.is_controlled() => self.cargo_in(subcommand, &shown(&dir)),
            _ => self.cargo(subcommand),
        }
    }

    fn cargo_in(self, subcommand: &str, target: &str) -> String {
        match self {
            Backend::Std => format!("cargo {subcommand}"),
            Backend::Shuttle => {
                format!("CARGO_TARGET_DIR={target} cargo {subcommand} --release --features shuttle")
            }
            Backend::Loom => format!(
                "RUSTFLAGS=\"--cfg loom\" CARGO_TARGET_DIR={target} cargo {subcommand} --release"
            ),
        }
    }
}

/// The cargo target directory the running executable was built in: its nearest ancestor
/// holding cargo's `CACHEDIR.TAG`; `None` outside a target directory.
pub fn built_in() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}

/// `path` as a command line reads it from the current directory: relative when it is under
/// it, or through `..` when that is shorter (a target directory beside the crate), and
/// single-quoted when it holds a character a shell would read.
pub fn shown(path: &Path) -> String {
    let here = std::env::current_dir().ok();
    let text = here
        .as_deref()
        .and_then(|here| relative(path, here))
        .unwrap_or_else(|| path.display().to_string());
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@".contains(c);
    if text.chars().all(plain) {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// `path` from the directory `here` (both absolute): under it, or through `..` when that is
/// shorter than `path` itself. `None` when neither is.
fn relative(path: &Path, here: &Path) -> Option<String> {
    if let Some(under) = path
        .strip_prefix(here)
        .ok()
        .filter(|p| !p.as_os_str().is_empty())
    {
        return Some(under.display().to_string());
    }
    if !path.is_absolute() || !here.is_absolute() {
        return None;
    }
    let shared = path
        .components()
        .zip(here.components())
        .take_while(|(a, b)| a == b)
        .count();
    // Only the root in common: `..` up to it would be longer than the path itself.
    if shared <= 1 {
        return None;
    }
    let up = here.components().count() - shared;
    let mut text = "../".repeat(up);
    let rest: PathBuf = path.components().skip(shared).collect();
    text.push_str(&rest.display().to_string());
    (text.len() < path.as_os_str().len()).then_some(text)
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a backend's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBackend(pub String);

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown backend {:?} (std, shuttle or loom)", self.0)
    }
}

impl std::error::Error for UnknownBackend {}

impl FromStr for Backend {
    type Err = UnknownBackend;

    /// The backend named `"std"`, `"shuttle"` or `"loom"`, the inverse of [`Backend::name`].
    fn from_str(name: &str) -> Result<Backend, UnknownBackend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| UnknownBackend(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>(), Ok(b));
        }
        assert!("tokio".parse::<Backend>().is_err());
        assert_eq!(Backend::Std.cargo("test"), "cargo test");
        assert_eq!(Backend::Std.cargo_here("test"), "cargo test");
        assert_eq!(
            Backend::Shuttle.cargo("test"),
            "CARGO_TARGET_DIR=target-shuttle cargo test --release --features shuttle"
        );
    }

    #[test]
    fn a_path_is_shown_as_a_shell_reads_it() {
        let here = std::env::current_dir().expect("a current directory");
        assert_eq!(shown(&here.join("target-shuttle")), "target-shuttle");
        assert_eq!(shown(Path::new("/t/a b")), "'/t/a b'");
        assert_eq!(shown(Path::new("/t/it's")), "'/t/it'\\''s'");
        assert_eq!(shown(Path::new("/t/x")), "/t/x");
    }

    #[test]
    fn a_path_beside_the_current_directory_is_shown_through_dot_dot_when_shorter() {
        let path = Path::new("/tmp/course/target/ratelimit-lab/c35.json");
        assert_eq!(
            relative(path, Path::new("/tmp/course/my-limiter")).as_deref(),
            Some("../target/ratelimit-lab/c35.json")
        );
        assert_eq!(
            relative(path, Path::new("/tmp/course")).as_deref(),
            Some("target/ratelimit-lab/c35.json")
        );
        // Far apart: the path itself is shorter.
        assert_eq!(
            relative(path, Path::new("/tmp/a/b/c/d/e/f/g/h/i/j/k/l")),
            None
        );
        assert_eq!(relative(Path::new("/t/x"), Path::new("/u/y")), None);
    }
}
