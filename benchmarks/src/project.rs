//! The project benchmark: zlib and gzip from the corpus, each copied with a generated
//! `compile_commands.json` (the flags of the corpus's SOURCE.txt), run through `covprune
//! project` cold (empty cache), then again after a one-line edit in one function (warm: the
//! cold run's cache), and cold on the edited project (fresh cache). Also runs it cold with
//! each file alone (`--no-cross-file`): checks that those ledgers equal the ones of per-file
//! `annotate` + `prune` runs, and counts the labels pruning across files gains (or loses),
//! by default and with `--inline-across-files` (one more cold run).
//! Checks that the warm ledgers are byte-identical to the cold ones of the edited project;
//! reports each run's wall time. Writes `artifacts/project.md` and `.json`.
//!
//! With the programs' own tests (`benchmarks/fetch-test-suites.sh DIR` gets them from Debian's
//! source packages: zlib's `test/example.c` and `test/minigzip.c`, gzip's full tree configured
//! and built), `covprune project measure` runs them on the cold run's tree: `--zlib-tests DIR`
//! (a zlib source tree: its two test programs are built against the corpus's zlib and run),
//! `--gzip-tree DIR` (gzip is then staged from that tree, its 11 program files in the
//! database, and measured with `make check`). `--measure-only` skips the per-file, edit and
//! warm runs.
//!
//! Usage: `cargo run --release -p covprune-benchmarks -- project [--corpus DIR]
//! [--only zlib,gzip] [--criteria CC] [--jobs N] [--no-per-file] [--artifacts DIR]
//! [--zlib-tests DIR] [--gzip-tree DIR] [--measure-only] [--prune-args "..."]`; rows of
//! programs run now replace theirs in an existing `project.json`, the others are kept (so
//! `--only` runs add up); `--render` only writes `project.md` again from `project.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// A program of the corpus: its directory, the preprocessing flags SOURCE.txt gives, and the
/// one-line edit of the warm run (file, text before, text after; the text occurs once).
struct Program {
    name: &'static str,
    dir: &'static str,
    flags: &'static [&'static str],
    edit: (&'static str, &'static str, &'static str),
    /// The test command of `project measure`, run in the staged tree.
    test_command: &'static str,
}

/// zlib's two test programs, built against the (annotated) library and run: example's own
/// checks, then minigzip round trips of two files at two levels.
const ZLIB_TESTS: &str = "set -e; lib=$(ls *.c);     cc -I. -o example test/example.c $lib; ./example;     cc -I. -o minigzip test/minigzip.c $lib;     ./minigzip < zlib.h > zlib.h.gz; ./minigzip -d < zlib.h.gz | cmp - zlib.h;     ./minigzip -9 < deflate.c | ./minigzip -d | cmp - deflate.c;     ./minigzip -1 < trees.c | ./minigzip -d | cmp - trees.c";

const PROGRAMS: &[Program] = &[
    Program {
        name: "zlib",
        dir: "zlib-1.3.2",
        flags: &["-I."],
        // deflateBound_z: the wrapper size of its default case (one line; the case label
        // before it makes the text occur once).
        edit: (
            "deflate.c",
            "happiness */\n        wraplen = 18;\n",
            "happiness */\n        wraplen = 20;\n",
        ),
        test_command: ZLIB_TESTS,
    },
    Program {
        name: "gzip",
        dir: "gzip-1.12",
        flags: &["-DHAVE_CONFIG_H", "-I.", "-Ilib"],
        // fill_inbuf: stop reading on any non-positive count.
        edit: (
            "util.c",
            "        if (len == 0) break;\n",
            "        if (len <= 0) break;\n",
        ),
        test_command: "make check",
    },
];

