//! Finds, in an unpreprocessed C source, the places where test objectives go: decisions of
//! `if`, `while` and `for` statements (with their atomic conditions) and function bodies, with
//! the byte positions that the annotator needs to insert labels without changing the program.

use tree_sitter::Node;

use covprune_encoders::Cond;

/// What kind of statement owns a decision; loops need a rewrite to place labels before each
/// evaluation of their condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionKind {
    If,
    While,
    For,
}

#[derive(Clone, Debug)]
pub struct DecisionSite {
    pub kind: DecisionKind,
    pub cond: Cond,
    /// The condition's text as written (without the parentheses of `if (...)`).
    pub cond_text: String,
    /// Byte range of the whole statement.
    pub stmt: (usize, usize),
    /// Byte range of the condition: `(c)` for `if`/`while`, `c` for `for`.
    pub cond_range: (usize, usize),
    /// Byte range of the loop body (loops only).
    pub body: (usize, usize),
    /// The statement is a branch or body of another statement: a block must wrap the labels.
    pub needs_block: bool,
    /// 1-based line of the statement.
    pub line: usize,
    /// Nesting depth (for ordering insertions at one position).
    pub depth: usize,
}

#[derive(Clone, Debug)]
pub struct FunctionSite {
    pub name: String,
    /// Just after the `{` of the body.
    pub body_start: usize,
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Sites {
    pub decisions: Vec<DecisionSite>,
    pub functions: Vec<FunctionSite>,
    /// Decisions left without labels because evaluating them twice could change the program
    /// (assignments, increments, calls), or because they are `do`-`while` conditions.
    pub skipped_decisions: Vec<(usize, String)>,
}

/// Scans the source text (not preprocessed) for decision and function sites.
pub fn find(text: &[u8]) -> Sites {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .expect("tree-sitter-c matches the tree-sitter ABI it was built for");
    let Some(tree) = parser.parse(text, None) else {
        return Sites::default();
    };
    let mut sites = Sites::default();
    // Function bodies are annotated statement by statement: a decision whose statement parsed
    // without error, and which no ERROR node encloses, has a reliable extent even when a
    // macro elsewhere confused tree-sitter (`local int f(...)`, `struct s FAR *p;`).
    // Functions may sit inside ERROR regions at the top level, so those are searched too.
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "function_definition" {
            if node.child_by_field_name("body").is_some() {
                function(node, text, &mut sites);
            }
            continue;
        }
        let mut c = node.walk();
        stack.extend(node.named_children(&mut c));
    }
    sites.decisions.sort_by_key(|d| d.stmt.0);
    sites.functions.sort_by_key(|f| f.body_start);
    sites.skipped_decisions.sort();
    sites
}

fn function(node: Node, text: &[u8], sites: &mut Sites) {
    let Some(body) = node.child_by_field_name("body") else {
        return;
    };
    let name = node
        .child_by_field_name("declarator")
        .map(|d| declarator_name(d, text))
        .unwrap_or_default();
    sites.functions.push(FunctionSite {
        name,
        body_start: body.start_byte() + 1,
        line: node.start_position().row + 1,
    });
    let mut stack = vec![(body, 0usize)];
    while let Some((n, depth)) = stack.pop() {
        if n.is_error() {
            continue; // nothing under an ERROR node is trusted
        }
        match n.kind() {
            "if_statement" | "while_statement" | "for_statement" => {
                decision(n, text, depth, sites);
            }
            "do_statement" => {
                sites
                    .skipped_decisions
                    .push((n.start_position().row + 1, "do-while condition".into()));
            }
            // Code in a preprocessor conditional is kept, but which branch is compiled is not
            // known here; it is annotated like any other code.
            _ => {}
        }
        let mut c = n.walk();
        for ch in n.named_children(&mut c) {
            stack.push((ch, depth + 1));
        }
    }
}

fn declarator_name(node: Node, text: &[u8]) -> String {
    match node.kind() {
        "identifier" => node.utf8_text(text).unwrap_or("").to_string(),
        _ => node
            .child_by_field_name("declarator")
            .map(|d| declarator_name(d, text))
            .unwrap_or_default(),
    }
}

