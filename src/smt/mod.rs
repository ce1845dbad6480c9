//! The solver seam: the engine asks its questions ([`Query`]) through the [`Backend`] trait.
//! [`Session`] answers them with Z3; [`Dumping`] also writes each one as an SMT-LIB 2 file
//! ([`smtlib`]) that any solver can replay.
//!
//! Architecture invariant: this is the only module that imports z3. Answers are data
//! ([`Verdict`]), never errors: a timeout, a resource limit or a solver failure is `Unknown`
//! with its reason. Z3 objects are not `Send`: a [`Session`] lives on the thread that made it.
//!
//! Reproducibility: with a resource limit (`rlimit`), a question's answer depends only on the
//! question and on the questions asked before it in the same context; the wall-clock limit is
//! then a backstop, [`BACKSTOP`] times the nominal one. [`in_fresh_context`] gives each
//! function's proof a context of its own, so that what other functions asked before (in this
//! process or worker) changes nothing.

mod answers;
mod dumping;
mod float;
pub mod smtlib;
mod translate;

pub use dumping::Dumping;

use std::collections::HashMap;
use std::path::Path;

use z3::ast::{Ast, Bool, Dynamic, BV};
use z3::{Params, SatResult, Solver};

use crate::vc::term::{Terms, T};

/// Limits of each check.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SolverConfig {
    /// Wall-clock limit per check, in milliseconds.
    pub timeout_ms: u32,
    /// Deterministic resource limit per check (0: none).
    pub rlimit: u32,
    /// Memory bound in MB (0: none). Z3 compares it with the whole process's allocation, so
    /// it bounds all workers together; over it, a check is unknown ("max. memory exceeded").
    pub max_memory_mb: u32,
    /// Keep each fact a question needs asserted for the function's later questions, and ask
    /// a question that then gives no answer again with its own facts alone (false: every
    /// question asserts its facts anew). On the Siemens programs, 366 s -> 308 s, the same
    /// labels pruned, fewer timeouts (`artifacts/memory-siemens-inc-retry.md`).
    #[serde(default = "incremental_by_default")]
    pub incremental: bool,
}

fn incremental_by_default() -> bool {
    true
}

impl SolverConfig {
    /// The wall-clock limit of a question: the configured one, or the backstop when a
    /// resource limit decides.
    pub fn wall_limit_ms(&self) -> u32 {
        let t = self.timeout_ms.max(1);
        if self.rlimit > 0 {
            t.saturating_mul(BACKSTOP)
        } else {
            t
        }
    }

    /// Resource units per millisecond of the nominal time limit (0 without a resource limit):
    /// converts a budget in seconds to a deterministic one.
    pub fn units_per_ms(&self) -> u64 {
        u64::from(self.rlimit) / u64::from(self.timeout_ms.max(1))
    }
}

/// The time limit of each question, in milliseconds (a backstop when `rlimit` is set).
pub const DEFAULT_TIMEOUT_MS: u32 = 2000;
/// The deterministic resource limit of each question (0: none), calibrated to about
/// [`DEFAULT_TIMEOUT_MS`] of work on zlib's questions on the development machine: Z3 4.8.12
/// counted 1,600 to 9,700 units per millisecond there (2,100 to 5,100 averaged over a
/// function), so that 5,000,000 units take 1 to 3 s. The function budget converts at this
/// limit per nominal time limit (2,500 units per millisecond). See the README.
pub const DEFAULT_RLIMIT: u32 = 5_000_000;
/// The resource limit that stands for a time limit: [`DEFAULT_RLIMIT`] scaled from
/// [`DEFAULT_TIMEOUT_MS`] (so that `--timeout-s 0.3` alone keeps questions short).
pub fn rlimit_for(timeout_ms: u32) -> u32 {
    let scaled = u64::from(DEFAULT_RLIMIT) * u64::from(timeout_ms) / u64::from(DEFAULT_TIMEOUT_MS);
    u32::try_from(scaled.max(1)).unwrap_or(u32::MAX)
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            timeout_ms: DEFAULT_TIMEOUT_MS,
            rlimit: DEFAULT_RLIMIT,
            max_memory_mb: 0,
            incremental: true,
        }
    }
}

