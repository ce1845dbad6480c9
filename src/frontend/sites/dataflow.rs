//! Definitions and uses of a function's local variables, for the data-flow criteria (ADC,
//! AUC): which statements define each variable and which use it, at the granularity labels
//! are placed at (before a statement).
//!
//! A variable is tracked when every definition and use can be observed that way: a parameter
//! or a local declared once in the function (not `static`, `extern` or `volatile`, not an
//! array), whose address is never taken and whose members are never written through `.`;
//! defined only by its parameter, its declaration's initialiser, or an expression statement
//! that is the whole assignment (`v = e;`, `v += e;`, `v++;`); and defined or used only in
//! expression statements, declarations, `return`s and the conditions of `if` and `switch`
//! (not in loop headers, which run again at each iteration). A use in a statement is a use
//! when the statement runs (a short-circuit may skip it). Others are left out, with why.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::{Sites, StmtKind};

/// A tracked variable of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    /// Its definitions: `None` for the parameter's value at entry, else the statement's index
    /// (into [`Sites::statements`]) that defines it, in source order.
    pub defs: Vec<Option<usize>>,
    /// Statements that use it, in source order.
    pub uses: Vec<usize>,
}

/// The tracked variables of one function, and those left out.
#[derive(Clone, Debug, Default)]
pub struct FunctionDefUses {
    /// Index into [`Sites::functions`].
    pub function: usize,
    pub variables: Vec<Variable>,
    /// (line, why) of variables left out.
    pub left: Vec<(usize, String)>,
}

/// One candidate variable while it is being looked at.
struct Candidate {
    /// Where occurrences refer to it: (from, to) byte range.
    scope: (usize, usize),
    /// The line of its declaration.
    line: usize,
    param: bool,
    /// Why it is not tracked.
    out: Option<String>,
    defs: BTreeSet<usize>,
    uses: BTreeSet<usize>,
}

/// The def-use facts of `def` (a function definition) whose site is `function`.
pub(super) fn analyse(def: Node, text: &[u8], function: usize, sites: &Sites) -> FunctionDefUses {
    let mut out = FunctionDefUses {
        function,
        ..FunctionDefUses::default()
    };
    let Some(body) = def.child_by_field_name("body") else {
        return out;
    };
    let mut candidates: BTreeMap<String, Candidate> = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    parameters(def, body, text, &mut candidates, &mut seen);
    locals(body, text, &mut candidates, &mut seen);
    for (name, k) in &seen {
        if *k > 1 {
            if let Some(c) = candidates.get_mut(name) {
                c.out = Some("declared more than once in the function".into());
            }
        }
    }
    occurrences(body, text, function, sites, &mut candidates);
    for (name, c) in &mut candidates {
        // `int a = 1, b = a;`: the use follows the definition inside the statement.
        if c.out.is_none()
            && c.defs
                .iter()
                .any(|d| c.uses.contains(d) && sites.statements[*d].kind == StmtKind::Declaration)
        {
            c.out = Some(format!("{name} defined and used in one declaration"));
        }
    }
    for (name, c) in candidates {
        if let Some(why) = c.out {
            out.left.push((c.line, format!("variable {name}: {why}")));
            continue;
        }
        let mut defs: Vec<Option<usize>> = Vec::new();
        if c.param {
            defs.push(None);
        }
        defs.extend(c.defs.iter().map(|&s| Some(s)));
        out.variables.push(Variable {
            name,
            defs,
            uses: c.uses.into_iter().collect(),
        });
    }
    out.left.sort();
    out
}

/// The function's scalar parameters, each a candidate over its body; `seen` counts the names
/// declared.
fn parameters(
    def: Node,
    body: Node,
    text: &[u8],
    candidates: &mut BTreeMap<String, Candidate>,
    seen: &mut BTreeMap<String, usize>,
) {
    let line_of = |n: Node| n.start_position().row + 1;
    if let Some(params) = def
        .child_by_field_name("declarator")
        .and_then(super::statements::function_declarator)
        .and_then(|f| f.child_by_field_name("parameters"))
    {
        let mut c = params.walk();
        for p in params.named_children(&mut c) {
            if p.kind() != "parameter_declaration" {
                continue;
            }
            let Some(d) = p.child_by_field_name("declarator") else {
                continue;
            };
            if let Some(name) = scalar_name(d, text) {
                *seen.entry(name.clone()).or_default() += 1;
                candidates.insert(
                    name,
                    Candidate {
                        scope: (body.start_byte(), body.end_byte()),
                        line: line_of(p),
                        param: true,
                        out: qualifiers(p, text),
                        defs: BTreeSet::new(),
                        uses: BTreeSet::new(),
                    },
                );
            }
        }
    }
}

