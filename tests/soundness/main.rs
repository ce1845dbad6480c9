//! The exhaustive soundness harness: random small C programs over narrow inputs
//! (`unsigned char a`, `signed char b`), compiled and run on all 65,536 inputs to get the exact
//! sets of inputs covering each label, then checked against every claim of the engine (steps
//! 1-3): a label claimed infeasible that some input covers, duplicates covered by different
//! inputs, or a subsumer covered by an input that misses the subsumed label, is a soundness bug.
//! Also reports recall on infeasibility (found / truly infeasible) and the number of claims.
//!
//! Float programs add `double` and `float` locals computed from the inputs.
//!
//! The generator is in `generator.rs`; `hyper.rs` checks hyperlabel claims the same way;
//! `memory.rs` holds the harnesses over programs with memory.
//!
//! `COVPRUNE_SOUNDNESS_PROGRAMS` sets the number of programs (default 200);
//! `COVPRUNE_SOUNDNESS_SEED` the first seed. The questions get 10 s on the wall clock;
//! `COVPRUNE_SOUNDNESS_DEFAULT_LIMITS=1` gives them the CLI's defaults instead (2 s, and
//! 5,000,000 resource units, or `COVPRUNE_SOUNDNESS_RLIMIT` units, 0 for the wall clock alone).

use std::collections::{BTreeMap, BTreeSet};

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use covprune::frontend::{self, PreprocessOptions};
use covprune::ir::import::{merge, Bundle};
use covprune::prune::{run, PruneConfig, Status};
use covprune::smt::SolverConfig;

mod cells;
mod differential;
mod generator;
mod hyper;
mod loops;
mod memory;
mod plants;
mod reduced;
mod writers;
use generator::{generate, generate_floats, generate_full, generate_with, Generated, Kind, Placed};

/// The driver runs `f` on every input with the project's recording runtime
/// (`covprune::measure::runtime`), resetting it before each input. Programs that call code
/// outside them (`-DOUTSIDE_VARIANTS=5`) run every input once per way that code may behave
/// under the unit-testing contract ([`OUTSIDE_VARIANTS`]); each (variant, input) pair is one
/// run, one bit.
const DRIVER: &str = r#"
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#ifndef MAXL
#define MAXL 4096
#endif
#ifndef OUTSIDE_VARIANTS
#define OUTSIDE_VARIANTS 1
#endif
#define WORDS (1024 * OUTSIDE_VARIANTS)
unsigned char covprune_state_of(long id);
void covprune_reset(void);
static unsigned long long inputs[MAXL][WORDS]; /* one bit per run covering the label */
static jmp_buf env;
void harness_exit(int code) { (void)code; longjmp(env, 1); }
int f(unsigned char a, signed char b);
/* Code outside the programs under test, for their memory (or the same functions in a file of
   their own, EXT_C, with EXT_ELSEWHERE). Variant 0 keeps the pointer `ext_keep` is given and
   writes through it in `ext_touch`; `ext_poke` writes through its pointer. The other variants
   do more of what the contract lets outside code do: 1 keeps `ext_poke`'s pointer too; 2 also
   writes the value it is given (`ext_keep`: a value drawn for the run) into the globals of
   external linkage `g2` and an element of `garr`; 3 also calls `f` back once per run, with
   inputs drawn for the run; 4 writes drawn values into those globals. */