/// With a resource limit, the wall-clock limit of a question is this many times the nominal
/// one: it only stops questions on a machine far slower (or busier) than the calibration's.
pub const BACKSTOP: u32 = 5;

/// How memory reads are modelled in a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Memory {
    /// Byte-addressed arrays, as encoded.
    Bytes,
    /// Every memory read an unconstrained byte: an over-approximation (cheap; unsatisfiable
    /// there is still a proof, satisfiable proves nothing).
    Abstract,
}

/// One question: is `context ∧ goal` satisfiable? On a model, the values of `observe`.
#[derive(Clone, Copy)]
pub struct Query<'a> {
    pub terms: &'a Terms,
    pub context: &'a [T],
    pub goal: T,
    pub observe: &'a [T],
    pub memory: Memory,
    /// The question gets `units_scale` times the configured resource limit (the time limit
    /// stays as configured: it is the backstop, and the only limit without a resource limit).
    pub units_scale: u32,
    /// ... and at most this many resource units (with a resource limit only).
    pub units_cap: Option<u64>,
}

/// Something that answers questions.
pub trait Backend {
    fn check(&mut self, q: &Query) -> Verdict;
    /// Deterministic work spent so far (Z3's resource counter), for budgets.
    fn work(&self) -> u64;
    /// Questions answered by a model of an earlier one, without a check.
    fn reused_models(&self) -> u64 {
        0
    }
    /// Questions answered because the same question was asked before, without a check.
    fn repeated_questions(&self) -> u64 {
        0
    }
    /// Whether the next questions may be answered by an earlier model (on by default).
    fn set_model_reuse(&mut self, _on: bool) {}
    /// Where the questions' time went so far, for `-v`.
    fn profile(&self) -> Profile {
        Profile::default()
    }
}

/// Where a backend's time went: in its checks, in its models (earlier ones tried on a new
/// question, new ones read), and in all of its questions (the rest is translation and
/// bookkeeping).
#[derive(Clone, Copy, Debug, Default)]
pub struct Profile {
    pub total: std::time::Duration,
    pub solver: std::time::Duration,
    pub models: std::time::Duration,
}

impl Profile {
    /// Milliseconds in the checks, in models, and in the rest.
    pub fn split_ms(&self) -> (u128, u128, u128) {
        let rest = self.total.saturating_sub(self.solver + self.models);
        (
            self.solver.as_millis(),
            self.models.as_millis(),
            rest.as_millis(),
        )
    }
}

/// The backend every question of one encoding goes through: a solver session, and with
/// `dump` the SMT-LIB file of each question written to that directory under `name`.
pub fn backend(config: &SolverConfig, dump: Option<&Path>, name: &str) -> Box<dyn Backend> {
    let session = Session::new(config);
    match dump {
        Some(dir) => Box::new(Dumping::new(session, dir.to_path_buf(), name)),
        None => Box::new(session),
    }
}

/// Runs `f` with a Z3 context of its own on this thread.
pub fn in_fresh_context<R: Send + Sync>(f: impl FnOnce() -> R + Send + Sync) -> R {
    z3::with_z3_config(&z3::Config::new(), f)
}

/// A solver's resource counter (Z3's `rlimit count` statistic, 32 bits wide).
fn rlimit_count(solver: &Solver) -> u64 {
    match solver.get_statistics().value("rlimit count") {
        Some(z3::StatisticsValue::UInt(n)) => u64::from(n),
        Some(z3::StatisticsValue::Double(d)) => d as u64,
        None => 0,
    }
}

/// A check still running this long after its time limit is interrupted: Z3's own timeout is
/// coarse while it preprocesses and bit-blasts.
fn watchdog_after(timeout_ms: u32) -> std::time::Duration {
    std::time::Duration::from_millis(u64::from(timeout_ms) * 2 + 1000)
}

/// The answer to "is this formula satisfiable?", from the prover's side: `Proved` means
/// unsatisfiable (the claim holds), `Refuted` carries the values of the observed terms in a
/// model, `Unknown` says why no answer came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Proved,
    Refuted(Vec<Option<u128>>),
    Unknown(String),
}

/// A read is translated as at most this many cases over the writes and joins before it.
const MAX_READ_CASES: usize = 4096;

