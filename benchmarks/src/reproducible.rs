//! The reproducibility benchmark: zlib's 15 files annotated for CC and pruned three times by
//! the `covprune` binary (`--jobs 1` twice, `--jobs 2` once); are the three ledgers of each
//! file byte-identical, and how long does each run take? Writes `reproducible.md` and `.json`.
//!
//! Usage: `cargo run --release -p covprune-benchmarks -- reproducible [--corpus DIR]`;
//! `COVPRUNE_REPRO_ARGS` adds prune options (e.g. `--rlimit 0` for the wall-clock budget),
//! `COVPRUNE_REPRO_TAG` names the output files (`reproducible-TAG.md`); `COVPRUNE_REPRO_RUNS=1`
//! makes only the first run (a wall-time baseline of another build).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::Args;

/// The runs: a name and `--jobs`.
const RUNS: [(&str, usize); 3] = [("jobs1-a", 1), ("jobs1-b", 1), ("jobs2", 2)];

pub(crate) fn run(args: &Args) -> Result<()> {
    let zdir = args.corpus.join("zlib-1.3.2");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&zdir)
        .with_context(|| format!("reading {}", zdir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let extra: Vec<String> = std::env::var("COVPRUNE_REPRO_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let tag = std::env::var("COVPRUNE_REPRO_TAG").unwrap_or_default();
    let exe = std::env::current_exe()?.with_file_name("covprune");
    let work = std::env::temp_dir().join(format!("covprune-repro-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let include = format!("-I{}", zdir.display());
    // Annotate once; each run starts from the fresh labels file.
    let mut units = Vec::new();
    for file in &files {
        let (stem, annotated, labels) =
            crate::annotate_into(&exe, file, "CC", &work, std::slice::from_ref(&include))?;
        let fresh = std::fs::read_to_string(&labels)?;
        units.push((stem, annotated, labels, fresh));
    }
    let mut walls = Vec::new();
    // ledgers[file][run]
    let mut ledgers: Vec<Vec<String>> = vec![Vec::new(); units.len()];
    let runs: usize = std::env::var("COVPRUNE_REPRO_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS.len())
        .clamp(1, RUNS.len());
    for &(name, jobs) in &RUNS[..runs] {
        let t = Instant::now();
        for (k, (stem, annotated, labels, fresh)) in units.iter().enumerate() {
            std::fs::write(labels, fresh)?;
            let _ = std::fs::remove_file(work.join(format!("{stem}_labels.covprune.journal")));
            let out = std::process::Command::new(&exe)
                .args(["prune", &annotated.display().to_string(), "--no-progress"])
                .args(["--jobs", &jobs.to_string()])
                .args(&extra)
                .arg(&include)
                .output()?;
            if !out.status.success() {
                bail!(
                    "prune {} ({name}) failed: {}\n{}",
                    annotated.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            ledgers[k].push(std::fs::read_to_string(
                work.join(format!("{stem}_labels.covprune.json")),
            )?);
        }
        let wall = t.elapsed().as_secs_f64();
        eprintln!("{name}: {wall:.1} s");
        walls.push(wall);
    }
    let mut md = format!(
        "# Reproducibility: zlib CC, three runs\n\n`cargo run --release -p covprune-benchmarks -- reproducible` ({}); prune options: `{}`.\n\nEach of zlib's {} files annotated for CC and pruned by the binary (steps 1-3) in three runs: `--jobs 1` twice, `--jobs 2` once.\n\n| run | jobs | wall, all files (s) |\n|---|---|---|\n",
        crate::machine_note(),
        if extra.is_empty() { "defaults".to_string() } else { extra.join(" ") },
        units.len()
    );
    for ((name, jobs), wall) in RUNS.iter().zip(&walls) {
        md.push_str(&format!("| {name} | {jobs} | {wall:.1} |\n"));
    }
    md.push_str(
        "\n| file | labels | pruned (first run) | ledgers byte-identical |\n|---|---|---|---|\n",
    );
    let mut identical = 0;
    let mut rows = Vec::new();
    for ((stem, _, _, fresh), runs) in units.iter().zip(&ledgers) {
        let same = runs.windows(2).all(|w| w[0] == w[1]);
        identical += usize::from(same);
        let labels = fresh.lines().skip(1).filter(|l| !l.is_empty()).count();
        md.push_str(&format!("| {stem}.c | {labels} | {same} |\n"));
        rows.push(
            serde_json::json!({"file": format!("{stem}.c"), "labels": labels, "identical": same}),
        );
    }
    md.push_str(&format!(
        "\n**{identical} of {} files** have three byte-identical ledgers.\n",
        units.len()
    ));
    let suffix = if tag.is_empty() {
        String::new()
    } else {
        format!("-{tag}")
    };
    std::fs::create_dir_all(&args.out)?;
    std::fs::write(args.out.join(format!("reproducible{suffix}.md")), &md)?;
    std::fs::write(
        args.out.join(format!("reproducible{suffix}.json")),
        serde_json::to_string_pretty(&serde_json::json!({
            "prune_args": extra,
            "runs": RUNS.iter().zip(&walls).map(|((n, j), w)| serde_json::json!({"run": n, "jobs": j, "wall_s": w})).collect::<Vec<_>>(),
            "files": rows,
            "identical_files": identical,
        }))? + "\n",
    )?;
    print!("{md}");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