/// Its locals, each a candidate from its declarator to the end of its block (or why it is
/// left out); `seen` counts the names declared.
fn locals(
    body: Node,
    text: &[u8],
    candidates: &mut BTreeMap<String, Candidate>,
    seen: &mut BTreeMap<String, usize>,
) {
    let line_of = |n: Node| n.start_position().row + 1;
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.kind() == "declaration" {
            let block = enclosing_block(n).unwrap_or(body);
            let mut c = n.walk();
            for d in n.children_by_field_name("declarator", &mut c) {
                let inner = if d.kind() == "init_declarator" {
                    d.child_by_field_name("declarator").unwrap_or(d)
                } else {
                    d
                };
                let name = super::statements::declarator_name(inner, text);
                if name.is_empty() {
                    continue;
                }
                *seen.entry(name.clone()).or_default() += 1;
                let out = match scalar_name(inner, text) {
                    None => Some("an array or a function".to_string()),
                    Some(_) => qualifiers(n, text),
                };
                let out = out.or_else(|| {
                    matches!(n.parent().map(|p| p.kind()), Some("for_statement"))
                        .then(|| "declared in a loop's header".to_string())
                });
                candidates.insert(
                    name,
                    Candidate {
                        scope: (d.start_byte(), block.end_byte()),
                        line: line_of(n),
                        param: false,
                        out,
                        defs: BTreeSet::new(),
                        uses: BTreeSet::new(),
                    },
                );
            }
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
}

/// Every occurrence of a candidate in the statements of `function`: a definition, a use or
/// both, or why the candidate is left out.
fn occurrences(
    body: Node,
    text: &[u8],
    function: usize,
    sites: &Sites,
    candidates: &mut BTreeMap<String, Candidate>,
) {
    let statements: Vec<usize> = (0..sites.statements.len())
        .filter(|&i| sites.statements[i].function == function)
        .collect();
    // (node, inside `sizeof`): an operand of `sizeof` is not evaluated.
    let mut stack = vec![(body, false)];
    while let Some((n, in_sizeof)) = stack.pop() {
        let inner = in_sizeof || n.kind() == "sizeof_expression";
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c).map(|k| (k, inner)));
        // The configuration compiles it out: it neither defines nor uses anything.
        if n.kind() != "identifier"
            || in_sizeof
            || sites.compiled_out.contains_line(n.start_position().row + 1)
        {
            continue;
        }
        let Ok(name) = n.utf8_text(text) else {
            continue;
        };
        let Some(cand) = candidates.get_mut(name) else {
            continue;
        };
        if cand.out.is_some() || n.start_byte() < cand.scope.0 || n.end_byte() > cand.scope.1 {
            continue;
        }
        let role = match role_of(n, text) {
            Ok(r) => r,
            Err(why) => {
                cand.out = Some(why);
                continue;
            }
        };
        if role == Role::Declared {
            continue;
        }
        let Some(stmt) = statement_of(n, &statements, sites) else {
            cand.out = Some(format!(
                "{} where labels cannot go before it (a loop's header, or a statement that cannot hold them)",
                if role == Role::Use { "used" } else { "defined" }
            ));
            continue;
        };
        match role {
            Role::Use => {
                cand.uses.insert(stmt);
            }
            Role::Def => {
                cand.defs.insert(stmt);
            }
            Role::UseDef => {
                cand.uses.insert(stmt);
                cand.defs.insert(stmt);
            }
            Role::Declared => {}
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Use,
    Def,
    UseDef,
    /// The name in a declaration without an initialiser.
    Declared,
}

/// What an occurrence of a variable does; Err when the variable cannot be tracked.
fn role_of(n: Node, text: &[u8]) -> Result<Role, String> {
    // Up through pointer declarators (`char *p = s;`).
    let mut node = n;
    let mut parent = n.parent();
    while let Some(p) = parent.filter(|p| p.kind() == "pointer_declarator") {
        node = p;
        parent = p.parent();
    }
    let Some(p) = parent else {
        return Ok(Role::Use);
    };
    let field_is = |f: &str| p.child_by_field_name(f) == Some(node);
    match p.kind() {
        "init_declarator" if field_is("declarator") => Ok(Role::Def),
        "declaration" | "parameter_declaration" => Ok(Role::Declared),
        "assignment_expression" if field_is("left") => {
            whole_statement(p)?;
            let op = p
                .child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok())
                .unwrap_or("=");
            Ok(if op == "=" { Role::Def } else { Role::UseDef })
        }
        "update_expression" => {
            whole_statement(p)?;
            Ok(Role::UseDef)
        }
        "pointer_expression"
            if p.child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok())
                == Some("&") =>
        {
            Err("its address is taken".into())
        }
        "field_expression"
            if field_is("argument")
                && p.child_by_field_name("operator")
                    .and_then(|o| o.utf8_text(text).ok())
                    == Some(".") =>
        {
            Err("a structure (its members are defined one by one)".into())
        }
        _ => Ok(Role::Use),
    }
}

