//! `differential`: the engine's claims on the corpus (zlib, gzip, the four OpenSSL files,
//! each annotated with CC and with MCC) checked by the reference prover, whose models are
//! replayed for real (`covprune::witness::replay`). A claim a replay refutes is a failure:
//! the command then exits non-zero, naming the claim and the run.
//!
//! Usage: `cargo run --release -p covprune-benchmarks -- differential [--corpus DIR]
//! [--out DIR] [--only FILE,...] [--timeout-ms 300] [--function-budget-s 8] [--jobs 2]`.
//! Writes `differential.md` and `differential.json` in the output directory.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use covprune::frontend::{self, PreprocessOptions};
use covprune::prune::reference::{self, Answer};
use covprune::prune::{run as prune, PruneConfig};
use covprune::witness::{replay::replay, RunOptions};
use covprune_encoders::{Criterion, Limits};

struct Options {
    corpus: PathBuf,
    out: PathBuf,
    only: Vec<String>,
    timeout_ms: u32,
    function_budget_s: u64,
    jobs: usize,
}

fn parse(raw: &[String], corpus: PathBuf, out: PathBuf) -> Result<Options> {
    let mut o = Options {
        corpus,
        out,
        only: Vec::new(),
        timeout_ms: 300,
        function_budget_s: 8,
        jobs: 2,
    };
    let mut it = raw.iter();
    while let Some(flag) = it.next() {
        let value = it.next().context("flag without a value")?;
        match flag.as_str() {
            "--corpus" => o.corpus = value.into(),
            "--out" => o.out = value.into(),
            "--only" => o.only = value.split(',').map(str::to_string).collect(),
            "--timeout-ms" => o.timeout_ms = value.parse()?,
            "--function-budget-s" => o.function_budget_s = value.parse()?,
            "--jobs" => o.jobs = value.parse()?,
            other => bail!("unknown flag {other}"),
        }
    }
    Ok(o)
}

#[derive(Default, serde::Serialize)]
struct Row {
    project: String,
    file: String,
    criterion: String,
    labels: usize,
    claims: usize,
    holds: usize,
    broken: usize,
    unknown: usize,
    not_together: usize,
    calls_replayed: usize,
    refuted: Vec<String>,
    seconds: f64,
}

