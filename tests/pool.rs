//! The worker pool's contract: bounded runs end within their bounds with `unknown` labels, a
//! killed run resumed from its journal gives the ledger of an uninterrupted run without
//! proving anything twice, shards merged give the unsharded ledger, and the number of workers
//! changes nothing in the outputs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use assert_cmd::Command as Cmd;

mod common;

/// The small annotation fixture annotated with CC, MCC and WM into `dir`: the annotated file.
fn annotated(dir: &Path) -> PathBuf {
    common::annotate_cc_mcc_wm("tests/fixtures/annotate/small.c", dir)
}

/// Options of every run compared here. These tests check that the pool, shards and resumption
/// change no answer, so every limit must be deterministic: questions and functions are bounded
/// by solver resource units (50,000,000 per question, ten times the default; the function
/// budget converts at the same rate as the defaults'), and the wall clock is only a far
/// backstop (200 s per question, 3 × 1,200 s per function), so that a loaded machine (CI's
/// debug build beside other jobs) cannot end a question either way. With `--rlimit 0` the
/// budgets of a function and of its calling-context copies would be wall-clock ones.
const COMPARED: &[&str] = &[
    "--no-progress",
    "--rlimit",
    "50000000",
    "--timeout-s",
    "200",
    "--function-budget-s",
    "1200",
];

fn prune(file: &Path, extra: &[&str]) {
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("prune")
        .arg(file)
        .args(COMPARED)
        .args(extra)
        .assert()
        .success();
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Copies of the ledger and the labels file after a run, then the labels file is reset.
fn outputs(file: &Path, fresh_labels: &str) -> (String, String) {
    let ledger = read(&file.with_extension("covprune.json"));
    let labels = read(&file.with_extension("labels"));
    std::fs::write(file.with_extension("labels"), fresh_labels).unwrap();
    (ledger, labels)
}

#[test]
fn one_or_two_workers_write_the_same_bytes() {
    for example in [
        "benchmarks/programs/triangle.c",
        "tests/fixtures/annotate/small.c",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = if example.ends_with("triangle.c") {
            let f = dir.path().join("triangle.c");
            std::fs::copy(example, &f).unwrap();
            f
        } else {
            annotated(dir.path())
        };
        let labels_path = file.with_extension("labels");
        let fresh = std::fs::read_to_string(&labels_path).unwrap_or_default();
        let mut runs = Vec::new();
        for jobs in ["1", "2", "2"] {
            prune(&file, &["--jobs", jobs]);
            runs.push(outputs(&file, &fresh));
            if fresh.is_empty() {
                let _ = std::fs::remove_file(&labels_path);
            }
        }
        assert_eq!(runs[0], runs[1], "{example}: --jobs 1 and --jobs 2 differ");
        assert_eq!(runs[1], runs[2], "{example}: two runs differ");
    }
}

/// Each function's resource units in a `prune -v` run's report, in the order reported.
fn units_of(report: &str) -> Vec<(String, u64, u64)> {
    report
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("covprune: ")?.split_once(": asked in ")?;
            let units: Vec<u64> = rest
                .split(" units")
                .filter_map(|part| part.rsplit(' ').next()?.parse().ok())
                .collect();
            Some((name.to_string(), *units.first()?, *units.get(1)?))
        })
        .collect()
}

