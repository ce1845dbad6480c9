//! The paper-table benchmark (`all`): every corpus program × criterion annotated and pruned
//! (steps 1-3) by the covprune binary, Frama-C's WP on the same step-1 obligations as a peer,
//! and the tables `artifacts/results.csv` and `artifacts/RESULTS.md` with `scaling.svg`.
//!
//! Each unit (file, criterion, jobs) is written to `artifacts/results/rows/` as soon as it
//! ends, and a later run skips what is there (`--force` redoes it): the whole corpus takes
//! longer than one sitting on a small machine, so the table grows run after run and always
//! says what is missing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::wp::Peer;

/// The criteria of the paper's tables, and WM-S.
const CRITERIA: [&str; 5] = ["CC", "MCC", "GACC", "WM", "WM-S"];

/// The steps of the method; rows made with fewer are marked in RESULTS.md.
pub(crate) const FULL_STEPS: &str = "1,2,3";

struct Options {
    corpus: PathBuf,
    out: PathBuf,
    jobs: Vec<usize>,
    criteria: Vec<String>,
    only: Option<BTreeSet<String>>,
    budget: Option<Duration>,
    timeout_ms: u32,
    function_budget_s: u64,
    /// `prune --steps`: the whole method by default; a row made with fewer says so.
    steps: String,
    with_peers: bool,
    peer_criteria: BTreeSet<String>,
    peer_programs: BTreeSet<String>,
    peer_timeout_s: u32,
    /// WP is stopped after this long on one file (its answers so far are kept).
    peer_max_s: u64,
    force: bool,
    report_only: bool,
    /// Keep every run's ledger in `OUT/results/ledgers/` (they are deleted otherwise), so that
    /// two builds' pruned counts can be compared label by label.
    keep_ledgers: bool,
}

const USAGE: &str = "all [--corpus DIR] [--out DIR] [--jobs 2[,1]] [--criteria CC,MCC,GACC,WM,WM-S] [--only PROGRAM[/FILE],...] [--budget-min M] [--timeout-ms 300] [--function-budget-s 8] [--steps 1,2,3] [--with-peers] [--peer-criteria CC] [--peer-programs tritype,openssl,zlib] [--peer-timeout-s 1] [--peer-max-s 600] [--force] [--report-only] [--keep-ledgers]";

fn options(raw: &[String], corpus: PathBuf, out: PathBuf) -> Result<Options> {
    let mut o = Options {
        corpus,
        out,
        jobs: vec![2],
        criteria: CRITERIA.iter().map(|c| c.to_string()).collect(),
        only: None,
        budget: None,
        timeout_ms: 300,
        function_budget_s: 8,
        steps: FULL_STEPS.to_string(),
        with_peers: false,
        peer_criteria: BTreeSet::from(["CC".to_string()]),
        peer_programs: ["tritype", "openssl", "zlib"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        peer_timeout_s: 1,
        peer_max_s: 600,
        force: false,
        report_only: false,
        keep_ledgers: false,
    };
    let list = |v: &str| -> Vec<String> { v.split(',').map(|s| s.trim().to_string()).collect() };
    let mut it = raw.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value\nusage: {USAGE}"))
        };
        match flag.as_str() {
            "--corpus" => o.corpus = value()?.into(),
            "--out" => o.out = value()?.into(),
            "--jobs" => {
                o.jobs = list(&value()?)
                    .iter()
                    .map(|j| j.parse())
                    .collect::<Result<_, _>>()?
            }
            "--criteria" => o.criteria = list(&value()?),
            "--only" => o.only = Some(list(&value()?).into_iter().collect()),
            "--budget-min" => o.budget = Some(Duration::from_secs(value()?.parse::<u64>()? * 60)),
            "--timeout-ms" => o.timeout_ms = value()?.parse()?,
            "--function-budget-s" => o.function_budget_s = value()?.parse()?,
            "--steps" => o.steps = value()?,
            "--with-peers" => o.with_peers = true,
            "--peer-criteria" => o.peer_criteria = list(&value()?).into_iter().collect(),
            "--peer-programs" => o.peer_programs = list(&value()?).into_iter().collect(),
            "--peer-timeout-s" => o.peer_timeout_s = value()?.parse()?,
            "--peer-max-s" => o.peer_max_s = value()?.parse()?,
            "--force" => o.force = true,
            "--report-only" => o.report_only = true,
            "--keep-ledgers" => o.keep_ledgers = true,
            other => bail!("unknown flag {other}\nusage: {USAGE}"),
        }
    }
    if let Some(c) = o.criteria.iter().find(|c| !CRITERIA.contains(&c.as_str())) {
        bail!(
            "criterion {c} is not one of the table's ({})",
            CRITERIA.join(", ")
        );
    }
    Ok(o)
}

