//! `annotate`: checks the criteria and the file, inserts the labels, writes
//! `DIR/STEM_labels.c`, `.labels` and (for criteria with hyperlabels) `.hyperlabels`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use covprune_encoders::Criterion;
use serde::Serialize;

use super::error::{write_failed, Result};
use crate::frontend::{self, PreprocessOptions};

#[derive(Clone, Debug)]
pub struct AnnotateOptions {
    pub file: PathBuf,
    /// Criterion names, as the user spelt them (checked here).
    pub criteria: Vec<Criterion>,
    /// Output directory (default: the file's directory).
    pub out_dir: Option<PathBuf>,
    pub mcc_max_atoms: usize,
    pub ncc_n: usize,
    pub pct_max_predicates: usize,
    /// WM, WM-S operator groups, e.g. `AOR`, `-ABS`.
    pub mutators: Vec<String>,
    pub preprocess: PreprocessOptions,
    /// Replace a labels file that holds measured coverage.
    pub force: bool,
}

#[derive(Debug, Serialize)]
pub struct AnnotateReport {
    /// The original file's name.
    pub file: String,
    pub labels: usize,
    /// Labels per criterion.
    pub criteria: BTreeMap<String, usize>,
    pub decisions: usize,
    pub skipped_decisions: usize,
    pub functions: usize,
    pub annotated: String,
    pub labels_file: String,
    pub hyperlabels: usize,
    /// Functions the front end does not lower (`FILE:LINE:COL: name: why`): `prune` cannot
    /// decide their labels.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_analysed: Vec<String>,
    /// Labels in code the configuration compiles out (not objectives), per line and tag.
    pub compiled_out: Vec<crate::report::sites::CompiledOutLabels>,
    /// The compiler's first error when it rejects the original (`cc -fsyntax-only`): the
    /// labels of what it rejects may not be the program's, and no build of it will run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compiler_rejects: Option<String>,
    /// Labels per tag (`WM ROR` apart from `WM AOR`), for the text form.
    #[serde(skip)]
    pub per_tag: BTreeMap<String, usize>,
}

impl AnnotateReport {
    pub fn to_text(&self) -> String {
        let mut out = format!("{}: {} labels", self.file, self.labels);
        for (tag, n) in &self.per_tag {
            out.push_str(&format!(", {tag} {n}"));
        }
        out.push_str(&format!(
            " ({} decisions, {} left without labels)\nwrote {} and {}\n",
            self.decisions, self.skipped_decisions, self.annotated, self.labels_file
        ));
        if let Some(note) = crate::report::sites::compiled_out_note(&self.file, &self.compiled_out)
        {
            out.push_str(&note);
            out.push('\n');
        }
        for f in &self.not_analysed {
            out.push_str(&format!(
                "warning: {f}: not analysed, its labels will stay unknown\n"
            ));
        }
        if let Some(e) = &self.compiler_rejects {
            out.push_str(&format!(
                "warning: {}: the compiler rejects the file (no build of it runs, and labels of what it rejects may not be the program's): {e}\n",
                self.file
            ));
        }
        out
    }
}

