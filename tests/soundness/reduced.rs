//! Programs reduced from false claims found on programs generated outside the project, each a
//! function `f` of three `char` parameters in `tests/fixtures/soundness/`: every claim the
//! engine makes on them (steps 1-3), with their own labels and with the annotator's CC, MCC,
//! GACC and WM labels, is checked over all 16,777,216 inputs, run one after another in one
//! process (so that globals carry over from run to run, as in a real suite).

use std::path::Path;

use covprune::prune::reference::{self, Claim};
use covprune::prune::LabelVerdict;
use covprune_encoders::{Criterion, Limits};

use super::*;

/// The driver: the fixture with a `pc_label` that records the labels a run covers, then every
/// claim checked after every run. `CLAIMS` is a list of `{kind, label, partner}`: kind 0 a
/// label infeasible, 1 a duplicate of its partner, 2 subsumed by its partner.
const CLAIM_DRIVER: &str = r#"#include <stdio.h>
#include <string.h>
static unsigned char hit[MAXL];
#define pc_label(c, id, tag) do { if (c) hit[id] = 1; } while (0)
#define pc_label_bindings(...) do {} while (0)
#include FIXTURE
static const int claims[][3] = { CLAIMS };
#define N (int)(sizeof claims / sizeof claims[0])
int main(void) {
    static long refuted[N], first[N];
    for (long i = 0; i < 256L * 256 * 256; i++) {
        memset(hit, 0, sizeof hit);
        f(i >> 16, (i >> 8) & 255, i & 255);
        for (int k = 0; k < N; k++) {
            int l = hit[claims[k][1]], p = hit[claims[k][2]];
            int bad = claims[k][0] == 0 ? l : claims[k][0] == 1 ? l != p : p && !l;
            if (bad && refuted[k]++ == 0) first[k] = i;
        }
    }
    for (int k = 0; k < N; k++)
        if (refuted[k])
            printf("%d %d %d %ld f(%ld, %ld, %ld)\n", claims[k][0], claims[k][1], claims[k][2],
                   refuted[k], first[k] >> 16, (first[k] >> 8) & 255, first[k] & 255);
    return 0;
}
"#;

/// The claims of `verdicts` that some run refutes, one line each (kind, label, partner,
/// number of runs, the first one), and the number of claims checked.
fn refuted_claims(dir: &Path, fixture: &Path, verdicts: &[LabelVerdict]) -> (Vec<String>, usize) {
    let claims: Vec<(u8, u64, u64)> = reference::claims(verdicts)
        .into_iter()
        .map(|(_, l, c)| match c {
            Claim::Infeasible => (0, l, l),
            Claim::DuplicateOf(m) => (1, l, m),
            Claim::SubsumedBy(m) => (2, l, m),
        })
        .collect();
    if claims.is_empty() {
        return (Vec::new(), 0);
    }
    let max = verdicts.iter().map(|v| v.id).max().unwrap_or(0);
    let list: Vec<String> = claims
        .iter()
        .map(|(k, l, p)| format!("{{{k}, {l}, {p}}}"))
        .collect();
    let source = dir.join("claims.c");
    std::fs::write(&source, CLAIM_DRIVER.replace("CLAIMS", &list.join(", "))).unwrap();
    let exe = dir.join("claims");
    let status = Command::new("cc")
        .args(["-O2", "-w"])
        .arg(format!("-DMAXL={}", max + 1))
        .arg(format!("-DFIXTURE=\"{}\"", fixture.display()))
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .status()
        .expect("cc runs");
    assert!(
        status.success(),
        "the claim driver of {}",
        fixture.display()
    );
    let out = Command::new(&exe).output().expect("it runs");
    assert!(
        out.status.success(),
        "the claim driver of {}",
        fixture.display()
    );
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (lines, claims.len())
}

fn prune_file(path: &Path) -> Vec<LabelVerdict> {
    let program = frontend::load(path, &PreprocessOptions::default())
        .unwrap()
        .program;
    assert!(program.skipped.is_empty(), "{:?}", program.skipped);
    run(&program, &harness_config(), &|_| {}).0
}

/// Checks a reduced program's claims, with its own labels and with the annotator's.
fn check_reduced(name: &str) {
    let fixture = std::fs::canonicalize(Path::new("tests/fixtures/soundness").join(name)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let own = prune_file(&fixture);
    let (refuted, checked) = refuted_claims(dir.path(), &fixture, &own);
    assert!(
        refuted.is_empty(),
        "{name}, own labels: {}",
        refuted.join("\n")
    );
    // The same program without its labels, annotated.
    let text = std::fs::read_to_string(&fixture).unwrap();
    let plain: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("pc_label("))
        .map(|l| format!("{l}\n"))
        .collect();
    let plain_path = dir.path().join(name);
    std::fs::write(&plain_path, &plain).unwrap();
    let typing = frontend::load(&plain_path, &PreprocessOptions::default()).unwrap();
    let criteria = [
        Criterion::Cc,
        Criterion::Mcc,
        Criterion::Gacc,
        Criterion::Wm,
    ];
    let annotated = covprune::annotate::annotate(
        plain.as_bytes(),
        Some(&typing.program),
        &criteria,
        &Limits::default(),
    );
    let annotated_path = dir.path().join(format!("annotated_{name}"));
    std::fs::write(&annotated_path, &annotated.text).unwrap();
    let verdicts = prune_file(&annotated_path);
    let (refuted_annotated, checked_annotated) =
        refuted_claims(dir.path(), &annotated_path, &verdicts);
    let _ = writeln!(
        std::io::stderr(),
        "{name}: {checked} claims on its own labels, {checked_annotated} on {} annotated labels; none refuted by 16,777,216 runs",
        verdicts.len()
    );
    assert!(
        refuted_annotated.is_empty(),
        "{name}, annotated CC, MCC, GACC, WM: {}",
        refuted_annotated.join("\n")
    );
}

/// A callee that writes through its pointer parameter on most paths, called with a local's
/// address and then with a global's: nothing before the first call is a duplicate of what
/// follows it.
#[test]
fn a_callee_writing_through_its_parameter_is_no_duplicate_maker() {
    check_reduced("write_through_calls.c");
}
