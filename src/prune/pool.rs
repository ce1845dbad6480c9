//! The worker pool: `--jobs N` prover processes (this same executable, each with its own
//! solver) under a supervisor, handed one function at a time through a pipe, their results
//! meeting in one journal. A worker that dies (a solver crash, an abort, a signal) costs only
//! the function it was proving: the supervisor marks it crashed in the journal (its step-1
//! answers so far are kept, the rest stays unknown) and starts a new worker.
//!
//! Protocol. A worker is the executable run with `COVPRUNE_WORKER=serve` in its environment (so
//! it works whatever the executable is called). On stdin it reads one line of JSON, the
//! [`Job`], then function indices, one per line, and `end`; on stdout it answers `p N` for N
//! labels decided (progress) and `d INDEX` once a function's result is in the journal. A worker
//! whose stdin closes without `end` (the supervisor died) exits at once.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::journal::Journal;
use super::{FunctionResult, Hooks, Prover, PruneConfig};
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

/// The worker's side: reads the job, loads the program with `load`, then proves the functions
/// it is handed until `end`.
pub fn serve<I: DeserializeOwned>(
    load: impl FnOnce(&I) -> anyhow::Result<Program>,
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
    let Ok(first) = rx.recv() else {
        return Ok(());
    };
    let job: Job<I> = serde_json::from_str(&first)
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
    let out = Mutex::new(std::io::stdout());
    // A supervisor gone is no error: the journal keeps what is proved.
    let say = |line: String| {
        if let Ok(mut o) = out.lock() {
            let _ = writeln!(o, "{line}").and_then(|_| o.flush());
        }
    };
    for line in rx {
        let Ok(i) = line.trim().parse::<usize>() else {
            anyhow::bail!("worker: expected a function index, got `{line}`");
        };
        if i >= program.functions.len() {
            anyhow::bail!("worker: no function {i}");
        }
        // Fault injection for the pool's tests (debug builds only): die as a crashing solver
        // would, while proving the named function (once: a restarted worker finds it crashed).
        #[cfg(debug_assertions)]
        {
            let name = &program.functions[i].name;
            if std::env::var("COVPRUNE_TEST_ABORT_IN").is_ok_and(|n| n == *name)
                && !prior.crashed.contains(name)
            {
                std::process::abort();
            }
        }
        prover.prove_one(i, &|n| say(format!("p {n}")), &hooks);
        say(format!("d {i}"));
    }
    Ok(())
}

/// What the supervisor's threads share, one per worker slot.
struct Supervisor<'a> {
    exe: &'a Path,
    job_line: String,
    program: &'a Program,
    /// Function indices not yet handed out, biggest first.
    queue: Mutex<std::collections::VecDeque<usize>>,
    journal: &'a Journal,
    progress: super::Progress<'a>,
    restarts: AtomicUsize,
    failure: Mutex<Option<PoolError>>,
}

/// Proves the functions `order` (indices into the program's functions) with `workers`
/// processes of `exe`; returns each function's result, sorted by function name.
pub fn prove_in_workers<I: Serialize>(
    exe: &Path,
    workers: usize,
    job: &Job<I>,
    program: &Program,
    order: &[usize],
    journal: Journal,
    progress: super::Progress,
) -> Result<Vec<FunctionResult>, PoolError> {
    let workers = workers.clamp(1, order.len().max(1));
    let job_line = serde_json::to_string(job)
        .map_err(|e| PoolError::Failed(format!("the job does not serialise: {e}")))?;
    let state = Supervisor {
        exe,
        job_line,
        program,
        queue: Mutex::new(order.iter().copied().collect()),
        journal: &journal,
        progress,
        restarts: AtomicUsize::new(0),
        failure: Mutex::new(None),
    };
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
    if let Some(e) = state
        .failure
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        return Err(e);
    }
    drop(journal);
    // Every function's result is in the journal now.
    let done = Journal::read(&job.journal, &job.fingerprint)
        .map_err(|e| PoolError::Failed(e.to_string()))?;
    let mut results = Vec::with_capacity(order.len());
    for &i in order {
        let name = &program.functions[i].name;
        let r = done.done.get(name).ok_or_else(|| {
            PoolError::Failed(format!(
                "the workers ended without a result for {name} (see {})",
                job.journal.display()
            ))
        })?;
        results.push(r.clone());
    }
    results.sort_by(|a, b| a.function.cmp(&b.function));
    Ok(results)
}

/// Runs one worker process after another (a new one when one dies) until the queue is empty.
fn drive_worker(state: &Supervisor) -> Result<(), PoolError> {
    let failed = |what: &str, e: std::io::Error| PoolError::Failed(format!("{what}: {e}"));
    let next = || {
        state
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()
    };
    let mut pending = next();
    while pending.is_some() {
        let mut child = std::process::Command::new(state.exe)
            .env(WORKER_ENV, SERVE)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| failed(&format!("cannot start {}", state.exe.display()), e))?;
        let mut to_child = child.stdin.take().expect("piped stdin");
        let mut from_child = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut died = writeln!(to_child, "{}", state.job_line)
            .and_then(|_| to_child.flush())
            .is_err();
        // Hand out functions until the queue is empty or the worker dies.
        while let (Some(i), false) = (pending, died) {
            if writeln!(to_child, "{i}")
                .and_then(|_| to_child.flush())
                .is_err()
            {
                died = true;
                break;
            }
            let done = format!("d {i}");
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
            if died {
                break;
            }
            pending = next();
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
        if let Some(c @ (2 | 3)) = status.code() {
            // The worker said why (bad input, journal mismatch): not a crash.
            return Err(PoolError::WorkerExit(c as u8));
        }
        let Some(i) = pending else {
            // It died before it was handed anything: starting it is what fails.
            return Err(PoolError::Failed(format!(
                "a prover worker died at start ({status})"
            )));
        };
        let name = &state.program.functions[i].name;
        crate::console::print_err(&format!(
            "covprune: the prover died ({status}) while proving {name}; going on without it\n"
        ));
        state.journal.crashed(name);
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
