//! The decisions of one statement as LAnnotate sees them after Frama-C's normalisation, and how
//! to label them without changing what the program does.
//!
//! Frama-C turns `?:` into `if`, and a `&&`/`||` with a call or a side effect in it into a
//! cascade of `if`s in which every maximal part without effects stays one decision; LAnnotate
//! labels those `if`s. covprune keeps the original text and reproduces the same decisions:
//!
//! - a condition without effects is labelled as it stands, before the statement; an atom that
//!   could trap where the program does not evaluate it (`*p > 0` in `p && *p > 0`, a division)
//!   is read by labels only under its short-circuit prefix (`Decision::atom_guards`);
//! - a condition with effects is *hoisted*: every atom is evaluated once, in the program's
//!   order and with its short-circuits, into an `int` temporary (`(__cp_t1 = ((f(x)) != 0))`),
//!   by a statement `(void)(...);` before the original one, whose condition then reads the
//!   temporaries (`if (__cp_t1 || __cp_t2)`). The value of a `&&`/`||`/`!` tree depends only on
//!   its atoms' truth values, so the statement computes what it computed before, with every
//!   call made once and in the same order. Labels read the temporaries only where the program
//!   set them (the piece's guard, and each atom's prefix), never a stale value.
//! - the condition of a `?:` is a decision of its own, labelled before the statement when
//!   nothing with effects can run before it (see [`evaluated_first`]); the labels are guarded
//!   by the branches and short-circuits that lead to it.

use tree_sitter::Node;

use covprune_encoders::Cond;

use crate::frontend::syntax::{self, has_effects, has_effects_beyond, is_pure_macro_use};

/// One decision to label: its condition, the guard of each atom (see
/// `covprune_encoders::Decision::atom_guards`) and the condition under which the program
/// evaluates the decision at all (None: whenever the statement runs).
#[derive(Clone, Debug)]
pub struct PlannedDecision {
    pub cond: Cond,
    pub atom_guards: Vec<Option<String>>,
    pub guard: Option<String>,
    /// Per atom: it reads the program's own variables and cannot trap, so it may be evaluated
    /// anywhere (predicate-complete coverage evaluates atoms at every statement).
    pub trap_free: Vec<bool>,
    /// Byte range of its atoms in the file, first to last; None for a decision of a macro's
    /// expansion (the file holds only the macro's use).
    pub span: Option<(usize, usize)>,
    /// Per atom, the condition as other tools' reports see it (empty for a decision of a
    /// macro's expansion).
    pub leaves: Vec<Leaf>,
}

/// An atom as a condition of clang's branch and MC/DC coverage: the operand of `&&`/`||` (or
/// the whole condition, without a statement's own parentheses) that holds it, with its
/// parentheses and `!`s, and whether an odd number of `!` lies between the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// Byte range in the file.
    pub range: (usize, usize),
    pub negated: bool,
}

/// A condition with effects, evaluated into temporaries before its statement.
#[derive(Clone, Debug, Default)]
pub struct Hoist {
    /// Names of the `int` temporaries, to declare (initialised to 0) at the function's entry.
    pub temps: Vec<String>,
    /// The expression that evaluates the condition once, setting the temporaries.
    pub eval: String,
    /// What replaces the condition's text in the statement: the same tree over temporaries.
    pub replacement: String,
    /// Byte range of the condition's text in the file.
    pub range: (usize, usize),
    /// The same evaluation piece by piece (see [`pieces`]), for labels that observe a piece
    /// where Frama-C's normal form evaluates it; empty when the condition has an outer guard.
    pub pieces: Vec<HoistPiece>,
}

/// One piece of a hoisted condition: a maximal part without effects, or one atom with
/// effects. Evaluated on its own, in order, under its guard, it sets the same temporaries as
/// the whole evaluation does.
#[derive(Clone, Debug, Default)]
pub struct HoistPiece {
    /// When the program evaluates the piece (over earlier pieces' temporaries); None: always.
    pub guard: Option<String>,
    /// The expression that evaluates the piece into its atoms' temporaries.
    pub eval: String,
    /// Where the piece's atoms lie in the parsed text, and the piece's single atom's
    /// temporary when it has effects (positions of the text parsed, used while the site is
    /// built, before any remapping).
    pub span: (usize, usize),
    pub effect_atom: Option<String>,
    /// Call values the piece computes with, declared first (`__auto_type __cp_vN = f(a); `),
    /// and what mutation visits before the piece is evaluated (over those values) and after
    /// it (filled by the site finder).
    pub decls: String,
    pub before: Vec<covprune_encoders::Expr>,
    pub after: Vec<covprune_encoders::Expr>,
}

