//! Benchmark harness: runs covprune's stages on the real-world corpus and writes the figures
//! the README quotes to `artifacts/`. Usage: `cargo run --release -p covprune-benchmarks --
//! frontend [--corpus DIR] [--out DIR]`.

mod all;
mod memory;
mod plot;
mod project;
mod reproducible;
mod siemens;
mod suites;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use covprune::frontend::{self, PreprocessOptions};
use covprune::ir::DiagnosticKind;

struct Args {
    command: String,
    corpus: PathBuf,
    out: PathBuf,
    repeat: usize,
}

/// The corpus: `$COVPRUNE_CORPUS`, else `../shared/corpus/realworld` beside the project, else
/// `benchmarks/corpus` (where `benchmarks/fetch-corpus.sh` puts it).
fn default_corpus(root: &Path) -> PathBuf {
    if let Some(c) = std::env::var_os("COVPRUNE_CORPUS") {
        return PathBuf::from(c);
    }
    let shared = root.join("../shared/corpus/realworld");
    if shared.exists() {
        shared
    } else {
        root.join("benchmarks/corpus")
    }
}

fn parse_args() -> Result<Args> {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_else(|| "frontend".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut a = Args {
        command,
        corpus: default_corpus(&root),
        out: root.join("artifacts"),
        repeat: 3,
    };
    while let Some(flag) = args.next() {
        let value = args.next().context("flag without a value")?;
        match flag.as_str() {
            "--corpus" => a.corpus = value.into(),
            "--out" => a.out = value.into(),
            "--repeat" => a.repeat = value.parse()?,
            other => bail!("unknown flag {other}"),
        }
    }
    Ok(a)
}

/// The corpus inputs: SQLite from its `.c` (preprocessed by `cc -E`, as users run it), the
/// others from their preprocessed `.i` copies (their configure flags are baked in).
fn corpus_files(corpus: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut files = vec![("sqlite".to_string(), corpus.join("sqlite-3.17.0/sqlite3.c"))];
    for (project, dir) in [
        ("zlib", "zlib-1.3.2/preprocessed"),
        ("gzip", "gzip-1.12/preprocessed"),
        ("openssl", "openssl-1.1.1w/preprocessed"),
    ] {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus.join(dir))
            .with_context(|| format!("reading {}", corpus.join(dir).display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "i"))
            .collect();
        entries.sort();
        files.extend(entries.into_iter().map(|p| (project.to_string(), p)));
    }
    Ok(files)
}

