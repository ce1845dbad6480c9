//! Planning: the decisions of each statement (conditions, ternaries, macros), the constants
//! a file names, assignments and their values, and the calls a statement makes.

use super::*;

/// Enumerators and object-like macros defined as constant expressions, in the file or in the
/// headers it includes (`seen`, from `cc -dM`).
pub(super) fn constant_names(
    root: Node,
    text: &[u8],
    seen: &[(String, String)],
) -> typing::Constants {
    let mut names = std::collections::BTreeMap::new();
    let mut macros: Vec<(String, String)> = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "enumerator" => {
                if let Some(name) = n.child_by_field_name("name") {
                    names.insert(syntax::flat(name, text), covprune_encoders::Ty::Int);
                }
            }
            "preproc_def" => {
                if let (Some(name), Some(value)) = (
                    n.child_by_field_name("name"),
                    n.child_by_field_name("value"),
                ) {
                    macros.push((syntax::flat(name, text), syntax::flat(value, text)));
                }
                continue;
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    // Then those of the headers (`cc -dM`), where the file does not define the name itself.
    let own: BTreeSet<String> = macros.iter().map(|(n, _)| n.clone()).collect();
    macros.extend(seen.iter().filter(|(n, _)| !own.contains(n)).cloned());
    // A macro is constant when its words are numbers, type words of a cast, or constants.
    const TYPE_WORDS: &[&str] = &[
        "int", "long", "short", "char", "unsigned", "signed", "double", "float",
    ];
    loop {
        let before = names.len();
        for (name, value) in &macros {
            if names.contains_key(name) {
                continue;
            }
            let words: Vec<&str> = value
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .filter(|w| !w.is_empty())
                .collect();
            let constant = words.iter().all(|w| {
                w.starts_with(|c: char| c.is_ascii_digit() || c == '.')
                    || TYPE_WORDS.contains(w)
                    || names.contains_key(*w)
                    || typing::well_known_constant(w).is_some()
            });
            let operators_only = value.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || c.is_ascii_whitespace()
                    || "_.()+-*/%<>&|^~!".contains(c)
            });
            if constant && operators_only && !words.is_empty() {
                let float = words.iter().any(|w| {
                    let w = w.to_ascii_lowercase();
                    *w == *"double"
                        || *w == *"float"
                        || w.starts_with(|c: char| c.is_ascii_digit() || c == '.')
                            && !w.starts_with("0x")
                            && (w.contains('.') || w.contains('e'))
                });
                let ty = if float {
                    covprune_encoders::Ty::Float
                } else {
                    covprune_encoders::Ty::Int
                };
                names.insert(name.clone(), ty);
            }
        }
        if names.len() == before {
            break;
        }
    }
    let negated = macros
        .iter()
        .filter(|(name, _)| names.contains_key(name))
        .filter_map(|(name, value)| Some((name.clone(), typing::negated_literal(value)?)))
        // A macro defined twice (`#if` branches) only when every definition agrees.
        .filter(|(name, lit)| {
            macros
                .iter()
                .filter(|(n, _)| n == name)
                .all(|(_, v)| typing::negated_literal(v).as_ref() == Some(lit))
        })
        .collect();
    let defined: Vec<String> = defined_names(text).collect();
    typing::Constants {
        kinds: names,
        negated,
        pure_macros: Vec::new(),
        typedefs: crate::frontend::oldc::typedef_names(text, root)
            .into_iter()
            .collect(),
        redefined: {
            let mut once = std::collections::BTreeSet::new();
            defined
                .iter()
                .filter(|n| !once.insert(*n))
                .cloned()
                .collect()
        },
        object_macros: seen.iter().map(|(n, _)| n.clone()).chain(defined).collect(),
    }
}

/// The names the `#define` lines of `text` define (a file's: some are `#undef`ined again
/// before its end, which `cc -dM` does not show).
pub(super) fn defined_names(text: &[u8]) -> impl Iterator<Item = String> + '_ {
    text.split(|&b| b == b'\n').filter_map(|line| {
        let line = std::str::from_utf8(line).ok()?.trim_start();
        let rest = line
            .strip_prefix('#')?
            .trim_start()
            .strip_prefix("define")?;
        rest.starts_with([' ', '\t'])
            .then(|| identifiers(rest).next().map(str::to_string))
            .flatten()
    })
}

