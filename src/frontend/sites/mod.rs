//! Finds, in an unpreprocessed C source, the places where test objectives go: every statement
//! of every function body (with its decision, the expressions mutation visits, its calls and
//! its branches) and the functions themselves, with the byte positions the annotator needs to
//! insert labels without changing what the program does.

mod decisions;
mod effects;
mod typing;

use std::collections::BTreeSet;

use tree_sitter::Node;

use covprune_encoders::Expr;

use crate::frontend::syntax::{self, has_effects};
use crate::ir::Program;
pub use decisions::{Hoist, Plan, PlannedDecision};
pub use typing::TypeEnv;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtKind {
    If,
    While,
    For,
    Do,
    Switch,
    Expression,
    Return,
    Goto,
    Labeled,
    Case,
    Declaration,
    Other,
}

/// A decision: the condition of an `if`, `while` or `for` whose evaluation has no effects.
#[derive(Clone, Debug)]
pub struct CondSite {
    /// The condition's text as written (without the parentheses of `if (...)`).
    pub text: String,
    pub expr: Expr,
}

/// A branch or loop body.
#[derive(Clone, Copy, Debug)]
pub struct Branch {
    pub range: (usize, usize),
    /// A `{ ... }` block (labels go after its `{`); otherwise a single statement.
    pub compound: bool,
}

#[derive(Clone, Debug)]
pub struct StmtSite {
    pub kind: StmtKind,
    pub range: (usize, usize),
    /// 1-based line of the statement.
    pub line: usize,
    /// Nesting depth in the syntax tree (orders insertions at one position).
    pub depth: usize,
    /// Index of the enclosing function in [`Sites::functions`].
    pub function: usize,
    /// The statement is a branch or body of another statement: labels before it need a block.
    pub needs_block: bool,
    /// The statement's extent in the tree is the one the compiler sees (no preprocessor
    /// directive inside it, no `else` right after an `if`): it may be wrapped or rewritten.
    pub reliable: bool,
    /// Labels may go right before the statement (it parsed as a whole statement); without a
    /// block, this is all that inserting before it needs.
    pub safe_before: bool,
    /// A direct element of a `{ ... }` block.
    pub block_item: bool,
    pub decision: Option<CondSite>,
    /// Expressions that mutation visits here, evaluated before the statement runs.
    pub exprs: Vec<Expr>,
    /// `return e;` with `e` free of effects: the text of `e`.
    pub return_value: Option<String>,
    /// A `for` loop's update as expressions (`i++` as `i + 1`; `++a, ++b` as two), when
    /// labels may run before it (the body has no `continue` of this loop).
    pub update: Vec<Expr>,
    /// Functions of the file called by this statement's own expressions, unconditionally.
    pub calls: Vec<String>,
    pub consequence: Option<Branch>,
    pub alternative: Option<Branch>,
    pub body: Option<Branch>,
    /// Labeled statements, `case` and `default`: just after the `:`.
    pub colon: Option<usize>,
    /// The decisions labelled at this statement (its condition split as Frama-C does, the
    /// conditions of its `?:`, a `&&`/`||` with effects it computes), and the hoisting of a
    /// condition with effects.
    pub plan: Plan,
    /// Byte range of the condition of an `if` or a loop: `(c)` for `if`, `while` and `do`,
    /// `c` for `for`.
    pub cond_range: Option<(usize, usize)>,
    /// `continue` statements of a loop that bind to it (not to a nested loop): byte ranges.
    pub continues: Vec<(usize, usize)>,
    /// The hoisted evaluation stays in place (a declaration's initialiser) and the labels go
    /// right after the statement.
    pub labels_after: bool,
    /// Calls whose values the statement computes with, evaluated into temporaries first so
    /// that mutation sees the statement as Frama-C normalises it (`exprs` read the temporaries).
    pub values: Option<ValueHoist>,
}

/// Calls evaluated before their statement: `__auto_type __cp_v1 = f(a);` declarations (GNU C), in
/// the program's order, and each call's text replaced by its temporary in the statement. Only
/// where the order cannot matter (see `effects`).
#[derive(Clone, Debug, Default)]
pub struct ValueHoist {
    pub decls: String,
    /// Byte range of each call in the file, and the temporary that replaces it.
    pub calls: Vec<((usize, usize), String)>,
}

#[derive(Clone, Debug)]
pub struct FunctionSite {
    pub name: String,
    /// Just after the `{` of the body.
    pub body_start: usize,
    /// Where the definition starts.
    pub start: usize,
    pub line: usize,
    /// The function returns an arithmetic value.
    pub returns_arith: bool,
    /// Distinct atoms of the function's decisions that read no local variable, in source
    /// order (predicate-complete coverage).
    pub predicates: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Sites {
    pub functions: Vec<FunctionSite>,
    /// Statements of function bodies, by start position.
    pub statements: Vec<StmtSite>,
    /// (line, why) of places left without labels.
    pub skipped: Vec<(usize, String)>,
    temps: decisions::Temps,
    /// Function-like macros with a `?:` in their body (see `decisions::macro_decisions`).
    macros: Vec<crate::frontend::preprocess::ConditionalMacro>,
    /// What calling each function may read and write (see `effects`).
    effects: effects::CallEffects,
    /// Names that stand for constants: enumerators and object-like macros of the file whose
    /// value is a constant expression.
    constants: std::rc::Rc<typing::Constants>,
    /// Temporaries of hoisted call values so far (`__cp_vN`).
    values: usize,
}

impl Sites {
    /// Decisions labelled, as Frama-C's normal form has them.
    pub fn decisions(&self) -> usize {
        self.statements.iter().map(|s| s.plan.decisions.len()).sum()
    }
}

/// The syntax tree of a source text (not preprocessed).
fn parse(text: &[u8]) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .expect("tree-sitter-c matches the tree-sitter ABI it was built for");
    parser.parse(text, None)
}

