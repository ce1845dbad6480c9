//! `witness` end to end: on a fixture whose labels have known answers, every feasible label
//! nothing proved is shown feasible by a test that, compiled on its own with a recording
//! `pc_label`, covers it; the infeasible one is not (not even when the program prints its
//! id); a second run adds nothing; a directory
//! holding the user's files is refused with nothing written; and a ledger whose claim a run
//! contradicts raises the soundness alarm and is left as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{covprune, json_and_code, run_ok};

const FIXTURE: &str = "tests/fixtures/witness/units.c";
/// The labels of the fixture that some input covers; label 7 is infeasible, label 9 (subsumed)
/// is shown feasible by label 2's test, label 12 by a call from the palette of values, label
/// 13 by a call whose second allocation fails, label 14 by an outlier table.
const FEASIBLE: &[u64] = &[1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14];

/// Prunes `file` with one worker.
fn prune(file: &Path) {
    covprune()
        .arg("prune")
        .arg(file)
        .args(["--jobs", "1", "--no-progress"])
        .assert()
        .success();
}

/// The fixture copied into `dir` and pruned; the annotated file.
fn pruned(dir: &Path) -> PathBuf {
    let file = dir.join("units.c");
    std::fs::copy(FIXTURE, &file).unwrap();
    prune(&file);
    file
}

fn witness(file: &Path, out: &Path) -> (serde_json::Value, i32) {
    let o = covprune()
        .arg("witness")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(["--jobs", "2", "--json"])
        .output()
        .unwrap();
    json_and_code(&o)
}

fn ledger(file: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(file.with_extension("covprune.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Each label's status and witness, by id.
fn statuses(file: &Path) -> BTreeMap<u64, (String, Option<String>)> {
    ledger(file)["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["id"].as_u64().unwrap(),
                (
                    l["status"].as_str().unwrap().to_string(),
                    l["witness"].as_str().map(str::to_string),
                ),
            )
        })
        .collect()
}

/// Compiles test `tc` on its own with a `pc_label` that prints each covered label on the
/// standard output after `covered ` (through GCC's built-in `printf`: no header, which a
/// preprocessed file would declare again), runs it, and returns the labels it printed.
fn covered_by(tc: &Path, dir: &Path) -> Vec<u64> {
    let header = dir.join("record.h");
    std::fs::write(
        &header,
        "#define pc_label(c, id, ...) ((c) ? (void)__builtin_printf(\"covered %d\\n\", (int)(id)) : (void)0)\n",
    )
    .unwrap();
    let exe = dir.join(format!("{}.run", tc.file_name().unwrap().to_string_lossy()));
    let st = Command::new("cc")
        .args(["-w", "-include"])
        .arg(&header)
        .arg(tc)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .status()
        .unwrap();
    assert!(st.success(), "{} does not compile", tc.display());
    let out = Command::new(&exe).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("covered "))
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[test]
fn feasible_labels_get_tests_that_cover_them_and_the_infeasible_one_none() {
    let tmp = tempfile::tempdir().unwrap();
    let file = pruned(tmp.path());
    let before = statuses(&file);
    assert_eq!(before[&7].0, "infeasible");
    for id in FEASIBLE {
        let status = if *id == 9 { "subsumed" } else { "unknown" };
        assert_eq!(before[id].0, status, "label {id}");
    }
    let out = tmp.path().join("tests");
    let (report, code) = witness(&file, &out);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["shown_feasible"], FEASIBLE.len() as u64, "{report}");

    let after = statuses(&file);
    assert_eq!(after[&7], ("infeasible".to_string(), None));
    for id in FEASIBLE {
        let tc = after[id].1.clone().unwrap_or_else(|| panic!("label {id}"));
        // The test the ledger names covers the label when run on its own.
        let covered = covered_by(&out.join(&tc), tmp.path());
        assert!(covered.contains(id), "{tc} covers {covered:?}, not {id}");
        assert!(!covered.contains(&7), "{tc} covers the infeasible label");
    }
    // Label 12's test is a call from the palette (`decade(100)`), and says so.
    let tc = std::fs::read_to_string(out.join(after[&12].1.as_deref().unwrap())).unwrap();
    assert!(tc.contains("palette of values"), "{tc}");
    assert!(tc.contains("double a0 = 1e2;"), "{tc}");
    assert!(report["varied"].as_u64().unwrap() > 0, "{report}");
    // Label 14's test is an outlier table: counts of 0 to 3 and one extreme (a `long`'s
    // greatest value, or that less one, whose sum with small counts is the same double).
    let tc = std::fs::read_to_string(out.join(after[&14].1.as_deref().unwrap())).unwrap();
    assert!(tc.contains("outlier tables"), "{tc}");
    assert!(report["outliers"].as_u64().unwrap() > 0, "{report}");
    // Label 13's test fails `copy`'s second allocation, in the test itself (checked above:
    // compiled without covprune's runner, it covers the label).
    let tc = std::fs::read_to_string(out.join(after[&13].1.as_deref().unwrap())).unwrap();
    assert!(tc.contains("allocation 1 (from 0) returning null"), "{tc}");
    assert!(tc.contains("covprune_fail_at = 1;"), "{tc}");

    // The labels file records them as LTest does: covered, with the driver's number.
    let labels = std::fs::read_to_string(file.with_extension("labels")).unwrap();
    let row = labels.lines().find(|l| l.starts_with("3,")).unwrap();
    let n = after[&3].1.as_deref().unwrap();
    let n = n.trim_start_matches("TC_").trim_end_matches(".c");
    let cols: Vec<&str> = row.split(',').map(str::trim).collect();
    assert_eq!((cols[1], cols[6]), ("covered", n), "{row}");

    // `audit` reports them.
    let o = covprune()
        .arg("audit")
        .arg(&file)
        .arg("--json")
        .output()
        .unwrap();
    let (audit, code) = json_and_code(&o);
    assert_eq!(code, 0, "{audit}");
    assert_eq!(audit["shown_feasible"], FEASIBLE.len() as u64, "{audit}");
    assert_eq!(audit["witness_tests"], report["tests"], "{audit}");

    // Again: the grey zone is empty (label 9 is covered by label 2's test), nothing is
    // rewritten.
    let tests_before: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    let (again, code) = witness(&file, &out);
    assert_eq!(code, 0);
    assert_eq!(
        (again["grey_zone"].as_u64(), again["tests"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), tests_before.len());
    assert_eq!(statuses(&file), after);
}

#[test]
fn a_directory_with_the_users_files_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let file = pruned(tmp.path());
    let out = tmp.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let ledger_before = std::fs::read(file.with_extension("covprune.json")).unwrap();
    let (report, code) = witness(&file, &out);
    assert_eq!(code, 2, "{report}");
    assert!(report["error"].as_str().unwrap().contains("notes.txt"));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    assert_eq!(
        std::fs::read(file.with_extension("covprune.json")).unwrap(),
        ledger_before
    );
    // Without a ledger there is nothing to ask.
    let bare = tmp.path().join("bare.c");
    std::fs::copy(FIXTURE, &bare).unwrap();
    let (report, code) = witness(&bare, &tmp.path().join("t2"));
    assert_eq!(code, 2, "{report}");
    assert!(report["error"].as_str().unwrap().contains("prune"));
}

