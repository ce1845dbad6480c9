//! End-to-end tests of the `covprune` binary: outputs, exit codes and bad input.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

mod common;

fn covprune() -> Command {
    Command::cargo_bin("covprune").unwrap()
}

#[test]
fn parse_json_has_the_documented_keys() {
    let out = covprune()
        .args(["parse", "--json", "benchmarks/programs/triangle.c"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for key in ["functions", "lowered", "fallbacks", "errors"] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(v["functions"], 1);
    assert_eq!(v["lowered"], 1);
    assert_eq!(v["errors"], 0);
}

#[test]
fn parse_text_reports_functions_and_fallbacks() {
    covprune()
        .args(["parse", "tests/fixtures/frontend/gnu.c"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "functions:   2 (2 lowered, 100.0%)",
        ))
        .stdout(predicate::str::contains("inline_asm"));
}

#[test]
fn cfg_prints_dot_for_a_function() {
    let out = covprune()
        .args([
            "cfg",
            "benchmarks/programs/triangle.c",
            "--function",
            "triangle_type",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let dot = String::from_utf8(out).unwrap();
    insta::assert_snapshot!(dot);
}

#[test]
fn missing_file_is_a_clear_error() {
    covprune()
        .args(["parse", "no/such/file.c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/file.c"))
        .stderr(predicate::str::contains("no such file"));
}

#[test]
fn unreadable_file_is_a_clear_error() {
    // A directory cannot be read as a file, even by root.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dir.c");
    std::fs::create_dir(&path).unwrap();
    covprune()
        .arg("parse")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"))
        .stderr(predicate::str::contains("dir.c"));
}

#[test]
fn preprocessing_failure_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad_include.c");
    std::fs::write(&path, "#include \"does_not_exist.h\"\nint x;\n").unwrap();
    covprune()
        .arg("parse")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot preprocess"))
        .stderr(predicate::str::contains("bad_include.c"))
        .stderr(predicate::str::contains("does_not_exist.h"));
}

#[test]
fn a_file_that_is_not_c_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.c");
    std::fs::write(
        &path,
        "Dear reader, this is prose: it has no C in it at all!\n",
    )
    .unwrap();
    covprune()
        .arg("parse")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not look like C"))
        .stderr(predicate::str::contains("notes.c"));
}

#[test]
fn a_binary_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blob.c");
    std::fs::write(&path, [0x7f, b'E', b'L', b'F', 0, 0, 1, 2]).unwrap();
    covprune()
        .arg("parse")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not look like C"));
}

#[test]
fn unknown_function_is_a_clear_error() {
    covprune()
        .args([
            "cfg",
            "benchmarks/programs/triangle.c",
            "--function",
            "nope",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no lowered function named `nope`"));
}

#[test]
fn preprocessor_flags_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("inc");
    std::fs::create_dir(&inc).unwrap();
    std::fs::write(inc.join("cfg.h"), "#define LIMIT 10\n").unwrap();
    std::fs::write(dir.path().join("pre.h"), "typedef int myint;\n").unwrap();
    let src = dir.path().join("uses.c");
    std::fs::write(
        &src,
        "#include \"cfg.h\"\nmyint f(myint x) { return x > LIMIT ? EXTRA : 0; }\n",
    )
    .unwrap();
    covprune()
        .arg("ir")
        .arg(&src)
        .arg("-I")
        .arg(&inc)
        .arg("-DEXTRA=7")
        .arg("-include")
        .arg(dir.path().join("pre.h"))
        .args(["--std", "gnu89"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tmp.1 := 7"));
}

#[test]
fn compile_commands_supply_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("defs.h"), "#define K 42\n").unwrap();
    std::fs::write(dir.path().join("m.c"), "int f(void) { return K; }\n").unwrap();
    let db = serde_json::json!([{
        "directory": dir.path(),
        "file": "m.c",
        "arguments": ["cc", "-c", "-include", "defs.h", "-o", "m.o", "m.c"]
    }]);
    std::fs::write(dir.path().join("compile_commands.json"), db.to_string()).unwrap();
    covprune()
        .arg("ir")
        .arg(dir.path().join("m.c"))
        .arg("-p")
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("return 42"));
    // A database without an entry for the file is an error that names the file.
    std::fs::write(dir.path().join("other.c"), "int g;\n").unwrap();
    covprune()
        .arg("parse")
        .arg(dir.path().join("other.c"))
        .arg("--compile-commands")
        .arg(dir.path().join("compile_commands.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no entry for"));
}

#[test]
fn callgraph_lists_calls_and_flags() {
    covprune()
        .args(["callgraph", "tests/fixtures/frontend/noreturn.c"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "die [static, never-returns] call sites: 1",
        ))
        .stdout(predicate::str::contains("  -> abort x1"));
}

/// Copies the triangle example into a fresh directory; returns (dir, annotated file).
fn triangle_in_tempdir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("triangle.c");
    std::fs::copy("benchmarks/programs/triangle.c", &path).unwrap();
    (dir, path)
}