#[test]
fn every_run_spends_the_same_solver_units_on_the_same_questions() {
    // Loops: each function's loop facts are asked in a session before its own questions, in
    // the same Z3 context, so the order in which the first session's terms are dropped steers
    // the second's search.
    let tmp = tempfile::tempdir().unwrap();
    // The fixture's loops without its own labels, whose ids the annotation's would repeat.
    let text = std::fs::read_to_string("tests/fixtures/engine/loops.c").unwrap();
    let plain: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("pc_label("))
        .map(|l| format!("{l}\n"))
        .collect();
    let src = tmp.path().join("loops.c");
    std::fs::write(&src, plain).unwrap();
    let file = common::annotate_cc_mcc_wm(src.to_str().unwrap(), tmp.path());
    let fresh = read(&file.with_extension("labels"));
    let runs: Vec<Vec<(String, u64, u64)>> = (0..3)
        .map(|_| {
            let out = Command::new(cargo_bin("covprune"))
                .arg("prune")
                .arg(&file)
                .args(COMPARED)
                .args(["--jobs", "1", "-v"])
                .output()
                .unwrap();
            assert!(out.status.success());
            std::fs::write(file.with_extension("labels"), &fresh).unwrap();
            units_of(&String::from_utf8_lossy(&out.stderr))
        })
        .collect();
    assert!(runs[0].len() >= 5, "functions reported: {:?}", runs[0]);
    assert!(runs[0].iter().all(|(_, one, _)| *one > 0));
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

#[test]
fn shards_merged_equal_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = annotated(dir.path());
    let fresh = read(&file.with_extension("labels"));
    prune(&file, &[]);
    let whole = outputs(&file, &fresh);
    let mut shard_files = Vec::new();
    for k in 1..=3 {
        prune(&file, &["--shard", &format!("{k}/3")]);
        shard_files.push(dir.path().join(format!("small_labels.shard-{k}-of-3.json")));
    }
    assert_eq!(
        read(&file.with_extension("labels")),
        fresh,
        "shards leave the labels file alone"
    );
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("merge")
        .args(&shard_files)
        .assert()
        .success();
    assert_eq!(outputs(&file, &fresh), whole);
    // A missing shard is refused.
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("merge")
        .args(&shard_files[..2])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("every shard"));
}

#[test]
fn a_killed_run_resumes_without_proving_anything_twice() {
    killed_and_resumed(&["--jobs", "1", "--in-process"]);
}

/// The supervisor of two worker processes is killed: its workers end too (they would
/// otherwise write on into the journal of the resumed run), and the run resumes as above.
#[test]
fn a_killed_pool_takes_its_workers_along_and_resumes() {
    killed_and_resumed(&["--jobs", "2"]);
}

/// The processes whose command line names `file`.
fn processes_on(file: &Path) -> Vec<String> {
    let needle = file.display().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(&needle) {
                out.push(cmd);
            }
        }
    }
    out
}

/// The fixture annotated in `dir` and pruned whole with one worker: the annotated file, its
/// fresh labels file, the whole run's outputs, and its journal.
fn a_whole_run(dir: &Path) -> (PathBuf, String, (String, String), PathBuf) {
    let file = annotated(dir);
    let fresh = read(&file.with_extension("labels"));
    prune(&file, &["--jobs", "1"]);
    let whole = outputs(&file, &fresh);
    let journal = file.with_extension("covprune.journal");
    (file, fresh, whole, journal)
}

fn killed_and_resumed(mode: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (file, fresh, whole, journal) = a_whole_run(dir.path());
    std::fs::remove_file(&journal).unwrap();
    // Kill the run (SIGKILL) once some answers are in the journal, before it ends.
    let mut child = Command::new(cargo_bin("covprune"))
        .arg("prune")
        .arg(&file)
        .args(COMPARED)
        .args(mode)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        let lines = std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
        if lines >= 12 || t.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run was killed before its end");
    let t = Instant::now();
    while !processes_on(&file).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "processes outlived the killed run: {:?}",
            processes_on(&file)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = read(&journal).lines().count();
    let mut resumed = mode.to_vec();
    resumed.push("--resume");
    prune(&file, &resumed);
    assert_eq!(outputs(&file, &fresh), whole, "resumed ledger differs");
    // Every step-1 answer is in the journal once: nothing was proved twice.
    let text = read(&journal);
    let mut seen = std::collections::BTreeSet::new();
    for line in text.lines().skip(1) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue; // the line the kill tore
        };
        if let Some(s) = v.get("step1") {
            assert!(
                seen.insert((s[0].to_string(), s[1].to_string())),
                "proved twice: {s}"
            );
        }
    }
    assert!(text.lines().count() > before);
}