fn frontend_bench(args: &Args) -> Result<()> {
    let mut rows = Vec::new();
    let mut md = String::from(
        "| project | file | functions | lowered | lowered % | fallbacks | syntax errors | best time (ms) |\n|---|---|---|---|---|---|---|---|\n",
    );
    let (mut total_f, mut total_l) = (0usize, 0usize);
    for (project, path) in corpus_files(&args.corpus)? {
        let mut best = u128::MAX;
        let mut last = None;
        for _ in 0..args.repeat.max(1) {
            let t = Instant::now();
            let loaded = frontend::load(&path, &PreprocessOptions::default())
                .with_context(|| format!("loading {}", path.display()))?;
            best = best.min(t.elapsed().as_millis());
            last = Some(loaded);
        }
        let loaded = last.context("no run")?;
        let p = &loaded.program;
        let functions = p.functions.len() + p.skipped.len();
        let lowered = p.functions.len();
        let fallbacks = p
            .diagnostics
            .iter()
            .filter(|d| matches!(d.kind, DiagnosticKind::Fallback(_)))
            .count();
        total_f += functions;
        total_l += lowered;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let pct = if functions == 0 {
            100.0
        } else {
            100.0 * lowered as f64 / functions as f64
        };
        md.push_str(&format!(
            "| {project} | {name} | {functions} | {lowered} | {pct:.1} | {fallbacks} | {} | {best} |\n",
            loaded.stats.parse_errors
        ));
        rows.push(serde_json::json!({
            "project": project, "file": name, "functions": functions, "lowered": lowered,
            "fallbacks": fallbacks, "syntax_errors": loaded.stats.parse_errors,
            "best_ms": best, "lines": loaded.stats.lines,
            "skipped": p.skipped.iter().map(|s| format!("{}: {}", s.name, s.reason)).collect::<Vec<_>>(),
        }));
        eprintln!("{project:8} {name:20} {lowered}/{functions} lowered, {best} ms");
    }
    let pct = 100.0 * total_l as f64 / total_f.max(1) as f64;
    md.push_str(&format!(
        "\nTotal: {total_l} of {total_f} functions lowered ({pct:.2}%).\n"
    ));
    std::fs::create_dir_all(&args.out)?;
    let json = serde_json::json!({
        "benchmark": "frontend",
        "command": "cargo run --release -p covprune-benchmarks -- frontend",
        "repeat": args.repeat,
        "machine": machine_note(),
        "files": rows,
        "total_functions": total_f,
        "total_lowered": total_l,
    });
    std::fs::write(
        args.out.join("frontend.json"),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    std::fs::write(args.out.join("frontend.md"), md)?;
    eprintln!(
        "total: {total_l}/{total_f} lowered ({pct:.2}%); wrote {}",
        args.out.display()
    );
    Ok(())
}

/// Annotates each C file of SQLite and zlib with CC, then with MCC, and runs steps 1-3 on it,
/// as a user would with `covprune annotate` then `covprune prune`. On one file, step 3 also
/// runs without the model filter, to count the solver queries the filter saves.
fn prune_bench(args: &Args) -> Result<()> {
    use covprune::prune::{run, PruneConfig, Status};
    use covprune_encoders::{Criterion, Limits};
    use std::collections::BTreeSet;
    let inputs: Vec<(&str, PathBuf, Vec<PathBuf>)> = {
        let mut v = vec![(
            "sqlite",
            args.corpus.join("sqlite-3.17.0/sqlite3.c"),
            Vec::new(),
        )];
        let zdir = args.corpus.join("zlib-1.3.2");
        let mut zfiles: Vec<PathBuf> = std::fs::read_dir(&zdir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        zfiles.sort();
        v.extend(zfiles.into_iter().map(|p| ("zlib", p, vec![zdir.clone()])));
        v
    };
    let only = std::env::var("COVPRUNE_BENCH_ONLY").ok();
    let filter_probe =
        std::env::var("COVPRUNE_BENCH_FILTER_PROBE").unwrap_or_else(|_| "trees.c".to_string());
    let criteria: Vec<Criterion> = match std::env::var("COVPRUNE_BENCH_CRITERIA").ok().as_deref() {
        Some("CC") => vec![Criterion::Cc],
        Some("MCC") => vec![Criterion::Mcc],
        _ => vec![Criterion::Cc, Criterion::Mcc],
    };
    let timeout_ms: u32 = std::env::var("COVPRUNE_BENCH_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let budget_s: u64 = std::env::var("COVPRUNE_BENCH_BUDGET_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let jobs: usize = std::env::var("COVPRUNE_BENCH_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let tmp = std::env::temp_dir().join(format!("covprune-prune-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut rows = Vec::new();
    let mut md = String::from(
        "| project | file | criterion | labels | compiled | infeasible | dup (s2) | dup (s3) | subsumed | pruned | queries s1/s2/s3 | step 1 (s) | step 2 (s) | step 3 (s) | wall (s) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut filter_note = String::new();
    for &criterion in &criteria {
        for (project, path, includes) in &inputs {
            if only.as_deref().is_some_and(|o| o != *project) {
                continue;
            }
            let source = std::fs::read(path)?;
            let typing = frontend::load(
                path,
                &PreprocessOptions {
                    include_dirs: includes.clone(),
                    ..PreprocessOptions::default()
                },
            )
            .with_context(|| format!("loading {}", path.display()))?;
            let annotated = covprune::annotate::annotate(
                &source,
                Some(&typing.program),
                &[criterion],
                &Limits::default(),
            );
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let out = tmp.join(format!("{stem}_labels.c"));
            std::fs::write(&out, &annotated.text)?;
            let opts = PreprocessOptions {
                include_dirs: includes.clone(),
                ..PreprocessOptions::default()
            };
            let loaded = frontend::load(&out, &opts)
                .with_context(|| format!("loading {}", out.display()))?;
            let mut config = PruneConfig {
                function_budget_s: budget_s,
                jobs,
                steps: BTreeSet::from([1, 2, 3]),
                solver: covprune::smt::SolverConfig {
                    timeout_ms,
                    rlimit: 0,
                    max_memory_mb: 0,
                    incremental: true,
                },
                ..PruneConfig::default()
            };
            let t = Instant::now();
            let (verdicts, stats) = run(&loaded.program, &config, &|_| {});
            let wall = t.elapsed().as_secs_f64();
            let count = |p: &dyn Fn(&covprune::prune::LabelVerdict) -> bool| {
                verdicts.iter().filter(|v| p(v)).count()
            };
            let infeasible = count(&|v| v.status == Status::Infeasible);
            let dup2 =
                count(&|v| matches!(v.status, Status::Duplicate { .. }) && v.step == Some(2));
            let dup3 =
                count(&|v| matches!(v.status, Status::Duplicate { .. }) && v.step == Some(3));
            let subsumed = count(&|v| matches!(v.status, Status::Subsumed { .. }));
            let compiled = count(&|v| {
                !matches!(
                    v.status.reason(),
                    Some(covprune::prune::Reason::NotCompiled)
                )
            });
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let pruned = infeasible + dup2 + dup3 + subsumed;
            eprintln!(
                "{project:7} {name:14} {:<4} {} labels ({compiled} compiled): {infeasible} infeasible, {dup2}+{dup3} duplicate, {subsumed} subsumed, {wall:.1} s",
                criterion.name(),
                annotated.labels.len()
            );
            md.push_str(&format!(
                "| {project} | {name} | {} | {} | {} | {infeasible} | {dup2} | {dup3} | {subsumed} | {pruned} | {}/{}/{} | {:.1} | {:.1} | {:.1} | {wall:.1} |\n",
                criterion.name(),
                annotated.labels.len(),
                verdicts.len(),
                stats.step1.queries, stats.step2.queries, stats.step3.queries,
                stats.step1.ms as f64 / 1000.0, stats.step2.ms as f64 / 1000.0, stats.step3.ms as f64 / 1000.0,
            ));
            let mut row = serde_json::json!({
                "project": project, "file": name, "criterion": criterion.name(),
                "labels": annotated.labels.len(), "labels_in_ledger": verdicts.len(),
                "infeasible": infeasible, "duplicate_step2": dup2, "duplicate_step3": dup3,
                "subsumed": subsumed, "pruned": pruned,
                "queries": [stats.step1.queries, stats.step2.queries, stats.step3.queries],
                "step3_refuted_by_models": stats.refuted_by_models,
                "step3_by_transitivity": stats.by_transitivity,
                "seconds_per_step_summed_over_workers": [stats.step1.ms as f64 / 1000.0, stats.step2.ms as f64 / 1000.0, stats.step3.ms as f64 / 1000.0],
                "wall_s": wall,
            });
            if name == filter_probe {
                config.model_filter = false;
                let (_, without) = run(&loaded.program, &config, &|_| {});
                row["step3_queries_without_model_filter"] =
                    serde_json::json!(without.step3.queries);
                filter_note.push_str(&format!(
                    "- {name}, {}: step 3 asked the solver {} times with the model filter ({} pairs ruled out by models, {} by transitivity) and {} times without it.\n",
                    criterion.name(), stats.step3.queries, stats.refuted_by_models, stats.by_transitivity, without.step3.queries
                ));
            }
            rows.push(row);
        }
    }
    if !filter_note.is_empty() {
        md.push_str("\nModel-based filter:\n\n");
        md.push_str(&filter_note);
    }
    md.push_str("\n`compiled`: labels in code the preprocessor keeps (the rest sit in inactive `#if` branches and stay unknown). Step times are summed over the 2 workers.\n");
    std::fs::create_dir_all(&args.out)?;
    let json = serde_json::json!({
        "benchmark": "prune",
        "command": "cargo run --release -p covprune-benchmarks -- prune",
        "timeout_ms": timeout_ms,
        "function_budget_s": budget_s,
        "jobs": jobs,
        "machine": machine_note(),
        "runs": rows,
    });
    std::fs::write(
        args.out.join("prune.json"),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    std::fs::write(args.out.join("prune.md"), md)?;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}

/// gzip from the corpus as a multi-file program: `deflate.c` annotated with CC and WM and
/// pruned, the other ten files built as they are (with a small libc shim for the gnulib
/// functions gzip links against), and 15 compress/decompress tests. Writes
/// `artifacts/measure-gzip.md` and `.json`.
fn measure_gzip(args: &Args) -> Result<()> {
    let gz = args.corpus.join("gzip-1.12").canonicalize()?;
    let work = std::env::temp_dir().join(format!("covprune-gzip-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("gzip/gnulib_shim.c");
    let cc = |a: &[&str], dir: &Path| -> Result<()> {
        let st = std::process::Command::new("cc")
            .args(a)
            .current_dir(dir)
            .status()?;
        if !st.success() {
            bail!("cc {a:?} failed");
        }
        Ok(())
    };
    let shim_o = work.join("shim.o");
    cc(
        &[
            "-c",
            "-w",
            &shim.display().to_string(),
            "-o",
            &shim_o.display().to_string(),
        ],
        &gz,
    )?;
    let others = [
        "bits.c",
        "gzip.c",
        "inflate.c",
        "trees.c",
        "unlzh.c",
        "unlzw.c",
        "unpack.c",
        "unzip.c",
        "util.c",
        "zip.c",
    ];
    // An unannotated gzip makes the .gz inputs of the decompression tests.
    let mut all: Vec<String> = vec![
        "-w".into(),
        "-DHAVE_CONFIG_H".into(),
        "-I.".into(),
        "-Ilib".into(),
        "deflate.c".into(),
    ];
    all.extend(others.iter().map(|s| s.to_string()));
    all.push(shim_o.display().to_string());
    all.push("-o".into());
    all.push(work.join("gzip").display().to_string());
    cc(&all.iter().map(String::as_str).collect::<Vec<_>>(), &gz)?;
    // Inputs: counting text, random bytes, repetitive text, a 4-letter alphabet, empty.
    let mut seed: u64 = 7;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as u8
    };
    let counting: String = (1..=20000).map(|i| format!("{i}\n")).collect();
    let random: Vec<u8> = (0..50000).map(|_| next()).collect();
    let fox = "the quick brown fox jumps over the lazy dog\n".repeat(3000);
    let dna: String = (0..100000).map(|_| (b'a' + next() % 4) as char).collect();
    let inputs: [(&str, Vec<u8>); 5] = [
        ("a.txt", counting.into_bytes()),
        ("b.bin", random),
        ("c.txt", fox.into_bytes()),
        ("d.txt", dna.into_bytes()),
        ("empty.txt", Vec::new()),
    ];
    for (name, bytes) in &inputs {
        std::fs::write(work.join(name), bytes)?;
        let out = std::process::Command::new(work.join("gzip"))
            .arg("-c")
            .stdin(std::fs::File::open(work.join(name))?)
            .output()?;
        std::fs::write(work.join(format!("{name}.gz")), out.stdout)?;
    }
    std::fs::write(
        work.join("gz.tests"),
        "# compress (levels 1, 6, 9) and decompress: text, random bytes, repetitive, empty\n\
         -c < a.txt\n-1c < a.txt\n-9c < a.txt\n-c < b.bin\n-9c < b.bin\n-c < c.txt\n-1c < c.txt\n\
         -9c < c.txt\n-c < d.txt\n-c < empty.txt\n-dc < a.txt.gz\n-dc < b.bin.gz\n-dc < c.txt.gz\n\
         -tc < d.txt.gz\n-dc < empty.txt.gz\n",
    )?;
    let cli = |a: Vec<String>| -> Result<()> {
        let code = covprune::cli::run(a.clone());
        if code != std::process::ExitCode::SUCCESS {
            bail!("covprune {a:?} failed");
        }
        Ok(())
    };
    std::env::set_current_dir(&gz)?;
    let flags = ["-DHAVE_CONFIG_H", "-I.", "-Ilib"].map(String::from);
    let mut a = vec![
        "covprune".into(),
        "annotate".into(),
        "deflate.c".into(),
        "--criteria".into(),
        "CC,WM".into(),
        "-o".into(),
        work.display().to_string(),
    ];
    a.extend(flags.iter().cloned());
    cli(a)?;
    let annotated = work.join("deflate_labels.c").display().to_string();
    let t = Instant::now();
    let mut a = vec![
        "covprune".into(),
        "prune".into(),
        annotated.clone(),
        "--no-progress".into(),
        // This process is the benchmark, not covprune: it cannot be a pool worker.
        "--in-process".into(),
    ];
    a.extend(flags.iter().cloned());
    cli(a)?;
    let prune_s = t.elapsed().as_secs_f64();
    let mut sources: Vec<String> = others.iter().map(|s| s.to_string()).collect();
    sources.push(shim_o.display().to_string());
    let json_out = work.join("measure.json");
    let out = std::process::Command::new(std::env::current_exe()?.with_file_name("covprune"))
        .args([
            "measure",
            &annotated,
            "--tests",
            &work.join("gz.tests").display().to_string(),
            "--json",
            "--sources",
            &sources.join(","),
        ])
        .args(&flags)
        .output()?;
    std::fs::write(&json_out, &out.stdout)?;
    if !out.status.success() {
        bail!(
            "measure failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let mut md = format!(
        "# gzip 1.12: deflate.c annotated (CC, WM), the other files as they are\n\n`cargo run --release -p covprune-benchmarks -- measure-gzip` ({}); prune {prune_s:.0} s.\n{} tests, {} crashed, {} timed out; {} ledger claims checked, **{} soundness alarms**.\n\n| criterion | labels | covered | raw | polluting | kept | kept covered | cleaned | upper bound |\n|---|---|---|---|---|---|---|---|---|\n",
        machine_note(),
        v["tests"], v["crashed"].as_array().map_or(0, Vec::len), v["timed_out"].as_array().map_or(0, Vec::len),
        v["claims_checked"], v["alarms"].as_array().map_or(0, Vec::len)
    );
    let pct = |x: &serde_json::Value| x.as_f64().map_or("-".to_string(), |f| format!("{f:.1}%"));
    for c in v["coverage"].as_array().into_iter().flatten() {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c["criterion"].as_str().unwrap_or(""),
            c["labels"],
            c["covered"],
            pct(&c["raw_percent"]),
            c["polluting"],
            c["kept"],
            c["kept_covered"],
            pct(&c["cleaned_percent"]),
            pct(&c["upper_bound_percent"])
        ));
    }
    std::fs::create_dir_all(&args.out)?;
    std::fs::write(args.out.join("measure-gzip.md"), md)?;
    std::fs::write(
        args.out.join("measure-gzip.json"),
        serde_json::to_string_pretty(&v)? + "\n",
    )?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The worker pool: the same prune run with `--jobs 1` and `--jobs 2` as child processes,
/// wall time and peak resident memory of each (sampled from /proc), and the speed-up.
/// `COVPRUNE_POOL_FILE` (default: the corpus's sqlite3.c), `COVPRUNE_POOL_CRITERIA` (CC),
/// `COVPRUNE_POOL_TIMEOUT_MS` (500), `COVPRUNE_POOL_BUDGET_S` (10). Writes
/// `artifacts/pool.{md,json}`.
fn pool_bench(args: &Args) -> Result<()> {
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
    let timeout = env("COVPRUNE_POOL_TIMEOUT_MS", "300");
    let budget = env("COVPRUNE_POOL_BUDGET_S", "8");
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
    let mut rows = Vec::new();
    let mut ledgers = Vec::new();
    for jobs in [1, 2] {
        std::fs::write(&labels, &fresh)?;
        let t = Instant::now();
        let mut child = std::process::Command::new(&exe)
            .args([
                "prune",
                &annotated.display().to_string(),
                "--no-progress",
                "--json",
            ])
            .args([
                "--jobs",
                &jobs.to_string(),
                "--timeout-ms",
                &timeout,
                "--function-budget-s",
                &budget,
            ])
            .arg(format!(
                "-I{}",
                file.parent().unwrap_or(Path::new(".")).display()
            ))
            .current_dir(file.parent().unwrap_or(Path::new(".")))
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
        ledgers.push(ledger);
        eprintln!(
            "jobs {jobs}: {wall:.1} s, peak {} MB (all processes), {} MB (largest)",
            peak_sum_kb / 1024,
            peak_one_kb / 1024
        );
        rows.push(serde_json::json!({"jobs": jobs, "wall_s": wall, "peak_rss_mb": peak_sum_kb / 1024, "peak_rss_one_process_mb": peak_one_kb / 1024}));
    }
    let speedup =
        rows[0]["wall_s"].as_f64().unwrap_or(0.0) / rows[1]["wall_s"].as_f64().unwrap_or(1.0);
    let same = ledgers[0] == ledgers[1];
    let md = format!(
        "# Worker pool: {} ({criteria}), steps 1-3\n\n`cargo run --release -p covprune-benchmarks -- pool` ({}); {timeout} ms per question, {budget} s per function.\n\n`prune --jobs N` runs N worker processes (each with its own Z3) under a supervisor. Peak RSS: the largest sum of resident sizes of the supervisor and its workers, sampled every 200 ms; and the largest single process.\n\n| jobs | wall (s) | peak RSS, all processes (MB) | peak RSS, largest process (MB) |\n|---|---|---|---|\n| 1 | {:.1} | {} | {} |\n| 2 | {:.1} | {} | {} |\n\nSpeed-up: **{speedup:.2}x**. Ledgers of the two runs byte-identical: {same}.\n",
        file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        machine_note(),
        rows[0]["wall_s"].as_f64().unwrap_or(0.0), rows[0]["peak_rss_mb"], rows[0]["peak_rss_one_process_mb"],
        rows[1]["wall_s"].as_f64().unwrap_or(0.0), rows[1]["peak_rss_mb"], rows[1]["peak_rss_one_process_mb"],
    );
    std::fs::create_dir_all(&args.out)?;
    std::fs::write(args.out.join("pool.md"), md)?;
    std::fs::write(
        args.out.join("pool.json"),
        serde_json::to_string_pretty(
            &serde_json::json!({"file": file.display().to_string(), "criteria": criteria, "timeout_ms": timeout, "budget_s": budget, "runs": rows, "speedup": speedup, "ledgers_identical": same}),
        )? + "\n",
    )?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Runs `EXE annotate SOURCE --criteria CRITERIA -o DIR FLAGS...` and returns what it wrote
/// ([`annotated_outputs`]).
pub(crate) fn annotate_into(
    exe: &Path,
    source: &Path,
    criteria: &str,
    dir: &Path,
    flags: &[String],
) -> Result<(String, PathBuf, PathBuf)> {
    let st = std::process::Command::new(exe)
        .arg("annotate")
        .arg(source)
        .args(["--criteria", criteria, "-o"])
        .arg(dir)
        .args(flags)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !st.success() {
        bail!("annotate {} --criteria {criteria} failed", source.display());
    }
    Ok(annotated_outputs(dir, source))
}

/// What `covprune annotate SOURCE -o DIR` writes: the source's stem, `DIR/STEM_labels.c` and
/// `DIR/STEM_labels.labels`.
pub(crate) fn annotated_outputs(dir: &Path, source: &Path) -> (String, PathBuf, PathBuf) {
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let annotated = dir.join(format!("{stem}_labels.c"));
    let labels = dir.join(format!("{stem}_labels.labels"));
    (stem, annotated, labels)
}

/// `pid` and its descendants, from /proc.
pub(crate) fn process_tree(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            // stat: `pid (comm) state ppid ...`; comm may hold spaces, so split after `)`.
            if let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) {
                if let Some(ppid) = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<u32>().ok())
                {
                    parent_of.push((p, ppid));
                }
            }
        }
    }
    let mut tree = vec![pid];
    let mut k = 0;
    while k < tree.len() {
        let p = tree[k];
        tree.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        k += 1;
    }
    tree
}

/// A `kB` field of /proc/PID/status (0 when the process is gone).
pub(crate) fn proc_status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix(field)
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

/// The project's commit (`git rev-parse --short=12 HEAD`, `-dirty` when sources differ from
/// it), or `unknown` outside a checkout.
pub(crate) fn commit() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .current_dir(&root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--short=12", "HEAD"]) else {
        return "unknown".into();
    };
    let dirty = git(&[
        "status",
        "--porcelain",
        "--",
        "src",
        "encoders",
        "Cargo.toml",
        "Cargo.lock",
    ])
    .is_some_and(|s| !s.is_empty());
    if dirty {
        format!("{head}-dirty")
    } else {
        head
    }
}

/// Today's date (UTC), `YYYY-MM-DD`.
pub(crate) fn today() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

pub(crate) fn machine_note() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {}", std::env::consts::ARCH)
}

fn main() -> Result<()> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().is_some_and(|c| c == "all") {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        return all::run(&raw[1..], default_corpus(&root), root.join("artifacts"));
    }
    if raw.first().is_some_and(|c| c == "project") {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        return project::run(&raw[1..], default_corpus(&root), root.join("artifacts"));
    }
    if raw.first().is_some_and(|c| c == "memory") {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        return memory::run(&raw[1..], root.join("artifacts"));
    }
    if raw.first().is_some_and(|c| c == "suites") {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        return suites::run(&raw[1..], root.join("artifacts"));
    }
    if raw.first().is_some_and(|c| c == "siemens") {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        return siemens::run(&raw[1..], root.join("artifacts"));
    }
    let args = parse_args()?;
    match args.command.as_str() {
        "frontend" => frontend_bench(&args),
        "prune" => prune_bench(&args),
        "measure-gzip" => measure_gzip(&args),
        "pool" => pool_bench(&args),
        "reproducible" => reproducible::run(&args),
        other => {
            bail!("unknown benchmark {other} (known: all, project, memory, siemens, suites, frontend, prune, measure-gzip, pool, reproducible)")
        }
    }
}
