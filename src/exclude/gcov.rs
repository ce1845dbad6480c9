//! The gcov-based reports: gcovr's JSON (branches marked `"gcovr/excluded": true`, which
//! `gcovr -a` reads back and leaves out of its percentages) and lcov tracefiles (the excluded
//! `BRDA` records dropped and `BRF`/`BRH` counted again, as lcov 1.16 has no mark for them).

use serde_json::Value;

use super::{apply_line, note_unvisited, proofs_for, FileProofs, Item, Mapping, Uncovered};

/// gcovr's JSON report with the proved branches marked excluded; the mapping beside it.
pub fn gcovr(report: &str, proofs: &[FileProofs]) -> Result<(String, Mapping), String> {
    let mut doc: Value =
        serde_json::from_str(report).map_err(|e| format!("not a gcovr JSON report: {e}"))?;
    if doc.get("gcovr/format_version").is_none() {
        return Err("not a gcovr JSON report (no gcovr/format_version)".into());
    }
    let mut mapping = Mapping::default();
    let files = doc
        .get_mut("files")
        .and_then(Value::as_array_mut)
        .ok_or("a gcovr JSON report without files")?;
    for f in files {
        let name = f["file"].as_str().unwrap_or_default().to_string();
        let Some(p) = proofs_for(proofs, &name) else {
            mapping.unmatched_files.push(name);
            count_gcovr(f, &mut mapping);
            continue;
        };
        mapping.matched_files += 1;
        let Some(lines) = f.get_mut("lines").and_then(Value::as_array_mut) else {
            continue;
        };
        let mut visited = std::collections::BTreeSet::new();
        // A line listed twice (code of several functions) is not matched.
        let mut seen = std::collections::BTreeMap::<u64, usize>::new();
        for l in lines.iter() {
            *seen
                .entry(l["line_number"].as_u64().unwrap_or(0))
                .or_default() += 1;
        }
        for l in lines.iter_mut() {
            let number = l["line_number"].as_u64().unwrap_or(0);
            let Some(branches) = l.get_mut("branches").and_then(Value::as_array_mut) else {
                continue;
            };
            let live: Vec<usize> = (0..branches.len())
                .filter(|i| !is_excluded(&branches[*i]) && branches[*i]["throw"] != true)
                .collect();
            let taken: Vec<bool> = live
                .iter()
                .map(|i| branches[*i]["count"].as_u64().unwrap_or(0) > 0)
                .collect();
            let keys: Vec<String> = live
                .iter()
                .map(|i| format!("branchno {}", branches[*i]["branchno"]))
                .collect();
            if live.is_empty() {
                continue;
            }
            if seen.get(&number) == Some(&1) {
                visited.insert(number as usize);
                for e in apply_line(&mut mapping, p, number as usize, &keys, &taken) {
                    branches[live[e]]["gcovr/excluded"] = Value::Bool(true);
                }
            }
        }
        note_unvisited(&mut mapping, p, &visited);
        count_gcovr(f, &mut mapping);
    }
    mapping.finish();
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    Ok((text, mapping))
}

fn is_excluded(branch: &Value) -> bool {
    branch["gcovr/excluded"] == true
}

/// Adds a file's branches to the cleaned totals (every branch not excluded, and those
/// taken) and its untaken ones to the uncovered list.
fn count_gcovr(f: &Value, mapping: &mut Mapping) {
    let file = f["file"].as_str().unwrap_or_default();
    for l in f["lines"].as_array().into_iter().flatten() {
        for b in l["branches"].as_array().into_iter().flatten() {
            if is_excluded(b) || b["throw"] == true {
                continue;
            }
            let taken = b["count"].as_u64().unwrap_or(0) > 0;
            mapping.cleaned.total += 1;
            mapping.cleaned.covered += usize::from(taken);
            if !taken {
                mapping.uncovered.push(Uncovered {
                    file: file.to_string(),
                    line: l["line_number"].as_u64().unwrap_or(0) as usize,
                    item: Item::Branch,
                    key: format!("branchno {}", b["branchno"]),
                });
            }
        }
    }
}

/// An lcov tracefile with the proved branches' `BRDA` records dropped and each file's
/// `BRF`/`BRH` counted again.
pub fn lcov(tracefile: &str, proofs: &[FileProofs]) -> Result<(String, Mapping), String> {
    let mut mapping = Mapping::default();
    let mut out = String::new();
    // The records of one `SF` ... `end_of_record` section, handled whole.
    let mut section: Vec<&str> = Vec::new();
    let mut any = false;
    for line in tracefile.lines() {
        section.push(line);
        if line == "end_of_record" {
            out.push_str(&lcov_section(&section, proofs, &mut mapping));
            section.clear();
            any = true;
        }
    }
    if !section.iter().all(|l| l.trim().is_empty()) {
        return Err("an lcov tracefile whose last record has no end_of_record".into());
    }
    if !any {
        return Err("not an lcov tracefile (no end_of_record)".into());
    }
    mapping.finish();
    Ok((out, mapping))
}

/// `BRDA:line,block,branch,taken` (`taken` is `-` when the block never ran).
fn brda(l: &str) -> Option<(usize, String, bool)> {
    let rest = l.strip_prefix("BRDA:")?;
    let mut it = rest.split(',');
    let line = it.next()?.parse().ok()?;
    let block = it.next()?;
    let branch = it.next()?;
    let taken = it.next()?;
    Some((
        line,
        format!("{block},{branch}"),
        taken != "-" && taken != "0",
    ))
}

fn lcov_section(section: &[&str], proofs: &[FileProofs], mapping: &mut Mapping) -> String {
    let file = section
        .iter()
        .find_map(|l| l.strip_prefix("SF:"))
        .unwrap_or_default();
    let branches: Vec<(usize, usize, String, bool)> = section
        .iter()
        .enumerate()
        .filter_map(|(i, l)| brda(l).map(|(line, key, taken)| (i, line, key, taken)))
        .collect();
    let mut dropped = std::collections::BTreeSet::new();
    match proofs_for(proofs, file) {
        None => mapping.unmatched_files.push(file.to_string()),
        Some(p) => {
            mapping.matched_files += 1;
            let mut by_line: std::collections::BTreeMap<usize, Vec<&(usize, usize, String, bool)>> =
                Default::default();
            for b in &branches {
                by_line.entry(b.1).or_default().push(b);
            }
            let visited = by_line.keys().copied().collect();
            note_unvisited(mapping, p, &visited);
            for (line, edges) in by_line {
                let keys: Vec<String> = edges.iter().map(|e| format!("BRDA {}", e.2)).collect();
                let taken: Vec<bool> = edges.iter().map(|e| e.3).collect();
                for e in apply_line(mapping, p, line, &keys, &taken) {
                    dropped.insert(edges[e].0);
                }
            }
        }
    }
    let (mut found, mut hit) = (0, 0);
    for b in branches.iter().filter(|b| !dropped.contains(&b.0)) {
        found += 1;
        hit += usize::from(b.3);
        if !b.3 {
            mapping.uncovered.push(Uncovered {
                file: file.to_string(),
                line: b.1,
                item: Item::Branch,
                key: format!("BRDA {}", b.2),
            });
        }
    }
    mapping.cleaned.total += found;
    mapping.cleaned.covered += hit;
    let mut out = String::new();
    for (i, l) in section.iter().enumerate() {
        if dropped.contains(&i) {
            continue;
        }
        if l.starts_with("BRF:") {
            out.push_str(&format!("BRF:{found}\n"));
        } else if l.starts_with("BRH:") {
            out.push_str(&format!("BRH:{hit}\n"));
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}