#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub decisions: Vec<PlannedDecision>,
    pub hoist: Option<Hoist>,
}

/// A `&&`/`||`/`!` tree over atoms, with byte ranges.
enum Tree {
    Atom {
        range: (usize, usize),
        text: String,
        effects: bool,
        /// Evaluating it anywhere cannot trap: no dereference, index, call or division.
        safe: bool,
        divisors: Vec<String>,
        leaf: Leaf,
    },
    Not(Box<Tree>),
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
}

impl Tree {
    /// The tree of a condition: `node` itself, or a statement's parenthesised condition.
    fn of_condition(node: Node, text: &[u8], pure: &[String]) -> Tree {
        let statement = node.parent().is_some_and(|p| {
            matches!(
                p.kind(),
                "if_statement" | "while_statement" | "do_statement" | "switch_statement"
            ) && p.child_by_field_name("condition") == Some(node)
        });
        let operand = if statement {
            syntax::sole_operand(node).unwrap_or(node)
        } else {
            node
        };
        let leaf = Leaf {
            range: (operand.start_byte(), operand.end_byte()),
            negated: false,
        };
        Tree::build(node, text, pure, leaf)
    }

    /// `leaf`: the operand of `&&`/`||` that holds `node`, and the parity of `!` between.
    fn build(node: Node, text: &[u8], pure: &[String], leaf: Leaf) -> Tree {
        let node = peel(node);
        let operand = |n: Node| Leaf {
            range: (n.start_byte(), n.end_byte()),
            negated: false,
        };
        match node.kind() {
            "binary_expression" => {
                let op = operator(node, text);
                if let (Some(l), Some(r), "&&" | "||") = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    op.as_str(),
                ) {
                    let (l, r) = (
                        Box::new(Tree::build(l, text, pure, operand(l))),
                        Box::new(Tree::build(r, text, pure, operand(r))),
                    );
                    return if op == "&&" {
                        Tree::And(l, r)
                    } else {
                        Tree::Or(l, r)
                    };
                }
            }
            "unary_expression" if operator(node, text) == "!" => {
                if let Some(a) = node.child_by_field_name("argument") {
                    let leaf = Leaf {
                        negated: !leaf.negated,
                        ..leaf
                    };
                    return Tree::Not(Box::new(Tree::build(a, text, pure, leaf)));
                }
            }
            _ => {}
        }
        Tree::Atom {
            range: (node.start_byte(), node.end_byte()),
            text: syntax::flat(node, text),
            effects: has_effects_beyond(node, text, pure),
            safe: cannot_trap(node, text, pure),
            divisors: syntax::division_guards(node, text),
            leaf,
        }
    }

    fn effects(&self) -> bool {
        match self {
            Tree::Atom { effects, .. } => *effects,
            Tree::Not(c) => c.effects(),
            Tree::And(a, b) | Tree::Or(a, b) => a.effects() || b.effects(),
        }
    }

    fn atoms<'a>(&'a self, out: &mut Vec<&'a Tree>) {
        match self {
            Tree::Atom { .. } => out.push(self),
            Tree::Not(c) => c.atoms(out),
            Tree::And(a, b) | Tree::Or(a, b) => {
                a.atoms(out);
                b.atoms(out);
            }
        }
    }

    /// The tree as a `Cond`, each atom named by `name` (its text, or its temporary).
    fn cond(&self, name: &mut dyn FnMut(&Tree) -> String) -> Cond {
        match self {
            Tree::Atom { .. } => Cond::Atom(name(self)),
            Tree::Not(c) => Cond::Not(Box::new(c.cond(name))),
            Tree::And(a, b) => {
                let a = a.cond(name);
                Cond::And(Box::new(a), Box::new(b.cond(name)))
            }
            Tree::Or(a, b) => {
                let a = a.cond(name);
                Cond::Or(Box::new(a), Box::new(b.cond(name)))
            }
        }
    }
}

fn and(guard: &Option<String>, c: String) -> Option<String> {
    Some(match guard {
        Some(g) => format!("({g}) && ({c})"),
        None => c,
    })
}