/// One incremental solver with the background facts of one encoding asserted.
pub struct Session {
    /// Where the time of its questions went.
    profile: Profile,
    solver: Solver,
    /// The solver of the abstract questions (every memory read unconstrained), kept apart so
    /// that the byte-level facts kept in `solver` do not weigh on them.
    abstract_solver: Solver,
    /// A solver that keeps nothing: a question the kept facts made too hard is asked again
    /// there with its own facts alone.
    alone_solver: Solver,
    /// Keep each context fact asserted once for all later questions (see
    /// [`Session::check_with`]), instead of asserting it anew for each.
    incremental: bool,
    /// The facts kept asserted in `solver`, and in `abstract_solver` (swapped with it while
    /// an abstract question is asked).
    kept: Kept,
    abstract_kept: Kept,
    cache: Z3Map<T, Dynamic>,
    /// Translation of terms with every memory read replaced by a fresh byte: an
    /// over-approximation that is much cheaper to solve (see [`Session::check_abstract`]).
    abstract_cache: Z3Map<T, Dynamic>,
    abstract_mode: bool,
    /// Reads translated as cases over the writes before them (see [`Session::read_byte`]),
    /// by memory and address.
    reads: Z3Map<(T, T), BV>,
    /// Whether an address reads memory (see [`Terms::reads_memory`]).
    reading_addresses: HashMap<T, bool>,
    /// The time limit of each check (the backstop when there is a resource limit).
    timeout_ms: u32,
    /// The next check's resource units are this many times the configured ones (at least 1),
    /// and so is its backstop but for questions with floats ([`Session::check_timeout_ms`]).
    units_scale: u32,
    rlimit: u32,
    /// The resource limit of the next check.
    current_rlimit: u32,
    max_memory_mb: u32,
    /// Resource units spent by this session's checks (counted with a resource limit only).
    work: u64,
    /// The latest models found, newest first (see [`Session::known_model`]).
    models: std::collections::VecDeque<KeptModel>,
    /// The solvers of questions with floating-point terms and what they keep, made at the
    /// first such question and swapped in while one is asked (see `Session::on_its_side`).
    floats: Option<float::FloatSide>,
    /// Is the float side swapped in?
    in_floats: bool,
    /// The nominal time limit of each check, which bounds questions with floats.
    nominal_timeout_ms: u32,

    /// Questions answered by a model already found, without a check.
    reused_models: u64,
    reuse_models: bool,
    /// Answers by question ([`answers::Answers`]).
    answers: answers::Answers,
}

/// A map holding Z3 terms. Its hasher is the same in every run, so a session drops its terms
/// in the same order in every run: Z3 gives a freed term's number to the next term made in its
/// context, and the terms' numbers steer its search. With a hasher seeded per process (the
/// standard one), the next session in the context would spend a different number of resource
/// units on the same questions in each run (up to 6% on zlib's `syncsearch`), and a question
/// ending near its limit could get another answer.
type Z3Map<K, V> =
    HashMap<K, V, std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>>;

/// A question that ran out of its limits with the kept facts is asked again alone only when
/// they are at least this many times its own: with fewer, the retry is nearly the same
/// question. (Measured on a fortieth of SQLite and on Siemens CC and WM: of the retries with
/// fewer than 1.5 times the facts, none was proved and 6-10% found a model; of those with
/// twice or more, most found a model. None proved anything in either set.)
const RETRY_KEPT_RATIO: usize = 2;

/// The facts kept asserted in one solver, in the order they were asserted.
#[derive(Default)]
struct Kept {
    set: std::collections::HashSet<T>,
    order: Vec<T>,
}

impl Kept {
    fn insert(&mut self, t: T) -> bool {
        let fresh = self.set.insert(t);
        if fresh {
            self.order.push(t);
        }
        fresh
    }

    fn len(&self) -> usize {
        self.order.len()
    }
}

/// A model some check found: of an abstract question or not, and the number of kept facts
/// (in their order) it is known to satisfy, all of those asserted when it was found by the
/// solver that keeps them, none if it came from the one without.
struct KeptModel {
    abstract_mode: bool,
    /// Found by the float side's solvers (whose kept facts `satisfies_kept` counts).
    floats: bool,
    satisfies_kept: usize,
    model: z3::Model,
}

