//! One vocabulary: the same labels give the same per-criterion counts in every output of
//! `prune`, `measure` and `audit` (text and JSON), the HTML report and the Mutation Testing
//! Elements report.

use std::collections::BTreeMap;
use std::path::Path;

mod common;
use common::covprune;

fn stdout(args: &[&str], file: &Path) -> String {
    let out = covprune()
        .arg(args[0])
        .arg(file)
        .args(&args[1..])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The rows of a text table whose header starts with `first`: criterion -> column -> value
/// (percentages without their sign).
fn text_table(text: &str, first: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(first));
    let header = lines.next().expect("a table");
    // Column names are single words but for "kept covered".
    let header = header.replace("kept covered", "kept_covered");
    let names: Vec<&str> = header.split_whitespace().collect();
    let mut out = BTreeMap::new();
    for l in lines {
        let cells: Vec<&str> = l.split_whitespace().collect();
        if cells.len() != names.len() {
            break;
        }
        let row: BTreeMap<String, String> = names
            .iter()
            .zip(&cells)
            .map(|(n, c)| (n.to_string(), c.trim_end_matches('%').to_string()))
            .collect();
        out.insert(cells[0].to_string(), row);
    }
    out
}

/// The rows of the HTML table that follows `heading`: first cell -> cells.
fn html_table(page: &str, heading: &str) -> BTreeMap<String, Vec<String>> {
    let at = page.find(heading).expect("the table's heading");
    let table = &page[at..];
    let table = &table[..table.find("</table>").unwrap()];
    let mut out = BTreeMap::new();
    for row in table.split("<tr>").skip(2) {
        let cells: Vec<String> = row
            .split("<td>")
            .skip(1)
            .map(|c| {
                c.split("</td>")
                    .next()
                    .unwrap()
                    .trim_end_matches('%')
                    .to_string()
            })
            .collect();
        out.insert(cells[0].clone(), cells[1..].to_vec());
    }
    out
}

