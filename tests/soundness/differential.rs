//! The differential harness: the engine's claims on the harness's programs checked by the
//! reference prover ([`covprune::prune::reference`]), whose refutations are replayed for real
//! ([`covprune::witness::replay`]); and the reference itself checked against the exhaustive
//! runs, on every label (infeasible) and on every claim of the engine.

use covprune::prune::reference::{self, Answer, Claim};
use covprune::witness::{replay::replay, RunOptions};

use super::generator::Generated;
use super::*;

#[derive(Default)]
struct DiffTally {
    programs: usize,
    claims: usize,
    holds: usize,
    broken: usize,
    unknown: usize,
    not_together: usize,
    calls_run: usize,
    /// Claims real runs of the reference's models refute.
    refuted: usize,
    failures: Vec<String>,
}

/// Does some input's run break `claim` on `label`, by the exhaustive runs?
fn truly_broken(covered: &BTreeMap<u32, Vec<u64>>, label: u64, claim: Claim) -> bool {
    let bit = |id: u64, run: usize| {
        covered
            .get(&(id as u32))
            .is_some_and(|words| words[run / 64] >> (run % 64) & 1 == 1)
    };
    (0..65_536).any(|run| reference::breaks(&|id| bit(id, run), label, claim))
}

/// The reference's configuration: the harness's, with the CLI's default limits per question
/// (a resource limit decides, the wall clock is a backstop): its answers do not depend on how
/// loaded the machine is.
fn reference_limits() -> PruneConfig {
    let mut c = harness_config();
    c.solver.timeout_ms = covprune::smt::DEFAULT_TIMEOUT_MS;
    c.solver.rlimit = covprune::smt::DEFAULT_RLIMIT;
    c
}

/// The reference's wall-clock budget per function: a backstop only, far above what its
/// questions take under their resource limits.
const REFERENCE_BUDGET: std::time::Duration = std::time::Duration::from_secs(600);

/// Checks the claims `engine` makes on a program with the reference and the replays of its
/// models; with `exhaustive`, the reference too, against the program's exhaustive runs.
fn differential(
    tally: &mut DiffTally,
    dir: &Path,
    name: &str,
    (text, n_labels, _): Generated,
    engine: &PruneConfig,
    exhaustive: bool,
) {
    let path = dir.join(name);
    std::fs::write(&path, &text).unwrap();
    let covered = if exhaustive {
        covered_labels(dir, &path, None, n_labels as usize)
    } else {
        BTreeMap::new()
    };
    let program = frontend::load(&path, &PreprocessOptions::default())
        .unwrap()
        .program;
    let config = reference_limits();
    let (verdicts, _) = run(&program, engine, &|_| {});
    let claims = reference::claims(&verdicts);
    let budget = REFERENCE_BUDGET;
    let checked = reference::check(&program, &config, &claims, budget);
    tally.programs += 1;
    tally.claims += checked.len();
    for c in &checked {
        let truly = exhaustive && truly_broken(&covered, c.label, c.claim);
        match &c.answer {
            Answer::Holds => {
                tally.holds += 1;
                if truly {
                    tally.failures.push(format!(
                        "{name}: the reference proves label {} {} in {}, but a run breaks it\n{text}",
                        c.label, c.claim, c.function
                    ));
                }
            }
            Answer::Broken(_) => tally.broken += 1,
            Answer::Unknown => tally.unknown += 1,
            Answer::NotTogether => tally.not_together += 1,
        }
    }
    // The reference's own proofs of infeasibility, on every label.
    let every: Vec<(String, u64, Claim)> = verdicts
        .iter()
        .filter(|_| exhaustive)
        .map(|v| (v.function.clone(), v.id, Claim::Infeasible))
        .collect();
    for c in reference::check(&program, &config, &every, budget) {
        if c.answer == Answer::Holds && truly_broken(&covered, c.label, c.claim) {
            tally.failures.push(format!(
                "{name}: the reference proves label {} infeasible in {}, but a run covers it\n{text}",
                c.label, c.function
            ));
        }
    }
    let opts = RunOptions {
        cc: "cc".into(),
        flags: Vec::new(),
        link: Vec::new(),
        preprocessed: false,
        timeout: std::time::Duration::from_secs(30),
    };
    let work = tempfile::tempdir().unwrap();
    let (refuted, runs) = replay(&program, &path, &checked, &opts, work.path())
        .unwrap_or_else(|e| panic!("{name}: the replays build: {e}"));
    tally.calls_run += runs;
    tally.refuted += refuted.len();
    for r in refuted {
        tally.failures.push(format!(
            "{name}: label {} claimed {} in {} is refuted by a real run ({})\n{text}",
            r.label, r.claim, r.function, r.run
        ));
    }
}