/// Per atom of `tree`, the condition under which the program evaluates it inside the tree
/// (its short-circuit prefix), as C text over the atoms named by `name`.
fn prefixes(
    tree: &Tree,
    prefix: Option<String>,
    name: &dyn Fn(&Tree) -> String,
    out: &mut Vec<Option<String>>,
) {
    let text = |t: &Tree| t.cond(&mut |a| name(a)).to_c();
    match tree {
        Tree::Atom { .. } => out.push(prefix),
        Tree::Not(c) => prefixes(c, prefix, name, out),
        Tree::And(a, b) => {
            prefixes(a, prefix.clone(), name, out);
            prefixes(b, and(&prefix, text(a)), name, out);
        }
        Tree::Or(a, b) => {
            prefixes(a, prefix.clone(), name, out);
            prefixes(b, and(&prefix, format!("!({})", text(a))), name, out);
        }
    }
}

/// Numbers temporaries in one file, and knows the macros whose uses have no effects.
#[derive(Clone, Debug, Default)]
pub struct Temps {
    next: usize,
    /// Conditional macros whose body calls and assigns nothing: a use with arguments free of
    /// effects has none either (`Abs(del)`), though it looks like a call.
    pub pure_macros: Vec<String>,
}

impl Temps {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("__cp_t{}", self.next)
    }
}

/// The decisions of the condition `node` (of an `if`, a loop, or a `&&`/`||` expression whose
/// value a statement uses), with the hoisting a condition with effects needs. `guard`: the
/// condition under which the program evaluates `node` (pure C text), if not always.
pub fn plan_condition(node: Node, text: &[u8], temps: &mut Temps, guard: Option<String>) -> Plan {
    let tree = Tree::of_condition(node, text, &temps.pure_macros);
    let node = peel(node);
    if !tree.effects() {
        let mut guards = Vec::new();
        prefixes(&tree, None, &|a| atom_text(a), &mut guards);
        let mut atoms = Vec::new();
        tree.atoms(&mut atoms);
        let atom_guards = atoms
            .iter()
            .zip(guards)
            .map(|(a, prefix)| match a {
                Tree::Atom { safe: true, .. } => None,
                Tree::Atom { divisors, .. } => {
                    let mut g = prefix;
                    for d in divisors {
                        if g.as_deref() != Some(d.as_str()) {
                            g = and(&g, d.clone());
                        }
                    }
                    g
                }
                _ => None,
            })
            .collect();
        let trap_free = atoms
            .iter()
            .map(|a| matches!(a, Tree::Atom { safe: true, .. }))
            .collect();
        let span = atom_span(&atoms);
        return Plan {
            decisions: vec![PlannedDecision {
                cond: tree.cond(&mut atom_text),
                atom_guards,
                guard,
                trap_free,
                span,
                leaves: leaves(&atoms),
            }],
            hoist: None,
        };
    }
    // Hoisted: every atom into a temporary, named by position.
    let mut atoms = Vec::new();
    tree.atoms(&mut atoms);
    let names: Vec<(usize, String)> = atoms
        .iter()
        .map(|a| match a {
            Tree::Atom { range, .. } => (range.0, temps.fresh()),
            _ => unreachable!("atoms() yields atoms"),
        })
        .collect();
    let name_of = |a: &Tree| -> String {
        match a {
            Tree::Atom { range, .. } => names
                .iter()
                .find(|(s, _)| *s == range.0)
                .map(|(_, n)| n.clone())
                .unwrap_or_default(),
            _ => String::new(),
        }
    };
    let (start, end) = (node.start_byte(), node.end_byte());
    let mut eval = String::new();
    let mut replacement = String::new();
    let mut pos = start;
    for (a, (_, name)) in atoms.iter().zip(&names) {
        let Tree::Atom { range, .. } = a else {
            continue;
        };
        let between = String::from_utf8_lossy(&text[pos..range.0]);
        let atom = String::from_utf8_lossy(&text[range.0..range.1]);
        eval.push_str(&between);
        eval.push_str(&format!("({name} = (({atom}) != 0))"));
        replacement.push_str(&between);
        replacement.push_str(name);
        pos = range.1;
    }
    let tail = String::from_utf8_lossy(&text[pos..end]);
    eval.push_str(&tail);
    replacement.push_str(&tail);
    let mut decisions = Vec::new();
    let mut split = Vec::new();
    let outer = guard.is_some();
    pieces(&tree, guard, &name_of, &mut decisions, &mut split, text);
    if outer {
        split.clear();
    }
    Plan {
        decisions,
        hoist: Some(Hoist {
            temps: names.into_iter().map(|(_, n)| n).collect(),
            eval,
            replacement,
            range: (start, end),
            pieces: split,
        }),
    }
}