#[derive(Serialize, Deserialize)]
struct Row {
    program: String,
    files: usize,
    labels: u64,
    functions: usize,
    cold_s: f64,
    warm_s: f64,
    cold_edited_s: f64,
    warm_share: f64,
    reused: u64,
    reproved: u64,
    /// Files whose project ledger equals the per-file run's (None: not checked).
    per_file_equal: Option<(usize, usize)>,
    /// Files whose warm ledger is byte-identical to the cold one of the edited project.
    warm_equal: (usize, usize),
    /// The cold run against one with each file alone (`--no-cross-file`).
    #[serde(default)]
    cross_file: Option<CrossFile>,
    edited: String,
    #[serde(default)]
    measure: Option<MeasureRow>,
    /// The same on the tree of the `--inline-across-files` run.
    #[serde(default)]
    measure_inlined: Option<MeasureRow>,
    /// The `--prune-args` of the run (limits).
    #[serde(default)]
    prune_args: String,
}

/// What pruning across files changed: the cold run's labels against those of a cold run with
/// each file alone (`--no-cross-file`), whose ledgers the per-file runs are compared with.
#[derive(Serialize, Deserialize)]
struct CrossFile {
    alone_s: f64,
    /// Against the cold run (summaries of other files' writes).
    summaries: Changes,
    /// A cold run with `--inline-across-files`: its time and changes.
    inlined_s: f64,
    inlined: Changes,
}

/// Labels whose status differs from the run with each file alone.
#[derive(Serialize, Deserialize)]
struct Changes {
    /// Labels unknown alone and pruned across files.
    gained: usize,
    /// Labels pruned alone and unknown across files (limits that ended differently).
    lost: usize,
    /// Labels with another pruned status.
    changed: usize,
    /// Some of the labels gained: `file: function: predicate (status)`.
    examples: Vec<String>,
}

/// `covprune project measure` on the cold run's tree.
#[derive(Serialize, Deserialize)]
struct MeasureRow {
    command: String,
    seconds: f64,
    succeeded: bool,
    labels: u64,
    covered: u64,
    raw_percent: f64,
    kept: u64,
    kept_covered: u64,
    cleaned_percent: f64,
    alarms: usize,
    pending: usize,
}

struct Opts {
    corpus: PathBuf,
    only: Vec<String>,
    criteria: String,
    jobs: usize,
    per_file: bool,
    artifacts: PathBuf,
    render: bool,
    zlib_tests: Option<PathBuf>,
    gzip_tree: Option<PathBuf>,
    measure_only: bool,
    /// More options for `covprune project` (limits), split on spaces.
    prune_args: Vec<String>,
}

fn parse(args: &[String], corpus: PathBuf, artifacts: PathBuf) -> Result<Opts> {
    let mut o = Opts {
        corpus,
        artifacts,
        render: false,
        only: Vec::new(),
        criteria: "CC".into(),
        jobs: 2,
        per_file: true,
        zlib_tests: None,
        gzip_tree: None,
        measure_only: false,
        prune_args: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().context(format!("{a} needs a value"));
        match a.as_str() {
            "--corpus" => o.corpus = PathBuf::from(value()?),
            "--only" => o.only = value()?.split(',').map(str::to_string).collect(),
            "--criteria" => o.criteria = value()?,
            "--jobs" => o.jobs = value()?.parse()?,
            "--no-per-file" => o.per_file = false,
            "--artifacts" => o.artifacts = PathBuf::from(value()?),
            "--render" => o.render = true,
            "--zlib-tests" => o.zlib_tests = Some(PathBuf::from(value()?)),
            "--gzip-tree" => o.gzip_tree = Some(PathBuf::from(value()?)),
            "--measure-only" => o.measure_only = true,
            "--prune-args" => {
                o.prune_args = value()?.split_whitespace().map(str::to_string).collect()
            }
            other => bail!("project: unknown option {other}"),
        }
    }
    Ok(o)
}

