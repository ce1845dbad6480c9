//! `covprune measure`: builds an annotated program with the recording runtime, runs a test
//! suite on it, and computes raw and cleaned coverage per criterion; every claim of the ledger
//! is checked against the runs (the soundness alarm).

pub mod layout;
pub mod project;
pub mod runtime;
pub mod shell;
pub mod suite;

pub use crate::report::ledger::{claims_from_ledger, claims_of_statuses, Claim};
pub use suite::{read_tests, LineForm, TestSpec};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use covprune_encoders::{Criterion, Objective};
use rayon::prelude::*;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("cannot read the tests {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{0}: no tests")]
    Empty(PathBuf),
    #[error("the program does not build with the recording runtime:\n{0}")]
    Build(String),
    #[error("the original program {} does not build (needed to check the annotation; --no-check-behaviour skips it):\n{}", .0.display(), .1)]
    OriginalBuild(PathBuf, String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How the annotated program is compiled.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// The C compiler (default `cc`).
    pub cc: Option<String>,
    /// Flags for the program's translation units (`-I`, `-D`, `-std`, `-include`).
    pub flags: Vec<String>,
    /// Other translation units of the program, built as they are.
    pub sources: Vec<PathBuf>,
    /// Flags of the link, after the objects (`-lm`, `-L DIR`, `--ldflags` words).
    pub link: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// The program ended (any exit code is a normal end).
    Exited(i32),
    /// Killed by a signal (a crash): its labels count, its relations are not checked.
    Crashed(String),
    TimedOut,
}

impl std::fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunOutcome::Exited(c) => write!(f, "exited with {c}"),
            RunOutcome::Crashed(s) => write!(f, "crashed ({s})"),
            RunOutcome::TimedOut => write!(f, "timed out"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct TestRun {
    pub name: String,
    pub outcome: RunOutcome,
    pub reached: BTreeSet<u64>,
    pub covered: BTreeSet<u64>,
    /// The label whose predicate the run crashed in, when it crashed in one.
    pub crashed_in_label: Option<u64>,
    /// Labels with bindings: every distinct environment each was covered with.
    pub bindings: runtime::Bindings,
    /// The sequences (LTest's `pc_label_sequence` chains) the run completed.
    pub sequences: BTreeSet<u64>,
}

impl TestRun {
    /// A run that ended normally: every co-reached label it reached, it reached in full.
    pub fn completed(&self) -> bool {
        matches!(self.outcome, RunOutcome::Exited(_))
    }
}

/// A test on which the annotated program does not behave like the original: the annotation
/// changed the program, and its coverage is not the original's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub test: String,
    pub what: String,
    /// The label whose predicate the annotated program crashed in.
    pub label: Option<u64>,
}

/// What running the suite found.
#[derive(Clone, Debug, Default)]
pub struct SuiteRuns {
    pub runs: Vec<TestRun>,
    /// Whether the original program was run beside the annotated one.
    pub compared: bool,
    pub differences: Vec<Difference>,
    /// Tests whose behaviour the program itself does not define: the original's exit status
    /// differs between its `-O0` and `-O2` builds (then only the output is compared), or an
    /// output differs between two runs of the same program (then the test is not compared).
    pub undefined: Vec<String>,
}

fn compile(cc: &str, args: &[String], work: &Path) -> Result<(), MeasureError> {
    let out = Command::new(cc).args(args).current_dir(work).output()?;
    if !out.status.success() {
        return Err(MeasureError::Build(
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(4000)
                .collect(),
        ));
    }
    Ok(())
}

/// The programs a suite runs.
struct Programs {
    annotated: PathBuf,
    drivers: BTreeMap<String, PathBuf>,
    /// The original, built with `-O0` and with `-O2` (to tell an undefined exit status).
    original: Option<(PathBuf, PathBuf)>,
}

/// What one execution left: how it ended, and its output.
struct Execution {
    outcome: RunOutcome,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Where and how a suite runs.
pub struct SuitePlace<'a> {
    /// The scratch directory of the builds and records.
    pub work: &'a Path,
    /// Where the tests run.
    pub cwd: &'a Path,
    /// A test running longer is killed.
    pub timeout: Duration,
    /// Counts the tests as they end.
    pub progress: &'a crate::console::Progress,
}

