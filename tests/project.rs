//! `covprune project` and `covprune cache` end to end: a two-file project with a compilation
//! database whose flags are needed (an include directory and a define), pruned into a tree
//! that keeps the sources' layout, with ledgers equal to per-file runs; a re-run proves
//! nothing again, a one-line edit re-proves only the functions that reach it and gives the
//! ledgers of a cold run; bad input fails clearly without losing the other files' results.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{copy_tree, covprune};

/// The fixture project copied into `dir`, with its `compile_commands.json`.
fn project_in(dir: &Path) -> PathBuf {
    let src = dir.join("proj");
    copy_tree(Path::new("tests/fixtures/project"), &src);
    write_database(&src, &["src/main.c", "src/util/sign.c"]);
    src
}

/// The fixture's database: the flags its files need (an include directory and a define).
fn write_database(src: &Path, files: &[&str]) {
    common::write_database(src, files, &|f| {
        format!("cc -c -Iinclude -DPROJECT_FLAGS=1 -O2 {f} -o x.o")
    });
}

/// Runs `project` with `--json`; returns the report.
fn project(src: &Path, out: &Path, cache: &Path) -> Value {
    let o = covprune()
        .arg("project")
        .arg("-p")
        .arg(src)
        .args(["--criteria", "CC", "--jobs", "1", "--json", "-o"])
        .arg(out)
        .arg("--cache")
        .arg(cache)
        .assert()
        .success();
    serde_json::from_slice(&o.get_output().stdout).unwrap()
}

/// (file, ledger text) of every file of a report.
fn ledgers(report: &Value) -> Vec<(String, String)> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                std::fs::read_to_string(f["ledger"].as_str().unwrap()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_project_is_pruned_per_file_and_a_rerun_proves_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    let (out, cache) = (dir.path().join("out"), dir.path().join("cache"));
    let cold = project(&src, &out, &cache);
    let files: Vec<&str> = cold["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/main.c", "src/util/sign.c"], "sorted, relative");
    // The tree is kept.
    assert!(out.join("src/util/sign_labels.c").exists());
    assert!(out.join("src/main_labels.covprune.json").exists());
    // The infeasible label `x < 5` under `x > 10` is found; totals add the files up.
    let total = &cold["total"];
    assert!(total["infeasible"].as_u64().unwrap() >= 1);
    let labels: u64 = cold["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["summary"]["labels"].as_u64().unwrap())
        .sum();
    assert_eq!(total["labels"].as_u64().unwrap(), labels);
    assert_eq!(cold["cache"]["reused"], 0);
    assert_eq!(cold["cache"]["proved"], 4, "clamp, scale, other, sign");

    // Per-file runs with the same flags on the command line give the same ledgers.
    let per = dir.path().join("per");
    for (file, ledger) in ledgers(&cold) {
        let source = src.join(&file);
        covprune()
            .arg("annotate")
            .arg(&source)
            .args(["--criteria", "CC", "-o"])
            .arg(&per)
            .arg(format!("-I{}", src.join("include").display()))
            .args(["-D", "PROJECT_FLAGS=1"])
            .assert()
            .success();
        let stem = source.file_stem().unwrap().to_string_lossy().into_owned();
        covprune()
            .arg("prune")
            .arg(per.join(format!("{stem}_labels.c")))
            .args(["--no-progress", "--jobs", "1"])
            .assert()
            .success();
        let own =
            std::fs::read_to_string(per.join(format!("{stem}_labels.covprune.json"))).unwrap();
        assert_eq!(own, ledger, "{file}: project and per-file ledgers differ");
    }

    // A re-run proves nothing again and writes the same ledgers.
    let again = project(&src, &dir.path().join("again"), &cache);
    assert_eq!(again["cache"]["reused"], 4);
    assert_eq!(again["cache"]["proved"], 0);
    assert_eq!(ledgers(&again), ledgers(&cold));

    // A one-line edit in `clamp` re-proves clamp and its caller scale only; the ledgers are
    // those of a cold run of the edited project.
    let main = src.join("src/main.c");
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(
        &main,
        text.replacen(
            "        return 0;\n    return v;",
            "        return 1;\n    return v;",
            1,
        ),
    )
    .unwrap();
    let warm = project(&src, &dir.path().join("warm"), &cache);
    assert_eq!(warm["cache"]["proved"], 2, "clamp and scale");
    assert_eq!(warm["cache"]["reused"], 2, "other and sign");
    let fresh = project(
        &src,
        &dir.path().join("fresh"),
        &dir.path().join("fresh-cache"),
    );
    assert_eq!(fresh["cache"]["reused"], 0);
    assert_eq!(ledgers(&warm), ledgers(&fresh));

    // The cache's own commands.
    let o = covprune()
        .args(["cache", "stats", "--json", "--cache"])
        .arg(&cache)
        .assert()
        .success();
    let stats: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!(
        stats["entries"], 6,
        "four results, then two more after the edit"
    );
    assert_eq!(stats["hits"], 6);
    covprune()
        .args(["cache", "clear", "--cache"])
        .arg(&cache)
        .assert()
        .success()
        .stdout(predicates::str::contains("removed 6 results"));
    let o = covprune()
        .args(["cache", "stats", "--json", "--cache"])
        .arg(&cache)
        .assert()
        .success();
    let stats: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!(stats["entries"], 0);
}

