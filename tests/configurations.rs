//! Annotation of code as real projects write it: `#if` configurations, `-Werror` builds, and
//! conditions whose later operands the program skips. The annotated program must be the
//! original program in every configuration, and labels must not do what the program does not.

use std::path::Path;
use std::process::Command;

use assert_cmd::Command as Cmd;

use covprune::frontend::preprocess::PreprocessOptions;
use covprune_encoders::{Criterion, Limits};

/// Writes the recording runtime `measure` builds with into `dir`: its header, which makes
/// each label evaluate its condition and record it, and its source, to link.
fn runtime(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (header, source) = (
        dir.join("covprune_runtime.h"),
        dir.join("covprune_runtime.c"),
    );
    std::fs::write(&header, covprune::measure::runtime::HEADER).unwrap();
    std::fs::write(&source, covprune::measure::runtime::SOURCE).unwrap();
    (header, source)
}

fn annotate_cli(file: &Path, criteria: &str, out: &Path, extra: &[&str]) -> String {
    let o = Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("annotate")
        .arg(file)
        .args(["--criteria", criteria])
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "annotate failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Builds `src` into `exe` with `cc` and `flags` (`-w` first); fails with the compiler's words.
fn build(src: &Path, exe: &Path, flags: &[&std::ffi::OsStr]) {
    let o = Command::new("cc")
        .arg("-w")
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(src)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} does not build: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// What `src` prints, built in `dir` with `flags` (warnings as given, none silenced) and the
/// recording runtime (see [`runtime`]); fails with the compiler's words.
fn built_output(src: &Path, flags: &[&str], dir: &Path) -> Vec<u8> {
    let exe = dir.join("built");
    let (header, runtime) = runtime(dir);
    let o = Command::new("cc")
        .args(flags)
        .arg("-include")
        .arg(header)
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .arg(runtime)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{flags:?} {}: {said}", src.display());
    Command::new(&exe).output().unwrap().stdout
}

/// Every criterion, built with `-Wall -Wextra -Werror`: mutants compare as LAnnotate's do
/// (`u < 0` for an unsigned `u`), which `-Wextra` warns about inside a label only, and the
/// runtime silences there.
fn criteria_and_flags() -> [(String, &'static [&'static str]); 1] {
    let all: Vec<&str> = Criterion::ALL.iter().map(|c| c.name()).collect();
    [(all.join(","), &["-Wall", "-Wextra", "-Werror"])]
}

/// Every criterion's labels of the fixture, built with UBSan (no recovery) and labels that
/// evaluate their conditions, run on inputs where each condition's later operand would
/// overflow, shift out of range, negate `INT_MIN` or leave its array: the annotated program
/// runs as cleanly as the original and prints what it prints.
#[test]
fn labels_never_evaluate_an_operation_the_program_skips() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new("tests/fixtures/configurations/skipped_operands.c");
    let (header, runtime) = runtime(dir.path());
    let ubsan = [
        "-fsanitize=undefined",
        "-fno-sanitize-recover=all",
        "-include",
    ]
    .map(std::ffi::OsStr::new);
    let flags = [&ubsan[..], &[header.as_os_str(), runtime.as_os_str()]].concat();
    let build = |src: &Path, exe: &Path| build(src, exe, &flags);
    let inputs = [["5", "-2147483647"], ["-2147483648", "5000"], ["7", "2"]];
    let original = dir.path().join("original");
    build(fixture, &original);
    let run = |exe: &Path, args: &[&str]| {
        let o = Command::new(exe).args(args).output().unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let loaded = covprune::frontend::load(fixture, &PreprocessOptions::default()).unwrap();
    let source = std::fs::read(fixture).unwrap();
    for c in Criterion::ALL {
        let a =
            covprune::annotate::annotate(&source, Some(&loaded.program), &[*c], &Limits::default());
        let src = dir.path().join(format!("skipped_{}.c", c.name()));
        std::fs::write(&src, &a.text).unwrap();
        let exe = dir.path().join(format!("skipped_{}", c.name()));
        build(&src, &exe);
        for args in &inputs {
            let want = run(&original, args);
            assert!(want.0, "the original runs cleanly on {args:?}: {}", want.2);
            let got = run(&exe, args);
            assert!(
                got.0,
                "{}'s labels do what the program skips on {args:?}:\n{}",
                c.name(),
                got.2
            );
            assert_eq!(want.1, got.1, "{} on {args:?}", c.name());
        }
    }
}

