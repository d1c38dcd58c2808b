//! The grade card: a design's [`Report`] summed up for a person, in the order they read it.
//! First the score, per requirement, per kind of check and per the seed's level (Engineer,
//! Senior, Staff, with the level reached); then the combined diagnosis;
//! then the first failure in suite order, in full (the suite lists the seed's scenarios first,
//! so the first failure is usually the most concrete one).
use std::fmt::Write as _;

use crate::suite::checks::table::Kind;
use crate::suite::core::failure::{wrapped, HINT_WIDTH};
use crate::suite::core::level::Level;
use crate::suite::report::results::Report;
use crate::Requirement;

/// The kinds of check, in suite order, with their names on the card.
const KINDS: [(Kind, &str); 3] = [
    (Kind::Scenario, "scenarios (fixed)"),
    (Kind::Property, "properties (generated)"),
    (Kind::Concurrency, "concurrency"),
];

/// `hint: …`, wrapped and indented.
fn hint(text: &str) -> String {
    format!(
        "  {}",
        wrapped(&format!("hint: {text}"), HINT_WIDTH, "        ")
    )
}

/// `R2 and R3`: the requirements whose checks grade `level`.
fn requirements_of(level: Level) -> String {
    let of: Vec<String> = REQUIREMENTS
        .iter()
        .filter(|r| Level::of(**r) == level)
        .map(ToString::to_string)
        .collect();
    of.join(" and ")
}

const REQUIREMENTS: [Requirement; 4] = [
    Requirement::R1,
    Requirement::R2,
    Requirement::R3,
    Requirement::R4,
];

