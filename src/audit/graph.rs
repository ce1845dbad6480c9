//! The audit's graph: labels and their duplicate and subsumption edges as Graphviz DOT, and as
//! SVG (laid out here) for the HTML page.

use super::*;

pub(super) fn dot_escape(s: &str) -> String {
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
pub(super) fn dot_with(rows: &[Row], clusters: bool, predicate_sep: &str) -> String {
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
pub(super) fn svg_named(rows: &[Row], name: &str) -> Result<String, String> {
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

pub(super) fn svg_raw(rows: &[Row]) -> Result<String, String> {
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