/// Builds the program (and each driver) with the recording runtime in `work`, and, when
/// `original` is given, the original program as it is; runs every test (in parallel, each
/// with its own record) in `cwd`, killing those that run over `timeout`, and compares the
/// annotated program's behaviour (exit, standard output and error) with the original's.
pub fn run_tests(
    annotated: &Path,
    tests: &[TestSpec],
    build: &BuildOptions,
    place: &SuitePlace,
    original: Option<&Path>,
) -> Result<SuiteRuns, MeasureError> {
    let SuitePlace {
        work,
        cwd,
        timeout,
        progress,
    } = *place;
    let programs = build_programs(annotated, tests, build, work, original)?;
    let results = tests
        .par_iter()
        .enumerate()
        .map(|(k, t)| {
            let r = run_one(k, t, &programs, timeout, work, cwd);
            progress.inc(1);
            r
        })
        .collect::<Result<Vec<_>, std::io::Error>>()?;
    progress.finish();
    let mut out = SuiteRuns {
        compared: programs.original.is_some(),
        ..SuiteRuns::default()
    };
    for (run, difference, undefined) in results {
        if undefined {
            out.undefined.push(run.name.clone());
        }
        out.differences.extend(difference);
        out.runs.push(run);
    }
    Ok(out)
}

fn build_programs(
    annotated: &Path,
    tests: &[TestSpec],
    build: &BuildOptions,
    work: &Path,
    original: Option<&Path>,
) -> Result<Programs, MeasureError> {
    let cc = build.cc.clone().unwrap_or_else(|| "cc".into());
    let annotated = annotated.canonicalize()?;
    let header = work.join("covprune_runtime.h");
    std::fs::write(&header, runtime::HEADER)?;
    std::fs::write(work.join("covprune_runtime.c"), runtime::SOURCE)?;
    compile(
        &cc,
        &[
            "-c".into(),
            "-w".into(),
            "covprune_runtime.c".into(),
            "-o".into(),
            "covprune_runtime.o".into(),
        ],
        work,
    )?;
    let sources: Vec<String> = build
        .sources
        .iter()
        .map(|s| s.canonicalize().map(|p| p.display().to_string()))
        .collect::<Result<_, _>>()?;
    // `runtime`: whether the recording runtime is in (the annotated program and drivers).
    let command = |main_file: &Path, exe: &str, runtime: bool, opt: &str| -> Vec<String> {
        let mut a = vec!["-w".to_string(), "-g0".to_string(), opt.to_string()];
        a.extend(build.flags.iter().cloned());
        if let Some(dir) = main_file.parent() {
            a.push(format!("-I{}", dir.display()));
        }
        if runtime {
            if let Some(dir) = annotated.parent() {
                a.push(format!("-I{}", dir.display()));
            }
            a.push("-include".into());
            a.push(header.display().to_string());
        }
        a.push(main_file.display().to_string());
        a.extend(sources.iter().cloned());
        if runtime {
            a.push("covprune_runtime.o".into());
        }
        a.extend(build.link.iter().cloned());
        a.push("-o".into());
        a.push(exe.to_string());
        a
    };
    let has_programs = tests.iter().any(|t| !matches!(t, TestSpec::Driver { .. }));
    if has_programs {
        compile(&cc, &command(&annotated, "program", true, "-O0"), work)?;
    }
    let mut drivers = BTreeMap::new();
    for t in tests {
        if let TestSpec::Driver { name, path } = t {
            let exe = format!("driver_{name}");
            compile(
                &cc,
                &command(&path.canonicalize()?, &exe, true, "-O0"),
                work,
            )?;
            drivers.insert(name.clone(), work.join(exe));
        }
    }
    let original = match original {
        Some(src) if has_programs => {
            let src = src.canonicalize()?;
            let built = |exe: &str, opt: &str| -> Result<PathBuf, MeasureError> {
                compile(&cc, &command(&src, exe, false, opt), work).map_err(|e| match e {
                    MeasureError::Build(m) => MeasureError::OriginalBuild(src.clone(), m),
                    e => e,
                })?;
                Ok(work.join(exe))
            };
            Some((built("original", "-O0")?, built("original_o2", "-O2")?))
        }
        _ => None,
    };
    Ok(Programs {
        annotated: work.join("program"),
        drivers,
        original,
    })
}

