//! Three real C libraries from Debian's source packages, run as a C team would run covprune
//! on them, with only the documented commands: `covprune project -p BUILD --criteria CC,MCC -o
//! OUT --files GLOB`, then `covprune project measure -o OUT --test-cmd ...` with the project's
//! own test commands (`ctest`, `meson test`, `make check`). Checks that both exit 0, that no
//! claim is contradicted by a test (0 alarms), that every test command succeeds in the
//! annotated build (0 behaviour differences) and that the user's source and build trees are
//! byte for byte as they were; writes per project the labels, what was pruned, compiled out,
//! covered, raw and cleaned coverage and the times to `artifacts/debian-projects.md` and
//! `.json`. Usage: `cargo run --release -p covprune-benchmarks -- debian --projects DIR [--out
//! DIR] [--only NAME]`, DIR as `benchmarks/fetch-debian-projects.sh DIR` leaves it.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// One project: its name, its sources, its build directory (the compilation database's), the
/// library's files, and its own test commands (run in the build directory's copy).
struct Project {
    name: &'static str,
    build_system: &'static str,
    source: &'static str,
    build: &'static str,
    files: &'static str,
    tests: &'static [&'static str],
}

const PROJECTS: &[Project] = &[
    Project {
        name: "cjson",
        build_system: "CMake (-Werror)",
        source: "cjson",
        build: "cjson-build",
        files: "cJSON.c,cJSON_Utils.c",
        tests: &["cmake --build . && ctest"],
    },
    Project {
        name: "fribidi",
        build_system: "Meson",
        source: "fribidi",
        build: "fribidi-build",
        files: "lib/*.c",
        tests: &["ninja", "meson test"],
    },
    Project {
        name: "libtasn1",
        build_system: "autotools (gnulib)",
        source: "libtasn1",
        build: "libtasn1",
        files: "lib/*.c,lib/gl/*.c",
        tests: &["make check"],
    },
];

#[derive(serde::Serialize, serde::Deserialize)]
struct Row {
    project: String,
    build_system: String,
    files: usize,
    labels: u64,
    pruned: u64,
    infeasible: u64,
    unknown: u64,
    compiled_out: u64,
    covered: u64,
    raw_percent: Option<f64>,
    cleaned_percent: Option<f64>,
    test_runs: usize,
    failed_runs: usize,
    alarms: usize,
    files_not_built: Vec<String>,
    project_exit: i32,
    measure_exit: i32,
    trees_identical: bool,
    project_seconds: f64,
    measure_seconds: f64,
    /// What the tests leave uncovered, per criterion (CC, MCC, all): before `project
    /// witness` (proved infeasible only) and after (with the labels its tests cover).
    #[serde(default)]
    settled_before: Vec<Settled>,
    #[serde(default)]
    settled_after: Vec<Settled>,
    #[serde(default)]
    witness_exit: i32,
    #[serde(default)]
    witness_seconds: f64,
    #[serde(default)]
    tests_written: usize,
    /// Tests `project witness` built on their own and checked to cover their labels.
    #[serde(default)]
    tests_checked: usize,
    #[serde(default)]
    tests_broken: usize,
    /// The witness tests added to the project's own build with the snippet `project witness`
    /// wrote, and how many of them its test runner passed (none for autotools: no snippet).
    #[serde(default)]
    suite_tests: Option<(usize, usize)>,
    #[serde(default)]
    witness_trees_identical: bool,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Default)]
struct Settled {
    criterion: String,
    uncovered: u64,
    infeasible: u64,
    shown_feasible: u64,
    neither: u64,
}

impl Settled {
    fn rows(v: &serde_json::Value) -> Vec<Settled> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|r| Settled {
                criterion: r["criterion"].as_str().unwrap_or_default().to_string(),
                uncovered: r["uncovered"].as_u64().unwrap_or(0),
                infeasible: r["infeasible"].as_u64().unwrap_or(0),
                shown_feasible: r["shown_feasible"].as_u64().unwrap_or(0),
                neither: r["neither"].as_u64().unwrap_or(0),
            })
            .collect()
    }
    fn percent(&self) -> Option<f64> {
        (self.uncovered > 0)
            .then(|| 100.0 * (self.infeasible + self.shown_feasible) as f64 / self.uncovered as f64)
    }
}