/// A definition must be a statement of its own: `v = e;`, not inside another expression.
fn whole_statement(assignment: Node) -> Result<(), String> {
    match assignment.parent().map(|p| p.kind()) {
        Some("expression_statement") => Ok(()),
        _ => Err("defined inside an expression".into()),
    }
}

/// The statement an occurrence belongs to, where labels can go before it; None when there is
/// none (a loop's header, a statement that cannot hold labels before it).
fn statement_of(n: Node, statements: &[usize], sites: &Sites) -> Option<usize> {
    let at = n.start_byte();
    let inner = statements
        .iter()
        .copied()
        .filter(|&i| {
            let r = sites.statements[i].range;
            r.0 <= at && n.end_byte() <= r.1
        })
        .max_by_key(|&i| (sites.statements[i].depth, sites.statements[i].range.0))?;
    let s = &sites.statements[inner];
    let in_condition = s
        .cond_range
        .is_some_and(|r| r.0 <= at && n.end_byte() <= r.1);
    let placeable = if s.needs_block {
        s.reliable
    } else {
        s.safe_before
    };
    let kind_ok = match s.kind {
        StmtKind::Expression | StmtKind::Declaration | StmtKind::Return => true,
        StmtKind::If | StmtKind::Switch => in_condition || s.cond_range.is_none(),
        _ => false,
    };
    (placeable && kind_ok).then_some(inner)
}

/// The name a declarator declares, when it is a scalar (an identifier, or a pointer to
/// anything): not an array or a function.
fn scalar_name(d: Node, text: &[u8]) -> Option<String> {
    match d.kind() {
        "identifier" => d.utf8_text(text).ok().map(str::to_string),
        "pointer_declarator" => {
            // A pointer to an array or a function is still a pointer.
            let name = super::statements::declarator_name(d, text);
            (!name.is_empty()).then_some(name)
        }
        "parenthesized_declarator" => scalar_name(d.named_child(0)?, text),
        _ => None,
    }
}

/// Why a declaration's variables are not tracked: storage or qualifiers that make its value
/// outlive a call or change behind the code's back.
fn qualifiers(decl: Node, text: &[u8]) -> Option<String> {
    let mut c = decl.walk();
    for k in decl.children(&mut c) {
        let word = k.utf8_text(text).unwrap_or("");
        match (k.kind(), word) {
            ("storage_class_specifier", "static" | "extern") => {
                return Some(format!("`{word}`"));
            }
            ("type_qualifier", "volatile") => return Some("`volatile`".into()),
            _ => {}
        }
    }
    None
}

fn enclosing_block(n: Node) -> Option<Node> {
    let mut p = n.parent();
    while let Some(x) = p {
        if x.kind() == "compound_statement" {
            return Some(x);
        }
        p = x.parent();
    }
    None
}