/// Runs test `k` on the annotated program (recording its labels) and, when there is one, on
/// the original: the run, how they differ, and whether the behaviour is undefined (see
/// [`SuiteRuns::undefined`]).
fn run_one(
    k: usize,
    t: &TestSpec,
    programs: &Programs,
    timeout: Duration,
    work: &Path,
    cwd: &Path,
) -> std::io::Result<(TestRun, Option<Difference>, bool)> {
    let record = work.join(format!("record_{k}.txt"));
    let _ = std::fs::remove_file(&record);
    let exe = match t {
        TestSpec::Driver { name, .. } => &programs.drivers[name],
        _ => &programs.annotated,
    };
    let annotated = execute(exe, t, cwd, work, ('a', k), &record, timeout)?;
    // The test's own redirections get what the annotated program wrote.
    if let TestSpec::Args { redirects, .. } = t {
        for (target, bytes) in [
            (&redirects.stdout, &annotated.stdout),
            (&redirects.stderr, &annotated.stderr),
        ] {
            if let Some(suite::Target::File { path, append }) = target {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(*append)
                    .truncate(!*append)
                    .open(path)?;
                std::io::Write::write_all(&mut f, bytes)?;
            }
        }
    }
    let text = std::fs::read_to_string(&record).unwrap_or_default();
    let _ = std::fs::remove_file(&record);
    let recorded = runtime::parse_record(&text);
    let run = TestRun {
        name: t.name().to_string(),
        outcome: annotated.outcome.clone(),
        reached: recorded.reached,
        covered: recorded.covered,
        crashed_in_label: recorded.crashed_in,
        bindings: recorded.bindings,
        sequences: recorded.sequences,
    };
    let Some((orig0, orig2)) = programs
        .original
        .as_ref()
        .filter(|_| !matches!(t, TestSpec::Driver { .. }))
    else {
        return Ok((run, None, false));
    };
    let original = execute(orig0, t, cwd, work, ('o', k), &record, timeout)?;
    let mut undefined = false;
    let status_differs = annotated.outcome != original.outcome;
    let status_counts = status_differs
        && match (&annotated.outcome, &original.outcome) {
            (RunOutcome::Exited(_), RunOutcome::Exited(_)) => {
                let again = execute(orig2, t, cwd, work, ('p', k), &record, timeout)?;
                undefined = again.outcome != original.outcome;
                !undefined
            }
            _ => true,
        };
    let output_differs = annotated.stdout != original.stdout || annotated.stderr != original.stderr;
    // An output that changes from one run to the next of the same program (a read past a
    // buffer prints whatever the address layout left there) is not the annotation's doing.
    if !status_counts && output_differs {
        let annotated_again = execute(
            &programs.annotated,
            t,
            cwd,
            work,
            ('b', k),
            &record,
            timeout,
        )?;
        let original_again = execute(orig0, t, cwd, work, ('q', k), &record, timeout)?;
        let _ = std::fs::remove_file(&record);
        let same = |a: &Execution, b: &Execution| a.stdout == b.stdout && a.stderr == b.stderr;
        if !same(&annotated, &annotated_again) || !same(&original, &original_again) {
            return Ok((run, None, true));
        }
    }
    let what = if status_counts {
        let inside = run
            .crashed_in_label
            .map_or_else(String::new, |l| format!(" inside l{l}"));
        Some(format!(
            "the annotated program {}{inside}; the original {}",
            annotated.outcome, original.outcome
        ))
    } else if annotated.stdout != original.stdout {
        Some(first_difference(
            "standard output",
            &annotated.stdout,
            &original.stdout,
        ))
    } else if annotated.stderr != original.stderr {
        Some(first_difference(
            "standard error",
            &annotated.stderr,
            &original.stderr,
        ))
    } else {
        None
    };
    let difference = what.map(|what| Difference {
        test: run.name.clone(),
        what,
        label: run.crashed_in_label.filter(|_| status_counts),
    });
    Ok((run, difference, undefined))
}