pub(crate) fn run(args: &[String], corpus: PathBuf, artifacts: PathBuf) -> Result<()> {
    let o = parse(args, corpus, artifacts)?;
    let json_path = o.artifacts.join("project.json");
    let mut rows: Vec<Row> = match std::fs::read_to_string(&json_path) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a project benchmark's", json_path.display()))?,
        Err(_) => Vec::new(),
    };
    if !o.render {
        let exe = std::env::current_exe()?.with_file_name("covprune");
        let work = std::env::temp_dir().join(format!("covprune-project-{}", std::process::id()));
        for p in PROGRAMS {
            if !o.only.is_empty() && !o.only.iter().any(|n| n == p.name) {
                continue;
            }
            let row = one_program(&o, &exe, &work.join(p.name), p)?;
            rows.retain(|r| r.program != row.program);
            rows.push(row);
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    rows.sort_by(|a, b| a.program.cmp(&b.program));
    std::fs::create_dir_all(&o.artifacts)?;
    std::fs::write(&json_path, serde_json::to_string_pretty(&rows)? + "\n")?;
    std::fs::write(o.artifacts.join("project.md"), markdown(&o, &rows))?;
    eprintln!("wrote {}", o.artifacts.join("project.md").display());
    Ok(())
}

/// Copies the program's sources (not the preprocessed copies) to `to` and writes its
/// compilation database there.
fn stage(from: &Path, to: &Path, flags: &[&str]) -> Result<()> {
    let _ = std::fs::remove_dir_all(to);
    copy_tree(from, to)?;
    let names: Vec<String> = c_files(to)?
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    write_database(to, &names, flags)
}

/// The `.c` files directly in `dir`, sorted.
fn c_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    Ok(files)
}

/// `to/compile_commands.json` compiling each of `names` (in `to`) with `flags`.
fn write_database(to: &Path, names: &[String], flags: &[&str]) -> Result<()> {
    let mut entries = Vec::new();
    for name in names {
        let name = name.clone();
        let mut arguments = vec!["cc".to_string(), "-c".to_string()];
        arguments.extend(flags.iter().map(|s| s.to_string()));
        arguments.extend([name.clone(), "-o".into(), name.replace(".c", ".o")]);
        entries.push(serde_json::json!({
            "directory": to.display().to_string(),
            "file": name,
            "arguments": arguments,
        }));
    }
    std::fs::write(
        to.join("compile_commands.json"),
        serde_json::to_string_pretty(&entries)?,
    )?;
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let e = e?;
        let name = e.file_name();
        if name == "preprocessed" || name == "tests" {
            continue;
        }
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &to.join(&name))?;
        } else {
            std::fs::copy(e.path(), to.join(&name))?;
        }
    }
    Ok(())
}

/// Runs `covprune project`; returns the wall time and the JSON report.
fn project(
    exe: &Path,
    o: &Opts,
    src: &Path,
    out: &Path,
    cache: &Path,
    extra: &[&str],
) -> Result<(f64, serde_json::Value)> {
    let t = Instant::now();
    let run = std::process::Command::new(exe)
        .arg("project")
        .arg("-p")
        .arg(src)
        .args([
            "--criteria",
            &o.criteria,
            "--jobs",
            &o.jobs.to_string(),
            "--json",
        ])
        .arg("-o")
        .arg(out)
        .arg("--cache")
        .arg(cache)
        .args(&o.prune_args)
        .args(extra)
        .output()?;
    let wall = t.elapsed().as_secs_f64();
    if !run.status.success() {
        bail!(
            "covprune project {} failed ({}): {}",
            src.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr)
        );
    }
    Ok((wall, serde_json::from_slice(&run.stdout)?))
}

/// The ledgers a project run wrote, by source file.
fn ledgers(report: &serde_json::Value) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for f in report["files"]
        .as_array()
        .context("a project report has files")?
    {
        if let Some(l) = f["ledger"].as_str() {
            let name = f["file"].as_str().unwrap_or_default().to_string();
            out.insert(name, std::fs::read_to_string(l)?);
        }
    }
    Ok(out)
}