/// Copies the ledger `prune` wrote in `dir` to `OUT/results/ledgers/PROGRAM.FILE.CRITERION.jJOBS.json`
/// (nothing when the unit failed before writing one).
fn keep_ledger(out: &Path, dir: &Path, input: &Input, criterion: &str, jobs: usize) -> Result<()> {
    let stem = input.stem();
    let ledger = dir.join(format!("{stem}_labels.covprune.json"));
    if !ledger.exists() {
        return Ok(());
    }
    let kept = out.join("results/ledgers");
    std::fs::create_dir_all(&kept)?;
    let name = format!("{}.{stem}.{criterion}.j{jobs}.json", input.program);
    std::fs::copy(&ledger, kept.join(name))
        .with_context(|| format!("keeping {}", ledger.display()))?;
    Ok(())
}

/// One input file of a program, and where its original `.c` is (for lines of code).
#[derive(Clone, Debug)]
struct Input {
    program: String,
    /// What covprune annotates: the `.c` (shipped examples, SQLite) or the preprocessed `.i`
    /// (the others: their configure flags are baked in).
    path: PathBuf,
    original: PathBuf,
}

impl Input {
    fn stem(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// The programs, smallest first: the shipped examples, then the corpus.
fn inputs(corpus: &Path) -> Result<Vec<Input>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = vec![Input {
        program: "tritype".into(),
        path: root.join("programs/tritype.c"),
        original: root.join("programs/tritype.c"),
    }];
    for (program, dir) in [
        ("openssl", "openssl-1.1.1w"),
        ("zlib", "zlib-1.3.2"),
        ("gzip", "gzip-1.12"),
    ] {
        let pre = corpus.join(dir).join("preprocessed");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&pre)
            .with_context(|| {
                format!(
                    "reading {} (get the corpus with benchmarks/fetch-corpus.sh, or pass --corpus)",
                    pre.display()
                )
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "i"))
            .collect();
        files.sort();
        for path in files {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let original =
                find_file(&corpus.join(dir), &format!("{stem}.c")).unwrap_or_else(|| path.clone());
            v.push(Input {
                program: program.into(),
                path,
                original,
            });
        }
    }
    let sqlite = corpus.join("sqlite-3.17.0/sqlite3.c");
    v.push(Input {
        program: "sqlite".into(),
        path: sqlite.clone(),
        original: sqlite,
    });
    Ok(v)
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "preprocessed") {
                    stack.push(p);
                }
            } else if p.file_name().is_some_and(|n| n == name) {
                return Some(p);
            }
        }
    }
    None
}

pub(crate) fn non_blank_lines(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}

fn row_path(out: &Path, input: &Input, criterion: &str, jobs: usize) -> PathBuf {
    row_file(out, &input.program, &input.stem(), criterion, jobs)
}