/// Where two outputs of a stream first differ: the 1-based line and that line of each
/// (`annotated`, then `original`), each at most 120 bytes, as text.
fn first_difference(stream: &str, annotated: &[u8], original: &[u8]) -> String {
    let common = annotated
        .iter()
        .zip(original)
        .take_while(|(x, y)| x == y)
        .count();
    let start = annotated[..common]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let line = 1 + annotated[..common].iter().filter(|&&c| c == b'\n').count();
    let shown = |bytes: &[u8]| -> String {
        let rest = &bytes[start.min(bytes.len())..];
        let end = rest.iter().position(|&c| c == b'\n');
        match end {
            None if rest.is_empty() => "(the stream ends)".to_string(),
            _ => {
                let text = &rest[..end.unwrap_or(rest.len())];
                let cut = &text[..text.len().min(120)];
                format!("{:?}", String::from_utf8_lossy(cut))
            }
        }
    };
    format!(
        "{stream} differs from line {line}: annotated {}, original {}",
        shown(annotated),
        shown(original)
    )
}

/// Runs one program on one test, its output captured in files of `work` named after `tag`
/// (a letter for the run, the test's index). Every program is started as `WORK/t{k}/program`,
/// a link to it, with `COVPRUNE_RECORD` set to `record`: the annotated program and the
/// original see one `argv[0]` (and `$PROG`) and one environment. Only the annotated program
/// records.
fn execute(
    exe: &Path,
    t: &TestSpec,
    cwd: &Path,
    work: &Path,
    (letter, k): (char, usize),
    record: &Path,
    timeout: Duration,
) -> std::io::Result<Execution> {
    let tag = format!("{letter}{k}");
    let slot = work.join(format!("t{k}"));
    std::fs::create_dir_all(&slot)?;
    let link = slot.join("program");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(exe.canonicalize()?, &link)?;
    let exe = link.as_path();
    let out_path = work.join(format!("out_{tag}"));
    let err_path = work.join(format!("err_{tag}"));
    let out_file = std::fs::File::create(&out_path)?;
    let mut joined = false;
    let mut cmd = match t {
        TestSpec::Args {
            args, redirects, ..
        } => {
            let mut c = Command::new(exe);
            c.args(args);
            c.stdin(match &redirects.stdin {
                Some(f) => Stdio::from(std::fs::File::open(f)?),
                None => Stdio::null(),
            });
            joined = redirects.stderr == Some(suite::Target::Stdout);
            c
        }
        TestSpec::Shell { script, .. } => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c")
                .arg(script)
                .env("PROG", exe)
                .stdin(Stdio::null());
            c
        }
        TestSpec::Driver { .. } => {
            let mut c = Command::new(exe);
            c.stdin(Stdio::null());
            c
        }
        TestSpec::NotRunnable { why, .. } => {
            return Err(std::io::Error::other(format!("{}: {why}", t.name())))
        }
    };
    let err_file = if joined {
        out_file.try_clone()?
    } else {
        std::fs::File::create(&err_path)?
    };
    cmd.env("COVPRUNE_RECORD", record);
    cmd.current_dir(cwd)
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::from(err_file));
    let mut child = cmd.spawn()?;
    let outcome = wait_within(&mut child, timeout)?;
    let stdout = std::fs::read(&out_path).unwrap_or_default();
    let stderr = std::fs::read(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    Ok(Execution {
        outcome,
        stdout,
        stderr,
    })
}

