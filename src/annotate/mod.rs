//! Annotation: inserts `pc_label(pred, id, "TAG");` statements for the chosen criteria into a
//! C source, leaving everything else byte for byte as it was, and lists the labels (and the
//! hyperlabels of CACC, RACC and FCC).
//!
//! Labels go before the statement they observe (in a new block when the statement is the
//! branch or body of another statement); loops are rewritten so that labels run before every
//! evaluation of the condition: `while (c) S` becomes `while (1) { labels if (!(c)) break; S }`,
//! and `for (i; c; s) S` becomes `for (i; ; s) { labels if (!(c)) break; S update-labels }`
//! (a `continue` still reaches `s`; update labels are only written when the body has no
//! `continue`), and `do S while (c);` becomes `do { S labels if (!(c)) break; } while (1);`
//! with the loop's `continue`s turned into `goto`s to the labels. Statement coverage adds
//! labels at branch heads and an `else` where an `if` has none.
//!
//! Decisions are those of Frama-C's normal form (`frontend::sites::decisions`): a condition
//! with calls or side effects is evaluated once before its statement into `int` temporaries,
//! declared at the function's entry, and the statement reads them; `?:` conditions and `&&`/`||`
//! with effects in assignments, returns and initialisers are decisions too.

mod dataflow;
mod edits;
mod loops;
mod writer;

use std::collections::{BTreeMap, BTreeSet};

use covprune_encoders::{Criterion, Decision, LabelSpec, Limits, Placement};

use crate::frontend::macros::FileMacros;
use crate::frontend::sites::{self, Branch, Hoist, StmtKind, StmtSite};
use crate::ir::Program;
use edits::{apply, head, place_before, Edit, Edits, REPLACE};
use loops::{hoisted_evaluation, loop_labels, unparenthesised};
use writer::{label_stmt, Writer};

pub const HEADER: &str = "/* Annotated by covprune */\n#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\n#ifndef pc_label_bindings\n#define pc_label_bindings(...) do{}while(0)\n#endif\n";

/// One label as written, for the `.labels` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelRecord {
    pub id: u64,
    pub tag: String,
    /// Line of the statement in the original file (the first one for a label written at
    /// several places).
    pub line: usize,
    /// The function it is in (index into the file's functions, in text order).
    pub function: Option<usize>,
    /// For a label of a decision criterion: the decision it observes.
    pub decision: Option<DecisionSite>,
    /// For a condition-coverage label: the atom outcome it stands for.
    pub outcome: Option<covprune_encoders::Outcome>,
    /// For a mutant that replaces a binary operator: which, by which, and where.
    pub replacement: Option<covprune_encoders::Replacement>,
}

/// A decision as the annotator labels it: its number in the file (text order), its number
/// of atoms, and the byte range of its atoms in the original file (None for a decision of a
/// macro's expansion), and its atoms as conditions of clang's coverage (empty for a macro's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionSite {
    pub index: usize,
    pub atoms: usize,
    pub span: Option<(usize, usize)>,
    pub leaves: Vec<crate::frontend::sites::Leaf>,
}

#[derive(Clone, Debug, Default)]
pub struct Annotated {
    /// The annotated file: the original bytes plus insertions (non-UTF-8 bytes are kept).
    pub text: Vec<u8>,
    pub labels: Vec<LabelRecord>,
    /// Lines of the `.hyperlabels` file (empty when no criterion has hyperlabels).
    pub hyperlabels: Vec<String>,
    /// (line, why) of places left without labels.
    pub skipped: Vec<(usize, String)>,
    pub functions: usize,
    pub decisions: usize,
    /// The names of the file's functions, in text order.
    pub function_names: Vec<String>,
    /// (line, tag) of the labels the file would have in the code this configuration compiles
    /// out: not objectives, not written.
    pub compiled_out: Vec<(usize, String)>,
}