#[test]
fn a_run_that_covers_a_label_claimed_infeasible_raises_the_alarm() {
    let tmp = tempfile::tempdir().unwrap();
    let file = pruned(tmp.path());
    // A wrong claim: label 9 (true whenever `configured` runs) made infeasible in the ledger.
    // It is not asked (it is not unknown), but the call for label 2 covers it.
    let path = file.with_extension("covprune.json");
    let mut l = ledger(&file);
    for label in l["labels"].as_array_mut().unwrap() {
        if label["id"] == 9 {
            let obj = label.as_object_mut().unwrap();
            obj.insert("status".into(), "infeasible".into());
            obj.remove("by");
            obj.insert("step".into(), 1.into());
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&l).unwrap()).unwrap();
    let before = std::fs::read(&path).unwrap();
    let labels_before = std::fs::read(file.with_extension("labels")).unwrap();
    let (report, code) = witness(&file, &tmp.path().join("tests"));
    assert_eq!(code, 3, "{report}");
    assert!(
        report["error"].as_str().unwrap().contains("l9 "),
        "{report}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(
        std::fs::read(file.with_extension("labels")).unwrap(),
        labels_before
    );
}

/// A preprocessed file (`cc -E`: the C library's declarations are its text) gets its
/// witnesses as a file with `#include`s does: the runner's own code is compiled apart from it,
/// and a test with a failing allocation declares the allocators instead of including
/// `<stdlib.h>`; that test compiles on its own and covers the label only it can, for a call of
/// the allocator, for a call through a table holding its address, and for a call through a
/// table the argument points to (which the test sets to the program's allocator); and a test
/// with two pointers into one buffer covers the label of their equality.
#[test]
fn a_preprocessed_file_gets_tests_that_compile_on_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("keep.c");
    std::fs::write(
        &source,
        "#include <stdlib.h>\n#include <string.h>\n\
         int keep(int n)\n{\n  char *p = malloc(n > 0 ? (size_t)n : 1);\n  if (p == 0)\n    return -1;\n\
         \x20 memset(p, 0, n > 0 ? (size_t)n : 1);\n  free(p);\n  return n > 3 ? 1 : 0;\n}\n\
         static struct { void *(*allocate)(size_t); } hooks = { malloc };\n\
         int hooked(int n)\n{\n  char *q = hooks.allocate(n > 0 ? (size_t)n : 1);\n  if (q == 0)\n    return -1;\n\
         \x20 free(q);\n  return 1;\n}\n\
         typedef struct { void *(*allocate)(size_t); void (*release)(void *); } table;\n\
         struct buf { size_t n; table t; };\n\
         void (*release_fn)(void *) = free;\n\
         int through(struct buf *b)\n{\n  char *r = b->t.allocate(b->n > 0 ? b->n : 1);\n  if (r == 0)\n    return -1;\n\
         \x20 b->t.release(r);\n  return 2;\n}\n\
         int span(const char *begin, const char *end)\n{\n  if (begin == 0 || end == 0)\n    return -1;\n\
         \x20 if (begin == end)\n    return 0;\n  return 1;\n}\n",
    )
    .unwrap();
    let pre = tmp.path().join("keep.i");
    run_ok(
        Command::new("cc")
            .arg("-E")
            .arg(&source)
            .arg("-o")
            .arg(&pre),
    );
    let ann = tmp.path().join("ann");
    covprune()
        .arg("annotate")
        .arg(&pre)
        .args(["--criteria", "CC", "-o"])
        .arg(&ann)
        .assert()
        .success();
    let file = ann.join("keep_labels.c");
    assert!(!std::fs::read_to_string(&file).unwrap().contains("#include"));
    prune(&file);
    let out = tmp.path().join("tests");
    let (report, code) = witness(&file, &out);
    assert_eq!(code, 0, "{report}");
    assert!(
        report["failing_allocation"].as_u64().unwrap() > 0,
        "{report}"
    );
    // The labels of `p == 0` and `q == 0` taken: covered only when the allocation fails,
    // called directly or through a table holding the allocator's address.
    let text = std::fs::read_to_string(&file).unwrap();
    let after = statuses(&file);
    for taken in [
        "p == 0,",
        "q == 0,",
        "r == 0,",
        "!(r == 0)",
        "begin == end,",
    ] {
        let id: u64 = text
            .split("pc_label(")
            .find(|l| l.starts_with(taken))
            .and_then(|l| l.split(',').nth(1))
            .map(|id| id.trim().parse().unwrap())
            .unwrap_or_else(|| panic!("no label of `{taken}` in {text}"));
        let tc = after[&id]
            .1
            .clone()
            .unwrap_or_else(|| panic!("label {id}: {after:?}"));
        let body = std::fs::read_to_string(out.join(&tc)).unwrap();
        // `begin == end` (neither null) only when the test points both into one buffer.
        // `through` calls through the table its argument points to: its tests set the table
        // to the program's allocator and deallocator (null, the call would crash); `r == 0`
        // may come from a size no allocation can have, too.
        if taken.starts_with("begin") {
            assert!(
                body.contains("two of its pointers into one buffer"),
                "{body}"
            );
        } else if taken.contains('r') {
            assert!(body.contains("function-pointer fields set"), "{body}");
        } else {
            assert!(body.contains("returning null"), "{body}");
        }
        assert!(!body.contains("#include <stdlib.h>"), "{body}");
        assert!(covered_by(&out.join(&tc), tmp.path()).contains(&id));
    }
}