/// [`wait_for`] a child just started, with nothing beside it to stop, polling every
/// millisecond: how a single program run (a test, a witness call) ends.
pub(crate) fn wait_within(
    child: &mut std::process::Child,
    timeout: Duration,
) -> std::io::Result<RunOutcome> {
    wait_for(
        child,
        Instant::now(),
        timeout,
        Duration::from_millis(1),
        |_| {},
    )
}

/// Waits for `child`, started at `start`, polling every `poll`: how it ended, or
/// [`RunOutcome::TimedOut`] once `timeout` has passed (then `stop` runs before it is killed,
/// for what it started beside itself).
pub(crate) fn wait_for(
    child: &mut std::process::Child,
    start: Instant,
    timeout: Duration,
    poll: Duration,
    stop: impl FnOnce(&std::process::Child),
) -> std::io::Result<RunOutcome> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(match status.code() {
                Some(c) => RunOutcome::Exited(c),
                None => RunOutcome::Crashed(signal_name(&status)),
            });
        }
        if start.elapsed() > timeout {
            stop(child);
            let _ = child.kill();
            let _ = child.wait();
            return Ok(RunOutcome::TimedOut);
        }
        std::thread::sleep(poll);
    }
}

#[cfg(unix)]
fn signal_name(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    status
        .signal()
        .map_or_else(|| "killed".into(), |s| format!("signal {s}"))
}

#[cfg(not(unix))]
fn signal_name(_: &std::process::ExitStatus) -> String {
    "killed".into()
}

/// A run that contradicts a claim of the ledger: a soundness bug of the pruning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Alarm {
    pub label: u64,
    pub claim: String,
    pub test: String,
    pub what: String,
}

