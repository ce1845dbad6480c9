//! The worker pool: `--jobs N` prover processes (this same executable, each with its own
//! solver) under a supervisor, handed one function at a time through a pipe, their results
//! meeting in one journal. A worker that dies (a solver crash, an abort, a signal) costs only
//! the function it was proving: the supervisor marks it crashed in the journal (its step-1
//! answers so far are kept, the rest stays unknown) and starts a new worker.
//!
//! Protocol. A worker is the executable run with `COVPRUNE_WORKER=serve` in its environment (so
//! it works whatever the executable is called). On stdin it reads one line of JSON, the
//! [`Job`], then function indices, one per line, and `end`; another job line on the way
//! switches it to that job's program (a project's files share one queue, [`prove_units`]). An
//! index alone asks for the whole function; `INDEX sK` for share K of its questions, `INDEX f`
//! for its finish once every share is in ([`super::shares`]). On stdout it answers `p N` for
//! N labels decided (progress) and `d` with the line it was handed once that result is in the
//! journal. A worker whose stdin closes without `end` (the supervisor died)
//! exits at once.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::journal::Journal;
use super::shares::Part;
use super::{Hooks, Prover, PruneConfig};
use crate::ir::Program;

/// The environment variable that makes the executable a pool worker, and its value.
pub const WORKER_ENV: &str = "COVPRUNE_WORKER";
const SERVE: &str = "serve";
/// Restarts after crashes before giving up.
const MAX_RESTARTS: usize = 20;

/// Is this process a pool worker?
pub fn is_worker() -> bool {
    std::env::var(WORKER_ENV).is_ok_and(|v| v == SERVE)
}

/// What a worker needs to prove functions as the supervisor would: the input (whatever the
/// caller needs to load the same program), the configuration, the shard and the journal.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job<I> {
    pub input: I,
    pub config: PruneConfig,
    pub shard: Option<(usize, usize)>,
    pub journal: PathBuf,
    pub fingerprint: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// A worker ended with this exit code and already said why (bad input, journal mismatch).
    #[error("a prover worker stopped with exit code {0}")]
    WorkerExit(u8),
    #[error("{0}")]
    Failed(String),
}

/// The worker's side: reads a job, loads its program with `load`, then proves the functions
/// it is handed until `end`; a new job line (a project's next file) switches programs.
pub fn serve<I: DeserializeOwned>(
    load: impl Fn(&I) -> anyhow::Result<Program>,
) -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    // Stdin is read aside: `end` closes it normally; an end of file without it means the
    // supervisor died (killed), and the worker goes too rather than write on unwatched.
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line == "end" {
                return;
            }
            if tx.send(line).is_err() {
                return;
            }
        }
        std::process::exit(1);
    });
    let Ok(mut job_line) = rx.recv() else {
        return Ok(());
    };
    let out = Mutex::new(std::io::stdout());
    // A supervisor gone is no error: the journal keeps what is proved.
    let say = |line: String| {
        if let Ok(mut o) = out.lock() {
            let _ = writeln!(o, "{line}").and_then(|_| o.flush());
        }
    };
    'jobs: loop {
        let job: Job<I> = serde_json::from_str(&job_line)
            .map_err(|e| anyhow::anyhow!("worker: the job line is not understood: {e}"))?;
        let program = load(&job.input)?;
        let mut config = job.config.clone();
        config.jobs = 1;
        let (journal, prior) = Journal::join(&job.journal, &job.fingerprint)?;
        let prover = Prover::new(&program, &config);
        let hooks = Hooks {
            journal: Some(&journal),
            prior: Some(&prior),
            shard: job.shard,
        };
        for line in rx.iter() {
            if line.starts_with('{') {
                job_line = line;
                continue 'jobs;
            }
            let mut words = line.split_whitespace();
            let (Some(i), Some(part)) = (
                words.next().and_then(|w| w.parse::<usize>().ok()),
                Part::parse(words.next()),
            ) else {
                anyhow::bail!("worker: expected a function index and its part, got `{line}`");
            };
            if i >= program.functions.len() {
                anyhow::bail!("worker: no function {i}");
            }
            // Fault injection for the pool's tests: die as a crashing solver would, while
            // proving the named function (once: a restarted worker finds it crashed).
            let faults = &job.config.faults;
            let name = &program.functions[i].name;
            if faults.abort_in.as_ref() == Some(name) && !prior.crashed.contains(name) {
                std::process::abort();
            }
            // The pool's tests follow which worker proves what.
            if let Some(log) = &faults.worker_log {
                let line = format!(
                    "{} {} {}\n",
                    std::process::id(),
                    job.journal.display(),
                    program.functions[i].name
                );
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(log)
                    .and_then(|mut f| f.write_all(line.as_bytes()));
            }
            let progress = |n| say(format!("p {n}"));
            match part {
                Part::Whole => {
                    prover.prove_one(i, &progress, &hooks);
                }
                Part::Share(k) => {
                    prover.prove_share(i, k, &progress, &hooks);
                }
                Part::Finish => {
                    // The shares (and any crash) other workers journaled since this one joined.
                    let now = Journal::read(&job.journal, &job.fingerprint)?;
                    let shares = (0..super::shares::shares_of(&program.functions[i]))
                        .filter_map(|k| now.shares.get(&(name.clone(), k)).cloned())
                        .collect();
                    let hooks = Hooks {
                        journal: Some(&journal),
                        prior: Some(&now),
                        shard: job.shard,
                    };
                    prover.finish_one(i, shares, &progress, &hooks);
                }
            }
            say(format!("d {i}{}", part.word()));
        }
        return Ok(());
    }
}