/// Where the program's own tests come from, if they were given.
enum Tests<'a> {
    /// A source tree with `test/example.c` and `test/minigzip.c`.
    Zlib(&'a Path),
    /// A configured and built tree, staged instead of the corpus's files.
    GzipTree(&'a Path),
}

fn tests_of<'a>(o: &'a Opts, p: &Program) -> Option<Tests<'a>> {
    match p.name {
        "zlib" => o.zlib_tests.as_deref().map(Tests::Zlib),
        "gzip" => o.gzip_tree.as_deref().map(Tests::GzipTree),
        _ => None,
    }
}

/// Runs `covprune project measure` with the program's test command on `out`.
fn measure(exe: &Path, out: &Path, command: &str) -> Result<MeasureRow> {
    let t = Instant::now();
    let run = std::process::Command::new(exe)
        .args(["project", "measure", "--json", "-o"])
        .arg(out)
        .args(["--test-cmd", command])
        .output()?;
    let seconds = t.elapsed().as_secs_f64();
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).with_context(|| {
        format!(
            "project measure printed no report ({}): {}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        )
    })?;
    let all = report["total"]
        .as_array()
        .and_then(|t| t.last())
        .context("a measure report has totals")?;
    let n = |k: &str| all[k].as_u64().unwrap_or(0);
    let files = report["files"].as_array().cloned().unwrap_or_default();
    let count = |k: &str| -> usize {
        files
            .iter()
            .map(|f| f[k].as_array().map_or(0, Vec::len))
            .sum()
    };
    for f in &files {
        for a in f["alarms"].as_array().into_iter().flatten() {
            eprintln!("SOUNDNESS ALARM: {}: {a}", f["file"]);
        }
    }
    if let Some(tail) = report["commands"][0]["tail"].as_str() {
        eprintln!("the test command failed:\n{tail}");
    }
    Ok(MeasureRow {
        command: command.to_string(),
        seconds,
        succeeded: report["commands"][0]["outcome"]["exited"] == 0,
        labels: n("labels"),
        covered: n("covered"),
        raw_percent: all["raw_percent"].as_f64().unwrap_or(0.0),
        kept: n("kept"),
        kept_covered: n("kept_covered"),
        cleaned_percent: all["cleaned_percent"].as_f64().unwrap_or(0.0),
        alarms: count("alarms"),
        pending: count("pending"),
    })
}