#[test]
fn a_file_that_fails_is_reported_and_the_others_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    std::fs::write(src.join("src/broken.c"), "#include <no/such/header.h>\n").unwrap();
    write_database(&src, &["src/main.c", "src/broken.c", "src/util/sign.c"]);
    let out = dir.path().join("out");
    let o = covprune()
        .arg("project")
        .arg("-p")
        .arg(&src)
        .args(["--criteria", "CC", "--jobs", "1", "--no-cache", "-o"])
        .arg(&out)
        .assert()
        .code(2);
    let text = String::from_utf8_lossy(&o.get_output().stdout).into_owned();
    assert!(text.contains("failed: src/broken.c"), "{text}");
    assert!(out.join("src/main_labels.covprune.json").exists());
    assert!(out.join("src/util/sign_labels.covprune.json").exists());
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    let out = dir.path().join("out");
    let run = |args: &[&str], db: &Path| {
        covprune()
            .arg("project")
            .arg("-p")
            .arg(db)
            .args(["--no-cache", "-o"])
            .arg(&out)
            .args(args)
            .assert()
            .code(2)
    };
    run(&["--criteria", "CC"], &dir.path().join("nowhere"))
        .stderr(predicates::str::contains("no such file"));
    run(&["--criteria", "XYZ"], &src).stderr(predicates::str::contains("unknown criterion"));
    run(&["--criteria", "CC", "--files", "*.cpp"], &src)
        .stderr(predicates::str::contains("no C file"));
    std::fs::write(src.join("compile_commands.json"), "{ not json").unwrap();
    run(&["--criteria", "CC"], &src).stderr(predicates::str::contains("not a JSON array"));
    assert!(!out.exists(), "nothing written");
    // A cache file that is not a cache.
    let bad = dir.path().join("badcache");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("verdicts.sqlite"),
        "text, not a database\n".repeat(100),
    )
    .unwrap();
    covprune()
        .args(["cache", "stats", "--cache"])
        .arg(&bad)
        .assert()
        .code(2);
}

/// `project measure` with the fixture's test program (`test/app.c`, outside the database,
/// like zlib's `example.c`): `(covered labels of main.c, of sign.c)` and the report.
fn measure_project(out: &Path, command: &str, code: i32) -> Value {
    let o = covprune()
        .args(["project", "measure", "--json", "-o"])
        .arg(out)
        .args(["--test-cmd", command])
        .assert()
        .code(code);
    serde_json::from_slice(&o.get_output().stdout).unwrap()
}

const APP: &str = "cc -Iinclude -DPROJECT_FLAGS=1 -o app test/app.c src/main.c src/util/sign.c \
                   && ./app 3 1 && ./app 20 -5 && ./app -4 0";

/// The ids a labels file marks covered.
fn covered_in(labels: &Path) -> Vec<u64> {
    std::fs::read_to_string(labels)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split(", ").collect();
            (cols.get(1) == Some(&"covered")).then(|| cols[0].parse().unwrap())
        })
        .collect()
}

