//! Annotation: inserts `pc_label(pred, id, "TAG");` statements for the chosen criteria into a
//! C source, leaving everything else byte for byte as it was, and lists the labels.
//!
//! Labels go before each `if` (in a new block when the `if` is the branch or body of another
//! statement); loops are rewritten so that labels run before every evaluation of the condition:
//! `while (c) S` becomes `while (1) { labels if (!(c)) break; S }`, and `for (i; c; s) S`
//! becomes `for (i; ; s) { labels if (!(c)) break; S }` (a `continue` still reaches `s` and the
//! labels). Decisions whose evaluation has effects are left alone (see `Sites`).

use std::collections::BTreeMap;

use covprune_encoders::{Criterion, Decision, LabelSpec, Limits};

use crate::frontend::sites::{self, DecisionKind};

pub const HEADER: &str =
    "/* Annotated by covprune */\n#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\n";

/// One label as written, for the `.labels` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelRecord {
    pub id: u64,
    pub tag: String,
    /// Line of the statement in the original file.
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Annotated {
    /// The annotated file: the original bytes plus insertions (non-UTF-8 bytes are kept).
    pub text: Vec<u8>,
    pub labels: Vec<LabelRecord>,
    /// (line, why) of decisions left without labels.
    pub skipped: Vec<(usize, String)>,
    pub functions: usize,
    pub decisions: usize,
}

impl Annotated {
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for l in &self.labels {
            *m.entry(l.tag.clone()).or_default() += 1;
        }
        m
    }
}

/// An insertion (start == end) or replacement of the original text.
struct Edit {
    start: usize,
    end: usize,
    /// Order among edits at one position: closings (deepest first) before openings
    /// (shallowest first).
    key: (u8, i64),
    text: String,
}

fn label_stmt(l: &LabelSpec, id: u64) -> String {
    format!("pc_label({}, {id}, \"{}\"); ", l.predicate, l.tag)
}

pub fn annotate(source: &[u8], criteria: &[Criterion], limits: &Limits) -> Annotated {
    let found = sites::find(source);
    let mut out = Annotated {
        skipped: found.skipped_decisions.clone(),
        functions: found.functions.len(),
        decisions: found.decisions.len(),
        ..Annotated::default()
    };
    // Sites in source order: functions (at their body) and decisions (at their statement).
    enum Site<'a> {
        Function(&'a sites::FunctionSite),
        Decision(&'a sites::DecisionSite),
    }
    let mut all: Vec<(usize, Site)> = found
        .functions
        .iter()
        .map(|f| (f.body_start, Site::Function(f)))
        .chain(
            found
                .decisions
                .iter()
                .map(|d| (d.stmt.0, Site::Decision(d))),
        )
        .collect();
    all.sort_by_key(|(pos, _)| *pos);
    let mut edits: Vec<Edit> = Vec::new();
    let mut next_id: u64 = 1;
    let mut take = |specs: Vec<LabelSpec>, line: usize, out: &mut Annotated| -> String {
        let mut s = String::new();
        for l in specs {
            s.push_str(&label_stmt(&l, next_id));
            out.labels.push(LabelRecord {
                id: next_id,
                tag: l.tag,
                line,
            });
            next_id += 1;
        }
        s
    };
    for (_, site) in &all {
        match site {
            Site::Function(f) => {
                let specs: Vec<LabelSpec> =
                    criteria.iter().flat_map(|c| c.function_labels()).collect();
                if specs.is_empty() {
                    continue;
                }
                let text = take(specs, f.line, &mut out);
                edits.push(Edit {
                    start: f.body_start,
                    end: f.body_start,
                    key: (1, 0),
                    text: format!(" {}", text.trim_end()),
                });
            }
            Site::Decision(d) => {
                let decision = Decision {
                    cond: d.cond.clone(),
                };
                let specs: Vec<LabelSpec> = criteria
                    .iter()
                    .flat_map(|c| c.decision_labels(&decision, limits))
                    .collect();
                if specs.is_empty() {
                    continue;
                }
                let labels = take(specs, d.line, &mut out);
                let depth = d.depth as i64;
                match d.kind {
                    DecisionKind::If => {
                        let (open, close) = if d.needs_block {
                            (format!("{{ {labels}"), " }".to_string())
                        } else {
                            (labels, String::new())
                        };
                        edits.push(Edit {
                            start: d.stmt.0,
                            end: d.stmt.0,
                            key: (1, depth),
                            text: open,
                        });
                        if !close.is_empty() {
                            edits.push(Edit {
                                start: d.stmt.1,
                                end: d.stmt.1,
                                key: (0, -depth),
                                text: close,
                            });
                        }
                    }
                    DecisionKind::While | DecisionKind::For => {
                        let replacement = if d.kind == DecisionKind::While {
                            "(1)"
                        } else {
                            ""
                        };
                        edits.push(Edit {
                            start: d.cond_range.0,
                            end: d.cond_range.1,
                            key: (1, depth),
                            text: replacement.to_string(),
                        });
                        edits.push(Edit {
                            start: d.body.0,
                            end: d.body.0,
                            key: (1, depth),
                            text: format!("{{ {labels}if (!({})) break; ", d.cond_text),
                        });
                        edits.push(Edit {
                            start: d.body.1,
                            end: d.body.1,
                            key: (0, -depth),
                            text: " }".to_string(),
                        });
                    }
                }
            }
        }
    }
    edits.sort_by_key(|e| (e.start, e.key));
    let mut text = Vec::with_capacity(source.len() + HEADER.len() + 64 * out.labels.len());
    text.extend_from_slice(HEADER.as_bytes());
    let mut pos = 0;
    for e in &edits {
        if e.start < pos {
            continue; // overlapping edits cannot happen for well-formed sites
        }
        text.extend_from_slice(&source[pos..e.start]);
        text.extend_from_slice(e.text.as_bytes());
        pos = e.end;
    }
    text.extend_from_slice(&source[pos..]);
    out.text = text;
    out
}

/// The `.labels` file of an annotation, in LTest's format.
pub fn labels_file(annotated: &Annotated, origin_file: &str) -> String {
    let mut out = String::from(crate::report::labels::COLUMNS);
    out.push('\n');
    for l in &annotated.labels {
        out.push_str(&format!(
            "{}, unknown, {}, {origin_file}:{}, , covprune, , 0.\n",
            l.id, l.tag, l.line
        ));
    }
    out
}
