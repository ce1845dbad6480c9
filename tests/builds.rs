//! `project measure` on the builds C projects have, run for real: a CMake project built out of
//! tree whose unit tests `#include` the library's source (ctest), a Meson project (meson
//! test), and gzip 1.12 (autotools, `make check`, test by test). Each is pruned by `project`, then measured
//! with its own commands: real coverage, no alarm, and the user's source and build
//! directories byte for byte as they were. A static function whose only in-file call passes a
//! constant is refuted by a test that calls it with another value unless its statics are
//! open; a build that never compiles the annotated files is an error that writes nothing.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;
use common::{copy_tree, covprune, json_and_code, run_ok as run, write_database};

/// Every file under `dir` (symbolic links as their targets' names), with its content's hash
/// and its modification time.
fn hashes(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let kind = e.file_type().unwrap();
            let path = e.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    path,
                    (
                        target.display().to_string().into_bytes(),
                        meta.modified().unwrap(),
                    ),
                );
            } else {
                let digest = Sha256::digest(std::fs::read(&path).unwrap()).to_vec();
                out.insert(path, (digest, meta.modified().unwrap()));
            }
        }
    }
    out
}

/// `project` with `--json` over the database in `build`.
fn project(build: &Path, out: &Path, criteria: &str, extra: &[&str]) -> Value {
    let o = covprune()
        .arg("project")
        .arg("-p")
        .arg(build)
        .args(["--criteria", criteria, "--no-cache", "--json", "-o"])
        .arg(out)
        .args(extra)
        .assert()
        .success();
    serde_json::from_slice(&o.get_output().stdout).unwrap()
}

/// `project measure` with `--json` and these commands; the report and the exit code.
fn measure(out: &Path, commands: &[&str]) -> (Value, i32) {
    let mut cmd = covprune();
    cmd.args(["project", "measure", "--json", "-o"]).arg(out);
    for c in commands {
        cmd.args(["--test-cmd", c]);
    }
    json_and_code(&cmd.output().unwrap())
}

/// The total's all-criteria row.
fn total(report: &Value) -> Value {
    report["total"].as_array().unwrap().last().unwrap().clone()
}