#[test]
fn project_measure_rebuilds_with_the_annotated_files_and_checks_every_claim() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    let out = dir.path().join("out");
    project(&src, &out, &dir.path().join("cache"));
    let report = measure_project(&out, APP, 0);
    // Both files' labels are numbered from 1, in one program: each file's coverage is its
    // own. Worked by hand from the three runs: clamp(3), clamp(20), clamp(-4); b is never
    // over 2; other(20) enters `x > 10`; sign sees 1, -5 and 0.
    assert_eq!(
        covered_in(&out.join("src/main_labels.labels")),
        [2, 3, 4, 6, 8, 9, 10, 12]
    );
    assert_eq!(
        covered_in(&out.join("src/util/sign_labels.labels")),
        [1, 2, 3, 4]
    );
    let files = report["files"].as_array().unwrap();
    let all = |f: &Value| f["coverage"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(all(&files[0])["covered"], 8);
    assert_eq!(all(&files[1])["covered"], 4);
    let total = report["total"].as_array().unwrap().last().unwrap();
    assert_eq!(total["labels"], 16);
    assert_eq!(total["covered"], 12);
    // The two infeasible labels are not covered, and no claim is contradicted.
    assert!(files
        .iter()
        .all(|f| f["alarms"].as_array().unwrap().is_empty()));
    assert_eq!(report["commands"][0]["outcome"]["exited"], 0);
    // The sources were not touched.
    assert!(!std::fs::read_to_string(src.join("src/main.c"))
        .unwrap()
        .contains("pc_label"));
    assert!(!src.join("app").exists());

    // A planted false claim (clamp's `!(v > 100)`, covered by every run, said infeasible)
    // is caught, and the labels files are then left as they were.
    let ledger = out.join("src/main_labels.covprune.json");
    let mut l: Value = serde_json::from_str(&std::fs::read_to_string(&ledger).unwrap()).unwrap();
    for label in l["labels"].as_array_mut().unwrap() {
        if label["id"] == 2 {
            label["status"] = "infeasible".into();
            label["step"] = 1.into();
        }
    }
    std::fs::write(&ledger, serde_json::to_string_pretty(&l).unwrap()).unwrap();
    let labels_before = std::fs::read_to_string(out.join("src/main_labels.labels")).unwrap();
    let report = measure_project(&out, APP, 3);
    let alarms = report["files"][0]["alarms"].as_array().unwrap();
    assert_eq!(alarms.len(), 1, "{alarms:?}");
    assert_eq!(alarms[0]["label"], 2);
    assert!(report["files"][1]["alarms"].as_array().unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(out.join("src/main_labels.labels")).unwrap(),
        labels_before
    );
}

