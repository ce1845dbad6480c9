//! `covprune audit` on the shipped example: JSON and DOT snapshots, the HTML page in headless
//! Chromium, and SARIF validated against the SARIF 2.1.0 JSON schema.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::covprune;

/// tritype.c annotated with CC, MCC and WM, then audited (which prunes first, as no ledger
/// exists): the annotated file.
fn audited(dir: &Path, extra: &[&str]) -> (PathBuf, Vec<u8>) {
    let file = common::annotate_cc_mcc_wm("benchmarks/programs/tritype.c", dir);
    let out = covprune()
        .arg("audit")
        .arg(&file)
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    (file, out)
}

/// The annotated tritype measured on its tests: what `measure` prints.
fn measured(file: &Path, extra: &[&str]) -> Vec<u8> {
    covprune()
        .arg("measure")
        .arg(file)
        .args(["--tests", "benchmarks/programs/tritype.tests"])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

#[test]
fn json_and_dot_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let dot = dir.path().join("graph.dot");
    let (_, out) = audited(dir.path(), &["--json", "--dot", dot.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["criteria_order"], serde_json::json!(["CC", "MCC", "WM"]));
    insta::assert_snapshot!(
        "tritype_audit_json",
        serde_json::to_string_pretty(&v).unwrap()
    );
    insta::assert_snapshot!("tritype_audit_dot", std::fs::read_to_string(&dot).unwrap());
}

#[test]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let dir = tempfile::tempdir().unwrap();
    let sarif_path = dir.path().join("findings.sarif");
    audited(dir.path(), &["--sarif", sarif_path.to_str().unwrap()]);
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).unwrap()).unwrap();
    // The schema ships with the serde-sarif crate: find it through cargo's metadata.
    let meta = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1"])
        .output()
        .unwrap();
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).unwrap();
    let manifest = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("serde-sarif is a dev-dependency");
    let schema_path = Path::new(manifest)
        .parent()
        .unwrap()
        .join("src/schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // And it reads back as the typed SARIF model.
    let typed: serde_sarif::sarif::Sarif = serde_json::from_value(sarif.clone()).unwrap();
    assert_eq!(typed.runs.len(), 1);
    // Findings: equivalent mutants (infeasible WM labels), with relative paths and fingerprints.
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert!(r["ruleId"].as_str().unwrap().starts_with("covprune/"));
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "tritype.c"
        );
        assert!(r["partialFingerprints"]["covpruneLabel/v1"].is_string());
    }
    // One fingerprint per result.
    let prints: std::collections::BTreeSet<&str> = results
        .iter()
        .map(|r| {
            r["partialFingerprints"]["covpruneLabel/v1"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(prints.len(), results.len());
    // The root is the original's directory, as a file URI ending in `/`.
    let root = sarif["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"]
        .as_str()
        .unwrap();
    let programs = std::fs::canonicalize("benchmarks/programs").unwrap();
    assert_eq!(root, format!("file://{}/", programs.display()));
}

#[test]
fn sarif_uris_are_encoded_where_paths_have_spaces() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("my src");
    std::fs::create_dir(&src).unwrap();
    std::fs::copy("benchmarks/programs/tritype.c", src.join("tri type.c")).unwrap();
    let out = dir.path().join("out dir");
    covprune()
        .arg("annotate")
        .arg(src.join("tri type.c"))
        .args(["--criteria", "WM", "-o"])
        .arg(&out)
        .assert()
        .success();
    let sarif_path = out.join("f.sarif");
    covprune()
        .arg("audit")
        .arg(out.join("tri type_labels.c"))
        .arg("--sarif")
        .arg(&sarif_path)
        .assert()
        .success();
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).unwrap()).unwrap();
    let root = sarif["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        root.starts_with("file:///") && root.ends_with("/my%20src/"),
        "{root}"
    );
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "tri%20type.c"
        );
    }
}

/// Headless Chromium, as root in a sandboxless container, with no network chatter.
fn chromium() -> Option<Command> {
    let exe = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let mut c = Command::new(exe);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]);
    Some(c)
}

