//! Benchmark harness: runs covprune's stages on the real-world corpus and writes the figures
//! the README quotes to `artifacts/`. Usage: `cargo run --release -p covprune-benchmarks --
//! frontend [--corpus DIR] [--out DIR]`.

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

fn parse_args() -> Result<Args> {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_else(|| "frontend".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut a = Args {
        command,
        corpus: std::env::var_os("COVPRUNE_CORPUS")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("../shared/corpus/realworld")),
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

/// Annotates each C file of a project with CC and runs step 1 on it, as a user would with
/// `covprune annotate` then `covprune prune`.
fn step1_bench(args: &Args) -> Result<()> {
    use covprune::prune::{step1, PruneConfig, Status};
    use covprune_encoders::{Criterion, Limits};
    let inputs: Vec<(&str, PathBuf, Vec<String>)> = {
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
        v.extend(
            zfiles
                .into_iter()
                .map(|p| ("zlib", p, vec![format!("-I{}", zdir.display())])),
        );
        v
    };
    let only = std::env::var("COVPRUNE_BENCH_ONLY").ok();
    let tmp = std::env::temp_dir().join(format!("covprune-step1-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut rows = Vec::new();
    let mut md = String::from("| project | file | CC labels | infeasible | unknown: satisfiable | unknown: timeout/limit | annotate (ms) | step 1 (s) |\n|---|---|---|---|---|---|---|---|\n");
    for (project, path, includes) in inputs {
        if only.as_deref().is_some_and(|o| o != project) {
            continue;
        }
        let source = std::fs::read(&path)?;
        let t = Instant::now();
        let annotated = covprune::annotate::annotate(&source, &[Criterion::Cc], &Limits::default());
        let annotate_ms = t.elapsed().as_millis();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let out = tmp.join(format!("{stem}_labels.c"));
        std::fs::write(&out, &annotated.text)?;
        let opts = PreprocessOptions {
            include_dirs: includes.iter().map(|i| PathBuf::from(&i[2..])).collect(),
            ..PreprocessOptions::default()
        };
        let loaded =
            frontend::load(&out, &opts).with_context(|| format!("loading {}", out.display()))?;
        let config = PruneConfig {
            function_budget_s: 120,
            ..PruneConfig::default()
        };
        let t = Instant::now();
        let verdicts = step1(&loaded.program, &config);
        let secs = t.elapsed().as_secs_f64();
        let infeasible = verdicts
            .iter()
            .filter(|v| v.status == Status::Infeasible)
            .count();
        let feasible = verdicts
            .iter()
            .filter(|v| matches!(&v.status, Status::Unknown(r) if r == "satisfiable"))
            .count();
        let limited = verdicts.len() - infeasible - feasible;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        eprintln!("{project:8} {name:14} {} labels, {infeasible} infeasible, {limited} limited, {secs:.1} s", annotated.labels.len());
        md.push_str(&format!(
            "| {project} | {name} | {} | {infeasible} | {feasible} | {limited} | {annotate_ms} | {secs:.1} |\n",
            annotated.labels.len()
        ));
        rows.push(serde_json::json!({
            "project": project, "file": name, "labels": annotated.labels.len(),
            "labels_in_program": verdicts.len(), "infeasible": infeasible,
            "unknown_satisfiable": feasible, "unknown_limited": limited,
            "annotate_ms": annotate_ms, "step1_s": secs,
        }));
    }
    std::fs::create_dir_all(&args.out)?;
    let json = serde_json::json!({
        "benchmark": "step1",
        "command": "cargo run --release -p covprune-benchmarks -- step1",
        "criterion": "CC",
        "timeout_ms": 2000,
        "function_budget_s": 120,
        "machine": machine_note(),
        "files": rows,
    });
    std::fs::write(
        args.out.join("step1.json"),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    std::fs::write(args.out.join("step1.md"), md)?;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}

fn machine_note() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {}", std::env::consts::ARCH)
}

fn main() -> Result<()> {
    let args = parse_args()?;
    match args.command.as_str() {
        "frontend" => frontend_bench(&args),
        "step1" => step1_bench(&args),
        other => bail!("unknown benchmark {other} (known: frontend, step1)"),
    }
}
