//! Front-end tests: every C fixture under `tests/fixtures/frontend/` is lowered and its IR, CFG
//! facts and diagnostics are compared with a snapshot; plus checks against the real compiler.

use std::path::Path;
use std::process::Command;

use covprune::cfg::{callgraph::CallGraph, Cfg};
use covprune::frontend::{self, PreprocessOptions};
use covprune::ir::{display, CType, DiagnosticKind, Program};

fn load(path: &Path) -> frontend::Loaded {
    frontend::load(path, &PreprocessOptions::default())
        .unwrap_or_else(|e| panic!("{} failed to load: {e}", path.display()))
}

/// Everything about a fixture that a snapshot should pin: the IR of the functions defined in
/// the fixture itself (not in system headers), their back edges and the diagnostics there.
fn dump(path: &Path) -> String {
    let loaded = load(path);
    let program = &loaded.program;
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let in_fixture = |p: &Program, file| p.file_name(file).ends_with(&name);
    let cg = CallGraph::build(program);
    let mut out = String::new();
    for f in &program.functions {
        if !in_fixture(program, f.loc.file) {
            continue;
        }
        out.push_str(&display::function_to_string(program, f));
        let cfg = Cfg::build(f, &|n| cg.may_not_return(n));
        let back: Vec<String> = cfg
            .back_edges()
            .iter()
            .map(|(a, b)| format!("bb{}->bb{}", a.0, b.0))
            .collect();
        out.push_str(&format!("  back edges: [{}]\n", back.join(", ")));
        out.push_str(&format!(
            "  calls may stop: {}\n\n",
            cg.may_not_return(&f.name)
        ));
    }
    for s in &program.skipped {
        out.push_str(&format!("skipped {}: {}\n", s.name, s.reason));
    }
    let mut diags: Vec<String> = program
        .diagnostics
        .iter()
        .filter(|d| in_fixture(program, d.loc.file))
        .map(|d| {
            let kind = match d.kind {
                DiagnosticKind::Fallback(k) => k.name().to_string(),
                other => format!("{other:?}"),
            };
            format!("line {}: {kind}: {}", d.loc.line, d.message)
        })
        .collect();
    diags.sort();
    for d in diags {
        out.push_str(&format!("diagnostic {d}\n"));
    }
    out
}

#[test]
fn fixtures_lower_to_the_expected_ir() {
    insta::glob!("fixtures/frontend/*.c", |path| {
        insta::assert_snapshot!(dump(path));
    });
}

#[test]
fn nineties_c_lowers_with_no_function_skipped() {
    let loaded = load(Path::new("tests/fixtures/frontend/kr_1990s.c"));
    let p = &loaded.program;
    assert!(p.skipped.is_empty(), "skipped: {:?}", p.skipped);
    for name in ["skip", "add", "scale", "main"] {
        assert!(p.function(name).is_some(), "{name} was not lowered");
    }
    // K&R parameter types come from the declarations before the body.
    let skip = p.function("skip").unwrap();
    assert_eq!(
        skip.local(skip.params[0]).ty,
        CType::ptr_to(CType::Int(covprune::ir::IntKind::Char))
    );
    let scale = p.function("scale").unwrap();
    assert_eq!(
        scale.local(scale.params[1]).ty,
        CType::Int(covprune::ir::IntKind::Short)
    );
    // Implicit int return types.
    assert_eq!(p.function("add").unwrap().ty.ret, CType::INT);
}

#[test]
fn program_functions_that_always_exit_never_return() {
    let loaded = load(Path::new("tests/fixtures/frontend/noreturn.c"));
    let cg = CallGraph::build(&loaded.program);
    assert!(cg.never_returns.contains("die"));
    assert!(!cg.never_returns.contains("checked"));
    assert!(cg.may_not_return("checked"));
    assert_eq!(cg.call_sites("die"), 1);
    assert!(cg.called_once_internally("die"));
    assert!(!cg.called_once_internally("checked"));
}

