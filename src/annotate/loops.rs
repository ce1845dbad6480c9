//! Loops and hoisted conditions: labels before each evaluation of a loop's condition (the loop
//! rewritten), and the labels of a condition evaluated into temporaries first.

use covprune_encoders::{Criterion, LabelSpec, Limits};

use super::edits::{Edit, Edits, REPLACE};
use super::writer::Writer;
use crate::frontend::sites::{Branch, Hoist, StmtKind, StmtSite};

/// A `while`, `for` or `do` loop: labels before each evaluation of the condition (by
/// rewriting the loop), at the body's head, on the condition's two outcomes (STMT) and before
/// the update. `while (c) S` becomes `while (1) { labels if (!(c)) break; S }`; `do S while (c);`
/// becomes `do { S __cp_cN: ; { labels if (!(c)) break; } } while (1);`, each `continue` of
/// the loop turned into `goto __cp_cN;` so that it still reaches the condition.
#[allow(clippy::too_many_arguments)]
pub(super) fn loop_labels(
    s: &StmtSite,
    hoist: Option<&Hoist>,
    evaluation: &str,
    cond_labels: &str,
    expr_labels: &str,
    stmt_cov: bool,
    stmt_labels: &[LabelSpec],
    criteria: &[Criterion],
    limits: &Limits,
    w: &mut Writer,
    edits: &mut Edits,
    head: &dyn Fn(&Branch, usize, String, &mut Edits),
    head_ok: &dyn Fn(&Branch) -> bool,
) {
    let Some(body) = &s.body else { return };
    let depth = s.depth as i64;
    let cond_text = match (hoist, &s.decision) {
        (Some(h), _) => h.replacement.clone(),
        (None, Some(d)) => d.text.clone(),
        (None, None) => String::new(),
    };
    let (Some(range), false, true) = (s.cond_range, cond_text.is_empty(), s.reliable) else {
        // No condition to observe (`for (;;)`): only the body head.
        if stmt_cov && s.reliable && s.kind != StmtKind::Do && head_ok(body) {
            let t = w.write(stmt_labels, s.line, 0).0;
            head(body, s.depth, t, edits);
        }
        return;
    };
    let mut open = String::new();
    if stmt_cov && s.kind != StmtKind::Do {
        open.push_str(&w.write(stmt_labels, s.line, 0).0);
    }
    open.push_str(evaluation);
    open.push_str(cond_labels);
    open.push_str(expr_labels);
    let exit = if stmt_cov && s.kind != StmtKind::Do {
        let f = w.write(stmt_labels, s.line, 0).0;
        let t = w.write(stmt_labels, s.line, 0).0;
        format!("if (!({cond_text})) {{ {f}break; }} {t}")
    } else {
        format!("if (!({cond_text})) break; ")
    };
    let mut close = String::new();
    for u in &s.update {
        let specs: Vec<LabelSpec> = criteria
            .iter()
            .flat_map(|c| c.expression_labels(u, limits))
            .collect();
        close.push_str(&w.write(&specs, s.line, 0).0);
    }
    if open.is_empty() && close.is_empty() {
        return;
    }
    let replacement = if s.kind == StmtKind::For { "" } else { "(1)" };
    edits.edits.push(Edit {
        start: range.0,
        end: range.1,
        key: (1, 2 * depth),
        text: replacement.to_string(),
    });
    if s.kind == StmtKind::Do {
        let target = format!("__cp_c{}", range.0);
        let resume = if s.continues.is_empty() {
            String::new()
        } else {
            for &(a, _) in &s.continues {
                // Only the keyword: a block or labels inserted around the `continue;` stay.
                edits.edits.push(Edit {
                    start: a,
                    end: a + "continue".len(),
                    key: REPLACE,
                    text: format!("goto {target}"),
                });
            }
            format!("{target}: ; ")
        };
        edits.insert(body.range.0, (1, 2 * depth + 1), "{ ".into());
        edits.insert(
            body.range.1,
            (0, -(2 * depth + 1)),
            format!(" {resume}{{ {open}{exit}}} }}"),
        );
        return;
    }
    edits.insert(body.range.0, (1, 2 * depth + 1), format!("{{ {open}{exit}"));
    edits.insert(body.range.1, (0, -(2 * depth + 1)), format!(" {close}}}"));
}

/// The statements that evaluate a hoisted condition into its temporaries: `(void)(eval);`,
/// or, when some criterion observes its pieces (mutation), each piece in turn under its guard,
/// in a block of its own that declares its call values and holds its labels:
/// `{ __auto_type __cp_v1 = f(a); labels (void)((__cp_t1 = ((__cp_v1 != 2) != 0))); }`. Both
/// set the same temporaries with the same calls in the same order: a piece's guard is the
/// short-circuit that leads the program to it.
pub(super) fn hoisted_evaluation(
    h: &Hoist,
    criteria: &[Criterion],
    limits: &Limits,
    w: &mut Writer,
    line: usize,
) -> String {
    let labels_of = |e: &covprune_encoders::Expr| -> Vec<LabelSpec> {
        criteria
            .iter()
            .flat_map(|c| c.expression_labels(e, limits))
            .collect()
    };
    // Each piece's labels before and after its evaluation.
    let specs: Vec<(Vec<LabelSpec>, Vec<LabelSpec>)> = h
        .pieces
        .iter()
        .map(|p| {
            (
                p.before.iter().flat_map(labels_of).collect(),
                p.after.iter().flat_map(labels_of).collect(),
            )
        })
        .collect();
    if specs.iter().all(|(b, a)| b.is_empty() && a.is_empty()) {
        return format!("(void)({}); ", h.eval);
    }
    let mut out = String::new();
    for (p, (before, after)) in h.pieces.iter().zip(&specs) {
        match &p.guard {
            Some(g) => out.push_str(&format!("if ({g}) {{ ")),
            None => out.push_str("{ "),
        }
        out.push_str(&p.decls);
        out.push_str(&w.write(before, line, 0).0);
        out.push_str(&format!("(void)({}); ", p.eval));
        out.push_str(&w.write(after, line, 0).0);
        out.push_str("} ");
    }
    out
}

/// The text without blanks and the parentheses around it: `( x )` → `x`.
pub(super) fn unparenthesised(t: &str) -> &str {
    t.trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim()
}