/// A kill can land anywhere: a run resumed from any prefix of a whole run's journal ends with
/// the whole run's ledger. (Every prefix is a journal a kill could leave; unlike the kill
/// tests, where the kill lands is chosen, so a failure here is reproducible. The copies'
/// budget once depended on what the function's own questions had cost, which a journal
/// changes, and a resume two lines into the journal lost three calling-context proofs.)
#[test]
fn a_run_resumed_from_any_prefix_of_the_journal_ends_as_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let (file, fresh, whole, journal) = a_whole_run(dir.path());
    let lines: Vec<String> = read(&journal).lines().map(str::to_string).collect();
    assert!(
        lines.len() > 20,
        "the fixture's journal is long enough to cut"
    );
    let keeps = [
        2,
        lines.len() / 10,
        lines.len() * 2 / 5,
        lines.len() * 3 / 5,
    ];
    resumes_as_the_whole_run(&file, &fresh, &whole, &lines, &keeps);
}

/// For each number of lines in `keeps`: the journal of a whole run (`lines`) cut there, then
/// resumed, ends with the whole run's outputs.
fn resumes_as_the_whole_run(
    file: &Path,
    fresh: &str,
    whole: &(String, String),
    lines: &[String],
    keeps: &[usize],
) {
    let journal = file.with_extension("covprune.journal");
    for &keep in keeps {
        std::fs::write(&journal, lines[..keep].join("\n") + "\n").unwrap();
        prune(file, &["--jobs", "1", "--in-process", "--resume"]);
        assert_eq!(
            &outputs(file, fresh),
            whole,
            "resumed from the journal's first {keep} lines"
        );
    }
}

#[test]
fn a_pathological_function_stays_within_its_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let mut src = String::from(
        "#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\nunsigned f(unsigned a, unsigned b)\n{\n    unsigned x = a, y = b;\n",
    );
    for k in 0..3000 {
        src.push_str(&format!("    x = x * y + {k}u; y = y * x + a;\n"));
    }
    src.push_str("    pc_label(x == 12345u, 1, \"T\");\n    pc_label(x * y == 7u * b, 2, \"T\");\n    pc_label(y < x, 3, \"T\");\n    return x;\n}\n");
    let file = dir.path().join("heavy.c");
    std::fs::write(&file, src).unwrap();
    let t = Instant::now();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("prune")
        .arg(&file)
        .args([
            "--no-progress",
            "--timeout-s",
            "0.3",
            "--function-budget-s",
            "8",
            "--max-memory-mb",
            "4000",
        ])
        .assert()
        .success();
    let took = t.elapsed();
    // Step 1 and step 2 at most, each check at most ~2 s (the watchdog), the budget 8 s.
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let ledger: serde_json::Value =
        serde_json::from_str(&read(&file.with_extension("covprune.json"))).unwrap();
    for l in ledger["labels"].as_array().unwrap() {
        assert_eq!(l["status"], "unknown", "{l}");
        assert!(l["reason"].as_str().is_some_and(|r| !r.is_empty()));
    }
}

/// The prover dies (abort) in one function: the supervisor restarts it from the journal, that
/// function's labels stay unknown, and the other function is proved as usual.
#[test]
fn a_crashing_solver_costs_only_the_function_in_flight() {
    for jobs in ["1", "2"] {
        crash_in(jobs);
    }
}