/// Scans the source text (not preprocessed) for statements and functions; `program`, the same
/// file lowered, types the expressions (without it every operand type is unknown).
pub fn find(text: &[u8], program: Option<&Program>) -> Sites {
    find_with_macros(text, program, &Default::default())
}

/// [`find`], with the macros the file sees (`preprocess::file_macros`).
pub fn find_with_macros(
    text: &[u8],
    program: Option<&Program>,
    macros: &crate::frontend::preprocess::FileMacros,
) -> Sites {
    // Preprocessed input has line markers inside statements wherever a header's macro
    // expands (`if (o ==\n# 5 "stddef.h"\n((void *)0)\n# 12 "f.c"\n)`): the parser would see
    // directives there and lose the statement's shape. Sites are found in a copy where those
    // lines are blanks (same length, so every position holds), and every text they carry
    // comes from that copy.
    let parseable = parseable(text);
    let text: &[u8] = &parseable;
    let Some(tree) = parse(text) else {
        return Sites::default();
    };
    // Old C (implicit int, K&R definitions) parses badly: find the sites in the same text
    // rewritten as modern C, then map their positions back to the original text. Edits only
    // touch declaration heads, so every position the annotator uses maps exactly.
    if tree.root_node().has_error() {
        let typedefs = crate::frontend::oldc::typedef_names(text, tree.root_node());
        if let Some(fixed) = crate::frontend::oldc::rewrite(text, &typedefs) {
            if let Some(new_tree) = parse(&fixed.text) {
                let mut sites = find_in(&fixed.text, &new_tree, program, macros);
                remap(&mut sites, &fixed.edits, text);
                return sites;
            }
        }
    }
    find_in(text, &tree, program, macros)
}

/// The text as the parser can take it, every byte at its place: line markers blanked (see
/// [`blank_line_markers`]) and GNU computed gotos (`goto *tab[op];`), which do not parse,
/// read as `(0), *tab[op];`, an expression statement, which is all the annotator needs to
/// place labels around them (the prover lowers the real text).
fn parseable(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    let blanked = blank_line_markers(text);
    match without_computed_gotos(blanked.as_deref().unwrap_or(text)) {
        Some(rewritten) => Cow::Owned(rewritten),
        None => blanked.map_or(Cow::Borrowed(text), Cow::Owned),
    }
}

/// `goto *e;` rewritten as `(0), *e;` (same length); None when there is none.
fn without_computed_gotos(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(p) = text[i..].windows(4).position(|w| w == b"goto") {
        let at = i + p;
        i = at + 4;
        let word_start = at == 0 || !(text[at - 1].is_ascii_alphanumeric() || text[at - 1] == b'_');
        let mut j = at + 4;
        while j < text.len() && text[j].is_ascii_whitespace() {
            j += 1;
        }
        if word_start && text.get(j) == Some(&b'*') {
            out.get_or_insert_with(|| text.to_vec())[at..at + 4].copy_from_slice(b"(0),");
        }
    }
    out
}

/// The text with every line marker (`# 12 "file.c" 3`, as `cc -E` writes them) turned into
/// spaces, newlines kept; None when there is none.
fn blank_line_markers(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut start = 0;
    while start < text.len() {
        let end = text[start..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(text.len(), |p| start + p);
        let line = &text[start..end];
        if crate::frontend::source::is_line_marker(line) {
            let o = out.get_or_insert_with(|| text.to_vec());
            o[start..end].fill(b' ');
        }
        start = end + 1;
    }
    out
}

/// Maps every byte position of `sites` from the rewritten text back to the original one.
fn remap(sites: &mut Sites, edits: &[crate::frontend::oldc::Edit], text: &[u8]) {
    let map = |p: usize| -> usize {
        let mut delta: isize = 0;
        for e in edits {
            if e.new_end <= p {
                delta += (e.new_end - e.new_start) as isize - (e.orig_end - e.orig_start) as isize;
            } else if e.new_start < p {
                return e.orig_start;
            } else {
                break;
            }
        }
        (p as isize - delta) as usize
    };
    let pair = |r: &mut (usize, usize)| *r = (map(r.0), map(r.1));
    // Lines, from the original text.
    let mut line_starts = vec![0];
    line_starts.extend(
        text.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1),
    );
    let line_of = |p: usize| line_starts.partition_point(|&s| s <= p);
    let moved: std::collections::BTreeMap<usize, usize> = sites
        .statements
        .iter()
        .map(|s| (s.line, line_of(map(s.range.0))))
        .collect();
    for f in &mut sites.functions {
        f.body_start = map(f.body_start);
        f.line = line_of(map(f.start));
        f.start = map(f.start);
    }
    for (line, _) in &mut sites.skipped {
        *line = moved.get(line).copied().unwrap_or(*line);
    }
    for s in &mut sites.statements {
        pair(&mut s.range);
        s.line = line_of(s.range.0);
        for b in [&mut s.consequence, &mut s.alternative, &mut s.body]
            .into_iter()
            .flatten()
        {
            pair(&mut b.range);
        }
        if let Some(c) = &mut s.colon {
            *c = map(*c);
        }
        if let Some(h) = &mut s.plan.hoist {
            pair(&mut h.range);
        }
        if let Some(v) = &mut s.values {
            for (r, _) in &mut v.calls {
                pair(r);
            }
        }
        if let Some(r) = &mut s.cond_range {
            pair(r);
        }
        for r in &mut s.continues {
            pair(r);
        }
    }
}