/// Replaces the solver times of a ledger or labels file, which vary from run to run.
fn mask_times(text: &str) -> String {
    text.lines()
        .map(|l| {
            if let Some(pos) = l.find("\"time_ms\": ") {
                format!("{}\"time_ms\": <ms>", &l[..pos])
            } else {
                l.to_string()
            }
        })
        .map(|l| {
            let cols: Vec<&str> = l.split(", ").collect();
            if cols.len() >= 8 && cols[1] == "uncoverable" {
                let mut c: Vec<String> = cols.iter().map(|s| s.to_string()).collect();
                c[7] = "<s>".into();
                c.join(", ")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn prune_writes_the_ledger_and_the_labels_file() {
    let (dir, path) = triangle_in_tempdir();
    covprune()
        .arg("prune")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("criterion  labels infeasible"))
        .stdout(predicate::str::contains("MCC             2          2"));
    let ledger = std::fs::read_to_string(dir.path().join("triangle.covprune.json")).unwrap();
    insta::assert_snapshot!("triangle_ledger", mask_times(&ledger));
    let labels = std::fs::read_to_string(dir.path().join("triangle.labels")).unwrap();
    insta::assert_snapshot!("triangle_labels", mask_times(&labels));
}

#[test]
fn prune_json_summary() {
    let (_dir, path) = triangle_in_tempdir();
    let out = covprune()
        .arg("prune")
        .arg(&path)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["labels"], 14);
    assert_eq!(v["infeasible"], 2);
    assert_eq!(v["duplicate_step2"], 1);
    assert_eq!(v["duplicate_step3"], 3);
    assert_eq!(v["subsumed"], 5);
    assert_eq!(v["pruned"], 11);
    assert_eq!(v["unknown"], 3);
    for key in ["seconds_step1", "seconds_step2", "seconds_step3"] {
        assert!(v[key].is_number(), "{key}");
    }
}

#[test]
fn prune_reads_lannotate_output_and_updates_its_labels_file() {
    let dir = tempfile::tempdir().unwrap();
    // LAnnotate's WM output for the project's sample (see tests/annotate.rs).
    let src = Path::new("tests/fixtures/lannotate");
    for name in ["sample_WM.c", "sample_WM.labels"] {
        std::fs::copy(src.join(name), dir.path().join(name)).unwrap();
    }
    covprune()
        .arg("prune")
        .arg(dir.path().join("sample_WM.c"))
        .assert()
        .success();
    let labels = std::fs::read_to_string(dir.path().join("sample_WM.labels")).unwrap();
    let original = std::fs::read_to_string(src.join("sample_WM.labels")).unwrap();
    let rows = |t: &str| t.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(
        rows(&labels),
        rows(&original),
        "every LAnnotate row is kept"
    );
    assert!(
        labels.contains(", uncoverable, WM"),
        "some mutants are proved equivalent"
    );
    assert!(
        labels.contains("LAnnot"),
        "untouched rows keep their emitter"
    );
}

#[test]
fn prune_rejects_a_labels_file_that_does_not_match_and_leaves_files_untouched() {
    let (dir, path) = triangle_in_tempdir();
    let labels = dir.path().join("triangle.labels");
    let text = "# id, status, tag, origin_loc, current_loc, emitter, drivers, exec_time\n\
                1, unknown, DC, triangle.c:9, , LAnnot, , 0.\n";
    std::fs::write(&labels, text).unwrap();
    covprune()
        .arg("prune")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not match"))
        .stderr(predicate::str::contains("l2 of the program"));
    assert_eq!(std::fs::read_to_string(&labels).unwrap(), text);
    assert!(!dir.path().join("triangle.covprune.json").exists());
}

/// A row whose tag was edited by hand no longer describes its label: the rows would shift
/// from one criterion to another.
#[test]
fn prune_rejects_a_labels_file_whose_tags_were_edited() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("clamp.c");
    std::fs::copy("benchmarks/examples/clamp.c", &src).unwrap();
    covprune()
        .args(["annotate", "--criteria", "CC,MCC"])
        .arg(&src)
        .assert()
        .success();
    let labels = dir.path().join("clamp_labels.labels");
    let text = std::fs::read_to_string(&labels).unwrap();
    let edited = text.replacen(", CC,", ", MCC,", 1);
    assert_ne!(edited, text);
    std::fs::write(&labels, &edited).unwrap();
    covprune()
        .arg("prune")
        .arg(dir.path().join("clamp_labels.c"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "l1 is CC in the program but MCC in the labels file",
        ));
    assert_eq!(std::fs::read_to_string(&labels).unwrap(), edited);
    assert!(!dir.path().join("clamp_labels.covprune.json").exists());
}

#[test]
fn prune_rejects_a_malformed_labels_file() {
    let (dir, path) = triangle_in_tempdir();
    let labels = dir.path().join("other.labels");
    std::fs::write(&labels, "1, unknown, DC\n").unwrap();
    covprune()
        .arg("prune")
        .arg(&path)
        .arg("--labels")
        .arg(&labels)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("other.labels:1"))
        .stderr(predicate::str::contains("expected 8"));
    std::fs::write(&labels, "# header\nseven, unknown, DC, a, b, c, d, e\n").unwrap();
    covprune()
        .arg("prune")
        .arg(&path)
        .arg("--labels")
        .arg(&labels)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("other.labels:2"))
        .stderr(predicate::str::contains("not a number"));
    let missing = dir.path().join("missing.labels");
    covprune()
        .arg("prune")
        .arg(&path)
        .arg("--labels")
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.labels"));
}

