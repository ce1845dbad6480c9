//! The inspection commands: `parse` (front-end statistics), `cfg` (DOT), `ir`, `callgraph`,
//! `criteria`, `export-acsl` (the obligations for Frama-C's WP) and `runtime` (the recording
//! runtime, for builds run by hand).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{write_failed, Result};
use crate::cfg::{callgraph::CallGraph, Cfg};
use crate::frontend::PreprocessOptions;
use crate::ir::Program;
use crate::report::ParseReport;

/// `parse`: the front end's report, and every diagnostic as text.
pub fn parse(file: &Path, opts: &PreprocessOptions) -> Result<(ParseReport, String)> {
    let loaded = super::load(file, opts)?;
    let report = ParseReport::new(&file.display().to_string(), &loaded.program, &loaded.stats);
    Ok((report, crate::report::diagnostics_text(&loaded.program)))
}

fn no_function(file: &Path, program: &Program, name: &str) -> super::Error {
    let note = program
        .skipped
        .iter()
        .find(|s| s.name == name)
        .map(|s| format!(" (it was skipped: {})", s.reason))
        .unwrap_or_default();
    anyhow::anyhow!(
        "{}: no lowered function named `{name}`{note}",
        file.display()
    )
    .into()
}

/// `cfg`: one function's control-flow graph as Graphviz DOT.
pub fn cfg(file: &Path, function: &str, opts: &PreprocessOptions) -> Result<String> {
    let loaded = super::load(file, opts)?;
    let program = &loaded.program;
    let Some(f) = program.function(function) else {
        return Err(no_function(file, program, function));
    };
    let cg = CallGraph::build(program);
    let cfg = Cfg::build(f, &|n| cg.may_not_return(n));
    Ok(crate::cfg::to_dot(program, f, &cfg))
}

/// `ir`: the lowered IR of one function, or of every one.
pub fn ir(file: &Path, function: Option<&str>, opts: &PreprocessOptions) -> Result<String> {
    let loaded = super::load(file, opts)?;
    let program = &loaded.program;
    let mut out = String::new();
    match function {
        Some(name) => {
            let Some(f) = program.function(name) else {
                return Err(no_function(file, program, name));
            };
            out.push_str(&crate::ir::display::function_to_string(program, f));
        }
        None => {
            for f in &program.functions {
                out.push_str(&crate::ir::display::function_to_string(program, f));
                out.push('\n');
            }
        }
    }
    Ok(out)
}

/// `callgraph`: every function with its flags, call sites and callees, sorted by name.
pub fn callgraph(file: &Path, opts: &PreprocessOptions) -> Result<String> {
    let loaded = super::load(file, opts)?;
    let program = &loaded.program;
    let cg = CallGraph::build(program);
    let mut out = String::new();
    let mut names: Vec<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    for name in names {
        let Some(node) = cg.node(name) else { continue };
        let mut flags = Vec::new();
        if node.linkage == crate::ir::Linkage::Internal {
            flags.push("static");
        }
        if node.address_taken {
            flags.push("address-taken");
        }
        if cg.never_returns.contains(name) {
            flags.push("never-returns");
        } else if cg.may_not_return(name) {
            flags.push("may-stop");
        }
        out.push_str(&format!(
            "{name} [{}] call sites: {}\n",
            flags.join(", "),
            cg.call_sites(name)
        ));
        for (callee, n) in cg.callees(name) {
            out.push_str(&format!("  -> {callee} x{n}\n"));
        }
    }
    Ok(out)
}

/// `criteria`: one line per criterion.
pub fn criteria() -> String {
    covprune_encoders::Criterion::ALL
        .iter()
        .map(|c| format!("{:<5} {}\n", c.name(), c.description()))
        .collect()
}

#[derive(Clone, Debug)]
pub struct ExportOptions {
    pub file: PathBuf,
    pub step: u8,
    pub output: Option<PathBuf>,
    pub assert: bool,
    pub keep_line_markers: bool,
}