/// `COVPRUNE_SOUNDNESS_DIFFERENTIAL` programs (default 2) of each of the harness's kinds that
/// runs without the driver's outside code, from `COVPRUNE_SOUNDNESS_SEED` on.
#[test]
fn the_reference_refutes_no_claim_and_proves_nothing_a_run_breaks() {
    let n = env_u64("COVPRUNE_SOUNDNESS_DIFFERENTIAL", 2);
    let first = env_u64("COVPRUNE_SOUNDNESS_SEED", 1);
    let dir = harness_dir();
    let mut tally = DiffTally::default();
    for seed in first..first + n {
        let kinds: [(&str, Generated); 6] = [
            ("gen", generate(seed)),
            ("ctx", generate_full(seed, true, false, true)),
            (
                "memx",
                memory::with_their_externals(generate_full(seed, true, true, false)),
            ),
            ("loop", loops::generate_loops(seed)),
            ("cell", cells::generate_cells(seed)),
            ("wr", writers::generate_writers(seed)),
        ];
        for (kind, g) in kinds {
            let name = format!("diff_{kind}{seed}.c");
            differential(&mut tally, dir.path(), &name, g, &harness_config(), true);
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "differential harness: {} programs, {} claims: {} hold by the reference, {} broken by its models ({} calls replayed), {} unknown, {} not encoded together; {} failures",
        tally.programs,
        tally.claims,
        tally.holds,
        tally.broken,
        tally.calls_run,
        tally.unknown,
        tally.not_together,
        tally.failures.len()
    );
    assert!(
        tally.failures.is_empty(),
        "{}",
        tally.failures.join("\n---\n")
    );
    assert!(tally.holds > 0, "the reference confirms no claim");
}

/// A planted fault (calls blind to their own writes, [`writers`]) caught by the reference and
/// real runs of its models alone, as on programs without exhaustive runs (the corpus): of the
/// first 60 writer programs, those on which the fault makes a false claim (by their
/// exhaustive runs), until a replay refutes one.
#[test]
fn replays_of_the_references_models_catch_calls_blind_to_their_own_writes() {
    let mut engine = harness_config();
    engine.encode.plants.call_writes_blind = true;
    // Resource limits, not the wall clock, decide the planted engine's answers, so that the
    // programs on which it makes false claims are the same on a loaded machine.
    engine.solver.rlimit = covprune::smt::rlimit_for(engine.solver.timeout_ms);
    let dir = harness_dir();
    let mut tally = DiffTally::default();
    for seed in 1..=60 {
        let name = format!("diffw{seed}.c");
        let program = writers::generate_writers(seed);
        let path = dir.path().join(&name);
        std::fs::write(&path, &program.0).unwrap();
        let mut exhaustive = Tally::default();
        let n = program.1 as usize;
        check_with(
            dir.path(),
            seed,
            &path,
            n,
            &engine,
            &program.2,
            &mut exhaustive,
        );
        if exhaustive.false_claims.is_empty() {
            continue;
        }
        differential(&mut tally, dir.path(), &name, program, &engine, false);
        if tally.refuted > 0 {
            let _ = writeln!(std::io::stderr(), "refuted by a replay at seed {seed}");
            return;
        }
    }
    panic!("no replay of the reference's models refutes a claim of calls blind to their writes");
}