#ifndef EXT_ELSEWHERE
static int *kept;
static int variant, depth, called_back;
static unsigned draw_state;
static int draw(void) { draw_state = draw_state * 1103515245u + 12345u; return (int)(draw_state >> 8); }
#if OUTSIDE_VARIANTS > 1
extern int g2;
extern int garr[4];
static void outside(int v) {
    if (variant >= 2) {
        g2 = variant >= 4 ? draw() : v;
        garr[draw() & 3] = variant >= 4 ? draw() : v;
    }
    if (variant >= 3 && depth == 0 && !called_back) {
        int a = draw() & 255, b = (signed char)draw();
        called_back = 1;
        depth = 1;
        f((unsigned char)a, (signed char)b);
        depth = 0;
    }
}
#else
static void outside(int v) { (void)v; }
#endif
/* Pointers kept stay those of the outermost activation: a call back's locals die with it. */
void ext_keep(int *q) { if (depth == 0) kept = q; outside(draw()); }
void ext_poke(int *q, int v) { *q = v; if (variant >= 1 && depth == 0) kept = q; outside(v); }
void ext_touch(int v) { if (kept) *kept = v; outside(v); }
#define EXT_RESET(seed) (kept = 0, depth = 0, called_back = 0, draw_state = (seed))
#else
void ext_reset(void);
static int variant;
#define EXT_RESET(seed) ext_reset()
#endif
int main(void) {
    for (variant = 0; variant < OUTSIDE_VARIANTS; variant++)
        for (int a = 0; a < 256; a++)
            for (int b = -128; b < 128; b++) {
                int input = a * 256 + (b + 128);
                long run = (long)variant * 65536 + input;
                covprune_reset();
                EXT_RESET((unsigned)run * 2654435761u + 1u);
                if (!setjmp(env)) f((unsigned char)a, (signed char)b);
                for (int i = 0; i < MAXL; i++)
                    if (covprune_state_of(i) & 2) inputs[i][run / 64] |= 1ULL << (run % 64);
            }
    for (int i = 0; i < MAXL; i++) {
        int any = 0;
        for (int w = 0; w < WORDS; w++) any |= inputs[i][w] != 0;
        if (!any) continue;
        printf("%d", i);
        for (int w = 0; w < WORDS; w++) printf(" %llx", inputs[i][w]);
        printf("\n");
    }
    return 0;
}
"#;

/// The ways code outside the memory programs behaves in the driver ([`DRIVER`]). A label is
/// truly infeasible only if no run of any of them covers it: a label that some legal outside
/// code covers is not one the engine may prove infeasible, and every claim is checked against
/// the runs of all of them.
const OUTSIDE_VARIANTS: usize = 5;

/// `exit` jumps back to the driver, which goes on with the next input.
const HARNESS_H: &str = r#"
void harness_exit(int code) __attribute__((noreturn));
#define exit harness_exit
"#;

/// The driver's external functions in a file of their own: a project's other file, whose
/// `static` the programs cannot name.
const EXT_C: &str = "static int *kept;
void ext_keep(int *q) { kept = q; }
void ext_poke(int *q, int v) { *q = v; }
void ext_touch(int v) { if (kept) *kept = v; }
void ext_reset(void) { kept = 0; }
";

/// The harness's executable `dir/name`: `program` built with the driver that runs it on every
/// input and the recording runtime (linked with `other`, the external functions' file, if
/// given).
fn harness_program(
    dir: &Path,
    program: &Path,
    other: Option<&Path>,
    n_labels: usize,
    name: &str,
) -> std::path::PathBuf {
    let exe = dir.join(name);
    let variants = outside_variants(program, other);
    let status = Command::new("cc")
        .args(["-O0", "-w"])
        .arg(format!("-DOUTSIDE_VARIANTS={variants}"))
        .args(other.map(|_| "-DEXT_ELSEWHERE"))
        .args(other)
        .arg(format!("-DMAXL={}", n_labels + 1))
        .arg("-include")
        .arg(dir.join("runtime.h"))
        .arg("-include")
        .arg(dir.join("harness.h"))
        .arg("-o")
        .arg(&exe)
        .arg(program)
        .arg(dir.join("driver.c"))
        .arg(dir.join("runtime.c"))
        .arg("-lm")
        .status()
        .expect("cc runs");
    assert!(
        status.success(),
        "generated program does not compile: {}",
        program.display()
    );
    exe
}

/// How many ways the outside code of the program's runs behaves: [`OUTSIDE_VARIANTS`] for a
/// program that calls the driver's outside functions, 1 for any other (one whose outside code
/// is written in it, or in `other`, which the engine sees).
fn outside_variants(program: &Path, other: Option<&Path>) -> usize {
    let text = std::fs::read_to_string(program).unwrap();
    if other.is_none() && text.contains("void ext_keep(int *q);") {
        OUTSIDE_VARIANTS
    } else {
        1
    }
}

