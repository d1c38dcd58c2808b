//! The verified walkthrough fixtures: the committed ones are exactly a fresh build of the
//! lesson, every one validates against the JSON Schemas with a real validator and reads
//! exactly in JavaScript, every picture marks every request, an instructor's new file
//! becomes a fixture with one command and a wrong expectation in it is refused with its step.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use ratelimit_lab::fixtures::{self, source, Fixture};
use ratelimit_lab::Limiter;
use ratelimit_lab_instructor::site::{self, build};
use ratelimit_lab_reference::{ShardedBucket, TokenBucket};
use serde_json::Value;

/// The repository root (this crate lives in `instructor/`).
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn lesson_dir() -> PathBuf {
    Path::new(ROOT).join("testdata/lesson")
}

fn fixtures_dir() -> PathBuf {
    Path::new(ROOT).join("fixtures")
}

/// A fresh, empty directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "ratelimit-lab-fixtures-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ratelimit-lab"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn committed_fixtures_are_a_fresh_build_of_the_lesson() {
    let drifts = site::check(&lesson_dir(), &fixtures_dir()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        drifts.is_empty(),
        "fixtures/ differs from a fresh build of testdata/lesson:\n{}\n\
         rebuild with `cargo run --release -- fixtures build testdata/lesson --out fixtures`, \
         review the difference and commit it",
        drifts
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_hand_edit_to_any_number_names_the_file_and_the_step() {
    let scratch = Scratch::new("hand-edit");
    copy_dir(&fixtures_dir(), &scratch.0);
    let file = scratch
        .0
        .join("walkthroughs/burst_rejection_fractional_refill.json");
    let text = fs::read_to_string(&file).unwrap();
    // Step 3 keeps half a token: 500000000 units. Make it one unit more.
    let edited = text.replacen("\"k\": \"500000000\"", "\"k\": \"500000001\"", 1);
    assert_ne!(edited, text, "the fixture holds step 3's balance");
    fs::write(&file, edited).unwrap();
    let drifts = site::check(&lesson_dir(), &scratch.0).unwrap();
    assert_eq!(drifts.len(), 1, "{drifts:?}");
    assert_eq!(
        drifts[0].path,
        "walkthroughs/burst_rejection_fractional_refill.json"
    );
    assert_eq!(drifts[0].step, Some(3), "{}", drifts[0]);
    assert!(drifts[0].detail.contains("balances"), "{}", drifts[0]);
    // The command says the same, with exit status 1.
    let out = cli(&[
        "fixtures",
        "check",
        lesson_dir().to_str().unwrap(),
        "--out",
        scratch.0.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("walkthroughs/burst_rejection_fractional_refill.json step 3"),
        "{stderr}"
    );
}

#[test]
fn a_wrong_expectation_writes_nothing_and_names_file_step_and_both_outcomes() {
    let scratch = Scratch::new("wrong");
    let src = scratch.0.join("src");
    copy_dir(&lesson_dir(), &src);
    let file = src.join("worked_example_1_burst_then_retry.json");
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["steps"][1]["expect"]["retry_after_nanos"], 500_000_000);
    doc["steps"][1]["expect"]["retry_after_nanos"] = Value::from(499_999_999);
    fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out_dir = scratch.0.join("out");
    let out = cli(&[
        "fixtures",
        "build",
        src.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for needle in [
        "worked_example_1_burst_then_retry.json",
        "step 2",
        "expected:",
        "499999999",
        "model:",
        "reference:",
        "500000000",
        "no fixture was written",
    ] {
        assert!(
            stderr.contains(needle),
            "{needle:?} missing from:\n{stderr}"
        );
    }
    assert!(!out_dir.exists(), "a refused build writes nothing");
}

#[test]
fn an_instructors_new_walkthrough_becomes_a_verified_fixture_with_one_command() {
    let scratch = Scratch::new("new");
    let src = scratch.0.join("lessons");
    fs::create_dir_all(&src).unwrap();
    fs::write(
        src.join("three_quarters.json"),
        r#"{
  "id": "three_quarters",
  "title": "Rate four: a token every quarter second",
  "seed": "An instructor's own example.",
  "policy": { "version": 1, "capacity": 2, "tokens_per_second": 4 },
  "max_keys": 1,
  "steps": [
    { "action": "spend both", "op": { "op": "allow", "key": "u", "cost": 2, "now": 0 },
      "expect": { "outcome": "decision", "allowed": true, "whole_tokens": 0, "retry_after_nanos": 0 },
      "invariant": "Budget never negative" },
    { "action": "one more at once", "op": { "op": "allow", "key": "u", "cost": 1, "now": 0 },
      "expect": { "outcome": "decision", "allowed": false, "whole_tokens": 0, "retry_after_nanos": 250000000 },
      "invariant": "No token spent on rejection" },
    { "action": "a second key", "op": { "op": "allow", "key": "v", "cost": 1, "now": 250000000 },
      "expect": { "outcome": "error", "error": "key_capacity_reached", "max_keys": 1 },
      "invariant": "I3" }
  ]
}"#,
    )
    .unwrap();
    let out_dir = scratch.0.join("site");
    let out = cli(&[
        "fixtures",
        "build",
        src.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in [
        "walkthroughs/three_quarters.json",
        "walkthroughs/three_quarters.svg",
        "index.json",
        "index.html",
    ] {
        assert!(out_dir.join(file).is_file(), "{file} written");
    }
    let text = fs::read_to_string(out_dir.join("walkthroughs/three_quarters.json")).unwrap();
    let fixture = Fixture::parse("walkthroughs/three_quarters.json", &text).unwrap();
    assert_eq!(fixture.steps.len(), 3);
    let reference = TokenBucket::new(fixture.policy, fixture.max_keys).unwrap();
    assert_eq!(fixture.check(&reference), Ok(()));
    // Built again, nothing changes; `check` agrees.
    let again = site::build(&src, &out_dir).unwrap();
    assert!(
        again.changed.is_empty() && again.removed.is_empty(),
        "{again:?}"
    );
    assert_eq!(site::check(&src, &out_dir).unwrap(), vec![]);
}

#[test]
fn bad_walkthrough_files_are_refused_with_the_file_named() {
    let scratch = Scratch::new("bad");
    fs::write(scratch.0.join("x.json"), "{\"id\": \"x\", \"title\": 1}").unwrap();
    let err = source::read_dir(&scratch.0).unwrap_err();
    assert!(
        err.to_string().starts_with("x.json does not parse"),
        "{err}"
    );
    let lesson = fs::read_to_string(lesson_dir().join("key_capacity_error.json")).unwrap();
    fs::write(scratch.0.join("x.json"), &lesson).unwrap();
    let err = source::read_dir(&scratch.0).unwrap_err();
    assert!(
        err.to_string().contains("must equal the file name"),
        "{err}"
    );
    fs::remove_file(scratch.0.join("x.json")).unwrap();
    fs::write(scratch.0.join("key_capacity_error.json"), &lesson).unwrap();
    fs::write(scratch.0.join("order.json"), "[\"nope\"]").unwrap();
    let err = source::read_dir(&scratch.0).unwrap_err();
    assert!(
        err.to_string().starts_with("order.json is invalid"),
        "{err}"
    );
    let err = source::parse("list.json", "[\"a\", \"b\"]").unwrap_err();
    assert!(
        err.to_string().contains("one JSON object, not an array"),
        "{err}"
    );
    let empty = Scratch::new("empty");
    assert!(source::read_dir(&empty.0).is_err());
}

/// Every committed fixture and index, parsed.
fn committed() -> Vec<(String, Value)> {
    let mut all = vec![(
        "index.json".to_owned(),
        serde_json::from_str(&fs::read_to_string(fixtures_dir().join("index.json")).unwrap())
            .unwrap(),
    )];
    for sub in ["walkthroughs", "counterexamples"] {
        let mut names: Vec<String> = fs::read_dir(fixtures_dir().join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort();
        for name in names {
            let text = fs::read_to_string(fixtures_dir().join(sub).join(&name)).unwrap();
            all.push((
                format!("{sub}/{name}"),
                serde_json::from_str(&text).unwrap(),
            ));
        }
    }
    all
}

fn validator() -> (
    boon::Schemas,
    boon::SchemaIndex,
    boon::SchemaIndex,
    boon::SchemaIndex,
) {
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let mut compile = |name: &str| {
        let path = fixtures_dir().join("schema").join(name);
        let value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        // Also under its `$id`, which the other schemas' references use.
        if let Some(id) = value["$id"].as_str() {
            compiler.add_resource(id, value.clone()).unwrap();
        }
        compiler.add_resource(name, value).unwrap();
        compiler
            .compile(name, &mut schemas)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let fixture = compile("walkthrough-fixture.schema.json");
    let index = compile("fixture-index.schema.json");
    let race = compile("counterexample-fixture.schema.json");
    (schemas, fixture, index, race)
}

#[test]
fn every_fixture_validates_against_the_json_schema() {
    let (schemas, fixture, index, race) = validator();
    let all = committed();
    assert!(all.len() > 12);
    assert!(all.iter().any(|(n, _)| n.starts_with("counterexamples/")));
    for (name, value) in &all {
        let schema = if name == "index.json" {
            index
        } else if name.starts_with("counterexamples/") {
            race
        } else {
            fixture
        };
        if let Err(e) = schemas.validate(value, schema) {
            panic!("{name} does not validate: {e:#}");
        }
    }
    // The schema is not vacuous: a number where digits belong, an unknown field, a
    // misspelt tag are each refused.
    let (_, sample) = all
        .iter()
        .find(|(n, _)| n.starts_with("walkthroughs/"))
        .unwrap();
    let mut damaged = sample.clone();
    damaged["steps"][0]["at_nanos"] = Value::from(0);
    assert!(schemas.validate(&damaged, fixture).is_err());
    let mut damaged = sample.clone();
    damaged["steps"][0]["extra"] = Value::from("x");
    assert!(schemas.validate(&damaged, fixture).is_err());
    let mut damaged = sample.clone();
    damaged["steps"][0]["op"]["op"] = Value::from("alow");
    assert!(schemas.validate(&damaged, fixture).is_err());
    let mut damaged = sample.clone();
    damaged["policy"]["capacity"] = Value::from("9223372036854775808");
    assert!(
        schemas.validate(&damaged, fixture).is_err(),
        "above MAX_QUANTITY"
    );
    let (_, sample) = all
        .iter()
        .find(|(n, _)| n.starts_with("counterexamples/"))
        .unwrap();
    let mut damaged = sample.clone();
    damaged["history"][0]["invoked"] = Value::from(0);
    assert!(schemas.validate(&damaged, race).is_err());
    let mut damaged = sample.clone();
    damaged["history"][0]["op"]["op"] = Value::from("alow");
    assert!(schemas.validate(&damaged, race).is_err());
}

/// Every JSON number in `value` with its path.
fn numbers(value: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Number(_) => out.push((path.to_owned(), value.clone())),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                numbers(v, &format!("{path}[{i}]"), out);
            }
        }
        Value::Object(fields) => {
            for (k, v) in fields {
                numbers(v, &format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn javascript_reads_every_value_exactly() {
    const MAX_SAFE: u64 = (1 << 53) - 1;
    let mut largest_text = 0u128;
    for (name, value) in committed() {
        let mut found = Vec::new();
        numbers(&value, "", &mut found);
        for (path, n) in found {
            assert!(
                n.as_u64().is_some_and(|n| n <= MAX_SAFE),
                "{name}{path} = {n} is a JSON number a JavaScript page cannot read exactly"
            );
            assert!(
                path == ".format_version"
                    || path.ends_with(".step")
                    || path.ends_with(".steps")
                    || path == ".execution",
                "{name}{path}: only format_version, step positions and execution numbers are numbers"
            );
        }
        for step in value["steps"].as_array().into_iter().flatten() {
            for units in step["balances"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(_, v)| v)
            {
                let text = units.as_str().expect("balances are digits");
                largest_text = largest_text.max(text.parse().expect("canonical digits"));
            }
        }
    }
    // The extremes fixture carries a balance at MAX_QUANTITY tokens, far past 2^53.
    let at_max =
        u128::from(ratelimit_lab::MAX_QUANTITY) * u128::from(ratelimit_lab::UNITS_PER_TOKEN);
    assert_eq!(
        largest_text, at_max,
        "a fixture holds a full bucket at MAX_QUANTITY"
    );
}

/// The texts of `class` on the picture of walkthrough `id`.
fn texts_of(id: &str, class: &str) -> Vec<String> {
    let sources = source::read_dir(&lesson_dir()).unwrap();
    let s = sources
        .iter()
        .find(|s| s.walkthrough.id == id)
        .unwrap_or_else(|| panic!("no walkthrough {id}"));
    let svg = site::picture::draw(&build::verify(s).unwrap());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .filter_map(|n| n.text().map(str::to_owned))
        .collect()
}

#[test]
fn pictures_print_the_numbers_the_lesson_is_about() {
    // The trace table: half a token kept at 250 ms, a retry of half a second at the burst.
    let trace = "burst_rejection_fractional_refill";
    assert!(texts_of(trace, "balance-label").contains(&"0.5".to_owned()));
    assert!(texts_of(trace, "retry-label").contains(&"retry 500000000 ns".to_owned()));
    // The cutover: one token at 0.5 s, not two or twenty.
    let cutover = texts_of("worked_example_2_policy_cutover", "balance-label");
    assert!(cutover.contains(&"1".to_owned()), "{cutover:?}");
    assert!(!cutover.contains(&"2".to_owned()) && !cutover.contains(&"20".to_owned()));
    // The change exercise: the first pass at 333333334 ns.
    let change = texts_of("change_exercise_first_pass_at_333333334", "retry-label");
    assert!(
        change.contains(&"retry 333333334 ns".to_owned()),
        "{change:?}"
    );
}

#[test]
fn every_picture_parses_and_marks_every_request() {
    let sources = source::read_dir(&lesson_dir()).unwrap();
    for s in &sources {
        let verified = build::verify(s).unwrap();
        let svg = site::picture::draw(&verified);
        let doc = roxmltree::Document::parse(&svg)
            .unwrap_or_else(|e| panic!("{}: the picture does not parse: {e}", s.file));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        for (i, (step, checked)) in s.walkthrough.steps.iter().zip(&verified.steps).enumerate() {
            let number = (i + 1).to_string();
            let marks: Vec<_> = doc
                .descendants()
                .filter(|n| {
                    n.attribute("data-step") == Some(number.as_str())
                        && n.attribute("class")
                            .is_some_and(|c| c.starts_with("request "))
                })
                .collect();
            let is_allow = matches!(step.op, ratelimit_lab_model::Op::Allow { .. });
            assert_eq!(
                marks.len(),
                usize::from(is_allow),
                "{} step {number}",
                s.file
            );
            if let Some(mark) = marks.first() {
                let want = match &checked.outcome {
                    _ if checked.contenders.is_some() => "request contended",
                    ratelimit_lab_model::Outcome::Decision(d) if d.allowed => "request admitted",
                    ratelimit_lab_model::Outcome::Decision(_) => "request rejected",
                    _ => "request refused",
                };
                assert_eq!(
                    mark.attribute("class"),
                    Some(want),
                    "{} step {number}",
                    s.file
                );
            }
            for name in step.beside.keys() {
                assert!(
                    doc.descendants()
                        .any(|n| n.attribute("data-step") == Some(number.as_str())
                            && n.attribute("data-baseline") == Some(name.as_str())),
                    "{} step {number}: no {name} mark",
                    s.file
                );
            }
        }
        // Baselines are labelled apart from the catalogued wrong designs: a heading over
        // their lanes says they are right by their own rule.
        let any_baseline = !s.walkthrough.baselines.names().is_empty();
        assert_eq!(
            doc.descendants()
                .any(|n| n.attribute("class") == Some("baselines")
                    && n.text()
                        .is_some_and(|t| t.contains("each right by its own rule"))),
            any_baseline,
            "{}: the baselines' heading",
            s.file
        );
        // The committed picture is this one.
        let committed = fs::read_to_string(
            fixtures_dir().join(format!("walkthroughs/{}.svg", s.walkthrough.id)),
        )
        .unwrap();
        assert!(
            committed == svg,
            "{}: the committed picture is stale",
            s.file
        );
    }
}

#[test]
fn the_page_shows_every_walkthrough_offline() {
    let page = fs::read_to_string(fixtures_dir().join("index.html")).unwrap();
    for s in source::read_dir(&lesson_dir()).unwrap() {
        assert!(page.contains(&format!("<section id=\"{}\">", s.walkthrough.id)));
    }
    for remote in ["http://", "https://", "src=", "<link", "<script"] {
        let allowed = "http://www.w3.org/2000/svg";
        let stripped = page.replace(allowed, "");
        assert!(!stripped.contains(remote), "the page refers to {remote}");
    }
}

#[test]
fn shipped_fixtures_load_and_replay_on_correct_designs_and_catch_a_wrong_one() {
    let shipped = fixtures::shipped().unwrap_or_else(|e| panic!("{e}"));
    let index: Value =
        serde_json::from_str(&fs::read_to_string(fixtures_dir().join("index.json")).unwrap())
            .unwrap();
    let listed: Vec<&str> = index["walkthroughs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["fixture"].as_str().unwrap())
        .collect();
    let loaded: Vec<&str> = shipped.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(loaded, listed, "the compiled-in list is the index's");
    for f in shipped {
        let reference = TokenBucket::new(f.policy, f.max_keys).unwrap();
        assert_eq!(f.check(&reference), Ok(()), "{}", f.file);
        let sharded = ShardedBucket::new(f.policy, f.max_keys).unwrap();
        assert_eq!(f.check(&sharded), Ok(()), "{}", f.file);
    }
    // A design that forgets fractional credit on a rejection fails the trace table at the
    // step that shows it, in the lesson's words.
    let design = ratelimit_lab_instructor::catalog::DESIGNS
        .iter()
        .find(|d| d.name == "RejectionForgetsCredit")
        .expect("the catalog has the mistake");
    let trace = shipped
        .iter()
        .find(|f| f.id == "burst_rejection_fractional_refill")
        .unwrap();
    let wrong = design.build(trace.policy, trace.max_keys).unwrap();
    let mismatch = trace.check(wrong.as_ref()).unwrap_err();
    assert_eq!(mismatch.step, 4, "{mismatch}");
    let text = mismatch.to_string();
    for needle in [
        "walkthroughs/burst_rejection_fractional_refill.json",
        "step 4",
        "expected: Allowed",
        "returned: Rejected",
        "shows:",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

#[test]
fn every_sequential_seed_mistake_is_shown_beside_the_right_outcome() {
    use ratelimit_lab_instructor::catalog::{self, Role};
    let shown: std::collections::HashSet<ratelimit_lab::Mistake> = fixtures::shipped()
        .unwrap()
        .iter()
        .flat_map(|f| {
            let text = fs::read_to_string(fixtures_dir().join(&f.file)).unwrap();
            let doc: fixtures::WalkthroughFixture = serde_json::from_str(&text).unwrap();
            doc.contrast.into_iter().map(|c| c.design)
        })
        .filter_map(|name| match catalog::find(&name).map(|d| d.role) {
            Some(Role::Wrong { mistake, .. }) => Some(mistake),
            _ => None,
        })
        .collect();
    for mistake in ratelimit_lab::Mistake::ALL {
        if !mistake.is_race() {
            assert!(shown.contains(&mistake), "no fixture shows {mistake:?}");
        }
    }
}

#[test]
fn contrasts_are_verified_like_expectations() {
    let text =
        fs::read_to_string(lesson_dir().join("worked_example_2_policy_cutover.json")).unwrap();
    let base: Value = serde_json::from_str(&text).unwrap();
    let try_with = |edit: &dyn Fn(&mut Value)| {
        let mut doc = base.clone();
        edit(&mut doc);
        source::parse(
            "worked_example_2_policy_cutover.json",
            &serde_json::to_string(&doc).unwrap(),
        )
        .and_then(|s| build::verify(&s).map(|_| ()))
        .map_err(|e| e.to_string())
    };
    assert_eq!(try_with(&|_| {}), Ok(()));
    // A wrong outcome the design does not give.
    let err = try_with(&|d| {
        let step = d["steps"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|s| s.get("contrast").is_some())
            .unwrap();
        step["contrast"]["RetroactiveRate"]["whole_tokens"] = Value::from(7);
    })
    .unwrap_err();
    assert!(
        err.contains("the contrasted design RetroactiveRate answers otherwise"),
        "{err}"
    );
    // A step where it goes wrong, not stated.
    let err = try_with(&|d| {
        for s in d["steps"].as_array_mut().unwrap() {
            if let Some(c) = s.get_mut("contrast").and_then(Value::as_object_mut) {
                c.remove("RetroactiveRate");
            }
        }
    })
    .unwrap_err();
    assert!(err.contains("RetroactiveRate answers otherwise"), "{err}");
    // Not a catalogued wrong design; a correct one; a design that shows nothing here.
    for (design, refusal) in [
        ("Nope", "not a catalogued design"),
        ("RwLockBucket", "sequential mistake"),
        ("EvictEmptyBuckets", "shows no mistake here"),
    ] {
        let err = try_with(&|d| {
            d["contrast"]
                .as_array_mut()
                .unwrap()
                .push(Value::from(design))
        })
        .unwrap_err();
        assert!(err.contains(refusal), "{design}: {err}");
    }
}

#[test]
fn pictures_mark_where_each_contrasted_design_goes_wrong() {
    for s in source::read_dir(&lesson_dir()).unwrap() {
        let verified = build::verify(&s).unwrap();
        let svg = site::picture::draw(&verified);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        for (i, checked) in verified.steps.iter().enumerate() {
            for name in &s.walkthrough.contrast {
                let step = (i + 1).to_string();
                let class = doc
                    .descendants()
                    .find(|n| {
                        n.attribute("data-design") == Some(name.as_str())
                            && n.attribute("data-step") == Some(step.as_str())
                    })
                    .and_then(|n| n.attribute("class"));
                let want = if checked.contrast.contains_key(name) {
                    "contrast wrong"
                } else {
                    "contrast same"
                };
                assert_eq!(class, Some(want), "{} step {step} {name}", s.file);
            }
        }
    }
}

#[test]
fn counterexamples_are_judged_again_and_their_pictures_show_every_call() {
    let races = site::race::read_races(&lesson_dir()).unwrap();
    assert_eq!(races.len(), 5, "one per racy catalogued design");
    for r in &races {
        let fixture = site::race::race_fixture(r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(fixture.verdict, r.counterexample.verdict);
        let svg = site::race_picture::draw(r);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        for (i, e) in r.counterexample.history.iter().enumerate() {
            let event = i.to_string();
            let thread = e.thread.to_string();
            assert!(
                doc.descendants()
                    .any(|n| n.attribute("data-event") == Some(event.as_str())
                        && n.attribute("data-thread") == Some(thread.as_str())),
                "{}: no bar for call #{i}",
                r.file
            );
        }
        // A history edited into one with a legal order is no counterexample.
        let mut tampered = r.clone();
        let sequential = (0..tampered.counterexample.history.len() as u64).collect::<Vec<_>>();
        for (e, t) in tampered.counterexample.history.iter_mut().zip(&sequential) {
            e.invoked = 2 * t;
            e.returned = 2 * t + 1;
        }
        tampered.counterexample.verdict.push_str(" (edited)");
        let err = site::race::race_fixture(&tampered).unwrap_err().to_string();
        assert!(
            err.contains("verdict differs") || err.contains("no counterexample"),
            "{}: {err}",
            r.file
        );
    }
    // A file named after a design without a race is refused.
    let scratch = Scratch::new("race-name");
    fs::create_dir_all(scratch.0.join("counterexamples")).unwrap();
    fs::copy(
        lesson_dir().join("counterexamples/RacyCutover.json"),
        scratch.0.join("counterexamples/RetroactiveRate.json"),
    )
    .unwrap();
    let err = site::race::read_races(&scratch.0).unwrap_err().to_string();
    assert!(err.contains("not a catalogued design with a race"), "{err}");
}

#[test]
fn many_callers_at_once_are_counted_on_real_threads_and_a_wrong_count_is_refused() {
    let file = lesson_dir().join("twenty_contenders_ten_pass.json");
    let text = fs::read_to_string(&file).unwrap();
    let s = source::parse("twenty_contenders_ten_pass.json", &text).unwrap();
    let v = build::verify(&s).unwrap_or_else(|e| panic!("{e}"));
    let counts = v.steps[0]
        .contenders
        .expect("the first step has contenders");
    assert_eq!(
        (counts.threads, counts.allowed, counts.rejected),
        (20, 10, 10)
    );
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["steps"][0]["contenders"]["allowed"] = Value::from(11);
    doc["steps"][0]["contenders"]["rejected"] = Value::from(9);
    let wrong = source::parse("twenty_contenders_ten_pass.json", &doc.to_string()).unwrap();
    let err = build::verify(&wrong).unwrap_err().to_string();
    for needle in [
        "step 1",
        "20 callers at once",
        "expected:  11 allowed",
        "reference: 10 allowed",
    ] {
        assert!(err.contains(needle), "{needle:?} missing from {err}");
    }
    doc["steps"][0]["contenders"]["rejected"] = Value::from(10);
    let err = source::parse("twenty_contenders_ten_pass.json", &doc.to_string()).unwrap_err();
    assert!(
        err.to_string().contains("allowed + rejected == threads"),
        "{err}"
    );
    // The loaded fixture replays the twenty calls one after another on any design.
    let shipped = fixtures::shipped().unwrap();
    let f = shipped
        .iter()
        .find(|f| f.id == "twenty_contenders_ten_pass")
        .unwrap();
    assert_eq!(f.steps[0].repeat(), 20);
    let reference = TokenBucket::new(f.policy, f.max_keys).unwrap();
    assert_eq!(f.check(&reference), Ok(()));
}
