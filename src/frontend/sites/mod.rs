//! Finds, in an unpreprocessed C source, the places where test objectives go: every statement
//! of every function body (with its decision, the expressions mutation visits, its calls and
//! its branches) and the functions themselves, with the byte positions the annotator needs to
//! insert labels without changing what the program does.

pub mod dataflow;
mod decisions;
mod effects;
mod expansions;
mod hoisting;
mod planning;
mod statements;
mod text;
mod typed;
mod typing;

use std::collections::BTreeSet;

use tree_sitter::Node;

use covprune_encoders::Expr;

use crate::frontend::syntax::{self, has_effects};
use crate::ir::Program;
pub use decisions::{Hoist, Leaf, Plan, PlannedDecision};
pub use text::{label_calls, source_predicates, LabelCall};
pub use typing::TypeEnv;
// The parts call one another through this module.
use hoisting::*;
use planning::*;
use statements::*;
use text::*;

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
    macros: Vec<crate::frontend::macros::ConditionalMacro>,
    /// What calling each function may read and write (see `effects`).
    effects: effects::CallEffects,
    /// Definitions and uses of each function's local variables (data-flow criteria).
    pub def_uses: Vec<dataflow::FunctionDefUses>,
    /// Names that stand for constants: enumerators and object-like macros of the file whose
    /// value is a constant expression.
    constants: std::rc::Rc<typing::Constants>,
    /// Temporaries of hoisted call values so far (`__cp_vN`).
    values: usize,
    /// The text the configuration compiles out: no site there.
    pub compiled_out: crate::frontend::conditionals::CompiledOut,
    /// Function-like macros (see `FileMacros::function_like`): no decision is read inside
    /// their arguments.
    function_like: std::rc::Rc<BTreeSet<String>>,
    /// The macros a call may be a use of (the function-like and the conditional ones) and the
    /// object-like ones, as aligning the text with the lowered one reads them.
    macro_names: std::rc::Rc<typed::MacroNames>,
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
    find_with_macros(text, program, &Default::default(), false)
}

/// [`find`], with the macros the file sees (`macros::file_macros`), and the definitions
/// and uses of local variables when `def_uses` (the data-flow criteria need them).
pub fn find_with_macros(
    text: &[u8],
    program: Option<&Program>,
    macros: &crate::frontend::macros::FileMacros,
    def_uses: bool,
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
                // What is compiled out, at its place in the rewritten text (an edit may
                // join or split lines).
                let macros = &crate::frontend::macros::FileMacros {
                    compiled_out: macros
                        .compiled_out
                        .moved(|p| text::across(&fixed.edits, p, true), &fixed.text),
                    ..macros.clone()
                };
                let mut sites = find_in(&fixed.text, &new_tree, program, macros, def_uses);
                remap(&mut sites, &fixed.edits, text);
                return sites;
            }
        }
    }
    find_in(text, &tree, program, macros, def_uses)
}

