//! The worker pool benchmark: the same prune run with `--jobs 1`, `--jobs 2`, ..., and what
//! the machine itself allows: N independent `--jobs 1` runs at once.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};

use crate::{all, annotated_outputs, machine_note, proc_status_kb, process_tree, Args};

/// The worker pool: the same prune run with `--jobs 1`, `--jobs 2`, ... as child processes,
/// wall time and peak resident memory of each (sampled from /proc), and the speed-ups.
/// `COVPRUNE_POOL_FILE` (default: the corpus's sqlite3.c), `COVPRUNE_POOL_CRITERIA` (CC),
/// `COVPRUNE_POOL_TIMEOUT_S` (0.3), `COVPRUNE_POOL_BUDGET_S` (8), `COVPRUNE_POOL_JOBS`
/// (`1,2`; the first is the speed-ups' base), `COVPRUNE_POOL_REPEAT` (1: rounds of every count
/// in turn, each count's median wall time reported). Each round also runs, for each count N
/// above 1, N independent `--jobs 1` runs of copies of the file at once: the machine's ceiling
/// (N times the one run's time over theirs) is the speed-up N workers could reach if nothing
/// were shared between them. Writes `artifacts/pool-STEM.{md,json}`.
pub(crate) fn pool_bench(args: &Args) -> Result<()> {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let file = PathBuf::from(env(
        "COVPRUNE_POOL_FILE",
        &args
            .corpus
            .join("sqlite-3.17.0/sqlite3.c")
            .display()
            .to_string(),
    ))
    .canonicalize()?;
    let criteria = env("COVPRUNE_POOL_CRITERIA", "CC");
    let timeout = env("COVPRUNE_POOL_TIMEOUT_S", "0.3");
    let budget = env("COVPRUNE_POOL_BUDGET_S", "8");
    let job_counts: Vec<usize> = env("COVPRUNE_POOL_JOBS", "1,2")
        .split(',')
        .map(|j| j.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("COVPRUNE_POOL_JOBS: {e}"))?;
    if job_counts.is_empty() || job_counts.contains(&0) {
        bail!("COVPRUNE_POOL_JOBS: give worker counts of at least 1, e.g. 1,2,4");
    }
    let repeat: usize = env("COVPRUNE_POOL_REPEAT", "1")
        .parse()
        .ok()
        .filter(|&r| r > 0)
        .ok_or_else(|| {
            anyhow::anyhow!("COVPRUNE_POOL_REPEAT: give a number of rounds of at least 1")
        })?;
    let exe = std::env::current_exe()?.with_file_name("covprune");
    let work = std::env::temp_dir().join(format!("covprune-pool-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let st = std::process::Command::new(&exe)
        .args([
            "annotate",
            &file.display().to_string(),
            "--criteria",
            &criteria,
            "-o",
        ])
        .arg(&work)
        .arg(format!(
            "-I{}",
            file.parent().unwrap_or(Path::new(".")).display()
        ))
        .current_dir(file.parent().unwrap_or(Path::new(".")))
        .status()?;
    if !st.success() {
        bail!("annotate failed");
    }
    let (stem, annotated, labels) = annotated_outputs(&work, &file);
    let fresh = std::fs::read_to_string(&labels)?;
    let prune = PruneRun {
        exe: &exe,
        timeout: &timeout,
        budget: &budget,
        file: &file,
    };
    // Independent runs' wall times (all N at once), by N.
    let mut ceilings: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    let mut rows = Vec::new();
    let mut ledgers = Vec::new();
    // Each count's runs, `repeat` rounds of every count in turn (a machine's speed drifts
    // over minutes): wall times and peaks.
    let mut runs: std::collections::BTreeMap<usize, Vec<(f64, u64, u64)>> =
        std::collections::BTreeMap::new();
    let rounds = (0..repeat).flat_map(|_| job_counts.iter().copied());
    for jobs in rounds {
        std::fs::write(&labels, &fresh)?;
        let t = Instant::now();
        let mut child = prune
            .command(&annotated, jobs)
            .stdout(std::fs::File::create(work.join("summary.json"))?)
            .spawn()?;
        // The supervisor and its worker processes: the peak of their summed resident sizes
        // (sampled), and the largest single process's peak.
        let mut peak_sum_kb: u64 = 0;
        let mut peak_one_kb: u64 = 0;
        let status = loop {
            let mut sum = 0;
            for pid in process_tree(child.id()) {
                sum += proc_status_kb(pid, "VmRSS:");
                peak_one_kb = peak_one_kb.max(proc_status_kb(pid, "VmHWM:"));
            }
            peak_sum_kb = peak_sum_kb.max(sum);
            if let Some(s) = child.try_wait()? {
                break s;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        let wall = t.elapsed().as_secs_f64();
        if !status.success() {
            bail!("prune --jobs {jobs} failed: {status}");
        }
        let ledger = std::fs::read_to_string(work.join(format!("{stem}_labels.covprune.json")))?;
        // The same row as `all` writes for this unit, so that RESULTS.md has it.
        if criteria.split(',').count() == 1 {
            let summary: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(work.join("summary.json"))?)?;
            let program = if stem == "sqlite3" {
                "sqlite".to_string()
            } else {
                stem.clone()
            };
            let (row, _) = all::make_row(
                &all::RowMeta {
                    program: &program,
                    file: &stem,
                    loc: all::non_blank_lines(&file),
                    criterion: &criteria,
                    jobs,
                    timeout_ms: timeout.parse().unwrap_or(0),
                    function_budget_s: budget.parse().unwrap_or(0),
                    steps: all::FULL_STEPS,
                },
                &summary,
                &ledger,
                wall,
                peak_sum_kb / 1024,
            )?;
            let path = all::row_file(&args.out, &program, &stem, &criteria, jobs);
            std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
            std::fs::write(&path, serde_json::to_string_pretty(&row)? + "\n")?;
        }
        std::fs::write(
            work.join(format!("ledger-{}-jobs{jobs}.json", ledgers.len())),
            &ledger,
        )?;
        ledgers.push(ledger);
        eprintln!(
            "jobs {jobs}: {wall:.1} s, peak {} MB (all processes), {} MB (largest)",
            peak_sum_kb / 1024,
            peak_one_kb / 1024
        );
        runs.entry(jobs)
            .or_default()
            .push((wall, peak_sum_kb / 1024, peak_one_kb / 1024));
        if jobs > 1 {
            let (wall, theirs) = prune.independent(&work, &stem, &fresh, jobs)?;
            eprintln!("{jobs} independent runs of --jobs 1 at once: {wall:.1} s");
            ceilings.entry(jobs).or_default().push(wall);
            ledgers.extend(theirs);
        }
    }
    for &jobs in &job_counts {
        let r = runs.remove(&jobs).unwrap_or_default();
        if r.is_empty() {
            continue;
        }
        let walls: Vec<f64> = r.iter().map(|x| x.0).collect();
        let median = median_of(&walls);
        let peak_sum = r.iter().map(|x| x.1).max().unwrap_or(0);
        let peak_one = r.iter().map(|x| x.2).max().unwrap_or(0);
        let mut row = serde_json::json!({"jobs": jobs, "wall_s": median, "walls_s": walls, "peak_rss_mb": peak_sum, "peak_rss_one_process_mb": peak_one});
        if let Some(c) = ceilings.get(&jobs) {
            row["independent_walls_s"] = serde_json::json!(c);
            row["independent_wall_s"] = serde_json::json!(median_of(c));
        }
        rows.push(row);
    }
    let base = rows[0]["wall_s"].as_f64().unwrap_or(0.0);
    let same = ledgers.iter().all(|l| *l == ledgers[0]);
    let differing = differing_labels(&ledgers)?;
    let mut table = String::new();
    for r in &mut rows {
        let wall = r["wall_s"].as_f64().unwrap_or(0.0);
        let speedup = base / wall.max(1e-9);
        r["speedup"] = serde_json::json!(speedup);
        // The ceiling is against a single run of the same rounds (the base when it is 1).
        let n = r["jobs"].as_u64().unwrap_or(1) as f64;
        let ceiling = match r["independent_wall_s"].as_f64() {
            Some(w) if job_counts[0] == 1 => {
                let c = n * base / w.max(1e-9);
                r["ceiling"] = serde_json::json!(c);
                format!("{c:.2}x")
            }
            _ if n == 1.0 => "1.00x".to_string(),
            _ => "-".to_string(),
        };
        table.push_str(&format!(
            "| {} | {wall:.1} | {speedup:.2}x | {ceiling} | {} | {} |\n",
            r["jobs"], r["peak_rss_mb"], r["peak_rss_one_process_mb"]
        ));
    }
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let md = format!(
        "# Worker pool: {name} ({criteria}), steps 1-3\n\n`COVPRUNE_POOL_FILE={name} COVPRUNE_POOL_CRITERIA={criteria} COVPRUNE_POOL_TIMEOUT_S={timeout} COVPRUNE_POOL_BUDGET_S={budget} COVPRUNE_POOL_JOBS={} COVPRUNE_POOL_REPEAT={repeat} cargo run --release -p covprune-benchmarks -- pool` ({}); {timeout} s per question, {budget} s per function (or per share of a function with more than 150 labels).\n\n`prune --jobs N` runs N worker processes (each with its own Z3) under a supervisor; a big function's questions are split in shares that any worker takes. Each count ran {repeat} time(s), the counts in turn; the wall time is the median (every run's in the JSON file), the speed-up the ratio of medians. The machine's ceiling for N workers: N independent `prune --jobs 1` runs of copies of the file started at once, in every round after the pool's run with N; N times the one run's median over theirs (2.00x if two runs at once take as long as one alone; less where the cores share caches, memory bandwidth or a host). Peak RSS: the largest sum of resident sizes of the supervisor and its workers, sampled every 200 ms; and the largest single process (over the runs).\n\n| jobs | wall (s) | speed-up | machine's ceiling | peak RSS, all processes (MB) | peak RSS, largest process (MB) |\n|---|---|---|---|---|---|\n{table}\nLedgers of the runs byte-identical (the independent runs' too): {same}.\n{differing}",
        job_counts
            .iter()
            .map(|j| j.to_string())
            .collect::<Vec<_>>()
            .join(","),
        machine_note(),
    );
    let stem_name = file
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::create_dir_all(&args.out)?;
    std::fs::write(args.out.join(format!("pool-{stem_name}.md")), md)?;
    std::fs::write(
        args.out.join(format!("pool-{stem_name}.json")),
        serde_json::to_string_pretty(
            &serde_json::json!({"file": name, "criteria": criteria, "timeout_ms": timeout, "budget_s": budget, "runs": rows, "ledgers_identical": same}),
        )? + "\n",
    )?;
    if same {
        let _ = std::fs::remove_dir_all(&work);
    } else {
        eprintln!(
            "the ledgers differ: each run's is kept in {} (ledger-RUN-jobsN.json)",
            work.display()
        );
    }
    Ok(())
}

/// The labels whose entries differ between `ledgers`, one line each with the function and
/// every (status, reason) the runs gave, in run order; empty when none differ.
fn differing_labels(ledgers: &[String]) -> Result<String> {
    let parsed: Vec<serde_json::Value> = ledgers
        .iter()
        .map(|l| serde_json::from_str(l))
        .collect::<Result<_, _>>()?;
    let runs: Vec<&[serde_json::Value]> = parsed
        .iter()
        .map(|v| v["labels"].as_array().map_or(&[][..], Vec::as_slice))
        .collect();
    let first = runs.first().copied().unwrap_or_default();
    let mut lines = Vec::new();
    for (i, entry) in first.iter().enumerate() {
        if runs.iter().all(|r| r.get(i) == Some(entry)) {
            continue;
        }
        let variants: Vec<String> = runs
            .iter()
            .map(|r| {
                let e = r.get(i).cloned().unwrap_or_default();
                let reason = e["reason"].as_str().unwrap_or("");
                format!("{} {reason}", e["status"].as_str().unwrap_or("?"))
                    .trim()
                    .to_string()
            })
            .collect();
        lines.push(format!(
            "- label {} (`{}`): {}",
            entry["id"],
            entry["function"].as_str().unwrap_or(""),
            variants.join(" / ")
        ));
    }
    Ok(match lines.is_empty() {
        true => String::new(),
        false => format!(
            "\nLabels whose entries differ, each run's in run order:\n\n{}\n",
            lines.join("\n")
        ),
    })
}

/// A median (the upper one of an even count).
fn median_of(walls: &[f64]) -> f64 {
    let mut w = walls.to_vec();
    w.sort_by(f64::total_cmp);
    w.get(w.len() / 2).copied().unwrap_or(0.0)
}

/// How the benchmark runs `prune` on an annotated file.
struct PruneRun<'a> {
    exe: &'a Path,
    timeout: &'a str,
    budget: &'a str,
    /// The original source (its directory is the include path and the working directory).
    file: &'a Path,
}

impl PruneRun<'_> {
    fn command(&self, annotated: &Path, jobs: usize) -> std::process::Command {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        let mut c = std::process::Command::new(self.exe);
        c.arg("prune")
            .arg(annotated)
            .args(["--no-progress", "--json", "--jobs", &jobs.to_string()])
            .args([
                "--timeout-s",
                self.timeout,
                "--function-budget-s",
                self.budget,
            ])
            .arg(format!("-I{}", dir.display()))
            .current_dir(dir);
        c
    }

    /// `n` runs of `--jobs 1` at once, each on its own copy of the annotated file (in `work`,
    /// with labels `fresh`): the wall time until the last ends, and their ledgers.
    fn independent(
        &self,
        work: &Path,
        stem: &str,
        fresh: &str,
        n: usize,
    ) -> Result<(f64, Vec<String>)> {
        let prefix = format!("{stem}_labels.");
        let mut copies = Vec::new();
        for k in 0..n {
            let dir = work.join(format!("independent-{k}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)?;
            for e in std::fs::read_dir(work)?.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(&prefix) && !name.contains(".covprune.") {
                    std::fs::copy(e.path(), dir.join(&name))?;
                }
            }
            std::fs::write(dir.join(format!("{stem}_labels.labels")), fresh)?;
            copies.push(dir);
        }
        let t = Instant::now();
        let children = copies
            .iter()
            .map(|dir| {
                self.command(&dir.join(format!("{stem}_labels.c")), 1)
                    .stdout(std::process::Stdio::null())
                    .spawn()
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        for mut c in children {
            let status = c.wait()?;
            if !status.success() {
                bail!("an independent prune --jobs 1 failed: {status}");
            }
        }
        let wall = t.elapsed().as_secs_f64();
        let ledgers = copies
            .iter()
            .map(|dir| std::fs::read_to_string(dir.join(format!("{stem}_labels.covprune.json"))))
            .collect::<std::io::Result<Vec<_>>>()?;
        for dir in &copies {
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok((wall, ledgers))
    }
}
