//! `covprune audit`: how redundant each criterion is on a program, read from a ledger: counts
//! per criterion and function, the largest duplicate classes, the strongest subsumers, the
//! criterion × criterion matrix, and the pictures (DOT, a self-contained HTML page with the
//! graph as SVG) and SARIF findings people look at.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use covprune_encoders::{Criterion, Objective};
use serde::Serialize;

/// One label of the ledger.
pub use crate::report::ledger::LedgerLabel as Row;

use crate::prune::Status;

/// Pollution counts of a set of labels (the paper's Figure 6 columns), defined once.
pub use crate::report::counts::Counts;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DuplicateClass {
    pub representative: u64,
    pub members: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Subsumer {
    pub label: u64,
    pub tag: String,
    pub subsumes: usize,
}

/// The audit of one ledger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Audit {
    pub criteria: Vec<Counts>,
    pub functions: Vec<Counts>,
    pub largest_duplicate_classes: Vec<DuplicateClass>,
    pub top_subsumers: Vec<Subsumer>,
    /// `matrix[i][j]`: labels of `criteria_order[i]` that are duplicates of, or subsumed by, a
    /// label of `criteria_order[j]`.
    pub criteria_order: Vec<String>,
    pub matrix: Vec<Vec<usize>>,
    /// Labels kept after pruning: covering them covers every objective of all the criteria.
    pub sufficient: BTreeMap<String, usize>,
    pub sufficient_total: usize,
    /// Functions the prover did not analyse: their labels stay unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<crate::report::SkippedFunction>,
    /// Functions whose budget ran out, with the labels each left unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<crate::report::OverBudget>,
    /// Labels `witness` tests show feasible, and the tests.
    #[serde(skip_serializing_if = "is_zero")]
    pub shown_feasible: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub witness_tests: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

const TOP: usize = 10;

pub fn audit(rows: &[Row]) -> Audit {
    use crate::report::counts::{self, Fact};
    let facts: Vec<Fact> = rows
        .iter()
        .map(|r| Fact::of_status(r.id, &r.tag, &r.status, r.step))
        .collect();
    let criteria = counts::per_criterion(&facts);
    let (shown_feasible, witness_tests) = crate::report::ledger::shown_feasible(rows);
    let classes = counts::classify(&facts);
    let (skipped, over_budget) = crate::report::ledger::undecided_functions(
        rows.iter().map(|r| (r.function.as_str(), &r.status)),
    );
    let mut per_fn: BTreeMap<String, Counts> = BTreeMap::new();
    for r in rows {
        let fname = if r.function.is_empty() {
            "(not compiled)".to_string()
        } else {
            r.function.clone()
        };
        per_fn
            .entry(fname.clone())
            .or_insert_with(|| Counts::named(&fname))
            .add(classes[&r.id]);
    }
    let mut functions: Vec<Counts> = per_fn.into_values().collect();
    functions.sort_by(|a, b| b.pruned.cmp(&a.pruned).then(a.name.cmp(&b.name)));

    let mut classes: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in rows {
        if let Some(of) = r.of() {
            classes.entry(of).or_insert_with(|| vec![of]).push(r.id);
        }
    }
    let mut largest: Vec<DuplicateClass> = classes
        .into_iter()
        .map(|(representative, members)| DuplicateClass {
            representative,
            members,
        })
        .collect();
    largest.sort_by(|a, b| {
        b.members
            .len()
            .cmp(&a.members.len())
            .then(a.representative.cmp(&b.representative))
    });
    largest.truncate(TOP);

    let tag_of: BTreeMap<u64, &str> = rows.iter().map(|r| (r.id, r.tag.as_str())).collect();
    let mut subsumes: BTreeMap<u64, usize> = BTreeMap::new();
    for r in rows {
        for b in r.by() {
            *subsumes.entry(*b).or_default() += 1;
        }
    }
    let mut top: Vec<Subsumer> = subsumes
        .into_iter()
        .map(|(label, n)| Subsumer {
            label,
            tag: tag_of.get(&label).unwrap_or(&"").to_string(),
            subsumes: n,
        })
        .collect();
    top.sort_by(|a, b| b.subsumes.cmp(&a.subsumes).then(a.label.cmp(&b.label)));
    top.truncate(TOP);

    let order: Vec<String> = criteria
        .iter()
        .filter(|c| c.name != "all")
        .map(|c| c.name.clone())
        .collect();
    let index: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let crit_of: BTreeMap<u64, &str> = rows.iter().map(|r| (r.id, r.criterion())).collect();
    let mut matrix = vec![vec![0usize; order.len()]; order.len()];
    for r in rows {
        let Some(&i) = index.get(r.criterion()) else {
            continue;
        };
        let by: BTreeSet<usize> = r
            .of()
            .iter()
            .chain(r.by())
            .filter_map(|x| crit_of.get(x).and_then(|c| index.get(c)).copied())
            .collect();
        for j in by {
            matrix[i][j] += 1;
        }
    }
    let mut sufficient: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.status.is_polluting()) {
        *sufficient.entry(r.criterion().to_string()).or_default() += 1;
    }
    let sufficient_total = sufficient.values().sum();
    Audit {
        criteria,
        functions,
        largest_duplicate_classes: largest,
        top_subsumers: top,
        criteria_order: order,
        matrix,
        sufficient,
        sufficient_total,
        skipped,
        over_budget,
        shown_feasible,
        witness_tests,
    }
}

