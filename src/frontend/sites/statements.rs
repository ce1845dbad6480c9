//! Statements: the site of each statement of a function body, with its kind, its decision,
//! its branches and what mutation visits.

use super::*;

pub(super) fn has_function_declarator(node: Node) -> bool {
    function_declarator(node).is_some()
}

/// The function declarator inside a declarator (through pointers, parentheses, attributes).
pub(super) fn function_declarator(node: Node) -> Option<Node> {
    match node.kind() {
        "function_declarator" => Some(node),
        "pointer_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
            let mut c = node.walk();
            let found = node.named_children(&mut c).find_map(function_declarator);
            found
        }
        _ => None,
    }
}

pub(super) fn declarator_name(node: Node, text: &[u8]) -> String {
    match node.kind() {
        "identifier" => node.utf8_text(text).unwrap_or("").to_string(),
        _ => node
            .child_by_field_name("declarator")
            .map(|d| declarator_name(d, text))
            .unwrap_or_default(),
    }
}

pub(super) fn branch(node: Option<Node>) -> Option<Branch> {
    let n = node?;
    let n = if n.kind() == "else_clause" {
        n.named_child(0)?
    } else {
        n
    };
    Some(Branch {
        range: (n.start_byte(), n.end_byte()),
        compound: n.kind() == "compound_statement",
    })
}

/// What kind of statement `node` is.
fn kind_of(node: Node) -> StmtKind {
    match node.kind() {
        "if_statement" => StmtKind::If,
        "while_statement" => StmtKind::While,
        "for_statement" => StmtKind::For,
        "do_statement" => StmtKind::Do,
        "switch_statement" => StmtKind::Switch,
        "expression_statement" => StmtKind::Expression,
        "return_statement" => StmtKind::Return,
        "goto_statement" => StmtKind::Goto,
        "labeled_statement" => StmtKind::Labeled,
        "case_statement" => StmtKind::Case,
        "declaration" => StmtKind::Declaration,
        _ => StmtKind::Other,
    }
}

/// Where labels may go around a statement.
struct Place {
    /// Labels before it need a block of their own.
    needs_block: bool,
    /// Labels may go before it.
    safe_before: bool,
    /// Its extent in the tree is the one the compiler sees: it may be wrapped or rewritten.
    reliable: bool,
    /// It is an item of a block.
    block_item: bool,
}

fn place_of(node: Node, text: &[u8], kind: StmtKind) -> Place {
    // Statements inside `#if` regions hang under preprocessor nodes: what counts is the first
    // ancestor that is not one. Under a branch, a region may hold the whole branch (`if (c)
    // #ifdef A f(); #endif`): nothing may be inserted there.
    let mut up = node.parent();
    let mut in_region = false;
    while let Some(p) = up.filter(|p| p.kind().starts_with("preproc_")) {
        in_region = true;
        up = p.parent();
    }
    let parent = up.map(|p| p.kind()).unwrap_or("");
    // A statement right after a directive that follows a branch's head may be that branch in
    // another configuration of the preprocessor: it needs a block too.
    let in_block = matches!(
        parent,
        "compound_statement" | "case_statement" | "labeled_statement" | "translation_unit"
    );
    // In a block, a statement after `)` is the body of a macro's loop or branch
    // (`for_run_list (p, list) if (c) ...`): labels before it need a block of their own, and a
    // declaration there takes none (a block would end its scope).
    let after_macro_head = in_block && follows_a_parenthesis(text, node.start_byte());
    let needs_block =
        !in_block || after_macro_head || branch_across_directive(text, node.start_byte());
    // A preprocessor directive inside the statement (`} else\n#endif\n{`), or an `else`
    // right after an `if` that tree-sitter ended early, means the statement's extent in the
    // tree is not the one the compiler sees: wrapping or rewriting it could break the file.
    let stmt_text = &text[node.start_byte()..node.end_byte()];
    let has_directive = stmt_text
        .split(|b| *b == b'\n')
        .skip(1)
        .any(|l| l.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'#'));
    let else_follows = kind == StmtKind::If && next_word_after(text, node.end_byte()) == b"else";
    // A statement ends with `;` or `}`; one that does not (an `if` whose branch is only a
    // directive region) was cut short by the parser.
    let ends_well = matches!(stmt_text.trim_ascii_end().last(), Some(b';' | b'}'));
    // Labels may go before the statement: where it is whole, not split by a region it needs
    // a block across, and not a declaration a block would end the scope of.
    let placeable =
        !(in_region && needs_block || after_macro_head && kind == StmtKind::Declaration);
    let safe_before =
        ends_well && !node.has_error() && placeable && starts_a_statement(text, node.start_byte());
    let reliable = safe_before && !has_directive && !else_follows;
    Place {
        needs_block,
        safe_before,
        reliable,
        block_item: parent == "compound_statement",
    }
}

