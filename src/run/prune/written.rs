//! What a prune run writes: its verdicts, with the labels no analysed function holds (in a
//! function the front end skipped, or compiled out) left unknown with why; the ledger; the
//! labels file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Inputs, PruneReport, SkippedFunction};
use crate::console::print_err;
use crate::ir::Program;
use crate::prune::{LabelVerdict, PruneConfig, Reason, RunStats, Status};
use crate::report::labels::{self, LabelsFile};
use crate::report::ledger::{self, Ledger};
use crate::report::PruneSummary;
use crate::run::error::{write_failed, Result};

/// A label written in a function the front end skipped (a syntax error in it): the
/// function's name, why it was skipped and its line, and the label statement's tag.
struct InSkippedFunction {
    name: String,
    why: String,
    line: u32,
    tag: String,
}

/// For the labels `wanted` picks among those the file's text holds: the function the front
/// end skipped that holds each (the last function starting at or before the label's line is a
/// skipped one).
fn skipped_function_of_labels(
    file: &Path,
    text: &[u8],
    program: &Program,
    wanted: &dyn Fn(u64) -> bool,
) -> BTreeMap<u64, InSkippedFunction> {
    let mut out = BTreeMap::new();
    if program.skipped.is_empty() {
        return out;
    }
    // The annotated file itself, among the files its line markers name.
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    let is_main = |id: crate::ir::FileId| {
        program.files.get(id.0 as usize).is_some_and(|f| {
            Path::new(f)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                == name
        })
    };
    // (start line, Some(skipped index)) for every function of the main file.
    let mut starts: Vec<(u32, Option<usize>)> = program
        .functions
        .iter()
        .filter(|f| is_main(f.loc.file))
        .map(|f| (f.loc.line, None))
        .chain(
            program
                .skipped
                .iter()
                .enumerate()
                .filter(|(_, f)| is_main(f.loc.file))
                .map(|(i, f)| (f.loc.line, Some(i))),
        )
        .collect();
    starts.sort();
    for call in crate::frontend::sites::label_calls(text) {
        let Ok(id) = call.id.trim().parse::<u64>() else {
            continue;
        };
        if !wanted(id) {
            continue;
        }
        let line = 1 + text[..call.range.0].iter().filter(|b| **b == b'\n').count() as u32;
        let holder = starts.iter().rev().find(|(l, _)| *l <= line);
        if let Some((_, Some(k))) = holder {
            let f = &program.skipped[*k];
            out.insert(
                id,
                InSkippedFunction {
                    name: f.name.clone(),
                    why: f.reason.clone(),
                    line: f.loc.line,
                    tag: call.tag,
                },
            );
        }
    }
    out
}

/// The labels written in the file's text that the compiled program lacks, in functions the
/// front end skipped: without a labels file, they are known only from the text, and they stay
/// unknown rather than vanish from the ledger. (Labels in code the preprocessor drops are not
/// objectives of this build, as without a labels file they never were.)
pub(super) fn labels_of_skipped_functions(
    file: &Path,
    source: &[u8],
    program: &Program,
) -> Vec<u64> {
    let compiled: BTreeSet<u64> = program.label_ids().collect();
    skipped_function_of_labels(file, source, program, &|id| !compiled.contains(&id))
        .into_keys()
        .collect()
}