impl Report {
    /// The summary of the card: the score; the rows per requirement, each beside its seed
    /// level, and the level reached; the rows per kind of check; and the diagnosis (what
    /// [`exercism`](Report::exercism) puts in its top-level `message`).
    pub fn summary(&self, design: &str) -> String {
        let mut out = format!(
            "{design}: {} of {} checks passed, {} of {} points\n\n",
            self.passed(),
            self.results.len(),
            self.score(),
            self.max_score()
        );
        // Requirements, each beside the seed level it belongs to (named on its first row).
        let mut rows: Vec<(String, String, String)> = Vec::new();
        let mut levels: Vec<&str> = Vec::new();
        let mut named = None;
        for requirement in REQUIREMENTS {
            let level = Level::of(requirement);
            levels.push(if named == Some(level) {
                ""
            } else {
                level.name()
            });
            named = Some(level);
            rows.push(
                self.row(&format!("{requirement} {}", requirement.text()), |r| {
                    r.check.requirement == requirement
                }),
            );
        }
        let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "  {:8}  {:width$}  checks  points",
            "level", "requirement"
        );
        for ((label, checks, points), level) in rows.drain(..).zip(levels) {
            let _ = writeln!(out, "  {level:8}  {label:width$}  {checks:>6}  {points:>6}");
        }
        let _ = writeln!(out, "  {}", self.level_reached());
        for (kind, name) in KINDS {
            rows.push(self.row(name, |r| r.check.kind == kind));
        }
        let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let _ = writeln!(out, "\n  {:width$}  checks  points", "kind of check");
        for (label, checks, points) in rows {
            let _ = writeln!(out, "  {label:width$}  {checks:>6}  {points:>6}");
        }
        out.push_str(&self.coverage_text());
        out.push('\n');
        out.push_str(&self.diagnosis_text());
        crate::suite::core::failure::fitted(&out)
    }

    /// What the concurrency checks' searches covered, summed (empty when none ran): the
    /// harness's budget may end a search early on a busy machine, which costs coverage, not a
    /// verdict, and the card says so.
    fn coverage_text(&self) -> String {
        let covered: Vec<(&str, crate::suite::core::budget::Coverage)> = self
            .results
            .iter()
            .filter_map(|(name, r)| r.coverage.map(|c| (name.as_str(), c)))
            .collect();
        if covered.is_empty() {
            return String::new();
        }
        let sum = |f: fn(&crate::suite::core::budget::Coverage) -> u64| {
            covered.iter().map(|(_, c)| f(c)).sum::<u64>()
        };
        let (executions, rounds) = (sum(|c| c.executions), sum(|c| c.rounds));
        let mut text = format!("\n  concurrency: {executions} schedules explored");
        if rounds > 0 {
            text.push_str(&format!(", {rounds} stress rounds"));
        }
        let cut: Vec<&str> = covered
            .iter()
            .filter(|(_, c)| c.was_cut_short())
            .map(|(name, _)| *name)
            .collect();
        if cut.is_empty() {
            text.push_str(", every search in full\n");
        } else {
            text.push_str(&format!(
                "; the harness's time budget ended {} of {} searches early in {} (a busy machine: \
                 less coverage, same verdict rules; {} sets the budget)\n",
                sum(|c| c.cut_short),
                sum(|c| c.searches),
                cut.join(", "),
                crate::suite::core::env::BUDGET
            ));
        }
        text
    }

    /// The later failed checks whose cause is the first failure's, named in one wrapped
    /// paragraph (empty when there are none): one slip, one explanation.
    fn same_cause_as_first(&self, first: &crate::suite::run::isolation::CheckResult) -> String {
        let Some(cause) = first.cause() else {
            return String::new();
        };
        let same: Vec<&str> = self
            .results
            .iter()
            .filter(|(_, r)| {
                r.check.name != first.check.name && !r.passed() && r.cause() == Some(cause)
            })
            .map(|(_, r)| r.check.name)
            .collect();
        if same.is_empty() {
            return String::new();
        }
        format!(
            "\n{}\n",
            crate::suite::core::failure::wrapped(
                &format!(
                    "same cause as {} ({cause}): {} more failed check{}, {}",
                    first.check.name,
                    same.len(),
                    if same.len() == 1 { "" } else { "s" },
                    same.join(", ")
                ),
                crate::suite::core::failure::LINE_WIDTH,
                "  "
            )
        )
    }

    /// The whole card: [`summary`](Report::summary), then the first failure in suite order in
    /// full (with the command that reruns it), or a line saying every check passed.
    pub fn card(&self, design: &str) -> String {
        let mut out = self.summary(design);
        match self.results.iter().find(|(_, r)| !r.passed()) {
            None => out.push_str("\nevery check passed\n"),
            Some((name, first)) => {
                let _ = write!(
                    out,
                    "\nfirst failure, in suite order:\n\n{}",
                    first.explain(&self.rerun_for(name))
                );
                out.push_str(&self.same_cause_as_first(first));
            }
        }
        out
    }

    /// The combined diagnosis in words: the mistake the evidence of every failed check
    /// singles out, with the seed's text and hint; or, when none is singled out, the first
    /// broken requirement and its hint.
    pub fn diagnosis_text(&self) -> String {
        let Some(first) = self.first_failure() else {
            return "diagnosis: none needed, every check passed\n".to_owned();
        };
        let failed = self.results.len() - self.passed();
        match self.diagnosis() {
            Some(m) => format!(
                "diagnosis, over all {failed} failed check{}: the mistake, in the lesson's words:\n  \"{}\"\n{}\n",
                if failed == 1 { "" } else { "s" },
                m.seed_text(),
                hint(m.hint())
            ),
            None => {
                // Filing replays the trace on the specification: once.
                let broken = first.requirement();
                format!(
                    "diagnosis: no catalogued mistake explains all {failed} failure{}; the first \
                     broken requirement is {broken}: {}\n{}\n",
                    if failed == 1 { "" } else { "s" },
                    broken.text(),
                    hint(broken.hint())
                )
            }
        }
    }

    /// The highest of the seed's levels whose checks, and every earlier level's, all passed.
    fn level_reached(&self) -> String {
        // Every check of the level must have passed here: a report that lacks some (a run cut
        // short) reaches no level it has not shown.
        let passes = |level: Level| {
            crate::suite::checks::table::CHECKS
                .iter()
                .filter(|c| Level::of(c.requirement) == level)
                .all(|c| {
                    self.results
                        .iter()
                        .any(|(_, r)| r.check.name == c.name && r.passed())
                })
        };
        let reached = Level::ALL.iter().take_while(|l| passes(**l)).last();
        match (reached, Level::ALL.iter().find(|l| !passes(**l))) {
            (_, None) => "level reached: Staff, every level's checks pass".to_owned(),
            (Some(r), Some(next)) => format!(
                "level reached: {}; {} ({}) needs every check of {}",
                r.name(),
                next.name(),
                next.expects(),
                requirements_of(*next)
            ),
            (None, Some(next)) => format!(
                "level reached: none yet; {} ({}) needs every check of {}",
                next.name(),
                next.expects(),
                requirements_of(*next)
            ),
        }
    }

    /// `(label, "passed/total", "earned/available")` over the checks `pick` selects.
    fn row(
        &self,
        label: &str,
        pick: impl Fn(&crate::suite::run::isolation::CheckResult) -> bool,
    ) -> (String, String, String) {
        let picked: Vec<&crate::suite::run::isolation::CheckResult> = self
            .results
            .iter()
            .map(|(_, r)| r)
            .filter(|r| pick(r))
            .collect();
        let passed = picked.iter().filter(|r| r.passed()).count();
        let earned: u32 = picked.iter().map(|r| r.score()).sum();
        let available: u32 = picked.iter().map(|r| r.check.points).sum();
        (
            label.to_owned(),
            format!("{passed}/{}", picked.len()),
            format!("{earned}/{available}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::suite::checks::table::CHECKS;
    use crate::suite::core::failure::FailingTrace;
    use crate::suite::core::failure::Failure;
    use crate::suite::core::failure::Lookalike;
    use crate::suite::run::isolation::CheckResult;
    use crate::suite::run::isolation::Status;
    use crate::Mistake;
    use crate::Policy;

    /// A report where the checks at `failing` (indices into the suite) failed, each failure
    /// reproduced by the designs given.
    fn report(failing: &[(usize, &[(&str, Mistake)])]) -> Report {
        let results = CHECKS
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let status = match failing.iter().find(|(at, _)| *at == i) {
                    None => Status::Passed,
                    Some((_, like)) => {
                        let mut f = Failure::new("it went wrong");
                        f.replay = Some(FailingTrace {
                            policy: Policy::new(1, 10, 2).expect("valid"),
                            max_keys: 8,
                            ops: Vec::new(),
                            observed: Vec::new(),
                            snapshot: None,
                        });
                        f.resembles = like
                            .iter()
                            .map(|(d, m)| Lookalike {
                                design: (*d).to_owned(),
                                mistake: *m,
                            })
                            .collect();
                        Status::Failed(f)
                    }
                };
                let result = CheckResult {
                    check: *c,
                    status,
                    elapsed: Duration::from_millis(1),
                    coverage: None,
                };
                (c.name.to_owned(), result)
            })
            .collect();
        Report {
            results,
            rerun_command: None,
            wall: None,
        }
    }

    #[test]
    fn the_card_sums_up_per_requirement_and_level_and_shows_the_first_failure() {
        let r = report(&[(0, &[("A", Mistake::WindowReset)])]);
        let card = r.card("Mine");
        let total = CHECKS.len();
        assert!(card.starts_with(&format!("Mine: {} of {total} checks passed", total - 1)));
        let r1 = CHECKS
            .iter()
            .filter(|c| c.requirement == Requirement::R1)
            .count();
        let row = card
            .lines()
            .find(|l| l.contains(" R1 A request"))
            .expect("an R1 row");
        assert!(row.contains(&format!("{}/{r1}", r1 - 1)), "{row}");
        assert!(card.contains("scenarios (fixed)"), "{card}");
        assert!(card.contains(&format!(
            "first failure, in suite order:\n\n{} (",
            CHECKS[0].name
        )));
        assert!(card.contains(Mistake::WindowReset.seed_text()), "{card}");
    }

    #[test]
    fn the_card_names_the_later_failures_with_the_first_ones_cause() {
        let mut r = report(&[(0, &[]), (1, &[]), (2, &[])]);
        let early = crate::suite::core::cause::Cause::quantity("allow", "retry_after_nanos", false);
        for (i, (_, result)) in r.results.iter_mut().enumerate() {
            if let Status::Failed(f) = &mut result.status {
                f.cause = Some(if i == 2 {
                    crate::suite::core::cause::Cause::new("something else")
                } else {
                    early.clone()
                });
            }
        }
        let card = r.card("Mine");
        let line = format!(
            "same cause as {} (allow returned retry_after_nanos below the specification's): 1 more \
             failed check, {}\n",
            CHECKS[0].name, CHECKS[1].name
        );
        assert!(card.replace("\n  ", " ").contains(&line), "{card}");
        assert!(!card.contains(CHECKS[2].name), "{card}");
        assert!(card.lines().all(|l| l.chars().count() <= 120), "{card}");
    }

    #[test]
    fn the_card_shows_the_seed_level_reached() {
        let at = |requirement| {
            CHECKS
                .iter()
                .position(|c| c.requirement == requirement)
                .expect("a check of the requirement")
        };
        let card = report(&[(at(Requirement::R1), &[])]).card("Mine");
        assert!(card.contains("\n  Engineer  R1 A request"), "{card}");
        assert!(card.contains("\n            R3 Key count"), "{card}");
        assert!(
            card.contains("level reached: none yet; Engineer (correct fractional refill and explicit input behavior) needs every check of R1"),
            "{card}"
        );
        let card = report(&[(at(Requirement::R3), &[])]).card("Mine");
        assert!(
            card.contains("level reached: Engineer; Senior (atomic admission for concurrent callers, bounded keys) needs every check of R2 and R3"),
            "{card}"
        );
        let card = report(&[(at(Requirement::R4), &[])]).card("Mine");
        assert!(
            card.contains("level reached: Senior; Staff (policy change without granting a fresh budget) needs every check of R4"),
            "{card}"
        );
        let card = report(&[]).card("Mine");
        assert!(
            card.contains("level reached: Staff, every level's checks pass"),
            "{card}"
        );
        // A report cut short shows no level it has not graded.
        let mut partial = report(&[]);
        partial.results.truncate(1);
        let card = partial.card("Mine");
        assert!(card.contains("level reached: none yet"), "{card}");
    }

    #[test]
    fn a_mistake_is_named_only_when_one_design_explains_every_failure() {
        let one = [("A", Mistake::WindowReset)];
        let other = [("B", Mistake::DroppedFraction)];
        let both = [("A", Mistake::WindowReset), ("B", Mistake::DroppedFraction)];
        // Both failures explained by A alone, or by A and B with B not explaining the first.
        assert_eq!(
            report(&[(0, &one), (1, &one)]).diagnosis(),
            Some(Mistake::WindowReset)
        );
        assert_eq!(
            report(&[(0, &one), (1, &both)]).diagnosis(),
            Some(Mistake::WindowReset)
        );
        // Two designs making different mistakes explain everything: no name.
        assert_eq!(report(&[(0, &both), (1, &both)]).diagnosis(), None);
        // No one design explains both failures: no name.
        assert_eq!(report(&[(0, &one), (1, &other)]).diagnosis(), None);
        // A failure no design reproduces gives no evidence either way.
        assert_eq!(
            report(&[(0, &one), (1, &[])]).diagnosis(),
            Some(Mistake::WindowReset)
        );
        // Left out of the catalog, A cannot name its mistake.
        assert_eq!(report(&[(0, &one)]).diagnosis_without(&["A"]), None);
        let silent = report(&[(0, &one), (1, &other)]);
        let text = silent.diagnosis_text();
        assert!(
            text.contains("no catalogued mistake explains all 2 failures"),
            "{text}"
        );
        assert!(text.contains("hint: "), "{text}");
    }

    /// `report`, with the failure at each index in `kin` also departing alike with the
    /// designs given.
    fn with_kin(mut r: Report, kin: &[(usize, &[(&str, Mistake)])]) -> Report {
        for (at, like) in kin {
            if let Some((
                _,
                CheckResult {
                    status: Status::Failed(f),
                    ..
                },
            )) = r.results.get_mut(*at)
            {
                f.kin = like
                    .iter()
                    .map(|(d, m)| Lookalike {
                        design: (*d).to_owned(),
                        mistake: *m,
                    })
                    .collect();
            }
        }
        r
    }

    #[test]
    fn an_alike_departure_names_a_mistake_only_when_it_singles_one_out_everywhere() {
        let a = [("A", Mistake::StaleTime), ("A2", Mistake::StaleTime)];
        let shared = [
            ("A", Mistake::StaleTime),
            ("K", Mistake::MutationBeforeValidation),
        ];
        let other = [("C", Mistake::InputValidation)];
        // Left out of the catalog, A's kin A2 still names the mistake.
        let named = with_kin(report(&[(0, &a), (1, &[])]), &[(0, &a), (1, &a)]);
        assert_eq!(named.diagnosis_without(&["A"]), Some(Mistake::StaleTime));
        // A departure two mistakes share names nothing on its own...
        let alone = with_kin(report(&[(0, &[])]), &[(0, &shared)]);
        assert_eq!(alone.diagnosis(), None);
        // ...but allows the mistake another check singles out.
        let helped = with_kin(report(&[(0, &[]), (1, &[])]), &[(0, &shared), (1, &a)]);
        assert_eq!(helped.diagnosis(), Some(Mistake::StaleTime));
        // Two checks singling out different mistakes: no name.
        let split = with_kin(report(&[(0, &[]), (1, &[])]), &[(0, &a), (1, &other)]);
        assert_eq!(split.diagnosis(), None);
        // A failed check that nothing departs alike with leaves the rest of what is wrong
        // unexplained: no name from alike departures alone.
        let partial = with_kin(report(&[(0, &[]), (1, &[])]), &[(0, &a)]);
        assert_eq!(partial.diagnosis(), None);
        // Exact evidence and alike departures that disagree: no name.
        let against = with_kin(
            report(&[(0, &[("B", Mistake::DroppedFraction)]), (1, &[])]),
            &[(1, &a)],
        );
        assert_eq!(against.diagnosis(), None);
    }
}