/// The expressions statement `node` evaluates itself (not those of nested statements).
fn own_expressions(node: Node, kind: StmtKind) -> Vec<Node> {
    match kind {
        StmtKind::If | StmtKind::While | StmtKind::Switch => {
            node.child_by_field_name("condition").into_iter().collect()
        }
        StmtKind::For => node
            .child_by_field_name("initializer")
            .into_iter()
            .chain(node.child_by_field_name("condition"))
            .collect(),
        StmtKind::Expression | StmtKind::Return => {
            let mut c = node.walk();
            node.named_children(&mut c).collect()
        }
        StmtKind::Declaration => {
            let mut c = node.walk();
            node.children_by_field_name("declarator", &mut c)
                .filter_map(|d| d.child_by_field_name("value"))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The decision and the expressions a statement evaluates itself (typed, for the criteria),
/// and the value it returns.
fn read_expressions(
    node: Node,
    text: &[u8],
    kind: StmtKind,
    env: &TypeEnv,
    site: &mut StmtSite,
    sites: &mut Sites,
) {
    match kind {
        StmtKind::If | StmtKind::While | StmtKind::For => {
            if let Some(c) = node.child_by_field_name("condition") {
                site.decision = decision(c, text, site.line, env, sites);
                if let Some(d) = &site.decision {
                    site.exprs.push(d.expr.clone());
                }
            }
            if kind == StmtKind::For {
                // Labels before the update only when no `continue` of the loop skips them.
                if let Some(u) = node
                    .child_by_field_name("update")
                    .filter(|_| site.continues.is_empty())
                {
                    site.update = update_steps(u, text, env);
                }
            }
        }
        StmtKind::Do => {
            if let Some(c) = node.child_by_field_name("condition") {
                site.decision = decision(c, text, site.line, env, sites);
                if let Some(d) = &site.decision {
                    site.exprs.push(d.expr.clone());
                }
            }
        }
        StmtKind::Switch => {
            if let Some(c) = node.child_by_field_name("condition") {
                let inner = peel(c);
                if !has_effects(inner) {
                    site.exprs.push(env.build(inner, text).0);
                }
            }
        }
        StmtKind::Expression => {
            if let Some(e) = node.named_child(0) {
                site.exprs.extend(assignment(e, text, env));
            }
        }
        StmtKind::Return => {
            if let Some(e) = node.named_child(0) {
                if !has_effects(e) && e.kind() != "comma_expression" {
                    let (value, t) = env.build(e, text);
                    site.exprs.push(env.as_returned(value, &t));
                    site.return_value = Some(syntax::flat(e, text));
                }
            }
        }
        _ => {}
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn statement(
    node: Node,
    text: &[u8],
    depth: usize,
    function: usize,
    env: &TypeEnv,
    names: &BTreeSet<String>,
    fn_text: &[u8],
    sites: &mut Sites,
) -> StmtSite {
    let line = node.start_position().row + 1;
    let kind = kind_of(node);
    let Place {
        needs_block,
        safe_before,
        reliable,
        block_item,
    } = place_of(node, text, kind);
    let field = |f: &str| node.child_by_field_name(f);
    let mut site = StmtSite {
        kind,
        range: (node.start_byte(), node.end_byte()),
        line,
        depth,
        function,
        needs_block,
        reliable,
        safe_before,
        block_item,
        decision: None,
        exprs: Vec::new(),
        return_value: None,
        update: Vec::new(),
        calls: Vec::new(),
        consequence: None,
        alternative: None,
        body: None,
        colon: None,
        plan: Plan::default(),
        cond_range: field("condition").map(|c| (c.start_byte(), c.end_byte())),
        continues: Vec::new(),
        labels_after: false,
        values: None,
    };
    if matches!(kind, StmtKind::While | StmtKind::For | StmtKind::Do) {
        if let Some(b) = field("body") {
            site.continues = bound_continues(b);
        }
    }
    match kind {
        StmtKind::If => {
            site.consequence = branch(field("consequence"));
            site.alternative = branch(field("alternative"));
        }
        StmtKind::While | StmtKind::For | StmtKind::Do => site.body = branch(field("body")),
        StmtKind::Labeled | StmtKind::Case => {
            // Just after the first `:` child token.
            let mut c = node.walk();
            site.colon = node
                .children(&mut c)
                .find(|ch| ch.kind() == ":")
                .map(|ch| ch.end_byte());
        }
        _ => {}
    }
    if !safe_before || needs_block && !reliable {
        sites
            .skipped
            .push((line, "statement split by a preprocessor directive".into()));
    }
    // The expressions this statement evaluates itself (not those of nested statements).
    let own = own_expressions(node, kind);
    for e in &own {
        calls_in(*e, text, names, false, &mut site.calls);
    }
    read_expressions(node, text, kind, env, &mut site, sites);
    if safe_before {
        // The function's own variables whose address is never taken: no call can change them.
        let private = |name: &str| env.is_own_variable(name) && !address_taken(fn_text, name);
        plan_statement(node, text, &mut site, sites, &private);
        observe_pieces(node, text, env, &mut site, sites);
        if reliable && site.exprs.is_empty() && site.plan.decisions.is_empty() {
            hoist_values(node, text, env, &mut site, sites);
            if site.values.is_none() {
                sequence_effects(node, text, env, &mut site);
            }
        }
    }
    site
}
