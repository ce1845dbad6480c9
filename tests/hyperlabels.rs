//! Hyperlabels through `prune`, `measure` and `audit`: tritype's CACC and RACC hyperlabels
//! covered by its shipped tests, computed here by hand from the program's decisions and
//! compared with what `measure` writes into the `.hyperlabels` file; hyperlabels proved
//! uncoverable by an infeasible label or by a guard no bound values satisfy; data-flow pairs;
//! LTest's sequences measured and proved; LAnnotate's own hyperlabels read and pruned.

use std::path::Path;

mod common;
use common::covprune;

/// One decision of tritype.c as the tests reach it: whether it is reached, its atoms' values,
/// and its shape (`||` or `&&` of the atoms).
struct Decision {
    reached: bool,
    atoms: Vec<bool>,
    or: bool,
}

impl Decision {
    fn value(&self, atoms: &[bool]) -> bool {
        if self.or {
            atoms.iter().any(|a| *a)
        } else {
            atoms.iter().all(|a| *a)
        }
    }

    /// Atom `i` decides the decision: flipping it flips the value.
    fn determines(&self, i: usize) -> bool {
        let mut t = self.atoms.clone();
        t[i] = true;
        let mut f = self.atoms.clone();
        f[i] = false;
        self.value(&t) != self.value(&f)
    }
}

/// tritype.c's decisions, in text order, on the arguments `a b c` (argc is 4 in every test).
fn decisions(a: i32, b: i32, c: i32) -> Vec<Decision> {
    let d = |reached, atoms: &[bool], or| Decision {
        reached,
        atoms: atoms.to_vec(),
        or,
    };
    let invalid = a <= 0 || b <= 0 || c <= 0;
    let go = !invalid;
    let m = i32::from(a == b) + 2 * i32::from(a == c) + 3 * i32::from(b == c);
    let after7 = go && m != 0 && m <= 3;
    let d8 = m == 1 && a + b > c;
    let d9 = m == 2 && a + c > b;
    vec![
        d(true, &[a <= 0, b <= 0, c <= 0], true),
        d(go, &[a == b], true),
        d(go, &[a == c], true),
        d(go, &[b == c], true),
        d(go, &[m == 0], true),
        // An atom with arithmetic is read only where the program evaluates it (labels must
        // not overflow where the program does not): false after its short-circuit.
        d(
            go && m == 0,
            &[
                a + b <= c,
                a + b > c && b + c <= a,
                a + b > c && b + c > a && a + c <= b,
            ],
            true,
        ),
        d(go && m != 0, &[m > 3], true),
        d(after7, &[m == 1, m == 1 && a + b > c], false),
        d(after7 && !d8, &[m == 2, m == 2 && a + c > b], false),
        d(after7 && !d8 && !d9, &[m == 3, m == 3 && b + c > a], false),
        d(true, &[false], true), // main: argc != 4
    ]
}

/// By hand: atom `i` of decision `k` is covered by CACC when two runs reach the decision with
/// the atom deciding it, true in one and false in the other, and the decision's values differ;
/// by RACC when the other atoms take the same values in both.
fn by_hand(tests: &[(i32, i32, i32)]) -> (Vec<bool>, Vec<bool>) {
    let runs: Vec<Vec<Decision>> = tests.iter().map(|&(a, b, c)| decisions(a, b, c)).collect();
    let (mut cacc, mut racc) = (Vec::new(), Vec::new());
    for k in 0..runs[0].len() {
        let n = runs[0][k].atoms.len();
        let mut decision_cacc = Vec::new();
        let mut decision_racc = Vec::new();
        for i in 0..n {
            let side = |value: bool| -> Vec<&Decision> {
                runs.iter()
                    .map(|r| &r[k])
                    .filter(|d| d.reached && d.atoms[i] == value && d.determines(i))
                    .collect()
            };
            let (ts, fs) = (side(true), side(false));
            let pairs = || ts.iter().flat_map(|t| fs.iter().map(move |f| (*t, *f)));
            decision_cacc.push(pairs().any(|(t, f)| t.value(&t.atoms) != f.value(&f.atoms)));
            decision_racc.push(
                pairs().any(|(t, f)| (0..n).filter(|j| *j != i).all(|j| t.atoms[j] == f.atoms[j])),
            );
        }
        cacc.extend(decision_cacc);
        racc.extend(decision_racc);
    }
    (cacc, racc)
}

