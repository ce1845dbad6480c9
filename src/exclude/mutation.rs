//! Mutation reports in the Mutation Testing Elements JSON schema (Mull writes them, and so
//! does `covprune measure`): a mutant covprune proved equivalent (its weak-mutation label
//! infeasible: the mutated operator never computes another value where the program evaluates
//! it, so no test can tell the mutant from the program) is marked `Ignored`, with the reason.
//!
//! A report's mutant is matched by file, by the line and column of its operator token (where
//! Mull places a mutant, and where covprune records one), and by its operator, named as Mull
//! names them (`cxx_add_to_sub`, `cxx_add_assign_to_sub_assign`, `cxx_post_inc_to_post_dec`,
//! ...). Several mutants of covprune at one place with one name must all be proved equivalent.
//! A mutant the report shows killed (or timed out, or crashing) that covprune proved
//! equivalent is a soundness alarm.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{
    proofs_for, Alarm, BranchTotals, Excluded, FileProofs, Item, Left, Mapping, Uncovered,
};
use crate::report::sites::MutantSite;

/// Mull's name for a binary operator.
fn operator_name(c: &str) -> Option<&'static str> {
    Some(match c {
        "+" => "add",
        "-" => "sub",
        "*" => "mul",
        "/" => "div",
        "%" => "rem",
        "<<" => "lshift",
        ">>" => "rshift",
        "==" => "eq",
        "!=" => "ne",
        "<" => "lt",
        "<=" => "le",
        ">" => "gt",
        ">=" => "ge",
        "&&" => "logical_and",
        "||" => "logical_or",
        "&" => "and",
        "|" => "or",
        "^" => "xor",
        _ => return None,
    })
}

/// The mutator name Mull gives this mutant, if it has one.
pub fn mull_name(m: &MutantSite) -> Option<String> {
    let (from, to) = (operator_name(&m.from)?, operator_name(&m.to)?);
    let place = if m.postfix { "post" } else { "pre" };
    Some(match (m.token.as_str(), from, to) {
        ("++", "add", "sub") => format!("cxx_{place}_inc_to_{place}_dec"),
        ("--", "sub", "add") => format!("cxx_{place}_dec_to_{place}_inc"),
        // `cxx_logical_and_to_or`: the connector's kind is said once.
        ("&&" | "||", _, _) => format!(
            "cxx_{from}_to_{}",
            to.strip_prefix("logical_").unwrap_or(to)
        ),
        (t, _, _) if t == m.from => format!("cxx_{from}_to_{to}"),
        (t, _, _) if t.strip_suffix('=') == Some(m.from.as_str()) => {
            format!("cxx_{from}_assign_to_{to}_assign")
        }
        _ => return None,
    })
}

/// Statuses that mean the mutant behaved differently from the program.
fn detected(status: &str) -> bool {
    matches!(status, "Killed" | "Timeout")
}

/// Statuses of mutants that count in a mutation score (Stryker's definition: not those that
/// did not compile, crashed the runner or were ignored).
fn valid(status: &str) -> bool {
    !matches!(
        status,
        "CompileError" | "RuntimeError" | "Ignored" | "Pending"
    )
}

/// The report with the proved-equivalent mutants ignored; the mapping beside it.
pub fn elements(report: &str, proofs: &[FileProofs]) -> Result<(String, Mapping), String> {
    let mut doc: Value = serde_json::from_str(report)
        .map_err(|e| format!("not a Mutation Testing Elements report: {e}"))?;
    if doc.get("schemaVersion").is_none() {
        return Err("not a Mutation Testing Elements report (no schemaVersion)".into());
    }
    let mut mapping = Mapping::default();
    let mut totals = BranchTotals::default();
    let files = doc
        .get_mut("files")
        .and_then(Value::as_object_mut)
        .ok_or("a Mutation Testing Elements report without files")?;
    for (name, f) in files.iter_mut() {
        let mutants = f.get_mut("mutants").and_then(Value::as_array_mut);
        match proofs_for(proofs, name) {
            Some(p) => {
                mapping.matched_files += 1;
                for m in mutants.into_iter().flatten() {
                    map_mutant(m, p, &mut mapping);
                }
                note_unmatched(f, p, &mut mapping);
            }
            None => mapping.unmatched_files.push(name.clone()),
        }
        for m in f["mutants"].as_array().into_iter().flatten() {
            let status = m["status"].as_str().unwrap_or_default();
            if valid(status) {
                totals.total += 1;
                totals.covered += usize::from(detected(status));
                if !detected(status) {
                    if let Some(((line, column), mutator)) = key_of(m) {
                        mapping.uncovered.push(Uncovered {
                            file: name.clone(),
                            line,
                            item: Item::Mutant,
                            key: format!("{mutator} at column {column} ({status})"),
                        });
                    }
                }
            }
        }
    }
    mapping.mutants_cleaned = Some(totals);
    mapping.finish();
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    Ok((text, mapping))
}