/// Writes the ledger and the labels file of a run, and returns its report.
pub(super) fn finish(
    file: &Path,
    inputs: Inputs,
    mut verdicts: Vec<LabelVerdict>,
    run_stats: &RunStats,
    total_ms: u128,
    (timings, config): (bool, &PruneConfig),
) -> Result<PruneReport> {
    let view = ledger::View::of(config);
    let Inputs {
        program,
        source,
        labels_path,
        mut labels_file,
        file_only,
        hyperlabels: hyper,
        ..
    } = inputs;
    let not_analysed = if file_only.is_empty() {
        BTreeMap::new()
    } else {
        let wanted: BTreeSet<u64> = file_only.iter().copied().collect();
        skipped_function_of_labels(file, &source, &program, &|id| wanted.contains(&id))
    };
    // Once per skipped function, in line order.
    let warned: BTreeSet<(u32, &str, &str)> = not_analysed
        .values()
        .map(|f| (f.line, f.name.as_str(), f.why.as_str()))
        .collect();
    for (line, name, why) in warned {
        let original = crate::run::original_line(file, &source, line as usize)
            .map_or_else(String::new, |o| format!(" (in the original, {o})"));
        print_err(&format!(
            "warning: {}:{line}{original}: function {name} not analysed ({why}): its labels stay unknown",
            file.display(),
        ));
    }
    for id in &file_only {
        let reason = match not_analysed.get(id) {
            Some(f) => Reason::NotAnalysed {
                function: f.name.clone(),
                why: f.why.clone(),
            },
            None => Reason::NotCompiled,
        };
        verdicts.push(LabelVerdict {
            id: *id,
            status: Status::unknown(reason),
            step: None,
            time_ms: 0,
            function: String::new(),
            loc: crate::ir::Loc::default(),
            tag: labels_file
                .as_ref()
                .and_then(|f| f.rows.iter().find(|r| r.id == *id))
                .map(|r| r.tag.clone())
                // Without a labels file, the tag its statement gives.
                .or_else(|| not_analysed.get(id).map(|f| f.tag.clone()))
                .unwrap_or_default(),
            text: String::new(),
        });
    }
    verdicts.sort_by_key(|v| v.id);

    // A label a test covered cannot be infeasible: refuse to write a contradiction.
    if let Some(lf) = &labels_file {
        let covered: BTreeSet<u64> = lf
            .rows
            .iter()
            .filter(|r| r.status == "covered")
            .map(|r| r.id)
            .collect();
        if let Some(v) = verdicts
            .iter()
            .find(|v| v.status == Status::Infeasible && covered.contains(&v.id))
        {
            // The labels file contradicts the proof: most likely it belongs to another
            // version of the program, so it is refused as input.
            return Err(anyhow::anyhow!(
                "soundness alarm: l{} is marked covered in the labels file but was proved infeasible; nothing written",
                v.id
            )
            .into());
        }
    }
    let file_name = crate::run::file_name(file);
    let mut ledger = Ledger::new(&file_name, &source, &program, &verdicts, timings, view);
    let claims = ledger::claims_of_statuses(verdicts.iter().map(|v| (v.id, &v.status)));
    if let Some(hls) = &hyper {
        let tags: BTreeMap<u64, String> = verdicts.iter().map(|v| (v.id, v.tag.clone())).collect();
        ledger.hyperlabels = crate::hyper::report::prove(&program, hls, &tags, &claims, config);
    }
    let ledger_path = crate::run::ledger_path_of(file);
    labels::write_atomic(&ledger_path, ledger.to_json())
        .map_err(|e| write_failed(&ledger_path, e))?;

    let lf = labels_file.get_or_insert_with(LabelsFile::default);
    lf.record_verdicts(&verdicts, &file_name, timings);
    let out_labels = labels_path.unwrap_or_else(|| file.with_extension("labels"));
    labels::write_atomic(&out_labels, lf.to_text()).map_err(|e| write_failed(&out_labels, e))?;
    if let Some(hls) = &hyper {
        crate::hyper::report::write_statuses(
            &crate::hyper::path_of(file),
            hls,
            &ledger.hyperlabels,
        )
        .map_err(|e| anyhow::anyhow!(e))?;
    }
    let hyperlabels = crate::hyper::report::pruned_rows(&ledger.hyperlabels);

    let skipped_functions = program
        .skipped
        .iter()
        .map(|f| SkippedFunction {
            name: f.name.clone(),
            loc: program.fmt_loc(f.loc),
            reason: f.reason.clone(),
            labels: verdicts
                .iter()
                .filter(|v| {
                    matches!(v.status.reason(), Some(Reason::NotAnalysed { function, .. }) if *function == f.name)
                })
                .count(),
        })
        .collect();
    Ok(PruneReport {
        file: file_name,
        ledger: ledger_path.display().to_string(),
        labels_file: out_labels.display().to_string(),
        summary: PruneSummary::new(&verdicts, run_stats, total_ms),
        skipped_functions,
        cache: None,
        hyperlabels,
        compiled_out: crate::report::sites::compiled_out_beside(file),
    })
}
