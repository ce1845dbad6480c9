//! Engine tests: C fixtures whose labels carry their expected step-1 verdict in a comment
//! (`/* expect: infeasible */` or `/* expect: unknown */`), plus ledger and labels-file outputs.

use std::collections::BTreeMap;
use std::path::Path;

use covprune::frontend::{self, PreprocessOptions};
use covprune::prune::{step1, PruneConfig, Status};

/// Expected verdict per label id, read from the `expect:` comments of the fixture.
fn expectations(path: &Path) -> BTreeMap<u64, &'static str> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(pos) = line.find("pc_label(") else {
            continue;
        };
        let Some(exp) = line.find("expect: ") else {
            continue;
        };
        let rest = &line[pos..];
        // The id is the last integer argument before the tag string.
        let id: u64 = rest
            .rsplit_once(", \"")
            .and_then(|(head, _)| head.rsplit_once(", "))
            .and_then(|(_, id)| id.trim().parse().ok())
            .unwrap_or_else(|| panic!("cannot read the label id in: {line}"));
        let verdict = if line[exp..].starts_with("expect: infeasible") {
            "infeasible"
        } else {
            "unknown"
        };
        out.insert(id, verdict);
    }
    out
}

fn check_fixture(path: &Path) -> Vec<u64> {
    check_fixture_with(path, &PruneConfig::default())
}

/// Checks a fixture's step-1 verdicts against its expectations under `config`; returns the
/// labels proved infeasible.
fn check_fixture_with(path: &Path, config: &PruneConfig) -> Vec<u64> {
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let verdicts = step1(&loaded.program, config);
    let expected = expectations(path);
    let got: BTreeMap<u64, &'static str> = verdicts
        .iter()
        .map(|v| {
            (
                v.id,
                match v.status {
                    Status::Infeasible => "infeasible",
                    _ => "unknown",
                },
            )
        })
        .collect();
    let mut wrong = Vec::new();
    for (id, want) in &expected {
        let have = got.get(id).copied().unwrap_or("missing");
        if have != *want {
            wrong.push(format!("label {id}: expected {want}, got {have}"));
        }
    }
    assert_eq!(
        got.len(),
        expected.len(),
        "every label has a verdict and an expectation"
    );
    assert!(
        wrong.is_empty(),
        "{}:\n{}",
        path.display(),
        wrong.join("\n")
    );
    verdicts
        .iter()
        .filter(|v| v.status == Status::Infeasible)
        .map(|v| v.id)
        .collect()
}

/// What every driver is: the fixture with a `pc_label` that records what it covers, and a
/// `main` that makes the driver's calls, then prints the ids of the labels covered.
const DRIVER_SHELL: &str = r#"HEADERS#include <stdio.h>
static int covered[64];
#define pc_label(c, id, tag) do { if (c) covered[id] = 1; } while (0)
#include FIXTURE
int main(void) {CALLS
    for (int id = 0; id < 64; id++)
        if (covered[id]) printf("%d\n", id);
    return 0;
}
"#;

/// A driver of a fixture, in the calls it makes; `headers` are what they need.
struct Driver {
    headers: &'static str,
    calls: &'static str,
}