/// One program's share of a pool run (one file of a project): its job, the functions to
/// prove, and the journal their results meet in.
pub struct Unit {
    job_line: String,
    journal_path: PathBuf,
    fingerprint: String,
    /// The program's function names, by index.
    names: Vec<String>,
    /// The functions to prove (indices), with their sizes in blocks.
    order: Vec<(usize, usize)>,
    /// The parts of each function to prove the run proves, by index.
    parts: BTreeMap<usize, Vec<Part>>,
    /// The shares still out, by index of a function the run finishes: its finish is handed
    /// out when none is.
    shares_out: Mutex<BTreeMap<usize, usize>>,
    /// The functions in shares the run finishes.
    finished: BTreeSet<usize>,
    journal: Journal,
    /// Milliseconds workers spent on this unit's functions.
    busy_ms: AtomicU64,
}

impl Unit {
    /// The functions `order` (indices into `program`'s functions) of `job`, whose journal is
    /// open as `journal`.
    pub fn new<I: Serialize>(
        job: &Job<I>,
        program: &Program,
        order: &[usize],
        journal: Journal,
    ) -> Result<Unit, PoolError> {
        let job_line = serde_json::to_string(job)
            .map_err(|e| PoolError::Failed(format!("the job does not serialise: {e}")))?;
        let parts = super::parts_in_shard(program, job.shard);
        if let Some(i) = order.iter().find(|i| !parts.contains_key(i)) {
            return Err(PoolError::Failed(format!(
                "function {} is not to be proved in this run",
                program.functions[*i].name
            )));
        }
        // The functions in shares that the run finishes (it proves every share of them).
        let finished: BTreeSet<usize> = order
            .iter()
            .copied()
            .filter(|i| {
                let f = &program.functions[*i];
                super::shares::shares_of(f) > 1 && super::finishes(f, &parts[i])
            })
            .collect();
        Ok(Unit {
            job_line,
            journal_path: job.journal.clone(),
            fingerprint: job.fingerprint.clone(),
            names: program.functions.iter().map(|f| f.name.clone()).collect(),
            order: order
                .iter()
                .map(|&i| (i, program.functions[i].blocks.len()))
                .collect(),
            shares_out: Mutex::new(
                finished
                    .iter()
                    .map(|&i| (i, super::shares::shares_of(&program.functions[i])))
                    .collect(),
            ),
            finished,
            parts: order.iter().map(|&i| (i, parts[&i].clone())).collect(),
            journal,
            busy_ms: AtomicU64::new(0),
        })
    }
}

impl Unit {
    /// How many functions the unit has to prove.
    pub fn functions(&self) -> usize {
        self.order.len()
    }
}

/// What [`prove_units`] gives for one unit.
pub struct UnitOutcome {
    /// Each function's result, sorted by function name, and the shares of those the run does
    /// not finish; or why the unit failed (its input refused by a worker, a result missing).
    pub results: Result<super::Proved, PoolError>,
    /// Milliseconds workers spent on the unit's functions.
    pub busy_ms: u64,
}

/// How far down the queue a worker looks for a function of the program it has loaded before
/// it takes the biggest one (and loads another program): loading costs a parse, but the
/// biggest functions must not start last.
const AFFINITY_WINDOW: usize = 4;