/// How many of the latest models a question is tried against before it is asked. Proofs are
/// cheap and satisfiable answers are where the solver's work goes: on a quarter of SQLite CC
/// at the benchmark's limits, unsatisfiable checks took 0.3% of the units, satisfiable ones
/// 79% and those that ran out of their limits the rest. With 16 models instead of 4, the
/// satisfiable checks fall by a fifth, the functions' own questions take 12% fewer units (and
/// evaluating models 8% of their time instead of 7%); the whole file, run side by side with
/// 4 models, prunes 1,966 labels instead of 1,929 in 1,621 s instead of 1,642 s (2026-11-27).
/// 32 models saved 1% more units.
const KEPT_MODELS: usize = 16;

impl Session {
    pub fn new(config: &SolverConfig) -> Session {
        let solver = Solver::new_for_logic("QF_AUFBV").unwrap_or_default();
        let abstract_solver = Solver::new_for_logic("QF_AUFBV").unwrap_or_default();
        let alone_solver = Solver::new_for_logic("QF_AUFBV").unwrap_or_default();
        let s = Session {
            solver,
            abstract_solver,
            alone_solver,
            incremental: config.incremental,
            kept: Default::default(),
            abstract_kept: Default::default(),
            cache: Z3Map::default(),
            abstract_cache: Z3Map::default(),
            abstract_mode: false,
            reads: Z3Map::default(),
            reading_addresses: HashMap::new(),
            timeout_ms: config.wall_limit_ms(),
            units_scale: 1,
            rlimit: config.rlimit,
            current_rlimit: config.rlimit,
            max_memory_mb: config.max_memory_mb,
            work: 0,
            models: Default::default(),
            floats: None,
            in_floats: false,
            nominal_timeout_ms: config.timeout_ms.max(1),

            reused_models: 0,
            reuse_models: true,
            answers: Default::default(),
            profile: Profile::default(),
        };
        s.apply_params();
        s
    }

    /// Sets the limits of the next checks (parameter names checked by a test: Z3 ignores a
    /// misspelt one silently).
    fn apply_params(&self) {
        let solvers = [&self.solver, &self.abstract_solver, &self.alone_solver];
        set_limits(
            &solvers,
            self.check_timeout_ms(),
            self.current_rlimit,
            self.max_memory_mb,
        );
        if let Some(side) = &self.floats {
            side.set_limits(self.current_rlimit, self.max_memory_mb);
        }
    }

    /// The time limit of the next check: the backstop grows with the resource units a check
    /// is given, so that those units, not the wall clock, stop a question with memory on any
    /// machine the backstop is made for (a run's answers do not depend on how busy its cores
    /// are). Questions with floats keep their nominal limit: the wall clock bounds them.
    fn check_timeout_ms(&self) -> u32 {
        if self.in_floats {
            self.timeout_ms
        } else {
            self.timeout_ms.saturating_mul(self.units_scale)
        }
    }

    /// Gives the next checks `scale` times the configured resource limit, at most `cap`.
    fn set_units(&mut self, scale: u32, cap: Option<u64>) {
        self.units_scale = scale.max(1);
        let scaled = self.rlimit.saturating_mul(self.units_scale);
        self.current_rlimit = match cap {
            Some(c) => scaled.min(u32::try_from(c).unwrap_or(u32::MAX)).max(1),
            None => scaled,
        };
        self.apply_params();
    }

    /// Like [`Session::check_with`] where every memory read is an unconstrained byte. This
    /// over-approximates the program, so `Proved` is still a proof; `Refuted` proves nothing.
    pub fn check_abstract(
        &mut self,
        terms: &Terms,
        context: &[T],
        goal: T,
        observe: &[T],
    ) -> Verdict {
        self.on_its_side(terms, context, goal, |s| {
            s.abstract_mode = true;
            s.swap_abstract();
            let v = s.check_in_place(terms, context, goal, observe);
            s.swap_abstract();
            s.abstract_mode = false;
            v
        })
    }