#[test]
fn prune_of_a_file_without_labels_is_a_clear_error() {
    covprune()
        .args(["prune", "tests/fixtures/frontend/loops.c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no pc_label"));
}

#[test]
fn prune_refuses_to_contradict_a_covered_label() {
    let (dir, path) = triangle_in_tempdir();
    covprune().arg("prune").arg(&path).assert().success();
    let labels = dir.path().join("triangle.labels");
    let text = std::fs::read_to_string(&labels)
        .unwrap()
        .replace("9, uncoverable", "9, covered");
    std::fs::write(&labels, &text).unwrap();
    covprune()
        .arg("prune")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("soundness alarm: l9"));
    assert_eq!(std::fs::read_to_string(&labels).unwrap(), text);
}

#[test]
fn prune_with_step_1_only_leaves_relations_alone() {
    let (_dir, path) = triangle_in_tempdir();
    let out = covprune()
        .arg("prune")
        .arg(&path)
        .args(["--steps", "1", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["infeasible"], 2);
    assert_eq!(v["pruned"], 2);
    covprune()
        .arg("prune")
        .arg(&path)
        .args(["--steps", "4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("there is no step 4"));
}

/// `export-acsl` writes one named ACSL check per label occurrence, on the label's own line,
/// and leaves a file that still compiles as C (annotations are comments).
#[test]
fn export_acsl_names_one_check_per_label_and_keeps_the_c() {
    let dir = tempfile::tempdir().unwrap();
    let annotated = common::annotate_cc_mcc_wm("tests/fixtures/annotate/small.c", dir.path());
    let text = std::fs::read_to_string(&annotated).unwrap();
    let label_statements = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| l.matches("pc_label(").count())
        .sum::<usize>();
    let out = covprune()
        .arg("export-acsl")
        .arg(&annotated)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let obligations = v["obligations"].as_array().unwrap();
    assert!(label_statements > 10);
    assert_eq!(obligations.len(), label_statements);
    let exported_path = std::path::PathBuf::from(v["output"].as_str().unwrap());
    let exported = std::fs::read_to_string(&exported_path).unwrap();
    assert_eq!(exported.lines().count(), text.lines().count());
    let lines: Vec<&str> = exported.lines().collect();
    for o in obligations {
        let line = lines[o["line"].as_u64().unwrap() as usize - 1];
        let name = format!("check {}: !(", o["name"].as_str().unwrap());
        assert!(line.contains(&name), "{line} lacks {name}");
    }
    assert!(!exported.contains("pc_label(") || exported.contains("#define pc_label"));
    let cc = std::process::Command::new("cc")
        .args(["-fsyntax-only", "-w", "-x", "c"])
        .arg(&exported_path)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    // Step 2 asks the predicate itself.
    covprune()
        .arg("export-acsl")
        .arg(&annotated)
        .args(["--step", "2", "-o"])
        .arg(dir.path().join("s2.c"))
        .assert()
        .success()
        .stdout(predicate::str::contains("step 2: check p"));
    let s2 = std::fs::read_to_string(dir.path().join("s2.c")).unwrap();
    assert!(s2.contains(&format!(
        "check {}: (",
        obligations[0]["name"].as_str().unwrap()
    )));
}

#[test]
fn export_acsl_refuses_files_without_labels_and_step_3() {
    covprune()
        .args(["export-acsl", "tests/fixtures/annotate/small.c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no pc_label statements"));
    covprune()
        .args([
            "export-acsl",
            "benchmarks/programs/triangle.c",
            "--step",
            "3",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--step takes 1 or 2"));
    covprune()
        .args(["export-acsl", "no/such/file.c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
}

/// `prune --dump-smt` writes every question as SMT-LIB 2; the `z3` binary, replaying each one,
/// gives the answer covprune got (CI installs `z3`).
#[test]
fn dumped_questions_replay_with_the_same_answers() {
    let (dir, path) = triangle_in_tempdir();
    let dump = dir.path().join("smt");
    covprune()
        .arg("prune")
        .arg(&path)
        .arg("--dump-smt")
        .arg(&dump)
        .args(["--no-progress", "--jobs", "1"])
        .assert()
        .success();
    let mut files: Vec<_> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{} questions dumped", files.len());
    let (mut sat, mut unsat) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let answer = text
            .lines()
            .next()
            .and_then(|l| l.rsplit_once("answer: "))
            .map(|(_, a)| a.to_string())
            .unwrap();
        if answer.starts_with("unknown") {
            continue;
        }
        let out = common::tool("z3")
            .arg(f)
            .output()
            .expect("the z3 binary (apt-get install z3)");
        let replayed = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(replayed, answer, "{}", f.display());
        if answer == "sat" {
            sat += 1;
        } else {
            unsat += 1;
        }
    }
    assert!(sat > 0 && unsat > 0, "sat {sat}, unsat {unsat}");
}

/// The questions about a static callee's labels in its calling contexts go through the same
/// backend: `--dump-smt` writes them too (as `CALLER-contexts.NNNNN.smt2`), and they replay.
#[test]
fn calling_context_questions_are_dumped_too() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("ctx.c");
    std::fs::write(
        &src,
        "static int g(int x) { if (x > 5) return 1; return 0; }\nint f(int a) { return g(3) + g(a); }\n",
    )
    .unwrap();
    covprune()
        .args(["annotate", "--criteria", "CC"])
        .arg(&src)
        .assert()
        .success();
    let dump = dir.path().join("smt");
    covprune()
        .arg("prune")
        .arg(dir.path().join("ctx_labels.c"))
        .arg("--dump-smt")
        .arg(&dump)
        .args(["--no-progress", "--jobs", "1"])
        .assert()
        .success();
    let contexts: Vec<_> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("f-contexts."))
        .collect();
    assert!(!contexts.is_empty(), "no calling-context question dumped");
    for f in &contexts {
        let text = std::fs::read_to_string(f).unwrap();
        let answer = text
            .lines()
            .next()
            .and_then(|l| l.rsplit_once("answer: "))
            .unwrap()
            .1;
        if answer.starts_with("unknown") {
            continue;
        }
        let out = common::tool("z3").arg(f).output().expect("the z3 binary");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            answer,
            "{}",
            f.display()
        );
    }
}

/// `-v` names, per function, the objects with a memory of their own and those in the shared
/// memory; the write through a pointer does not reach the former, so both labels are proved.
#[test]
fn verbose_prune_lists_the_memory_regions() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("regions.c");
    std::fs::copy("tests/fixtures/engine/regions.c", &src).unwrap();
    let out = covprune()
        .args(["prune", "--steps", "1", "--in-process", "-v", "--json"])
        .arg(&src)
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("f: memories of their own: count, f.buf; shared memory: shared, where"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["infeasible"], 2, "{v}");
}

/// `-v` names the regions of address-taken locals: two locals one pointer may reach share
/// one, a local given to unknown code or stored in a global stays in the shared memory; the
/// labels that hold only because no parameter or library call reaches a local are proved.
#[test]
fn verbose_prune_lists_the_pointer_regions() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("pointsto.c");
    std::fs::copy("tests/fixtures/engine/pointsto.c", &src).unwrap();
    let out = covprune()
        .args(["prune", "--steps", "1", "--in-process", "-v", "--json"])
        .arg(&src)
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [
        "one_of_two: memories of their own: [one_of_two.a one_of_two.b]; shared memory: none",
        "escapes: memories of their own: none; shared memory: escapes.x, escapes.y, stash",
        "writes_elsewhere: memories of their own: [writes_elsewhere.buf], [writes_elsewhere.kept]; shared memory: none",
    ] {
        assert!(stderr.contains(line), "{line}\n{stderr}");
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["infeasible"], 4, "{v}");
}