fn find_in(
    text: &[u8],
    tree: &tree_sitter::Tree,
    program: Option<&Program>,
    macros: &crate::frontend::preprocess::FileMacros,
) -> Sites {
    // Function bodies are annotated statement by statement: a statement which parsed without
    // error, and which no ERROR node encloses, has a reliable extent even when a macro
    // elsewhere confused tree-sitter (`local int f(...)`, `struct s FAR *p;`). Functions may
    // sit inside ERROR regions at the top level, so those are searched too.
    let mut defs = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "function_definition" {
            // A macro before `struct s {...} v = ...;` can make tree-sitter see a function
            // whose body is a member list: a definition needs a function declarator.
            let is_function = node
                .child_by_field_name("declarator")
                .is_some_and(has_function_declarator);
            if is_function
                && node
                    .child_by_field_name("body")
                    .is_some_and(|b| b.kind() == "compound_statement")
            {
                defs.push(node);
            }
            continue;
        }
        let mut c = node.walk();
        stack.extend(node.named_children(&mut c));
    }
    defs.sort_by_key(|n| n.start_byte());
    let names: BTreeSet<String> = defs
        .iter()
        .map(|d| {
            d.child_by_field_name("declarator")
                .map(|x| declarator_name(x, text))
                .unwrap_or_default()
        })
        .collect();
    let mut sites = Sites {
        macros: macros.conditional.clone(),
        ..Sites::default()
    };
    sites.effects = effects::CallEffects::of(program);
    let mut constants = constant_names(tree.root_node(), text, &macros.objects);
    constants.pure_macros = macros
        .conditional
        .iter()
        .filter(|m| decisions::macro_is_pure(m))
        .cloned()
        .collect();
    sites.temps.pure_macros = constants
        .pure_macros
        .iter()
        .map(|m| m.name.clone())
        .collect();
    sites.constants = std::rc::Rc::new(constants);
    for def in defs {
        function(def, text, program, &names, &mut sites);
    }
    sites.statements.sort_by_key(|s| (s.range.0, s.depth));
    sites.skipped.sort();
    sites.skipped.dedup();
    sites
}

const STATEMENTS: &[&str] = &[
    "expression_statement",
    "if_statement",
    "while_statement",
    "for_statement",
    "do_statement",
    "switch_statement",
    "return_statement",
    "goto_statement",
    "break_statement",
    "continue_statement",
    "labeled_statement",
    "case_statement",
    "declaration",
    "attributed_statement",
];

fn function(
    node: Node,
    text: &[u8],
    program: Option<&Program>,
    names: &BTreeSet<String>,
    sites: &mut Sites,
) {
    let Some(body) = node.child_by_field_name("body") else {
        return;
    };
    let name = node
        .child_by_field_name("declarator")
        .map(|d| declarator_name(d, text))
        .unwrap_or_default();
    let env = TypeEnv {
        program,
        function: program.and_then(|p| p.function(&name)),
        hoisted: Vec::new(),
        constants: sites.constants.clone(),
    };
    let returns_arith = env.function.is_some_and(|f| {
        matches!(
            typing::class(&f.ty.ret),
            covprune_encoders::Ty::Int | covprune_encoders::Ty::Float
        )
    });
    let index = sites.functions.len();
    let fn_text = &text[node.start_byte()..node.end_byte()];
    let mut predicates: Vec<String> = Vec::new();
    let mut stack = vec![(body, 0usize)];
    while let Some((n, depth)) = stack.pop() {
        if n.is_error() {
            continue; // nothing under an ERROR node is trusted
        }
        let for_initializer =
            n.kind() == "declaration" && n.parent().is_some_and(|p| p.kind() == "for_statement");
        if STATEMENTS.contains(&n.kind()) && !for_initializer {
            let site = statement(n, text, depth, index, &env, names, fn_text, sites);
            // Predicate-complete coverage evaluates these atoms at every statement: only
            // those that cannot trap there (not `p->x > 0` after `p &&`).
            for d in site.plan.decisions.iter().filter(|d| d.guard.is_none()) {
                for (atom, free) in d.cond.atoms().into_iter().zip(&d.trap_free) {
                    let reads_local = identifiers(atom).any(|id| env.is_local(id));
                    if *free && !reads_local && !predicates.iter().any(|p| p == atom) {
                        predicates.push(atom.to_string());
                    }
                }
            }
            sites.statements.push(site);
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        for ch in kids.into_iter().rev() {
            stack.push((ch, depth + 1));
        }
    }
    sites.functions.push(FunctionSite {
        name,
        body_start: body.start_byte() + 1,
        start: node.start_byte(),
        line: node.start_position().row + 1,
        returns_arith,
        predicates,
    });
}

/// The C identifiers of an expression text.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
}