pub fn annotate(opts: &AnnotateOptions) -> Result<AnnotateReport> {
    let file = opts.file.as_path();
    let mut chosen: Vec<Criterion> = Vec::new();
    for c in &opts.criteria {
        if !chosen.contains(c) {
            chosen.push(*c);
        }
    }
    if !file.exists() {
        return Err(anyhow::anyhow!("{}: no such file", file.display()).into());
    }
    let source =
        std::fs::read(file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    if source.contains(&0) {
        return Err(anyhow::anyhow!(
            "{} does not look like C: it contains NUL bytes",
            file.display()
        )
        .into());
    }
    let mutators =
        covprune_encoders::parse_mutators(&opts.mutators).map_err(|e| anyhow::anyhow!(e))?;
    // The file must be C that the front end accepts, so that labels can be proved later; its
    // lowered form types the expressions that mutation changes.
    let loaded = frontend::load(file, &opts.preprocess)?;
    // Labels already there would share ids with the new ones: an annotated file (or
    // LAnnotate's output) is pruned as it is, not annotated again.
    let held = loaded
        .program
        .functions
        .iter()
        .map(|f| f.labels().count())
        .sum::<usize>();
    if held > 0 {
        return Err(super::Error::BadInput(anyhow::anyhow!(
            "{} already holds {} (pc_label statements): annotate the original source, or prune this file as it is",
            file.display(),
            crate::console::count(held as u64, "label")
        )));
    }
    let limits = covprune_encoders::Limits {
        mcc_max_atoms: opts.mcc_max_atoms,
        ncc_n: opts.ncc_n.max(1),
        pct_max_predicates: opts.pct_max_predicates,
        mutators,
    };
    let macros = frontend::macros::file_macros(file, &opts.preprocess);
    let annotated = crate::annotate::annotate_with_macros(
        &source,
        Some(&loaded.program),
        &macros,
        &chosen,
        &limits,
    );
    let dir = opts.out_dir.clone().unwrap_or_else(|| super::dir_of(file));
    std::fs::create_dir_all(&dir).map_err(|e| write_failed(&dir, e))?;
    let stem = file
        .file_stem()
        .map_or_else(|| "out".into(), |s| s.to_string_lossy().into_owned());
    let c_path = dir.join(format!("{stem}_labels.c"));
    let l_path = dir.join(format!("{stem}_labels.labels"));
    let origin = super::file_name(file);
    if !opts.force {
        refuse_measured(&l_path)?;
    }
    // Atomically: the shards of one project run may annotate the same files side by side.
    crate::report::labels::write_atomic(&c_path, &annotated.text)
        .map_err(|e| write_failed(&c_path, e))?;
    crate::report::labels::write_atomic(&l_path, crate::annotate::labels_file(&annotated, &origin))
        .map_err(|e| write_failed(&l_path, e))?;
    // Where the original and its headers are, so that the annotated file works from anywhere.
    let record = crate::report::build::BuildRecord::new(file, &opts.preprocess);
    let b_path = crate::report::build::path_of(&c_path);
    crate::report::labels::write_atomic(&b_path, record.to_json())
        .map_err(|e| write_failed(&b_path, e))?;
    let s_path = crate::report::sites::path_of(&c_path);
    crate::report::labels::write_atomic(
        &s_path,
        sites_record(file, &source, &annotated, &loaded.program).to_json(),
    )
    .map_err(|e| write_failed(&s_path, e))?;
    if chosen.iter().any(|c| c.has_hyperlabels()) {
        let h_path = crate::hyper::path_of(&c_path);
        crate::report::labels::write_atomic(&h_path, crate::annotate::hyperlabels_file(&annotated))
            .map_err(|e| write_failed(&h_path, e))?;
    }
    Ok(AnnotateReport {
        file: origin,
        labels: annotated.labels.len(),
        criteria: chosen
            .iter()
            .map(|c| (c.name().to_string(), annotated.count_of(*c)))
            .collect(),
        decisions: annotated.decisions,
        skipped_decisions: annotated.skipped.len(),
        functions: annotated.functions,
        annotated: c_path.display().to_string(),
        labels_file: l_path.display().to_string(),
        hyperlabels: annotated.hyperlabels.len(),
        compiled_out: crate::report::sites::compiled_out_labels(&annotated.compiled_out),
        not_analysed: loaded
            .program
            .skipped
            .iter()
            .map(|f| {
                format!(
                    "{}: {}: {}",
                    loaded.program.fmt_loc(f.loc),
                    f.name,
                    f.reason
                )
            })
            .collect(),
        per_tag: annotated.counts(),
        compiler_rejects: frontend::preprocess::compiler_rejects(file, &opts.preprocess),
    })
}

/// Fails when `path` is a labels file whose rows record measured coverage (covered labels, or
/// the tests that covered them): annotating again would lose it.
fn refuse_measured(path: &std::path::Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let Ok(existing) = crate::report::labels::read(path) else {
        return Ok(());
    };
    let measured = existing.rows.iter().filter(|r| r.is_measured()).count();
    if measured > 0 {
        return Err(anyhow::anyhow!(
            "{} records measured coverage ({}): annotating again would replace it; write elsewhere with -o DIR, or pass --force",
            path.display(),
            crate::console::count(measured as u64, "covered label")
        )
        .into());
    }
    Ok(())
}

/// Where each label's objective is in the original file, and which functions are external.
fn sites_record(
    file: &std::path::Path,
    source: &[u8],
    annotated: &crate::annotate::Annotated,
    program: &crate::ir::Program,
) -> crate::report::sites::SitesRecord {
    use crate::report::sites::{
        ConditionSpan, DecisionSpan, FunctionSite, LabelSite, MutantSite, SitesRecord,
    };
    let lines = crate::frontend::source::Lines::new(source);
    SitesRecord {
        schema: crate::report::sites::SCHEMA.to_string(),
        original: file.canonicalize().unwrap_or_else(|_| file.to_path_buf()),
        original_digest: SitesRecord::digest(source),
        functions: annotated
            .function_names
            .iter()
            .map(|name| FunctionSite {
                name: name.clone(),
                external: program
                    .function(name)
                    .is_some_and(|f| f.linkage == crate::ir::Linkage::External),
            })
            .collect(),
        labels: annotated
            .labels
            .iter()
            .map(|l| LabelSite {
                id: l.id,
                tag: l.tag.clone(),
                line: l.line,
                function: l.function,
                decision: l.decision.as_ref().map(|d| DecisionSpan {
                    index: d.index,
                    atoms: d.atoms,
                    start: d.span.map(|s| lines.line_col(s.0)),
                    end: d.span.map(|s| lines.line_col(s.1.saturating_sub(1))),
                    conditions: d
                        .leaves
                        .iter()
                        .map(|leaf| ConditionSpan {
                            start: lines.line_col(leaf.range.0),
                            end: lines.line_col(leaf.range.1.saturating_sub(1)),
                            negated: leaf.negated,
                        })
                        .collect(),
                }),
                outcome: l.outcome.map(|o| (o.atom, o.value)),
                mutant: l.replacement.and_then(|r| {
                    let (from, to) = r.at?;
                    let token = String::from_utf8_lossy(source.get(from..to)?).into_owned();
                    // `x++`: what comes before the token is the operand.
                    let before = source[..from].trim_ascii_end();
                    let postfix = matches!(token.as_str(), "++" | "--")
                        && before
                            .last()
                            .is_some_and(|b| b.is_ascii_alphanumeric() || b"_)]".contains(b));
                    Some(MutantSite {
                        token,
                        postfix,
                        from: r.from.c().to_string(),
                        to: r.to.c().to_string(),
                        start: lines.line_col(from),
                        end: lines.line_col(to.saturating_sub(1)),
                    })
                }),
            })
            .collect(),
        compiled_out: crate::report::sites::compiled_out_labels(&annotated.compiled_out),
    }
}
