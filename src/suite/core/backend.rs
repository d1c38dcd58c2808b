//! The backend [`sync`](crate::sync) is built with: its name as files and reports write it,
//! and the `cargo` line that builds in its mode.
use std::fmt;
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
    /// and its own target directory for loom (as the README's learner steps set them up).
    pub fn cargo(self, subcommand: &str) -> String {
        match self {
            Backend::Std => format!("cargo {subcommand}"),
            Backend::Shuttle => format!(
                "CARGO_TARGET_DIR=target-shuttle cargo {subcommand} --release --features shuttle"
            ),
            Backend::Loom => format!(
                "RUSTFLAGS=\"--cfg loom\" CARGO_TARGET_DIR=target-loom cargo {subcommand} --release"
            ),
        }
    }
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
    }
}
