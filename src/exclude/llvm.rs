//! llvm-cov's export JSON (`llvm-cov export`, clang's source-based coverage with branch and
//! MC/DC coverage). Its branch regions carry line and column spans, so each is matched to the
//! covprune atom whose condition (as clang sees it: the operand of `&&`/`||`, with its
//! parentheses and `!`s) has the same span; the region's true side is the atom's proved
//! outcome when the condition is the atom itself, its false side when it is the negation.
//!
//! An MC/DC condition is excluded when an outcome of its atom is proved infeasible: a
//! condition that never takes one of its values has no independence pair. The record lists
//! its conditions' results in source order: they are the branch regions inside the decision,
//! sorted by their start, and the record is matched only when the two counts agree.
//!
//! The format has no mark for an excluded item: each file's and the export's summaries
//! (`branches`, `mcdc`) are counted again without the proved items, which each file lists
//! under `covprune/excluded` (branch indices with the side, MC/DC record and condition
//! indices); the sidecar justifies each.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{
    proofs_for, Alarm, BranchTotals, Excluded, FileProofs, Item, Left, Mapping, Region, Uncovered,
};

/// The export with the proved items out of its summaries; the mapping beside it.
pub fn export(report: &str, proofs: &[FileProofs]) -> Result<(String, Mapping), String> {
    let mut doc: Value =
        serde_json::from_str(report).map_err(|e| format!("not an llvm-cov export: {e}"))?;
    if doc["type"] != "llvm.coverage.json.export" {
        return Err("not an llvm-cov export (its type is not llvm.coverage.json.export)".into());
    }
    let mut mapping = Mapping::default();
    let mut mcdc = None::<BranchTotals>;
    let exports = doc
        .get_mut("data")
        .and_then(Value::as_array_mut)
        .ok_or("an llvm-cov export without data")?;
    for export in exports {
        let mut dropped = Dropped::default();
        for f in export
            .get_mut("files")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let name = f["filename"].as_str().unwrap_or_default().to_string();
            let marks = match proofs_for(proofs, &name) {
                Some(p) => {
                    mapping.matched_files += 1;
                    map_file(f, p, &mut mapping)
                }
                None => {
                    mapping.unmatched_files.push(name.clone());
                    Marks::default()
                }
            };
            uncovered_branches(f, &name, &marks, &mut mapping);
            dropped.branches += marks.branches.len();
            dropped.mcdc += marks.mcdc.len();
            recount(&mut f["summary"], marks.branches.len(), marks.mcdc.len());
            let summary = &f["summary"];
            add(&mut mapping.cleaned, &summary["branches"]);
            if summary.get("mcdc").is_some() {
                add(
                    mcdc.get_or_insert_with(BranchTotals::default),
                    &summary["mcdc"],
                );
            }
            if !marks.branches.is_empty() || !marks.mcdc.is_empty() {
                f["covprune/excluded"] = json!({"branches": marks.branches, "mcdc": marks.mcdc});
            }
        }
        recount(&mut export["totals"], dropped.branches, dropped.mcdc);
    }
    mapping.mcdc_cleaned = mcdc;
    mapping.finish();
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())? + "\n";
    Ok((text, mapping))
}

#[derive(Default)]
struct Dropped {
    branches: usize,
    mcdc: usize,
}

/// What one file excludes: (branch index, true side?) and (MC/DC record, condition).
#[derive(Default)]
struct Marks {
    branches: Vec<(usize, bool)>,
    mcdc: Vec<(usize, usize)>,
}

/// A branch region: its span and the counts of its true and false sides.
fn region_of(b: &Value) -> Option<(Region, u64, u64)> {
    let n = |i: usize| b.get(i).and_then(Value::as_u64);
    let at = |i: usize| n(i).map(|v| v as usize);
    Some((((at(0)?, at(1)?), (at(2)?, at(3)?)), n(4)?, n(5)?))
}