#[derive(Debug, Serialize)]
pub struct ExportReport {
    pub file: String,
    pub output: String,
    pub step: u8,
    pub obligations: Vec<crate::report::acsl::Obligation>,
    pub skipped: usize,
    #[serde(skip)]
    pub skipped_labels: Vec<(String, String)>,
    #[serde(skip)]
    pub assert: bool,
}

impl ExportReport {
    pub fn to_text(&self) -> String {
        format!(
            "wrote {}: {} obligations (step {}: {} {}), {} labels not exported\n",
            self.output,
            self.obligations.len(),
            self.step,
            if self.assert { "assert" } else { "check" },
            if self.step == 1 { "!(p)" } else { "p" },
            self.skipped
        )
    }
}

/// `export-acsl`: writes the labels as ACSL assertions for Frama-C's WP.
pub fn export_acsl(opts: &ExportOptions) -> Result<ExportReport> {
    use crate::report::acsl;
    if !(1..=2).contains(&opts.step) {
        return Err(anyhow::anyhow!(
            "--step takes 1 or 2 (step 3 compares labels pairwise and has no one-assertion form)"
        )
        .into());
    }
    // Latin-1 files are exported byte for byte, like the other commands read them.
    let bytes = std::fs::read(&opts.file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", opts.file.display()))?;
    let (text, latin1) = crate::frontend::decode_text(&bytes);
    let exported = acsl::export(
        &text,
        &acsl::AcslOptions {
            step: opts.step,
            assert: opts.assert,
            keep_line_markers: opts.keep_line_markers,
        },
    );
    if exported.obligations.is_empty() {
        return Err(anyhow::anyhow!(
            "{} has no pc_label statements to export",
            opts.file.display()
        )
        .into());
    }
    let out = opts.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!("{}.acsl.c", opts.file.with_extension("").display()))
    });
    crate::report::labels::write_atomic(&out, crate::frontend::encode_text(&exported.text, latin1))
        .map_err(|e| write_failed(&out, e))?;
    Ok(ExportReport {
        file: opts.file.display().to_string(),
        output: out.display().to_string(),
        step: opts.step,
        skipped: exported.skipped.len(),
        obligations: exported.obligations,
        skipped_labels: exported.skipped,
        assert: opts.assert,
    })
}

#[derive(Debug, Serialize)]
pub struct RuntimeReport {
    pub header: String,
    pub source: String,
    /// Files that were there with these bytes already (left as they were).
    pub unchanged: Vec<String>,
}

impl RuntimeReport {
    pub fn to_text(&self) -> String {
        format!(
            "wrote {} and {}{}\nbuild the annotated files with `-include {}`, link {}, and run with COVPRUNE_RECORD=FILE to record each label reached (R id) and covered (C id)\n",
            self.header,
            self.source,
            if self.unchanged.is_empty() {
                String::new()
            } else {
                format!(" ({} already there, the same)", self.unchanged.join(", "))
            },
            self.header,
            self.source
        )
    }
}

/// `runtime`: writes the recording runtime that `measure` builds annotated programs with
/// (`covprune_runtime.h`, `covprune_runtime.c`) into `dir`. A file of that name with other
/// bytes is not replaced: the command fails and writes nothing.
pub fn runtime(dir: &Path) -> Result<RuntimeReport> {
    use crate::measure::runtime::{HEADER, SOURCE};
    let files = [
        (dir.join("covprune_runtime.h"), HEADER),
        (dir.join("covprune_runtime.c"), SOURCE),
    ];
    let mut unchanged = Vec::new();
    for (path, text) in &files {
        match std::fs::read(path) {
            Ok(old) if old == text.as_bytes() => unchanged.push(path.display().to_string()),
            Ok(_) => {
                return Err(anyhow::anyhow!(
                    "{} exists with other contents; remove it or choose another directory",
                    path.display()
                )
                .into())
            }
            Err(_) => {}
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| write_failed(dir, e))?;
    for (path, text) in &files {
        crate::report::labels::write_atomic(path, text.as_bytes())
            .map_err(|e| write_failed(path, e))?;
    }
    Ok(RuntimeReport {
        header: files[0].0.display().to_string(),
        source: files[1].0.display().to_string(),
        unchanged,
    })
}