/// The names of the runs a `project measure` report lists, in order.
fn run_names(report: &Value) -> Vec<&str> {
    report["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

fn alarms(report: &Value) -> usize {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["alarms"].as_array().unwrap().len())
        .sum()
}

/// The CMake fixture copied into `dir/ranges`, configured out of tree in `ranges/build` and
/// built there, as a user leaves it.
fn cmake_project(dir: &Path) -> (PathBuf, PathBuf) {
    let src = dir.join("ranges");
    copy_tree(Path::new("tests/fixtures/builds/cmake"), &src);
    let build = src.join("build");
    run(common::tool("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build));
    run(common::tool("cmake").arg("--build").arg(&build));
    (src, build)
}

const CMAKE_TESTS: [&str; 2] = ["cmake --build . -j2", "ctest --output-on-failure"];

#[test]
fn a_cmake_build_out_of_tree_is_configured_again_and_its_tests_run_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let (src, build) = cmake_project(dir.path());
    let out = dir.path().join("out");
    let report = project(&build, &out, "CC,MCC,GACC,WM", &[]);
    // The unit tests include the library's source: its statics are opened.
    let lib = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "src/ranges.c")
        .unwrap();
    assert_eq!(lib["statics_open"], true);
    assert_eq!(lib["included_by"][0], "tests/test_statics.c");
    let before = hashes(&src);
    let (m, code) = measure(&out, &CMAKE_TESTS);
    assert_eq!(code, 0, "{m:#}");
    assert_eq!(m["layout"], "CMake");
    // The build, then each test ctest lists, apart.
    let names = run_names(&m);
    assert_eq!(
        names,
        [
            "cmd1",
            "cmd2:public",
            "cmd2:statics_clamp",
            "cmd2:statics_scale"
        ]
    );
    assert!(m["files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["built"] == true));
    assert!(total(&m)["covered"].as_u64().unwrap() > 0, "{m:#}");
    assert_eq!(alarms(&m), 0);
    assert_eq!(m["wrote"].as_array().unwrap().len(), 3);
    assert!(m["touched"].as_array().unwrap().is_empty());
    // The user's sources and build directory, byte for byte and time for time.
    assert_eq!(hashes(&src), before);
    // The summary for a pull request: the total rows, each uncovered objective at its line.
    let summary = dir.path().join("summary.md");
    let mut cmd = covprune();
    cmd.args(["project", "measure", "-o"]).arg(&out);
    for c in CMAKE_TESTS {
        cmd.args(["--test-cmd", c]);
    }
    cmd.arg("--markdown").arg(&summary).assert().success();
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.starts_with("### covprune project measure "), "{text}");
    assert!(text.contains("| **all** |"), "{text}");
    assert!(text.contains("ranges.c#L"), "{text}");
    assert!(text.contains("Soundness alarms: none."), "{text}");
}

#[test]
fn a_static_function_called_by_a_test_refutes_a_claim_unless_its_statics_are_open() {
    let dir = tempfile::tempdir().unwrap();
    let (_, build) = cmake_project(dir.path());
    // `scale`'s only call in its file passes k = 1: with closed statics, `k > 2` is
    // infeasible there, and the test that calls scale(5, 3) covers it.
    let closed = dir.path().join("closed");
    project(&build, &closed, "CC", &["--open-statics", "none"]);
    let labels_before = std::fs::read_to_string(closed.join("src/ranges_labels.labels")).unwrap();
    let (m, code) = measure(&closed, &CMAKE_TESTS);
    assert_eq!(code, 3, "{m:#}");
    let lib = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "src/ranges.c")
        .unwrap()
        .clone();
    assert_eq!(lib["alarms"].as_array().unwrap().len(), 1, "{lib:#}");
    assert!(lib["alarms"][0]["what"]
        .as_str()
        .unwrap()
        .contains("statics_scale"));
    assert_eq!(
        std::fs::read_to_string(closed.join("src/ranges_labels.labels")).unwrap(),
        labels_before
    );
    // Detected (the default), or asked for: no claim rests on the file's own calls.
    for (name, extra) in [("auto", &[][..]), ("all", &["--open-statics", "all"][..])] {
        let out = dir.path().join(name);
        project(&build, &out, "CC", extra);
        let (m, code) = measure(&out, &CMAKE_TESTS);
        assert_eq!(code, 0, "{name}: {m:#}");
        assert_eq!(alarms(&m), 0, "{name}");
    }
}

#[test]
fn a_build_that_never_compiles_the_annotated_files_is_an_error_that_writes_nothing() {
    // A plain makefile that names its sources by absolute path: the copy builds the
    // originals, and no program it runs was built from an annotated file.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("abs");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("sign.c"),
        "int sign(int x) { if (x > 0) return 1; if (x < 0) return -1; return 0; }\n\
         int main(int argc, char **argv) { (void)argv; return sign(argc) == 1 ? 0 : 1; }\n",
    )
    .unwrap();
    let abs = src.canonicalize().unwrap();
    std::fs::write(
        src.join("Makefile"),
        format!(
            "check:\n\tcc -o /tmp/covprune-abs-$$$$ {}/sign.c && /tmp/covprune-abs-$$$$; s=$$?; rm -f /tmp/covprune-abs-$$$$; exit $$s\n",
            abs.display()
        ),
    )
    .unwrap();
    write_database(&abs, &["sign.c"], &|f| format!("cc -c {f}"));
    let out = dir.path().join("out");
    project(&src, &out, "CC", &[]);
    let labels = out.join("sign_labels.labels");
    let before = std::fs::read_to_string(&labels).unwrap();
    let (m, code) = measure(&out, &["make check"]);
    assert_eq!(code, 2, "{m:#}");
    assert_eq!(m["commands"][0]["outcome"]["exited"], 0);
    assert_eq!(m["files"][0]["built"], false);
    assert!(m["wrote"].as_array().unwrap().is_empty());
    assert_eq!(std::fs::read_to_string(&labels).unwrap(), before);
}