pub fn run(raw: &[String], out_dir: PathBuf) -> Result<()> {
    let mut projects: Option<PathBuf> = None;
    let mut out = out_dir;
    let mut only: Option<String> = None;
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--projects" => projects = Some(it.next().context("--projects needs a folder")?.into()),
            "--out" => out = it.next().context("--out needs a folder")?.into(),
            "--only" => only = Some(it.next().context("--only needs a name")?.clone()),
            other => bail!("unknown argument {other}"),
        }
    }
    let Some(dir) = projects else {
        bail!("usage: debian --projects DIR [--out DIR] [--only NAME] (DIR from benchmarks/fetch-debian-projects.sh DIR)");
    };
    let dir = dir
        .canonicalize()
        .with_context(|| format!("{}", dir.display()))?;
    let exe = std::env::current_exe()?.with_file_name("covprune");
    if !exe.exists() {
        bail!(
            "{} not found: run `cargo build --release` first",
            exe.display()
        );
    }
    let versions = std::fs::read_to_string(dir.join("VERSIONS")).unwrap_or_default();
    let work = std::env::temp_dir().join(format!("covprune-debian-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    // With `--only`, the other projects' rows are those of the last run (when it had them).
    let mut rows: Vec<Row> = match &only {
        Some(name) => std::fs::read_to_string(out.join("debian-projects.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| serde_json::from_value::<Vec<Row>>(v["projects"].clone()).ok())
            .unwrap_or_default()
            .into_iter()
            .filter(|r| &r.project != name)
            .collect(),
        None => Vec::new(),
    };
    for p in PROJECTS
        .iter()
        .filter(|p| only.as_deref().is_none_or(|o| o == p.name))
    {
        eprintln!("debian: {}", p.name);
        rows.push(one(&exe, &dir, &work, p)?);
    }
    rows.sort_by_key(|r| {
        PROJECTS
            .iter()
            .position(|p| p.name == r.project)
            .unwrap_or(usize::MAX)
    });
    std::fs::remove_dir_all(&work).ok();
    std::fs::create_dir_all(&out)?;
    let json =
        serde_json::json!({ "versions": versions.lines().collect::<Vec<_>>(), "projects": rows });
    std::fs::write(
        out.join("debian-projects.json"),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    std::fs::write(out.join("debian-projects.md"), markdown(&rows, &versions))?;
    println!("{}", markdown(&rows, &versions));
    let bad: Vec<&str> = rows
        .iter()
        .filter(|r| only.as_deref().is_none_or(|o| o == r.project))
        .filter(|r| {
            r.project_exit != 0
                || r.measure_exit != 0
                || r.witness_exit != 0
                || r.tests_broken > 0
                || r.suite_tests.is_some_and(|(passed, total)| passed < total)
                || !r.witness_trees_identical
                || r.alarms > 0
                || r.failed_runs > 0
                || !r.trees_identical
        })
        .map(|r| r.project.as_str())
        .collect();
    if !bad.is_empty() {
        bail!("not as a user needs it: {}", bad.join(", "));
    }
    Ok(())
}

fn one(exe: &Path, dir: &Path, work: &Path, p: &Project) -> Result<Row> {
    let source = dir.join(p.source);
    let build = dir.join(p.build);
    let watched = [source.clone(), build.clone()];
    let before = fingerprint(&watched)?;
    let out = work.join(format!("{}-out", p.name));
    let cache = work.join(format!("{}-cache", p.name));
    let t = Instant::now();
    let project = Command::new(exe)
        .arg("project")
        .arg("-p")
        .arg(&build)
        .args([
            "--criteria",
            "CC,MCC",
            "--json",
            "--no-progress",
            "--files",
            p.files,
        ])
        .arg("-o")
        .arg(&out)
        .arg("--cache")
        .arg(&cache)
        .output()?;
    let project_seconds = t.elapsed().as_secs_f64();
    let report: serde_json::Value = serde_json::from_slice(&project.stdout)
        .with_context(|| format!("project: {}", String::from_utf8_lossy(&project.stderr)))?;
    let t = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.args(["project", "measure", "--json", "-o"]).arg(&out);
    for c in p.tests {
        cmd.args(["--test-cmd", c]);
    }
    let measure = cmd.output()?;
    let measure_seconds = t.elapsed().as_secs_f64();
    let m: serde_json::Value = serde_json::from_slice(&measure.stdout).with_context(|| {
        format!(
            "project measure: {}",
            String::from_utf8_lossy(&measure.stderr)
        )
    })?;
    let after = fingerprint(&watched)?;
    let t = Instant::now();
    let witness = Command::new(exe)
        .args(["project", "witness", "--json", "-o"])
        .arg(&out)
        .output()?;
    let witness_seconds = t.elapsed().as_secs_f64();
    let w: serde_json::Value = serde_json::from_slice(&witness.stdout).with_context(|| {
        format!(
            "project witness: {}",
            String::from_utf8_lossy(&witness.stderr)
        )
    })?;
    let witness_trees_identical = fingerprint(&watched)? == after;
    let wfiles = w["files"].as_array().cloned().unwrap_or_default();
    let sum = |k: &str| -> usize {
        wfiles
            .iter()
            .map(|f| match &f[k] {
                serde_json::Value::Array(a) => a.len(),
                v => v.as_u64().unwrap_or(0) as usize,
            })
            .sum()
    };
    let suite_tests = suite_with_witnesses(p, &source, &out, work)?;
    let total = &report["total"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let compiled_out: u64 = report["files"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["compiled_out"].as_array().into_iter().flatten())
        .map(|c| n(&c["labels"]))
        .sum();
    let all = m["total"]
        .as_array()
        .and_then(|rows| rows.last())
        .cloned()
        .unwrap_or_default();
    let commands = m["commands"].as_array().cloned().unwrap_or_default();
    let alarms = m["files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["alarms"].as_array().map_or(0, Vec::len))
        .sum();
    let files_not_built = m["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["built"] == false)
        .filter_map(|f| f["file"].as_str().map(str::to_string))
        .collect();
    let pct = |a: u64, b: u64| (b > 0).then(|| (1000.0 * a as f64 / b as f64).round() / 10.0);
    Ok(Row {
        project: p.name.into(),
        build_system: p.build_system.into(),
        files: report["files"].as_array().map_or(0, Vec::len),
        labels: n(&total["labels"]),
        pruned: n(&total["pruned"]),
        infeasible: n(&total["infeasible"]),
        unknown: n(&total["unknown"]),
        compiled_out,
        covered: n(&all["covered"]),
        raw_percent: pct(n(&all["covered"]), n(&all["labels"])),
        cleaned_percent: pct(n(&all["kept_covered"]), n(&all["kept"])),
        test_runs: commands.len(),
        failed_runs: commands
            .iter()
            .filter(|c| c["outcome"] != serde_json::json!({ "exited": 0 }))
            .count(),
        alarms,
        files_not_built,
        project_exit: project.status.code().unwrap_or(-1),
        measure_exit: measure.status.code().unwrap_or(-1),
        trees_identical: before == after,
        project_seconds,
        measure_seconds,
        settled_before: Settled::rows(&m["settled"]),
        settled_after: Settled::rows(&w["settled"]),
        witness_exit: witness.status.code().unwrap_or(-1),
        witness_seconds,
        tests_written: sum("tests"),
        tests_checked: sum("tests_checked"),
        tests_broken: sum("tests_broken"),
        suite_tests,
        witness_trees_identical,
    })
}

/// The project's sources copied, the snippet `project witness` wrote added to its build
/// (CMake: `include()` at the end of the top CMakeLists.txt; Meson: the lines at the end of
/// the top meson.build), configured, built and tested with its own test runner: (witness
/// tests the runner passed, witness tests). None when there is no snippet (autotools).
fn suite_with_witnesses(
    p: &Project,
    source: &Path,
    out: &Path,
    work: &Path,
) -> Result<Option<(usize, usize)>> {
    let cmake = out.join("witnesses/covprune-witnesses.cmake");
    let meson = out.join("witnesses/meson-witnesses.txt");
    let copy = work.join(format!("{}-with-witnesses", p.name));
    let _ = std::fs::remove_dir_all(&copy);
    let sh = |script: &str, dir: &Path| -> Result<String> {
        let o = Command::new("/bin/sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .output()?;
        Ok(String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
    };
    let (log, total) = if cmake.exists() {
        sh(
            &format!("cp -a '{}' '{}'", source.display(), copy.display()),
            work,
        )?;
        let text = std::fs::read_to_string(&cmake)?;
        let total = text.matches("add_test(").count();
        let mut lists = std::fs::read_to_string(copy.join("CMakeLists.txt"))?;
        lists.push_str(&format!("\ninclude({})\n", cmake.display()));
        std::fs::write(copy.join("CMakeLists.txt"), lists)?;
        let log = sh(
            "mkdir -p b && cd b && cmake .. >/dev/null && cmake --build . -j2 >/dev/null 2>&1; ctest -R '^covprune_' 2>&1",
            &copy,
        )?;
        (log, total)
    } else if meson.exists() {
        sh(
            &format!("cp -a '{}' '{}'", source.display(), copy.display()),
            work,
        )?;
        let text = std::fs::read_to_string(&meson)?;
        let total = text.matches("\ntest(").count();
        let mut build = std::fs::read_to_string(copy.join("meson.build"))?;
        build.push('\n');
        build.push_str(&text);
        std::fs::write(copy.join("meson.build"), build)?;
        let log = sh(
            "meson setup b >/dev/null && ninja -C b >/dev/null 2>&1; cd b && meson test --list 2>/dev/null | grep '^covprune_' | xargs -r meson test 2>&1",
            &copy,
        )?;
        (log, total)
    } else {
        return Ok(None);
    };
    let _ = std::fs::remove_dir_all(&copy);
    // ctest: `N/M Test #k: covprune_... ....   Passed`; meson: `N/M covprune_...   OK`.
    let passed = log
        .lines()
        .filter(|l| l.contains("covprune_") && (l.contains("Passed") || l.contains(" OK ")))
        .count();
    if passed < total {
        eprintln!(
            "{}: {passed} of {total} witness tests passed in the project's build:\n{log}",
            p.name
        );
    }
    Ok(Some((passed, total)))
}

/// Every file under `dirs`, by path: its length and a hash of its bytes.
fn fingerprint(dirs: &[PathBuf]) -> Result<BTreeMap<PathBuf, (u64, u64)>> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).with_context(|| format!("{}", d.display()))? {
            let e = e?;
            let path = e.path();
            let ty = e.file_type()?;
            if ty.is_dir() {
                stack.push(path);
            } else if ty.is_file() {
                let bytes = std::fs::read(&path)?;
                let mut h = std::collections::hash_map::DefaultHasher::new();
                bytes.hash(&mut h);
                out.insert(path, (bytes.len() as u64, h.finish()));
            }
        }
    }
    Ok(out)
}

fn markdown(rows: &[Row], versions: &str) -> String {
    let pct = |p: Option<f64>| p.map_or_else(|| "-".to_string(), |p| format!("{p:.1}%"));
    let mut s = String::from(
        "# Real Debian libraries, as a C team runs covprune on them\n\n\
         `cargo run --release -p covprune-benchmarks -- debian --projects DIR` after \
         `benchmarks/fetch-debian-projects.sh DIR`: each library's own build (its compilation \
         database), `covprune project -p BUILD --criteria CC,MCC -o OUT --files GLOB`, then \
         `covprune project measure -o OUT` with the project's own test commands, at the default \
         limits on 2 cores. Labels are those of the configuration built (labels in code it \
         compiles out are counted apart); pruned = infeasible + duplicate + subsumed; raw = \
         covered / labels, cleaned = kept covered / kept.\n\n",
    );
    s.push_str(&format!(
        "Debian source packages: {}.\n\n",
        versions.lines().collect::<Vec<_>>().join(", ")
    ));
    s.push_str("| project | build | files | labels | pruned (infeasible) | unknown | compiled out | covered | raw | cleaned | test runs (failed) | alarms | not linked by a test | exits | trees identical | project / measure (s) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} ({}) | {} | {} | {} / {} | {} | {:.0} / {:.0} |\n",
            r.project,
            r.build_system,
            r.files,
            r.labels,
            r.pruned,
            r.infeasible,
            r.unknown,
            r.compiled_out,
            r.covered,
            pct(r.raw_percent),
            pct(r.cleaned_percent),
            r.test_runs,
            r.failed_runs,
            r.alarms,
            if r.files_not_built.is_empty() {
                "-".to_string()
            } else {
                r.files_not_built.join(", ")
            },
            r.project_exit,
            r.measure_exit,
            if r.trees_identical { "yes" } else { "no" },
            r.project_seconds,
            r.measure_seconds
        ));
    }
    s.push_str(
        "\n## What the tests leave uncovered, settled\n\n\
         Of the labels the project's own tests leave uncovered: proved infeasible by `project`, \
         shown feasible by a test `covprune project witness -o OUT` wrote (each file's runner \
         linked with the project's other files compiled from the compilation database), or \
         neither. Before: after `project measure`; after: after `project witness`. Every test \
         written is built again on its own with the recording runtime and checked to cover the \
         labels it claims; the tests are then added to a copy of the project with the snippet \
         `project witness` writes (CMake, Meson) and run by the project's own test runner.\n\n\
         | project | criterion | uncovered | infeasible | settled before | shown feasible | settled after | neither | tests written (checked, broken) | in the project's suite (passed / added) | witness (s) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        for (b, a) in r.settled_before.iter().zip(&r.settled_after) {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} ({}, {}) | {} | {:.0} |\n",
                r.project,
                a.criterion,
                a.uncovered,
                a.infeasible,
                pct(b.percent()),
                a.shown_feasible,
                pct(a.percent()),
                a.neither,
                r.tests_written,
                r.tests_checked,
                r.tests_broken,
                r.suite_tests
                    .map_or_else(|| "-".to_string(), |(p, t)| format!("{p} / {t}")),
                r.witness_seconds
            ));
        }
    }
    s
}