impl Audit {
    pub fn to_text(&self) -> String {
        let mut out = crate::report::counts::counts_text(&self.criteria, "criterion", 24);
        out.push_str(&crate::report::ledger::undecided_text(
            &self.skipped,
            &self.over_budget,
        ));
        if self.shown_feasible > 0 {
            let _ = writeln!(
                out,
                "shown feasible by `witness` tests: {} ({})",
                crate::console::count(self.shown_feasible as u64, "label"),
                crate::console::count(self.witness_tests as u64, "test")
            );
        }
        out.push('\n');
        out.push_str(&crate::report::counts::counts_text(
            &self.functions[..self.functions.len().min(TOP)],
            "function (most pruned)",
            24,
        ));
        if !self.criteria_order.is_empty() {
            out.push_str("\nlabels of the row's criterion duplicate of / subsumed by a label of the column's:\n");
            let _ = write!(out, "{:<8}", "");
            for c in &self.criteria_order {
                let _ = write!(out, " {c:>7}");
            }
            out.push('\n');
            for (i, c) in self.criteria_order.iter().enumerate() {
                let _ = write!(out, "{c:<8}");
                for n in &self.matrix[i] {
                    let _ = write!(out, " {n:>7}");
                }
                out.push('\n');
            }
        }
        let _ = writeln!(
            out,
            "\nsufficient set (labels kept): {} ({})",
            self.sufficient_total,
            self.sufficient
                .iter()
                .map(|(c, n)| format!("{c} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for d in &self.largest_duplicate_classes {
            let _ = writeln!(
                out,
                "duplicate class of l{}: {}",
                d.representative,
                crate::console::count(d.members.len() as u64, "label")
            );
        }
        for s in &self.top_subsumers {
            let _ = writeln!(
                out,
                "l{} ({}) subsumes {}",
                s.label,
                s.tag,
                crate::console::count(s.subsumes as u64, "label")
            );
        }
        out
    }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The subsumption graph as DOT: one node per kept or polluting label that takes part in a
/// relation or is infeasible (duplicates merged into their representative's node), an edge
/// from each subsumer to the label it subsumes; infeasible labels red and dashed, subsumed
/// ones orange. `clusters` puts each function's labels in a cluster (co-reached groups never
/// span functions, except for a called-once callee, drawn in its own).
pub fn dot(rows: &[Row], clusters: bool) -> String {
    dot_with(rows, clusters, "\\n")
}

/// The DOT text; each node's predicate follows its name after `predicate_sep`.
fn dot_with(rows: &[Row], clusters: bool, predicate_sep: &str) -> String {
    let mut members: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in rows {
        if let Some(of) = r.of() {
            members.entry(of).or_default().push(r.id);
        }
    }
    let related: BTreeSet<u64> = rows
        .iter()
        .flat_map(|r| {
            let mut v: Vec<u64> = r.by().to_vec();
            if !r.by().is_empty() || r.of().is_some() || r.status == Status::Infeasible {
                v.push(r.id);
            }
            v.extend(r.of());
            v
        })
        .collect();
    let mut by_fn: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| related.contains(&r.id) && r.of().is_none())
    {
        by_fn.entry(r.function.as_str()).or_default().push(r);
    }
    let mut out =
        String::from("digraph subsumption {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n");
    for (k, (f, nodes)) in by_fn.iter().enumerate() {
        let indent = if clusters {
            let _ = writeln!(
                out,
                "  subgraph cluster_{k} {{\n    label=\"{}\";",
                dot_escape(f)
            );
            "    "
        } else {
            "  "
        };
        for r in nodes {
            let mut ids = vec![r.id];
            ids.extend(members.get(&r.id).into_iter().flatten());
            let name = ids
                .iter()
                .map(|i| format!("l{i}"))
                .collect::<Vec<_>>()
                .join(" = ");
            let style = match r.status.name() {
                "infeasible" => ", color=red, style=dashed",
                "subsumed" => ", color=orange",
                _ => "",
            };
            let mut short: String = r.predicate.chars().take(40).collect();
            if r.predicate.chars().count() > 40 {
                short.push('…');
            }
            let predicate = format!("{predicate_sep}{}", dot_escape(&short));
            let _ = writeln!(
                out,
                "{indent}l{} [label=\"{} ({}){predicate}\"{style}];",
                r.id,
                name,
                dot_escape(&r.tag),
            );
        }
        if clusters {
            out.push_str("  }\n");
        }
    }
    for r in rows.iter().filter(|r| r.of().is_none()) {
        for b in r.by() {
            let _ = writeln!(out, "  l{b} -> l{};", r.id);
        }
    }
    out.push_str("}\n");
    out
}

/// The graph of each function drawn apart (a graph of a whole file is thousands of pixels
/// tall): relations within the function only, infeasible labels without relations left out
/// (the tables and the source list them). Functions with no relation have no graph.
/// Returns (function, labels drawn, SVG), by function name.
pub fn svgs(rows: &[Row]) -> Vec<(String, usize, String)> {
    let mut by_fn: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by_fn.entry(r.function.as_str()).or_default().push(r);
    }
    let mut out = Vec::new();
    for (f, members) in by_fn {
        let ids: BTreeSet<u64> = members.iter().map(|r| r.id).collect();
        let local: Vec<Row> = members
            .iter()
            .map(|r| {
                let mut r = (*r).clone();
                r.status = match &r.status {
                    Status::Subsumed { by } => {
                        let by: Vec<u64> = by.iter().copied().filter(|b| ids.contains(b)).collect();
                        if by.is_empty() {
                            Status::unknown(crate::prune::Reason::Satisfiable)
                        } else {
                            Status::Subsumed { by }
                        }
                    }
                    Status::Duplicate { of } if !ids.contains(of) => {
                        Status::unknown(crate::prune::Reason::Satisfiable)
                    }
                    Status::Infeasible => Status::unknown(crate::prune::Reason::Satisfiable),
                    other => other.clone(),
                };
                r
            })
            .collect();
        // Each weakly connected part is drawn apart, side by side: one tall drawing of all
        // of them is unreadable.
        let mut parent: BTreeMap<u64, u64> = BTreeMap::new();
        fn find(parent: &mut BTreeMap<u64, u64>, x: u64) -> u64 {
            let p = *parent.entry(x).or_insert(x);
            if p == x {
                return x;
            }
            let root = find(parent, p);
            parent.insert(x, root);
            root
        }
        for r in &local {
            for other in r.by().iter().copied().chain(r.of()) {
                let (a, b) = (find(&mut parent, r.id), find(&mut parent, other));
                if a != b {
                    parent.insert(a.max(b), a.min(b));
                }
            }
        }
        let mut parts: BTreeMap<u64, Vec<Row>> = BTreeMap::new();
        for r in &local {
            if parent.contains_key(&r.id) {
                let root = find(&mut parent, r.id);
                parts.entry(root).or_default().push(r.clone());
            }
        }
        let related = parts.values().map(Vec::len).sum::<usize>();
        let drawings: Vec<String> = parts
            .values()
            .enumerate()
            .filter_map(|(k, part)| {
                svg_named(part, &format!("{}-{k}", out.len()))
                    .ok()
                    .filter(|s| !s.is_empty())
            })
            .collect();
        if !drawings.is_empty() {
            out.push((f.to_string(), related, drawings.concat()));
        }
    }
    out
}

/// The DOT graph drawn as SVG (layout-rs; it draws no clusters, so the flat graph is used).
pub fn svg(rows: &[Row]) -> Result<String, String> {
    svg_named(rows, "g")
}

/// The SVG of one drawing, its ids prefixed with `name` so that several drawings can share a
/// page; arrowheads filled with the edges' colour, style rules sorted (the same bytes on
/// every run).
fn svg_named(rows: &[Row], name: &str) -> Result<String, String> {
    let raw = svg_raw(rows)?;
    let mut out = String::with_capacity(raw.len());
    let mut style: Vec<&str> = Vec::new();
    let mut in_style = false;
    for line in raw.split_inclusive('\n') {
        if line.starts_with("</style>") {
            style.sort_unstable();
            style.iter().for_each(|l| out.push_str(l));
            style.clear();
            in_style = false;
        } else if in_style {
            style.push(line);
            continue;
        } else if line.ends_with("<style>\n") {
            in_style = true;
        }
        out.push_str(line);
    }
    Ok(out
        .replace("fill=\"context-stroke\"", "fill=\"#000000\"")
        .replace("id=\"startarrow\"", &format!("id=\"{name}-startarrow\""))
        .replace("id=\"endarrow\"", &format!("id=\"{name}-endarrow\""))
        .replace("url(#startarrow)", &format!("url(#{name}-startarrow)"))
        .replace("url(#endarrow)", &format!("url(#{name}-endarrow)"))
        .replace("id=\"arrow", &format!("id=\"{name}-arrow"))
        .replace("href=\"#arrow", &format!("href=\"#{name}-arrow")))
}

fn svg_raw(rows: &[Row]) -> Result<String, String> {
    use layout::backends::svg::SVGWriter;
    use layout::gv::{DotParser, GraphBuilder};
    // One line per node (layout-rs draws one): the name, then the predicate.
    let text = dot_with(rows, false, ": ");
    let mut parser = DotParser::new(&text);
    let graph = parser.process()?;
    let mut builder = GraphBuilder::new();
    builder.visit_graph(&graph);
    let mut visual = builder.get();
    if visual.num_nodes() == 0 {
        return Ok(String::new());
    }
    let mut writer = SVGWriter::new();
    visual.do_it(false, false, false, &mut writer);
    Ok(writer.finalize())
}

fn html_escape(s: &str) -> String {
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
fn line_class(rows: &[&Row], covered: Option<&BTreeSet<u64>>) -> Option<&'static str> {
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

/// SARIF 2.1.0 with the actionable findings only: an infeasible STMT label (dead code), an
/// infeasible DC/CC label (a condition that cannot take a value), an infeasible WM label (an
/// equivalent mutant). `origin` gives each label's (relative file, line).
/// `root` is the directory the origins' relative file names start from (`SRCROOT`).
pub fn sarif(
    rows: &[Row],
    origin: &BTreeMap<u64, (String, usize)>,
    root: &std::path::Path,
    version: &str,
) -> serde_json::Value {
    let rules = [
        ("covprune/dead-code", "Code no input reaches", "A statement-coverage objective is proved unreachable: the code after it is dead."),
        ("covprune/constant-condition", "Condition that cannot take a value", "A decision or condition is proved never to take this truth value: it is constant where it is evaluated."),
        ("covprune/equivalent-mutant", "Equivalent mutant", "No input distinguishes this mutant from the original: the mutation testing objective is infeasible."),
    ];
    let mut results = Vec::new();
    // Results with the same function, tag and predicate (one predicate at two places) get
    // their rank among those, by line, in the fingerprint: one fingerprint per result.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut infeasible: Vec<(&Row, &(String, usize), usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.status == Status::Infeasible) {
        let rule = match Criterion::of_tag(r.criterion()).map(Criterion::objective) {
            Some(Objective::Block) => 0,
            Some(Objective::DecisionOutcome | Objective::ConditionOutcome | Objective::Outcome) => {
                1
            }
            Some(Objective::Mutant) => 2,
            Some(Objective::Other) | None => continue,
        };
        if let Some(at) = origin.get(&r.id) {
            infeasible.push((r, at, rule));
        }
    }
    infeasible.sort_by(|a, b| (a.1, a.0.id).cmp(&(b.1, b.0.id)));
    for (r, (file, line), rule) in infeasible {
        let key = format!("{}\u{0}{}\u{0}{}", r.function, r.tag, r.predicate);
        let rank = seen.entry(key.clone()).or_insert(0);
        let base = if *rank == 0 {
            key
        } else {
            format!("{key}\u{0}{rank}")
        };
        *rank += 1;
        let fingerprint = crate::prune::journal::fingerprint(base.as_bytes(), rules[rule].0);
        let location = sarif_location(file);
        results.push(serde_json::json!({
            "ruleId": rules[rule].0,
            "ruleIndex": rule,
            "level": if rule == 2 { "note" } else { "warning" },
            "message": {"text": format!("l{} ({}) `{}` is infeasible in {}", r.id, r.tag, r.predicate, r.function)},
            "locations": [{"physicalLocation": {
                "artifactLocation": location,
                "region": {"startLine": (*line).max(1)}
            }}],
            "partialFingerprints": {"covpruneLabel/v1": fingerprint},
        }));
    }
    sarif_log(root, version, &rules, results)
}

/// A SARIF artifact location: a `file://` URI, or a name relative to `SRCROOT`.
pub fn sarif_location(file: &str) -> serde_json::Value {
    if std::path::Path::new(file).is_absolute() {
        serde_json::json!({"uri": file_uri(std::path::Path::new(file))})
    } else {
        serde_json::json!({"uri": encode_uri_path(file), "uriBaseId": "SRCROOT"})
    }
}

/// A SARIF 2.1.0 log of covprune's run: its rules (id, name, description) and results.
pub fn sarif_log(
    root: &std::path::Path,
    version: &str,
    rules: &[(&str, &str, &str)],
    results: Vec<serde_json::Value>,
) -> serde_json::Value {
    let mut root_uri = file_uri(root);
    if !root_uri.ends_with('/') {
        root_uri.push('/');
    }
    serde_json::json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "covprune",
                "version": version,
                "informationUri": "https://example.invalid/covprune",
                "rules": rules.iter().map(|(id, name, text)| serde_json::json!({
                    "id": id,
                    "name": name.replace(' ', ""),
                    "shortDescription": {"text": name},
                    "fullDescription": {"text": text},
                })).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": root_uri}},
            "results": results,
        }]
    })
}