/// A Latin-1 file (1990s C often is one) is exported byte for byte, as the other commands read
/// it.
#[test]
fn export_acsl_keeps_a_latin1_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latin1.c");
    let mut bytes =
        b"/* r\xe9sum\xe9 */\nint f(int x)\n{\n    pc_label(x > 0, 1, \"CC\");\n    return x;\n}\n"
            .to_vec();
    bytes.splice(
        0..0,
        b"#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\n"
            .iter()
            .copied(),
    );
    std::fs::write(&file, &bytes).unwrap();
    covprune().arg("export-acsl").arg(&file).assert().success();
    let out = std::fs::read(dir.path().join("latin1.acsl.c")).unwrap();
    assert!(
        out.windows(8).any(|w| w == b"r\xe9sum\xe9 *"),
        "the Latin-1 bytes are kept"
    );
    assert!(String::from_utf8_lossy(&out).contains("check covprune_l1: !("));
}

/// A label's status and reason in a ledger.
fn status_and_reason(
    ledger: &serde_json::Value,
    id: u64,
) -> (serde_json::Value, serde_json::Value) {
    let l = ledger["labels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id)
        .unwrap();
    (l["status"].clone(), l["reason"].clone())
}

/// `prune --steps 1 --jobs 1 --json --function-budget-s 1 SRC` with `env` set; it must succeed.
fn prune_step1_with_a_1s_budget(src: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = covprune();
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args([
        "prune",
        "--steps",
        "1",
        "--jobs",
        "1",
        "--no-progress",
        "--json",
    ])
    .args(["--function-budget-s", "1"])
    .arg(src)
    .assert()
    .success()
    .get_output()
    .clone()
}

/// The budget bounds the encoding too: a function whose encoding outlasts it (the encoder
/// slowed down by a debug-only hook, 20 ms per block) is given up unasked, its labels unknown
/// for the budget, and the other functions are proved as usual.
#[cfg(debug_assertions)]
#[test]
fn an_encoding_that_outlasts_the_budget_is_given_up_without_a_claim() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("slow.c");
    let mut text = String::from("int f(int a)\n{\n    int x = 0;\n");
    for i in 0..80 {
        text.push_str(&format!(
            "    if (a > {i}) x += {i}; else x -= 1;\n    pc_label(a > {i} && a < {i}, {}, \"CC\");\n",
            i + 1
        ));
    }
    text.push_str("    return x;\n}\nint small(int v)\n{\n    pc_label(v > 1 && v < 1, 81, \"CC\");\n    return v;\n}\n");
    std::fs::write(&src, text).unwrap();
    let out = prune_step1_with_a_1s_budget(&src, &[("COVPRUNE_TEST_ENCODE_BLOCK_MS", "20")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("slow.c: f: over its budget of 1 s; 80 labels left unknown"),
        "{stderr}"
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["over_budget"][0]["function"], "f", "{summary}");
    assert_eq!(summary["over_budget"][0]["labels"], 80, "{summary}");
    // Every label of f is infeasible, and none is claimed: f was not asked. small's is proved.
    assert_eq!(summary["infeasible"], 1, "{summary}");
    let ledger: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("slow.covprune.json")).unwrap(),
    )
    .unwrap();
    let labels = ledger["labels"].as_array().unwrap();
    assert_eq!(labels.len(), 81);
    for l in labels {
        if l["id"] == 81 {
            assert_eq!(l["status"], "infeasible", "{l}");
        } else {
            assert_eq!(l["status"], "unknown", "{l}");
            assert_eq!(l["reason"], "function budget exhausted", "{l}");
        }
    }
}