/// Checks every claim against the runs. Infeasible claims are checked on every run; relations
/// (which assume runs are not interrupted between co-reached labels) on runs that ended.
pub fn alarms(claims: &BTreeMap<u64, Claim>, runs: &[TestRun]) -> Vec<Alarm> {
    let mut out = Vec::new();
    for (&id, claim) in claims {
        for r in runs {
            let cov = |x: u64| r.covered.contains(&x);
            match claim {
                Claim::Infeasible if cov(id) => out.push(Alarm {
                    label: id,
                    claim: "infeasible".into(),
                    test: r.name.clone(),
                    what: format!("test {} covers l{id}", r.name),
                }),
                Claim::Duplicate(of) if r.completed() && cov(id) != cov(*of) => out.push(Alarm {
                    label: id,
                    claim: format!("duplicate of {of}"),
                    test: r.name.clone(),
                    what: format!(
                        "test {} covers l{} but not l{}",
                        r.name,
                        if cov(id) { id } else { *of },
                        if cov(id) { *of } else { id }
                    ),
                }),
                Claim::Subsumed(by) if r.completed() && !cov(id) => {
                    if let Some(b) = by.iter().find(|b| cov(**b)) {
                        out.push(Alarm {
                            label: id,
                            claim: format!("subsumed by {b}"),
                            test: r.name.clone(),
                            what: format!("test {} covers l{b} but not l{id}", r.name),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Coverage of one criterion, with the counts of [`crate::report::counts`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Coverage {
    pub criterion: String,
    pub labels: usize,
    pub covered: usize,
    /// Infeasible, duplicate or subsumed within the criterion: what `prune` counts.
    pub pruned: usize,
    pub infeasible: usize,
    /// Pruned as subsumed, but no test covers the label nor any of its subsumers: kept
    /// (uncovered) in the cleaned ratio, since a subsumer no test covers may be infeasible.
    pub pending: usize,
    /// Kept though duplicate or subsumed through labels of other criteria: redundant only
    /// when those labels are objectives too.
    pub across: usize,
    /// The objectives left: labels - pruned + pending.
    pub kept: usize,
    /// Kept labels some test covers.
    pub kept_covered: usize,
}

impl Coverage {
    fn ratio(a: usize, b: usize) -> Option<f64> {
        (b > 0).then(|| 100.0 * a as f64 / b as f64)
    }
    /// covered / all labels, in %.
    pub fn raw(&self) -> Option<f64> {
        Coverage::ratio(self.covered, self.labels)
    }
    /// covered kept labels / kept labels, in %.
    pub fn cleaned(&self) -> Option<f64> {
        Coverage::ratio(self.kept_covered, self.kept)
    }
    /// Adds the counts of `other` (the same criterion, in another file).
    pub fn add(&mut self, other: &Coverage) {
        self.labels += other.labels;
        self.covered += other.covered;
        self.pruned += other.pruned;
        self.infeasible += other.infeasible;
        self.pending += other.pending;
        self.across += other.across;
        self.kept += other.kept;
        self.kept_covered += other.kept_covered;
    }
    /// covered / labels not proven infeasible, in %: what the pruning says is reachable.
    pub fn upper_bound(&self) -> Option<f64> {
        Coverage::ratio(self.covered, self.labels - self.infeasible)
    }
}

/// Per criterion (a tag's first word, sorted) and overall (`all`, last), with the classes of
/// [`crate::report::counts`]: within a criterion only relations to labels of the same
/// criterion prune (a CC label subsumed by an MCC label is still a CC objective); in `all`
/// every relation does. A pruned label that is pending stays an objective.
pub fn coverage(
    labels: &[(u64, String)],
    claims: &BTreeMap<u64, Claim>,
    covered: &BTreeSet<u64>,
) -> Vec<Coverage> {
    use crate::report::counts::{self, Class, Fact};
    let facts: Vec<Fact> = labels
        .iter()
        .map(|(id, tag)| Fact::of_claim(*id, tag, claims.get(id)))
        .collect();
    let within = counts::classify(&facts);
    let together = counts::classify_together(&facts);
    let mut per: BTreeMap<String, Coverage> = BTreeMap::new();
    let mut all = Coverage {
        criterion: "all".into(),
        ..Coverage::default()
    };
    let add = |c: &mut Coverage, class: Class, is_cov: bool, pending: bool| {
        c.labels += 1;
        c.covered += usize::from(is_cov);
        c.infeasible += usize::from(class == Class::Infeasible);
        c.across += usize::from(class == Class::Across);
        c.pruned += usize::from(class.pruned());
        c.pending += usize::from(pending && class == Class::Subsumed);
        if stays(class, pending) {
            c.kept += 1;
            c.kept_covered += usize::from(is_cov);
        }
    };
    for (id, tag) in labels {
        let crit = counts::criterion_of(tag).to_string();
        let is_cov = covered.contains(id);
        let pending = pending_subsumed(*id, claims, covered).is_some();
        let c = per.entry(crit.clone()).or_insert_with(|| Coverage {
            criterion: crit,
            ..Coverage::default()
        });
        add(c, within[id], is_cov, pending);
        add(&mut all, together[id], is_cov, pending);
    }
    let mut out: Vec<Coverage> = per.into_values().collect();
    out.push(all);
    out
}

/// Whether a label of `class` stays an objective: not pruned within its criterion, or pruned
/// as subsumed but `pending` (see [`pending_subsumed`]).
fn stays(class: crate::report::counts::Class, pending: bool) -> bool {
    !class.pruned() || (pending && class == crate::report::counts::Class::Subsumed)
}

/// The labels (id, tag) that stay objectives of their own criteria once the runs covered
/// `covered`: the kept labels of [`coverage`]'s rows.
pub fn objectives<'a>(
    labels: impl IntoIterator<Item = (u64, &'a str)>,
    claims: &'a BTreeMap<u64, Claim>,
    covered: &BTreeSet<u64>,
) -> BTreeSet<u64> {
    use crate::report::counts::{classify, Fact};
    let facts: Vec<Fact> = labels
        .into_iter()
        .map(|(id, tag)| Fact::of_claim(id, tag, claims.get(&id)))
        .collect();
    classify(&facts)
        .into_iter()
        .filter(|(id, class)| stays(*class, pending_subsumed(*id, claims, covered).is_some()))
        .map(|(id, _)| id)
        .collect()
}

/// A subsumed label that neither the suite nor any of its subsumers' covering tests reach:
/// its subsumers, else `None`. Its claim is sound, but a subsumer no test covers may be
/// infeasible without a proof, and then nothing left to cover implies the label.
pub fn pending_subsumed<'c>(
    id: u64,
    claims: &'c BTreeMap<u64, Claim>,
    covered: &BTreeSet<u64>,
) -> Option<&'c [u64]> {
    match claims.get(&id) {
        Some(Claim::Subsumed(by))
            if !covered.contains(&id) && !by.iter().any(|b| covered.contains(b)) =>
        {
            Some(by)
        }
        _ => None,
    }
}

/// The coverage table as text; columns named as in the README's glossary.
pub fn coverage_text(rows: &[Coverage]) -> String {
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}%"));
    let line = |cells: [&str; 11]| {
        format!(
            "{:<9} {:>7} {:>8} {:>7} {:>7} {:>8} {:>8} {:>6} {:>13} {:>8} {:>7}\n",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            cells[8],
            cells[9],
            cells[10]
        )
    };
    let mut out = line([
        "criterion",
        "labels",
        "covered",
        "raw",
        "pruned",
        "pending",
        "+across",
        "kept",
        "kept covered",
        "cleaned",
        "bound",
    ]);
    for r in rows {
        out.push_str(&line([
            &r.criterion,
            &r.labels.to_string(),
            &r.covered.to_string(),
            &pct(r.raw()),
            &r.pruned.to_string(),
            &r.pending.to_string(),
            &r.across.to_string(),
            &r.kept.to_string(),
            &r.kept_covered.to_string(),
            &pct(r.cleaned()),
            &pct(r.upper_bound()),
        ]));
    }
    out.push_str("kept = labels - pruned + pending; cleaned = kept covered / kept; bound = covered / labels not infeasible\n");
    out
}

/// A Mutation Testing Elements report (schema version 1) of the WM and WM-S labels: a covered
/// label is a killed mutant, a reached one survived, an unreached one has no coverage, and a
/// pruned one (within its criterion, not pending) is ignored with the reason. Its mutation
/// score, killed / (killed + survived + no coverage), is then the kept labels covered over the
/// kept labels of those criteria: `measure`'s cleaned coverage of WM and WM-S together.
pub fn elements_report(
    labels: &[(u64, String, String)],
    claims: &BTreeMap<u64, Claim>,
    runs: &[TestRun],
    sources: &BTreeMap<String, String>,
) -> serde_json::Value {
    let covered: BTreeSet<u64> = runs
        .iter()
        .flat_map(|r| r.covered.iter().copied())
        .collect();
    let kept = objectives(
        labels.iter().map(|(id, tag, _)| (*id, tag.as_str())),
        claims,
        &covered,
    );
    let mut files: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for (id, tag, origin) in labels {
        if Criterion::of_tag(tag).map(Criterion::objective) != Some(Objective::Mutant) {
            continue;
        }
        let mutator = tag.split_whitespace().nth(1).unwrap_or("WM");
        let (file, line) = origin
            .rsplit_once(':')
            .map_or((origin.as_str(), 1), |(f, l)| (f, l.parse().unwrap_or(1)));
        let killers: Vec<&str> = runs
            .iter()
            .filter(|r| r.covered.contains(id))
            .map(|r| r.name.as_str())
            .collect();
        let reached = runs.iter().any(|r| r.reached.contains(id));
        // Ignored: no objective any more, so that the score is the cleaned coverage of the
        // mutants kept.
        let (status, reason) = match claims.get(id).filter(|_| !kept.contains(id)) {
            Some(Claim::Infeasible) => (
                "Ignored",
                Some("equivalent mutant (proved infeasible)".to_string()),
            ),
            Some(Claim::Duplicate(of)) => (
                "Ignored",
                Some(format!("redundant: duplicate of mutant {of}")),
            ),
            Some(Claim::Subsumed(by)) => (
                "Ignored",
                Some(format!(
                    "redundant: subsumed by mutant {}",
                    by.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
                )),
            ),
            None if !killers.is_empty() => ("Killed", None),
            None if reached => ("Survived", None),
            None => ("NoCoverage", None),
        };
        let mut m = serde_json::json!({
            "id": id.to_string(),
            "mutatorName": mutator,
            "location": {"start": {"line": line, "column": 1}, "end": {"line": line, "column": 2}},
            "status": status,
        });
        if let Some(r) = reason {
            m["statusReason"] = serde_json::json!(r);
        }
        if !killers.is_empty() {
            m["killedBy"] = serde_json::json!(killers);
        }
        files.entry(file.to_string()).or_default().push(m);
    }
    let files: serde_json::Map<String, serde_json::Value> = files
        .into_iter()
        .map(|(f, mutants)| {
            let source = sources.get(&f).cloned().unwrap_or_default();
            (
                f,
                serde_json::json!({"language": "c", "source": source, "mutants": mutants}),
            )
        })
        .collect();
    serde_json::json!({
        "schemaVersion": "1",
        "thresholds": {"high": 80, "low": 60},
        "files": files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, covered: &[u64]) -> TestRun {
        TestRun {
            name: name.into(),
            outcome: RunOutcome::Exited(0),
            reached: covered.iter().copied().collect(),
            covered: covered.iter().copied().collect(),
            crashed_in_label: None,
            bindings: Default::default(),
            sequences: BTreeSet::new(),
        }
    }

    #[test]
    fn every_kind_of_contradiction_is_reported() {
        let claims = BTreeMap::from([
            (1, Claim::Infeasible),
            (3, Claim::Duplicate(2)),
            (5, Claim::Subsumed(vec![4])),
        ]);
        let runs = [
            run("t1", &[1]),
            run("t2", &[2]),
            run("t3", &[4]),
            run("ok", &[2, 3, 4, 5]),
        ];
        let a = alarms(&claims, &runs);
        let got: Vec<(u64, &str)> = a.iter().map(|a| (a.label, a.test.as_str())).collect();
        assert_eq!(got, vec![(1, "t1"), (3, "t2"), (5, "t3")]);
    }

    #[test]
    fn cleaned_coverage_leaves_polluting_labels_out() {
        let labels: Vec<(u64, String)> = (1..=4).map(|i| (i, "CC".to_string())).collect();
        let claims = BTreeMap::from([(4, Claim::Infeasible), (3, Claim::Duplicate(1))]);
        let c = coverage(&labels, &claims, &BTreeSet::from([1, 3]));
        assert_eq!(c[0].raw(), Some(50.0));
        assert_eq!(c[0].cleaned(), Some(50.0)); // kept 1, 2; covered 1
        assert!((c[0].upper_bound().unwrap() - 66.666).abs() < 0.01);
        assert_eq!(c.last().unwrap().criterion, "all");
    }

    #[test]
    fn relations_to_other_criteria_do_not_prune_a_criterion() {
        // 2 (CC) is subsumed by 1 (MCC); 3 and 4 (CC) are duplicates of 1.
        let labels = vec![
            (1, "MCC".to_string()),
            (2, "CC".to_string()),
            (3, "CC".to_string()),
            (4, "CC".to_string()),
        ];
        let claims = BTreeMap::from([
            (2, Claim::Subsumed(vec![1])),
            (3, Claim::Duplicate(1)),
            (4, Claim::Duplicate(1)),
        ]);
        let c = coverage(&labels, &claims, &BTreeSet::new());
        let cc = c.iter().find(|r| r.criterion == "CC").unwrap();
        // 2 and 3 kept, 4 a duplicate of 3; 2 and 3 are redundant only through MCC.
        assert_eq!((cc.kept, cc.pruned, cc.across), (2, 1, 2));
        // Overall, 2 is pending: no test covers it or its subsumer 1, so it stays an objective.
        let all = c.last().unwrap();
        assert_eq!((all.kept, all.pending), (2, 1));
        // Once a test covers 1, 2 is settled (covered through 1) and leaves the ratio.
        let c = coverage(&labels, &claims, &BTreeSet::from([1]));
        let all = c.last().unwrap();
        assert_eq!((all.kept, all.pending, all.kept_covered), (1, 0, 1));
    }
}
