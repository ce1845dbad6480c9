//! Facts about C syntax trees the annotator and the lowering share: a node's text, its tokens,
//! the operand of parentheses, the function a call names, whether evaluating an expression has
//! effects, and the divisors an expression divides by.

use tree_sitter::Node;

/// The tokens of `node` in order, comments aside: its leaves, a character or string literal
/// whole, and whole any node `whole` names.
pub fn tokens<'t>(node: Node<'t>, whole: &dyn Fn(Node) -> bool) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let literal = matches!(n.kind(), "char_literal" | "string_literal");
        if literal || n.child_count() == 0 || whole(n) {
            if n.kind() != "comment" && n.end_byte() > n.start_byte() {
                out.push(n);
            }
            continue;
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// `(d) != 0` for each division or remainder in the subtree whose divisor is not a non-zero
/// literal (`sizeof` operands are not evaluated, so they are skipped).
pub fn division_guards(node: Node, text: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "sizeof_expression" {
            continue;
        }
        if n.kind() == "binary_expression" {
            let op = n
                .child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok());
            if let (Some("/" | "%"), Some(r)) = (op, n.child_by_field_name("right")) {
                let literal_nonzero = r.kind() == "number_literal"
                    && flat(r, text)
                        .trim_start_matches(['0', 'x', 'X'])
                        .chars()
                        .any(|c| c.is_ascii_digit() && c != '0');
                if !literal_nonzero {
                    let g = format!("({}) != 0", flat(r, text));
                    if !out.contains(&g) {
                        out.push(g);
                    }
                }
            }
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    // Found outer first; an inner divisor must be checked before an outer one that contains it.
    out.reverse();
    out
}

/// The expression inside `( e )`, comments aside (`(a /* why */)`); None for a statement
/// expression or anything else.
pub fn sole_operand(node: Node) -> Option<Node> {
    if node.kind() != "parenthesized_expression" {
        return None;
    }
    let mut c = node.walk();
    let mut inner = node
        .named_children(&mut c)
        .filter(|n| n.kind() != "comment");
    match (inner.next(), inner.next()) {
        (Some(e), None) if e.kind() != "compound_statement" => Some(e),
        _ => None,
    }
}

/// The node's text on one line.
pub fn flat(node: Node, text: &[u8]) -> String {
    node.utf8_text(text)
        .unwrap_or("0")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Assignments, increments, calls, GNU statement expressions and asm: evaluating the
/// expression (again, in a label, or in another order) could change the program. The operands
/// of `sizeof`, `_Alignof` and `offsetof` are not evaluated.
pub fn has_effects(node: Node) -> bool {
    // With no pure macro, the text is never read.
    has_effects_beyond(node, &[], &[])
}

/// [`has_effects`], except that uses of the `pure` macros with arguments free of effects
/// have none.
pub fn has_effects_beyond(node: Node, text: &[u8], pure: &[String]) -> bool {
    if node.kind() == "call_expression" && is_pure_macro_use(node, text, pure) {
        let mut c = node.walk();
        let args: Vec<Node> = node
            .child_by_field_name("arguments")
            .map(|a| a.named_children(&mut c).collect())
            .unwrap_or_default();
        return args.into_iter().any(|a| has_effects_beyond(a, text, pure));
    }
    match node.kind() {
        "assignment_expression"
        | "update_expression"
        | "call_expression"
        | "compound_statement"
        | "gnu_asm_expression" => true,
        // Operands of these are not evaluated.
        "sizeof_expression" | "alignof_expression" | "offsetof_expression" => false,
        _ => {
            let mut c = node.walk();
            let r = node
                .named_children(&mut c)
                .any(|n| has_effects_beyond(n, text, pure));
            r
        }
    }
}

/// A use of one of the `pure` macros (by the name it calls).
pub fn is_pure_macro_use(node: Node, text: &[u8], pure: &[String]) -> bool {
    !pure.is_empty() && callee(node, text).is_some_and(|name| pure.iter().any(|p| p == name))
}

/// The name a call expression calls directly (`f` in `f(x)`), if any.
pub fn callee<'t>(call: Node, text: &'t [u8]) -> Option<&'t str> {
    call.child_by_field_name("function")
        .filter(|f| f.kind() == "identifier")
        .and_then(|f| f.utf8_text(text).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The initialiser of `x` in `int x = EXPR;`, parsed, handed to `check`.
    fn with_expr(expr: &str, check: impl FnOnce(Node, &[u8])) {
        let text = format!("int x = {expr};");
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_c::LANGUAGE.into())
            .expect("tree-sitter-c loads");
        let tree = parser.parse(&text, None).expect("parses");
        let decl = tree.root_node().named_child(0).expect("a declaration");
        let init = decl
            .child_by_field_name("declarator")
            .and_then(|d| d.child_by_field_name("value"))
            .expect("an initialiser");
        check(init, text.as_bytes());
    }

    #[test]
    fn effects_are_assignments_increments_calls_but_not_unevaluated_operands() {
        for (e, effects) in [
            ("a + b * c", false),
            ("a = 1", true),
            ("a++ + 1", true),
            ("f(a)", true),
            ("sizeof(a = 1)", false),
            ("_Alignof(int)", false),
            ("a ? b : (c += 1)", true),
        ] {
            with_expr(e, |n, _| assert_eq!(has_effects(n), effects, "{e}"));
        }
        with_expr("MAX(a, b)", |n, t| {
            assert!(has_effects_beyond(n, t, &[]));
            assert!(!has_effects_beyond(n, t, &["MAX".to_string()]));
        });
        with_expr("MAX(a++, b)", |n, t| {
            assert!(has_effects_beyond(n, t, &["MAX".to_string()]))
        });
    }

    #[test]
    fn text_callee_parentheses_and_divisors() {
        with_expr("f(a,\n   b)", |n, t| {
            assert_eq!(flat(n, t), "f(a, b)");
            assert_eq!(callee(n, t), Some("f"));
        });
        with_expr("(a /* why */)", |n, t| {
            assert_eq!(sole_operand(n).map(|o| flat(o, t)), Some("a".into()))
        });
        with_expr("a / (b % c) + d / 2 + sizeof(e / f)", |n, t| {
            assert_eq!(division_guards(n, t), ["(c) != 0", "((b % c)) != 0"])
        });
    }
}