fn one_program(o: &Opts, exe: &Path, work: &Path, p: &Program) -> Result<Row> {
    let src = work.join("src");
    let tests = tests_of(o, p);
    match &tests {
        Some(Tests::GzipTree(tree)) => {
            // The built tree, timestamps kept (else `make` would regenerate its Makefiles);
            // the database names the corpus's files (the build's own, not IBM Z's dfltcc.c).
            let _ = std::fs::remove_dir_all(&src);
            std::fs::create_dir_all(work)?;
            let st = std::process::Command::new("cp")
                .arg("-a")
                .arg(tree)
                .arg(&src)
                .status()?;
            if !st.success() {
                bail!("cannot copy {}", tree.display());
            }
            let names: Vec<String> = c_files(&o.corpus.join(p.dir))?
                .iter()
                .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            write_database(&src, &names, p.flags)?;
        }
        _ => stage(&o.corpus.join(p.dir), &src, p.flags)?,
    }
    if let Some(Tests::Zlib(dir)) = &tests {
        std::fs::create_dir_all(src.join("test"))?;
        for f in ["example.c", "minigzip.c"] {
            std::fs::copy(dir.join("test").join(f), src.join("test").join(f))
                .with_context(|| format!("{}: no test/{f}", dir.display()))?;
        }
    }
    eprintln!("{}: cold run", p.name);
    let (cold_s, cold) = project(exe, o, &src, &work.join("cold"), &work.join("cache"), &[])?;
    let measured = match tests {
        Some(_) => {
            eprintln!("{}: project measure ({})", p.name, p.test_command);
            Some(measure(exe, &work.join("cold"), p.test_command)?)
        }
        None => None,
    };
    let count = |v: &serde_json::Value, k: &str| v["cache"][k].as_u64().unwrap_or(0);
    if o.measure_only {
        return Ok(Row {
            program: p.name.into(),
            files: cold["files"].as_array().map_or(0, Vec::len),
            labels: cold["total"]["labels"].as_u64().unwrap_or(0),
            functions: (count(&cold, "reused") + count(&cold, "proved")) as usize,
            cold_s,
            warm_s: 0.0,
            cold_edited_s: 0.0,
            warm_share: 0.0,
            reused: 0,
            reproved: 0,
            per_file_equal: None,
            warm_equal: (0, 0),
            cross_file: None,
            edited: "not run (--measure-only)".into(),
            measure: measured,
            measure_inlined: None,
            prune_args: o.prune_args.join(" "),
        });
    }
    let cold_ledgers = ledgers(&cold)?;
    eprintln!("{}: cold run, each file alone", p.name);
    let (alone_s, alone) = project(
        exe,
        o,
        &src,
        &work.join("alone"),
        &work.join("cache-alone"),
        &["--no-cross-file"],
    )?;
    let alone_ledgers = ledgers(&alone)?;
    eprintln!(
        "{}: cold run, small functions encoded in place across files",
        p.name
    );
    let (inlined_s, inlined) = project(
        exe,
        o,
        &src,
        &work.join("inlined"),
        &work.join("cache-inlined"),
        &["--inline-across-files"],
    )?;
    let measure_inlined = match tests_of(o, p) {
        Some(_) => {
            eprintln!(
                "{}: project measure of the run with functions in place",
                p.name
            );
            Some(measure(exe, &work.join("inlined"), p.test_command)?)
        }
        None => None,
    };
    let cross_file = CrossFile {
        alone_s,
        summaries: changes(&alone_ledgers, &cold_ledgers)?,
        inlined_s,
        inlined: changes(&alone_ledgers, &ledgers(&inlined)?)?,
    };
    let per_file_equal = if o.per_file {
        eprintln!("{}: per-file runs", p.name);
        Some(per_file(exe, o, &src, p, &alone_ledgers)?)
    } else {
        None
    };
    // The one-line edit.
    let (file, before, after) = p.edit;
    let path = src.join(file);
    let text = std::fs::read_to_string(&path)?;
    if text.matches(before).count() != 1 {
        bail!("{}: the edit's text does not occur once in {file}", p.name);
    }
    std::fs::write(&path, text.replacen(before, after, 1))?;
    eprintln!("{}: warm run after the edit", p.name);
    let (warm_s, warm) = project(exe, o, &src, &work.join("warm"), &work.join("cache"), &[])?;
    eprintln!("{}: cold run of the edited project", p.name);
    let (cold_edited_s, cold_edited) = project(
        exe,
        o,
        &src,
        &work.join("cold-edited"),
        &work.join("cache-edited"),
        &[],
    )?;
    let (warm_l, cold_l) = (ledgers(&warm)?, ledgers(&cold_edited)?);
    let same = cold_l
        .iter()
        .filter(|(f, l)| warm_l.get(*f) == Some(*l))
        .count();
    for (f, l) in &cold_l {
        if warm_l.get(f) != Some(l) {
            eprintln!("{}: {f}: the warm ledger differs from the cold one", p.name);
        }
    }
    Ok(Row {
        program: p.name.into(),
        files: cold["files"].as_array().map_or(0, Vec::len),
        labels: cold["total"]["labels"].as_u64().unwrap_or(0),
        functions: (count(&cold, "reused") + count(&cold, "proved")) as usize,
        cold_s,
        warm_s,
        cold_edited_s,
        warm_share: warm_s / cold_edited_s,
        reused: count(&warm, "reused"),
        reproved: count(&warm, "proved"),
        per_file_equal,
        warm_equal: (same, cold_l.len()),
        cross_file: Some(cross_file),
        edited: format!("{file}: `{}` → `{}`", before.trim(), after.trim()),
        measure: measured,
        measure_inlined,
        prune_args: o.prune_args.join(" "),
    })
}