/// Decisions and functions in `#if` branches the configuration drops get no labels: none is
/// written, declared or counted; `annotate`, `prune` and `audit` list them apart with their
/// lines; the annotated file builds with `-Wall -Wextra -Werror` where the original does.
#[test]
fn labels_in_code_the_configuration_compiles_out_are_not_objectives() {
    let dir = tempfile::tempdir().unwrap();
    let prog = "#include <stdio.h>\nint f(int a, int b)\n{\n    int r = 0;\n#ifdef EXTRA\n    if (a > 0 && (b = a - 1) > 2)\n        r = b;\n#else\n    if (a < 3)\n        r++;\n#endif\n    return r + a + b;\n}\n#if 0\nint g(int x) { return x > 2 ? 1 : 0; }\n#endif\nint main(void)\n{\n    printf(\"%d\\n\", f(3, 4));\n    return 0;\n}\n";
    let orig = dir.path().join("w.c");
    std::fs::write(&orig, prog).unwrap();
    let out = dir.path().join("out");
    let text = annotate_cli(&orig, "CC,MCC", &out, &[]);
    assert!(
        text.contains(
            "w.c: 12 labels in code this configuration compiles out, not objectives (lines 6, 15)"
        ),
        "{text}"
    );
    let annotated = out.join("w_labels.c");
    let labels = std::fs::read_to_string(out.join("w_labels.labels")).unwrap();
    let rows: Vec<&str> = labels.lines().filter(|l| l.contains("CC")).collect();
    assert_eq!(
        rows.len(),
        4,
        "only the active decision's labels:\n{labels}"
    );
    let body = std::fs::read_to_string(&annotated).unwrap();
    assert!(
        !body.contains("__cp_t"),
        "no temporary for a dropped decision:\n{body}"
    );
    assert!(
        !body.contains("x > 2, "),
        "no label in a dropped function:\n{body}"
    );
    let o = Command::new("cc")
        .args(["-Wall", "-Wextra", "-Werror", "-o"])
        .arg(dir.path().join("w"))
        .arg(&annotated)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = Cmd::cargo_bin("covprune")
        .unwrap()
        .args([
            "annotate",
            "--json",
            "--force",
            "--criteria",
            "CC,MCC",
            "-o",
        ])
        .arg(&out)
        .arg(&orig)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let listed: usize = v["compiled_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["labels"].as_u64().unwrap() as usize)
        .sum();
    assert_eq!(listed, 12, "{v}");
    for command in ["prune", "audit"] {
        let o = Cmd::cargo_bin("covprune")
            .unwrap()
            .arg(command)
            .arg(&annotated)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            said.contains("12 labels in code this configuration compiles out"),
            "{command}: {said}"
        );
    }
    // In the other configuration, the other decision is the one labelled.
    let text = annotate_cli(&orig, "CC,MCC", &dir.path().join("extra"), &["-D", "EXTRA"]);
    assert!(text.contains("(lines 9, 15)"), "{text}");
}