impl Annotated {
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for l in &self.labels {
            *m.entry(l.tag.clone()).or_default() += 1;
        }
        m
    }

    /// Labels per criterion (a tag's first word, so `WM ROR` counts under `WM`).
    pub fn count_of(&self, c: Criterion) -> usize {
        self.labels
            .iter()
            .filter(|l| l.tag.split(' ').next() == Some(c.name()))
            .count()
    }
}

pub fn annotate(
    source: &[u8],
    program: Option<&Program>,
    criteria: &[Criterion],
    limits: &Limits,
) -> Annotated {
    annotate_with_macros(source, program, &FileMacros::default(), criteria, limits)
}

/// [`annotate`], with the macros the file sees: the `?:` of conditional ones are decisions
/// too, and constant ones are constants for mutation.
pub fn annotate_with_macros(
    source: &[u8],
    program: Option<&Program>,
    macros: &FileMacros,
    criteria: &[Criterion],
    limits: &Limits,
) -> Annotated {
    let def_uses = criteria.iter().any(|c| c.def_use().is_some());
    let found = sites::find_with_macros(source, program, macros, def_uses);
    let mut out = write_labels(source, &found, criteria, limits);
    if !macros.compiled_out.is_empty() {
        // The labels the dropped code would have: those of the same file annotated with
        // nothing compiled out, at its lines.
        let every = FileMacros {
            compiled_out: Default::default(),
            ..macros.clone()
        };
        let all = sites::find_with_macros(source, program, &every, def_uses);
        let all = write_labels(source, &all, criteria, limits);
        out.compiled_out = all
            .labels
            .into_iter()
            .filter(|l| macros.compiled_out.contains_line(l.line))
            .map(|l| (l.line, l.tag))
            .collect();
        out.compiled_out.sort();
    }
    out
}

/// The labels of the sites `found`, written into `source`.
fn write_labels(
    source: &[u8],
    found: &sites::Sites,
    criteria: &[Criterion],
    limits: &Limits,
) -> Annotated {
    let mut out = Annotated {
        skipped: found.skipped.clone(),
        functions: found.functions.len(),
        decisions: found.decisions(),
        function_names: found.functions.iter().map(|f| f.name.clone()).collect(),
        ..Annotated::default()
    };
    let w = Writer {
        next_id: 1,
        next_hyper: 0,
        next_decision: 0,
        function: None,
        out: &mut out,
        fcc: Vec::new(),
    };
    // Data-flow criteria: ghost flags per definition, labels before uses.
    let du = dataflow::DefUsePlan::new(
        criteria.iter().filter_map(|c| c.def_use()).collect(),
        found,
        &mut w.out.skipped,
    );
    let has = |p: Placement| criteria.iter().any(|c| c.placement() == p);
    let mut l = Labeller {
        found,
        criteria,
        limits,
        by_range: found
            .statements
            .iter()
            .enumerate()
            .map(|(i, s)| (s.range, i))
            .collect(),
        stmt_cov: has(Placement::Statement),
        calls: has(Placement::Call),
        stmt_labels: criteria.iter().flat_map(|c| c.statement_labels()).collect(),
        direct: direct_returns(found),
        w,
        edits: Edits::default(),
        du,
        values_applied: BTreeSet::new(),
        temps: BTreeMap::new(),
        return_ids: BTreeMap::new(),
    };
    for (_, is_stmt, i) in source_order(found) {
        l.w.function = Some(if is_stmt {
            found.statements[i].function
        } else {
            i
        });
        if is_stmt {
            l.statement(i);
        } else {
            entry_labels(&found.functions[i], criteria, &mut l.w, &mut l.edits);
        }
    }
    let Labeller {
        mut w,
        mut edits,
        mut du,
        values_applied,
        temps,
        ..
    } = l;
    declare(found, temps, &mut du, &mut edits);
    du.hyperlabels(&mut w);
    for ((_, _), ids) in std::mem::take(&mut w.fcc) {
        w.next_hyper += 1;
        let members: Vec<String> = ids.iter().map(|id| format!("l{id}")).collect();
        w.out
            .hyperlabels
            .push(format!("{}) <{}|; ;>,", w.next_hyper, members.join("+")));
    }
    place_before(found, &values_applied, &mut edits);
    out.text = apply(edits.edits, source, out.labels.len());
    out
}