/// The labels whose status differs between the ledgers of a run with each file alone and
/// those of a run across files, by label id in each file.
fn changes(alone: &BTreeMap<String, String>, across: &BTreeMap<String, String>) -> Result<Changes> {
    let statuses = |text: &str| -> Result<BTreeMap<u64, (String, String, String)>> {
        let l: serde_json::Value = serde_json::from_str(text)?;
        Ok(l["labels"]
            .as_array()
            .context("a ledger has labels")?
            .iter()
            .map(|x| {
                let s = |k: &str| x[k].as_str().unwrap_or_default().to_string();
                (
                    x["id"].as_u64().unwrap_or(0),
                    (s("function"), s("predicate"), s("status")),
                )
            })
            .collect())
    };
    let mut c = Changes {
        gained: 0,
        lost: 0,
        changed: 0,
        examples: Vec::new(),
    };
    for (file, text) in across {
        let Some(before) = alone.get(file) else {
            continue;
        };
        let before = statuses(before)?;
        for (id, (function, predicate, status)) in statuses(text)? {
            let Some((_, _, was)) = before.get(&id) else {
                continue;
            };
            match (was.as_str(), status.as_str()) {
                (a, b) if a == b => {}
                ("unknown", _) => {
                    c.gained += 1;
                    c.examples
                        .push(format!("{file}: {function}: `{predicate}` ({status})"));
                }
                (_, "unknown") => c.lost += 1,
                _ => c.changed += 1,
            }
        }
    }
    Ok(c)
}

/// `annotate` and `prune` of each file on its own, with the flags on the command line: how
/// many of the project's ledgers they reproduce.
fn per_file(
    exe: &Path,
    o: &Opts,
    src: &Path,
    p: &Program,
    project: &BTreeMap<String, String>,
) -> Result<(usize, usize)> {
    let dir = src.with_file_name("per-file");
    std::fs::create_dir_all(&dir)?;
    let flags: Vec<String> = p
        .flags
        .iter()
        .map(|f| match f.strip_prefix("-I") {
            Some(d) => format!("-I{}", src.join(d).display()),
            None => f.to_string(),
        })
        .collect();
    let mut same = 0;
    for (name, ledger) in project {
        let (stem, annotated, _) =
            crate::annotate_into(exe, &src.join(name), &o.criteria, &dir, &flags)?;
        let st = std::process::Command::new(exe)
            .arg("prune")
            .arg(&annotated)
            .args(["--no-progress", "--jobs", &o.jobs.to_string()])
            // The project's limits too: other limits give other answers.
            .args(&o.prune_args)
            .stdout(std::process::Stdio::null())
            .status()?;
        if !st.success() {
            bail!("prune {} failed", annotated.display());
        }
        let own = std::fs::read_to_string(dir.join(format!("{stem}_labels.covprune.json")))?;
        if &own == ledger {
            same += 1;
        } else {
            eprintln!("{}: {name}: the per-file ledger differs", p.name);
        }
    }
    Ok((same, project.len()))
}