/// The byte range from the first atom's start to the last one's end.
fn atom_span(atoms: &[&Tree]) -> Option<(usize, usize)> {
    let range = |a: &Tree| match a {
        Tree::Atom { range, .. } => Some(*range),
        _ => None,
    };
    Some((range(atoms.first()?)?.0, range(atoms.last()?)?.1))
}

fn leaves(atoms: &[&Tree]) -> Vec<Leaf> {
    atoms
        .iter()
        .filter_map(|a| match a {
            Tree::Atom { leaf, .. } => Some(*leaf),
            _ => None,
        })
        .collect()
}

fn atom_text(a: &Tree) -> String {
    match a {
        Tree::Atom { text, .. } => text.clone(),
        _ => String::new(),
    }
}

/// Frama-C's split of a tree with effects: every maximal part without effects, and every atom
/// with effects, is one decision, evaluated under the values of what precedes it.
fn pieces(
    tree: &Tree,
    guard: Option<String>,
    name: &dyn Fn(&Tree) -> String,
    out: &mut Vec<PlannedDecision>,
    split: &mut Vec<HoistPiece>,
    src: &[u8],
) {
    let text = |t: &Tree| t.cond(&mut |a| name(a)).to_c();
    if !tree.effects() || matches!(tree, Tree::Atom { .. }) {
        let mut atom_guards = Vec::new();
        prefixes(tree, None, name, &mut atom_guards);
        let trap_free = vec![false; atom_guards.len()];
        let mut atoms = Vec::new();
        tree.atoms(&mut atoms);
        let span = atom_span(&atoms).unwrap_or((0, 0));
        split.push(HoistPiece {
            guard: guard.clone(),
            eval: evaluation(tree, name, src),
            span,
            effect_atom: tree.effects().then(|| name(tree)),
            ..HoistPiece::default()
        });
        out.push(PlannedDecision {
            cond: tree.cond(&mut |a| name(a)),
            atom_guards,
            guard,
            trap_free,
            span: Some(span),
            leaves: leaves(&atoms),
        });
        return;
    }
    match tree {
        Tree::Atom { .. } => {}
        Tree::Not(c) => pieces(c, guard, name, out, split, src),
        Tree::And(a, b) => {
            pieces(a, guard.clone(), name, out, split, src);
            pieces(b, and(&guard, text(a)), name, out, split, src);
        }
        Tree::Or(a, b) => {
            pieces(a, guard.clone(), name, out, split, src);
            pieces(
                b,
                and(&guard, format!("!({})", text(a))),
                name,
                out,
                split,
                src,
            );
        }
    }
}

/// C text that evaluates `tree` with its short-circuits, setting each atom's temporary to
/// the atom's truth value (`(__cp_t1 = ((a) != 0)) && ...`).
/// Atoms keep their bytes (a string literal's blanks, a comment's line end).
fn evaluation(tree: &Tree, name: &dyn Fn(&Tree) -> String, src: &[u8]) -> String {
    match tree {
        Tree::Atom { range, .. } => format!(
            "({} = (({}) != 0))",
            name(tree),
            String::from_utf8_lossy(&src[range.0..range.1])
        ),
        Tree::Not(c) => format!("!({})", evaluation(c, name, src)),
        Tree::And(a, b) => format!(
            "({}) && ({})",
            evaluation(a, name, src),
            evaluation(b, name, src)
        ),
        Tree::Or(a, b) => format!(
            "({}) || ({})",
            evaluation(a, name, src),
            evaluation(b, name, src)
        ),
    }
}

/// `(c)` → `c`, repeatedly.
pub fn peel(mut node: Node) -> Node {
    while let Some(inner) = syntax::sole_operand(node) {
        node = inner;
    }
    node
}

fn operator(node: Node, text: &[u8]) -> String {
    node.child_by_field_name("operator")
        .and_then(|o| o.utf8_text(text).ok())
        .unwrap_or("")
        .to_string()
}

