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

fn machine_note() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {}", std::env::consts::ARCH)
}

fn main() -> Result<()> {
    let args = parse_args()?;
    match args.command.as_str() {
        "frontend" => frontend_bench(&args),
        other => bail!("unknown benchmark {other} (known: frontend)"),
    }
}