/// What labelling one file carries from statement to statement.
struct Labeller<'f, 'o> {
    found: &'f sites::Sites,
    criteria: &'f [Criterion],
    limits: &'f Limits,
    /// Each statement's index, by its range.
    by_range: BTreeMap<(usize, usize), usize>,
    /// Statement coverage is asked for, with these labels at each block head.
    stmt_cov: bool,
    stmt_labels: Vec<LabelSpec>,
    /// FCC is asked for.
    calls: bool,
    /// Returns that get no return-value label ([`direct_returns`]).
    direct: BTreeSet<usize>,
    w: Writer<'o>,
    edits: Edits,
    du: dataflow::DefUsePlan,
    /// Statements whose call values were hoisted (they need a block of their own).
    values_applied: BTreeSet<usize>,
    /// Temporaries of hoisted conditions, declared at their function's entry.
    temps: BTreeMap<usize, Vec<String>>,
    /// Return-value labels: one id per (function, criterion), written at every return.
    return_ids: BTreeMap<(usize, Criterion), u64>,
}

impl Labeller<'_, '_> {
    /// The labels of statement `i`: before it, in it, after it, or in its rewritten loop.
    fn statement(&mut self, i: usize) {
        let (found, criteria, limits) = (self.found, self.criteria, self.limits);
        let by_range = &self.by_range;
        let head_ok = |b: &Branch| head_ok(found, by_range, b);
        let head = |b: &Branch, owner_depth: usize, text: String, edits: &mut Edits| {
            head(by_range, b, owner_depth, text, edits)
        };
        let s = &found.statements[i];
        let func = &found.functions[s.function];
        let depth = s.depth as i64;
        let is_loop = matches!(s.kind, StmtKind::While | StmtKind::For | StmtKind::Do);
        let before_ok = can_before(s);
        // Labels of the condition go before the statement, or inside a rewritten loop.
        let cond_ok = if is_loop {
            s.reliable && s.body.is_some()
        } else {
            before_ok
        };
        let mut before = String::new();
        // Calls (FCC), then PCT, then what observes the statement itself.
        if self.calls && before_ok {
            before.push_str(&call_labels(s, &func.name, criteria, &mut self.w));
        }
        if before_ok
            && s.block_item
            && !matches!(
                s.kind,
                StmtKind::Declaration | StmtKind::Labeled | StmtKind::Case
            )
        {
            let specs: Vec<LabelSpec> = criteria
                .iter()
                .flat_map(|c| c.function_statement_labels(&func.predicates, limits))
                .collect();
            before.push_str(&self.w.write(&specs, s.line, 0).0);
        }
        // Labels observing the decisions: decision criteria, each decision in turn.
        let hoist = s.plan.hoist.as_ref().filter(|_| cond_ok);
        // The hoisted evaluation first: its labels come first in the text.
        let evaluation =
            hoist.map(|h| hoisted_evaluation(h, criteria, limits, &mut self.w, s.line));
        let mut cond_labels = if cond_ok {
            decision_labels(s, hoist.is_some(), criteria, limits, &mut self.w)
        } else {
            String::new()
        };
        if let Some(h) = hoist {
            self.temps
                .entry(s.function)
                .or_default()
                .extend(h.temps.iter().cloned());
            self.edits.edits.push(hoist_edit(s, h, is_loop));
            if !(s.labels_after || is_loop) {
                let eval = evaluation.clone().unwrap_or_default();
                cond_labels = format!("{eval}{cond_labels}");
            }
        }
        let mut expr_labels = String::new();
        for e in s.exprs.iter().filter(|_| cond_ok) {
            let specs: Vec<LabelSpec> = criteria
                .iter()
                .flat_map(|c| c.expression_labels(e, limits))
                .collect();
            expr_labels.push_str(&self.w.write(&specs, s.line, 0).0);
        }
        if s.labels_after {
            self.edits
                .insert(s.range.1, (1, 2 * depth + 1), format!(" {cond_labels}"));
        } else if !is_loop {
            before.push_str(&cond_labels);
            before.push_str(&expr_labels);
        }
        // Calls the statement computes with, evaluated first into their temporaries, when
        // labels read them.
        let values = s
            .values
            .as_ref()
            .filter(|_| before_ok && !expr_labels.is_empty());
        if let Some(v) = values {
            for (range, name) in &v.calls {
                self.edits.edits.push(Edit {
                    start: range.0,
                    end: range.1,
                    key: REPLACE,
                    text: name.clone(),
                });
            }
            self.values_applied.insert(i);
        }
        if let (StmtKind::Return, Some(v)) = (s.kind, &s.return_value) {
            // A returned value that reads temporaries needs them.
            if func.returns_arith
                && (s.values.is_none() || values.is_some())
                && before_ok
                && !self.direct.contains(&i)
                && !non_negative_literal(v)
            {
                let labels =
                    return_labels(s, v, criteria, limits, &mut self.return_ids, &mut self.w);
                before.push_str(&labels);
            }
        }
        if self.stmt_cov && before_ok && matches!(s.kind, StmtKind::Return | StmtKind::Goto) {
            before.push_str(&self.w.write(&self.stmt_labels, s.line, 0).0);
        }
        before.push_str(&self.du.before(i, s.line, &mut self.w));
        if let Some(v) = values {
            before.insert_str(0, &v.decls);
        }
        if !before.is_empty() {
            self.edits.before.entry(i).or_default().push_str(&before);
        }
        // Statement coverage inside the statement: branch heads, `else`, after `:`.
        if self.stmt_cov {
            branch_heads(
                s,
                &self.stmt_labels,
                &mut self.w,
                &mut self.edits,
                &head,
                &head_ok,
            );
        }
        if is_loop {
            loop_labels(
                s,
                hoist,
                evaluation.as_deref().unwrap_or(""),
                &cond_labels,
                &expr_labels,
                self.stmt_cov,
                &self.stmt_labels,
                criteria,
                limits,
                &mut self.w,
                &mut self.edits,
                &head,
                &head_ok,
            );
        }
    }
}