/// A call that crashes the program (ASan: a read past a table) is a finding, reported first
/// with its function, label and the sanitizer's first line (UBSan: an index out of bounds),
/// in text and JSON; the test that
/// reproduces it is `CRASH_n.c`, apart from the `TC_n.c` a suite can take.
#[test]
fn a_call_that_crashes_the_program_is_a_finding_and_its_test_is_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crashes.c");
    std::fs::copy("tests/fixtures/witness/crashes.c", &file).unwrap();
    prune(&file);
    let out = dir.path().join("tests");
    let (v, code) = witness(&file, &out);
    assert_eq!(code, 0, "{v:#}");
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v:#}");
    assert_eq!(findings[0]["function"], "lookup");
    assert_eq!(findings[0]["label"], 1);
    let what = findings[0]["what"].as_str().unwrap();
    assert!(what.contains("out of bounds for type 'int [4]'"), "{what}");
    let test = findings[0]["test"].as_str().unwrap();
    assert!(test.starts_with("CRASH_"), "{test}");
    let text = std::fs::read_to_string(out.join(test)).unwrap();
    assert!(text.contains("Its run crashed: "), "{text}");
    assert_eq!(v["crash_tests"], 1, "{v:#}");
    // Label 2 is covered by a run that ends: its test is a plain one.
    let s = statuses(&file);
    assert_eq!(s[&1].1.as_deref(), Some(test));
    assert!(
        s[&2].1.as_deref().is_some_and(|t| t.starts_with("TC_")),
        "{s:?}"
    );
    // The text output puts the finding first.
    let again = tempfile::tempdir().unwrap();
    let file = again.path().join("crashes.c");
    std::fs::copy("tests/fixtures/witness/crashes.c", &file).unwrap();
    prune(&file);
    let sarif = again.path().join("findings.sarif");
    let o = covprune()
        .arg("witness")
        .arg(&file)
        .arg("--out")
        .arg(again.path().join("tests"))
        .args(["--jobs", "1"])
        .arg("--sarif")
        .arg(&sarif)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.starts_with("crashes.c: 1 finding:"), "{said}");
    // SARIF too: one error result, the crash's function, label and sanitizer line.
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{log:#}");
    assert_eq!(results[0]["ruleId"], "covprune/crash");
    assert_eq!(results[0]["level"], "error");
    let message = results[0]["message"]["text"].as_str().unwrap();
    assert!(
        message.contains("lookup") && message.contains("l1") && message.contains("out of bounds"),
        "{message}"
    );
}

