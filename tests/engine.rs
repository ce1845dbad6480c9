//! Engine tests: C fixtures whose labels carry their expected step-1 verdict in a comment
//! (`/* expect: infeasible */` or `/* expect: unknown */`), plus ledger and labels-file outputs.

use std::collections::BTreeMap;
use std::path::Path;

use covprune::frontend::{self, PreprocessOptions};
use covprune::prune::{step1, PruneConfig, Status};

/// Expected verdict per label id, read from the `expect:` comments of the fixture.
fn expectations(path: &Path) -> BTreeMap<u64, &'static str> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(pos) = line.find("pc_label(") else {
            continue;
        };
        let Some(exp) = line.find("expect: ") else {
            continue;
        };
        let rest = &line[pos..];
        // The id is the last integer argument before the tag string.
        let id: u64 = rest
            .rsplit_once(", \"")
            .and_then(|(head, _)| head.rsplit_once(", "))
            .and_then(|(_, id)| id.trim().parse().ok())
            .unwrap_or_else(|| panic!("cannot read the label id in: {line}"));
        let verdict = if line[exp..].starts_with("expect: infeasible") {
            "infeasible"
        } else {
            "unknown"
        };
        out.insert(id, verdict);
    }
    out
}

fn check_fixture(path: &Path) {
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let verdicts = step1(&loaded.program, &PruneConfig::default());
    let expected = expectations(path);
    let got: BTreeMap<u64, &'static str> = verdicts
        .iter()
        .map(|v| {
            (
                v.id,
                match v.status {
                    Status::Infeasible => "infeasible",
                    Status::Unknown(_) => "unknown",
                },
            )
        })
        .collect();
    let mut wrong = Vec::new();
    for (id, want) in &expected {
        let have = got.get(id).copied().unwrap_or("missing");
        if have != *want {
            wrong.push(format!("label {id}: expected {want}, got {have}"));
        }
    }
    assert_eq!(
        got.len(),
        expected.len(),
        "every label has a verdict and an expectation"
    );
    assert!(
        wrong.is_empty(),
        "{}:\n{}",
        path.display(),
        wrong.join("\n")
    );
}

#[test]
fn fixture_labels_get_their_expected_verdicts() {
    check_fixture(Path::new("tests/fixtures/engine/statements.c"));
}

#[test]
fn the_papers_figure_1_has_exactly_l9_and_l10_infeasible() {
    let loaded = frontend::load(
        Path::new("benchmarks/programs/triangle.c"),
        &PreprocessOptions::default(),
    )
    .unwrap();
    let verdicts = step1(&loaded.program, &PruneConfig::default());
    let infeasible: Vec<u64> = verdicts
        .iter()
        .filter(|v| v.status == Status::Infeasible)
        .map(|v| v.id)
        .collect();
    assert_eq!(infeasible, vec![9, 10]);
    assert_eq!(verdicts.len(), 14);
}

#[test]
fn results_do_not_depend_on_the_number_of_workers() {
    let path = Path::new("tests/fixtures/engine/statements.c");
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let one = step1(
        &loaded.program,
        &PruneConfig {
            jobs: 1,
            ..PruneConfig::default()
        },
    );
    let two = step1(
        &loaded.program,
        &PruneConfig {
            jobs: 2,
            ..PruneConfig::default()
        },
    );
    let statuses = |v: &[covprune::prune::LabelVerdict]| -> Vec<(u64, Status)> {
        v.iter().map(|x| (x.id, x.status.clone())).collect()
    };
    assert_eq!(statuses(&one), statuses(&two));
}