/// Cheap questions first: when the first question with the function's memory spends the whole
/// budget (a debug-only hook), every label has still been asked its cheap question, so a
/// label that the question with memory reads unconstrained proves is proved, even after a
/// label that needed the costly one; the labels left for the costly question end on the
/// budget.
#[cfg(debug_assertions)]
#[test]
fn a_spent_budget_still_leaves_every_label_its_cheap_question() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("cheap.c");
    std::fs::write(
        &src,
        "unsigned char f(unsigned char *p, unsigned i, unsigned j)\n{\n    p[i] = 1;\n    \
         pc_label(p[j] == 3, 1, \"CC\");\n    pc_label(p[j] == 4, 2, \"CC\");\n    \
         pc_label(p[j] > 5 && p[j] < 3, 3, \"CC\");\n    return p[j];\n}\n",
    )
    .unwrap();
    let out = prune_step1_with_a_1s_budget(
        &src,
        &[("COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_BUDGET", "1")],
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["infeasible"], 1, "{summary}");
    let ledger: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("cheap.covprune.json")).unwrap(),
    )
    .unwrap();
    let status = |id: u64| status_and_reason(&ledger, id);
    // Label 1 got the costly question (a model), which spent the budget; label 2 was left to
    // the budget; label 3 was proved by its cheap question, asked before either.
    assert_eq!(status(1).0, "unknown");
    assert_eq!(
        status(2),
        ("unknown".into(), "function budget exhausted".into())
    );
    assert_eq!(status(3).0, "infeasible");
}