#[test]
fn a_meson_build_is_configured_again_and_meson_test_runs_each_test() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("signs");
    copy_tree(Path::new("tests/fixtures/builds/meson"), &src);
    let build = src.join("build");
    run(common::tool("meson").arg("setup").arg(&build).arg(&src));
    run(common::tool("ninja").arg("-C").arg(&build));
    let out = dir.path().join("out");
    project(&build, &out, "CC,MCC", &[]);
    let before = hashes(&src);
    let (m, code) = measure(&out, &["ninja", "meson test"]);
    assert_eq!(code, 0, "{m:#}");
    assert_eq!(m["layout"], "Meson");
    let names = run_names(&m);
    assert_eq!(
        names,
        ["cmd1", "cmd2:negative", "cmd2:positive", "cmd2:zero"]
    );
    // sign() sees -3, 4 and 0 (and -1, 1, 0): every outcome of its two decisions.
    let lib = &m["files"][0];
    assert_eq!(lib["file"], "src/signs.c");
    let cc = lib["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["criterion"] == "CC")
        .unwrap();
    assert!(cc["covered"].as_u64().unwrap() >= 4, "{cc:#}");
    assert_eq!(alarms(&m), 0);
    assert_eq!(hashes(&src), before);
}

/// gzip 1.12's source tree, configured and built in place (as `benchmarks/fetch-test-suites.sh`
/// leaves it), fetched once into the target directory.
fn gzip_tree() -> PathBuf {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("suites");
    let done = cache.join(".complete");
    if !done.is_file() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/fetch-test-suites.sh");
        let _ = writeln!(
            std::io::stderr(),
            "fetching gzip 1.12's tree into {} (a few minutes, once)",
            cache.display()
        );
        let status = Command::new("bash").arg(&script).arg(&cache).status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "could not fetch the test suites: run `{} {}` (needs apt-get, tar, xz, gcc, make)",
            script.display(),
            cache.display()
        );
        std::fs::write(&done, "").unwrap();
    }
    cache.join("gzip")
}

#[test]
fn gzip_configured_in_place_is_configured_again_in_the_copy_and_make_check_covers_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("gzip");
    // `cp -a`: the user's tree as it is, timestamps and all.
    run(Command::new("cp").arg("-a").arg(gzip_tree()).arg(&src));
    let abs = src.canonicalize().unwrap();
    // The database a user writes for the files under test (gzip's own flags).
    let files = ["unpack.c", "unlzw.c", "bits.c"];
    write_database(&abs, &files, &|f| {
        format!("gcc -DHAVE_CONFIG_H -I. -Ilib -g -O2 -c {f}")
    });
    let out = dir.path().join("out");
    project(
        &src,
        &out,
        "CC",
        &["--timeout-s", "0.5", "--function-budget-s", "20"],
    );
    let before = hashes(&src);
    let (m, code) = measure(&out, &["make -j2 check"]);
    assert_eq!(code, 0, "{m:#}");
    assert_eq!(m["layout"], "autotools");
    // The build, then each test of automake's harness alone.
    let names = run_names(&m);
    assert_eq!(names[0], "cmd1:build");
    assert!(names.contains(&"cmd1:tests/help-version"), "{names:?}");
    assert!(names.len() > 20, "{names:?}");
    let t = total(&m);
    assert!(t["covered"].as_u64().unwrap() > 0, "{m:#}");
    assert!(m["files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["built"] == true));
    assert_eq!(alarms(&m), 0);
    let _ = writeln!(
        std::io::stderr(),
        "gzip ({}): labels {}, covered {}, pruned {}, alarms 0",
        files.join(", "),
        t["labels"],
        t["covered"],
        t["pruned"]
    );
    assert_eq!(hashes(&src), before);
}
