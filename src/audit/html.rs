//! The audit's self-contained HTML page: counts, the source with each line's labels and
//! coverage, the graphs.

use super::*;

pub(super) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What a label's status says, in words.
pub fn status_words(r: &Row) -> String {
    match r.status.name() {
        "infeasible" => "infeasible".into(),
        "duplicate" => format!("duplicate of l{}", r.of().unwrap_or(0)),
        "subsumed" => format!(
            "subsumed by {}",
            r.by()
                .iter()
                .map(|b| format!("l{b}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => match r.status.reason() {
            Some(reason) => format!("kept ({reason})"),
            None => "kept".into(),
        },
    }
}

/// How the HTML page colours a source line, by the labels at it, in the legend's order.
const LINE_CLASSES: &[(&str, &str)] = &[
    ("covered", "covered by a test"),
    ("uncovered", "an objective no test covers"),
    (
        "unknown",
        "an objective not proved polluting (not measured)",
    ),
    ("redundant", "only duplicate or subsumed labels"),
    ("infeasible", "only labels proved infeasible"),
];

/// A line's colour: an objective left uncovered first, then one not measured, then one
/// covered; lines of pruned labels only are redundant or infeasible; none without labels.
pub(super) fn line_class(rows: &[&Row], covered: Option<&BTreeSet<u64>>) -> Option<&'static str> {
    if rows.is_empty() {
        return None;
    }
    let kept = |r: &&&Row| !matches!(r.status.name(), "infeasible" | "duplicate" | "subsumed");
    let is_covered = |r: &&&Row| covered.is_some_and(|c| c.contains(&r.id));
    Some(
        if rows
            .iter()
            .filter(kept)
            .any(|r| covered.is_some() && !is_covered(&r))
        {
            "uncovered"
        } else if covered.is_none() && rows.iter().any(|r| kept(&r)) {
            "unknown"
        } else if rows.iter().any(|r| is_covered(&r)) {
            "covered"
        } else if rows.iter().all(|r| r.status.name() == "infeasible") {
            "infeasible"
        } else {
            "redundant"
        },
    )
}

/// A self-contained HTML report: the summary tables, the matrix, the graph, and the source
/// with each label at its line with its status.
/// What a `measure` run recorded, for the HTML report.
pub struct HtmlCoverage<'a> {
    pub table: &'a [crate::measure::Coverage],
    pub covered: &'a BTreeSet<u64>,
    /// The tests that covered each label.
    pub drivers: &'a BTreeMap<u64, String>,
}