/// Can labels go before statement `s` (in a block of their own where it needs one)?
fn can_before(s: &StmtSite) -> bool {
    if s.needs_block {
        s.reliable
    } else {
        s.safe_before
    }
}

/// A branch head: after `{` of a block, or before a single statement (wrapped); false when
/// labels cannot go there.
fn head_ok(found: &sites::Sites, by_range: &BTreeMap<(usize, usize), usize>, b: &Branch) -> bool {
    !found.compiled_out.contains(b.range.0)
        && (b.compound
            || by_range
                .get(&b.range)
                .is_some_and(|&i| can_before(&found.statements[i])))
}

/// The labels at a function's entry (FC, and STMT's first block).
fn entry_labels(
    f: &sites::FunctionSite,
    criteria: &[Criterion],
    w: &mut Writer,
    edits: &mut Edits,
) {
    let specs: Vec<LabelSpec> = criteria
        .iter()
        .flat_map(|c| {
            let mut v = c.function_labels();
            v.extend(c.statement_labels());
            v
        })
        .collect();
    if !specs.is_empty() {
        let (text, _) = w.write(&specs, f.line, 0);
        edits.insert(f.body_start, (1, 1), format!(" {}", text.trim_end()));
    }
}

/// The text that replaces a hoisted condition: its evaluation, where labels go after the
/// statement; nothing in a loop, whose condition is rewritten whole ([`loop_labels`]); else
/// the condition reading its temporaries.
fn hoist_edit(s: &StmtSite, h: &Hoist, is_loop: bool) -> Edit {
    Edit {
        start: h.range.0,
        end: h.range.1,
        key: REPLACE,
        text: if s.labels_after {
            h.eval.clone()
        } else if is_loop {
            String::new()
        } else {
            h.replacement.clone()
        },
    }
}