fn find_in(
    text: &[u8],
    tree: &tree_sitter::Tree,
    program: Option<&Program>,
    macros: &crate::frontend::macros::FileMacros,
    def_uses: bool,
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
        compiled_out: macros.compiled_out.clone(),
        function_like: std::rc::Rc::new(macros.function_like.iter().cloned().collect()),
        ..Sites::default()
    };
    defs.retain(|d| !sites.compiled_out.contains_line(d.start_position().row + 1));
    sites.effects = effects::CallEffects::of(program);
    let mut constants = constant_names(tree.root_node(), text, &macros.objects);
    constants.pure_macros = macros
        .conditional
        .iter()
        .filter(|m| expansions::macro_is_pure(m))
        .cloned()
        .collect();
    sites.temps.pure_macros = constants
        .pure_macros
        .iter()
        .map(|m| m.name.clone())
        .collect();
    sites.constants = std::rc::Rc::new(constants);
    sites.macro_names = std::rc::Rc::new(typed::MacroNames::new(
        macros
            .function_like
            .iter()
            .cloned()
            .chain(macros.conditional.iter().map(|m| m.name.clone())),
        sites.constants.object_macros.iter().map(String::as_str),
    ));
    for def in &defs {
        function(*def, text, program, &names, &mut sites);
    }
    sites.statements.sort_by_key(|s| (s.range.0, s.depth));
    for def in defs.iter().filter(|_| def_uses) {
        let body_start = def
            .child_by_field_name("body")
            .map_or(0, |b| b.start_byte() + 1);
        if let Some(f) = sites
            .functions
            .iter()
            .position(|f| f.body_start == body_start)
        {
            let du = dataflow::analyse(*def, text, f, &sites);
            sites.def_uses.push(du);
        }
    }
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
    let types = match program {
        Some(p) => {
            typed::NodeTypes::of_body(&p.source_types, &name, body, text, &sites.macro_names)
        }
        None => typed::NodeTypes::default(),
    };
    let env = TypeEnv {
        program,
        function: program.and_then(|p| p.function(&name)),
        hoisted: Vec::new(),
        constants: sites.constants.clone(),
        types: std::rc::Rc::new(types),
        macros: sites.macro_names.clone(),
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
    let defined_here: BTreeSet<String> = defined_names(fn_text).collect();
    let mut stack = vec![(body, 0usize)];
    while let Some((n, depth)) = stack.pop() {
        if n.is_error() {
            continue; // nothing under an ERROR node is trusted
        }
        let for_initializer =
            n.kind() == "declaration" && n.parent().is_some_and(|p| p.kind() == "for_statement");
        let compiled_out = sites.compiled_out.contains_line(n.start_position().row + 1);
        if STATEMENTS.contains(&n.kind()) && !for_initializer && !compiled_out {
            let site = statement(n, text, depth, index, &env, names, fn_text, sites);
            // Predicate-complete coverage evaluates these atoms at every statement: only
            // those that cannot trap there (not `p->x > 0` after `p &&`).
            for d in site.plan.decisions.iter().filter(|d| d.guard.is_none()) {
                for (atom, free) in d.cond.atoms().into_iter().zip(&d.trap_free) {
                    // Nor those whose meaning depends on where they are: a local, a
                    // function-like macro, or a macro that is no constant (`#define AUTO
                    // (pBt->auto)`), that the file defines twice, or that the function itself
                    // defines (`# define DIRECT_MODE 0` in its body).
                    let placed = identifiers(atom).any(|id| {
                        env.is_local(id)
                            || sites.function_like.contains(id)
                            || sites.constants.redefined.contains(id)
                            || sites.constants.object_macros.contains(id)
                                && (env.constant(id).is_none() || defined_here.contains(id))
                    });
                    if *free && !placed && !predicates.iter().any(|p| p == atom) {
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

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "\
int g(int a, int b) {
  int r = 0;
  if (a > 0 && b < 3)
    r = a + b;
  for (int i = 0; i < a; i++) {
    if (i == 2) continue;
    r += i;
  }
  return r;
}
";

    #[test]
    fn statements_decisions_branches_and_returns_are_found() {
        let sites = find(SOURCE.as_bytes(), None);
        assert_eq!(sites.functions.len(), 1);
        let f = &sites.functions[0];
        assert_eq!((f.name.as_str(), f.line), ("g", 1));
        // Return types come from the lowered program, not given here.
        assert!(!f.returns_arith);
        assert_eq!(&SOURCE[f.body_start - 1..f.body_start], "{");
        let kinds: Vec<(StmtKind, usize)> =
            sites.statements.iter().map(|s| (s.kind, s.line)).collect();
        for expected in [
            (StmtKind::Declaration, 2),
            (StmtKind::If, 3),
            (StmtKind::Expression, 4),
            (StmtKind::For, 5),
            (StmtKind::If, 6),
            (StmtKind::Return, 9),
        ] {
            assert!(kinds.contains(&expected), "{expected:?} in {kinds:?}");
        }
        let first_if = sites
            .statements
            .iter()
            .find(|s| s.kind == StmtKind::If && s.line == 3)
            .unwrap();
        assert_eq!(first_if.decision.as_ref().unwrap().text, "a > 0 && b < 3");
        // The branch without braces needs a block to take labels.
        let then = first_if.consequence.unwrap();
        assert!(!then.compound);
        assert_eq!(&SOURCE[then.range.0..then.range.1], "r = a + b;");
        let ret = sites
            .statements
            .iter()
            .find(|s| s.kind == StmtKind::Return)
            .unwrap();
        assert_eq!(ret.return_value.as_deref(), Some("r"));
        // The loop's `continue` binds to it, so labels cannot run before its update.
        let loop_ = sites
            .statements
            .iter()
            .find(|s| s.kind == StmtKind::For)
            .unwrap();
        assert_eq!(loop_.continues.len(), 1);
        assert!(loop_.update.is_empty());
        assert_eq!(sites.decisions(), 3);
    }

    #[test]
    fn positions_are_those_of_the_original_text_after_line_markers() {
        let with_markers = format!("# 1 \"g.c\"\n{SOURCE}");
        let plain = find(SOURCE.as_bytes(), None);
        let marked = find(with_markers.as_bytes(), None);
        let shift = with_markers.len() - SOURCE.len();
        assert_eq!(plain.statements.len(), marked.statements.len());
        for (a, b) in plain.statements.iter().zip(&marked.statements) {
            assert_eq!((a.range.0 + shift, a.range.1 + shift), b.range);
        }
        assert_eq!(label_calls(b"pc_label(x > 0, 7, \"CC\");").len(), 1);
    }
}
