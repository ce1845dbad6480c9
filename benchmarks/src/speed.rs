//! The speed benchmark: the 28 Siemens runs (7 programs × CC, MCC, GACC, WM), each criterion
//! annotated alone and pruned with `covprune prune --jobs 1` at the default limits, one after
//! another; wall time, peak memory and pruned labels per run, beside the figures of the
//! previous run of the benchmark (the JSON it overwrites); then, once every run is timed, each
//! pruned program measured on its whole SIR universe for soundness alarms (a label claimed polluting that a test
//! covers against its claim). Usage: `cargo run --release -p covprune-benchmarks -- speed DIR
//! [--only PROGRAM] [--criteria LIST] [--exe COVPRUNE] [--no-universes] [--out DIR]`, DIR
//! being a checkout of `houzss/Software-Fault-Location-By-SiemensSuite`. `--smoke` runs tcas
//! and schedule at CC and WM only, without the universes, and writes nothing: the CI-sized
//! version, a minute long.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::suites::{covprune_ok as ok, PROGRAMS};

const CRITERIA: [&str; 4] = ["CC", "MCC", "GACC", "WM"];

/// The criteria whose pruned labels the target counts (WM is timed, not counted).
const COUNTED: [&str; 3] = ["CC", "MCC", "GACC"];

/// One run: a program pruned for one criterion.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Row {
    program: String,
    criterion: String,
    labels: u64,
    pruned: u64,
    infeasible: u64,
    unknown_by_limit: u64,
    seconds: f64,
    peak_rss_mb: u64,
    /// Soundness alarms on the universe (`None`: not measured).
    alarms: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Report {
    commit: String,
    date: String,
    machine: String,
    rows: Vec<Row>,
}