/// For each label some run covers, the set of covering runs (a bitset: 65,536 inputs per
/// outside variant, [`outside_variants`]), by running the
/// compiled program (linked with `other`, the external functions' file, if given) on every
/// input.
fn covered_labels(
    dir: &Path,
    program: &Path,
    other: Option<&Path>,
    n_labels: usize,
) -> BTreeMap<u32, Vec<u64>> {
    let exe = harness_program(dir, program, other, n_labels, "prog");
    let out = Command::new(&exe).output().expect("program runs");
    assert!(
        out.status.success(),
        "generated program crashed: {}",
        program.display()
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let id: u32 = it.next()?.parse().ok()?;
            let bits: Vec<u64> = it
                .map(|w| u64::from_str_radix(w, 16).unwrap_or(0))
                .collect();
            Some((id, bits))
        })
        .collect()
}

fn subset(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x & !y == 0)
}

/// What the harness found over its programs.
#[derive(Default)]
struct Tally {
    labels: usize,
    truly_infeasible: usize,
    found: usize,
    duplicate: usize,
    subsumed: usize,
    false_claims: Vec<String>,
    /// Per kind of place (labels the generator placed itself).
    by_kind: BTreeMap<Kind, KindTally>,
    /// Feasible labels pruned as duplicate or subsumed whose every named partner is infeasible:
    /// the tester would lose them.
    orphans: Vec<String>,
    /// Labels left unknown because a limit ran out (a question's time or resources, the
    /// function's budget or its memory questions' share), not because a model was found.
    out_of_limits: BTreeMap<String, usize>,
}

/// Recall in one kind of place: of infeasible labels, and of redundant ones (a feasible label
/// with another feasible label of its segment that implies it: covered by a subset of its
/// inputs, a strict one or the same with a lower id).
#[derive(Default)]
struct KindTally {
    labels: usize,
    truly_infeasible: usize,
    found_infeasible: usize,
    truly_redundant: usize,
    found_redundant: usize,
}

fn percent(found: usize, truly: usize) -> String {
    if truly == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * found as f64 / truly as f64)
    }
}

impl Tally {
    fn recall(&self) -> f64 {
        if self.truly_infeasible == 0 {
            1.0
        } else {
            self.found as f64 / self.truly_infeasible as f64
        }
    }

    fn redundant_recall(&self) -> f64 {
        let (found, truly) = self.by_kind.values().fold((0, 0), |(f, t), k| {
            (f + k.found_redundant, t + k.truly_redundant)
        });
        if truly == 0 {
            1.0
        } else {
            found as f64 / truly as f64
        }
    }