fn crash_in(jobs: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.c");
    std::fs::write(
        &file,
        "#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\nint bad(int x) {\n  pc_label(x != x, 1, \"T\");\n  return x;\n}\nint good(int y) {\n  pc_label(y > 0 && y < 0, 2, \"T\");\n  pc_label(y > 3, 3, \"T\");\n  return y;\n}\n",
    )
    .unwrap();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("prune")
        .arg(&file)
        .args(["--no-progress", "--jobs", jobs])
        .env("COVPRUNE_TEST_ABORT_IN", "bad")
        .assert()
        .success()
        .stderr(predicates::str::contains("while proving bad"));
    let ledger: serde_json::Value =
        serde_json::from_str(&read(&file.with_extension("covprune.json"))).unwrap();
    let status = |id: u64| {
        ledger["labels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(status(1)["status"], "unknown");
    assert!(status(1)["reason"].as_str().unwrap().contains("died"));
    assert_eq!(status(2)["status"], "infeasible");
    assert_eq!(status(3)["status"], "unknown");
}

/// The big-function fixture annotated with CC into `dir`: the annotated file and its fresh
/// labels file.
fn big_function(dir: &Path) -> (PathBuf, String) {
    let file = common::annotate("tests/fixtures/engine/big_function.c", "CC", dir);
    let fresh = read(&file.with_extension("labels"));
    (file, fresh)
}

/// The ledger's statuses of the labels of `function`.
fn statuses_in(file: &Path, function: &str) -> Vec<serde_json::Value> {
    let ledger: serde_json::Value =
        serde_json::from_str(&read(&file.with_extension("covprune.json"))).unwrap();
    ledger["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["function"] == function)
        .cloned()
        .collect()
}

/// A function with more labels than a share holds is proved in shares, by as many workers as
/// there are; the outputs are the same bytes whatever the number of workers, in worker
/// processes or in threads.
#[test]
fn a_big_function_is_proved_in_shares_with_the_same_bytes_for_any_number_of_workers() {
    let dir = tempfile::tempdir().unwrap();
    let (file, fresh) = big_function(dir.path());
    let mut runs = Vec::new();
    for mode in [
        &["--jobs", "1", "-v"][..],
        &["--jobs", "2"],
        &["--jobs", "2", "--in-process"],
        &["--jobs", "1", "--in-process"],
    ] {
        let out = Cmd::cargo_bin("covprune")
            .unwrap()
            .arg("prune")
            .arg(&file)
            .args(COMPARED)
            .args(mode)
            .assert()
            .success()
            .get_output()
            .clone();
        if mode.contains(&"-v") {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("big (share 1 of 2)"), "{err}");
            assert!(err.contains("big (share 2 of 2)"), "{err}");
            assert!(!err.contains("small (share"), "{err}");
            // Where each share's time went.
            assert!(err.contains("ms, outside the solver "), "{err}");
        }
        runs.push(outputs(&file, &fresh));
    }
    for (k, r) in runs.iter().enumerate().skip(1) {
        assert_eq!(&runs[0], r, "run {k} differs from the first");
    }
    // Both shares prove: infeasible labels and implications, in groups of both shares.
    prune(&file, &["--jobs", "2"]);
    let big = statuses_in(&file, "big");
    assert_eq!(big.len(), 172);
    let count = |s: &str| big.iter().filter(|l| l["status"] == s).count();
    assert!(count("infeasible") >= 2, "{big:?}");
    assert!(count("subsumed") >= 40, "{big:?}");
    assert!(count("duplicate") >= 10, "{big:?}");
}

/// A run resumed from any prefix of the journal of a run with shares ends as the whole run.
#[test]
fn a_run_with_shares_resumed_from_any_prefix_of_its_journal_ends_as_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let (file, fresh) = big_function(dir.path());
    prune(&file, &["--jobs", "1"]);
    let whole = outputs(&file, &fresh);
    let journal = file.with_extension("covprune.journal");
    let lines: Vec<String> = read(&journal).lines().map(str::to_string).collect();
    let shares: Vec<usize> = (0..lines.len())
        .filter(|&k| lines[k].starts_with("{\"share\""))
        .collect();
    assert_eq!(shares.len(), 2, "two shares journaled");
    // Before the first share is in, between the two, after both but before the finish.
    let keeps = [shares[0], shares[0] + 1, shares[1] + 1];
    resumes_as_the_whole_run(&file, &fresh, &whole, &lines, &keeps);
}

/// The prover dies in a function proved in shares: its labels stay unknown (or keep the
/// step-1 answers journaled before), and the other function is proved as usual.
#[test]
fn a_crash_in_a_share_costs_only_its_function() {
    for jobs in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        let (file, _) = big_function(dir.path());
        Cmd::cargo_bin("covprune")
            .unwrap()
            .arg("prune")
            .arg(&file)
            .args(["--no-progress", "--jobs", jobs])
            .env("COVPRUNE_TEST_ABORT_IN", "big")
            .assert()
            .success()
            .stderr(predicates::str::contains("while proving big"));
        let big = statuses_in(&file, "big");
        assert_eq!(big.len(), 172);
        assert!(
            big.iter()
                .all(|l| l["status"] == "unknown" || l["status"] == "infeasible"),
            "{big:?}"
        );
        assert!(big
            .iter()
            .any(|l| l["reason"].as_str().is_some_and(|r| r.contains("died"))));
        let small = statuses_in(&file, "small");
        assert!(small.iter().any(|l| l["status"] == "subsumed"), "{small:?}");
    }
    // In shard runs, which hand their shares on to `merge`: the crash goes with them.
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = big_function(dir.path());
    let mut shard_files = Vec::new();
    for k in 1..=2 {
        Cmd::cargo_bin("covprune")
            .unwrap()
            .arg("prune")
            .arg(&file)
            .args(["--no-progress", "--jobs", "1", "--shard", &format!("{k}/2")])
            .env("COVPRUNE_TEST_ABORT_IN", "big")
            .assert()
            .success();
        shard_files.push(
            dir.path()
                .join(format!("big_function_labels.shard-{k}-of-2.json")),
        );
    }
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("merge")
        .args(&shard_files)
        .assert()
        .success();
    let big = statuses_in(&file, "big");
    assert_eq!(big.len(), 172);
    assert!(big.iter().all(|l| l["status"] == "unknown"), "{big:?}");
    assert!(statuses_in(&file, "small")
        .iter()
        .any(|l| l["status"] == "subsumed"));
}