/// The labels real runs cover: the fixture at `path`, with a `pc_label` that records what it
/// covers, compiled with `flags` under a `main` that makes `driver`'s calls, then run.
fn covered_by_driver(path: &Path, driver: &Driver, flags: &[&str]) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("driver.c");
    let text = DRIVER_SHELL
        .replace("HEADERS", driver.headers)
        .replace("CALLS", driver.calls);
    std::fs::write(&source, text).unwrap();
    let exe = dir.path().join("driver");
    let fixture = std::fs::canonicalize(path).unwrap();
    let status = std::process::Command::new("cc")
        .args(["-O0", "-w"])
        .args(flags)
        .arg(format!("-DFIXTURE=\"{}\"", fixture.display()))
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .arg("-lm")
        .status()
        .expect("cc runs");
    assert!(
        status.success(),
        "the driver of {} compiles",
        path.display()
    );
    let out = std::process::Command::new(&exe).output().expect("it runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// The labels a fixture expects left unknown.
fn expected_unknown(path: &Path) -> Vec<u64> {
    expectations(path)
        .into_iter()
        .filter(|(_, want)| *want == "unknown")
        .map(|(id, _)| id)
        .collect()
}

/// Runs the float fixture on special values (NaNs, infinities, signed zeros, huge and tiny
/// numbers), every `unsigned char` and, for sines and quotients, 400,000 random arguments
/// (and, for the series, 200,000 arguments from 0 to 200); prints the labels some run covers.
const FLOAT_DRIVER: Driver = Driver {
    headers: "#include <math.h>\n#include <string.h>\n",
    calls: r#"
    double xs[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 3.75, 1e17, -1e17,
                   1e300, 5e-324, 2147483648.5, 0.1};
    float fs[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, 1e30f, -2.5f, 0.1f, 16777216.0f,
                  1e-45f, 3.0f};
    int is[] = {0, 1, -1, 7, 2147483647, -2147483647 - 1};
    for (unsigned x = 0; x < sizeof xs / sizeof *xs; x++)
        for (unsigned f = 0; f < sizeof fs / sizeof *fs; f++) {
            for (unsigned i = 0; i < sizeof is / sizeof *is; i++) traps(xs[x], fs[f], is[i]);
            if (f < sizeof is / sizeof *is)
                for (unsigned y = 0; y < sizeof xs / sizeof *xs; y++) signs(xs[x], xs[y], is[f]);
            library(xs[x], fs[f]);
            if (f == 0)
                series(xs[x]);
            if (f == 0)
                for (unsigned y = 0; y < sizeof xs / sizeof *xs; y++) {
                    for (unsigned g = 0; g < sizeof fs / sizeof *fs; g++) periodic(xs[x], xs[y], fs[g]);
                    for (int n = 0; n < 6; n++) climb(xs[x], xs[y], n);
                }
            for (int c = 0; c < 256; c++) conversions(xs[x], fs[f], (unsigned char)c);
        }
    /* Sines and quotients of random bit patterns and of random numbers in [-10, 10]. */
    unsigned long long r = 88172645463325252ULL;
    for (int k = 0; k < 200000; k++) {
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        unsigned long long u = r, v = r * 2654435761ULL;
        unsigned w = (unsigned)(r >> 17);
        double a, b;
        float c;
        memcpy(&a, &u, sizeof a); memcpy(&b, &v, sizeof b); memcpy(&c, &w, sizeof c);
        periodic(a, b, c);
        periodic((double)(u % 2000001) / 100000.0 - 10.0, (double)(v % 2001) / 100.0 - 10.0,
                 (float)(w % 20001) / 1000.0f - 10.0f);
        climb((double)(u % 2000001) / 100000.0 - 10.0, (double)(v % 2001) / 100.0, 4);
        series((double)(u % 2000001) / 10000.0);
        /* Tables of counts: 0 or 1 mostly, a quarter large of either sign. */
        long f[4];
        for (int i = 0; i < 4; i++) {
            unsigned long long s = r >> (8 * i);
            f[i] = (s & 3) == 3 ? (long)(s >> 2) - (1L << 60) : (long)(s & 1);
        }
        counts(f, (int)(w % 5));
    }
    for (int n = 0; n < 4; n++)
        halves(n);
"#,
};

/// IEEE-754 floats: the fixture's expectations hold, no label proved infeasible is covered by
/// a real run, and every label expected feasible is covered by one (but for a conversion out
/// of range, undefined in C, marked `undefined`).
#[test]
fn float_labels_match_their_expectations_and_real_runs() {
    let path = Path::new("tests/fixtures/engine/floats.c");
    // Limits far above what the questions take here, so that a slow machine does not turn a
    // proof into a timeout: the resource limit scaled with the time limit, as `--timeout-s 30`
    // scales it (the function's budget and its shares are counted in those units).
    let config = PruneConfig {
        solver: covprune::smt::SolverConfig {
            timeout_ms: 30_000,
            rlimit: covprune::smt::rlimit_for(30_000),
            ..PruneConfig::default().solver
        },
        ..PruneConfig::default()
    };
    let proved = check_fixture_with(path, &config);
    let covered = covered_by_driver(path, &FLOAT_DRIVER, &["-fno-fast-math"]);
    for id in &proved {
        assert!(
            !covered.contains(id),
            "label {id} is proved infeasible, yet a run covers it"
        );
    }
    let text = std::fs::read_to_string(path).unwrap();
    for (id, want) in expectations(path) {
        let undefined = text
            .lines()
            .any(|l| l.contains(&format!(", {id}, \"T\")")) && l.contains("undefined"));
        if want == "unknown" && !undefined {
            assert!(
                covered.contains(&id),
                "label {id} is expected feasible, yet no run covers it"
            );
        }
    }
}

/// Runs the allocation fixture on counts of every sign and size.
const ALLOCATION_DRIVER: Driver = Driver {
    headers: "",
    calls: r#"
    int ns[] = {-2147483647 - 1, -1000, -1, 0, 1, 2, 7, 1500, 2147483647};
    long ls[] = {-9223372036854775807L - 1, -1, 0, 3, 200, 9223372036854775807L};
    for (unsigned i = 0; i < sizeof ns / sizeof *ns; i++)
        for (unsigned j = 0; j < sizeof ns / sizeof *ns; j++) table(ns[i], ns[j]);
    for (unsigned i = 0; i < sizeof ls / sizeof *ls; i++) grow(ls[i]);
"#,
};

/// Allocators: counts that make the size asked more than `PTRDIFF_MAX` bytes get a null, so the
/// labels past the null checks that need such counts are proved infeasible; real runs over
/// counts of every sign cover every other label and none of those.
#[test]
fn allocation_labels_match_their_expectations_and_real_runs() {
    let path = Path::new("tests/fixtures/engine/allocations.c");
    let proved = check_fixture(path);
    assert_eq!(proved, vec![1, 4, 6]);
    let covered = covered_by_driver(path, &ALLOCATION_DRIVER, &[]);
    assert_eq!(covered, expected_unknown(path));
}

/// Runs the `errno` fixture on tables of counts and values of every sign, NaN, and pointers
/// to `errno` itself.
const ERRNO_DRIVER: Driver = Driver {
    headers: "#include <errno.h>\n#include <math.h>\n",
    calls: r#"
    double xs[] = {-1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 1e300, NAN, INFINITY};
    long ls[] = {-3, 0, 1, 5, 1000000};
    for (unsigned a = 0; a < 5; a++)
        for (unsigned b = 0; b < 5; b++) {
            long f[2] = {ls[a], ls[b]};
            counts_after_log(f, 2);
        }
    for (unsigned i = 0; i < sizeof xs / sizeof *xs; i++) {
        double x = xs[i];
        for (unsigned k = 0; k < 5; k++) {
            long_after_log(&ls[k], x);
            double d = (double)ls[k];
            double_after_sqrt(&d, x);
        }
        int z = 0;
        int_after_log(&z, x);
        errno = 0;
        int_after_log(&errno, x);
        errno_after_sqrt(x);
        errno = 0;
        bytes_after_log((const unsigned char *)&errno, x);
    }
    errno_set_in_a_loop(5);
"#,
};

/// `errno` apart: the math functions write only `errno`, so a `long` or `double` read after
/// them keeps its value; an `int` or a byte that may be `errno` itself does not, and real runs
/// (given `&errno`) cover every label not proved.
#[test]
fn math_functions_write_only_errno() {
    let path = Path::new("tests/fixtures/engine/errno.c");
    let proved = check_fixture(path);
    assert_eq!(proved, vec![1, 2, 3]);
    let covered = covered_by_driver(path, &ERRNO_DRIVER, &["-fmath-errno"]);
    assert_eq!(covered, expected_unknown(path));
}

/// Runs the allocator fixture: values of both signs, every fill byte, sizes that fail.
const ALLOCATOR_DRIVER: Driver = Driver {
    headers: "#include <stdint.h>\n",
    calls: r#"
    long vs[] = {-5, 0, 7};
    for (unsigned i = 0; i < 3; i++) {
        churn(&vs[i], 3);
        release(&vs[i], malloc(sizeof(int)));
    }
    for (int k = 0; k < 256; k++) {
        reuse((unsigned char)k);
        again((unsigned char)k);
    }
    size_t sizes[] = {0, 16, SIZE_MAX / 4, SIZE_MAX};
    for (unsigned i = 0; i < 4; i++) {
        failed(sizes[i]);
        failed_through(&errno, sizes[i]);
    }
"#,
};

/// The allocator's state apart: `free`, and an allocation whose block no outside pointer
/// reaches, leave the rest of memory as it was; real runs cover every label not proved (a
/// block allocated again holds what the allocator left, a failed allocation sets `errno`).
#[test]
fn free_and_blocks_apart_leave_memory_alone() {
    let path = Path::new("tests/fixtures/engine/allocator.c");
    let proved = check_fixture(path);
    assert_eq!(proved, vec![1, 2]);
    let covered = covered_by_driver(path, &ALLOCATOR_DRIVER, &[]);
    assert_eq!(covered, expected_unknown(path));
}

/// The labels proved infeasible under `config` that the driver's real runs cover.
fn covered_but_proved(
    path: &Path,
    driver: &Driver,
    flags: &[&str],
    config: &PruneConfig,
) -> Vec<u64> {
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let covered = covered_by_driver(path, driver, flags);
    step1(&loaded.program, config)
        .iter()
        .filter(|v| v.status == Status::Infeasible && covered.contains(&v.id))
        .map(|v| v.id)
        .collect()
}

/// Planted faults in `errno` apart and in allocations apart, each caught by its fixture's
/// real runs: an `int` read back after a call that writes `errno` only that sees the memory
/// from before the call, and an allocation apart that leaves `errno` alone.
#[test]
fn the_errno_and_allocator_drivers_catch_their_planted_faults() {
    let mut config = PruneConfig::default();
    config.encode.plants.errno_never_read = true;
    let path = Path::new("tests/fixtures/engine/errno.c");
    let wrong = covered_but_proved(path, &ERRNO_DRIVER, &["-fmath-errno"], &config);
    assert!(
        !wrong.is_empty(),
        "errno read back never: no label of errno.c proved and covered"
    );
    let mut config = PruneConfig::default();
    config.encode.plants.allocation_keeps_errno = true;
    let path = Path::new("tests/fixtures/engine/allocator.c");
    let wrong = covered_but_proved(path, &ALLOCATOR_DRIVER, &[], &config);
    assert!(
        !wrong.is_empty(),
        "allocations keeping errno: no label of allocator.c proved and covered"
    );
    // Without the faults, no label proved is covered.
    for (path, driver, flags) in [
        (
            "tests/fixtures/engine/errno.c",
            &ERRNO_DRIVER,
            &["-fmath-errno"][..],
        ),
        (
            "tests/fixtures/engine/allocator.c",
            &ALLOCATOR_DRIVER,
            &[][..],
        ),
    ] {
        let wrong = covered_but_proved(Path::new(path), driver, flags, &PruneConfig::default());
        assert!(wrong.is_empty(), "{path}: {wrong:?} proved and covered");
    }
}

#[test]
fn fixture_labels_get_their_expected_verdicts() {
    check_fixture(Path::new("tests/fixtures/engine/statements.c"));
    check_fixture(Path::new("tests/fixtures/engine/contexts.c"));
    check_fixture(Path::new("tests/fixtures/engine/loops.c"));
    check_fixture(Path::new("tests/fixtures/engine/pointsto.c"));
    check_fixture(Path::new("tests/fixtures/engine/uninitialised.c"));
    check_fixture(Path::new("tests/fixtures/engine/never_entered.c"));
    check_fixture(Path::new("tests/fixtures/engine/statics.c"));
    check_fixture(Path::new("tests/fixtures/engine/memory_calls.c"));
}

/// Blocks `malloc` and `calloc` return that only the function's own pointers reach are in
/// memories of their own: a loop or an allocation writing one leaves the rest of memory alone;
/// a block whose address escapes (a global, unknown code) is in the shared memory.
#[test]
fn allocated_blocks_no_outside_pointer_reaches_have_memories_of_their_own() {
    check_fixture(Path::new("tests/fixtures/engine/heap_blocks.c"));
}

/// Loop facts about array cells: what a nest checks or stores in every cell it goes over
/// bounds the reads of those cells in later loops; a nest that skips cells, leaves early, or
/// whose cells another pointer may write, bounds nothing.
#[test]
fn a_nest_bounds_the_cells_it_went_over_for_later_loops() {
    check_fixture(Path::new("tests/fixtures/engine/cells.c"));
}

/// Calling contexts share one budget: a small copy inlined after one that spends it at its
/// questions' limits is asked first, and its context proves its label.
#[test]
fn a_small_copy_is_asked_before_one_that_spends_the_budget() {
    check_fixture(Path::new("tests/fixtures/engine/copy_budget.c"));
}

/// The whole-file facts on statics hold only while no code outside the file reaches them:
/// with the statics opened (a test that includes the file), the same labels stay unknown.
#[test]
fn opened_statics_get_no_whole_file_facts() {
    let path = Path::new("tests/fixtures/engine/statics.c");
    let mut program = frontend::load(path, &PreprocessOptions::default())
        .unwrap()
        .program;
    program.open_statics();
    let config = PruneConfig {
        open_statics: true,
        ..PruneConfig::default()
    };
    let verdicts = step1(&program, &config);
    assert_eq!(verdicts.len(), 8);
    assert!(
        verdicts.iter().all(|v| v.status != Status::Infeasible),
        "{verdicts:?}"
    );
}

/// The paper's figure 1 (`benchmarks/programs/triangle.c`), loaded.
fn triangle() -> frontend::Loaded {
    frontend::load(
        Path::new("benchmarks/programs/triangle.c"),
        &PreprocessOptions::default(),
    )
    .unwrap()
}

#[test]
fn the_papers_figure_1_has_exactly_l9_and_l10_infeasible() {
    let loaded = triangle();
    let verdicts = step1(&loaded.program, &PruneConfig::default());
    let infeasible: Vec<u64> = verdicts
        .iter()
        .filter(|v| v.status == Status::Infeasible)
        .map(|v| v.id)
        .collect();
    assert_eq!(infeasible, vec![9, 10]);
    assert_eq!(verdicts.len(), 14);
}

#[test]
fn results_do_not_depend_on_the_number_of_workers() {
    let path = Path::new("tests/fixtures/engine/statements.c");
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let one = step1(
        &loaded.program,
        &PruneConfig {
            jobs: 1,
            ..PruneConfig::default()
        },
    );
    let two = step1(
        &loaded.program,
        &PruneConfig {
            jobs: 2,
            ..PruneConfig::default()
        },
    );
    let statuses = |v: &[covprune::prune::LabelVerdict]| -> Vec<(u64, Status)> {
        v.iter().map(|x| (x.id, x.status.clone())).collect()
    };
    assert_eq!(statuses(&one), statuses(&two));
}

#[test]
fn step_2_is_spared_the_questions_that_step_1_models_answer_and_decides_the_same() {
    use std::collections::BTreeSet;
    let loaded = triangle();
    let run = |model_filter: bool| {
        let config = PruneConfig {
            steps: BTreeSet::from([1, 2, 3]),
            model_filter,
            ..PruneConfig::default()
        };
        let (verdicts, stats) = covprune::prune::run(&loaded.program, &config, &|_| {});
        let statuses: Vec<(u64, Status)> =
            verdicts.iter().map(|v| (v.id, v.status.clone())).collect();
        (statuses, stats.step2.queries)
    };
    let (with_models, asked_with) = run(true);
    let (without, asked_without) = run(false);
    assert_eq!(with_models, without);
    // Each of the figure's labels sits beside its negation or a sibling condition: a model of
    // one where another is false answers that one's step 2.
    assert!(
        asked_with < asked_without,
        "step 2 asked {asked_with} questions with models, {asked_without} without"
    );
}

#[test]
fn the_papers_figure_1_relations_are_found_and_no_false_one() {
    use std::collections::BTreeSet;
    let loaded = triangle();
    let config = PruneConfig {
        steps: BTreeSet::from([1, 2, 3]),
        ..PruneConfig::default()
    };
    let (verdicts, _) = covprune::prune::run(&loaded.program, &config, &|_| {});
    let status = |id: u64| verdicts.iter().find(|v| v.id == id).unwrap().status.clone();
    // l3 ⇔ l7, l4 ⇔ l8, l11 ⇔ l12, l13 ⇔ l14
    assert_eq!(status(7), Status::Duplicate { of: 3 });
    assert_eq!(status(8), Status::Duplicate { of: 4 });
    assert_eq!(status(12), Status::Duplicate { of: 11 });
    assert_eq!(status(14), Status::Duplicate { of: 13 });
    // l1 ⇒ l5, l6 ⇒ l2
    assert!(matches!(status(5), Status::Subsumed { by } if by.contains(&1)));
    assert!(matches!(status(2), Status::Subsumed { by } if by.contains(&6)));
    assert_eq!(status(9), Status::Infeasible);
    assert_eq!(status(10), Status::Infeasible);
    // Labels the paper keeps: l1, l6 (DC), l13 (WM) survive.
    for id in [1, 6, 13] {
        assert!(
            matches!(status(id), Status::Unknown { .. }),
            "label {id}: {:?}",
            status(id)
        );
    }
}

#[test]
fn co_reached_groups_follow_control_equivalence() {
    // Shaped after the paper's Figure 3: l2 in a branch; l3, l4, l1 straight-line around it;
    // l5, l6 after a call that may not return; l7 in a loop.
    let src = "#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\n\
        int may_exit(int);\n\
        int fig3(int x, int n) {\n\
          pc_label(x > 0, 3, \"T\");\n\
          if (x > 5) { pc_label(x > 6, 2, \"T\"); }\n\
          pc_label(x > 1, 4, \"T\");\n\
          pc_label(x > 2, 1, \"T\");\n\
          may_exit(x);\n\
          pc_label(x > 3, 5, \"T\");\n\
          if (x) { x++; } else { x--; }\n\
          pc_label(x > 4, 6, \"T\");\n\
          while (n-- > 0) { pc_label(n > 7, 7, \"T\"); }\n\
          return x;\n\
        }\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fig3.c");
    std::fs::write(&path, src).unwrap();
    let loaded = frontend::load(&path, &PreprocessOptions::default()).unwrap();
    let f = loaded.program.function("fig3").unwrap();
    let cg = covprune::cfg::callgraph::CallGraph::build(&loaded.program);
    let may_stop = |c: &covprune::ir::Callee| match c {
        covprune::ir::Callee::Direct(n) => cg.may_not_return(n),
        covprune::ir::Callee::Indirect(_) => true,
    };
    let groups: Vec<Vec<u64>> = covprune::prune::groups::co_reached(f, &may_stop)
        .into_iter()
        .map(|g| {
            let mut ids: Vec<u64> = g.into_iter().map(|p| p.id).collect();
            ids.sort();
            ids
        })
        .collect();
    assert_eq!(groups, vec![vec![1, 3, 4], vec![2], vec![5, 6], vec![7]]);
}

