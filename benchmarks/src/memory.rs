//! The memory benchmark: how many labels the prover decides, and how fast, on the
//! paper's label sets of memory-heavy code. Two sets: the Siemens programs annotated by covprune
//! for CC, MCC, GACC and WM (the same CC/MCC/GACC sets as LAnnotate's, hence the paper's), and
//! LAnnotate's labels for the paper's four OpenSSL files
//! (a tarball of LAnnotate 0.2's output on them, in `$COVPRUNE_LANNOTATE_OPENSSL`). Each file is pruned from a fresh labels file;
//! per set and criterion it prints labels, pruned (by step), unknown by reason, questions asked
//! and questions answered per second, and the wall time.
//!
//! Usage: `cargo run --release -p covprune-benchmarks -- memory [--siemens DIR] [--openssl]
//! [--criteria CC,MCC,...] [--exe PATH] [--tag NAME] [--jobs N] [-- PRUNE-OPTIONS...]`; writes
//! `artifacts/memory-TAG.md` and `.json`. `--exe` measures another build (a "before" binary).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

const SIEMENS: &[(&str, &str)] = &[
    ("tcas", "tcas/source.alt/source.orig/tcas.c"),
    ("schedule", "schedule/source.alt/source.orig/schedule.c"),
    ("schedule2", "schedule2/source.alt/source.orig/schedule2.c"),
    ("tot_info", "totinfo/source.alt/source.orig/tot_info.c"),
    (
        "print_tokens",
        "printtokens/source.alt/source.orig/print_tokens.c",
    ),
    (
        "print_tokens2",
        "printtokens2/source.alt/source.orig/print_tokens2.c",
    ),
    ("replace", "replace/source.alt/source.orig/replace.c"),
];

const OPENSSL: &[&str] = &["aes_core", "pem_lib", "bn_exp", "err"];

/// One annotated file ready to prune: the program, the annotated source, its labels file and
/// the labels file's fresh content.
struct Unit {
    set: &'static str,
    program: String,
    criterion: String,
    annotated: PathBuf,
    labels: PathBuf,
    fresh: String,
    /// Preprocessor flags (the original's folder, for its local headers).
    flags: Vec<String>,
}