/// The suite's coverage and the `witness` tests' are kept apart: after `measure` of the shipped
/// example's tests and a `witness` run that covers more, `audit` reports the suite's coverage
/// as `measure` printed it, and the coverage with the witnesses in a table of its own.
#[test]
fn audit_keeps_the_suites_coverage_apart_from_the_witnesses() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("clamp.c");
    std::fs::copy("benchmarks/examples/clamp.c", &src).unwrap();
    covprune()
        .args(["annotate", "--criteria", "CC,MCC"])
        .arg(&src)
        .assert()
        .success();
    let file = dir.path().join("clamp_labels.c");
    prune(&file);
    let measured = covprune()
        .arg("measure")
        .arg(&file)
        .args(["--tests", "benchmarks/examples/clamp.tests", "--json"])
        .output()
        .unwrap();
    let (m, code) = json_and_code(&measured);
    assert_eq!(code, 0, "{m:#}");
    let (w, code) = witness(&file, &dir.path().join("tests"));
    assert_eq!(code, 0, "{w:#}");
    assert!(w["shown_feasible"].as_u64() > Some(0), "{w:#}");
    let audited = covprune()
        .arg("audit")
        .arg(&file)
        .arg("--json")
        .output()
        .unwrap();
    let (a, code) = json_and_code(&audited);
    assert_eq!(code, 0, "{a:#}");
    let covered = |rows: &serde_json::Value| -> Vec<u64> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| r["covered"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(covered(&a["coverage"]), covered(&m["coverage"]), "{a:#}");
    let with = covered(&a["coverage_with_witnesses"]);
    let suite = covered(&m["coverage"]);
    assert!(with.iter().zip(&suite).all(|(w, s)| w >= s), "{a:#}");
    assert!(
        with.iter().sum::<u64>() > suite.iter().sum::<u64>(),
        "{a:#}"
    );
}

/// A label behind a pointer field of the struct an argument points to (`n->next->v`): the
/// call points that field at a buffer of its own holding what the model read through it,
/// so the label is shown feasible, by a test that covers it compiled on its own.
#[test]
fn a_linked_field_gets_a_buffer_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("list.c");
    std::fs::write(
        &src,
        "struct node { int v; struct node *next; };\n\
         int second(struct node *n)\n\
         {\n\
         \x20   if (n->next != 0 && n->next->v == 4242)\n\
         \x20       return 1;\n\
         \x20   return 0;\n\
         }\n",
    )
    .unwrap();
    let file = common::annotate(src.to_str().unwrap(), "CC", dir.path());
    prune(&file);
    let (report, code) = witness(&file, &dir.path().join("tests"));
    assert_eq!(code, 0, "{report}");
    // `n->next->v == 4242` true: the only label no null `next` can cover.
    let labels = std::fs::read_to_string(file.with_extension("labels")).unwrap();
    let id: u64 = labels
        .lines()
        .find(|l| l.contains("CC") && l.contains("list.c:4") && !l.starts_with('#'))
        .map(|l| l.split(',').next().unwrap().trim().parse().unwrap())
        .unwrap();
    let s = statuses(&file);
    let shown: Vec<u64> = s
        .iter()
        .filter(|(_, (_, w))| w.is_some())
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(
        report["grey_zone"], report["shown_feasible"],
        "{report}: {shown:?}"
    );
    assert!(shown.contains(&id) || shown.len() == s.len(), "{shown:?}");
    let linked = std::fs::read_dir(dir.path().join("tests"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .any(|t| t.contains("__builtin_memcpy((unsigned char *)a0 + 8, &a0_0"));
    assert!(linked, "a test sets the link");
}