/// A branch whose statement follows an `#endif` (`else` inside `#ifdef`, its statement after
/// it) keeps its statement whole in every configuration: the labels before that statement
/// are in its block, so `else` still takes all of it. Built and run with and without the
/// macro, the annotated program prints what the original prints.
#[test]
fn labels_after_a_directive_keep_a_branch_whole_in_every_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let prog = "#include <stdio.h>\n\
        static const char *tls_fmt, *global_fmt, *std_format = \"std\";\n\
        const char *pick(void)\n{\n        const char *format;\n\
        #ifdef HAVE_TLS\n        if (tls_fmt)\n                format = tls_fmt;\n        else\n#endif\n\
        \x20               if (global_fmt)\n                        format = global_fmt;\n                else\n                        format = std_format;\n\
        \x20       return format;\n}\n\
        int main(void)\n{\n        tls_fmt = \"tls\";\n        global_fmt = \"global\";\n        puts(pick());\n        global_fmt = 0;\n        puts(pick());\n        tls_fmt = 0;\n        puts(pick());\n        return 0;\n}\n";
    let orig = dir.path().join("fmt.c");
    std::fs::write(&orig, prog).unwrap();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("annotate")
        .arg(&orig)
        .args(["--criteria", "CC,MCC,WM"])
        .arg("-o")
        .arg(dir.path())
        .assert()
        .success();
    let annotated = dir.path().join("fmt_labels.c");
    for defines in [&[][..], &["-DHAVE_TLS"][..]] {
        let run = |src: &Path, name: &str| {
            let exe = dir.path().join(name);
            let flags: Vec<&std::ffi::OsStr> = defines.iter().map(std::ffi::OsStr::new).collect();
            build(src, &exe, &flags);
            Command::new(&exe).output().unwrap().stdout
        };
        let want = run(&orig, "orig");
        assert_eq!(want, run(&annotated, "annotated"), "with {defines:?}");
    }
    // A branch in `#else` whose `#if` group holds the branch of the other configuration
    // (zlib's `inflateInit2_`), a statement after a whole `#ifdef` group that is the branch in
    // the configuration dropping the group, and an `else` before `#endif` whose statement
    // follows a comment (SQLite's `multiSelect`).
    let prog = "#include <stdio.h>\n\
        static int free_set(int *z)\n{\n    if (*z == 0)\n#ifdef SOLO\n        return -2;\n#else\n        *z = 7;\n#endif\n    return *z > 3 ? 1 : 0;\n}\n\
        static int after(int c, int *n)\n{\n    if (c > 1)\n#ifdef SOLO\n        *n += 10;\n#endif\n        *n += 1;\n    return *n;\n}\n\
        static int commented(int c)\n{\n    int r = 0;\n    if (c > 0)\n        r = 1;\n#ifndef SOLO\n    else\n#endif\n\n    /* SQLite's multiSelect: a comment between */\n    if (c < -5)\n        r = 2;\n    return r;\n}\n\
        int main(void)\n{\n    int z = 0, w = 5, n = 0;\n    printf(\"%d %d %d %d %d\\n\", free_set(&z), z, free_set(&w), after(0, &n), after(2, &n));\n    printf(\"%d %d %d\\n\", commented(3), commented(-9), commented(0));\n    return 0;\n}\n";
    let orig = dir.path().join("solo.c");
    std::fs::write(&orig, prog).unwrap();
    for defines in [&[][..], &["-DSOLO"][..]] {
        let out = dir.path().join(format!("solo{}", defines.len()));
        Cmd::cargo_bin("covprune")
            .unwrap()
            .arg("annotate")
            .arg(&orig)
            .args(["--criteria", "CC,MCC,STMT,PCT,WM"])
            .args(defines.iter().flat_map(|d| ["-D", &d[2..]]))
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        let annotated = out.join("solo_labels.c");
        for configuration in [&[][..], &["-DSOLO"][..]] {
            let run = |src: &Path, name: &str| {
                let exe = dir.path().join(name);
                let flags: Vec<&std::ffi::OsStr> =
                    configuration.iter().map(std::ffi::OsStr::new).collect();
                build(src, &exe, &flags);
                Command::new(&exe).output().unwrap().stdout
            };
            assert_eq!(
                run(&orig, "solo_orig"),
                run(&annotated, "solo_annotated"),
                "annotated with {defines:?}, built with {configuration:?}"
            );
        }
    }
}

