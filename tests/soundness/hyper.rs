//! Hyperlabels in the exhaustive harness: generated programs annotated for CACC, RACC, ADC and
//! AUC (the real annotator), run on all 65,536 inputs with the recording runtime, every environment a
//! label binds kept. A conjunction may take its labels from different runs, so the true
//! coverage of a hyperlabel over the whole input domain is decided on the pooled record of
//! every input. Every hyperlabel `prune` proves uncoverable (each disjunct holds a label the
//! engine claims infeasible, or no values its labels can bind satisfy its guard) must be
//! uncovered there; a duplicate must be covered exactly when its representative is, a subsumed
//! one whenever one of its subsumers is. Recall is the proved share of the truly uncovered
//! ones.
//!
//! `COVPRUNE_SOUNDNESS_HYPER` sets the number of programs (default 12), from
//! `COVPRUNE_SOUNDNESS_SEED`.

use super::*;

use covprune::hyper::coverage::{cover, HyperCover, RunCover};
use covprune::report::ledger::HyperClaim;

/// Runs the program on every input with `COVPRUNE_RECORD` set: the labels any input covered,
/// with every environment of their bindings, pooled as one run.
fn pooled_record(dir: &Path, program: &Path, n_labels: usize) -> RunCover {
    let exe = harness_program(dir, program, None, n_labels, "hprog");
    let record = dir.join("hprog.record");
    let _ = std::fs::remove_file(&record);
    let out = Command::new(&exe)
        .env("COVPRUNE_RECORD", &record)
        .output()
        .expect("program runs");
    assert!(out.status.success(), "{} crashed", program.display());
    let recorded =
        covprune::measure::runtime::parse_record(&std::fs::read_to_string(&record).unwrap());
    assert!(
        !recorded.bindings_overflow,
        "{}: more environments than the recorder keeps",
        program.display()
    );
    let run = covprune::measure::TestRun {
        name: "all inputs".into(),
        outcome: covprune::measure::RunOutcome::Exited(0),
        reached: recorded.reached,
        covered: recorded.covered,
        crashed_in_label: None,
        bindings: recorded.bindings,
        sequences: recorded.sequences,
    };
    covprune::hyper::report::run_covers(&[run]).remove(0)
}

#[test]
fn exhaustive_runs_check_the_hyperlabel_claims() {
    use covprune_encoders::{Criterion, Limits};
    let n_programs = env_u64("COVPRUNE_SOUNDNESS_HYPER", 12);
    let first_seed = env_u64("COVPRUNE_SOUNDNESS_SEED", 1);
    let dir = harness_dir();
    let (mut hyperlabels, mut truly_uncovered, mut proved, mut redundant) = (0, 0, 0, 0);
    let mut by_guard = 0;
    let mut false_claims = Vec::new();
    for seed in first_seed..first_seed + n_programs {
        let (text, _) = generate_with(seed, false);
        let plain = dir.path().join(format!("hplain{seed}.c"));
        std::fs::write(&plain, &text).unwrap();
        let typing = frontend::load(&plain, &PreprocessOptions::default()).unwrap();
        let annotated = covprune::annotate::annotate(
            text.as_bytes(),
            Some(&typing.program),
            &[
                Criterion::Cacc,
                Criterion::Racc,
                Criterion::Adc,
                Criterion::Auc,
            ],
            &Limits::default(),
        );
        let path = dir.path().join(format!("hyp{seed}.c"));
        std::fs::write(&path, &annotated.text).unwrap();
        let hls = covprune::hyper::parse_file(&annotated.hyperlabels.join("\n"))
            .unwrap_or_else(|(line, e)| panic!("seed {seed}: line {line}: {e}"));
        let program = frontend::load(&path, &PreprocessOptions::default())
            .unwrap()
            .program;
        let (verdicts, _) = run(&program, &harness_config(), &|_| {});
        let claims =
            covprune::measure::claims_of_statuses(verdicts.iter().map(|v| (v.id, &v.status)));
        let tags = annotated
            .labels
            .iter()
            .map(|l| (l.id, l.tag.clone()))
            .collect();
        let pooled = pooled_record(dir.path(), &path, annotated.labels.len());
        let proved_rows =
            covprune::hyper::report::prove(&program, &hls, &tags, &claims, &harness_config());
        let hyper_claims: BTreeMap<u64, HyperClaim> = proved_rows
            .iter()
            .map(|r| (r.id, r.claim.clone()))
            .collect();
        let measured = covprune::hyper::report::measure(
            &hls,
            &tags,
            &hyper_claims,
            std::slice::from_ref(&pooled),
        );
        for (h, status) in hls.iter().zip(&measured.statuses) {
            hyperlabels += 1;
            let truth = cover(h, std::slice::from_ref(&pooled));
            if truth == HyperCover::NotCovered {
                truly_uncovered += 1;
            }
            match &status.claim {
                HyperClaim::Uncoverable { why } => {
                    proved += 1;
                    by_guard += usize::from(why.contains("guard"));
                }
                HyperClaim::Duplicate { .. } | HyperClaim::Subsumed { .. } => redundant += 1,
                HyperClaim::Unknown => {}
            }
        }
        // Every claim the pooled runs contradict (uncoverable but covered, a duplicate covered
        // without its representative or the other way, a subsumer covered without it).
        for (id, claim, what) in &measured.alarms {
            false_claims.push(format!("seed {seed}: hyperlabel {id} {claim}: {what}"));
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "soundness (hyperlabels CACC, RACC, ADC, AUC): {n_programs} programs, {hyperlabels} hyperlabels, \
         {truly_uncovered} uncovered over all inputs, {proved} proved uncoverable ({}; {by_guard} by a guard), \
         {redundant} proved duplicate or subsumed, {} false",
        percent(proved, truly_uncovered),
        false_claims.len()
    );
    assert!(
        hyperlabels > 0 && truly_uncovered > 0,
        "the programs give hyperlabels to check"
    );
    assert!(false_claims.is_empty(), "{}", false_claims.join("\n"));
}

/// `text` (a generated program) with LTest sequence marks in `f`: four chains of two or three
/// positions over two variables, at statement boundaries picked by `seed` (in text order
/// mostly, not always), some under a condition on the inputs, and breaks of each variable;
/// with one hyperlabel per chain. Lines that end a statement or open or close a block are the
/// boundaries.
fn with_sequences(seed: u64, text: &str) -> (String, String) {
    let mut r = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = |m: usize| {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        (r % m as u64) as usize
    };
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("int f("))
        .expect("f is written")
        + 1;
    let end = start
        + lines[start..]
            .iter()
            .position(|l| l == "}")
            .expect("f ends");
    let boundaries: Vec<usize> = (start..end)
        .filter(|&i| {
            let l = lines[i].trim_end();
            l.ends_with(';') || l.ends_with('{') || (l.ends_with('}') && i > start)
        })
        .collect();
    // Marks to insert after a boundary line: (line, mark).
    let mut marks: Vec<(usize, String)> = Vec::new();
    let mut hyper = String::new();
    for chain in 1..=4u64 {
        let len = 2 + next(2) as u64;
        let var = format!("\"v{}\"", chain % 2);
        let mut at: Vec<usize> = (0..len)
            .map(|_| boundaries[next(boundaries.len())])
            .collect();
        if next(4) != 0 {
            at.sort_unstable();
        }
        for (k, line) in at.into_iter().enumerate() {
            let cond = match next(3) {
                0 => format!("(a & {}) != 0", 1 << next(4)),
                1 => format!("b < {}", next(100) as i64 - 50),
                _ => "1".to_string(),
            };
            marks.push((
                line,
                format!(
                    "pc_label_sequence({cond}, {chain}, {}, {len}, {var}, 0);",
                    k + 1
                ),
            ));
        }
        hyper.push_str(&format!("{chain}) <s{chain}|; ;>,\n"));
    }
    for var in 0..2 {
        for _ in 0..2 {
            let line = boundaries[next(boundaries.len())];
            marks.push((line, format!("pc_label_sequence_condition(0, \"v{var}\");")));
        }
    }
    // From the last line back, so that indices stay right; marks of one line in their order.
    marks.sort_by_key(|(line, _)| std::cmp::Reverse(*line));
    let mut k = 0;
    while k < marks.len() {
        let line = marks[k].0;
        let here: Vec<String> = marks[k..]
            .iter()
            .take_while(|(l, _)| *l == line)
            .map(|(_, m)| format!("    {m}"))
            .collect();
        k += here.len();
        for (j, m) in here.into_iter().enumerate() {
            lines.insert(line + 1 + j, m);
        }
    }
    (lines.join("\n") + "\n", hyper)
}