/// A function whose budget runs out is named on stderr, and its labels left are unknown with
/// the budget as their reason; the run still ends with a ledger. (A generated function of
/// 2,400 labels over a global array; one second of budget cannot ask them all.)
#[test]
fn a_function_over_its_budget_is_named_and_its_labels_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.c");
    let mut text =
        String::from("int g[64];\nint f(int a, int b, int *p)\n{\n    int x = 0, y = 1;\n");
    for i in 0..1200 {
        text.push_str(&format!(
            "    pc_label(x + g[{}] > {i}, {}, \"CC\");\n    pc_label(y != p[{}], {}, \"CC\");\n    if (a > {i}) x += p[{}]; else y ^= b + g[(x + {i}) & 63];\n",
            i % 64,
            2 * i + 1,
            i % 7,
            2 * i + 2,
            i % 13
        ));
    }
    text.push_str("    return x + y;\n}\nint small(int v)\n{\n    pc_label(v > 1, 2401, \"CC\");\n    return v;\n}\n");
    std::fs::write(&src, text).unwrap();
    let out = prune_step1_with_a_1s_budget(&src, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("big.c: f: over its budget of 1 s;"),
        "{stderr}"
    );
    assert!(!stderr.contains("small: over its budget"), "{stderr}");
    let ledger = std::fs::read_to_string(dir.path().join("big.covprune.json")).unwrap();
    assert!(
        ledger.contains("function budget exhausted"),
        "no label says why"
    );
    // The JSON summary lists it too, with the labels it left unknown, and only it.
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let over = summary["over_budget"]
        .as_array()
        .expect("over_budget listed");
    assert_eq!(over.len(), 1, "{over:?}");
    assert_eq!(over[0]["function"], "f");
    let unknown_for_budget = ledger.matches("function budget exhausted").count();
    assert!(over[0]["labels"].as_u64().unwrap() > 0);
    assert!(over[0]["labels"].as_u64().unwrap() as usize <= unknown_for_budget);
}