/// Evaluating `node` in any state cannot trap: it reads variables and constants only, with
/// operators that are defined everywhere (no `*p`, `p->f`, `a[i]`, call, shift, and no `/` or
/// `%` but by a positive integer literal).
fn cannot_trap(node: Node, text: &[u8], pure: &[String]) -> bool {
    if node.kind() == "call_expression" && is_pure_macro_use(node, text, pure) {
        let args = node.child_by_field_name("arguments");
        return args.is_some_and(|a| cannot_trap(a, text, pure));
    }
    match node.kind() {
        "sizeof_expression" => return true,
        "pointer_expression" if operator(node, text) == "*" => return false,
        "field_expression" => {
            let arrow = node
                .child_by_field_name("operator")
                .and_then(|o| o.utf8_text(text).ok())
                == Some("->");
            if arrow {
                return false;
            }
        }
        "subscript_expression" | "call_expression" | "compound_statement" => return false,
        // The operands' types are not known here: taken as not floating.
        "binary_expression" => {
            let literal = |f: &str| node.child_by_field_name(f).is_some_and(is_literal);
            let by_positive_literal = node.child_by_field_name("right").is_some_and(|r| {
                r.kind() == "number_literal"
                    && r.utf8_text(text)
                        .is_ok_and(covprune_encoders::is_positive_int_literal)
            });
            let traps = covprune_encoders::BinOp::from_c(&operator(node, text)).is_some_and(|op| {
                op.may_trap(
                    literal("left") && literal("right"),
                    by_positive_literal,
                    false,
                )
            });
            if traps {
                return false;
            }
        }
        "unary_expression"
            if operator(node, text) == "-"
                && !node.child_by_field_name("argument").is_some_and(is_literal) =>
        {
            return false
        }
        _ => {}
    }
    let mut c = node.walk();
    let r = node
        .named_children(&mut c)
        .all(|n| cannot_trap(n, text, pure));
    r
}

/// A number or character literal, parenthesised or not.
fn is_literal(node: Node) -> bool {
    match node.kind() {
        "number_literal" | "char_literal" => true,
        "parenthesized_expression" => node.named_child(0).is_some_and(is_literal),
        _ => false,
    }
}

/// The `?:` expressions of `root` (not inside the arguments of a macro `opaque` names) whose
/// condition the program evaluates before anything with effects in the statement (so that labels placed before the statement see what the
/// condition sees), each with the pure condition under which it is evaluated. `root` is what
/// the statement evaluates first (an expression statement's expression, a returned value, an
/// initialiser, a condition without effects).
pub fn ternaries<'t>(
    root: Node<'t>,
    text: &[u8],
    private: &dyn Fn(&str) -> bool,
    pure: &[String],
    opaque: &dyn Fn(&str) -> bool,
) -> Vec<(Node<'t>, Option<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        // The arguments of a function-like macro are not the program's expressions.
        if n.kind() == "call_expression"
            && crate::frontend::syntax::callee(n, text).is_some_and(opaque)
        {
            continue;
        }
        if n.kind() == "conditional_expression" {
            if let Some(c) = n.child_by_field_name("condition") {
                if let Some(guard) = evaluated_first(c, root, text, private, pure) {
                    out.push((c, guard));
                }
            }
        }
        if matches!(n.kind(), "sizeof_expression" | "compound_statement") {
            continue;
        }
        let mut cur = n.walk();
        let kids: Vec<Node> = n.named_children(&mut cur).collect();
        stack.extend(kids.into_iter().rev());
    }
    out.sort_by_key(|(c, _)| c.start_byte());
    out
}

