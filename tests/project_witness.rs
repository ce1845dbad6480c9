//! `covprune project witness` end to end: a file whose function calls into another file of the
//! project is witnessed with the other file's code linked in (alone, its runner has an
//! undefined reference), its tests are checked on their own and keep what they claim, and
//! the settled share adds up; the user's tree is left as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::covprune;

const GROW: &str = "/* Calls into another file. */\n\
int twice(int x);\n\
\n\
int grow(int x)\n\
{\n\
    int y = twice(x);\n\
    if (y > 10 && x < 100)\n\
        return y;\n\
    return 0;\n\
}\n";

const TWICE: &str = "int twice(int x)\n\
{\n\
    if (x > 1000)\n\
        return 0;\n\
    return 2 * x;\n\
}\n";

const TEST: &str = "int grow(int x);\nint main(void) { return grow(1); }\n";

fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walk(dir) {
        out.insert(e.clone(), std::fs::read(&e).unwrap());
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_file_calling_another_is_witnessed_with_the_projects_code() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("proj");
    std::fs::create_dir_all(src.join("src")).unwrap();
    std::fs::write(src.join("src/grow.c"), GROW).unwrap();
    std::fs::write(src.join("src/twice.c"), TWICE).unwrap();
    std::fs::write(src.join("test.c"), TEST).unwrap();
    // No condition, no label: nothing to witness, and no error.
    std::fs::write(src.join("src/one.c"), "int one(void) { return 1; }\n").unwrap();
    common::write_database(&src, &["src/grow.c", "src/one.c", "src/twice.c"], &|f| {
        format!("cc -c -O2 {f} -o {f}.o")
    });
    let out = dir.path().join("out");
    covprune()
        .arg("project")
        .arg("-p")
        .arg(&src)
        .args([
            "--criteria",
            "CC,MCC",
            "--jobs",
            "1",
            "--no-cache",
            "--json",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    covprune()
        .args(["project", "measure", "--json", "-o"])
        .arg(&out)
        .args([
            "--test-cmd",
            "cc -o t test.c src/grow.c src/twice.c && ./t; true",
        ])
        .assert()
        .success();
    let before = tree(&src);

    // Alone, the runner of grow.c cannot link: `twice` is another file's.
    let alone = dir.path().join("alone");
    covprune()
        .arg("witness")
        .arg(out.join("src/grow_labels.c"))
        .arg("-o")
        .arg(&alone)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("twice"));

    let o = covprune()
        .args(["project", "witness", "--jobs", "1", "--json", "-o"])
        .arg(&out)
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!(report["objects"], 3, "{report}");
    let grow = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "src/grow.c")
        .unwrap()
        .clone();
    assert!(grow.get("error").is_none(), "{grow}");
    // `x < 100` false with `y > 10` needs twice's real code: 2x for 100 <= x <= 1000.
    assert!(grow["shown_feasible"].as_u64().unwrap() >= 3, "{grow}");
    let tests = grow["tests"].as_array().unwrap();
    assert!(!tests.is_empty());
    assert_eq!(grow["tests_checked"], tests.len() as u64, "{grow}");
    assert!(grow.get("tests_broken").is_none(), "{grow}");
    for t in tests {
        let path = out.join("witnesses/src/grow").join(t.as_str().unwrap());
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("grow_labels.c"));
    }
    // The ledger names the tests; the settled share adds up, over what the suite left.
    let ledger: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("src/grow_labels.covprune.json")).unwrap(),
    )
    .unwrap();
    let witnessed = ledger["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l.get("witness").is_some())
        .count() as u64;
    let all = report["settled"].as_array().unwrap().last().unwrap();
    assert_eq!(all["criterion"], "all");
    assert!(all["shown_feasible"].as_u64().unwrap() >= witnessed);
    assert_eq!(
        all["uncovered"].as_u64().unwrap(),
        all["infeasible"].as_u64().unwrap()
            + all["shown_feasible"].as_u64().unwrap()
            + all["neither"].as_u64().unwrap()
    );
    assert!(all["settled_percent"].as_f64().unwrap() > 50.0, "{all}");
    let one = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "src/one.c")
        .unwrap()
        .clone();
    assert!(one.get("error").is_none(), "{one}");
    assert_eq!(one["grey_zone"], 0);
    // A plain database gets no build snippet; the user's tree is as it was.
    assert!(report["snippets"].as_array().unwrap().is_empty());
    assert_eq!(tree(&src), before);
}

#[test]
fn project_witness_refuses_a_folder_project_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    covprune()
        .args(["project", "witness", "-o"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("covprune project"));
}