/// What the supervisor's threads share, one per worker slot.
struct Supervisor<'a> {
    exe: &'a Path,
    units: &'a [Unit],
    /// (unit, function index, part) not yet handed out, biggest first across units.
    queue: Mutex<Vec<(usize, usize, Part)>>,
    progress: super::Progress<'a>,
    restarts: AtomicUsize,
    /// Why a unit failed, by unit.
    unit_failures: Mutex<BTreeMap<usize, PoolError>>,
    /// A failure of the pool itself (a worker that cannot start): every unit stops.
    failure: Mutex<Option<PoolError>>,
}

impl Supervisor<'_> {
    /// The next function for a worker that has `loaded` the program of that unit: one of its
    /// program among the first few of the queue, else the first.
    fn next(&self, loaded: Option<usize>) -> Option<(usize, usize, Part)> {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let k = loaded
            .and_then(|u| {
                queue
                    .iter()
                    .take(AFFINITY_WINDOW)
                    .position(|&(v, _, _)| v == u)
            })
            .unwrap_or(0);
        (k < queue.len()).then(|| queue.remove(k))
    }

    /// A part is done (or given up): the last share of a function puts its finish at the
    /// head of the queue.
    fn part_done(&self, u: usize, i: usize, part: Part) {
        if !matches!(part, Part::Share(_)) {
            return;
        }
        let mut out = self.units[u]
            .shares_out
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let Some(n) = out.get_mut(&i) else { return };
        *n -= 1;
        if *n == 0 {
            out.remove(&i);
            let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            // A failed unit's queue stays empty.
            if !self
                .unit_failures
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains_key(&u)
            {
                queue.insert(0, (u, i, Part::Finish));
            }
        }
    }

    fn fail_unit(&self, unit: usize, e: PoolError) {
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|&(u, _, _)| u != unit);
        self.unit_failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(unit)
            .or_insert(e);
    }
}

/// Proves the functions of every unit with `workers` processes of `exe`, from one queue:
/// biggest first across units (so that a project's longest functions do not start last,
/// whatever file they are in). Returns one outcome per unit, in order; an error when the
/// pool itself failed.
pub fn prove_units(
    exe: &Path,
    workers: usize,
    units: Vec<Unit>,
    progress: super::Progress,
) -> Result<Vec<UnitOutcome>, PoolError> {
    let mut queue: Vec<(usize, usize, usize, Part)> = units
        .iter()
        .enumerate()
        .flat_map(|(u, unit)| {
            unit.order
                .iter()
                .flat_map(move |&(i, size)| unit.parts[&i].iter().map(move |&p| (u, i, size, p)))
        })
        .collect();
    // The order a single program's run proves in (biggest first, then by name), across units.
    queue.sort_by(|a, b| {
        b.2.cmp(&a.2)
            .then_with(|| units[a.0].names[a.1].cmp(&units[b.0].names[b.1]))
            .then(a.0.cmp(&b.0))
            .then(a.3.cmp(&b.3))
    });
    let workers = workers.clamp(1, queue.len().max(1));
    let state = Supervisor {
        exe,
        units: &units,
        queue: Mutex::new(queue.iter().map(|&(u, i, _, p)| (u, i, p)).collect()),
        progress,
        restarts: AtomicUsize::new(0),
        unit_failures: Mutex::new(BTreeMap::new()),
        failure: Mutex::new(None),
    };
    if !queue.is_empty() {
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    if let Err(e) = drive_worker(&state) {
                        let mut failure = state.failure.lock().unwrap_or_else(|p| p.into_inner());
                        failure.get_or_insert(e);
                        // The others stop at their next function.
                        state
                            .queue
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .clear();
                    }
                });
            }
        });
    }
    if let Some(e) = state
        .failure
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        return Err(e);
    }
    let mut unit_failures = state
        .unit_failures
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    let mut outcomes = Vec::with_capacity(units.len());
    for (u, unit) in units.into_iter().enumerate() {
        let Unit {
            journal_path,
            fingerprint,
            names,
            order,
            parts,
            finished,
            journal,
            busy_ms,
            ..
        } = unit;
        drop(journal);
        let busy_ms = busy_ms.into_inner();
        if let Some(e) = unit_failures.remove(&u) {
            outcomes.push(UnitOutcome {
                results: Err(e),
                busy_ms,
            });
            continue;
        }
        // Every function's result, or share's, is in the journal now.
        let results = Journal::read(&journal_path, &fingerprint)
            .map_err(|e| PoolError::Failed(e.to_string()))
            .and_then(|done| {
                let missing = |what: String| {
                    PoolError::Failed(format!(
                        "the workers ended without a result for {what} (see {})",
                        journal_path.display()
                    ))
                };
                let mut proved = super::Proved::default();
                for &(i, _) in &order {
                    let name = &names[i];
                    let shares: Vec<usize> = parts[&i]
                        .iter()
                        .filter_map(|p| match p {
                            Part::Share(k) => Some(*k),
                            _ => None,
                        })
                        .collect();
                    // A function this run finishes, or proves whole.
                    if shares.is_empty() || finished.contains(&i) {
                        let r = done.done.get(name).ok_or_else(|| missing(name.clone()))?;
                        proved.functions.push(r.clone());
                        continue;
                    }
                    for k in shares {
                        let s = done
                            .shares
                            .get(&(name.clone(), k))
                            .ok_or_else(|| missing(format!("share {} of {name}", k + 1)))?;
                        proved.shares.push(s.clone());
                    }
                }
                proved.functions.sort_by(|a, b| a.function.cmp(&b.function));
                Ok(proved)
            });
        outcomes.push(UnitOutcome { results, busy_ms });
    }
    Ok(outcomes)
}