fn decision(node: Node, text: &[u8], depth: usize, sites: &mut Sites) {
    let line = node.start_position().row + 1;
    let kind = match node.kind() {
        "if_statement" => DecisionKind::If,
        "while_statement" => DecisionKind::While,
        _ => DecisionKind::For,
    };
    let Some(cond_node) = node.child_by_field_name("condition") else {
        return; // `for (;;)`
    };
    // A preprocessor directive inside the statement (`} else\n#endif\n{`), or an `else`
    // right after an `if` that tree-sitter ended early, means the statement's extent in the
    // tree is not the one the compiler sees: inserting there could break the file.
    let stmt_text = &text[node.start_byte()..node.end_byte()];
    let has_directive = stmt_text
        .split(|b| *b == b'\n')
        .skip(1)
        .any(|l| l.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'#'));
    let next_word = next_word_after(text, node.end_byte());
    if has_directive || next_word == b"else" {
        sites
            .skipped_decisions
            .push((line, "statement split by a preprocessor directive".into()));
        return;
    }
    let inner = if cond_node.kind() == "parenthesized_expression" {
        match cond_node.named_child(0) {
            Some(i) => i,
            None => return,
        }
    } else {
        cond_node
    };
    if has_effects(inner) {
        sites
            .skipped_decisions
            .push((line, "condition with side effects or calls".into()));
        return;
    }
    if inner.kind() == "comma_expression" || inner.kind() == "compound_statement" {
        sites
            .skipped_decisions
            .push((line, "comma or statement expression".into()));
        return;
    }
    let body = node
        .child_by_field_name(if kind == DecisionKind::If {
            "consequence"
        } else {
            "body"
        })
        .map_or((0, 0), |b| (b.start_byte(), b.end_byte()));
    let needs_block = node.parent().is_some_and(|p| {
        !matches!(
            p.kind(),
            "compound_statement" | "case_statement" | "labeled_statement" | "translation_unit"
        )
    });
    let cond_text = inner.utf8_text(text).unwrap_or("").to_string();
    sites.decisions.push(DecisionSite {
        kind,
        cond: to_cond(inner, text),
        cond_text,
        stmt: (node.start_byte(), node.end_byte()),
        cond_range: (cond_node.start_byte(), cond_node.end_byte()),
        body,
        needs_block,
        line,
        depth,
    });
}

/// The first word after `pos`, skipping whitespace, comments and preprocessor directive lines.
fn next_word_after(text: &[u8], mut pos: usize) -> Vec<u8> {
    loop {
        while pos < text.len() && text[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if text[pos..].starts_with(b"#") {
            while pos < text.len() && text[pos] != b'\n' {
                pos += 1;
            }
            continue;
        }
        if text[pos..].starts_with(b"/*") {
            match text[pos + 2..].windows(2).position(|w| w == b"*/") {
                Some(p) => pos += p + 4,
                None => return Vec::new(),
            }
            continue;
        }
        if text[pos..].starts_with(b"//") {
            while pos < text.len() && text[pos] != b'\n' {
                pos += 1;
            }
            continue;
        }
        break;
    }
    text[pos..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .copied()
        .collect()
}

/// The decision as a tree of `&&`, `||`, `!` over atoms (parentheses peeled).
fn to_cond(node: Node, text: &[u8]) -> Cond {
    match node.kind() {
        "parenthesized_expression" if node.named_child_count() == 1 => {
            if let Some(i) = node.named_child(0) {
                if i.kind() != "compound_statement" {
                    return to_cond(i, text);
                }
            }
        }
        "binary_expression" => {
            let op = node
                .child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok())
                .unwrap_or("");
            if let (Some(l), Some(r), "&&" | "||") = (
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
                op,
            ) {
                let (l, r) = (Box::new(to_cond(l, text)), Box::new(to_cond(r, text)));
                return if op == "&&" {
                    Cond::And(l, r)
                } else {
                    Cond::Or(l, r)
                };
            }
        }
        "unary_expression" => {
            let op = node
                .child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok())
                .unwrap_or("");
            if op == "!" {
                if let Some(a) = node.child_by_field_name("argument") {
                    return Cond::Not(Box::new(to_cond(a, text)));
                }
            }
        }
        _ => {}
    }
    Cond::Atom(
        node.utf8_text(text)
            .unwrap_or("0")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Assignments, increments, calls and GNU statement expressions: evaluating the condition a
/// second time (in a label) could change the program.
fn has_effects(node: Node) -> bool {
    match node.kind() {
        "assignment_expression"
        | "update_expression"
        | "call_expression"
        | "compound_statement"
        | "gnu_asm_expression" => true,
        "sizeof_expression" => false,
        _ => {
            let mut c = node.walk();
            let r = node.named_children(&mut c).any(has_effects);
            r
        }
    }
}