/// Temporaries of decisions in an `#if` branch (annotated in the configuration that keeps it)
/// are declared unused: built in the configuration that drops the branch, a `-Wall -Werror`
/// build still compiles.
#[test]
fn temporaries_of_dropped_branches_do_not_break_a_werror_build() {
    let dir = tempfile::tempdir().unwrap();
    let prog = "int f(int a, int b)\n{\n    int r = 0;\n#ifdef EXTRA\n    if (a > 0 && (b = a - 1) > 2)\n        r = b;\n#endif\n    return r + a + b;\n}\n";
    let orig = dir.path().join("w.c");
    std::fs::write(&orig, prog).unwrap();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("annotate")
        .arg(&orig)
        .args(["--criteria", "CC,MCC", "-D", "EXTRA"])
        .arg("-o")
        .arg(dir.path())
        .assert()
        .success();
    let annotated = dir.path().join("w_labels.c");
    let text = std::fs::read_to_string(&annotated).unwrap();
    assert!(
        text.contains("__cp_t"),
        "the decision has temporaries:\n{text}"
    );
    for defines in [&[][..], &["-DEXTRA"][..]] {
        let out = Command::new("cc")
            .args(["-Wall", "-Wextra", "-Werror", "-c", "-o"])
            .arg(dir.path().join("w.o"))
            .args(defines)
            .arg(&annotated)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "with {defines:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// GNU C as real code writes it: a foreach macro's statement expression with an `if` in a
/// loop condition and a local with a trailing `__attribute__((__unused__))` is parsed and
/// analysed; a function the front end does not lower (a nested function) is named by
/// `annotate` and by `prune` with its line in the original file, and what encloses it is
/// analysed without a claim its runs contradict.
#[test]
fn gnu_forms_are_analysed_and_a_skipped_function_is_named_at_its_original_line() {
    let dir = tempfile::tempdir().unwrap();
    let foreach = Path::new("tests/fixtures/configurations/foreach.c");
    let parsed = Cmd::cargo_bin("covprune")
        .unwrap()
        .args(["parse", "--json"])
        .arg(foreach)
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&parsed.stdout).unwrap();
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(0), "{v}");
    let said = annotate_cli(foreach, "CC", &dir.path().join("f"), &[]);
    assert!(said.contains("foreach.c: 4 labels"), "{said}");
    let pruned = Cmd::cargo_bin("covprune")
        .unwrap()
        .args(["prune", "--no-progress"])
        .arg(dir.path().join("f/foreach_labels.c"))
        .output()
        .unwrap();
    assert!(pruned.status.success());
    let err = String::from_utf8_lossy(&pruned.stderr);
    assert!(!err.contains("not analysed"), "{err}");

    // A nested function: the enclosing function is analysed (its contradiction is proved),
    // the nested one is named with its line, and no claim is contradicted by runs where the
    // nested function, called directly and through a pointer, writes the locals it names.
    let nested = dir.path().join("nested.c");
    std::fs::copy("tests/fixtures/configurations/nested.c", &nested).unwrap();
    let said = annotate_cli(&nested, "CC,MCC", &dir.path().join("n"), &[]);
    assert!(
        said.contains("nested.c:18:5: outer.bump: nested in `outer`, its calls are unknown code: not analysed"),
        "{said}"
    );
    let annotated = dir.path().join("n/nested_labels.c");
    let pruned = Cmd::cargo_bin("covprune")
        .unwrap()
        .args(["prune", "--no-progress", "--json"])
        .arg(&annotated)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&pruned.stderr);
    assert!(pruned.status.success(), "{err}");
    assert!(
        err.contains(&format!("(in the original, {}:18)", nested.display())),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&pruned.stdout).unwrap();
    assert!(report["infeasible"].as_u64() > Some(0), "{report}");
    assert_eq!(
        report["skipped_functions"][0]["name"], "outer.bump",
        "{report}"
    );
    let tests = dir.path().join("nested.tests");
    std::fs::write(&tests, "0\n1\n2\n3\n6\n").unwrap();
    let measured = Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("measure")
        .arg(&annotated)
        .arg("--tests")
        .arg(&tests)
        .output()
        .unwrap();
    assert!(
        measured.status.success(),
        "{}{}",
        String::from_utf8_lossy(&measured.stdout),
        String::from_utf8_lossy(&measured.stderr)
    );

    // Casts to a `typeof` of an expression are lowered as the casts they are.
    let casts = Path::new("tests/fixtures/configurations/typeof_casts.c");
    let ir = Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("ir")
        .arg(casts)
        .output()
        .unwrap();
    let ir = String::from_utf8_lossy(&ir.stdout);
    assert!(
        ir.contains("fn sum_fits") && ir.contains("fn differs"),
        "{ir}"
    );
    assert!(!ir.contains("fresh<unsupported_expr>"), "{ir}");
    assert!(
        ir.contains("(int)((unsigned long long)a.0 * (unsigned long long)b.1) != (a.0 - b.1)"),
        "{ir}"
    );
}

/// A statement after a macro's arguments in a block is that macro's loop body: every
/// criterion's annotated program, its labels evaluating their conditions, prints what the
/// original prints (labels and hoisted evaluations before such a statement go in a block).
#[test]
fn a_statement_after_a_macro_loop_head_stays_its_body() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new("tests/fixtures/configurations/macro_loops.c");
    let (header, runtime) = runtime(dir.path());
    let run = |src: &Path, name: &str| -> String {
        let exe = dir.path().join(name);
        build(
            src,
            &exe,
            &[
                std::ffi::OsStr::new("-include"),
                header.as_os_str(),
                runtime.as_os_str(),
            ],
        );
        let r = Command::new(&exe).output().unwrap();
        assert!(r.status.success(), "{name} crashed");
        String::from_utf8(r.stdout).unwrap()
    };
    let want = run(fixture, "original");
    let loaded = covprune::frontend::load(fixture, &PreprocessOptions::default()).unwrap();
    let source = std::fs::read(fixture).unwrap();
    for c in Criterion::ALL {
        let a =
            covprune::annotate::annotate(&source, Some(&loaded.program), &[*c], &Limits::default());
        let src = dir.path().join(format!("loops_{}.c", c.name()));
        std::fs::write(&src, &a.text).unwrap();
        assert_eq!(
            run(&src, &format!("loops_{}", c.name())),
            want,
            "{}",
            c.name()
        );
    }
}