/// Whether the program evaluates `node` before anything with effects in `root` (its
/// ancestor): walking up, everything that may be evaluated before `node` at each level must
/// be free of effects. Some(guard) when it is, the guard being the pure condition under which
/// `node` is evaluated (branches of `?:`, right operands of `&&`/`||`), None otherwise. A
/// condition with effects is accepted only where it is evaluated unconditionally.
pub(super) fn evaluated_first(
    node: Node,
    root: Node,
    text: &[u8],
    private: &dyn Fn(&str) -> bool,
    pure: &[String],
) -> Option<Option<String>> {
    let has_effects = |x: Node| has_effects_beyond(x, text, pure);
    // A condition that reads only the function's own variables whose address is never taken
    // (no dereference, index or field) cannot be changed by a call evaluated before it, only
    // by an assignment to one of them.
    let reads = private_reads(node, text, private);
    let harmless = |x: Node| match &reads {
        Some(names) => !writes_any(x, text, names),
        None => !has_effects_beyond(x, text, pure),
    };
    let mut guards: Vec<String> = Vec::new();
    let mut child = node;
    while child.id() != root.id() {
        let parent = child.parent()?;
        let is = |f: &str| {
            parent
                .child_by_field_name(f)
                .is_some_and(|x| x.id() == child.id())
        };
        let field_pure = |f: &str| parent.child_by_field_name(f).is_none_or(harmless);
        let others_pure = || {
            let mut c = parent.walk();
            let r = parent
                .named_children(&mut c)
                .filter(|x| x.id() != child.id())
                .all(harmless);
            r
        };
        match parent.kind() {
            "parenthesized_expression" | "cast_expression" | "unary_expression" => {}
            "pointer_expression" => {}
            "conditional_expression" => {
                if !is("condition") {
                    let cond = parent.child_by_field_name("condition")?;
                    if has_effects(cond) {
                        return None;
                    }
                    let c = syntax::flat(cond, text);
                    guards.push(if is("consequence") {
                        c
                    } else {
                        format!("!({c})")
                    });
                }
            }
            "binary_expression" => {
                let op = operator(parent, text);
                let logical = matches!(op.as_str(), "&&" | "||");
                if is("right") {
                    if !field_pure("left") {
                        return None;
                    }
                    if logical {
                        let l = syntax::flat(parent.child_by_field_name("left")?, text);
                        guards.push(if op == "&&" { l } else { format!("!({l})") });
                    }
                } else if !logical && !field_pure("right") {
                    return None;
                }
            }
            "assignment_expression" => {
                if !is("right") || !field_pure("left") {
                    return None;
                }
            }
            "comma_expression" => {
                if is("right") && !field_pure("left") {
                    return None;
                }
            }
            "argument_list" | "call_expression" | "subscript_expression" | "field_expression" => {
                if !others_pure() {
                    return None;
                }
            }
            "init_declarator" => {}
            _ => return None,
        }
        child = parent;
    }
    if !guards.is_empty() && has_effects(node) {
        return None;
    }
    guards.reverse();
    Some(if guards.is_empty() {
        None
    } else {
        Some(
            guards
                .iter()
                .map(|g| format!("({g})"))
                .collect::<Vec<_>>()
                .join(" && "),
        )
    })
}

/// The identifiers `node` reads, when it reads nothing but private variables (see
/// [`evaluated_first`]) and constants.
fn private_reads(node: Node, text: &[u8], private: &dyn Fn(&str) -> bool) -> Option<Vec<String>> {
    let mut names = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => {
                let name = n.utf8_text(text).ok()?;
                if !private(name) {
                    return None;
                }
                names.push(name.to_string());
            }
            "number_literal" | "char_literal" | "string_literal" | "true" | "false" => {}
            "binary_expression" | "unary_expression" | "parenthesized_expression" => {
                if has_effects(n) {
                    return None;
                }
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
            _ => return None,
        }
    }
    Some(names)
}

/// `node` assigns or increments one of `names` (directly, by name).
fn writes_any(node: Node, text: &[u8], names: &[String]) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let target = match n.kind() {
            "assignment_expression" => n.child_by_field_name("left"),
            "update_expression" => n.child_by_field_name("argument"),
            _ => None,
        };
        // A write through a pointer cannot reach a variable whose address is never taken.
        if let Some(t) = target.map(peel).filter(|t| t.kind() == "identifier") {
            if names
                .iter()
                .any(|x| Some(x.as_str()) == t.utf8_text(text).ok())
            {
                return true;
            }
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// The `&&`/`||` tree with effects that a statement's value is, if any: `x = a && f(b)`,
/// `return !g() || b`, `T v = f() && c` (through parentheses, casts and `!`, and the right of
/// an assignment whose left side has no effects). Frama-C turns those into `if`s.
pub fn logical_root<'t>(root: Node<'t>, text: &[u8]) -> Option<Node<'t>> {
    let mut n = peel(root);
    loop {
        match n.kind() {
            "assignment_expression" => {
                let l = n.child_by_field_name("left")?;
                if has_effects(l) || operator(n, text) != "=" {
                    return None;
                }
                n = peel(n.child_by_field_name("right")?);
            }
            "cast_expression" => n = peel(n.child_by_field_name("value")?),
            "unary_expression" if operator(n, text) == "!" => {
                let a = peel(n.child_by_field_name("argument")?);
                if is_logical(a, text) || a.kind() == "unary_expression" {
                    n = a;
                } else {
                    return None;
                }
            }
            "binary_expression" if is_logical(n, text) => {
                return has_effects(n).then_some(n);
            }
            _ => return None,
        }
    }
}

fn is_logical(n: Node, text: &[u8]) -> bool {
    n.kind() == "binary_expression" && matches!(operator(n, text).as_str(), "&&" | "||")
}