pub fn run(raw: &[String], out_dir: PathBuf) -> Result<()> {
    let mut dir: Option<PathBuf> = None;
    let mut out = out_dir;
    let mut only: Option<String> = None;
    let mut criteria: Vec<String> = CRITERIA.iter().map(|c| c.to_string()).collect();
    let mut exe = std::env::current_exe()?.with_file_name("covprune");
    let mut exe_given = false;
    let mut universes = true;
    let mut smoke = false;
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = it.next().context("--out needs a folder")?.into(),
            "--only" => only = Some(it.next().context("--only needs a program")?.clone()),
            "--exe" => {
                exe = it.next().context("--exe needs a covprune binary")?.into();
                exe_given = true;
            }
            "--criteria" => {
                criteria = it
                    .next()
                    .context("--criteria needs a list")?
                    .split(',')
                    .map(str::to_string)
                    .collect()
            }
            "--no-universes" => universes = false,
            "--smoke" => smoke = true,
            _ if dir.is_none() => dir = Some(a.into()),
            other => bail!("unknown argument {other}"),
        }
    }
    let Some(dir) = dir else {
        bail!("usage: speed DIR [--only PROGRAM] [--criteria LIST] [--exe COVPRUNE] [--no-universes] [--smoke] [--out DIR] (DIR: a checkout of houzss/Software-Fault-Location-By-SiemensSuite)");
    };
    if smoke {
        criteria = vec!["CC".into(), "WM".into()];
        universes = false;
    }
    if !exe.exists() {
        bail!(
            "{} not found: run `cargo build --release` first",
            exe.display()
        );
    }
    let work = std::env::temp_dir().join(format!("covprune-speed-{}", std::process::id()));
    let json_path = out.join("speed-siemens.json");
    let before: Option<Report> = std::fs::read(&json_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let mut rows = Vec::new();
    let mut pruned: Vec<(PathBuf, PathBuf, &[&str])> = Vec::new();
    for &(name, folder, file, link) in PROGRAMS {
        if only.as_deref().is_some_and(|o| o != name)
            || (smoke && !["tcas", "schedule"].contains(&name))
        {
            continue;
        }
        let folder = dir.join(folder);
        let source = folder.join("source.alt/source.orig").join(file);
        if !source.exists() {
            bail!("{} not found", source.display());
        }
        for c in &criteria {
            let pdir = work.join(name).join(c);
            ok(Command::new(&exe)
                .arg("annotate")
                .arg(&source)
                .args(["--criteria", c, "-o"])
                .arg(&pdir))?;
            let annotated = pdir.join(format!("{}_labels.c", file.trim_end_matches(".c")));
            let mut prune = Command::new(&exe);
            prune
                .arg("prune")
                .arg(&annotated)
                .args(["--jobs", "1", "--json", "--no-progress"]);
            let (v, seconds, peak_mb) = timed_json(prune)?;
            let n = |k: &str| v[k].as_u64().unwrap_or(0);
            let unknown_by_limit = unknown_by_limit(&annotated.with_extension("covprune.json"))?;
            let row = Row {
                program: name.into(),
                criterion: c.clone(),
                labels: n("labels"),
                pruned: n("pruned"),
                infeasible: n("infeasible"),
                unknown_by_limit,
                seconds,
                peak_rss_mb: peak_mb,
                alarms: None,
            };
            eprintln!(
                "{name} {c}: {} labels, {} pruned, {:.1} s, {} MB",
                row.labels, row.pruned, row.seconds, row.peak_rss_mb
            );
            rows.push(row);
            pruned.push((folder.clone(), annotated, link));
        }
    }
    // The universes after every timed run, so that their tests weigh on no timing.
    if universes {
        for (row, (folder, annotated, link)) in rows.iter_mut().zip(&pruned) {
            row.alarms = Some(alarms(&exe, folder, annotated, link)?);
            eprintln!(
                "{} {}: {} alarms on the universe",
                row.program,
                row.criterion,
                row.alarms.unwrap_or(0)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let report = Report {
        // A binary given by `--exe` is named by its file name (say, `covprune-COMMIT`).
        commit: match exe_given {
            true => exe.file_name().map_or_else(
                || exe.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            false => crate::commit(),
        },
        date: crate::today(),
        machine: crate::machine_note(),
        rows,
    };
    let md = render(&report, before.as_ref());
    print!("{md}");
    if smoke {
        return Ok(());
    }
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("speed-siemens.md"), &md)?;
    std::fs::write(&json_path, serde_json::to_string_pretty(&report)? + "\n")?;
    Ok(())
}

/// The report in Markdown, each run beside the same run of `before`.
fn render(r: &Report, before: Option<&Report>) -> String {
    let mut md = format!(
        "# Siemens runs: time and pruned labels\n\n\
         Generated by `cargo run --release -p covprune-benchmarks -- speed DIR` ({}, {}, commit \
         {}). Each program annotated for one criterion and pruned with `covprune prune --jobs 1` \
         at the default limits, one run after another; the previous figures are those of the \
         benchmark's previous run ({}). Alarms: labels claimed polluting that a test of the SIR \
         universe covers against the claim (`covprune measure`).\n\n\
         | program | criterion | labels | pruned | before | infeasible | unknown by a limit | s | before s | peak MB | alarms |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
        r.machine,
        r.date,
        r.commit,
        before.map_or("none".into(), |b| format!("commit {}, {}", b.commit, b.date)),
    );
    let prior = |row: &Row| {
        before.and_then(|b| {
            b.rows
                .iter()
                .find(|x| x.program == row.program && x.criterion == row.criterion)
        })
    };
    let dash = || "-".to_string();
    for row in &r.rows {
        let p = prior(row);
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} |",
            row.program,
            row.criterion,
            row.labels,
            row.pruned,
            p.map_or_else(dash, |p| p.pruned.to_string()),
            row.infeasible,
            row.unknown_by_limit,
            row.seconds,
            p.map_or_else(dash, |p| format!("{:.1}", p.seconds)),
            row.peak_rss_mb,
            row.alarms.map_or_else(dash, |a| a.to_string()),
        );
    }
    let total = |rows: &[Row], counted: bool| -> (u64, f64) {
        rows.iter()
            .filter(|x| !counted || COUNTED.contains(&x.criterion.as_str()))
            .fold((0, 0.0), |(p, s), x| (p + x.pruned, s + x.seconds))
    };
    let (pruned, _) = total(&r.rows, true);
    let (_, seconds) = total(&r.rows, false);
    let alarms: u64 = r.rows.iter().filter_map(|x| x.alarms).sum();
    let measured = r.rows.iter().any(|x| x.alarms.is_some());
    let _ = writeln!(
        md,
        "\n{} runs: {seconds:.1} s in all; {pruned} CC/MCC/GACC labels pruned; {}.",
        r.rows.len(),
        if measured {
            format!("{alarms} alarms on the universes")
        } else {
            "universes not run".into()
        }
    );
    if let Some(b) = before {
        let same: Vec<Row> = b
            .rows
            .iter()
            .filter(|x| {
                r.rows
                    .iter()
                    .any(|y| y.program == x.program && y.criterion == x.criterion)
            })
            .cloned()
            .collect();
        let (bp, _) = total(&same, true);
        let (_, bs) = total(&same, false);
        let _ = writeln!(
            md,
            "The same runs before: {bs:.1} s; {bp} CC/MCC/GACC labels pruned."
        );
    }
    md
}

/// The labels of a ledger left unknown by a limit (a budget, a timeout), not found
/// satisfiable.
fn unknown_by_limit(ledger: &Path) -> Result<u64> {
    let text = std::fs::read(ledger).with_context(|| ledger.display().to_string())?;
    let v: serde_json::Value = serde_json::from_slice(&text)?;
    Ok(v["labels"].as_array().map_or(0, |ls| {
        ls.iter()
            .filter(|l| l["status"] == "unknown" && l["reason"] != "satisfiable")
            .count() as u64
    }))
}

/// The big-function benchmark: one generated function of 30,000 statements (10,000 `if`s,
/// each with an assignment on either branch; 20,000 CC labels) pruned under a 10 s function
/// budget at the default `--jobs`: wall time and peak memory, beside the budget. Usage: `cargo
/// run --release -p covprune-benchmarks -- big-function [--exe COVPRUNE]`; prints, writes
/// nothing.
pub fn big_function(raw: &[String]) -> Result<()> {
    let mut exe = std::env::current_exe()?.with_file_name("covprune");
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--exe" => exe = it.next().context("--exe needs a covprune binary")?.into(),
            other => bail!("unknown argument {other} (usage: big-function [--exe COVPRUNE])"),
        }
    }
    let work = std::env::temp_dir().join(format!("covprune-big-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let mut text = String::from("int big(int x, int y) {\n  int s = 0;\n");
    for k in 0..10_000 {
        let _ = writeln!(
            text,
            "  if (x > {}) s += {}; else s -= y;",
            k % 97,
            k % 13 + 1
        );
    }
    text.push_str("  return s;\n}\n");
    let source = work.join("big.c");
    std::fs::write(&source, text)?;
    let out = work.join("out");
    ok(Command::new(&exe)
        .arg("annotate")
        .arg(&source)
        .args(["--criteria", "CC", "-o"])
        .arg(&out))?;
    let mut prune = Command::new(&exe);
    prune.arg("prune").arg(out.join("big_labels.c")).args([
        "--function-budget-s",
        "10",
        "--json",
        "--no-progress",
    ]);
    let (v, seconds, peak_mb) = timed_json(prune)?;
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "big function ({} labels, 10 s budget, default --jobs): {seconds:.1} s, peak {} MB; {} pruned, {} unknown",
        v["labels"],
        peak_mb,
        v["pruned"],
        v["unknown"]
    );
    Ok(())
}

/// Soundness alarms of `annotated` (pruned) on the program's SIR universe.
fn alarms(exe: &Path, folder: &Path, annotated: &Path, link: &[&str]) -> Result<u64> {
    let universe = folder.join("testplans.alt/universe");
    let inputs = folder.join("inputs");
    let cwd = if inputs.is_dir() {
        inputs
    } else {
        folder.to_path_buf()
    };
    let o = Command::new(exe)
        .arg("measure")
        .arg(annotated)
        .arg("--tests")
        .arg(&universe)
        .arg("--cwd")
        .arg(&cwd)
        .arg("--json")
        .args(link)
        .stderr(Stdio::inherit())
        .output()?;
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).with_context(|| {
        format!(
            "measure {} printed no JSON (exit {:?})",
            annotated.display(),
            o.status.code()
        )
    })?;
    Ok(v["alarms"].as_array().map_or(0, |a| a.len() as u64))
}

/// Runs a covprune command that must succeed and print JSON (its standard error shown): the
/// JSON, its wall time in seconds, and the peak resident memory of its process tree in MB
/// ([`crate::all::run_sampled`]).
fn timed_json(mut cmd: Command) -> Result<(serde_json::Value, f64, u64)> {
    let t = Instant::now();
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let (output, peak_mb) = crate::all::run_sampled(cmd)?;
    let seconds = t.elapsed().as_secs_f64();
    if !output.status.success() {
        bail!("covprune failed (exit {:?})", output.status.code());
    }
    let v = serde_json::from_slice(&output.stdout).context("covprune printed no JSON")?;
    Ok((v, seconds, peak_mb))
}