#[test]
fn the_html_report_renders_in_headless_chromium() {
    // A browser test that passes without a browser proves nothing: it fails, unless the
    // user says to skip it.
    if chromium().is_none() {
        assert!(
            std::env::var_os("COVPRUNE_NO_BROWSER").is_some(),
            "chromium is not installed (Debian package `chromium`; .ci/run installs it): install it, or set COVPRUNE_NO_BROWSER=1 to skip this test"
        );
        let _ = writeln!(std::io::stderr(), "skipped: COVPRUNE_NO_BROWSER is set");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    // Pruned and measured first, so that the page shows coverage.
    let file = common::pruned_cc_mcc_wm("benchmarks/programs/tritype.c", dir.path());
    measured(&file, &[]);
    let again = dir.path().join("again.html");
    for out in [&html, &again] {
        covprune()
            .arg("audit")
            .arg(&file)
            .arg("--html")
            .arg(out)
            .assert()
            .success();
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page,
        std::fs::read_to_string(&again).unwrap(),
        "two runs write the same page"
    );
    assert!(
        !page.contains("</span>\n<span class=\"lab"),
        "label lines follow each other without blank lines"
    );
    let url = format!("file://{}", html.display());
    let profile = dir.path().join("profile");
    let dom = chromium()
        .unwrap()
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("static int classify(int a, int b, int c)"),
        "the source is shown"
    );
    assert!(
        dom.contains("infeasible") && dom.contains("subsumed by"),
        "statuses are shown"
    );
    assert!(dom.contains("<svg"), "the graph is drawn");
    assert!(
        dom.contains("<table id=\"coverage\">") && dom.contains("cleaned"),
        "the page holds the coverage table"
    );
    assert!(
        dom.contains("marker-end=\"url(#") && dom.contains("endarrow\""),
        "edges end in arrowheads"
    );
    assert!(
        !dom.contains("context-stroke"),
        "arrowheads are filled with a colour every browser draws"
    );
    assert!(
        dom.split("<tspan").skip(1).any(|t| t.contains("): ")),
        "nodes show their predicates after their names"
    );
    assert!(dom.contains("covered by"), "labels show their coverage");
    // Lines are coloured as the browser draws them: a copy of the page with a probe that
    // writes each kind of line's computed background (and the legend's) into its title.
    let probe = dir.path().join("probe.html");
    std::fs::write(
        &probe,
        page.replace(
            "</body>",
            "<script>document.title = ['covered', 'uncovered', 'infeasible'].map(k => { const l = document.querySelector('.line.l-' + k); const g = document.querySelector('.legend .l-' + k); return k + '=' + (l ? getComputedStyle(l).backgroundColor : 'none') + '/' + (g ? getComputedStyle(g).backgroundColor : 'none'); }).join(';');</script></body>",
        ),
    )
    .unwrap();
    let probed = chromium()
        .unwrap()
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &format!("file://{}", probe.display())])
        .output()
        .unwrap();
    let probed = String::from_utf8_lossy(&probed.stdout);
    let title = probed
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default();
    for (kind, rgb) in [
        ("covered", "rgb(205, 236, 205)"),
        ("uncovered", "rgb(246, 199, 199)"),
        ("infeasible", "rgb(222, 222, 222)"),
    ] {
        assert!(
            title.contains(&format!("{kind}={rgb}/{rgb}")),
            "{kind} lines drawn {rgb}, as the legend says: {title}"
        );
    }
    // Readable: one collapsible graph per function, each drawing of a connected part at most a
    // couple of screens tall (the whole file's graph was 10,000 px tall).
    assert!(dom.contains("<details"), "graphs are collapsible");
    for tag in dom.split("<svg").skip(1) {
        let height: f64 = tag
            .split("height=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .and_then(|h| h.parse().ok())
            .expect("an svg height");
        assert!(height < 2500.0, "an svg {height} px tall");
    }
    let shot = dir.path().join("shot.png");
    let st = chromium()
        .unwrap()
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .args(["--window-size=1200,2000", &url])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a screenshot of the page"
    );
}

#[test]
fn the_html_report_is_the_same_bytes_run_after_run() {
    let dir = tempfile::tempdir().unwrap();
    let pages: Vec<String> = (0..3)
        .map(|k| {
            let html = dir.path().join(format!("report{k}.html"));
            audited(dir.path(), &["--html", html.to_str().unwrap()]);
            std::fs::read_to_string(&html).unwrap()
        })
        .collect();
    assert!(pages[0].contains("<svg"), "the page draws graphs");
    assert_eq!(pages[0], pages[1]);
    assert_eq!(pages[0], pages[2]);
}

#[test]
fn markdown_summaries_of_an_audit_say_what_is_pruned_then_what_the_tests_left() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.md");
    let (file, _) = audited(dir.path(), &["--markdown", first.to_str().unwrap()]);
    let before = std::fs::read_to_string(&first).unwrap();
    assert!(
        before.starts_with("### covprune audit tritype_labels.c\n"),
        "{before}"
    );
    // No `measure` yet: the pruned counts, no percentage, and a note saying so.
    assert!(before.contains("No `measure` run is recorded"), "{before}");
    assert!(
        before
            .lines()
            .any(|l| l.starts_with("| CC | ") && l.ends_with(" | - | - |")),
        "{before}"
    );
    assert!(!before.contains("no test covers"), "{before}");
    measured(&file, &[]);
    let second = dir.path().join("second.md");
    covprune()
        .arg("audit")
        .arg(&file)
        .arg("--markdown")
        .arg(&second)
        .arg("--markdown-since")
        .arg(&first)
        .assert()
        .success();
    let after = std::fs::read_to_string(&second).unwrap();
    assert!(!after.contains("No `measure` run"), "{after}");
    // Percentages now, new since the summary that had none.
    let cc = after
        .lines()
        .find(|l| l.starts_with("| CC | "))
        .unwrap_or_default();
    assert!(cc.contains('%') && cc.ends_with(" new |"), "{after}");
    assert!(
        after.contains("The last summary holds no coverage to compare with.")
            && !after.contains("newly uncovered"),
        "{after}"
    );
    // The objectives the tests leave, linked to the original's lines, as `measure` lists
    // them.
    let measured: serde_json::Value =
        serde_json::from_slice(&measured(&file, &["--json"])).unwrap();
    let uncovered = measured["uncovered"].as_array().unwrap();
    assert!(!uncovered.is_empty(), "{measured:#}");
    assert!(
        after.contains(&format!("{} objectives no test covers", uncovered.len()))
            || uncovered.len() == 1,
        "{after}"
    );
    for u in uncovered {
        let origin = u["origin"].as_str().unwrap();
        let (f, l) = origin.rsplit_once(':').unwrap();
        assert!(
            after.contains(&format!("[{origin}]({f}#L{l})")),
            "{origin} not in {after}"
        );
    }
}