fn markdown(o: &Opts, rows: &[Row]) -> String {
    let mut s = format!(
        "# Project runs and the verdict cache\n\n`cargo run --release -p covprune-benchmarks -- project` \
         (criteria {}, `--jobs {}`, 2 cores).\n\nEach program is copied with a generated \
         `compile_commands.json` and run through `covprune project`: cold (empty cache), warm \
         after a one-line edit (the cold run's cache), and cold on the edited project (fresh \
         cache). The warm run's ledgers must be byte-identical to those of the cold run of the \
         edited project, and the ledgers of a project run with each file alone (`--no-cross-file`) \
         equal to per-file `annotate` + `prune` runs.\n\n",
        o.criteria, o.jobs
    );
    s.push_str("| program | limits | files | labels | functions | cold (s) | edit | warm (s) | cold, edited (s) | warm / cold | functions proved again | warm = cold ledgers | project = per-file ledgers |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.1} | {} | {:.1} | {:.1} | {:.1}% | {} of {} | {}/{} | {} |\n",
            r.program,
            if r.prune_args.is_empty() {
                "default"
            } else {
                &r.prune_args
            },
            r.files,
            r.labels,
            r.functions,
            r.cold_s,
            r.edited.replace('\n', " "),
            r.warm_s,
            r.cold_edited_s,
            100.0 * r.warm_share,
            r.reproved,
            r.reproved + r.reused,
            r.warm_equal.0,
            r.warm_equal.1,
            r.per_file_equal
                .map_or("not checked".into(), |(a, b)| format!("{a}/{b}")),
        ));
    }
    if rows.iter().any(|r| r.cross_file.is_some()) {
        s.push_str(
            "\n## Across files\n\nCold runs against a cold run with each file alone \
             (`--no-cross-file`, whose ledgers the per-file runs are compared with): the \
             default (other files' write summaries) and `--inline-across-files` (small \
             functions of other files also encoded in place of their calls). Gained: labels \
             unknown alone and pruned across files; lost: the reverse (a limit reached in a \
             bigger encoding).\n\n\
             | program | run | time (s) | gained | lost | other status |\n|---|---|---|---|---|---|\n",
        );
        for r in rows {
            if let Some(c) = &r.cross_file {
                s.push_str(&format!(
                    "| {} | each file alone | {:.1} | | | |\n",
                    r.program, c.alone_s
                ));
                for (run, t, ch) in [
                    ("summaries (default)", r.cold_s, &c.summaries),
                    ("`--inline-across-files`", c.inlined_s, &c.inlined),
                ] {
                    s.push_str(&format!(
                        "| {} | {run} | {t:.1} | {} | {} | {} |\n",
                        r.program, ch.gained, ch.lost, ch.changed
                    ));
                }
            }
        }
        for r in rows {
            let Some(c) = &r.cross_file else { continue };
            for (run, ch) in [("summaries", &c.summaries), ("in place", &c.inlined)] {
                if !ch.examples.is_empty() {
                    s.push_str(&format!("\n{}, labels gained ({run}):\n\n", r.program));
                    for e in &ch.examples {
                        s.push_str(&format!("- {e}\n"));
                    }
                }
            }
        }
    }
    if rows.iter().any(|r| r.measure.is_some()) {
        s.push_str(
            "\n## The programs' own tests through `covprune project measure`\n\n\
             On the cold run's tree (`--zlib-tests`, `--gzip-tree`: `benchmarks/fetch-test-suites.sh`). \
             Alarms: claims of the ledgers that a test contradicts (must be 0).\n\n\
             | program | test command | succeeded | time (s) | labels | covered | raw | kept | kept covered | cleaned | pending | alarms |\n\
             |---|---|---|---|---|---|---|---|---|---|---|---|\n",
        );
        for r in rows {
            let runs = [
                ("", &r.measure),
                (" (`--inline-across-files`)", &r.measure_inlined),
            ];
            for (run, m) in runs {
                let Some(m) = m else { continue };
                s.push_str(&format!(
                    "| {}{run} | `{}` | {} | {:.1} | {} | {} | {:.1}% | {} | {} | {:.1}% | {} | {} |\n",
                    r.program,
                    if m.command.len() > 40 {
                        "zlib's example and minigzip"
                    } else {
                        &m.command
                    },
                    if m.succeeded { "yes" } else { "no" },
                    m.seconds,
                    m.labels,
                    m.covered,
                    m.raw_percent,
                    m.kept,
                    m.kept_covered,
                    m.cleaned_percent,
                    m.pending,
                    m.alarms
                ));
            }
        }
    }
    s
}