fn map_file(f: &Value, p: &FileProofs, mapping: &mut Mapping) -> Marks {
    let file = p.original.display().to_string();
    let regions: Vec<(Region, u64, u64)> = f["branches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(region_of)
        .collect();
    let mut marks = Marks::default();
    let mut visited = BTreeSet::new();
    for (i, (region, t, fc)) in regions.iter().enumerate() {
        let Some(c) = p.conditions.get(region) else {
            continue;
        };
        visited.insert(*region);
        if c.proved.is_empty() {
            continue;
        }
        let line = region.0 .0;
        if c.ambiguous {
            mapping.left.push(Left {
                file: file.clone(),
                line,
                proved: c.proved.len(),
                why: "two of covprune's atoms have this condition's span".into(),
            });
            continue;
        }
        for (id, predicate, value) in &c.proved {
            let true_side = *value != c.negated;
            let side = if true_side { "true" } else { "false" };
            if (if true_side { *t } else { *fc }) > 0 {
                mapping.alarms.push(Alarm {
                    file: file.clone(),
                    line,
                    labels: vec![*id],
                    what: format!(
                        "the {side} side of branch {i} ran, its outcome proved infeasible"
                    ),
                });
                continue;
            }
            marks.branches.push((i, true_side));
            mapping.excluded.push(Excluded {
                file: file.clone(),
                line,
                item: Item::Branch,
                span: Some(*region),
                key: format!("branch {i} {side}"),
                labels: vec![*id],
                criterion: "CC".into(),
                predicates: vec![predicate.clone()],
                proof: super::PROOF.into(),
            });
        }
    }
    for (k, record) in f["mcdc_records"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        map_mcdc(k, record, &regions, p, mapping, &mut marks);
    }
    for (line, _) in &p.without_span {
        mapping.left.push(Left {
            file: file.clone(),
            line: *line,
            proved: 1,
            why: "a decision of a macro's expansion: clang counts its conditions in the macro"
                .into(),
        });
    }
    for (region, c) in &p.conditions {
        if !c.proved.is_empty() && !visited.contains(region) {
            mapping.left.push(Left {
                file: file.clone(),
                line: region.0 .0,
                proved: c.proved.len(),
                why: "the report has no branch region with this condition's span".into(),
            });
        }
    }
    marks
}

/// One MC/DC record: `[line, column, end line, end column, .., [covered per condition]]`.
fn map_mcdc(
    k: usize,
    record: &Value,
    regions: &[(Region, u64, u64)],
    p: &FileProofs,
    mapping: &mut Mapping,
    marks: &mut Marks,
) {
    let file = p.original.display().to_string();
    let Some((span, _, _)) = region_of(record) else {
        return;
    };
    let covered: Vec<bool> = record
        .as_array()
        .and_then(|r| r.last())
        .and_then(Value::as_array)
        .map(|c| c.iter().map(|b| b == true).collect())
        .unwrap_or_default();
    let mut inside: Vec<Region> = regions
        .iter()
        .map(|(r, _, _)| *r)
        .filter(|r| span.0 <= r.0 && r.1 <= span.1)
        .collect();
    inside.sort();
    let proved = |r: &Region| {
        p.conditions
            .get(r)
            .filter(|c| !c.proved.is_empty() && !c.ambiguous)
    };
    if inside.len() != covered.len() {
        let n: usize = inside
            .iter()
            .filter_map(proved)
            .map(|c| c.proved.len())
            .sum();
        if n > 0 {
            mapping.left.push(Left {
                file,
                line: span.0 .0,
                proved: n,
                why: format!(
                    "MC/DC decision {k}: {} conditions, {} branch regions inside it",
                    covered.len(),
                    inside.len()
                ),
            });
        }
        return;
    }
    for (j, r) in inside.iter().enumerate() {
        let Some(c) = proved(r) else {
            continue;
        };
        let labels: Vec<u64> = c.proved.iter().map(|(id, _, _)| *id).collect();
        if covered[j] {
            mapping.alarms.push(Alarm {
                file: file.clone(),
                line: r.0 .0,
                labels,
                what: format!(
                    "condition {} of MC/DC decision {k} has an independence pair, an outcome proved infeasible",
                    j + 1
                ),
            });
            continue;
        }
        marks.mcdc.push((k, j));
        mapping.excluded.push(Excluded {
            file: file.clone(),
            line: r.0 .0,
            item: Item::McdcCondition,
            span: Some(*r),
            key: format!("mcdc {k} condition {}", j + 1),
            labels,
            criterion: "CC".into(),
            predicates: c.proved.iter().map(|(_, p, _)| p.clone()).collect(),
            proof: format!(
                "{}: the condition never takes one of its values, so no pair of runs shows it independent",
                super::PROOF
            ),
        });
    }
}

/// A summary's `branches` and `mcdc` counted again without the excluded items (all of them
/// uncovered: an excluded item that ran is an alarm).
fn recount(summary: &mut Value, branches: usize, mcdc: usize) {
    for (key, dropped) in [("branches", branches), ("mcdc", mcdc)] {
        let Some(s) = summary.get_mut(key) else {
            continue;
        };
        if dropped == 0 {
            continue;
        }
        let count = s["count"]
            .as_u64()
            .unwrap_or(0)
            .saturating_sub(dropped as u64);
        let covered = s["covered"].as_u64().unwrap_or(0).min(count);
        s["count"] = json!(count);
        s["notcovered"] = json!(count - covered);
        s["percent"] = json!(if count == 0 {
            0.0
        } else {
            100.0 * covered as f64 / count as f64
        });
    }
}

/// The sides of a file's branch regions that never ran and are not excluded.
fn uncovered_branches(f: &Value, name: &str, marks: &Marks, mapping: &mut Mapping) {
    let regions = f["branches"].as_array().into_iter().flatten();
    for (i, (region, t, fc)) in regions.filter_map(region_of).enumerate() {
        for (true_side, count) in [(true, t), (false, fc)] {
            if count == 0 && !marks.branches.contains(&(i, true_side)) {
                mapping.uncovered.push(Uncovered {
                    file: name.to_string(),
                    line: region.0 .0,
                    item: Item::Branch,
                    key: format!("branch {i} {}", if true_side { "true" } else { "false" }),
                });
            }
        }
    }
}

fn add(totals: &mut BranchTotals, s: &Value) {
    totals.total += s["count"].as_u64().unwrap_or(0) as usize;
    totals.covered += s["covered"].as_u64().unwrap_or(0) as usize;
}