/// A path's characters as a URI path: unreserved characters and `/` kept, every other byte
/// percent-encoded (RFC 3986).
pub fn encode_uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `file://` URI of an absolute path.
fn file_uri(path: &std::path::Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') {
        text
    } else {
        format!("/{text}")
    };
    format!("file://{}", encode_uri_path(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(encode_uri_path("my dir/a+b.c"), "my%20dir/a%2Bb.c");
        assert_eq!(
            file_uri(std::path::Path::new("/w/my src")),
            "file:///w/my%20src"
        );
    }

    fn row(id: u64, status: &str, tag: &str, of: Option<u64>, by: &[u64]) -> Row {
        Row {
            id,
            status: match (status, of) {
                ("infeasible", _) => Status::Infeasible,
                ("duplicate", Some(of)) => Status::Duplicate { of },
                ("subsumed", _) => Status::Subsumed { by: by.to_vec() },
                _ => Status::unknown(crate::prune::Reason::Satisfiable),
            },
            step: Some(if status == "infeasible" { 1 } else { 3 }),
            tag: tag.into(),
            loc: String::new(),
            function: "f".into(),
            predicate: format!("p{id}"),
            time_ms: 0,
            witness: None,
        }
    }

    #[test]
    fn matrix_counts_relations_across_criteria() {
        let rows = vec![
            row(1, "unknown", "MCC", None, &[]),
            row(2, "subsumed", "CC", None, &[1]),
            row(3, "duplicate", "CC", Some(1), &[]),
            row(4, "infeasible", "CC", None, &[]),
        ];
        let a = audit(&rows);
        assert_eq!(a.criteria_order, vec!["CC", "MCC"]);
        assert_eq!(a.matrix, vec![vec![0, 2], vec![0, 0]]);
        assert_eq!(a.sufficient_total, 1);
        assert_eq!(a.top_subsumers[0].label, 1);
        assert_eq!(a.largest_duplicate_classes[0].members, vec![1, 3]);
        let d = dot(&rows, true);
        assert!(d.contains("l1 = l3") && d.contains("l1 -> l2;") && d.contains("color=red"));
    }
}