pub fn html(
    title: &str,
    a: &Audit,
    rows: &[Row],
    source: &str,
    line_of: &BTreeMap<u64, usize>,
    graphs: &[(String, usize, String)],
    coverage: Option<HtmlCoverage>,
) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>covprune audit: {t}</title>\n<style>\nbody{{font-family:sans-serif;margin:1.5em}} table{{border-collapse:collapse;margin:.5em 0}} td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}} th:first-child,td:first-child{{text-align:left}}\npre.src{{font-size:13px;line-height:1.4;color:#111}} .ln{{color:#555;display:inline-block;width:4em}} .lab{{display:block;margin-left:4em;font-size:12px}}\n.line{{display:block}} .l-covered{{background:#cdeccd}} .l-uncovered{{background:#f6c7c7}} .l-infeasible{{background:#dedede}} .l-unknown{{background:#fbeaa5}} .l-redundant{{background:#dbe4f3}} .legend span{{padding:1px 8px;margin-right:6px;border:1px solid #aaa}}\n.infeasible{{color:#b00}} .duplicate{{color:#a60}} .subsumed{{color:#a60}} .unknown{{color:#333}}
.graph{{max-height:640px;overflow:auto;border:1px solid #ccc;display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}} summary{{cursor:pointer;margin:.3em 0}}\n</style></head><body>\n<h1>covprune audit: {t}</h1>\n",
        t = html_escape(title)
    );
    out.push_str("<h2>Per criterion</h2>\n<table><tr><th>criterion</th><th>labels</th><th>infeasible</th><th>dup (step 2)</th><th>dup (step 3)</th><th>subsumed</th><th>pruned</th><th>%</th><th>+across</th><th>unknown</th></tr>\n");
    for c in &a.criteria {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td></tr>",
            html_escape(&c.name),
            c.labels,
            c.infeasible,
            c.duplicate_step2,
            c.duplicate_step3,
            c.subsumed,
            c.pruned,
            c.pruned_percent,
            c.across,
            c.unknown
        );
    }
    out.push_str("</table>\n");
    if let Some(c) = &coverage {
        out.push_str("<h2>Coverage</h2>\n<p>Measured by <code>covprune measure</code>. kept = labels - pruned + pending; cleaned = kept covered / kept; bound = covered / labels not infeasible.</p>\n<table id=\"coverage\"><tr><th>criterion</th><th>labels</th><th>covered</th><th>raw</th><th>pruned</th><th>pending</th><th>+across</th><th>kept</th><th>kept covered</th><th>cleaned</th><th>bound</th></tr>\n");
        let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}%"));
        for r in c.table {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                html_escape(&r.criterion),
                r.labels,
                r.covered,
                pct(r.raw()),
                r.pruned,
                r.pending,
                r.across,
                r.kept,
                r.kept_covered,
                pct(r.cleaned()),
                pct(r.upper_bound())
            );
        }
        out.push_str("</table>\n");
    }
    if !a.criteria_order.is_empty() {
        out.push_str("<h2>Criterion × criterion</h2><p>Labels of the row's criterion that are duplicates of, or subsumed by, a label of the column's.</p>\n<table><tr><th></th>");
        for c in &a.criteria_order {
            let _ = write!(out, "<th>{}</th>", html_escape(c));
        }
        out.push_str("</tr>\n");
        for (i, c) in a.criteria_order.iter().enumerate() {
            let _ = write!(out, "<tr><td>{}</td>", html_escape(c));
            for n in &a.matrix[i] {
                let _ = write!(out, "<td>{n}</td>");
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
    if !graphs.is_empty() {
        out.push_str("<h2>Subsumption graphs</h2>\n<p>One graph per function (relations within it; infeasible labels are red in the source below). An arrow goes from a label to the labels it subsumes.</p>\n");
        for (f, n, svg) in graphs {
            let _ = writeln!(
                out,
                "<details class=\"fn-graph\"{}><summary>{} ({n} labels in relations)</summary><div class=\"graph\">{svg}</div></details>",
                if graphs.len() == 1 { " open" } else { "" },
                html_escape(f)
            );
        }
    }
    out.push_str("<h2>Source</h2>\n<p class=\"legend\">");
    for (class, what) in LINE_CLASSES {
        if coverage.is_some() || !matches!(*class, "covered" | "uncovered") {
            let _ = write!(out, "<span class=\"l-{class}\">{what}</span>");
        }
    }
    out.push_str("</p>\n<pre class=\"src\">");
    let mut at_line: BTreeMap<usize, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        if let Some(l) = line_of.get(&r.id) {
            at_line.entry(*l).or_default().push(r);
        }
    }
    for (i, line) in source.lines().enumerate() {
        let n = i + 1;
        let here = at_line.get(&n).map_or(&[][..], Vec::as_slice);
        let class = line_class(here, coverage.as_ref().map(|c| c.covered));
        let _ = write!(
            out,
            "<span class=\"line{}\" id=\"L{n}\"><span class=\"ln\">{n}</span>{}</span>",
            class.map_or_else(String::new, |c| format!(" l-{c}")),
            html_escape(line)
        );
        // Label lines are blocks: no newline after them, so no blank line either.
        for r in at_line.get(&n).into_iter().flatten() {
            let cov = match &coverage {
                Some(c) if c.covered.contains(&r.id) => format!(
                    "; covered by {}",
                    c.drivers.get(&r.id).map_or("", String::as_str)
                ),
                Some(_) => "; not covered".to_string(),
                None => String::new(),
            };
            let _ = write!(
                out,
                "<span class=\"lab {}\">l{} {}: {} — {}{}</span>",
                html_escape(r.status.name()),
                r.id,
                html_escape(&r.tag),
                html_escape(&r.predicate),
                html_escape(&status_words(r)),
                html_escape(&cov)
            );
        }
    }
    out.push_str("</pre>\n</body></html>\n");
    out
}