/// The labels on the value return statement `s` returns: one id per function and criterion,
/// the same at every return.
fn return_labels(
    s: &StmtSite,
    value: &str,
    criteria: &[Criterion],
    limits: &Limits,
    return_ids: &mut BTreeMap<(usize, Criterion), u64>,
    w: &mut Writer,
) -> String {
    let mut out = String::new();
    for c in criteria {
        if let Some(spec) = c.return_value_label(value, limits) {
            let id = *return_ids
                .entry((s.function, *c))
                .or_insert_with(|| w.new_id(&spec.tag, s.line));
            out.push_str(&label_stmt(&spec, id, 0));
        }
    }
    out
}

/// The returns Frama-C writes as they are: a plain variable returned by a function's only
/// return, its last statement. Elsewhere it assigns LAnnotate's `__retres`, which gets the ABS
/// label.
fn direct_returns(found: &sites::Sites) -> BTreeSet<usize> {
    let mut returns: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut last_top: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, s) in found.statements.iter().enumerate() {
        if s.kind == StmtKind::Return {
            returns.entry(s.function).or_default().push(i);
        }
        if s.depth == 1 && s.block_item {
            last_top.insert(s.function, i);
        }
    }
    (0..found.statements.len())
        .filter(|&i| {
            let s = &found.statements[i];
            returns.get(&s.function).is_some_and(|r| r.len() == 1)
                && last_top.get(&s.function) == Some(&i)
                && s.return_value.as_deref().is_some_and(is_identifier)
        })
        .collect()
}

/// Functions (`false`) and statements (`true`) in source order, so that ids follow the text.
fn source_order(found: &sites::Sites) -> Vec<(usize, bool, usize)> {
    let mut order: Vec<(usize, bool, usize)> = found
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| (f.body_start, false, i))
        .chain(
            found
                .statements
                .iter()
                .enumerate()
                .map(|(i, s)| (s.range.0, true, i)),
        )
        .collect();
    order.sort();
    order
}

/// FCC's labels before each call of statement `s`, their ids kept by (caller, callee) for
/// the hyperlabels.
fn call_labels(s: &StmtSite, caller: &str, criteria: &[Criterion], w: &mut Writer) -> String {
    let mut out = String::new();
    for callee in &s.calls {
        let specs: Vec<LabelSpec> = criteria.iter().flat_map(|c| c.call_labels()).collect();
        let (t, ids) = w.write(&specs, s.line, 0);
        out.push_str(&t);
        let key = (caller.to_string(), callee.clone());
        match w.fcc.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.extend(ids),
            None => w.fcc.push((key, ids)),
        }
    }
    out
}

/// The labels of a statement's decisions, each decision in turn, every criterion's; the
/// statement's own condition carries its expression tree (for boundary labels) when it was not
/// `hoisted`.
fn decision_labels(
    s: &StmtSite,
    hoisted: bool,
    criteria: &[Criterion],
    limits: &Limits,
    w: &mut Writer,
) -> String {
    let mut cond_labels = String::new();
    for (k, pd) in s.plan.decisions.iter().enumerate() {
        let site = DecisionSite {
            index: w.next_decision,
            atoms: pd.cond.atoms().len(),
            span: pd.span,
            leaves: pd.leaves.clone(),
        };
        w.next_decision += 1;
        let mut d = Decision::new(pd.cond.clone());
        // Boundary labels need the condition's expression tree: the statement's own
        // condition when it was not hoisted.
        if k == 0 && !hoisted {
            d.expr = s.decision.as_ref().map(|c| c.expr.clone());
        }
        d.guards = pd.guard.iter().cloned().collect();
        d.atom_guards = pd.atom_guards.clone();
        for c in criteria {
            let specs = c.decision_labels(&d, limits);
            let base = w.next_hyper;
            let (t, ids) = w.write(&specs, s.line, base);
            let n = ids.len();
            let from = w.out.labels.len() - n;
            for r in &mut w.out.labels[from..] {
                r.decision = Some(site.clone());
            }
            cond_labels.push_str(&t);
            for h in c.decision_hyperlabels(&d) {
                w.next_hyper += 1;
                w.out
                    .hyperlabels
                    .push(format!("{}) {},", w.next_hyper, h.text(&ids)));
            }
        }
    }
    cond_labels
}