/// A static function with one call site is analysed in its caller's context: its entry labels
/// join the group of the call (`x > 20` at the call subsumes `v > 10` in the callee, `v = 2x`);
/// a function called twice keeps its labels to itself.
#[test]
fn called_once_functions_are_related_in_their_callers_context() {
    use std::collections::BTreeSet;
    let loaded = frontend::load(
        Path::new("tests/fixtures/engine/called_once.c"),
        &PreprocessOptions::default(),
    )
    .unwrap();
    let config = PruneConfig {
        steps: BTreeSet::from([1, 2, 3]),
        ..PruneConfig::default()
    };
    let (verdicts, _) = covprune::prune::run(&loaded.program, &config, &|_| {});
    let status = |id: u64| verdicts.iter().find(|v| v.id == id).unwrap().status.clone();
    assert!(matches!(status(101), Status::Subsumed { by } if by == vec![1]));
    assert!(matches!(status(102), Status::Subsumed { by } if by.contains(&1)));
    // x > 40 (label 201, in `twice`) would follow from nothing: it is called twice.
    assert!(matches!(status(201), Status::Unknown { .. }));
    assert!(matches!(status(1), Status::Unknown { .. }));
    // Without steps 2 and 3, nothing is related.
    let only1 = step1(&loaded.program, &PruneConfig::default());
    assert!(only1
        .iter()
        .all(|v| !matches!(v.status, Status::Subsumed { .. })));
}