/// The decisions of a statement as Frama-C's normal form has them (see [`decisions`]).
pub(super) fn plan_statement(
    node: Node,
    text: &[u8],
    site: &mut StmtSite,
    sites: &mut Sites,
    private: &dyn Fn(&str) -> bool,
) {
    let field = |f: &str| node.child_by_field_name(f);
    let line = site.line;
    let mut plan = Plan::default();
    // What the statement evaluates first, and whether its value is a condition.
    let roots: Vec<(Node, bool)> = match site.kind {
        StmtKind::If | StmtKind::While | StmtKind::Do => {
            field("condition").map(|c| (c, true)).into_iter().collect()
        }
        StmtKind::For => field("condition").map(|c| (c, true)).into_iter().collect(),
        StmtKind::Expression | StmtKind::Return => node
            .named_child(0)
            .filter(|e| e.kind() != "comment")
            .map(|e| (e, false))
            .into_iter()
            .collect(),
        StmtKind::Declaration => {
            let text_of = String::from_utf8_lossy(&text[node.start_byte()..node.end_byte()]);
            if text_of
                .split_whitespace()
                .any(|w| w == "static" || w == "extern")
            {
                return;
            }
            let mut c = node.walk();
            let values: Vec<Node> = node
                .children_by_field_name("declarator", &mut c)
                .filter_map(|d| d.child_by_field_name("value"))
                .collect();
            // Only one initialiser may have effects, and it must come first, so that labels
            // placed around the declaration see what the program sees.
            let effects = values.iter().filter(|v| syntax::has_effects(**v)).count();
            if effects > 1 || (effects == 1 && !syntax::has_effects(values[0])) {
                if values.iter().any(|v| has_conditional(*v, text)) {
                    sites
                        .skipped
                        .push((line, "conditional in an initialiser after a call".into()));
                }
                return;
            }
            values.into_iter().map(|v| (v, false)).collect()
        }
        _ => Vec::new(),
    };
    for (root, is_condition) in roots {
        let logical = if is_condition {
            Some(root)
        } else {
            decisions::logical_root(root, text)
        };
        if let Some(cond) = logical {
            let p = decisions::plan_condition(cond, text, &mut sites.temps, None);
            if p.hoist.is_some() {
                site.labels_after = site.kind == StmtKind::Declaration;
            }
            plan.decisions.extend(p.decisions);
            plan.hoist = p.hoist;
            if plan.hoist.is_some() {
                // The conditions of `?:` inside atoms with effects are evaluated amid them.
                if has_ternary(cond) {
                    sites
                        .skipped
                        .push((line, "conditional inside a condition with calls".into()));
                }
                continue;
            }
        }
        let from_macros = super::expansions::macro_decisions(
            root,
            text,
            &sites.macros,
            &mut sites.temps,
            private,
        );
        plan.decisions.extend(from_macros);
        let pure = sites.temps.pure_macros.clone();
        let function_like = sites.function_like.clone();
        // A macro's arguments are the macro's to evaluate (or drop); a pure conditional
        // macro's own decisions are read from its expansion above.
        let opaque = |name: &str| function_like.contains(name) && !pure.iter().any(|p| p == name);
        for (c, guard) in decisions::ternaries(root, text, private, &pure, &opaque) {
            let p = decisions::plan_condition(c, text, &mut sites.temps, guard);
            if p.hoist.is_some() {
                if plan.hoist.is_some() || site.kind == StmtKind::Declaration {
                    sites
                        .skipped
                        .push((line, "second conditional with calls in a statement".into()));
                    continue;
                }
                plan.hoist = p.hoist;
            }
            plan.decisions.extend(p.decisions);
        }
    }
    site.plan = plan;
}

pub(super) fn has_ternary(node: Node) -> bool {
    if node.kind() == "conditional_expression" {
        return true;
    }
    let mut c = node.walk();
    let r = node.named_children(&mut c).any(has_ternary);
    r
}

pub(super) fn has_conditional(node: Node, _text: &[u8]) -> bool {
    has_ternary(node)
}

/// `(c)` → `c`.
pub(super) fn peel(node: Node) -> Node {
    syntax::sole_operand(node).unwrap_or(node)
}

/// The expression an assignment or increment computes, as mutation sees it: `x = e` gives
/// `e`, `x op= e` gives `x op e`, `x++` gives `x + 1` (CIL's normal form, which LAnnotate
/// mutates). None when anything in it has effects.
pub(super) fn assignment(node: Node, text: &[u8], env: &TypeEnv) -> Option<Expr> {
    let effects = match node.kind() {
        "assignment_expression" => {
            let (l, r) = (
                node.child_by_field_name("left")?,
                node.child_by_field_name("right")?,
            );
            has_effects(l) || has_effects(r) || r.kind() == "comma_expression"
        }
        "update_expression" => has_effects(node.child_by_field_name("argument")?),
        _ => return None,
    };
    if effects {
        return None;
    }
    assigned_value(node, text, env)
}