/// A run-level implication is asked only once some run covers its premise: when no copy of a
/// function called twice is decided (a debug-only hook spends the copies' budget), the
/// premise's own run-level question proves it infeasible, and the label it would have
/// subsumed vacuously stays (tests/fixtures/engine/run_level_vacuous.c). Before this rule,
/// label 2 was pruned as subsumed by label 1, which no run covers.
#[cfg(debug_assertions)]
#[test]
fn a_run_level_implication_is_never_vacuous() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("vacuous.c");
    std::fs::copy("tests/fixtures/engine/run_level_vacuous.c", &src).unwrap();
    let statuses = |env: &[(&str, &str)]| {
        let mut cmd = covprune();
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(["prune", "--jobs", "1", "--no-progress", "--json"])
            .arg(&src)
            .assert()
            .success();
        let ledger: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("vacuous.covprune.json")).unwrap(),
        )
        .unwrap();
        ledger["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["id"].as_u64().unwrap(), l["status"].clone()))
            .collect::<std::collections::BTreeMap<u64, serde_json::Value>>()
    };
    // With the copies decided, each proves label 1 false; without them, the run-level
    // question does.
    for env in [vec![], vec![("COVPRUNE_TEST_COPIES_UNDECIDED", "1")]] {
        let status = statuses(&env);
        assert_eq!(status[&1], "infeasible", "{env:?}");
        assert_eq!(status[&2], "unknown", "{env:?}");
    }
}

/// Questions with memory get a sixteenth of the function's budget until one of them proves
/// something. A debug-only hook makes each such question spend that whole share: after a
/// model (label 1), a label only memory can decide (label 2) is left unknown with the share as
/// its reason; after a proof (label 3 in `g`), the cap is lifted and label 4 is still proved.
/// Labels the cheap question proves (5) are proved either way.
#[cfg(debug_assertions)]
#[test]
fn memory_questions_keep_to_their_share_until_one_proves() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("share.c");
    std::fs::write(
        &src,
        "unsigned char f(unsigned char *p, unsigned i, unsigned j)\n{\n    p[i] = 1;\n    \
         pc_label(p[j] == 3, 1, \"CC\");\n    pc_label(p[j] == 4 && i == j, 2, \"CC\");\n    \
         pc_label(i > 5 && i < 3, 5, \"CC\");\n    return p[j];\n}\n\
         unsigned char g(unsigned char *p, unsigned i, unsigned j)\n{\n    p[i] = 1;\n    \
         pc_label(p[j] == 4 && i == j, 3, \"CC\");\n    pc_label(p[j] == 5 && i == j, 4, \"CC\");\n    \
         return p[j];\n}\n",
    )
    .unwrap();
    let ledger_of = |env: &[(&str, &str)]| -> serde_json::Value {
        prune_step1_with_a_1s_budget(&src, env);
        serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("share.covprune.json")).unwrap(),
        )
        .unwrap()
    };
    let spent = ledger_of(&[("COVPRUNE_TEST_MEMORY_QUESTION_SPENDS_SHARE", "1")]);
    assert_eq!(status_and_reason(&spent, 1).0, "unknown");
    assert_eq!(
        status_and_reason(&spent, 2),
        (
            "unknown".into(),
            "memory questions' share of the function budget spent".into()
        )
    );
    assert_eq!(status_and_reason(&spent, 3).0, "infeasible");
    assert_eq!(status_and_reason(&spent, 4).0, "infeasible");
    assert_eq!(status_and_reason(&spent, 5).0, "infeasible");
    // Without the hook, every label only memory decides is asked.
    std::fs::remove_file(dir.path().join("share.covprune.json")).unwrap();
    let whole = ledger_of(&[]);
    assert_eq!(status_and_reason(&whole, 2).0, "infeasible");
}