/// LTest's sequences on generated programs, with memory every other seed
/// ([`with_sequences`]), run on every input in one
/// process: the runtime's chain states carry from one input to the next, as from one call to
/// the next. Every chain `prune` proves infeasible must be left uncompleted by all of them.
/// `COVPRUNE_SOUNDNESS_SEQUENCES` sets the number of programs (default 20).
#[test]
fn exhaustive_runs_check_the_sequence_claims() {
    let n_programs = env_u64("COVPRUNE_SOUNDNESS_SEQUENCES", 20);
    let first_seed = env_u64("COVPRUNE_SOUNDNESS_SEED", 1);
    let dir = harness_dir();
    let (mut chains, mut uncovered, mut proved) = (0, 0, 0);
    let mut false_claims = Vec::new();
    for seed in first_seed..first_seed + n_programs {
        // Programs over memory (with calls of unknown code) every other seed.
        let (text, _, _) = generate_full(seed, false, seed % 2 == 0, false);
        let (text, hyper) = with_sequences(seed, &text);
        let path = dir.path().join(format!("seq{seed}.c"));
        std::fs::write(&path, &text).unwrap();
        keep_copy(&format!("seq{seed}.c"), &text);
        let hls = covprune::hyper::parse_file(&hyper).unwrap();
        let program = frontend::load(&path, &PreprocessOptions::default())
            .unwrap()
            .program;
        let rows = covprune::hyper::report::prove(
            &program,
            &hls,
            &BTreeMap::new(),
            &BTreeMap::new(),
            &harness_config(),
        );
        let pooled = pooled_record(dir.path(), &path, 0);
        for (h, row) in hls.iter().zip(&rows) {
            chains += 1;
            let truth = cover(h, std::slice::from_ref(&pooled));
            uncovered += usize::from(truth == HyperCover::NotCovered);
            if matches!(row.claim, HyperClaim::Uncoverable { .. }) {
                proved += 1;
                if truth != HyperCover::NotCovered {
                    false_claims.push(format!(
                        "seed {seed}: chain {} proved infeasible, completed over all inputs",
                        h.id
                    ));
                }
            }
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "soundness (sequences): {n_programs} programs, {chains} chains, {uncovered} not completed \
         over all inputs, {proved} proved infeasible ({}), {} false",
        percent(proved, uncovered),
        false_claims.len()
    );
    assert!(
        uncovered > 0 && proved > 0,
        "the programs give chains to check"
    );
    assert!(false_claims.is_empty(), "{}", false_claims.join("\n"));
}