/// A label proved infeasible in one calling context and found satisfiable only where the
/// encoding does not know the state (after a loop) is no partner: nothing witnesses that it
/// can be covered, and pruning what it implies could leave that label with nothing to cover.
/// A partner witnessed in another context (a choice of the entry's arguments that covers it)
/// still prunes.
#[test]
fn partners_proved_infeasible_somewhere_need_a_witness() {
    let path = Path::new("tests/fixtures/engine/witness.c");
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let config = PruneConfig {
        steps: [1, 2, 3].into_iter().collect(),
        ..PruneConfig::default()
    };
    let (verdicts, _) = covprune::prune::run(&loaded.program, &config, &|_| {});
    let status = |id: u64| {
        verdicts
            .iter()
            .find(|v| v.id == id)
            .map(|v| v.status.clone())
            .unwrap()
    };
    // Label 2 really is infeasible; label 1 is covered (a = 1) and must stay to be covered.
    assert!(
        !matches!(status(1), Status::Subsumed { .. }),
        "label 1: {:?}",
        status(1)
    );
    assert_eq!(status(6), Status::Subsumed { by: vec![5] });
}

/// With witnessed subsumers asked for, a subsumer nothing shows feasible (in the fixture, one
/// that depends on an opaque call) prunes nothing; subsumers witnessed in the function's own
/// encoding or in a calling context still prune. Without the option, the unwitnessed one
/// prunes too (the default trades that risk for recall).
#[test]
fn witnessed_subsumers_leave_no_label_with_an_unshown_subsumer() {
    let path = Path::new("tests/fixtures/engine/witnessed_subsumers.c");
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let statuses = |witnessed_subsumers: bool| {
        let config = PruneConfig {
            steps: [1, 2, 3].into_iter().collect(),
            witnessed_subsumers,
            ..PruneConfig::default()
        };
        let (verdicts, _) = covprune::prune::run(&loaded.program, &config, &|_| {});
        verdicts
            .into_iter()
            .map(|v| (v.id, v.status))
            .collect::<BTreeMap<u64, Status>>()
    };
    let strict = statuses(true);
    assert!(
        !matches!(strict[&2], Status::Subsumed { .. }),
        "label 2: {:?}",
        strict[&2]
    );
    assert_eq!(strict[&4], Status::Subsumed { by: vec![3] });
    assert_eq!(strict[&7], Status::Subsumed { by: vec![8] });
    assert_eq!(strict[&12], Status::Subsumed { by: vec![11] });
    assert!(
        !matches!(strict[&14], Status::Subsumed { .. }),
        "label 14: {:?}",
        strict[&14]
    );
    let default = statuses(false);
    assert_eq!(default[&12], Status::Subsumed { by: vec![11] });
    assert_eq!(default[&14], Status::Subsumed { by: vec![13] });
    assert_eq!(default[&2], Status::Subsumed { by: vec![1] });
    assert_eq!(default[&4], Status::Subsumed { by: vec![3] });
    assert_eq!(default[&7], Status::Subsumed { by: vec![8] });
}