/// Runs one worker process after another (a new one when one dies) until the queue is empty.
fn drive_worker(state: &Supervisor) -> Result<(), PoolError> {
    let failed = |what: &str, e: std::io::Error| PoolError::Failed(format!("{what}: {e}"));
    let mut pending = state.next(None);
    while pending.is_some() {
        let mut child = std::process::Command::new(state.exe)
            .env(WORKER_ENV, SERVE)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| failed(&format!("cannot start {}", state.exe.display()), e))?;
        let mut to_child = child.stdin.take().expect("piped stdin");
        let mut from_child = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        // The unit whose program the worker has loaded.
        let mut loaded: Option<usize> = None;
        let mut died = false;
        // Hand out functions until the queue is empty or the worker dies.
        while let (Some((u, i, part)), false) = (pending, died) {
            let unit = &state.units[u];
            let switch = match loaded == Some(u) {
                true => Ok(()),
                false => writeln!(to_child, "{}", unit.job_line),
            };
            if switch
                .and_then(|_| writeln!(to_child, "{i}{}", part.word()))
                .and_then(|_| to_child.flush())
                .is_err()
            {
                died = true;
                break;
            }
            loaded = Some(u);
            let started = std::time::Instant::now();
            let done = format!("d {i}{}", part.word());
            let mut line = String::new();
            loop {
                line.clear();
                match from_child.read_line(&mut line) {
                    Ok(n) if n > 0 => {}
                    _ => {
                        died = true;
                        break;
                    }
                }
                let l = line.trim_end();
                if let Some(n) = l.strip_prefix("p ").and_then(|n| n.parse().ok()) {
                    (state.progress)(n);
                } else if l == done {
                    break;
                }
            }
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            unit.busy_ms.fetch_add(ms, Ordering::SeqCst);
            if died {
                break;
            }
            state.part_done(u, i, part);
            pending = state.next(loaded);
        }
        if !died {
            let _ = writeln!(to_child, "end").and_then(|_| to_child.flush());
        }
        drop(to_child);
        let status = child
            .wait()
            .map_err(|e| failed("waiting for a worker", e))?;
        if !died {
            if !status.success() {
                return Err(PoolError::Failed(format!(
                    "a prover worker ended with {status}"
                )));
            }
            return Ok(());
        }
        let Some((u, i, part)) = pending else {
            // It died before it was handed anything: starting it is what fails.
            return Err(PoolError::Failed(format!(
                "a prover worker died at start ({status})"
            )));
        };
        if let Some(c @ (2 | 3)) = status.code() {
            // The worker said why (its unit's input refused, a journal mismatch): not a
            // crash, and the unit's other functions would fare alike.
            state.fail_unit(u, PoolError::WorkerExit(c as u8));
            state.part_done(u, i, part);
            pending = state.next(None);
            continue;
        }
        let unit = &state.units[u];
        let name = &unit.names[i];
        crate::console::print_err(&format!(
            "warning: the prover died ({status}) while proving {name}; going on without it\n"
        ));
        unit.journal.crashed(name);
        let restarts = state.restarts.fetch_add(1, Ordering::SeqCst);
        if restarts + 1 >= MAX_RESTARTS {
            return Err(PoolError::Failed(format!(
                "the prover died {MAX_RESTARTS} times; giving up (the journal keeps its answers)"
            )));
        }
        // A new worker reads the crash from the journal and gives the function's result
        // without asking the solver again.
    }
    Ok(())
}