    /// Swaps the abstract questions' solver, kept facts and translations in (or back out).
    fn swap_abstract(&mut self) {
        std::mem::swap(&mut self.cache, &mut self.abstract_cache);
        std::mem::swap(&mut self.solver, &mut self.abstract_solver);
        std::mem::swap(&mut self.kept, &mut self.abstract_kept);
    }

    /// Is `goal` satisfiable together with the asserted facts? On `Refuted`, the model values
    /// of `observe` (booleans as 0/1) are returned in order.
    pub fn check(&mut self, terms: &Terms, goal: T, observe: &[T]) -> Verdict {
        self.check_with(terms, &[], goal, observe)
    }

    /// Like [`Session::check`], with `context` facts asserted for this question only.
    pub fn check_with(&mut self, terms: &Terms, context: &[T], goal: T, observe: &[T]) -> Verdict {
        self.on_its_side(terms, context, goal, |s| {
            s.check_in_place(terms, context, goal, observe)
        })
    }

    /// Does this session keep the facts of its questions asserted? Not with `incremental`
    /// off, nor on the float side (see [`Session::check_in_place`]).
    fn keeps_facts(&self) -> bool {
        self.incremental && !self.in_floats
    }

    /// [`Session::check_with`] on the solvers swapped in.
    fn check_in_place(&mut self, terms: &Terms, context: &[T], goal: T, observe: &[T]) -> Verdict {
        if terms.as_bool(goal) == Some(false) {
            return Verdict::Proved;
        }
        let g = self.boolean(terms, goal);
        let obs: Vec<Dynamic> = observe.iter().map(|&t| self.translate(terms, t)).collect();
        // The float side keeps no facts: its solvers solve each check anew, every fact kept
        // included, and the floating-point definitions its questions take in differ from one
        // question to the next (see `vc::cone::QUESTION_FP_WORK`), so that kept they would
        // add up to every operation of the function.
        if !self.keeps_facts() {
            if let Some(values) = self.in_models(|s| s.known_model(terms, context, &g, &obs)) {
                return Verdict::Refuted(values);
            }
            let ctx: Vec<Bool> = context.iter().map(|&t| self.boolean(terms, t)).collect();
            return self.solve(false, &ctx, &g, &obs);
        }
        // Context facts are true of every execution the encoding describes: kept asserted,
        // they stay true for later questions, and the solver keeps what it learnt of them.
        // (Before an earlier model may answer: the facts kept then do not depend on which
        // questions models answered.)
        let fresh: Vec<T> = context
            .iter()
            .copied()
            .filter(|t| self.kept.insert(*t))
            .collect();
        for t in fresh {
            let b = self.boolean(terms, t);
            self.solver.assert(&b);
        }
        if let Some(values) = self.in_models(|s| s.known_model(terms, &[], &g, &obs)) {
            return Verdict::Refuted(values);
        }
        let v = self.solve(false, &[], &g, &obs);
        if !matches!(v, Verdict::Unknown(_))
            || context.is_empty()
            || self.kept.len() < RETRY_KEPT_RATIO * context.len()
        {
            return v;
        }
        // The facts kept for other questions may be what makes this one too hard: asked
        // again with its own facts alone.
        let ctx: Vec<Bool> = context.iter().map(|&t| self.boolean(terms, t)).collect();
        self.solve(true, &ctx, &g, &obs)
    }