/// Implications over whole runs between labels of a function called from several sites: a
/// label covered at one call implies another covered at a later call when every run that
/// covers the first makes that call (`h` in the fixture); not when the call is conditional
/// (`g`), nor when another entry calls the function too (`k`).
#[test]
fn labels_of_a_function_called_twice_are_related_over_whole_runs() {
    let path = Path::new("tests/fixtures/engine/run_level.c");
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let config = PruneConfig {
        steps: [1, 2, 3].into_iter().collect(),
        ..PruneConfig::default()
    };
    let (verdicts, _) = covprune::prune::run(&loaded.program, &config, &|_| {});
    let status: BTreeMap<u64, Status> = verdicts.into_iter().map(|v| (v.id, v.status)).collect();
    assert_eq!(status[&2], Status::Subsumed { by: vec![1] });
    for id in [1, 3, 4, 5, 6] {
        assert!(
            matches!(status[&id], Status::Unknown { .. }),
            "label {id}: {:?}",
            status[&id]
        );
    }
}

/// A function's own labels left satisfiable by its own encoding, where a call too big to
/// inline returns anything, are asked again in the encoding made for its callee's calling
/// contexts, which inlines the callee: there the label is false (`g` returns 0 or 1).
#[test]
fn own_labels_are_asked_again_with_more_calls_inlined() {
    let path = Path::new("tests/fixtures/engine/recheck_inlined.c");
    let loaded = frontend::load(path, &PreprocessOptions::default()).unwrap();
    let config = PruneConfig {
        steps: [1].into_iter().collect(),
        ..PruneConfig::default()
    };
    let (verdicts, _) = covprune::prune::run(&loaded.program, &config, &|_| {});
    let status: BTreeMap<u64, Status> = verdicts.into_iter().map(|v| (v.id, v.status)).collect();
    assert_eq!(status[&2], Status::Infeasible);
    for id in [1, 3] {
        assert!(
            matches!(status[&id], Status::Unknown { .. }),
            "label {id}: {:?}",
            status[&id]
        );
    }
    // Without calling contexts, the callee stays opaque in the only encoding of `f`.
    let no_contexts = PruneConfig {
        contexts: false,
        ..config
    };
    let (verdicts, _) = covprune::prune::run(&loaded.program, &no_contexts, &|_| {});
    let label2 = verdicts.iter().find(|v| v.id == 2).unwrap();
    assert!(
        matches!(label2.status, Status::Unknown { .. }),
        "{label2:?}"
    );
}