fn has_function_declarator(node: Node) -> bool {
    match node.kind() {
        "function_declarator" => true,
        "pointer_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
            let mut c = node.walk();
            let found = node.named_children(&mut c).any(has_function_declarator);
            found
        }
        _ => false,
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

fn branch(node: Option<Node>) -> Option<Branch> {
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

#[allow(clippy::too_many_arguments)]
fn statement(
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
    let kind = match node.kind() {
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
    };
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
    let needs_block = !matches!(
        parent,
        "compound_statement" | "case_statement" | "labeled_statement" | "translation_unit"
    );
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
    let safe_before = ends_well
        && !node.has_error()
        && !(in_region && needs_block)
        && starts_a_statement(text, node.start_byte());
    let reliable = safe_before && !has_directive && !else_follows;
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
        block_item: parent == "compound_statement",
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
    let own: Vec<Node> = match kind {
        StmtKind::If | StmtKind::While | StmtKind::Switch => {
            field("condition").into_iter().collect()
        }
        StmtKind::For => field("initializer")
            .into_iter()
            .chain(field("condition"))
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
    };
    for e in &own {
        calls_in(*e, text, names, false, &mut site.calls);
    }
    match kind {
        StmtKind::If | StmtKind::While | StmtKind::For => {
            if let Some(c) = field("condition") {
                site.decision = decision(c, text, line, env, sites);
                if let Some(d) = &site.decision {
                    site.exprs.push(d.expr.clone());
                }
            }
            if kind == StmtKind::For {
                // Labels before the update only when no `continue` of the loop skips them.
                if let Some(u) = field("update").filter(|_| site.continues.is_empty()) {
                    site.update = update_steps(u, text, env);
                }
            }
        }
        StmtKind::Do => {
            if let Some(c) = field("condition") {
                site.decision = decision(c, text, line, env, sites);
                if let Some(d) = &site.decision {
                    site.exprs.push(d.expr.clone());
                }
            }
        }
        StmtKind::Switch => {
            if let Some(c) = field("condition") {
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

/// The root of what a statement computes, with its assignment target: `x = e;` (target `x`,
/// `op=` when compound), `return e;`, `T x = e;` (one declarator).
fn computed_root<'t>(node: Node<'t>, kind: StmtKind) -> Option<(Option<Node<'t>>, bool, Node<'t>)> {
    match kind {
        StmtKind::Expression => {
            let e = node.named_child(0)?;
            if e.kind() != "assignment_expression" {
                return None;
            }
            let compound = e
                .child_by_field_name("operator")
                .is_some_and(|o| o.kind() != "=");
            Some((
                e.child_by_field_name("left"),
                compound,
                e.child_by_field_name("right")?,
            ))
        }
        StmtKind::Return => Some((None, false, node.named_child(0)?)),
        StmtKind::Declaration => {
            let mut c = node.walk();
            let decls: Vec<Node> = node.children_by_field_name("declarator", &mut c).collect();
            match decls.as_slice() {
                [d] => Some((None, false, d.child_by_field_name("value")?)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Hoists the calls a statement computes with into temporaries (see [`ValueHoist`]) when
/// nothing else in it has effects, every call is evaluated unconditionally, and no call can
/// change what the rest of the statement or another call reads; then mutation visits the
/// statement over the temporaries. A statement that is one call (`x = f(a);`) stays as it is,
/// as in Frama-C's normal form, except `return f(a);`, whose value LAnnotate mutates.
fn hoist_values(node: Node, text: &[u8], env: &TypeEnv, site: &mut StmtSite, sites: &mut Sites) {
    let Some((target, compound, root)) = computed_root(node, site.kind) else {
        return;
    };
    if root.kind() == "initializer_list"
        || (site.kind != StmtKind::Return && peel(root).kind() == "call_expression")
    {
        return;
    }
    if site.kind == StmtKind::Declaration {
        let whole = String::from_utf8_lossy(&text[node.start_byte()..node.end_byte()]);
        if whole
            .split_whitespace()
            .any(|w| w == "static" || w == "extern")
        {
            return;
        }
    }
    let mut rest = effects::Effects::default();
    reads_of(root, text, env, &mut rest);
    if let Some(t) = target {
        // A plain variable is only written, after everything; anything else is read too.
        let plain = t.kind() == "identifier" && !compound;
        if !plain {
            if has_effects(t) {
                return;
            }
            reads_of(t, text, env, &mut rest);
        }
    }
    let Some(cv) = call_values(root, &rest, text, env, sites) else {
        return;
    };
    let local = env.with_hoisted(cv.substituted.clone());
    let computed = match site.kind {
        StmtKind::Expression => match node
            .named_child(0)
            .and_then(|e| assigned_value(e, text, &local))
        {
            Some(e) => e,
            None => return,
        },
        StmtKind::Return => {
            let (value, vt) = local.build(root, text);
            local.as_returned(value, &vt)
        }
        _ => local.build(root, text).0,
    };
    if !cv.replaced_in(&computed, text) {
        return;
    }
    sites.values += cv.calls.len();
    site.exprs.push(computed);
    if site.kind == StmtKind::Return {
        site.return_value = Some(local.substituted_text(root, text));
    }
    site.values = Some(cv.hoist);
}

/// A statement whose expression has side effects inside it (`a[i++] = c;`, `x = y = 0;`,
/// `sum += d *= x / ++k;`, `return s[n++];`): Frama-C evaluates each effect as a statement
/// of its own, in order, and LAnnotate mutates each of those assignments. Here every such
/// assignment's value is mutated before the statement, over the state before it: a variable
/// that an earlier effect of the statement changed is read through that effect's value (`k`
/// after `++k` is `(k + 1)`), which is exact for any statement with defined behaviour (no
/// sequence point inside: a variable written and read otherwise is undefined behaviour, C11
/// 6.5p2). Statements with calls, commas, `&&`, `||` or `?:` beside the effects, and effects
/// whose value changes type, get nothing.
fn sequence_effects(node: Node, text: &[u8], env: &TypeEnv, site: &mut StmtSite) {
    let is_return = match site.kind {
        StmtKind::Expression => false,
        StmtKind::Return => true,
        _ => return,
    };
    let Some(root) = node.named_child(0) else {
        return;
    };
    if !has_effects(root) || !effects_in_sequence(root, text) {
        return;
    }
    let mut values = Vec::new();
    let mut steps = Vec::new();
    if sequence(root, text, env, !is_return, &mut values, &mut steps).is_none() {
        return;
    }
    if is_return {
        let local = env.with_hoisted(values);
        let (value, vt) = local.build(root, text);
        steps.push(local.as_returned(value, &vt));
        site.return_value = Some(local.substituted_text(root, text));
    }
    site.exprs = steps;
}

/// Arithmetic on values of type `t` gives `t` again (`int` and wider, floating types): `v + 1`
/// is the value `++v` stores, where a `char` would be converted back.
fn closed(t: &crate::ir::CType) -> bool {
    match t {
        crate::ir::CType::Int(k) => crate::ir::types::promote(*k) == *k,
        crate::ir::CType::Float(_) => true,
        _ => false,
    }
}

/// A comma, `?:`, `&&`, `||`, statement expression, asm or compound literal: a node that
/// orders, skips or hides the evaluation of its operands.
fn orders_its_operands(node: Node, text: &[u8]) -> bool {
    match node.kind() {
        "comma_expression"
        | "conditional_expression"
        | "compound_statement"
        | "gnu_asm_expression"
        | "compound_literal_expression" => true,
        "binary_expression" => node
            .child_by_field_name("operator")
            .and_then(|o| o.utf8_text(text).ok())
            .is_some_and(|op| op == "&&" || op == "||"),
        _ => false,
    }
}

/// No call, `sizeof` or node that orders its operands: nothing sequences the effects.
fn effects_in_sequence(node: Node, text: &[u8]) -> bool {
    if matches!(
        node.kind(),
        "call_expression" | "sizeof_expression" | "alignof_expression"
    ) || orders_its_operands(node, text)
    {
        return false;
    }
    let mut c = node.walk();
    let kids: Vec<Node> = node.named_children(&mut c).collect();
    kids.into_iter().all(|k| effects_in_sequence(k, text))
}

/// The effects of `node` in Frama-C's order (an assignment's operands first, then the
/// assignment), each assignment's value into `steps`; each effect's node is then read as its
/// value (`values`, text over the state before the statement). `top`: the node is the
/// statement itself, whose value nobody reads.
fn sequence(
    node: Node,
    text: &[u8],
    env: &TypeEnv,
    top: bool,
    values: &mut Vec<((usize, usize), String, crate::ir::CType)>,
    steps: &mut Vec<Expr>,
) -> Option<()> {
    let local =
        |values: &Vec<((usize, usize), String, crate::ir::CType)>| env.with_hoisted(values.clone());
    match node.kind() {
        "assignment_expression" => {
            let (l, r) = (
                node.child_by_field_name("left")?,
                node.child_by_field_name("right")?,
            );
            // The target's own operands (`a[i++]`), then the value.
            let mut c = l.walk();
            let parts: Vec<Node> = l.named_children(&mut c).collect();
            for p in parts {
                sequence(p, text, env, false, values, steps)?;
            }
            sequence(r, text, env, false, values, steps)?;
            let e = local(values);
            let step = assigned_value(node, text, &e)?;
            let (_, lt) = e.build(l, text);
            if !top {
                // The assignment's value, read where it is used: the value assigned, when
                // the target's type does not change it.
                let op = node.child_by_field_name("operator")?.utf8_text(text).ok()?;
                let (_, rt) = e.build(r, text);
                let value = if op == "=" {
                    (rt == lt && lt.is_arithmetic()).then(|| e.substituted_text(r, text))?
                } else {
                    (lt == rt && closed(&lt)).then(|| {
                        format!(
                            "{} {} ({})",
                            e.substituted_text(l, text),
                            op.trim_end_matches('='),
                            e.substituted_text(r, text)
                        )
                    })?
                };
                values.push((
                    (node.start_byte(), node.end_byte()),
                    format!("({value})"),
                    lt,
                ));
            }
            steps.push(step);
            Some(())
        }
        "update_expression" => {
            let arg = node.child_by_field_name("argument")?;
            let op = node.child_by_field_name("operator")?;
            let prefix = op.start_byte() < arg.start_byte();
            let mut c = arg.walk();
            let parts: Vec<Node> = arg.named_children(&mut c).collect();
            for p in parts {
                sequence(p, text, env, false, values, steps)?;
            }
            let e = local(values);
            let (target, t) = e.build(arg, text);
            if !closed(&t) {
                return None;
            }
            let step = assigned_value(node, text, &e)?;
            let name = e.substituted_text(arg, text);
            if !top {
                if !prefix {
                    // Frama-C keeps the old value in a temporary first: `tmp = v;`.
                    steps.push(target);
                }
                let sign = if op.utf8_text(text).ok()? == "++" {
                    "+"
                } else {
                    "-"
                };
                let value = if prefix {
                    format!("({name} {sign} 1)")
                } else {
                    format!("({name})")
                };
                values.push(((node.start_byte(), node.end_byte()), value, t));
            }
            steps.push(step);
            Some(())
        }
        _ => {
            let mut c = node.walk();
            let kids: Vec<Node> = node.named_children(&mut c).collect();
            for k in kids {
                sequence(k, text, env, false, values, steps)?;
            }
            Some(())
        }
    }
}

/// A `for` update's assignments in order: one, or the operands of a comma expression (`++a,
/// ++b`) when each assigns a variable that no other reads, so that labels before the update
/// see what each operand sees.
fn update_steps(u: Node, text: &[u8], env: &TypeEnv) -> Vec<Expr> {
    if u.kind() != "comma_expression" {
        return assignment(u, text, env).into_iter().collect();
    }
    let mut parts = Vec::new();
    let mut stack = vec![u];
    while let Some(n) = stack.pop() {
        if n.kind() == "comma_expression" {
            // Right first on the stack: the left operand comes out first.
            if let (Some(l), Some(r)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            ) {
                stack.push(r);
                stack.push(l);
                continue;
            }
            return Vec::new();
        }
        parts.push(n);
    }
    // What each part writes (its target's name); no part may read a name another writes.
    let mut written = Vec::new();
    for p in &parts {
        let target = match p.kind() {
            "assignment_expression" => p.child_by_field_name("left"),
            "update_expression" => p.child_by_field_name("argument"),
            _ => None,
        };
        match target.filter(|t| t.kind() == "identifier") {
            Some(t) => written.push(syntax::flat(t, text)),
            None => return Vec::new(),
        }
    }
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let reads_other = identifiers(&syntax::flat(*p, text))
            .any(|w| written.iter().enumerate().any(|(j, n)| j != i && n == w));
        if reads_other {
            return Vec::new();
        }
        match assignment(*p, text, env) {
            Some(e) => out.push(e),
            None => return Vec::new(),
        }
    }
    out
}

/// Calls hoisted into temporaries: the call nodes, the declarations, and each call's range,
/// temporary and type (for a [`TypeEnv`] that reads the temporaries instead).
struct CallValues<'t> {
    calls: Vec<Node<'t>>,
    hoist: ValueHoist,
    substituted: Vec<((usize, usize), String, crate::ir::CType)>,
}

impl CallValues<'_> {
    /// No call is left in what labels read (a call inside an unknown construct's text).
    fn replaced_in(&self, e: &Expr, text: &[u8]) -> bool {
        let shown = format!("{e:?}");
        !self
            .calls
            .iter()
            .any(|c| shown.contains(&syntax::flat(*c, text)))
    }
}

/// The calls `root` computes with, evaluated first into `__auto_type` temporaries numbered
/// after the file's last one (not yet counted: the caller commits with `sites.values`), when
/// nothing else in `root` has effects, every call is evaluated unconditionally, each callee
/// is a function the program declares, and no call can change what `rest` (the rest of the
/// statement) or another call reads. None otherwise, or when `root` calls nothing.
fn call_values<'t>(
    root: Node<'t>,
    rest: &effects::Effects,
    text: &[u8],
    env: &TypeEnv,
    sites: &Sites,
) -> Option<CallValues<'t>> {
    let mut calls = Vec::new();
    if !outermost_calls(root, text, &mut calls) || calls.is_empty() {
        return None;
    }
    let mut call_effects = Vec::new();
    for c in &calls {
        // Only calls of functions the program declares: `(T)(x)` with a typedef `T` the
        // parser does not know reads as a call, and a call through a pointer may be one too.
        let name = syntax::callee(*c, text).filter(|n| env.return_type(n).is_some())?;
        if name.contains("setjmp") || name.starts_with("__builtin_va") {
            return None;
        }
        let mut e = sites.effects.call(Some(name));
        if let Some(args) = c.child_by_field_name("arguments") {
            let mut inner = Vec::new();
            if !outermost_calls(args, text, &mut inner) {
                return None;
            }
            reads_of(args, text, env, &mut e);
            for n in inner {
                e.absorb(&sites.effects.call(syntax::callee(n, text)));
            }
        }
        call_effects.push(e);
    }
    for (i, a) in call_effects.iter().enumerate() {
        if !a.commutes_with(rest) || call_effects[i + 1..].iter().any(|b| !a.commutes_with(b)) {
            return None;
        }
    }
    // The temporaries, typed by the callee's declared return type; the call's own bytes
    // (a string literal's blanks are the program's).
    let mut hoist = ValueHoist::default();
    let mut substituted = Vec::new();
    for (k, c) in calls.iter().enumerate() {
        let name = format!("__cp_v{}", sites.values + k + 1);
        let call_text = String::from_utf8_lossy(&text[c.start_byte()..c.end_byte()]);
        hoist
            .decls
            .push_str(&format!("__auto_type {name} = {call_text}; "));
        let ret = syntax::callee(*c, text)
            .and_then(|n| env.return_type(n))
            .unwrap_or(crate::ir::CType::Unknown);
        hoist
            .calls
            .push(((c.start_byte(), c.end_byte()), name.clone()));
        substituted.push(((c.start_byte(), c.end_byte()), name, ret));
    }
    Some(CallValues {
        calls,
        hoist,
        substituted,
    })
}

/// What mutation visits in each piece of a hoisted condition, where Frama-C's normal form
/// evaluates it (`tmp = f(a); if (tmp != 2)`): a piece without effects as it stands; an atom
/// whose calls can be evaluated first, over their values (declared just before the piece);
/// an atom that assigns a variable (`(n = atoi(s)) < 0`, `--x < 0.0`), the assignment's
/// value before and the atom over the variable after. Other pieces are evaluated unobserved.
fn observe_pieces(node: Node, text: &[u8], env: &TypeEnv, site: &mut StmtSite, sites: &mut Sites) {
    let Some(h) = site.plan.hoist.as_mut() else {
        return;
    };
    if site.labels_after {
        h.pieces.clear();
        return;
    }
    for piece in &mut h.pieces {
        let Some(atom) = node
            .descendant_for_byte_range(piece.span.0, piece.span.1)
            .filter(|n| (n.start_byte(), n.end_byte()) == piece.span)
        else {
            continue;
        };
        let Some(temp) = piece.effect_atom.clone() else {
            piece.before.push(env.build(atom, text).0);
            continue;
        };
        let mut rest = effects::Effects::default();
        reads_of(atom, text, env, &mut rest);
        if let Some(cv) = call_values(atom, &rest, text, env, sites) {
            let local = env.with_hoisted(cv.substituted.clone());
            let e = local.build(atom, text).0;
            if !cv.replaced_in(&e, text) {
                continue;
            }
            sites.values += cv.calls.len();
            piece.decls = cv.hoist.decls;
            piece.eval = format!("({temp} = (({}) != 0))", local.substituted_raw(atom, text));
            piece.before.push(e);
        } else if let Some((before, after)) = assigned_then_read(atom, text, env) {
            piece.before.extend(before);
            piece.after.push(after);
        }
    }
}

/// An atom that assigns a plain variable and then only compares it with constants:
/// `(v = e) OP c`, `(v = e)`, `!(v = e)`, `--v OP c`. Frama-C evaluates the assignment as a
/// statement first: its value is mutated before (when `e` is free of effects; a call's value
/// is not, as in Frama-C's `v = f(a);`), and the atom over `v` after.
fn assigned_then_read(atom: Node, text: &[u8], env: &TypeEnv) -> Option<(Option<Expr>, Expr)> {
    let is_constant = |n: Node| {
        let mut ok = !has_effects(n);
        let mut stack = vec![n];
        while let Some(k) = stack.pop() {
            if k.kind() == "identifier" {
                let name = k.utf8_text(text).unwrap_or("");
                ok &= env.constant(name).is_some() && env.variable_kind(name).is_none();
            }
            let mut c = k.walk();
            stack.extend(k.named_children(&mut c));
        }
        ok
    };
    let inner = peel(atom);
    let assign = match inner.kind() {
        "binary_expression" => {
            let (l, r) = (
                inner.child_by_field_name("left")?,
                inner.child_by_field_name("right")?,
            );
            let op = inner
                .child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok())
                .unwrap_or("");
            let relational = matches!(op, "<" | "<=" | ">" | ">=" | "==" | "!=");
            if !relational || !is_constant(r) {
                return None;
            }
            peel(l)
        }
        "unary_expression"
            if inner
                .child_by_field_name("operator")
                .is_some_and(|o| o.utf8_text(text) == Ok("!")) =>
        {
            peel(inner.child_by_field_name("argument")?)
        }
        _ => inner,
    };
    let target = match assign.kind() {
        "assignment_expression" => assign.child_by_field_name("left")?,
        "update_expression"
            if assign.child_by_field_name("operator").is_some_and(|o| {
                o.start_byte()
                    < assign
                        .child_by_field_name("argument")
                        .map_or(0, |a| a.start_byte())
            }) =>
        {
            assign.child_by_field_name("argument")?
        }
        _ => return None,
    };
    if target.kind() != "identifier" {
        return None;
    }
    let name = target.utf8_text(text).ok()?;
    let vt = env.var(name)?;
    let value = assignment(assign, text, env);
    let local = env.with_hoisted(vec![(
        (assign.start_byte(), assign.end_byte()),
        name.to_string(),
        vt,
    )]);
    Some((value, local.build(atom, text).0))
}

/// The calls of `node` that no other call encloses, in source order; false when something
/// else has effects or a call is evaluated only sometimes (under `&&`, `||`, `?:`) or never
/// (`sizeof`).
fn outermost_calls<'t>(node: Node<'t>, text: &[u8], out: &mut Vec<Node<'t>>) -> bool {
    match node.kind() {
        "call_expression" => {
            out.push(node);
            return true;
        }
        "sizeof_expression" | "alignof_expression" => return true,
        "assignment_expression" | "update_expression" => return false,
        _ if orders_its_operands(node, text) => return false,
        _ => {}
    }
    let mut c = node.walk();
    let kids: Vec<Node> = node.named_children(&mut c).collect();
    kids.into_iter().all(|k| outermost_calls(k, text, out))
}

/// What `node` reads, calls excepted: private variables read nothing others can change;
/// globals and `static` locals by name; pointers, arrays and variables whose address is
/// taken, as memory; a name that is not a known variable or constant, anything.
fn reads_of(node: Node, text: &[u8], env: &TypeEnv, e: &mut effects::Effects) {
    match node.kind() {
        "call_expression" | "sizeof_expression" | "alignof_expression" => return,
        "pointer_expression" | "subscript_expression" => e.reads_memory = true,
        "field_expression" => {
            if node
                .child_by_field_name("operator")
                .is_some_and(|o| o.utf8_text(text) == Ok("->"))
            {
                e.reads_memory = true;
            }
            if let Some(a) = node.child_by_field_name("argument") {
                reads_of(a, text, env, e);
            }
            return;
        }
        "identifier" => {
            let name = node.utf8_text(text).unwrap_or("");
            match env.variable_kind(name) {
                Some(typing::VarKind::Private) => {}
                Some(typing::VarKind::Memory) => e.reads_memory = true,
                Some(typing::VarKind::Named(k)) => {
                    e.reads.insert(k);
                }
                None if env.constant(name).is_some() => {}
                None => e.reads_all = true,
            }
            return;
        }
        _ => {}
    }
    let mut c = node.walk();
    let kids: Vec<Node> = node.named_children(&mut c).collect();
    for k in kids {
        reads_of(k, text, env, e);
    }
}

/// Enumerators and object-like macros defined as constant expressions, in the file or in the
/// headers it includes (`seen`, from `cc -dM`).
fn constant_names(root: Node, text: &[u8], seen: &[(String, String)]) -> typing::Constants {
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
    typing::Constants {
        kinds: names,
        negated,
        pure_macros: Vec::new(),
    }
}

/// The decisions of a statement as Frama-C's normal form has them (see [`decisions`]).
fn plan_statement(
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
        let from_macros =
            decisions::macro_decisions(root, text, &sites.macros, &mut sites.temps, private);
        plan.decisions.extend(from_macros);
        let pure = sites.temps.pure_macros.clone();
        for (c, guard) in decisions::ternaries(root, text, private, &pure) {
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

/// `&name` somewhere in `body` (not `&&name`).
fn address_taken(body: &[u8], name: &str) -> bool {
    let n = name.as_bytes();
    let mut i = 0;
    while let Some(p) = body[i..].iter().position(|b| *b == b'&') {
        let at = i + p;
        i = at + 1;
        if body.get(at + 1) == Some(&b'&') {
            i = at + 2;
            continue;
        }
        if at > 0 && body[at - 1] == b'&' {
            continue;
        }
        let mut j = at + 1;
        while j < body.len() && (body[j].is_ascii_whitespace() || body[j] == b'(') {
            j += 1;
        }
        let end = j + n.len();
        if body[j..].starts_with(n)
            && !body
                .get(end)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            return true;
        }
    }
    false
}

fn has_ternary(node: Node) -> bool {
    if node.kind() == "conditional_expression" {
        return true;
    }
    let mut c = node.walk();
    let r = node.named_children(&mut c).any(has_ternary);
    r
}

fn has_conditional(node: Node, _text: &[u8]) -> bool {
    has_ternary(node)
}

/// `(c)` → `c`.
fn peel(node: Node) -> Node {
    syntax::sole_operand(node).unwrap_or(node)
}

/// The expression an assignment or increment computes, as mutation sees it: `x = e` gives
/// `e`, `x op= e` gives `x op e`, `x++` gives `x + 1` (CIL's normal form, which LAnnotate
/// mutates). None when anything in it has effects.
fn assignment(node: Node, text: &[u8], env: &TypeEnv) -> Option<Expr> {
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
fn assigned_value(node: Node, text: &[u8], env: &TypeEnv) -> Option<Expr> {
    use covprune_encoders::BinOp;
    match node.kind() {
        "assignment_expression" => {
            let (l, r) = (
                node.child_by_field_name("left")?,
                node.child_by_field_name("right")?,
            );
            let op = node.child_by_field_name("operator")?.utf8_text(text).ok()?;
            let (target, lt) = env.build(l, text);
            let (rhs, rt) = env.build(r, text);
            if op == "=" {
                return Some(typing::converted(rhs, &rt, &lt));
            }
            let bop = BinOp::from_c(op.trim_end_matches('='))?;
            Some(typing::operated(bop, target, &lt, rhs, &rt))
        }
        "update_expression" => {
            let arg = node.child_by_field_name("argument")?;
            let op = node.child_by_field_name("operator")?.utf8_text(text).ok()?;
            let bop = if op == "++" { BinOp::Add } else { BinOp::Sub };
            let (target, t) = env.build(arg, text);
            Some(typing::operated(
                bop,
                target,
                &t,
                Expr::int("1"),
                &crate::ir::CType::INT,
            ))
        }
        _ => None,
    }
}

/// The `continue` statements in `body` that belong to the loop owning `body`.
fn bound_continues(body: Node) -> Vec<(usize, usize)> {
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
fn calls_in(
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

fn decision(
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

/// What precedes `pos` (skipping blanks, comments and directive lines) ends a statement, a
/// label or a statement head (`{`, `}`, `;`, `:`, `)`, `else`, `do`): tree-sitter did not
/// take part of an expression split by `#if` regions for a statement.
fn starts_a_statement(text: &[u8], pos: usize) -> bool {
    let mut end = pos;
    loop {
        let before = &text[..end];
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
        let line = before[line_start..].trim_ascii();
        if line.first() == Some(&b'#') {
            if line_start == 0 {
                return true;
            }
            end = line_start - 1;
            continue;
        }
        let trimmed = before.trim_ascii_end();
        if trimmed.is_empty() {
            return true;
        }
        if trimmed.ends_with(b"*/") {
            match trimmed.windows(2).rposition(|w| w == b"/*") {
                Some(p) => {
                    end = p;
                    continue;
                }
                None => return false,
            }
        }
        if trimmed.len() < before.len() && trimmed.len() < line_start {
            // The previous non-blank text is on an earlier line: look at that line whole.
            end = trimmed.len();
            let ls = text[..end]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1);
            if text[ls..end].trim_ascii().first() == Some(&b'#') {
                end = ls.saturating_sub(1);
                if ls == 0 {
                    return true;
                }
                continue;
            }
        }
        let last = *trimmed.last().unwrap_or(&b';');
        return matches!(last, b';' | b'{' | b'}' | b':' | b')')
            || trimmed.ends_with(b"else")
            || trimmed.ends_with(b"do");
    }
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

/// A `pc_label(pred, id, "TAG", ...);` statement as written in an annotated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelCall {
    /// Byte range of the whole statement, `;` included.
    pub range: (usize, usize),
    /// The predicate's text, as written.
    pub predicate: String,
    /// The id's text, as written (a constant in LTest's files).
    pub id: String,
    pub tag: String,
}

/// The `pc_label` and `pc_label_bindings` statements of an annotated file, in text order;
/// the stub `#define pc_label(...)` of LTest-style headers is a directive, not a statement.
pub fn label_calls(text: &[u8]) -> Vec<LabelCall> {
    // As for sites: same positions, without what the parser cannot take.
    let parseable = parseable(text);
    let text: &[u8] = &parseable;
    let Some(tree) = parse(text) else {
        return Vec::new();
    };
    let slice = |n: tree_sitter::Node| String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "expression_statement" {
            let call = node
                .named_child(0)
                .filter(|c| c.kind() == "call_expression");
            let callee = call.and_then(|c| c.child_by_field_name("function"));
            if let (Some(call), Some(callee)) = (call, callee) {
                let name = slice(callee);
                if name == "pc_label" || name == "pc_label_bindings" {
                    let args: Vec<tree_sitter::Node> = call
                        .child_by_field_name("arguments")
                        .map(|a| {
                            let mut c = a.walk();
                            a.named_children(&mut c)
                                .filter(|n| n.kind() != "comment")
                                .collect()
                        })
                        .unwrap_or_default();
                    if let (Some(p), Some(id)) = (args.first(), args.get(1)) {
                        let tag = args.get(2).map(|t| slice(*t)).unwrap_or_default();
                        out.push(LabelCall {
                            range: (node.start_byte(), node.end_byte()),
                            predicate: slice(*p),
                            id: slice(*id),
                            tag: tag.trim_matches('"').to_string(),
                        });
                    }
                    continue;
                }
            }
        }
        let mut c = node.walk();
        stack.extend(node.named_children(&mut c));
    }
    out.sort_by_key(|l| l.range.0);
    out
}