    /// `f` on this session, its time counted as the models'.
    fn in_models<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let t = std::time::Instant::now();
        let r = f(self);
        self.profile.models += t.elapsed();
        r
    }

    /// Is `context ∧ g` true in one of the latest models of this kind of question (abstract or
    /// not), together with every fact the solver keeps asserted? Then the check would find it
    /// satisfiable: the model's values of `obs` are returned without asking. Every symbol the
    /// model leaves free takes a value of its own (model completion), so the completed model is
    /// an assignment in which the question holds. The kept facts count because the check
    /// includes them (a question its own facts leave satisfiable may be unsatisfiable with
    /// them). Only "satisfiable" is ever concluded this way, and a satisfiable question claims
    /// nothing, so a model that does not fit costs one check and can never make a claim.
    fn known_model(
        &mut self,
        terms: &Terms,
        context: &[T],
        g: &Bool,
        obs: &[Dynamic],
    ) -> Option<Vec<Option<u128>>> {
        if !self.reuse_models
            || !self
                .models
                .iter()
                .any(|m| m.abstract_mode == self.abstract_mode && m.floats == self.in_floats)
        {
            return None;
        }
        let holds =
            |m: &z3::Model, b: &Bool| m.eval(b, true).and_then(|v| v.as_bool()).unwrap_or(false);
        // Most models miss on the goal alone: that is asked first, cheaply, and the facts are
        // translated only for a model that passes it.
        let candidates: Vec<usize> = (0..self.models.len())
            .filter(|&i| {
                let m = &self.models[i];
                m.abstract_mode == self.abstract_mode
                    && m.floats == self.in_floats
                    && holds(&m.model, g)
            })
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let mut parts: Vec<Bool> = context.iter().map(|&t| self.boolean(terms, t)).collect();
        parts.push(g.clone());
        let own = parts.len();
        let kept: Vec<T> = if self.keeps_facts() {
            self.kept.order.clone()
        } else {
            Vec::new()
        };
        for &t in &kept {
            let b = self.boolean(terms, t);
            parts.push(b);
        }
        let model = candidates.into_iter().map(|i| &self.models[i]).find(|m| {
            // The kept facts the model is known to satisfy need no evaluation.
            let unchecked = own + m.satisfies_kept.min(kept.len());
            let question = Bool::and(
                &parts[..own]
                    .iter()
                    .chain(&parts[unchecked..])
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            holds(&m.model, &question)
        })?;
        let values = obs.iter().map(|d| model_value(&model.model, d)).collect();
        self.reused_models += 1;
        Some(values)
    }

    /// One check of `ctx ∧ g`, on the solver with the kept facts or on the one without.
    fn solve(&mut self, alone: bool, ctx: &[Bool], g: &Bool, obs: &[Dynamic]) -> Verdict {
        let solver = if alone {
            &self.alone_solver
        } else {
            &self.solver
        };
        // The question is asked under a fresh guard literal (`q ⇒ ctx ∧ g`, checked assuming
        // `q`), then retired by asserting `¬q`; no scope is pushed or popped. A push makes Z3
        // take in every fact asserted since the last one again, at a cost its resource counter
        // does not see: on a fortieth of SQLite, pushes took 15 of 56 s and checks 26 s
        // (2026-11-25). The answers are those of `ctx ∧ g` with the kept facts: the retired
        // guards' implications hold whatever the rest is.
        // The float side's solvers, which keep nothing, take the question in a scope of its
        // own instead, its facts asserted as they are: their tactics then substitute the
        // definitions of floating-point results before turning them into circuits (under a
        // guard, the same questions of tot_info's `LGamma` ran to their time limit).
        let mut parts: Vec<Bool> = ctx.to_vec();
        parts.push(g.clone());
        let guard = if self.in_floats {
            solver.push();
            for p in &parts {
                solver.assert(p);
            }
            None
        } else {
            let q = Bool::fresh_const("question");
            solver.assert(q.implies(Bool::and(&parts)));
            Some(q)
        };
        // A watchdog interrupts a check that overruns its limit by far.
        let z3_context = z3::Context::thread_local();
        let handle = z3_context.handle();
        // The float side's tactics do not stop at their time limit: there the watchdog is it.
        let limit = if self.in_floats {
            std::time::Duration::from_millis(u64::from(self.timeout_ms))
        } else {
            watchdog_after(self.check_timeout_ms())
        };
        // The resource counter is read only when budgets are counted in it (with a resource
        // limit): reading statistics costs more than many small checks.
        let counting = self.rlimit > 0;
        let before = if counting { rlimit_count(solver) } else { 0 };
        let t_check = std::time::Instant::now();
        let r = std::thread::scope(|sc| {
            let (done, rx) = std::sync::mpsc::channel::<()>();
            sc.spawn(move || {
                if rx.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                    handle.interrupt();
                }
            });
            let r = match &guard {
                Some(q) => solver.check_assumptions(std::slice::from_ref(q)),
                None => solver.check(),
            };
            let _ = done.send(());
            r
        });
        self.profile.solver += t_check.elapsed();
        let t_model = std::time::Instant::now();
        let spent = if counting {
            rlimit_count(solver).wrapping_sub(before) & u64::from(u32::MAX)
        } else {
            0
        };
        let verdict = match r {
            SatResult::Unsat => Verdict::Proved,
            SatResult::Sat => match solver.get_model() {
                Some(m) => {
                    let values = obs.iter().map(|d| model_value(&m, d)).collect();
                    self.models.push_front(KeptModel {
                        abstract_mode: self.abstract_mode,
                        floats: self.in_floats,
                        satisfies_kept: if alone { 0 } else { self.kept.len() },
                        model: m,
                    });
                    self.models.truncate(KEPT_MODELS);
                    Verdict::Refuted(values)
                }
                None => Verdict::Refuted(vec![None; obs.len()]),
            },
            SatResult::Unknown => Verdict::Unknown(
                solver
                    .get_reason_unknown()
                    .unwrap_or_else(|| "unknown".to_string()),
            ),
        };
        self.profile.models += t_model.elapsed();
        match guard {
            Some(q) => solver.assert(q.not()),
            None => solver.pop(1),
        }
        self.work += spent;
        verdict
    }
}