/// Where a report's mutant is, and its name.
fn key_of(m: &Value) -> Option<((usize, usize), &str)> {
    let start = &m["location"]["start"];
    let at = (
        start["line"].as_u64()? as usize,
        start["column"].as_u64()? as usize,
    );
    Some((at, m["mutatorName"].as_str()?))
}

fn matching<'a>(p: &'a FileProofs, at: (usize, usize), name: &str) -> Vec<&'a super::Equivalent> {
    p.equivalent
        .iter()
        .filter(|e| e.site.start == at && mull_name(&e.site).as_deref() == Some(name))
        .collect()
}

fn map_mutant(m: &mut Value, p: &FileProofs, mapping: &mut Mapping) {
    let Some((at, name)) = key_of(m).map(|(at, n)| (at, n.to_string())) else {
        return;
    };
    let found = matching(p, at, &name);
    let Some(first) = found.first() else {
        return;
    };
    let file = p.original.display().to_string();
    let status = m["status"].as_str().unwrap_or_default().to_string();
    let id = m["id"]
        .as_str()
        .map_or_else(|| m["id"].to_string(), str::to_string);
    let labels: Vec<u64> = found.iter().map(|e| e.label).collect();
    if detected(&status) || status == "RuntimeError" {
        mapping.alarms.push(Alarm {
            file,
            line: at.0,
            labels,
            what: format!("mutant {id} ({name}) is {status}, proved equivalent"),
        });
        return;
    }
    if status == "Ignored" || status == "CompileError" {
        return;
    }
    m["status"] = json!("Ignored");
    m["statusReason"] = json!(format!(
        "equivalent mutant: covprune proved its weak-mutation label l{} infeasible ({})",
        first.label, first.tag
    ));
    mapping.excluded.push(Excluded {
        file,
        line: at.0,
        item: Item::Mutant,
        span: Some((first.site.start, (first.site.end.0, first.site.end.1 + 1))),
        key: format!("mutant {id} {name}"),
        labels,
        criterion: first.tag.clone(),
        predicates: found.iter().map(|e| e.predicate.clone()).collect(),
        proof: "equivalent: no run evaluates the mutated operator to another value (covprune prune, step 1, for every caller)".into(),
    });
}

/// Proved-equivalent mutants no mutant of the report matched, counted per line.
fn note_unmatched(f: &Value, p: &FileProofs, mapping: &mut Mapping) {
    let names: std::collections::BTreeSet<((usize, usize), String)> = f["mutants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| key_of(m).map(|(at, n)| (at, n.to_string())))
        .collect();
    let mut per_line: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for e in &p.equivalent {
        let entry = per_line.entry(e.site.start.0).or_default();
        match mull_name(&e.site) {
            Some(n) if names.contains(&(e.site.start, n.clone())) => {}
            Some(_) => entry.0 += 1,
            None => entry.1 += 1,
        }
    }
    for (line, (absent, unnamed)) in per_line {
        let why = match (absent, unnamed) {
            (0, 0) => continue,
            (a, 0) => format!(
                "{} the report does not hold",
                crate::console::count(a as u64, "proved-equivalent mutant")
            ),
            (0, u) => format!(
                "{} with no Mull operator name",
                crate::console::count(u as u64, "proved-equivalent mutant")
            ),
            (a, u) => format!(
                "{} the report does not hold, {u} with no Mull operator name",
                crate::console::count(a as u64, "proved-equivalent mutant")
            ),
        };
        mapping.left.push(Left {
            file: p.original.display().to_string(),
            line,
            proved: absent + unnamed,
            why,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(token: &str, postfix: bool, from: &str, to: &str) -> MutantSite {
        MutantSite {
            token: token.into(),
            postfix,
            from: from.into(),
            to: to.into(),
            start: (1, 1),
            end: (1, 1),
        }
    }

    #[test]
    fn mutants_get_mulls_names() {
        let name = |t, p, f, to| mull_name(&site(t, p, f, to));
        assert_eq!(name("+", false, "+", "-").unwrap(), "cxx_add_to_sub");
        assert_eq!(name("<", false, "<", ">=").unwrap(), "cxx_lt_to_ge");
        assert_eq!(
            name("&&", false, "&&", "||").unwrap(),
            "cxx_logical_and_to_or"
        );
        assert_eq!(
            name("+=", false, "+", "-").unwrap(),
            "cxx_add_assign_to_sub_assign"
        );
        assert_eq!(
            name("++", true, "+", "-").unwrap(),
            "cxx_post_inc_to_post_dec"
        );
        assert_eq!(
            name("--", false, "-", "+").unwrap(),
            "cxx_pre_dec_to_pre_inc"
        );
        // `x++` as `x * 1`: no such mutator.
        assert_eq!(name("++", true, "+", "*"), None);
    }
}