pub(crate) fn run(raw: &[String], out_dir: PathBuf) -> Result<()> {
    let mut siemens: Option<PathBuf> = None;
    let mut openssl = false;
    let mut criteria = vec!["CC", "MCC", "GACC", "WM"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    let mut exe = std::env::current_exe()?.with_file_name("covprune");
    let mut tag = String::from("after");
    let mut jobs = 2usize;
    let mut extra: Vec<String> = Vec::new();
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().context(format!("{a} needs a value"));
        match a.as_str() {
            "--siemens" => siemens = Some(value()?.into()),
            "--openssl" => openssl = true,
            "--criteria" => criteria = value()?.split(',').map(String::from).collect(),
            "--exe" => exe = value()?.into(),
            "--tag" => tag = value()?,
            "--jobs" => jobs = value()?.parse()?,
            "--" => {
                extra = it.by_ref().cloned().collect();
                break;
            }
            other => bail!("unknown argument {other}"),
        }
    }
    if siemens.is_none() && !openssl {
        bail!("usage: memory [--siemens DIR] [--openssl] [--criteria LIST] [--exe PATH] [--tag NAME] [--jobs N] [-- PRUNE-OPTIONS]");
    }
    let work = std::env::temp_dir().join(format!("covprune-memory-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let mut units = Vec::new();
    if let Some(dir) = &siemens {
        units.extend(siemens_units(&exe, dir, &criteria, &work)?);
    }
    if openssl {
        units.extend(openssl_units(&criteria, &work)?);
    }
    let mut rows: BTreeMap<(String, String), Value> = BTreeMap::new();
    let mut per_file = Vec::new();
    for u in &units {
        std::fs::write(&u.labels, &u.fresh)?;
        let t = Instant::now();
        let out = Command::new(&exe)
            .args(["prune", &u.annotated.display().to_string()])
            .args(["--no-progress", "--json", "--jobs", &jobs.to_string()])
            .args(&u.flags)
            .args(&extra)
            .output()?;
        let wall = t.elapsed().as_secs_f64();
        if !out.status.success() {
            bail!(
                "prune {} failed: {}\n{}",
                u.annotated.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let summary: Value = serde_json::from_slice(&out.stdout)?;
        let ledger_path = summary["ledger"].as_str().context("no ledger in summary")?;
        let ledger: Value = serde_json::from_str(&std::fs::read_to_string(ledger_path)?)?;
        let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
        for l in ledger["labels"].as_array().into_iter().flatten() {
            if l["status"] == "unknown" {
                let r = l["reason"].as_str().unwrap_or("?").to_string();
                *reasons.entry(r).or_default() += 1;
            }
        }
        let questions: u64 = summary["queries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .sum();
        eprintln!(
            "{} {} {}: {} labels, {} pruned, {:.1} s, {} questions, undecided {:?}",
            u.set,
            u.program,
            u.criterion,
            summary["labels"],
            summary["pruned"],
            wall,
            questions,
            reasons
                .iter()
                .filter(|(r, _)| r.as_str() != "satisfiable")
                .collect::<Vec<_>>()
        );
        let row = json!({
            "set": u.set, "program": u.program, "criterion": u.criterion,
            "labels": summary["labels"], "infeasible": summary["infeasible"],
            "duplicate_step2": summary["duplicate_step2"], "duplicate_step3": summary["duplicate_step3"],
            "subsumed": summary["subsumed"], "pruned": summary["pruned"],
            "questions": questions, "wall_s": wall, "unknown": reasons,
        });
        let total = rows
            .entry((u.set.to_string(), u.criterion.clone()))
            .or_insert_with(|| json!({"labels":0,"infeasible":0,"duplicate_step2":0,"duplicate_step3":0,"subsumed":0,"pruned":0,"questions":0,"wall_s":0.0,"unknown":{}}));
        add_row(total, &row);
        per_file.push(row);
    }
    let _ = std::fs::remove_dir_all(&work);
    let md = table(&rows, &tag, &exe, jobs, &extra);
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join(format!("memory-{tag}.md")), &md)?;
    let totals: Vec<Value> = rows
        .iter()
        .map(|((set, crit), v)| {
            let mut v = v.clone();
            v["set"] = json!(set);
            v["criterion"] = json!(crit);
            v
        })
        .collect();
    std::fs::write(
        out_dir.join(format!("memory-{tag}.json")),
        serde_json::to_string_pretty(
            &json!({"tag": tag, "jobs": jobs, "prune_options": extra, "totals": totals, "files": per_file}),
        )?,
    )?;
    print!("{md}");
    Ok(())
}

fn add_row(total: &mut Value, row: &Value) {
    for k in [
        "labels",
        "infeasible",
        "duplicate_step2",
        "duplicate_step3",
        "subsumed",
        "pruned",
        "questions",
    ] {
        total[k] = json!(total[k].as_u64().unwrap_or(0) + row[k].as_u64().unwrap_or(0));
    }
    total["wall_s"] =
        json!(total["wall_s"].as_f64().unwrap_or(0.0) + row["wall_s"].as_f64().unwrap_or(0.0));
    for (r, n) in row["unknown"].as_object().into_iter().flatten() {
        let cur = total["unknown"][r].as_u64().unwrap_or(0);
        total["unknown"][r] = json!(cur + n.as_u64().unwrap_or(0));
    }
}

fn table(
    rows: &BTreeMap<(String, String), Value>,
    tag: &str,
    exe: &Path,
    jobs: usize,
    extra: &[String],
) -> String {
    let mut md = format!(
        "# Memory benchmark ({tag})\n\nGenerated by `cargo run --release -p covprune-benchmarks -- memory ...` with `{}`, `--jobs {jobs}`{}; {}.\n\n\
         | set | criterion | labels | pruned (infeasible / dup s2 / dup s3 / subsumed) | undecided | unknown by reason (other than satisfiable) | questions | questions/s | wall s |\n|---|---|---|---|---|---|---|---|---|\n",
        exe.file_name().map_or("covprune".into(), |n| n.to_string_lossy()),
        if extra.is_empty() { String::new() } else { format!(" `{}`", extra.join(" ")) },
        crate::machine_note()
    );
    for ((set, crit), v) in rows {
        let n = |k: &str| v[k].as_u64().unwrap_or(0);
        let undecided: u64 = v["unknown"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(r, _)| r.as_str() != "satisfiable")
            .map(|(_, n)| n.as_u64().unwrap_or(0))
            .sum();
        let reasons: Vec<String> = v["unknown"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(r, _)| r.as_str() != "satisfiable")
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        let wall = v["wall_s"].as_f64().unwrap_or(0.0);
        let _ = writeln!(
            md,
            "| {set} | {crit} | {} | {} ({} / {} / {} / {}) | {} ({:.1}%) | {} | {} | {:.1} | {:.1} |",
            n("labels"),
            n("pruned"),
            n("infeasible"),
            n("duplicate_step2"),
            n("duplicate_step3"),
            n("subsumed"),
            undecided,
            100.0 * undecided as f64 / n("labels").max(1) as f64,
            if reasons.is_empty() { "-".into() } else { reasons.join(", ") },
            n("questions"),
            n("questions") as f64 / wall.max(0.001),
            wall
        );
    }
    md
}

fn siemens_units(exe: &Path, dir: &Path, criteria: &[String], work: &Path) -> Result<Vec<Unit>> {
    let mut units = Vec::new();
    for (program, rel) in SIEMENS {
        let src = dir.join(rel);
        if !src.exists() {
            bail!("{} not found (is {} a checkout of houzss/Software-Fault-Location-By-SiemensSuite?)", src.display(), dir.display());
        }
        for crit in criteria {
            let out = work.join("siemens").join(program).join(crit);
            std::fs::create_dir_all(&out)?;
            let include = format!(
                "-I{}",
                src.parent().map_or(".".into(), |p| p.display().to_string())
            );
            let (_, annotated, labels) =
                crate::annotate_into(exe, &src, crit, &out, std::slice::from_ref(&include))?;
            let fresh = std::fs::read_to_string(&labels)?;
            units.push(Unit {
                set: "siemens",
                program: program.to_string(),
                criterion: crit.clone(),
                annotated,
                labels,
                fresh,
                flags: vec![include.clone()],
            });
        }
    }
    Ok(units)
}

fn openssl_units(criteria: &[String], work: &Path) -> Result<Vec<Unit>> {
    let Some(root) = std::env::var_os("COVPRUNE_LANNOTATE_OPENSSL") else {
        bail!("--openssl needs COVPRUNE_LANNOTATE_OPENSSL: a directory holding lannotate-openssl-1.1.1w.tar.gz, LAnnotate 0.2's labels for the four OpenSSL files");
    };
    let tarball = Path::new(&root).join("lannotate-openssl-1.1.1w.tar.gz");
    let dest = work.join("openssl");
    std::fs::create_dir_all(&dest)?;
    let st = Command::new("tar")
        .arg("xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(&dest)
        .status()
        .with_context(|| format!("extracting {}", tarball.display()))?;
    if !st.success() {
        bail!("cannot extract {}", tarball.display());
    }
    let mut units = Vec::new();
    for crit in criteria {
        for file in OPENSSL {
            let d = dest.join("lannotate-openssl-1.1.1w").join(crit);
            let annotated = d.join(format!("{file}_labels.i"));
            let labels = d.join(format!("{file}_labels.labels"));
            let fresh = std::fs::read_to_string(&labels)
                .with_context(|| format!("reading {}", labels.display()))?;
            units.push(Unit {
                set: "openssl",
                program: file.to_string(),
                criterion: crit.clone(),
                annotated,
                labels,
                fresh,
                flags: Vec::new(),
            });
        }
    }
    Ok(units)
}