    fn report(&self, what: &str, n_programs: u64) {
        for (kind, k) in &self.by_kind {
            let _ = writeln!(std::io::stderr(),
                "  {:<20} {:>6} labels; infeasible {:>5}, proved {:>5} ({}); redundant {:>5}, pruned {:>5} ({})",
                kind.name(),
                k.labels,
                k.truly_infeasible,
                k.found_infeasible,
                percent(k.found_infeasible, k.truly_infeasible),
                k.truly_redundant,
                k.found_redundant,
                percent(k.found_redundant, k.truly_redundant)
            );
        }
        if std::env::var_os("COVPRUNE_SOUNDNESS_VERBOSE").is_some() {
            for o in &self.orphans {
                let _ = writeln!(std::io::stderr(), "  {o}");
            }
        }
        if !self.by_kind.is_empty() {
            let _ =
                writeln!(std::io::stderr(),
                "  redundant recall {:.1}%; {} feasible labels pruned without a feasible partner",
                100.0 * self.redundant_recall(),
                self.orphans.len()
            );
        }
        let _ = writeln!(std::io::stderr(),
            "soundness harness ({what}): {n_programs} programs, {} labels ({} left unknown by a limit), {} truly infeasible, {} proved infeasible (recall {:.1}%), {} duplicate and {} subsumed claims, {} false claims",
            self.labels,
            if self.out_of_limits.is_empty() {
                "none".to_string()
            } else {
                self.out_of_limits
                    .iter()
                    .map(|(r, n)| format!("{n} {r}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            self.truly_infeasible,
            self.found,
            100.0 * self.recall(),
            self.duplicate,
            self.subsumed,
            self.false_claims.len()
        );
    }
}

fn harness_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("driver.c"), DRIVER).unwrap();
    std::fs::write(dir.path().join("harness.h"), HARNESS_H).unwrap();
    std::fs::write(
        dir.path().join("runtime.h"),
        covprune::measure::runtime::HEADER,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("runtime.c"),
        covprune::measure::runtime::SOURCE,
    )
    .unwrap();
    dir
}

fn harness_config() -> PruneConfig {
    // `COVPRUNE_SOUNDNESS_DEFAULT_LIMITS=1`: the CLI's default limits (2 s and 5,000,000
    // resource units per question) instead of 10 s on the wall clock.
    let (timeout_ms, rlimit) = if std::env::var_os("COVPRUNE_SOUNDNESS_DEFAULT_LIMITS").is_some() {
        (
            2_000,
            env_u64("COVPRUNE_SOUNDNESS_RLIMIT", 5_000_000) as u32,
        )
    } else {
        (10_000, 0)
    };
    PruneConfig {
        solver: SolverConfig {
            timeout_ms,
            rlimit,
            max_memory_mb: 0,
            incremental: true,
        },
        jobs: 1,
        steps: BTreeSet::from([1, 2, 3]),
        // `COVPRUNE_SOUNDNESS_WITNESSED=1`: subsumers must be witnessed (`--witnessed-subsumers`).
        witnessed_subsumers: std::env::var_os("COVPRUNE_SOUNDNESS_WITNESSED").is_some(),
        ..PruneConfig::default()
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs the program on every input, prunes it, and checks every claim against the runs.
fn check(
    dir: &Path,
    seed: u64,
    path: &Path,
    n_labels: usize,
    placed: &BTreeMap<u32, Placed>,
    tally: &mut Tally,
) {
    check_with(dir, seed, path, n_labels, &harness_config(), placed, tally)
}

fn check_with(
    dir: &Path,
    seed: u64,
    path: &Path,
    n_labels: usize,
    config: &PruneConfig,
    placed: &BTreeMap<u32, Placed>,
    tally: &mut Tally,
) {
    check_program(dir, seed, path, None, n_labels, config, placed, tally)
}

/// [`check_with`], the program being pruned with the small functions of `other` (a file of
/// the same project) encoded in place of its calls, and run linked with it.
#[allow(clippy::too_many_arguments)]
fn check_program(
    dir: &Path,
    seed: u64,
    path: &Path,
    other: Option<&Path>,
    n_labels: usize,
    config: &PruneConfig,
    placed: &BTreeMap<u32, Placed>,
    tally: &mut Tally,
) {
    let text = std::fs::read_to_string(path).unwrap();
    let covered = covered_labels(dir, path, other, n_labels);
    let mut program = frontend::load(path, &PreprocessOptions::default())
        .unwrap()
        .program;
    assert!(
        program.skipped.is_empty(),
        "seed {seed}: {:?}",
        program.skipped
    );
    if let Some(other) = other {
        let unit = frontend::load(other, &PreprocessOptions::default())
            .unwrap()
            .program;
        let bundle = Bundle::of_unit(&unit, "ext.c", |f| f.blocks.len() <= 40);
        let wanted = ["ext_keep", "ext_poke", "ext_touch"]
            .map(str::to_string)
            .into();
        merge(&mut program, &bundle, &wanted, &BTreeSet::new()).unwrap();
        assert_eq!(program.imported.len(), 3, "seed {seed}: all three merged");
    }
    let (verdicts, _) = run(&program, config, &|_| {});
    let empty = vec![0u64; 1024 * outside_variants(path, other)];
    let cov = |id: u64| covered.get(&(id as u32)).unwrap_or(&empty);
    assert_eq!(
        verdicts.len(),
        n_labels,
        "seed {seed}: every label has a verdict"
    );
    tally.labels += n_labels;
    tally_by_kind(seed, &verdicts, &covered, placed, tally);
    for v in &verdicts {
        let is_covered = covered.contains_key(&(v.id as u32));
        match &v.status {
            Status::Duplicate { of } => {
                tally.duplicate += 1;
                if cov(v.id) != cov(*of) {
                    tally.false_claims.push(format!(
                        "seed {seed}: label {} claimed a duplicate of {of}, but inputs cover them differently\n{text}",
                        v.id
                    ));
                }
            }
            Status::Subsumed { by } => {
                tally.subsumed += 1;
                for b in by {
                    if !subset(cov(*b), cov(v.id)) {
                        tally.false_claims.push(format!(
                            "seed {seed}: label {} claimed subsumed by {b}, but an input covers {b} and not {}\n{text}",
                            v.id, v.id
                        ));
                    }
                }
            }
            Status::Unknown { reason } if *reason != covprune::prune::Reason::Satisfiable => {
                *tally.out_of_limits.entry(reason.to_string()).or_default() += 1;
                if std::env::var_os("COVPRUNE_SOUNDNESS_VERBOSE").is_some() {
                    let _ = writeln!(
                        std::io::stderr(),
                        "seed {seed}: label {} left unknown ({reason})",
                        v.id
                    );
                }
            }
            _ => {}
        }
        if !is_covered {
            tally.truly_infeasible += 1;
            if v.status != Status::Infeasible
                && std::env::var_os("COVPRUNE_SOUNDNESS_VERBOSE").is_some()
            {
                let _ = writeln!(
                    std::io::stderr(),
                    "seed {seed}: missed label {} ({:?})\n{text}",
                    v.id,
                    v.status
                );
            }
        }
        if v.status == Status::Infeasible {
            if is_covered {
                tally.false_claims.push(format!(
                    "seed {seed}: label {} claimed infeasible but covered\n{text}",
                    v.id
                ));
            } else {
                tally.found += 1;
            }
        }
    }
}

/// Recall per kind of place, and feasible labels pruned without a feasible partner.
fn tally_by_kind(
    seed: u64,
    verdicts: &[covprune::prune::LabelVerdict],
    covered: &BTreeMap<u32, Vec<u64>>,
    placed: &BTreeMap<u32, Placed>,
    tally: &mut Tally,
) {
    let is_covered = |id: u64| covered.contains_key(&(id as u32));
    for v in verdicts {
        let partners: Vec<u64> = match &v.status {
            Status::Duplicate { of } => vec![*of],
            Status::Subsumed { by } => by.clone(),
            _ => continue,
        };
        if is_covered(v.id) && !partners.iter().any(|p| is_covered(*p)) {
            tally.orphans.push(format!(
                "seed {seed}: label {} pruned as {:?}, but no partner is feasible",
                v.id, v.status
            ));
        }
    }
    for v in verdicts {
        let Some(here) = placed.get(&(v.id as u32)) else {
            continue;
        };
        let k = tally.by_kind.entry(here.kind).or_default();
        k.labels += 1;
        if !is_covered(v.id) {
            k.truly_infeasible += 1;
            if v.status == Status::Infeasible {
                k.found_infeasible += 1;
            }
            continue;
        }
        let mine = &covered[&(v.id as u32)];
        let redundant = placed.iter().any(|(&other, there)| {
            let Some(theirs) = covered.get(&other) else {
                return false;
            };
            other as u64 != v.id
                && there.segment == here.segment
                && subset(theirs, mine)
                && (theirs != mine || (other as u64) < v.id)
        });
        if redundant {
            k.truly_redundant += 1;
            if matches!(v.status, Status::Duplicate { .. } | Status::Subsumed { .. }) {
                k.found_redundant += 1;
            } else if std::env::var_os("COVPRUNE_SOUNDNESS_VERBOSE").is_some() {
                let _ = writeln!(
                    std::io::stderr(),
                    "seed {seed}: missed redundant label {} ({:?}, {:?})",
                    v.id,
                    here.kind,
                    v.status
                );
            }
        }
    }
}

/// Generates, runs and checks `n_programs` programs from `COVPRUNE_SOUNDNESS_SEED` on; fails on
/// any false claim, or when recall falls below `recall_floor`.
fn run_harness(
    what: &str,
    n_programs: u64,
    prefix: &str,
    generate: impl Fn(u64) -> Generated,
    recall_floor: f64,
) {
    let tally = run_harness_with(what, n_programs, prefix, generate, &harness_config());
    assert!(
        tally.recall() >= recall_floor,
        "recall fell to {:.1}%",
        100.0 * tally.recall()
    );
}

/// `COVPRUNE_SOUNDNESS_KEEP=DIR`: a copy of every generated program, named `name`, to look into
/// one by hand.
fn keep_copy(name: &str, text: &str) {
    if let Some(keep) = std::env::var_os("COVPRUNE_SOUNDNESS_KEEP") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::write(Path::new(&keep).join(name), text).unwrap();
    }
}

/// Checks `n_programs` generated programs from `COVPRUNE_SOUNDNESS_SEED` under `config`,
/// reports them and asserts that no claim is false; returns the tally for further checks.
fn run_harness_with(
    what: &str,
    n_programs: u64,
    prefix: &str,
    generate: impl Fn(u64) -> Generated,
    config: &PruneConfig,
) -> Tally {
    let first_seed = env_u64("COVPRUNE_SOUNDNESS_SEED", 1);
    let dir = harness_dir();
    let mut tally = Tally::default();
    for seed in first_seed..first_seed + n_programs {
        let (text, n_labels, placed) = generate(seed);
        let path = dir.path().join(format!("{prefix}{seed}.c"));
        std::fs::write(&path, &text).unwrap();
        keep_copy(&format!("{prefix}{seed}.c"), &text);
        check_with(
            dir.path(),
            seed,
            &path,
            n_labels as usize,
            config,
            &placed,
            &mut tally,
        );
    }
    tally.report(what, n_programs);
    assert!(
        tally.false_claims.is_empty(),
        "{}",
        tally.false_claims.join("\n---\n")
    );
    tally
}

/// With witnessed subsumers (`--witnessed-subsumers`), no feasible label is pruned with only
/// infeasible subsumers, on the context harness's programs (`COVPRUNE_SOUNDNESS_WITNESSED_PROGRAMS`,
/// default 40, from `COVPRUNE_SOUNDNESS_SEED`; seed 14 has two such labels by default).
#[test]
fn witnessed_subsumers_leave_no_pruned_label_without_a_feasible_partner() {
    let config = PruneConfig {
        witnessed_subsumers: true,
        ..harness_config()
    };
    let tally = run_harness_with(
        "helpers in context, witnessed subsumers",
        env_u64("COVPRUNE_SOUNDNESS_WITNESSED_PROGRAMS", 40),
        "wit",
        |seed| generate_full(seed, true, false, true),
        &config,
    );
    assert!(tally.orphans.is_empty(), "{}", tally.orphans.join("\n"));
}

/// Runs the memory harness under `config` (a planted fault) on the programs of seeds 1 to 120
/// that `keep` accepts, and stops at the first false claim: its seed, or `None`. Stopping there
/// makes the generous bound cheap while the fault is caught, and keeps the tests from depending
/// on a handful of lucky seeds.
fn first_seed_with_a_false_claim(
    config: &PruneConfig,
    prefix: &str,
    keep: impl Fn(&str) -> bool,
) -> Option<u64> {
    first_false_claim(config, prefix, 120, |seed| {
        let g = generate_full(seed, true, true, false);
        keep(&g.0).then_some(g)
    })
}

/// The first of seeds 1 to `seeds` whose program (`generate`; `None`: skipped) has a false
/// claim under `config`, stopping there.
fn first_false_claim(
    config: &PruneConfig,
    prefix: &str,
    seeds: u64,
    generate: impl Fn(u64) -> Option<Generated>,
) -> Option<u64> {
    let dir = harness_dir();
    let mut tally = Tally::default();
    for seed in 1..=seeds {
        let Some((text, n_labels, placed)) = generate(seed) else {
            continue;
        };
        let path = dir.path().join(format!("{prefix}{seed}.c"));
        std::fs::write(&path, &text).unwrap();
        check_with(
            dir.path(),
            seed,
            &path,
            n_labels as usize,
            config,
            &placed,
            &mut tally,
        );
        if !tally.false_claims.is_empty() {
            return Some(seed);
        }
    }
    None
}

/// A planted fault: an encoding that ignores aliasing (every object in a memory of its own) must
/// be caught by the memory harness.
#[test]
fn the_memory_harness_catches_an_alias_blind_encoding() {
    let mut config = harness_config();
    config.encode.alias_blind = true;
    if first_seed_with_a_false_claim(&config, "mem", |_| true).is_none() {
        panic!("no false claim found with an alias-blind encoding in 120 memory programs");
    }
}

/// A planted fault in the region analysis: when the pointers given to unknown code do not
/// escape, the locals behind `q` stay in a region that the driver's code writes behind the
/// engine's back (`ext_keep`, then `ext_touch`), and the memory harness must catch it.
#[test]
fn the_memory_harness_catches_a_region_analysis_blind_to_escapes() {
    let mut config = harness_config();
    config.encode.escape_blind = true;
    match first_seed_with_a_false_claim(&config, "esc", |text| text.contains("ext_keep(q)")) {
        Some(seed) => {
            let _ = writeln!(
                std::io::stderr(),
                "escape-blind fault caught at seed {seed}"
            );
        }
        None => panic!(
            "no false claim found with an escape-blind region analysis in 120 memory programs"
        ),
    }
}

#[test]
fn exhaustive_runs_never_contradict_an_infeasible_claim() {
    // A floor well below the observed recall, so that a regression in precision is noticed.
    run_harness(
        "hand-placed labels",
        env_u64("COVPRUNE_SOUNDNESS_PROGRAMS", 200),
        "gen",
        generate,
        0.5,
    );
}

/// Programs whose loops carry values across an input-dependent number of trips
/// ([`loops::generate_loops`]): the bounds proved at loop heads are checked on every input.
/// `COVPRUNE_SOUNDNESS_LOOPS` programs (default 40).
#[test]
fn exhaustive_runs_check_the_claims_on_loop_programs() {
    let mut config = harness_config();
    // Questions with floats are bounded by the wall clock alone (see the float harness).
    config.solver.timeout_ms = 2_000;
    run_harness_with(
        "loop programs",
        env_u64("COVPRUNE_SOUNDNESS_LOOPS", 40),
        "loop",
        loops::generate_loops,
        &config,
    );
}

/// Programs whose loops fill, check and read back arrays ([`cells::generate_cells`]): the
/// bounds proved on the cells a nest went over are checked on every input.
/// `COVPRUNE_SOUNDNESS_CELLS` programs (default 40).
#[test]
fn exhaustive_runs_check_the_claims_on_cell_programs() {
    let mut config = harness_config();
    config.solver.timeout_ms = 2_000;
    run_harness_with(
        "cell programs",
        env_u64("COVPRUNE_SOUNDNESS_CELLS", 40),
        "cell",
        cells::generate_cells,
        &config,
    );
}

/// A planted fault: bounds on array cells taken as facts without their proofs must be caught
/// by the cell harness.
#[test]
fn the_cell_harness_catches_unproved_cell_facts() {
    let mut config = harness_config();
    config.solver.timeout_ms = 2_000;
    config.faults.unproved_cell_facts = true;
    let caught = first_false_claim(&config, "cellf", 60, |seed| {
        Some(cells::generate_cells(seed))
    });
    assert!(
        caught.is_some(),
        "no false claim found with unproved cell facts in 60 cell programs"
    );
}

/// A planted fault: every bound proposed at a loop head taken as a fact without its proof must
/// be caught by the loop harness.
#[test]
fn the_loop_harness_catches_unproved_loop_facts() {
    let mut config = harness_config();
    config.solver.timeout_ms = 2_000;
    config.faults.unproved_loop_facts = true;
    let caught = first_false_claim(&config, "loopf", 60, |seed| {
        Some(loops::generate_loops(seed))
    });
    assert!(
        caught.is_some(),
        "no false claim found with unproved loop facts in 60 loop programs"
    );
}

/// Programs over `double` and `float` values computed from the inputs (NaNs, infinities and
/// signed zeros among them), with the math functions covprune knows:
/// `COVPRUNE_SOUNDNESS_FLOATS` programs (default 20). Questions with floats are bounded by the
/// wall clock alone, so they get the CLI's default limit (2 s) rather than the harness's 10 s.
#[test]
fn exhaustive_runs_check_the_claims_on_float_programs() {
    let mut config = harness_config();
    config.solver.timeout_ms = config.solver.timeout_ms.min(2_000);
    let tally = run_harness_with(
        "float programs",
        env_u64("COVPRUNE_SOUNDNESS_FLOATS", 20),
        "flt",
        generate_floats,
        &config,
    );
    assert!(
        tally.recall() >= 0.3,
        "recall fell to {:.1}%",
        100.0 * tally.recall()
    );
}

/// Programs whose helpers are called once and twice with restricted arguments, with labels
/// deep in the helpers and in loop bodies: recall in calling context, per kind of place.
/// `COVPRUNE_SOUNDNESS_CONTEXT` programs (default 200).
#[test]
fn exhaustive_runs_check_the_claims_in_calling_contexts() {
    run_harness(
        "helpers in context",
        env_u64("COVPRUNE_SOUNDNESS_CONTEXT", 200),
        "ctx",
        |seed| generate_full(seed, true, false, true),
        0.5,
    );
}

/// The same check on the labels the annotator writes (CC, GACC, LIMIT, STMT and WM-S with its
/// guards): `COVPRUNE_SOUNDNESS_ANNOTATED` programs (default 8; each has hundreds of labels).
#[test]
fn exhaustive_runs_check_the_claims_on_annotated_criteria() {
    use covprune_encoders::{Criterion, Limits};
    let n_programs = env_u64("COVPRUNE_SOUNDNESS_ANNOTATED", 8);
    let first_seed = env_u64("COVPRUNE_SOUNDNESS_SEED", 1);
    let criteria = [
        Criterion::Cc,
        Criterion::Gacc,
        Criterion::Limit,
        Criterion::Stmt,
        Criterion::WmS,
    ];
    let dir = harness_dir();
    let mut tally = Tally::default();
    for seed in first_seed..first_seed + n_programs {
        let (text, _) = generate_with(seed, false);
        let plain = dir.path().join(format!("plain{seed}.c"));
        std::fs::write(&plain, &text).unwrap();
        let typing = frontend::load(&plain, &PreprocessOptions::default()).unwrap();
        let annotated = covprune::annotate::annotate(
            text.as_bytes(),
            Some(&typing.program),
            &criteria,
            &Limits::default(),
        );
        let n_labels = annotated.labels.len();
        assert!(n_labels < 4096, "seed {seed}: {n_labels} labels");
        let path = dir.path().join(format!("ann{seed}.c"));
        std::fs::write(&path, &annotated.text).unwrap();
        check(
            dir.path(),
            seed,
            &path,
            n_labels,
            &BTreeMap::new(),
            &mut tally,
        );
    }
    tally.report("annotated CC, GACC, LIMIT, STMT, WM-S", n_programs);
    assert!(
        tally.false_claims.is_empty(),
        "{}",
        tally.false_claims.join("\n---\n")
    );
}

#[test]
#[ignore]
fn print_context_program() {
    let seed = env_u64("COVPRUNE_SOUNDNESS_SEED", 1);
    let (text, n, placed) = generate_full(seed, true, false, true);
    let _ = writeln!(std::io::stderr(), "{text}\n{n} labels\n{placed:?}");
}