#[test]
fn project_measure_reports_a_failing_command_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    let out = dir.path().join("out");
    project(&src, &out, &dir.path().join("cache"));
    // A test that fails: its last lines are shown, exit 2.
    let report = measure_project(&out, "./app-that-is-not-there", 2);
    assert_eq!(report["commands"][0]["outcome"]["exited"], 127);
    assert!(report["commands"][0]["tail"]
        .as_str()
        .unwrap()
        .contains("app-that-is-not-there"));
    // No output directory of `project`; no command.
    covprune()
        .args(["project", "measure", "-o"])
        .arg(&src)
        .args(["--test-cmd", "true"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("covprune-project.json"));
    covprune()
        .args(["project", "measure", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no test command"));
}

#[test]
fn project_shards_merge_into_the_ledgers_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    let whole = project(&src, &dir.path().join("whole"), &dir.path().join("cache"));
    let out = dir.path().join("sharded");
    for shard in ["1/2", "2/2"] {
        let o = covprune()
            .arg("project")
            .arg("-p")
            .arg(&src)
            .args(["--criteria", "CC", "--jobs", "1", "--no-cache", "--json"])
            .args(["--shard", shard, "-o"])
            .arg(&out)
            .assert()
            .success();
        let r: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
        assert!(r["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["ledger"].is_null() && f["shard_file"].is_string()));
    }
    // One shard missing is refused file by file; with both, the ledgers of one run.
    let o = covprune()
        .args(["project", "merge", "--json", "-o"])
        .arg(&out)
        .assert()
        .success();
    let merged: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!(ledgers(&merged), ledgers(&whole));
    assert_eq!(merged["total"]["labels"], whole["total"]["labels"]);
    assert_eq!(merged["total"]["infeasible"], whole["total"]["infeasible"]);
    // The manifest now names the ledgers: `project measure` works on the merged tree.
    measure_project(&out, APP, 0);
    let shard = std::fs::read_dir(out.join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with("main_labels.shard-2-of-2.json")
        })
        .unwrap();
    std::fs::remove_file(shard).unwrap();
    covprune()
        .args(["project", "merge", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stdout(predicates::str::contains("failed: src/main.c"));
}

/// `covprune project` of `src` into `out` (CC, one worker, no cache) with `extra` options,
/// run to success.
fn project_uncached(src: &Path, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    covprune()
        .args(["project", "-p"])
        .arg(src)
        .args(["--criteria", "CC", "--jobs", "1", "--no-cache", "-o"])
        .arg(out)
        .args(extra)
        .assert()
        .success()
}

/// [`project_uncached`] with `--json`; returns `out`.
fn run_uncached(src: &Path, out: &Path, extra: &[&str]) -> PathBuf {
    project_uncached(src, out, &[extra, &["--json"]].concat());
    out.to_path_buf()
}

/// The status of the CC label on `pred` in function `function` of a ledger.
fn status_of(ledger: &Path, function: &str, pred: &str) -> String {
    let l: Value = serde_json::from_str(&std::fs::read_to_string(ledger).unwrap()).unwrap();
    let label = l["labels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["function"] == function && x["predicate"] == pred)
        .unwrap_or_else(|| panic!("no label {pred} in {function}"));
    label["status"].as_str().unwrap().to_string()
}

#[test]
fn a_call_into_another_file_takes_that_functions_effects() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    write_database(
        &src,
        &[
            "src/keep.c",
            "src/main.c",
            "src/util/sign.c",
            "src/util/touch.c",
        ],
    );
    let run = |out: &str, extra: &[&str]| -> PathBuf {
        run_uncached(&src, &dir.path().join(out), extra).join("src/keep_labels.covprune.json")
    };
    let cross = run("cross", &[]);
    // sign writes nothing: `last` still holds x after the call.
    assert_eq!(status_of(&cross, "remember", "last != x"), "infeasible");
    // touch writes `last` (a global of another file): nothing is claimed.
    assert_eq!(status_of(&cross, "forget", "last != x"), "unknown");
    assert_eq!(status_of(&cross, "forget", "!(last != x)"), "unknown");
    // Each file alone, as a per-file run: the call to sign may write anything.
    let alone = run("alone", &["--no-cross-file"]);
    assert_eq!(status_of(&alone, "remember", "last != x"), "unknown");
    // touch encoded in place: it sets `last` to x + 1.
    let inlined = run("inlined", &["--inline-across-files"]);
    assert_eq!(status_of(&inlined, "forget", "!(last != x)"), "infeasible");
    // The claims hold on runs of the real program. main.c, in the database, is built into no
    // program these commands run: it is named and not measured, its labels file left as it
    // was, and the other files are measured.
    std::fs::write(
        src.join("test/keep_app.c"),
        "int remember(int); int forget(int);\n\
         int main(void) { return remember(3) + remember(-2) + forget(5) == 0 ? 1 : 0; }\n",
    )
    .unwrap();
    for out in ["cross", "inlined"] {
        let main_labels = dir.path().join(out).join("src/main_labels.labels");
        let before = std::fs::read(&main_labels).unwrap();
        let report = measure_project(
            &dir.path().join(out),
            "cc -Iinclude -DPROJECT_FLAGS=1 -o keep test/keep_app.c src/keep.c src/util/sign.c \
             src/util/touch.c && ./keep",
            0,
        );
        let files = report["files"].as_array().unwrap();
        assert!(files
            .iter()
            .all(|f| f["alarms"].as_array().unwrap().is_empty()));
        let unbuilt: Vec<&str> = files
            .iter()
            .filter(|f| f["built"] == false)
            .map(|f| f["file"].as_str().unwrap())
            .collect();
        assert_eq!(unbuilt, ["src/main.c"]);
        let wrote: Vec<&str> = report["wrote"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(wrote.len(), 3, "{wrote:?}");
        assert!(wrote.iter().all(|w| !w.ends_with("main_labels.labels")));
        assert_eq!(std::fs::read(&main_labels).unwrap(), before);
    }
}

/// (worker pid, journal, function) of every function the workers of a run proved.
fn worker_log(log: &Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let mut next = || parts.next().unwrap().to_string();
            (next(), next(), next())
        })
        .collect()
}

#[test]
fn the_files_of_a_project_share_one_queue_and_a_crash_costs_one_function() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    let run = |out: &str, jobs: &str, abort_in: Option<&str>| {
        let log = dir.path().join(format!("{out}.log"));
        let mut cmd = covprune();
        cmd.arg("project")
            .arg("-p")
            .arg(&src)
            .args(["--criteria", "CC", "--no-cache", "--json", "--jobs", jobs])
            .arg("-o")
            .arg(dir.path().join(out))
            .env("COVPRUNE_TEST_WORKER_LOG", &log);
        if let Some(f) = abort_in {
            cmd.env("COVPRUNE_TEST_ABORT_IN", f);
        }
        let o = cmd.assert().success();
        let report: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
        (report, worker_log(&log))
    };
    // One worker proves both files' functions, each once.
    let (one, log) = run("one", "1", None);
    let pids: std::collections::BTreeSet<&str> = log.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(pids.len(), 1, "one worker for the whole project: {log:?}");
    let mut functions: Vec<&str> = log.iter().map(|l| l.2.as_str()).collect();
    functions.sort_unstable();
    assert_eq!(functions, ["clamp", "other", "scale", "sign"]);
    let journals: std::collections::BTreeSet<&str> = log.iter().map(|l| l.1.as_str()).collect();
    assert_eq!(journals.len(), 2, "both files' journals: {log:?}");
    // Two workers write the same ledgers.
    let (two, log) = run("two", "2", None);
    let pids: std::collections::BTreeSet<&str> = log.iter().map(|l| l.0.as_str()).collect();
    assert!(pids.len() <= 2, "{log:?}");
    assert_eq!(ledgers(&one), ledgers(&two));
    // A worker that dies proving `sign` costs that function only: the other file's ledger is
    // the same, and the project goes on.
    let (crashed, log) = run("crashed", "1", Some("sign"));
    let pids: std::collections::BTreeSet<&str> = log.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(pids.len(), 2, "a new worker after the crash: {log:?}");
    let (before, after) = (ledgers(&one), ledgers(&crashed));
    assert_eq!(before[0], after[0], "src/main.c is untouched by the crash");
    assert!(after[1]
        .1
        .contains("the solver process died on this function"));
}

/// A file of functions other files call: small ones (encoded in place of their calls), one
/// that keeps a `static` of its file that other functions set, and one too big to encode in
/// place (its write summary stands for it).
const STATE_C: &str = "static int mode;
int counter;
static int bump(int v) { counter = counter + 1; return v + 1; }
int clamp10(int x) { if (x > 10) return 10; if (x < -10) return -10; return x; }
int next(int x) { return bump(x); }
int get_mode(void) { return mode; }
void set_mode(int m) { mode = m; }
";

const USE_C: &str = "int clamp10(int x); int next(int x); int get_mode(void); void set_mode(int m);
int big(int x);
extern int counter;
int use_clamp(int x) { int y = clamp10(x); if (y > 20) return 1; return 0; }
int use_next(int x) { int c = counter; int y = next(x); if (counter == c) return 2; if (y == x) return 1; return 0; }
int use_mode(void) { int m = get_mode(); if (m == 3) return 1; return 0; }
int use_set(void) { int m; set_mode(4); m = get_mode(); if (m == 4) return 1; return 0; }
int use_big(int x) { int c = counter; int y = big(x); if (y == c) return 1; return 0; }
";

/// A function of more than 40 blocks: encoded by its write summary, not in place.
fn big_c() -> String {
    let mut s = String::from("extern int counter;\nint big(int x) {\n    int r = 0;\n");
    for i in 0..45 {
        s.push_str(&format!("    if (x == {i}) r = r + {i};\n"));
    }
    s.push_str("    counter = r;\n    return r;\n}\n");
    s
}

const USE_APP: &str =
    "int use_clamp(int); int use_next(int); int use_mode(void); int use_set(void);
int use_big(int); void set_mode(int);
int main(void) {
    int s = use_clamp(50) + use_clamp(-3) + use_next(1) + use_mode() + use_set() + use_big(7);
    set_mode(3);
    return s + use_mode() + use_big(0) > 100;
}
";

#[test]
fn small_functions_of_other_files_are_encoded_in_place_and_statics_stay_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let src = project_in(dir.path());
    std::fs::write(src.join("src/state.c"), STATE_C).unwrap();
    std::fs::write(src.join("src/use.c"), USE_C).unwrap();
    std::fs::write(src.join("src/big.c"), big_c()).unwrap();
    std::fs::write(src.join("test/use_app.c"), USE_APP).unwrap();
    write_database(&src, &["src/use.c", "src/state.c", "src/big.c"]);
    let run = |out: &str, extra: &[&str]| -> PathBuf {
        run_uncached(&src, &dir.path().join(out), extra).join("src/use_labels.covprune.json")
    };
    let cross = run("cross", &["--inline-across-files"]);
    let alone = run("alone", &[]);
    // Return values and writes of the bodies encoded in place (and of `bump`, a static of
    // their file that `next` calls).
    for (function, pred) in [
        ("use_clamp", "y > 20"),
        ("use_next", "counter == c"),
        ("use_next", "y == x"),
        ("use_set", "!(m == 4)"),
    ] {
        assert_eq!(status_of(&cross, function, pred), "infeasible", "{pred}");
        assert_eq!(
            status_of(&alone, function, pred),
            "unknown",
            "{pred} summarised"
        );
    }
    // `mode` is a static of state.c that set_mode, not merged here, writes: nothing is known
    // of it when get_mode reads it.
    assert_eq!(status_of(&cross, "use_mode", "m == 3"), "unknown");
    assert_eq!(status_of(&cross, "use_mode", "!(m == 3)"), "unknown");
    // big is too big to encode in place: its result is unknown, its writes summarised.
    assert_eq!(status_of(&cross, "use_big", "y == c"), "unknown");
    assert_eq!(status_of(&cross, "use_big", "!(y == c)"), "unknown");
    // The other files' ledgers are those of the run without functions encoded in place.
    for f in [
        "src/state_labels.covprune.json",
        "src/big_labels.covprune.json",
    ] {
        let read = |out: &str| std::fs::read_to_string(dir.path().join(out).join(f)).unwrap();
        assert_eq!(read("cross"), read("alone"), "{f}");
    }
    // A file with a `static` of the name of a global the merged code writes gets nothing
    // merged from that file, and says so.
    std::fs::write(
        src.join("src/clash.c"),
        "static int counter; int next(int x);\n\
         int clash(int x) { int y = next(x); if (y == x) return counter; return 0; }\n",
    )
    .unwrap();
    write_database(
        &src,
        &["src/use.c", "src/state.c", "src/big.c", "src/clash.c"],
    );
    let out = dir.path().join("clash");
    let o = project_uncached(&src, &out, &["--no-progress", "--inline-across-files"]);
    let stderr = String::from_utf8_lossy(&o.get_output().stderr);
    assert!(
        stderr.contains(
            "note: src/clash.c: the functions of src/state.c are not encoded in place: \
             `counter` is a global of external linkage there and a `static` here"
        ),
        "{stderr}"
    );
    let clash = out.join("src/clash_labels.covprune.json");
    assert_eq!(status_of(&clash, "clash", "y == x"), "unknown");
    assert_eq!(
        status_of(
            &out.join("src/use_labels.covprune.json"),
            "use_next",
            "y == x"
        ),
        "infeasible"
    );
    write_database(&src, &["src/use.c", "src/state.c", "src/big.c"]);
    // The claims hold on runs of the real program.
    let report = measure_project(
        &dir.path().join("cross"),
        "cc -o use_app test/use_app.c src/use.c src/state.c src/big.c && ./use_app",
        0,
    );
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    for f in files {
        assert!(f["alarms"].as_array().unwrap().is_empty(), "{f}");
    }
}

/// Where `project` writes does not change a cache key: a file whose functions read `__FILE__`
/// (through `assert`, or a log line) pruned into a second output directory reuses every
/// function, and its ledger says what the first run's says.
#[test]
fn a_second_output_directory_reuses_every_function() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("log.c"),
        "#include <assert.h>\n#include <stdio.h>\n\
         int check(int x)\n{\n    assert(x != 3);\n    if (x > 2 && x < 2)\n        return 1;\n    return 0;\n}\n\
         int note(int y)\n{\n    if (y > 0) {\n        puts(__FILE__);\n        return 1;\n    }\n    return 0;\n}\n",
    )
    .unwrap();
    common::write_database(&src, &["log.c"], &|f| format!("cc -c {f} -o x.o"));
    let cache = dir.path().join("cache");
    let first = project(&src, &dir.path().join("one"), &cache);
    assert_eq!(first["cache"]["proved"], 2, "{first}");
    let second = project(&src, &dir.path().join("two"), &cache);
    assert_eq!(second["cache"]["reused"], 2, "{second}");
    assert_eq!(second["cache"]["proved"], 0);
    let status = |r: &Value| -> Vec<String> {
        let l: Value = serde_json::from_str(&ledgers(r)[0].1).unwrap();
        l["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["status"].to_string())
            .collect()
    };
    assert_eq!(status(&first), status(&second));
}