/// Statement coverage inside statement `s`: its branches' heads, an `else` added to an `if`
/// without one, after the `:` of a label or case.
fn branch_heads(
    s: &StmtSite,
    stmt_labels: &[LabelSpec],
    w: &mut Writer,
    edits: &mut Edits,
    head: &dyn Fn(&Branch, usize, String, &mut Edits),
    head_ok: &dyn Fn(&Branch) -> bool,
) {
    let depth = s.depth as i64;
    match s.kind {
        StmtKind::If if s.reliable => {
            if let Some(b) = s.consequence.as_ref().filter(|b| head_ok(b)) {
                let t = w.write(stmt_labels, s.line, 0).0;
                head(b, s.depth, t, edits);
            }
            match &s.alternative {
                Some(b) if !head_ok(b) => {}
                Some(b) => {
                    let t = w.write(stmt_labels, s.line, 0).0;
                    head(b, s.depth, t, edits);
                }
                None => {
                    let t = w.write(stmt_labels, s.line, 0).0;
                    edits.insert(
                        s.range.1,
                        (0, -(2 * depth + 1)),
                        format!(" else {{ {}}}", t),
                    );
                }
            }
        }
        StmtKind::Labeled | StmtKind::Case if s.safe_before => {
            if let Some(p) = s.colon {
                let t = w.write(stmt_labels, s.line, 0).0;
                edits.insert(p, (1, 2 * depth + 1), format!(" {}", t.trim_end()));
            }
        }
        StmtKind::Do if s.reliable => {
            if let Some(b) = s.body.as_ref().filter(|b| head_ok(b)) {
                let t = w.write(stmt_labels, s.line, 0).0;
                head(b, s.depth, t, edits);
            }
        }
        _ => {}
    }
}

/// Declares each function's temporaries of hoisted conditions and its data-flow flags at its
/// entry.
fn declare(
    found: &sites::Sites,
    temps: BTreeMap<usize, Vec<String>>,
    du: &mut dataflow::DefUsePlan,
    edits: &mut Edits,
) {
    // Temporaries are declared unused: the decisions that set and read them may all be in
    // `#if` branches this configuration drops (a `-Werror` build must still compile).
    for (f, names) in temps {
        let decls: Vec<String> = names.iter().map(|n| format!("{n} = 0")).collect();
        edits.insert(
            found.functions[f].body_start,
            (1, 0),
            format!(" int __attribute__((unused)) {};", decls.join(", ")),
        );
    }
    for f in du.functions() {
        if let Some(decl) = du.declaration(f) {
            edits.insert(found.functions[f].body_start, (1, 0), decl);
        }
    }
}

fn is_identifier(t: &str) -> bool {
    let t = unparenthesised(t);
    t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `0`, `(1)`, `42u`: at such a return the returned value is never negative, so the returned
/// value's ABS label is constant false there and is not written.
fn non_negative_literal(t: &str) -> bool {
    let t = unparenthesised(t);
    t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
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

/// The `.hyperlabels` file of an annotation, in LTest's grammar.
pub fn hyperlabels_file(annotated: &Annotated) -> String {
    let mut out = String::new();
    for h in &annotated.hyperlabels {
        out.push_str(h);
        out.push('\n');
    }
    out
}
