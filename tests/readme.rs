//! The README is a map: short, the code map it points to names every source file, its results table is the
//! summary of `artifacts/RESULTS.md`, and the product's text carries no work log.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn the_readme_is_short_and_its_table_rows_are_short() {
    let text = readme();
    let lines = text.lines().count();
    assert!(lines <= 400, "README.md has {lines} lines (at most 400)");
    for (i, l) in text.lines().enumerate() {
        if l.starts_with('|') {
            assert!(
                l.chars().count() <= 300,
                "README.md line {}: a table row of {} characters (at most 300)",
                i + 1,
                l.chars().count()
            );
        }
    }
}

#[test]
fn the_code_map_names_every_source_file() {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut files = Vec::new();
    files_under(&root().join("src"), &mut files);
    files_under(&root().join("encoders/src"), &mut files);
    assert!(files.len() > 100, "only {} source files", files.len());
    let mut missing: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .filter(|p| !text.contains(&format!("`{p}`")))
        .collect();
    missing.sort();
    assert!(
        missing.is_empty(),
        "docs/architecture.md's code map leaves out {missing:?}"
    );
}

/// The lines between the summary marks of a markdown text.
fn summary(text: &str, what: &str) -> Vec<String> {
    const BEGIN: &str = "<!-- results summary: begin -->";
    const END: &str = "<!-- results summary: end -->";
    let lines: Vec<&str> = text.lines().collect();
    let b = lines
        .iter()
        .position(|l| l.trim() == BEGIN)
        .unwrap_or_else(|| panic!("{what} has no `{BEGIN}` line"));
    let e = lines
        .iter()
        .position(|l| l.trim() == END)
        .unwrap_or_else(|| panic!("{what} has no `{END}` line"));
    assert!(b < e, "{what}: the summary's marks are out of order");
    lines[b + 1..e].iter().map(|l| l.to_string()).collect()
}

#[test]
fn the_readme_results_table_is_the_results_summary() {
    let results = std::fs::read_to_string(root().join("artifacts/RESULTS.md")).unwrap();
    let theirs = summary(&results, "artifacts/RESULTS.md");
    assert!(theirs.len() > 2, "RESULTS.md's summary has no rows");
    assert_eq!(
        summary(&readme(), "README.md"),
        theirs,
        "README.md's results table differs from artifacts/RESULTS.md's summary: copy it"
    );
}

/// "issue" followed by a space and a digit: a work-log reference.
fn issue_references(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let word = "issue ";
    lower
        .match_indices(word)
        .filter(|(at, _)| {
            lower[at + word.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .map(|(at, _)| text[at..(at + 20).min(text.len())].to_string())
        .collect()
}

#[test]
fn product_text_names_no_issue_numbers() {
    let mut files = vec![root().join("README.md")];
    for dir in ["docs", "src", "tests", "encoders/src", "benchmarks/src"] {
        files_under(&root().join(dir), &mut files);
    }
    let mut found = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for r in issue_references(&text) {
            found.push(format!(
                "{}: {r}",
                f.strip_prefix(root()).unwrap().display()
            ));
        }
    }
    assert!(found.is_empty(), "issue numbers in product text: {found:?}");
    assert_eq!(issue_references(&format!("see Issue {} here", 12)).len(), 1);
}

/// The README's worked example, run as written from a copy of the clone's root holding the
/// shipped `benchmarks/examples/` (`covprune` on the `PATH`): each `$ ` line's standard output
/// is the lines the README shows under it, where `...` stands for any lines.
#[test]
fn the_worked_example_prints_what_the_readme_shows() {
    let text = readme();
    let start = text
        .find("```text\n$ covprune annotate")
        .expect("the worked example");
    let block = &text[start + "```text\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let examples = dir.path().join("benchmarks/examples");
    std::fs::create_dir_all(&examples).unwrap();
    for f in ["clamp.c", "clamp.tests"] {
        std::fs::copy(root().join("benchmarks/examples").join(f), examples.join(f)).unwrap();
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_covprune"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut commands: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(c) => commands.push((c, Vec::new())),
            None => commands.last_mut().expect("a command first").1.push(line),
        }
    }
    assert!(commands.len() >= 3, "{block}");
    for (command, shown) in commands {
        let o = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let printed = String::from_utf8(o.stdout).unwrap();
        let mut got = printed.lines();
        let mut skipping = false;
        for want in shown {
            if want == "..." {
                skipping = true;
                continue;
            }
            loop {
                let Some(line) = got.next() else {
                    panic!("{command}: the README shows `{want}`, not printed:\n{printed}")
                };
                if line == want {
                    break;
                }
                assert!(
                    skipping,
                    "{command}: printed `{line}` where the README shows `{want}`:\n{printed}"
                );
            }
            skipping = false;
        }
        assert!(
            skipping || got.next().is_none(),
            "{command}: prints more than the README shows:\n{printed}"
        );
    }
}