pub fn run(raw: &[String], corpus: PathBuf, out: PathBuf) -> Result<()> {
    let o = options(raw, corpus, out)?;
    let all_inputs = inputs(&o.corpus)?;
    if !o.report_only {
        let exe = std::env::current_exe()?.with_file_name("covprune");
        if !exe.exists() {
            bail!(
                "{} is missing: build it with `cargo build --release`",
                exe.display()
            );
        }
        let peer = if o.with_peers {
            Some(Peer::setup(&o.out)?)
        } else {
            None
        };
        if !o.with_peers {
            eprintln!("peer: Frama-C WP not run (pass --with-peers to install and run it)");
        }
        std::fs::create_dir_all(o.out.join("results/rows"))?;
        let work = std::env::temp_dir().join(format!("covprune-all-{}", std::process::id()));
        let t0 = Instant::now();
        let mut left = Vec::new();
        for input in &all_inputs {
            if o.only.as_ref().is_some_and(|s| {
                !s.contains(&input.program)
                    && !s.contains(&format!("{}/{}", input.program, input.stem()))
            }) {
                continue;
            }
            for criterion in &o.criteria {
                for &jobs in &o.jobs {
                    let path = row_path(&o.out, input, criterion, jobs);
                    if path.exists() && !o.force {
                        continue;
                    }
                    if o.budget.is_some_and(|b| t0.elapsed() > b) {
                        left.push(format!(
                            "{}/{} {criterion} j{jobs}",
                            input.program,
                            input.stem()
                        ));
                        continue;
                    }
                    let with_peer = peer.as_ref().filter(|_| {
                        jobs == o.jobs[0]
                            && o.peer_criteria.contains(criterion)
                            && o.peer_programs.contains(&input.program)
                    });
                    let dir = work.join(&input.program).join(criterion);
                    match unit(&exe, input, criterion, jobs, &o, &dir, with_peer) {
                        Ok(row) => {
                            std::fs::write(&path, serde_json::to_string_pretty(&row)? + "\n")?;
                        }
                        Err(e) => eprintln!(
                            "{}/{} {criterion} j{jobs}: {e:#}",
                            input.program,
                            input.stem()
                        ),
                    }
                    if o.keep_ledgers {
                        keep_ledger(&o.out, &dir, input, criterion, jobs)?;
                    }
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&work);
        if !left.is_empty() {
            eprintln!(
                "budget spent: {} units left for the next run (it skips what is done): {}",
                left.len(),
                left.join(", ")
            );
        }
    }
    report(&o, &all_inputs)
}

/// Annotates, prunes and (optionally) asks the peer: one row.
fn unit(
    exe: &Path,
    input: &Input,
    criterion: &str,
    jobs: usize,
    o: &Options,
    dir: &Path,
    peer: Option<&Peer>,
) -> Result<Value> {
    std::fs::create_dir_all(dir)?;
    let stem = input.stem();
    let label = format!("{}/{stem} {criterion} j{jobs}", input.program);
    eprintln!("{label}: annotating");
    let t = Instant::now();
    let st = std::process::Command::new(exe)
        .arg("annotate")
        .arg(&input.path)
        .args(["--criteria", criterion, "--json", "-o"])
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !st.success() {
        bail!("annotate failed ({st})");
    }
    let annotate_s = t.elapsed().as_secs_f64();
    let annotated = dir.join(format!("{stem}_labels.c"));
    let meta = RowMeta {
        program: &input.program,
        file: &stem,
        loc: non_blank_lines(&input.original),
        criterion,
        jobs,
        timeout_ms: o.timeout_ms,
        function_budget_s: o.function_budget_s,
        steps: &o.steps,
    };
    let has_labels = std::fs::read_to_string(&annotated)?
        .lines()
        .any(|l| !l.trim_start().starts_with('#') && l.contains("pc_label("));
    if !has_labels {
        // Nothing to prove (a file without decisions for this criterion): a row of zeros.
        eprintln!("{label}: no labels");
        let summary = json!({"labels": 0, "queries": [0, 0, 0], "seconds_step1": 0.0, "seconds_step2": 0.0, "seconds_step3": 0.0});
        let (mut row, _) = make_row(&meta, &summary, "{\"labels\": []}", 0.0, 0)?;
        row["annotate_s"] = json!(annotate_s);
        return Ok(row);
    }
    eprintln!("{label}: pruning");
    let t = Instant::now();
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("prune")
        .arg(&annotated)
        .args(["--json", "--no-progress"])
        .args(["--jobs", &jobs.to_string()])
        .args([
            "--timeout-s",
            &(f64::from(o.timeout_ms) / 1000.0).to_string(),
        ])
        .args(["--function-budget-s", &o.function_budget_s.to_string()])
        .args(["--steps", &o.steps])
        .stdout(std::process::Stdio::piped());
    let (output, peak_mb) = run_sampled(cmd)?;
    let wall = t.elapsed().as_secs_f64();
    if !output.status.success() {
        bail!("prune failed ({})", output.status);
    }
    let summary: Value = serde_json::from_slice(&output.stdout).context("prune --json output")?;
    let ledger = std::fs::read_to_string(dir.join(format!("{stem}_labels.covprune.json")))?;
    let (mut row, infeasible) = make_row(&meta, &summary, &ledger, wall, peak_mb)?;
    row["annotate_s"] = json!(annotate_s);
    eprintln!(
        "{label}: {} labels, {} pruned, {wall:.1} s",
        row["labels"], row["pruned"]
    );
    if let Some(p) = peer.filter(|_| row["labels"].as_u64().unwrap_or(0) > 0) {
        eprintln!("{label}: Frama-C WP on step 1");
        row["peer"] = match p.step1(
            exe,
            &annotated,
            jobs,
            o.peer_timeout_s,
            Duration::from_secs(o.peer_max_s),
            &infeasible,
        ) {
            Ok(v) => v,
            Err(e) => json!({"error": format!("{e:#}")}),
        };
    }
    Ok(row)
}

/// What a row is about.
pub(crate) struct RowMeta<'a> {
    pub program: &'a str,
    pub file: &'a str,
    pub loc: usize,
    pub criterion: &'a str,
    pub jobs: usize,
    pub timeout_ms: u32,
    pub function_budget_s: u64,
    pub steps: &'a str,
}

/// A results row from `prune --json`'s summary and the ledger; also the ids proved
/// infeasible.
pub(crate) fn make_row(
    m: &RowMeta,
    summary: &Value,
    ledger: &str,
    wall: f64,
    peak_mb: u64,
) -> Result<(Value, BTreeSet<u64>)> {
    let ledger: Value = serde_json::from_str(ledger).context("reading the ledger")?;
    let labels = ledger["labels"].as_array().cloned().unwrap_or_default();
    let not_compiled = labels
        .iter()
        .filter(|l| {
            l["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("not in the compiled program"))
        })
        .count();
    let infeasible: BTreeSet<u64> = labels
        .iter()
        .filter(|l| l["status"] == "infeasible")
        .filter_map(|l| l["id"].as_u64())
        .collect();
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    let row = json!({
        "program": m.program,
        "file": m.file,
        "criterion": m.criterion,
        "jobs": m.jobs,
        "loc": m.loc,
        "labels": n("labels"),
        "compiled": (n("labels") as usize).saturating_sub(not_compiled),
        "s1_infeasible": n("infeasible"),
        "s2_duplicate": n("duplicate_step2"),
        "s3_duplicate": n("duplicate_step3"),
        "s3_subsumed": n("subsumed"),
        "pruned": n("pruned"),
        "queries": summary["queries"],
        "seconds_steps": [summary["seconds_step1"], summary["seconds_step2"], summary["seconds_step3"]],
        "wall_s": wall,
        "peak_rss_mb": peak_mb,
        "timeout_ms": m.timeout_ms,
        "function_budget_s": m.function_budget_s,
        "steps": m.steps,
        "commit": crate::commit(),
        "date": crate::today(),
    });
    Ok((row, infeasible))
}

/// Where `all` keeps the row of (program, file, criterion, jobs).
pub(crate) fn row_file(
    out: &Path,
    program: &str,
    file: &str,
    criterion: &str,
    jobs: usize,
) -> PathBuf {
    out.join("results/rows")
        .join(format!("{program}.{file}.{criterion}.j{jobs}.json"))
}

/// Runs `cmd` and samples the summed resident size of its process tree every 200 ms: the
/// output and the peak in MB.
pub(crate) fn run_sampled(mut cmd: std::process::Command) -> Result<(std::process::Output, u64)> {
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut s) = stdout {
            use std::io::Read;
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    let mut peak_kb = 0;
    let status = loop {
        let sum: u64 = crate::process_tree(child.id())
            .into_iter()
            .map(|p| crate::proc_status_kb(p, "VmRSS:"))
            .sum();
        peak_kb = peak_kb.max(sum);
        if let Some(s) = child.try_wait()? {
            break s;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let stdout = reader.join().unwrap_or_default();
    Ok((
        std::process::Output {
            status,
            stdout,
            stderr: Vec::new(),
        },
        peak_kb / 1024,
    ))
}

/// The paper's figures (LClean, ICSE 2018, Figures 6 and 11; `paper_fig11.csv`) for a
/// program and criterion: labels, pruned, time on 20 cores.
fn paper(corpus: &Path) -> BTreeMap<(String, String), (u64, u64, u64)> {
    let mut m = BTreeMap::new();
    let path = corpus.join("../../reference/paper_fig11.csv");
    let text = std::fs::read_to_string(&path)
        .or_else(|_| {
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("paper_fig11.csv"))
        })
        .unwrap_or_default();
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("program"))
    {
        let f: Vec<&str> = l.split(',').collect();
        if f.len() < 10 {
            continue;
        }
        let program = match f[0] {
            "openssl_total" => "openssl",
            p => p,
        };
        let num = |i: usize| f[i].parse().unwrap_or(0);
        m.insert(
            (program.to_string(), f[2].to_string()),
            (num(3), num(8), num(9)),
        );
    }
    m
}

#[derive(Default, Clone)]
struct Sum {
    files: usize,
    loc: u64,
    labels: u64,
    compiled: u64,
    s1: u64,
    s2: u64,
    s3d: u64,
    s3s: u64,
    pruned: u64,
    wall: f64,
    peak: u64,
    /// Settings of rows made otherwise than the run's own (fewer steps, another budget).
    other_settings: BTreeSet<String>,
}

impl Sum {
    fn add(&mut self, r: &Value, o: &Options) {
        let n = |k: &str| r[k].as_u64().unwrap_or(0);
        let steps = r["steps"].as_str().unwrap_or(FULL_STEPS);
        let mut other = Vec::new();
        if steps != FULL_STEPS {
            other.push(format!("steps {steps} only"));
        }
        if n("function_budget_s") != o.function_budget_s {
            other.push(format!("{} s per function", n("function_budget_s")));
        }
        if n("timeout_ms") != u64::from(o.timeout_ms) {
            other.push(format!("{} ms per question", n("timeout_ms")));
        }
        if !other.is_empty() {
            self.other_settings.insert(other.join(", "));
        }
        self.files += 1;
        self.loc += n("loc");
        self.labels += n("labels");
        self.compiled += n("compiled");
        self.s1 += n("s1_infeasible");
        self.s2 += n("s2_duplicate");
        self.s3d += n("s3_duplicate");
        self.s3s += n("s3_subsumed");
        self.pruned += n("pruned");
        self.wall += r["wall_s"].as_f64().unwrap_or(0.0);
        self.peak = self.peak.max(n("peak_rss_mb"));
    }
}

fn pct(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

/// Where the rows were measured: the commits and dates they record.
fn provenance(rows: &[Value], primary: u64) -> String {
    let mut at: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| r["jobs"] == primary) {
        let commit = r["commit"].as_str().unwrap_or("unrecorded").to_string();
        let date = r["date"].as_str().unwrap_or("unrecorded").to_string();
        *at.entry((commit, date)).or_default() += 1;
    }
    let parts: Vec<String> = at
        .iter()
        .map(|((c, d), n)| format!("commit `{c}` on {d} ({n} rows)"))
        .collect();
    format!("Measured at {}.", parts.join("; "))
}

/// Marks around the summary table, which the README copies (a test compares them).
pub(crate) const SUMMARY_BEGIN: &str = "<!-- results summary: begin -->";
pub(crate) const SUMMARY_END: &str = "<!-- results summary: end -->";

/// One row per program and criterion: labels, what was pruned and how, time, the paper's
/// figures and WP's step 1 where it ran.
fn summary_table(
    rows: &[Value],
    programs: &[String],
    paper: &BTreeMap<(String, String), (u64, u64, u64)>,
    o: &Options,
    primary: u64,
) -> String {
    let mut t = format!("{SUMMARY_BEGIN}\n| program | criterion | labels (compiled) | pruned | infeasible / duplicate / subsumed | time (s) | paper: labels, pruned, time (s) | WP step 1: proved (covprune's) |\n|---|---|---|---|---|---|---|---|\n");
    for program in programs {
        for c in CRITERIA {
            let mine: Vec<&Value> = rows
                .iter()
                .filter(|r| r["program"] == *program && r["criterion"] == c && r["jobs"] == primary)
                .collect();
            let paper_cell = paper
                .get(&(program.clone(), c.to_string()))
                .map(|(l, p, s)| format!("{l}, {p}, {s}"))
                .unwrap_or_else(|| "-".into());
            if mine.is_empty() {
                t.push_str(&format!(
                    "| {program} | {c} | not run | | | | {paper_cell} | |\n"
                ));
                continue;
            }
            let mut sum = Sum::default();
            for r in &mine {
                sum.add(r, o);
            }
            let crit = if sum.other_settings.is_empty() {
                c.to_string()
            } else {
                let other: Vec<String> = sum.other_settings.iter().cloned().collect();
                format!("{c} ({})", other.join("; "))
            };
            let labels_cell = if sum.labels == sum.compiled {
                sum.labels.to_string()
            } else {
                format!("{} ({})", sum.labels, sum.compiled)
            };
            let peers: Vec<&&Value> = mine
                .iter()
                .filter(|r| r["peer"].is_object() && r["peer"]["error"].is_null())
                .collect();
            let wp = if peers.is_empty() {
                String::new()
            } else {
                let p = |k: &str| {
                    peers
                        .iter()
                        .map(|r| r["peer"][k].as_u64().unwrap_or(0))
                        .sum::<u64>()
                };
                format!("{} ({})", p("proved"), p("covprune_proved"))
            };
            t.push_str(&format!(
                "| {program} | {crit} | {labels_cell} | {} ({}) | {} / {} / {} | {:.0} | {paper_cell} | {wp} |\n",
                sum.pruned,
                pct(sum.pruned, sum.compiled),
                sum.s1,
                sum.s2 + sum.s3d,
                sum.s3s,
                sum.wall,
            ));
        }
    }
    t.push_str(SUMMARY_END);
    t.push('\n');
    t
}

/// results.csv, RESULTS.md and scaling.svg from every row on disk.
fn report(o: &Options, all_inputs: &[Input]) -> Result<()> {
    let mut rows: Vec<Value> = Vec::new();
    if let Ok(dir) = std::fs::read_dir(o.out.join("results/rows")) {
        for e in dir.flatten() {
            let text = std::fs::read_to_string(e.path())?;
            rows.push(serde_json::from_str(&text).with_context(|| e.path().display().to_string())?);
        }
    }
    let key = |r: &Value| {
        (
            r["program"].as_str().unwrap_or("").to_string(),
            r["file"].as_str().unwrap_or("").to_string(),
            CRITERIA
                .iter()
                .position(|c| r["criterion"] == *c)
                .unwrap_or(9),
            r["jobs"].as_u64().unwrap_or(0),
        )
    };
    rows.sort_by_key(key);
    // results.csv
    let mut csv = String::from("program,file,criterion,jobs,loc,labels,compiled,s1_infeasible,s2_duplicate,s3_duplicate,s3_subsumed,pruned,queries_s1,queries_s2,queries_s3,seconds_s1,seconds_s2,seconds_s3,wall_s,peak_rss_mb,timeout_ms,function_budget_s,steps,peer_obligations,peer_proved,peer_covprune_proved,peer_wall_s\n");
    for r in &rows {
        let q = |i: usize| r["queries"][i].as_u64().unwrap_or(0);
        let s = |i: usize| r["seconds_steps"][i].as_f64().unwrap_or(0.0);
        let p = |k: &str| r["peer"][k].to_string().replace("null", "");
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.1},{:.1},{:.1},{:.1},{},{},{},\"{}\",{},{},{},{}\n",
            r["program"].as_str().unwrap_or(""),
            r["file"].as_str().unwrap_or(""),
            r["criterion"].as_str().unwrap_or(""),
            r["jobs"], r["loc"], r["labels"], r["compiled"], r["s1_infeasible"], r["s2_duplicate"],
            r["s3_duplicate"], r["s3_subsumed"], r["pruned"], q(0), q(1), q(2), s(0), s(1), s(2),
            r["wall_s"].as_f64().unwrap_or(0.0), r["peak_rss_mb"], r["timeout_ms"], r["function_budget_s"],
            r["steps"].as_str().unwrap_or(FULL_STEPS),
            p("obligations"), p("proved"), p("covprune_proved"),
            r["peer"]["wall_s"].as_f64().map(|w| format!("{w:.1}")).unwrap_or_default(),
        ));
    }
    std::fs::create_dir_all(&o.out)?;
    std::fs::write(o.out.join("results.csv"), csv)?;

    let primary = o.jobs.first().copied().unwrap_or(2) as u64;
    let files_of: BTreeMap<String, usize> = all_inputs.iter().fold(BTreeMap::new(), |mut m, i| {
        *m.entry(i.program.clone()).or_default() += 1;
        m
    });
    let programs: Vec<String> = {
        let mut seen = Vec::new();
        for i in all_inputs {
            if !seen.contains(&i.program) {
                seen.push(i.program.clone());
            }
        }
        seen
    };
    let paper = paper(&o.corpus);
    let mut md = format!(
        "# covprune on the corpus, beside the LClean paper\n\nRegenerate: `cargo build --release && cargo run --release -p covprune-benchmarks -- all [--with-peers]` (resumes: rows already in `artifacts/results/rows/` are kept; `--force` redoes them). {}; each label question {} ms at most, each function {} s (`prune --timeout-ms --function-budget-s`), `--jobs {primary}`. Per-file rows: [results.csv](results.csv).\n\nThe paper's figures (LClean, ICSE 2018, Figures 6 and 11, from `paper_fig11.csv`) are for its versions of the programs (OpenSSL 1.0.2 files, gzip, SQLite 3.8) on 20 cores with Frama-C/LTest's annotator; ours are OpenSSL 1.1.1w's same four files, gzip 1.12, SQLite 3.17.0 on 2 cores with covprune's annotator, so label counts differ. \"compiled\" counts labels in code the compiler sees (not in inactive `#if` branches); percentages are of those.\n\n{}\n\n## Summary\n\nThe README's results table is this one, copied.\n\n{}\n## Pruned labels per program and criterion\n\n| program | files | LoC | criterion | labels | compiled | s1 infeasible | s2 dup | s3 dup | s3 subsumed | pruned | pruned % | time (s) | peak RSS (MB) | paper: labels | paper: pruned | paper: time (s, 20 cores) | pruned / paper |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        crate::machine_note(),
        o.timeout_ms,
        o.function_budget_s,
        provenance(&rows, primary),
        summary_table(&rows, &programs, &paper, o, primary),
    );
    let mut missing = Vec::new();
    for program in &programs {
        for c in CRITERIA {
            let mut sum = Sum::default();
            for r in rows
                .iter()
                .filter(|r| r["program"] == *program && r["criterion"] == c && r["jobs"] == primary)
            {
                sum.add(r, o);
            }
            let want = files_of.get(program).copied().unwrap_or(0);
            let (pl, pp, pt) = paper
                .get(&(program.clone(), c.to_string()))
                .copied()
                .map_or(
                    ("".to_string(), "".to_string(), "".to_string()),
                    |(l, p, t)| (l.to_string(), p.to_string(), t.to_string()),
                );
            let ratio = paper
                .get(&(program.clone(), c.to_string()))
                .filter(|(_, p, _)| *p > 0)
                .map(|(_, p, _)| format!("{:.2}", sum.pruned as f64 / *p as f64))
                .unwrap_or_default();
            if sum.files == 0 {
                missing.push(format!("{program} {c}"));
                md.push_str(&format!("| {program} | 0 of {want} | | {c} | not run yet | | | | | | | | | | {pl} | {pp} | {pt} | |\n"));
                continue;
            }
            let files = if sum.files == want {
                want.to_string()
            } else {
                format!("{} of {want}", sum.files)
            };
            md.push_str(&format!(
                "| {program} | {files} | {} | {c}{} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {} | {pl} | {pp} | {pt} | {ratio} |\n",
                sum.loc,
                if sum.other_settings.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", sum.other_settings.iter().cloned().collect::<Vec<_>>().join("; "))
                },
                sum.labels, sum.compiled, sum.s1, sum.s2, sum.s3d, sum.s3s, sum.pruned,
                pct(sum.pruned, sum.compiled), sum.wall, sum.peak
            ));
            if sum.files < want {
                missing.push(format!("{program} {c} ({} files left)", want - sum.files));
            }
        }
    }
    if !missing.is_empty() {
        md.push_str(&format!(
            "\nNot run yet (the next `all` run does them): {}.\n",
            missing.join("; ")
        ));
    }

    // The peer.
    let peer_rows: Vec<&Value> = rows.iter().filter(|r| r["peer"].is_object()).collect();
    md.push_str("\n## Step 1 beside Frama-C's WP\n\n");
    if peer_rows.is_empty() {
        md.push_str("Not run yet (`all --with-peers`).\n");
    } else {
        let tool = peer_rows
            .iter()
            .find_map(|r| r["peer"]["tool"].as_str())
            .unwrap_or("");
        md.push_str(&format!("The same step-1 obligations (`covprune export-acsl --step 1`: `/*@ check covprune_lID: !(p); */` at each label: a `check`, never assumed by later goals) given to {tool}; a label counts as proved when all its goals are valid. WP assumes no signed overflow and separate pointer parameters, and havocs every variable at unannotated loops, so its \"proved\" is not covprune's; the two columns of agreement show where they differ.\n\n| program | criterion | files | obligations | proved by covprune | proved by WP | both | covprune only | WP only | covprune time (s) | WP time (s) | WP time / covprune time |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n"));
        let mut groups: BTreeMap<(String, String), Vec<&Value>> = BTreeMap::new();
        for r in &peer_rows {
            groups
                .entry((
                    r["program"].as_str().unwrap_or("").into(),
                    r["criterion"].as_str().unwrap_or("").into(),
                ))
                .or_default()
                .push(r);
        }
        for ((program, c), rs) in &groups {
            let ok: Vec<&&Value> = rs.iter().filter(|r| r["peer"]["error"].is_null()).collect();
            let n = |k: &str| {
                ok.iter()
                    .map(|r| r["peer"][k].as_u64().unwrap_or(0))
                    .sum::<u64>()
            };
            let wp_t: f64 = ok
                .iter()
                .map(|r| r["peer"]["wall_s"].as_f64().unwrap_or(0.0))
                .sum();
            // covprune's time for the same files: its whole run (steps 1-3), an upper bound
            // of its step-1 time.
            let our_t: f64 = ok.iter().map(|r| r["wall_s"].as_f64().unwrap_or(0.0)).sum();
            let failed = rs.len() - ok.len();
            let stopped = ok
                .iter()
                .filter(|r| !r["peer"]["stopped_after_s"].is_null())
                .count();
            let mut files = ok.len().to_string();
            if failed > 0 {
                files.push_str(&format!(", WP failed on {failed}"));
            }
            if stopped > 0 {
                files.push_str(&format!(", WP stopped at its time cap on {stopped}"));
            }
            md.push_str(&format!(
                "| {program} | {c} | {files} | {} | {} | {} | {} | {} | {} | {our_t:.0} | {wp_t:.0} | {:.1} |\n",
                n("obligations"), n("covprune_proved"), n("proved"), n("both"), n("only_covprune"), n("only_peer"),
                if our_t > 0.0 { wp_t / our_t } else { 0.0 }
            ));
        }
        let caps: BTreeSet<u64> = peer_rows
            .iter()
            .filter_map(|r| r["peer"]["stopped_after_s"].as_u64())
            .collect();
        let one_sided: Vec<String> = peer_rows
            .iter()
            .filter(|r| r["peer"]["only_peer_ids"].is_array())
            .flat_map(|r| {
                let ids = |k: &str| -> Vec<String> {
                    r["peer"][k]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|id| format!("l{id}"))
                        .collect()
                };
                let name = format!(
                    "{}/{} {}",
                    r["program"].as_str().unwrap_or(""),
                    r["file"].as_str().unwrap_or(""),
                    r["criterion"].as_str().unwrap_or("")
                );
                let mut out = Vec::new();
                for (who, k) in [("covprune", "only_covprune_ids"), ("WP", "only_peer_ids")] {
                    let ids = ids(k);
                    if !ids.is_empty() {
                        out.push(format!("{name}, {who} only: {}", ids.join(" ")));
                    }
                }
                out
            })
            .collect();
        if !one_sided.is_empty() {
            md.push_str(&format!("\nLabels proved by one side only (ids of the file's `.labels`; rows recorded before ids were kept are not listed): {}.\n", one_sided.join("; ")));
        }
        md.push_str("\ncovprune's time is its whole run (steps 1-3); WP's is step 1 only.");
        if !caps.is_empty() {
            let caps: Vec<String> = caps.iter().map(|c| format!("{c} s")).collect();
            md.push_str(&format!(" WP was stopped at its time cap per file (`--peer-max-s`: {}) where the table says so; its counts are then of the goals it had answered, and the labels it had not reached count as not proved.", caps.join(", ")));
        }
        md.push('\n');
        let errors: Vec<String> = peer_rows
            .iter()
            .filter_map(|r| {
                r["peer"]["error"].as_str().map(|e| {
                    format!(
                        "- {}/{}: {}",
                        r["program"].as_str().unwrap_or(""),
                        r["file"].as_str().unwrap_or(""),
                        e.chars().take(300).collect::<String>()
                    )
                })
            })
            .collect();
        if !errors.is_empty() {
            md.push_str(&format!("\nWhere WP failed:\n{}\n", errors.join("\n")));
        }
    }

    // Scaling.
    md.push_str("\n## Scaling\n\n");
    let mut pairs = Vec::new();
    for r in rows.iter().filter(|r| r["jobs"] == 1) {
        if let Some(r2) = rows.iter().find(|x| {
            x["jobs"] == 2
                && x["program"] == r["program"]
                && x["file"] == r["file"]
                && x["criterion"] == r["criterion"]
        }) {
            pairs.push((r, r2));
        }
    }
    if pairs.is_empty() {
        md.push_str("`--jobs 1` against `--jobs 2`: not run yet (`all --jobs 2,1`).\n");
    } else {
        // Per (program, criterion): jobs-1 time, jobs-2 time, files, and where rows made by
        // another benchmark come from (their times are of another run of the machine).
        type ScalingSum = (f64, f64, usize, BTreeSet<String>);
        let mut by: BTreeMap<(String, String), ScalingSum> = BTreeMap::new();
        for (a, b) in &pairs {
            let e = by
                .entry((
                    a["program"].as_str().unwrap_or("").into(),
                    a["criterion"].as_str().unwrap_or("").into(),
                ))
                .or_default();
            e.0 += a["wall_s"].as_f64().unwrap_or(0.0);
            e.1 += b["wall_s"].as_f64().unwrap_or(0.0);
            e.2 += 1;
            for (jobs, r) in [(1, a), (2, b)] {
                if let Some(src) = r["source"].as_str() {
                    e.3.insert(format!("`--jobs {jobs}` row: {src}"));
                }
            }
        }
        md.push_str("| program | criterion | files | `--jobs 1` (s) | `--jobs 2` (s) | speed-up | rows from |\n|---|---|---|---|---|---|---|\n");
        for ((p, c), (a, b, n, sources)) in &by {
            let from = if sources.is_empty() {
                "this benchmark".to_string()
            } else {
                sources.iter().cloned().collect::<Vec<_>>().join("; ")
            };
            md.push_str(&format!(
                "| {p} | {c} | {n} | {a:.0} | {b:.0} | {:.2}x | {from} |\n",
                if *b > 0.0 { a / b } else { 0.0 }
            ));
        }
        md.push_str("\nThe pool benchmark ([pool-sqlite3.md](pool-sqlite3.md)) has the same comparison on SQLite with CC.\n");
    }
    let points: Vec<(String, f64, f64)> = rows
        .iter()
        .filter(|r| r["jobs"] == primary && r["wall_s"].as_f64().unwrap_or(0.0) > 0.0)
        .map(|r| {
            (
                format!(
                    "{} {}",
                    r["program"].as_str().unwrap_or(""),
                    r["criterion"].as_str().unwrap_or("")
                ),
                r["loc"].as_f64().unwrap_or(0.0).max(1.0),
                r["compiled"].as_f64().unwrap_or(0.0) / r["wall_s"].as_f64().unwrap_or(1.0),
            )
        })
        .collect();
    if !points.is_empty() {
        crate::plot::scaling(&o.out.join("scaling.svg"), &points)?;
        md.push_str(&format!("\n![labels per second against lines of code](scaling.svg)\n\nLabels decided per second (compiled labels / wall time, `--jobs {primary}`) against the file's non-blank lines of code, one point per file and criterion.\n"));
    }
    std::fs::write(o.out.join("RESULTS.md"), md)?;
    eprintln!(
        "wrote {} and {}",
        o.out.join("RESULTS.md").display(),
        o.out.join("results.csv").display()
    );
    Ok(())
}