impl Backend for Session {
    fn check(&mut self, q: &Query) -> Verdict {
        let t = std::time::Instant::now();
        let v = self.check_uncounted(q);
        self.profile.total += t.elapsed();
        v
    }

    fn work(&self) -> u64 {
        self.work
    }

    fn reused_models(&self) -> u64 {
        self.reused_models
    }

    fn repeated_questions(&self) -> u64 {
        self.answers.repeated
    }

    fn set_model_reuse(&mut self, on: bool) {
        self.reuse_models = on;
    }

    fn profile(&self) -> Profile {
        self.profile
    }
}

impl Session {
    /// [`Backend::check`], without counting its time.
    fn check_uncounted(&mut self, q: &Query) -> Verdict {
        let key = answers::Answers::key(q);
        if let Some(v) = self.answers.get(&key, q.observe.len()) {
            return v;
        }
        let scaled = (q.units_scale != 1 || q.units_cap.is_some()) && self.rlimit > 0;
        if scaled {
            self.set_units(q.units_scale, q.units_cap);
        }
        let v = match q.memory {
            Memory::Bytes => self.check_with(q.terms, q.context, q.goal, q.observe),
            Memory::Abstract => self.check_abstract(q.terms, q.context, q.goal, q.observe),
        };
        if scaled {
            self.set_units(1, None);
        }
        self.answers.keep(key, &v);
        v
    }
}

/// The value of `d` in `model` (completed), booleans as 0/1.
fn model_value(model: &z3::Model, d: &Dynamic) -> Option<u128> {
    let v = model.eval(d, true)?;
    if let Some(b) = v.as_bool() {
        return b.as_bool().map(u128::from);
    }
    v.as_bv().and_then(|bv| bv_value(&bv))
}

/// Sets the limits of the next checks of `solvers`.
fn set_limits(solvers: &[&Solver], timeout_ms: u32, rlimit: u32, max_memory_mb: u32) {
    let mut p = Params::new();
    p.set_u32("timeout", timeout_ms.max(1));
    if rlimit > 0 {
        p.set_u32("rlimit", rlimit);
    }
    if max_memory_mb > 0 {
        p.set_u32("max_memory", max_memory_mb);
    }
    for s in solvers {
        s.set_params(&p);
    }
}

fn bv_const(width: u32, value: u128) -> BV {
    if width <= 64 {
        BV::from_u64(value as u64, width)
    } else {
        let hi = BV::from_u64((value >> 64) as u64, width - 64);
        let lo = BV::from_u64(value as u64, 64);
        hi.concat(&lo)
    }
}

fn bv_value(bv: &BV) -> Option<u128> {
    let w = bv.get_size();
    if w <= 64 {
        return bv.as_u64().map(u128::from);
    }
    let hi = bv.extract(w - 1, 64).simplify().as_u64()?;
    let lo = bv.extract(63, 0).simplify().as_u64()?;
    Some((u128::from(hi) << 64) | u128::from(lo))
}

#[cfg(test)]
mod tests;