/// [`assignment`]'s value without the check for effects (for a statement whose calls `env`
/// replaces by temporaries).
pub(super) fn assigned_value(node: Node, text: &[u8], env: &TypeEnv) -> Option<Expr> {
    use covprune_encoders::BinOp;
    match node.kind() {
        "assignment_expression" => {
            let (l, r) = (
                node.child_by_field_name("left")?,
                node.child_by_field_name("right")?,
            );
            let token = node.child_by_field_name("operator")?;
            let op = token.utf8_text(text).ok()?;
            let (target, lt) = env.build(l, text);
            let (rhs, rt) = env.build(r, text);
            if op == "=" {
                return Some(typing::converted(rhs, &rt, &lt));
            }
            let bop = BinOp::from_c(op.trim_end_matches('='))?;
            let at = (token.start_byte(), token.end_byte());
            Some(typing::operated(bop, target, &lt, rhs, &rt, at))
        }
        "update_expression" => {
            let arg = node.child_by_field_name("argument")?;
            let token = node.child_by_field_name("operator")?;
            let op = token.utf8_text(text).ok()?;
            let bop = if op == "++" { BinOp::Add } else { BinOp::Sub };
            let (target, t) = env.build(arg, text);
            Some(typing::operated(
                bop,
                target,
                &t,
                Expr::int("1"),
                &crate::ir::CType::INT,
                (token.start_byte(), token.end_byte()),
            ))
        }
        _ => None,
    }
}

/// The `continue` statements in `body` that belong to the loop owning `body`.
pub(super) fn bound_continues(body: Node) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "continue_statement" => out.push((n.start_byte(), n.end_byte())),
            "for_statement" | "while_statement" | "do_statement" => continue,
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    out.sort();
    out
}

/// Direct calls to functions of the file that run whenever `node` is evaluated: calls under the
/// right operand of `&&`/`||` or a branch of `?:` are left out.
pub(super) fn calls_in(
    node: Node,
    text: &[u8],
    names: &BTreeSet<String>,
    conditional: bool,
    out: &mut Vec<String>,
) {
    match node.kind() {
        "sizeof_expression" => return,
        "call_expression" if !conditional => {
            if let Some(f) = node.child_by_field_name("function") {
                let name = syntax::flat(f, text);
                if f.kind() == "identifier" && names.contains(&name) {
                    out.push(name);
                }
            }
        }
        "binary_expression" => {
            let op = node
                .child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok())
                .unwrap_or("");
            if matches!(op, "&&" | "||") {
                if let Some(l) = node.child_by_field_name("left") {
                    calls_in(l, text, names, conditional, out);
                }
                if let Some(r) = node.child_by_field_name("right") {
                    calls_in(r, text, names, true, out);
                }
                return;
            }
        }
        "conditional_expression" => {
            if let Some(c) = node.child_by_field_name("condition") {
                calls_in(c, text, names, conditional, out);
            }
            for f in ["consequence", "alternative"] {
                if let Some(b) = node.child_by_field_name(f) {
                    calls_in(b, text, names, true, out);
                }
            }
            return;
        }
        _ => {}
    }
    let mut c = node.walk();
    let kids: Vec<Node> = node.named_children(&mut c).collect();
    for k in kids {
        calls_in(k, text, names, conditional, out);
    }
}

pub(super) fn decision(
    cond_node: Node,
    text: &[u8],
    line: usize,
    env: &TypeEnv,
    sites: &mut Sites,
) -> Option<CondSite> {
    let inner = peel(cond_node);
    // Uses of pure macros (`Abs(x)`) read as their expansion; real effects are hoisted into
    // temporaries instead (see `decisions`).
    if syntax::has_effects_beyond(inner, text, &sites.temps.pure_macros) {
        return None;
    }
    if inner.kind() == "comma_expression" || inner.kind() == "compound_statement" {
        sites
            .skipped
            .push((line, "comma or statement expression".into()));
        return None;
    }
    Some(CondSite {
        text: inner.utf8_text(text).unwrap_or("").to_string(),
        expr: env.build(inner, text).0,
    })
}