/// `measure --json` of an annotated file on a tests file, which must succeed.
fn measured(file: &Path, tests: &Path) -> serde_json::Value {
    let out = covprune()
        .arg("measure")
        .arg(file)
        .arg("--tests")
        .arg(tests)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// `prune` of an annotated file, which must succeed.
fn pruned(file: &Path) -> assert_cmd::assert::Assert {
    covprune()
        .args(["prune", "--no-progress"])
        .arg(file)
        .assert()
        .success()
}

/// The ledger `prune` wrote beside an annotated file.
fn ledger_of(file: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(file.with_extension("covprune.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The status word of each entry of a `.hyperlabels` file.
fn statuses(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(" - ").nth(1).unwrap_or("").to_string())
        .collect()
}

#[test]
fn tritype_cacc_and_racc_hyperlabels_are_covered_as_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let file = common::annotate("benchmarks/programs/tritype.c", "CACC,RACC", dir);
    let v = measured(&file, Path::new("benchmarks/programs/tritype.tests"));
    let tests: Vec<(i32, i32, i32)> = std::fs::read_to_string("benchmarks/programs/tritype.tests")
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let n: Vec<i32> = l.split_whitespace().map(|w| w.parse().unwrap()).collect();
            (n[0], n[1], n[2])
        })
        .collect();
    let (cacc, racc) = by_hand(&tests);
    // The file lists, decision by decision, the CACC hyperlabels of its atoms, then the RACC.
    let mut expected = Vec::new();
    let mut at = 0;
    for d in decisions(1, 1, 1) {
        let n = d.atoms.len();
        expected.extend(cacc[at..at + n].iter().copied());
        expected.extend(racc[at..at + n].iter().copied());
        at += n;
    }
    let written = statuses(&dir.join("tritype_labels.hyperlabels"));
    let written: Vec<bool> = written.iter().map(|s| s == "COVERED").collect();
    assert_eq!(written, expected);
    let rows = v["hyperlabels"].as_array().unwrap();
    let covered = |crit: &str| {
        rows.iter().find(|r| r["criterion"] == crit).unwrap()["covered"]
            .as_u64()
            .unwrap() as usize
    };
    assert_eq!(covered("CACC"), cacc.iter().filter(|c| **c).count());
    assert_eq!(covered("RACC"), racc.iter().filter(|c| **c).count());
    // Some atoms are covered by these tests, some are not.
    assert!(cacc.iter().any(|c| !c) && cacc.iter().any(|c| *c));
}

#[test]
fn hyperlabels_with_an_infeasible_label_in_every_disjunct_are_uncoverable() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("f.c"),
        "int f(int x) {\n  int y = x % 4;\n  if (y > 5 || x > 2)\n    return 1;\n  return 0;\n}\n\
         int main(int argc, char **argv) { (void)argv; return f(argc); }\n",
    )
    .unwrap();
    let file = common::annotate(&dir.join("f.c").to_string_lossy(), "CACC", dir);
    pruned(&file).stdout(predicates::str::contains(
        "CACC hyperlabels: 2, pruned 1 (uncoverable 1, duplicate 0, subsumed 0)",
    ));
    // prune marks it in the file already.
    assert_eq!(
        statuses(&dir.join("f_labels.hyperlabels")),
        ["UNCOVERABLE", "UNKNOWN"]
    );
    std::fs::write(dir.join("f.tests"), "a\na b c\n").unwrap();
    let v = measured(&file, &dir.join("f.tests"));
    let row = &v["hyperlabels"][0];
    // `y > 5` is never true (y = x % 4): its CACC hyperlabel is uncoverable; `x > 2`'s is
    // covered by the two runs (x = 2 and x = 4).
    assert_eq!(row["hyperlabels"], 2, "{v:#}");
    assert_eq!(row["uncoverable"], 1, "{v:#}");
    assert_eq!(row["covered"], 1, "{v:#}");
    assert_eq!(row["cleaned_percent"], 100.0);
    assert_eq!(
        statuses(&dir.join("f_labels.hyperlabels")),
        ["UNCOVERABLE", "COVERED"]
    );
    // audit counts them as the other criteria.
    let out = covprune()
        .arg("audit")
        .arg(&file)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let a: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        a["hyperlabels"],
        serde_json::json!([{"criterion": "CACC", "hyperlabels": 2, "covered": 1, "uncoverable": 1,
            "duplicate": 0, "subsumed": 0, "kept_covered": 1, "unmeasured": 0}])
    );
}

