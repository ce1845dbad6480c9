//! The harness over programs with memory, alone, with static tables, and with their outside
//! code (in the same file or another one).

use super::*;

/// The harness over programs with memory (globals, arrays with computed indices, a struct, a
/// pointer that aliases a global or an element on some inputs, `memset`/`memcpy`):
/// `COVPRUNE_SOUNDNESS_MEMORY` programs (default 40).
#[test]
fn exhaustive_runs_check_the_claims_on_memory_programs() {
    // A floor below the observed recall (89.8% at 40 programs), so that a regression is noticed.
    run_harness(
        "memory programs",
        env_u64("COVPRUNE_SOUNDNESS_MEMORY", 40),
        "mem",
        |seed| generate_full(seed, true, true, false),
        0.75,
    );
}

/// The memory programs with the code behind their external calls written into them: the same
/// functions as the driver's (`ext_keep` keeps a pointer, `ext_poke` writes through one,
/// `ext_touch` writes through the kept one), static, and `f` forgets the kept pointer first as
/// the driver does before each input. So every run is a run of the open program under the
/// driver's first behaviour of outside code ([`DRIVER`]), and the engine sees the code it must
/// otherwise take to write any global or escaped object.
pub(super) fn with_their_externals(g: Generated) -> Generated {
    let (text, n, placed) = g;
    let declared =
        "void ext_keep(int *q);\nvoid ext_poke(int *q, int v);\nvoid ext_touch(int v);\n";
    let defined = "static int *ext_kept;\n\
                   static void ext_keep(int *q) { ext_kept = q; }\n\
                   static void ext_poke(int *q, int v) { *q = v; }\n\
                   static void ext_touch(int v) { if (ext_kept) *ext_kept = v; }\n";
    let entry = "int f(unsigned char a, signed char b)\n{\n";
    assert!(text.contains(declared) && text.contains(entry));
    let text = text.replacen(declared, defined, 1).replacen(
        entry,
        &format!("{entry}    ext_kept = 0;\n"),
        1,
    );
    (text, n, placed)
}

/// The memory programs with two statics whose every store is a constant: a table with an
/// initialiser, written by `f` on some inputs, and a mode, set by `f` to one of two values,
/// and four more labels reading them (ids after the generator's). Their values at any entry of
/// `f` are the initialiser's and the stores' (the engine's whole-file facts on statics); the
/// runs, every input after another in one process, see every value they can take.
fn with_static_tables(seed: u64, g: Generated) -> Generated {
    let (text, n, placed) = g;
    let mut r = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = |m: u64| {
        r = r
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((r >> 33) % m) as i64
    };
    let t: Vec<i64> = (0..4).map(|_| next(9) - 4).collect();
    let (m0, m1, m2) = (next(5), next(5), next(5));
    let (c1, t1, t2) = (next(9) - 4, next(200), next(200) - 100);
    let decl = format!(
        "static int tab[4] = {{{}, {}, {}, {}}};\nstatic int mode = {m0};\n",
        t[0], t[1], t[2], t[3]
    );
    let entry = "int f(unsigned char a, signed char b)\n{\n";
    let stores = format!(
        "    if (a > {t1}) tab[b & 3] = {c1};\n    if (b < {t2}) mode = {m1}; else if (a & 8) mode = {m2};\n"
    );
    let labels = format!(
        "    pc_label(tab[a & 3] < {}, {}, \"T\");\n    pc_label(tab[(a ^ b) & 3] == {}, {}, \"T\");\n    \
         pc_label(mode == {}, {}, \"T\");\n    pc_label(mode > {}, {}, \"T\");\n",
        next(9) - 4,
        n + 1,
        next(9) - 4,
        n + 2,
        next(5),
        n + 3,
        next(5),
        n + 4
    );
    let ret = "    return x + y + z;\n}";
    assert!(text.contains(entry) && text.contains(ret) && text.contains("static int g1;\n"));
    let text = text
        .replacen("static int g1;\n", &format!("static int g1;\n{decl}"), 1)
        .replacen(entry, &format!("{entry}{stores}"), 1)
        .replacen(ret, &format!("{labels}{ret}"), 1);
    (text, n + 4, placed)
}

/// The memory harness with static tables ([`with_static_tables`]):
/// `COVPRUNE_SOUNDNESS_MEMORY` programs (default 40).
#[test]
fn exhaustive_runs_check_the_claims_on_memory_programs_with_static_tables() {
    run_harness(
        "memory programs with static tables",
        env_u64("COVPRUNE_SOUNDNESS_MEMORY", 40),
        "mems",
        |seed| with_static_tables(seed, generate_full(seed, true, true, false)),
        0.3,
    );
}

/// The memory harness on the same programs with their external code written in
/// ([`with_their_externals`]): `COVPRUNE_SOUNDNESS_MEMORY` programs (default 40).
#[test]
fn exhaustive_runs_check_the_claims_on_memory_programs_with_their_externals() {
    run_harness(
        "memory programs with their external code",
        env_u64("COVPRUNE_SOUNDNESS_MEMORY", 40),
        "memx",
        |seed| with_their_externals(generate_full(seed, true, true, false)),
        0.3,
    );
}

/// The memory harness on the open programs, their external functions in another file of
/// their project (`EXT_C`, with a `static` they cannot name) encoded in place of their calls,
/// as `project --inline-across-files` does: `COVPRUNE_SOUNDNESS_MEMORY` programs (default 40).
#[test]
fn exhaustive_runs_check_the_claims_on_memory_programs_with_their_externals_in_another_file() {
    let first_seed = env_u64("COVPRUNE_SOUNDNESS_SEED", 1);
    let n_programs = env_u64("COVPRUNE_SOUNDNESS_MEMORY", 40);
    let dir = harness_dir();
    let ext = dir.path().join("ext.c");
    std::fs::write(&ext, EXT_C).unwrap();
    let mut tally = Tally::default();
    for seed in first_seed..first_seed + n_programs {
        let (text, n_labels, placed) = generate_full(seed, true, true, false);
        let path = dir.path().join(format!("memf{seed}.c"));
        std::fs::write(&path, &text).unwrap();
        check_program(
            dir.path(),
            seed,
            &path,
            Some(&ext),
            n_labels as usize,
            &harness_config(),
            &placed,
            &mut tally,
        );
    }
    tally.report(
        "memory programs with their external code in another file",
        n_programs,
    );
    assert!(
        tally.false_claims.is_empty(),
        "{}",
        tally.false_claims.join("\n---\n")
    );
    assert!(
        tally.recall() >= 0.3,
        "recall fell to {:.1}%",
        100.0 * tally.recall()
    );
}