#[test]
fn address_taken_functions_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("fp.c");
    std::fs::write(
        &src,
        "static int inc(int x) { return x + 1; }\n\
         static int dec(int x) { return x - 1; }\n\
         int (*table[])(int) = { inc };\n\
         int apply(int v) { int (*f)(int) = dec; return f(v) + table[0](v) + inc(v); }\n",
    )
    .unwrap();
    let loaded = load(&src);
    let cg = CallGraph::build(&loaded.program);
    assert!(cg.node("inc").unwrap().address_taken);
    assert!(cg.node("dec").unwrap().address_taken);
    assert!(!cg.node("apply").unwrap().address_taken);
    assert!(
        !cg.called_once_internally("inc"),
        "address-taken functions have unknown callers"
    );
}

/// Struct layouts must match the compiler's: sizeof of each fixture record, printed by a
/// program compiled with `cc`, equals ours.
#[test]
fn record_layouts_match_the_c_compiler() {
    let fixture = Path::new("tests/fixtures/frontend/structs.c");
    let loaded = load(fixture);
    let p = &loaded.program;
    let layout = p.layout();
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe.c");
    let mut code = format!(
        "#include \"{}\"\n#include <stdio.h>\n#include <stddef.h>\nint main(void) {{\n",
        std::fs::canonicalize(fixture).unwrap().display()
    );
    let mut expected = String::new();
    for r in &p.records {
        let Some(tag) = &r.tag else { continue };
        if !["point", "flags", "u", "outer"].contains(&tag.as_str()) {
            continue;
        }
        let kw = if r.is_union { "union" } else { "struct" };
        code.push_str(&format!(
            "  printf(\"{tag} %zu\\n\", sizeof({kw} {tag}));\n"
        ));
        expected.push_str(&format!("{tag} {}\n", r.size));
        for f in &r.fields {
            if f.name.is_empty() || f.bits.is_some() {
                continue;
            }
            code.push_str(&format!(
                "  printf(\"{tag}.{n} %zu\\n\", offsetof({kw} {tag}, {n}));\n",
                n = f.name
            ));
            expected.push_str(&format!("{tag}.{} {}\n", f.name, f.offset));
        }
    }
    code.push_str("  return 0;\n}\n");
    std::fs::write(&probe, code).unwrap();
    let exe = dir.path().join("probe");
    let status = Command::new("cc")
        .args(["-w", "-o"])
        .arg(&exe)
        .arg(&probe)
        .status()
        .unwrap();
    assert!(status.success());
    let out = Command::new(&exe).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    assert!(layout
        .size_of(&CType::Record(covprune::ir::RecordId(0)))
        .is_some());
}

#[test]
fn parse_counts_are_consistent_on_a_realistic_header_mix() {
    // stdio/stdlib/string bring hundreds of declarations: nothing may be skipped.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("libc_user.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <ctype.h>\n\
         #include <stdarg.h>\n#include <setjmp.h>\n#include <signal.h>\n#include <errno.h>\n\
         int main(int argc, char **argv) { return argc > 1 ? atoi(argv[1]) : (int)strlen(argv[0]); }\n",
    )
    .unwrap();
    let loaded = load(&src);
    assert!(
        loaded.program.skipped.is_empty(),
        "{:?}",
        loaded.program.skipped
    );
    assert!(loaded.program.function("main").is_some());
}

/// Lowering never panics, whatever the input: every prefix of the fixtures (cut at many
/// points, mid-token included) goes through the front end with an answer or an error.
#[test]
fn truncated_inputs_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir("tests/fixtures/frontend").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "c") {
            continue;
        }
        let text = std::fs::read(&path).unwrap();
        for cut in (0..text.len()).step_by(23) {
            let p = dir.path().join(format!("cut{n}.i"));
            std::fs::write(&p, &text[..cut]).unwrap();
            let _ = frontend::load(&p, &PreprocessOptions::default());
            n += 1;
        }
    }
    assert!(n > 100);
}
