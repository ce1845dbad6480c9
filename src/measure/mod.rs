//! `covprune measure`: builds an annotated program with the recording runtime, runs a test
//! suite on it, and computes raw and cleaned coverage per criterion; every claim of the ledger
//! is checked against the runs (the soundness alarm).

mod coverage;
pub mod layout;
pub mod project;
pub mod runtime;
mod settled;
pub mod shell;
pub mod suite;

pub use crate::report::ledger::{claims_from_ledger, claims_of_statuses, Claim};
pub use coverage::{
    alarms, coverage, coverage_text, elements_report, objectives, pending_subsumed, Alarm, Coverage,
};
pub use settled::{settled, settled_text, Settled};
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