/// RACC asks for two runs in which an atom decides, with the other atoms equal. In
/// `a && (b || c)` after `b = a`-like code, `a` decides with `b` true only when `a` is true
/// and with `b` false only when `a` is false: each label of `a`'s hyperlabel is feasible, but
/// no pair of runs agrees on `b`. `prune` proves it from the values each label can bind, and
/// every input of the small domain confirms it.
#[test]
fn a_guard_no_bound_values_satisfy_makes_a_hyperlabel_uncoverable() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("g.c"),
        "#include <stdlib.h>\n\
         int f(int a, int b, int c) {\n  if (a)\n    b = 1;\n  else\n    b = 0;\n\
         \x20 if (a && (b || c))\n    return 1;\n  return 0;\n}\n\
         int main(int argc, char **argv) {\n  if (argc < 4) return 2;\n\
         \x20 return f(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]));\n}\n",
    )
    .unwrap();
    let file = common::annotate(&dir.join("g.c").to_string_lossy(), "RACC", dir);
    pruned(&file);
    let ledger = ledger_of(&file);
    let rows = ledger["hyperlabels"].as_array().unwrap();
    // The hyperlabels: `a` of `if (a)`, `a`, `b`, `c` of the second decision, `main`'s test.
    assert_eq!(rows.len(), 5, "{ledger:#}");
    let a = &rows[1];
    assert_eq!(a["status"], "uncoverable", "{ledger:#}");
    assert!(
        a["why"]
            .as_str()
            .unwrap()
            .contains("can bind satisfy its guard"),
        "{a}"
    );
    // Every input of {0, 1, 2}^3: the claims hold (no alarm) and `a`'s hyperlabel stays
    // uncovered while the first decision's is covered.
    let mut tests = String::new();
    for a in 0..3 {
        for b in 0..3 {
            for c in 0..3 {
                tests.push_str(&format!("{a} {b} {c}\n"));
            }
        }
    }
    std::fs::write(dir.join("g.tests"), tests).unwrap();
    let v = measured(&file, &dir.join("g.tests"));
    assert_eq!(v["alarms"], serde_json::json!([]), "{v:#}");
    assert_eq!(
        statuses(&dir.join("g_labels.hyperlabels"))[..2],
        ["COVERED", "UNCOVERABLE"]
    );
}

/// Where each ghost flag of the data-flow criteria is set: the original line of its
/// definition (a parameter's: its function's `{`), read from the annotated file.
fn ghost_lines(annotated: &str, original: &str) -> std::collections::BTreeMap<String, usize> {
    // The annotated file is the original with a header before it and text inserted on lines.
    let offset = annotated.lines().count() - original.lines().count();
    let mut out = std::collections::BTreeMap::new();
    for (i, line) in annotated.lines().enumerate().skip(offset) {
        let line_no = i + 1 - offset;
        for part in line.split([';', ',']) {
            let part = part.trim().trim_start_matches('{').trim();
            let part = part.strip_prefix("int ").unwrap_or(part);
            let part = part
                .strip_prefix("__attribute__((unused)) ")
                .unwrap_or(part);
            if let Some((name, value)) = part.split_once(" = ") {
                if name.starts_with("__cp_d") && value.trim() != "0" {
                    out.insert(name.to_string(), line_no);
                }
            }
        }
    }
    out
}