pub fn run(raw: &[String], corpus: PathBuf, out: PathBuf) -> Result<()> {
    let o = parse(raw, corpus, out)?;
    let work = std::env::temp_dir().join(format!("covprune-differential-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let mut config = PruneConfig::default();
    config.solver.timeout_ms = o.timeout_ms;
    config.solver.rlimit = covprune::smt::rlimit_for(o.timeout_ms);
    config.function_budget_s = o.function_budget_s;
    config.jobs = o.jobs;
    let mut rows = Vec::new();
    // The corpus but SQLite: zlib's, gzip's and the four OpenSSL files.
    let files = crate::corpus_files(&o.corpus)?;
    for (project, path) in files.into_iter().filter(|(p, _)| p != "sqlite") {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if !o.only.is_empty() && !o.only.contains(&file) {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let typing = frontend::load(&path, &PreprocessOptions::default())?;
        for (name, criterion) in [("CC", Criterion::Cc), ("MCC", Criterion::Mcc)] {
            let t0 = Instant::now();
            let annotated = covprune::annotate::annotate(
                text.as_bytes(),
                Some(&typing.program),
                &[criterion],
                &Limits::default(),
            );
            let dir = work.join(format!("{project}-{file}-{name}"));
            std::fs::create_dir_all(&dir)?;
            let annotated_path = dir.join(file.replace(".i", "_labels.i"));
            std::fs::write(&annotated_path, &annotated.text)?;
            let program = frontend::load(&annotated_path, &PreprocessOptions::default())?.program;
            let (verdicts, _) = prune(&program, &config, &|_| {});
            let claims = reference::claims(&verdicts);
            let budget = Duration::from_secs(o.function_budget_s);
            let checked = reference::check(&program, &config, &claims, budget);
            let mut row = Row {
                project: project.clone(),
                file: file.clone(),
                criterion: name.to_string(),
                labels: verdicts.len(),
                claims: checked.len(),
                ..Row::default()
            };
            for c in &checked {
                match c.answer {
                    Answer::Holds => row.holds += 1,
                    Answer::Broken(_) => row.broken += 1,
                    Answer::Unknown => row.unknown += 1,
                    Answer::NotTogether => row.not_together += 1,
                }
            }
            // The file alone: calls of other files' functions are left unresolved, so a run
            // that reaches one crashes there (its labels covered before still count for an
            // infeasible claim; its relations are not checked).
            let opts = RunOptions {
                cc: "cc".into(),
                flags: vec!["-Wl,--unresolved-symbols=ignore-all".into()],
                link: Vec::new(),
                preprocessed: true,
                timeout: Duration::from_secs(5),
            };
            let runs = dir.join("runs");
            std::fs::create_dir_all(&runs)?;
            let (refuted, n) = replay(&program, &annotated_path, &checked, &opts, &runs)
                .with_context(|| format!("replaying on {file} ({name})"))?;
            row.calls_replayed = n;
            row.refuted = refuted
                .iter()
                .map(|r| {
                    format!(
                        "{}: label {} {} refuted by {}",
                        r.function, r.label, r.claim, r.run
                    )
                })
                .collect();
            row.seconds = t0.elapsed().as_secs_f64();
            eprintln!(
                "{project:8} {file:14} {name:4} {} labels, {} claims: {} hold, {} broken ({} calls replayed), {} unknown, {} not together, {} refuted, {:.1} s",
                row.labels, row.claims, row.holds, row.broken, row.calls_replayed, row.unknown,
                row.not_together, row.refuted.len(), row.seconds
            );
            rows.push(row);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    write(&o, &rows)?;
    let refuted: Vec<&String> = rows.iter().flat_map(|r| &r.refuted).collect();
    if !refuted.is_empty() {
        bail!(
            "{} claim(s) refuted by real runs:\n{}",
            refuted.len(),
            refuted
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    Ok(())
}

fn write(o: &Options, rows: &[Row]) -> Result<()> {
    let sum = |f: fn(&Row) -> usize| rows.iter().map(f).sum::<usize>();
    let mut md = format!(
        "# The reference prover on the corpus\n\nGenerated by `cargo run --release -p covprune-benchmarks -- differential` ({} ms per question, {} s per function, {} jobs; {}): each file annotated with CC, then MCC, pruned (steps 1-3), every claim asked again of the reference prover (the plainest sound encoding, whole questions), and every model it finds replayed as a real call of the file's function, compiled alone under the sanitizers (calls of other files' functions unresolved).\n\n| project | file | criterion | labels | claims | hold | broken by a model | calls replayed | unknown | not encoded together | refuted by a run | time (s) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        o.timeout_ms,
        o.function_budget_s,
        o.jobs,
        crate::machine_note()
    );
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} |\n",
            r.project,
            r.file,
            r.criterion,
            r.labels,
            r.claims,
            r.holds,
            r.broken,
            r.calls_replayed,
            r.unknown,
            r.not_together,
            r.refuted.len(),
            r.seconds
        ));
    }
    md.push_str(&format!(
        "\nTotal: {} claims, {} confirmed by the reference, {} broken by its models ({} calls replayed), {} unknown, {} not encoded together; {} refuted by a real run.\n",
        sum(|r| r.claims),
        sum(|r| r.holds),
        sum(|r| r.broken),
        sum(|r| r.calls_replayed),
        sum(|r| r.unknown),
        sum(|r| r.not_together),
        sum(|r| r.refuted.len())
    ));
    for r in rows.iter().flat_map(|r| &r.refuted) {
        md.push_str(&format!("- {r}\n"));
    }
    std::fs::create_dir_all(&o.out)?;
    std::fs::write(o.out.join("differential.md"), md)?;
    let json = serde_json::json!({
        "benchmark": "differential",
        "command": "cargo run --release -p covprune-benchmarks -- differential",
        "timeout_ms": o.timeout_ms,
        "function_budget_s": o.function_budget_s,
        "jobs": o.jobs,
        "machine": crate::machine_note(),
        "rows": rows,
    });
    std::fs::write(
        o.out.join("differential.json"),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    Ok(())
}