/// Old C (an implicit `int`, a K&R definition) makes the front end read a rewritten copy of
/// the file. A compiled-out group that looks like a K&R head (`MapView(HANDLE, ULONG,\n
/// ULONG);` followed by declarations) is not rewritten, and what is compiled out stays
/// compiled out in the copy: no label reads the dropped group's names, and the annotated
/// file builds with `-Werror` for every criterion (see [`criteria_and_flags`]) and prints what
/// the original prints.
#[test]
fn old_c_beside_a_compiled_out_group_keeps_the_group_unlabelled() {
    let dir = tempfile::tempdir().unwrap();
    let orig = dir.path().join("old_c.c");
    std::fs::copy("tests/fixtures/configurations/old_c.c", &orig).unwrap();
    for (n, (criteria, flags)) in criteria_and_flags().iter().enumerate() {
        let out = dir.path().join(format!("out{n}"));
        let said = annotate_cli(&orig, criteria, &out, &[]);
        assert!(said.contains("compiles out"), "{said}");
        let annotated = out.join("old_c_labels.c");
        let text = std::fs::read_to_string(&annotated).unwrap();
        assert_eq!(
            text.matches("win_mode").count(),
            2,
            "only the original's two mentions of a name the configuration drops:\n{text}"
        );
        let mut flags = flags.to_vec();
        flags.push("-Wno-implicit-int");
        assert_eq!(
            built_output(&orig, &flags, dir.path()),
            built_output(&annotated, &flags, dir.path()),
            "{criteria}"
        );
    }
}

/// Names whose meaning depends on the place: a macro the file defines twice (its value reads
/// a local declared after the function's first statement), a macro a function defines in its
/// body, and a typedef cast of a dereference (`(i64)*(int*)&y`, which reads like a product).
/// Predicate-complete coverage evaluates no such name at every statement, and mutation does
/// not multiply by a type: the annotated file builds with `-Werror` for every criterion (see
/// [`criteria_and_flags`]), in both configurations, and prints what the original prints.
#[test]
fn names_that_depend_on_their_place_are_not_read_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let orig = dir.path().join("placed_names.c");
    std::fs::copy("tests/fixtures/configurations/placed_names.c", &orig).unwrap();
    let groups = criteria_and_flags();
    for ((criteria, flags), defines) in groups
        .iter()
        .flat_map(|g| [(g, &[][..]), (g, &["-DFAST", "-DDIRECT"][..])])
    {
        let out = dir.path().join("out");
        let _ = std::fs::remove_dir_all(&out);
        annotate_cli(&orig, criteria, &out, defines);
        let annotated = out.join("placed_names_labels.c");
        let text = std::fs::read_to_string(&annotated).unwrap();
        assert!(
            text.contains("\"PCT\"") || text.contains("\"WM AOR\""),
            "{text}"
        );
        let flags = [*flags, defines].concat();
        assert_eq!(
            built_output(&orig, &flags, dir.path()),
            built_output(&annotated, &flags, dir.path()),
            "{criteria} {defines:?}"
        );
    }
}

/// Mutants over every kind of operand: unsigned counters (`c < 0` is always false), a size
/// beside a signed constant, a bool, a narrow unsigned, and pointers compared with `NULL`,
/// whose ordered mutants need compatible types, and with `0`, which no constant replaces. The
/// runtime turns off, for the annotated file, the warnings a label's condition can draw; each
/// ordered mutant of `p == NULL` compares addresses: the annotated file builds with `-Wall
/// -Wextra -Werror` for every criterion, and prints what the original prints.
#[test]
fn mutants_of_every_operand_type_build_warning_free() {
    let dir = tempfile::tempdir().unwrap();
    let orig = dir.path().join("mutants.c");
    std::fs::copy("tests/fixtures/configurations/mutants.c", &orig).unwrap();
    for (criteria, flags) in criteria_and_flags() {
        let out = dir.path().join("out");
        annotate_cli(&orig, &criteria, &out, &[]);
        let annotated = out.join("mutants_labels.c");
        let text = std::fs::read_to_string(&annotated).unwrap();
        assert!(text.contains("(const volatile char *)(n)"), "{text}");
        assert_eq!(
            built_output(&orig, flags, dir.path()),
            built_output(&annotated, flags, dir.path()),
            "{criteria}"
        );
    }
}