/// Shards split a big function's shares between them; `merge` finishes the function, and the
/// merged outputs are those of one unsharded run.
#[test]
fn shards_spread_a_big_functions_shares_and_merge_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (file, fresh) = big_function(dir.path());
    prune(&file, &["--jobs", "1"]);
    let whole = outputs(&file, &fresh);
    for n in [2, 3] {
        let mut shard_files = Vec::new();
        for k in 1..=n {
            let mode = if k == 1 { "--in-process" } else { "--jobs" };
            let mut extra = vec!["--shard".to_string(), format!("{k}/{n}"), mode.to_string()];
            if mode == "--jobs" {
                extra.push("2".into());
            }
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            prune(&file, &extra);
            shard_files.push(
                dir.path()
                    .join(format!("big_function_labels.shard-{k}-of-{n}.json")),
            );
        }
        // Each of the first two shards holds one share of `big`, and no result for it.
        for path in &shard_files[..2] {
            let shard: serde_json::Value = serde_json::from_str(&read(path)).unwrap();
            let shares = shard["shares"].as_array().unwrap();
            assert_eq!(shares.len(), 1, "{}", path.display());
            assert_eq!(shares[0]["function"], "big");
            assert!(shard["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["function"] != "big"));
        }
        // A missing shard is refused, naming what is missing.
        Cmd::cargo_bin("covprune")
            .unwrap()
            .arg("merge")
            .args(&shard_files[..n - 1])
            .assert()
            .code(2);
        Cmd::cargo_bin("covprune")
            .unwrap()
            .arg("merge")
            .args(&shard_files)
            .assert()
            .success();
        assert_eq!(outputs(&file, &fresh), whole, "{n} shards merged");
    }
}
