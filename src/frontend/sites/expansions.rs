//! Uses of conditional macros (`#define Abs(x) ((x) < 0 ? -(x) : (x))`): which ones are pure,
//! their expansions, and the decisions of the `?:` they bring in, planned like the program's
//! own.

use tree_sitter::Node;

use super::decisions::*;
use crate::frontend::macros::ConditionalMacro;
use crate::frontend::syntax::{callee, has_effects};

/// The macro's body calls nothing and assigns nothing.
pub fn macro_is_pure(m: &ConditionalMacro) -> bool {
    let b = m.body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let mut j = i;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if b.get(j) == Some(&b'(') {
                return false; // a call (or a nested macro)
            }
            continue;
        }
        if c == b'=' {
            let prev = if i > 0 { b[i - 1] } else { b' ' };
            let next = b.get(i + 1).copied().unwrap_or(b' ');
            if !matches!(prev, b'=' | b'!' | b'<' | b'>') && next != b'=' {
                return false;
            }
        }
        if (c == b'+' || c == b'-') && b.get(i + 1) == Some(&c) {
            return false;
        }
        i += 1;
    }
    true
}

/// The decisions of the `?:` that uses of conditional macros bring into `root` (`Abs(del) <
/// EPS` is `((del) < 0 ? -(del) : (del)) < EPS` to Frama-C): each use whose arguments have no
/// effects and which the program evaluates before anything with effects (as a `?:` would be)
/// is expanded, and the conditions of the expansion are planned like the program's own.
pub fn macro_decisions(
    root: Node,
    text: &[u8],
    macros: &[ConditionalMacro],
    temps: &mut Temps,
    private: &dyn Fn(&str) -> bool,
) -> Vec<PlannedDecision> {
    let mut out = Vec::new();
    if macros.is_empty() {
        return out;
    }
    let mut stack = vec![root];
    let mut uses = Vec::new();
    while let Some(n) = stack.pop() {
        if n.kind() == "sizeof_expression" {
            continue;
        }
        if n.kind() == "call_expression" {
            if let Some(m) = callee(n, text).and_then(|name| macros.iter().find(|m| m.name == name))
            {
                uses.push((n, m));
                continue;
            }
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    uses.sort_by_key(|(n, _)| n.start_byte());
    for (call, m) in uses {
        let Some(args) = call.child_by_field_name("arguments") else {
            continue;
        };
        let mut c = args.walk();
        let args: Vec<Node> = args
            .named_children(&mut c)
            .filter(|a| a.kind() != "comment")
            .collect();
        if args.len() != m.params.len() || args.iter().any(|a| has_effects(*a)) {
            continue;
        }
        let Some(guard) = evaluated_first(call, root, text, private, &temps.pure_macros) else {
            continue;
        };
        let Some(Expansion { tree, wrapped }) = Expansion::of(m, &args, text) else {
            continue;
        };
        let bytes = wrapped.as_bytes();
        let Some(root_expr) = Expansion::root(&tree) else {
            continue;
        };
        for (cond, inner) in ternaries(root_expr, bytes, private, &[], &|_| false) {
            let g = match (&guard, inner) {
                (Some(a), Some(b)) => Some(format!("({a}) && ({b})")),
                (a, b) => a.clone().or(b),
            };
            let plan = plan_condition(cond, bytes, temps, g);
            if plan.hoist.is_none() {
                // Positions in the expansion, not in the file.
                out.extend(plan.decisions.into_iter().map(|d| PlannedDecision {
                    span: None,
                    leaves: Vec::new(),
                    ..d
                }));
            }
        }
    }
    out
}

/// The macro's body with each parameter replaced by its argument, parenthesised; None for
/// bodies that stringify or paste tokens.
/// A macro use's expansion, parsed: the text is `void covprune_expansion(void) {
/// (void)(EXPANSION); }`.
pub struct Expansion {
    pub tree: tree_sitter::Tree,
    pub wrapped: String,
}

impl Expansion {
    pub fn of(m: &ConditionalMacro, args: &[Node], text: &[u8]) -> Option<Expansion> {
        let expansion = expand(m, args, text)?;
        let wrapped = format!("void covprune_expansion(void) {{ (void)({expansion}); }}\n");
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_c::LANGUAGE.into()).ok()?;
        let tree = parser.parse(wrapped.as_bytes(), None)?;
        if tree.root_node().has_error() {
            return None;
        }
        Some(Expansion { tree, wrapped })
    }

    /// The expansion's expression: the value of the `(void)(...)` cast.
    pub fn root(tree: &tree_sitter::Tree) -> Option<Node<'_>> {
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "cast_expression" {
                return n.child_by_field_name("value");
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        None
    }
}

fn expand(m: &ConditionalMacro, args: &[Node], text: &[u8]) -> Option<String> {
    if m.body.contains('#') {
        return None;
    }
    let body = m.body.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < body.len() && (body[i].is_ascii_alphanumeric() || body[i] == b'_') {
                i += 1;
            }
            let word = &m.body[start..i];
            match m.params.iter().position(|p| p == word) {
                Some(k) => {
                    let arg = args[k].utf8_text(text).ok()?;
                    out.push('(');
                    out.push_str(arg);
                    out.push(')');
                }
                None => out.push_str(word),
            }
        } else if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < body.len() && body[i] != c {
                i += if body[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(body.len());
            out.push_str(&m.body[start..i]);
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    Some(out)
}