#[test]
fn every_output_counts_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::annotate(
        "benchmarks/programs/tritype.c",
        "CC,MCC,GACC,WM",
        dir.path(),
    );
    let prune_text = stdout(&["prune", "--no-progress", "--jobs", "1"], &file);
    let prune_json: serde_json::Value = serde_json::from_str(&stdout(
        &["prune", "--no-progress", "--jobs", "1", "--json"],
        &file,
    ))
    .unwrap();
    let tests = "benchmarks/programs/tritype.tests";
    let elements = dir.path().join("elements.json");
    let measure_text = stdout(&["measure", "--tests", tests], &file);
    let measure_json: serde_json::Value = serde_json::from_str(&stdout(
        &[
            "measure",
            "--tests",
            tests,
            "--json",
            "--elements",
            elements.to_str().unwrap(),
        ],
        &file,
    ))
    .unwrap();
    let html = dir.path().join("audit.html");
    let audit_text = stdout(&["audit"], &file);
    let audit_json: serde_json::Value = serde_json::from_str(&stdout(
        &["audit", "--json", "--html", html.to_str().unwrap()],
        &file,
    ))
    .unwrap();
    let page = std::fs::read_to_string(&html).unwrap();

    // prune's JSON rows are the reference.
    let rows = prune_json["criteria"].as_array().unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["CC", "GACC", "MCC", "WM", "all"]
    );
    assert!(
        rows.iter().any(|r| r["across"].as_u64().unwrap() > 0),
        "the fixture has labels redundant across criteria"
    );
    assert_eq!(
        audit_json["criteria"], prune_json["criteria"],
        "audit --json"
    );
    let prune_t = text_table(&prune_text, "criterion");
    let audit_t = text_table(&audit_text, "criterion");
    let measure_t = text_table(&measure_text, "criterion");
    let html_counts = html_table(&page, "<h2>Per criterion</h2>");
    let html_cov = html_table(&page, "<h2>Coverage</h2>");
    let measure_rows = measure_json["coverage"].as_array().unwrap();
    let audit_cov = audit_json["coverage"].as_array().unwrap();
    for r in rows {
        let name = r["name"].as_str().unwrap();
        let n = |k: &str| r[k].as_u64().unwrap().to_string();
        assert_eq!(
            n("pruned").parse::<u64>().unwrap(),
            [
                "infeasible",
                "duplicate_step2",
                "duplicate_step3",
                "subsumed"
            ]
            .iter()
            .map(|k| r[*k].as_u64().unwrap())
            .sum::<u64>(),
            "{name}: pruned is the sum of its kinds"
        );
        for (table, what) in [(&prune_t, "prune"), (&audit_t, "audit")] {
            let t = &table[name];
            for (col, key) in [
                ("labels", "labels"),
                ("infeasible", "infeasible"),
                ("dup(s2)", "duplicate_step2"),
                ("dup(s3)", "duplicate_step3"),
                ("subsumed", "subsumed"),
                ("pruned", "pruned"),
                ("+across", "across"),
                ("unknown", "unknown"),
            ] {
                assert_eq!(t[col], n(key), "{what} text, {name}, {col}");
            }
        }
        let h = &html_counts[name];
        assert_eq!(
            [&h[0], &h[1], &h[2], &h[3], &h[4], &h[5], &h[7], &h[8]],
            [
                &n("labels"),
                &n("infeasible"),
                &n("duplicate_step2"),
                &n("duplicate_step3"),
                &n("subsumed"),
                &n("pruned"),
                &n("across"),
                &n("unknown")
            ],
            "HTML, {name}"
        );
        // measure: the same labels, pruned and +across, in its text, its JSON, audit's JSON
        // and the HTML.
        let m = measure_rows
            .iter()
            .find(|m| m["criterion"] == name)
            .unwrap();
        assert_eq!(m["labels"], r["labels"], "measure, {name}: labels");
        assert_eq!(m["pruned"], r["pruned"], "measure, {name}: pruned");
        assert_eq!(m["across"], r["across"], "measure, {name}: +across");
        assert_eq!(
            m["kept"].as_u64().unwrap(),
            m["labels"].as_u64().unwrap() - m["pruned"].as_u64().unwrap()
                + m["pending"].as_u64().unwrap(),
            "measure, {name}: kept = labels - pruned + pending"
        );
        let a = audit_cov.iter().find(|a| a["criterion"] == name).unwrap();
        assert_eq!(a, m, "audit's coverage, {name}");
        let t = &measure_t[name];
        let mc = html_cov[name].clone();
        for (i, (col, key)) in [
            ("labels", "labels"),
            ("covered", "covered"),
            ("pruned", "pruned"),
            ("pending", "pending"),
            ("+across", "across"),
            ("kept", "kept"),
            ("kept_covered", "kept_covered"),
        ]
        .iter()
        .enumerate()
        {
            let v = m[*key].as_u64().unwrap().to_string();
            assert_eq!(t[*col], v, "measure text, {name}, {col}");
            let html_col = [0, 1, 3, 4, 5, 6, 7][i];
            assert_eq!(mc[html_col], v, "HTML coverage, {name}, {col}");
        }
        let cleaned = format!("{:.1}", m["cleaned_percent"].as_f64().unwrap());
        assert_eq!(t["cleaned"], cleaned, "measure text, {name}, cleaned");
        assert_eq!(mc[8], cleaned, "HTML coverage, {name}, cleaned");
    }

    // Elements: the WM mutants, pruned ones ignored, and its score is the cleaned WM ratio.
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&elements).unwrap()).unwrap();
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    for f in e["files"].as_object().unwrap().values() {
        for m in f["mutants"].as_array().unwrap() {
            *status
                .entry(m["status"].as_str().unwrap().into())
                .or_default() += 1;
        }
    }
    let wm = measure_rows
        .iter()
        .find(|m| m["criterion"] == "WM")
        .unwrap();
    let get = |k: &str| status.get(k).copied().unwrap_or(0);
    let u = |k: &str| wm[k].as_u64().unwrap();
    assert_eq!(
        get("Ignored"),
        u("pruned") - u("pending"),
        "Elements: ignored mutants"
    );
    assert_eq!(get("Killed"), u("kept_covered"), "Elements: killed mutants");
    assert_eq!(
        get("Killed") + get("Survived") + get("NoCoverage"),
        u("kept"),
        "Elements: valid mutants"
    );
    let score = 100.0 * get("Killed") as f64 / u("kept") as f64;
    assert!((score - wm["cleaned_percent"].as_f64().unwrap()).abs() < 1e-9);
}