/// The data-flow criteria on a fixture whose def-use pairs are known: the pairs covprune does
/// not prove infeasible are exactly those, and the suite covers them as expected.
#[test]
fn all_uses_keeps_exactly_the_def_use_pairs_and_all_defs_covers_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let file = common::annotate("tests/fixtures/dataflow/du.c", "ADC,AUC", dir);
    pruned(&file);
    let ghosts = ghost_lines(
        &std::fs::read_to_string(&file).unwrap(),
        &std::fs::read_to_string("tests/fixtures/dataflow/du.c").unwrap(),
    );
    let ledger = ledger_of(&file);
    let labels = std::fs::read_to_string(dir.join("du_labels.labels")).unwrap();
    let use_line: std::collections::BTreeMap<u64, usize> = labels
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            let line = cols[3].rsplit_once(':').unwrap().1.parse().unwrap();
            (cols[0].parse().unwrap(), line)
        })
        .collect();
    let mut kept: Vec<(usize, usize)> = ledger["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["tag"] == "AUC" && l["status"] != "infeasible")
        .map(|l| {
            let id = l["id"].as_u64().unwrap();
            let flag = l["predicate"]
                .as_str()
                .unwrap()
                .split(" == ")
                .next()
                .unwrap();
            (ghosts[flag], use_line[&id])
        })
        .collect();
    kept.sort();
    let expected = [
        (8, 11),
        (8, 12),
        (8, 13),
        (9, 13),
        (9, 18),
        (12, 13),
        (12, 18),
        (13, 14),
        (13, 15),
        (13, 18),
        (15, 18),
        (16, 18),
        (21, 22),
        (21, 24),
    ];
    assert_eq!(kept, expected);
    // The suite: x's initial value reaches the return only when a <= 0 and y <= 10, which no
    // test does; every definition reaches some use.
    std::fs::write(dir.join("du.tests"), "5 7\n-1 20\n3 3\n").unwrap();
    let v = measured(&file, &dir.join("du.tests"));
    let row = |c: &str| {
        v["hyperlabels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["criterion"] == c)
            .unwrap()
            .clone()
    };
    let auc = row("AUC");
    assert_eq!(auc["hyperlabels"], 17, "{v:#}");
    assert_eq!(auc["uncoverable"], 3);
    assert_eq!(auc["covered"], 13);
    let adc = row("ADC");
    assert_eq!(adc["hyperlabels"], 9);
    assert_eq!(adc["covered"], 9);
}

/// LTest's sequences, proved and measured: a chain is covered by a run that reaches its
/// positions in order with no redefinition of its variable between. By hand, for `f(c)`: chain
/// 1 (first definition to the use under `c > 0`) needs 1 <= c <= 5; chain 2 (first definition to
/// the last use) c <= 5; chain 3 (the redefinition under `c > 5` to the last use) c > 5; chain 4
/// (first definition to a use after the redefinition) none, which `prune` proves.
#[test]
fn sequences_are_covered_by_runs_that_reach_their_positions_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let file = dir.join("seq_labels.c");
    std::fs::copy("tests/fixtures/hyper/seq_labels.c", &file).unwrap();
    std::fs::write(
        dir.join("seq_labels.hyperlabels"),
        "1) <s1|; ;>,\n2) <s2|; ;>,\n3) <s3|; ;>,\n4) <s2.s3|; ;>,\n5) <s4|; ;>,\n6) <s1+s4|; ;>,\n",
    )
    .unwrap();
    let hyper = dir.join("seq_labels.hyperlabels");
    pruned(&file);
    let ledger = ledger_of(&file);
    let claimed: Vec<(u64, &str)> = ledger["hyperlabels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["id"].as_u64().unwrap(), h["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        claimed,
        [
            (1, "unknown"),
            (2, "unknown"),
            (3, "unknown"),
            (4, "unknown"),
            (5, "uncoverable"),
            (6, "unknown")
        ]
    );
    assert_eq!(ledger["hyperlabels"][4]["why"], "s4 is infeasible");
    // Every input from -2 to 9: the claim holds, and the runs cover what the comment says.
    let all: String = (-2..10).map(|c| format!("{c}\n")).collect();
    std::fs::write(dir.join("all.tests"), all).unwrap();
    let v = measured(&file, &dir.join("all.tests"));
    assert_eq!(v["alarms"], serde_json::json!([]), "{v:#}");
    assert_eq!(
        statuses(&hyper),
        [
            "COVERED",
            "COVERED",
            "COVERED",
            "COVERED",
            "UNCOVERABLE",
            "COVERED"
        ]
    );
    // c = 0 and c = 7: chains 2 and 3, each from one run; their conjunction from both.
    std::fs::write(dir.join("a.tests"), "0\n7\n").unwrap();
    let v = measured(&file, &dir.join("a.tests"));
    assert_eq!(
        statuses(&hyper)[..4],
        ["UNKNOWN", "COVERED", "COVERED", "COVERED"],
        "{v:#}"
    );
    assert!(std::fs::read_to_string(&hyper)
        .unwrap()
        .contains("4) <s2.s3|; ;> - COVERED - [ 1 2 ],"));
    let row = &v["hyperlabels"][0];
    assert_eq!(
        (&row["criterion"], &row["hyperlabels"], &row["covered"]),
        (
            &serde_json::json!("sequences"),
            &serde_json::json!(6),
            &serde_json::json!(3)
        )
    );
    // c = 9 alone: chain 1 starts, is broken by the redefinition, and its use is reached
    // anyway: not covered. c = 3 covers it.
    std::fs::write(dir.join("b.tests"), "9\n").unwrap();
    measured(&file, &dir.join("b.tests"));
    assert_eq!(statuses(&hyper)[..3], ["UNKNOWN", "UNKNOWN", "COVERED"]);
    std::fs::write(dir.join("c.tests"), "3\n").unwrap();
    measured(&file, &dir.join("c.tests"));
    assert_eq!(statuses(&hyper)[..3], ["COVERED", "COVERED", "UNKNOWN"]);
}

/// LAnnotate's own CACC output (the program, its labels and its hyperlabels, as LTest writes
/// them) goes through `prune`: every hyperlabel read, decided and given a status.
#[test]
fn lannotates_cacc_hyperlabels_are_read_and_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for ext in ["c", "labels", "hyperlabels"] {
        std::fs::copy(
            format!("tests/fixtures/lannotate/sample_CACC.{ext}"),
            dir.join(format!("sample_CACC.{ext}")),
        )
        .unwrap();
    }
    let file = dir.join("sample_CACC.c");
    pruned(&file).stdout(predicates::str::contains("CACC hyperlabels: 15,"));
    let ledger = ledger_of(&file);
    assert_eq!(ledger["hyperlabels"].as_array().unwrap().len(), 15);
    let written = statuses(&dir.join("sample_CACC.hyperlabels"));
    assert_eq!(written.len(), 15);
    assert!(written.iter().all(|s| s == "UNKNOWN" || s == "UNCOVERABLE"));
}
