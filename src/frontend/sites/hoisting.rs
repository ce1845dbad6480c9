//! Hoisting: values a statement computes with effects (calls, assignments, increments) named
//! in temporaries before it, so that labels can read them without evaluating them again, and
//! the order in which the statement's effects happen.

use super::*;

/// The root of what a statement computes, with its assignment target: `x = e;` (target `x`,
/// `op=` when compound), `return e;`, `T x = e;` (one declarator).
pub(super) fn computed_root<'t>(
    node: Node<'t>,
    kind: StmtKind,
) -> Option<(Option<Node<'t>>, bool, Node<'t>)> {
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
pub(super) fn hoist_values(
    node: Node,
    text: &[u8],
    env: &TypeEnv,
    site: &mut StmtSite,
    sites: &mut Sites,
) {
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
pub(super) fn sequence_effects(node: Node, text: &[u8], env: &TypeEnv, site: &mut StmtSite) {
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
pub(super) fn closed(t: &crate::ir::CType) -> bool {
    match t {
        crate::ir::CType::Int(k) => crate::ir::types::promote(*k) == *k,
        crate::ir::CType::Float(_) => true,
        _ => false,
    }
}

/// A comma, `?:`, `&&`, `||`, statement expression, asm or compound literal: a node that
/// orders, skips or hides the evaluation of its operands.
pub(super) fn orders_its_operands(node: Node, text: &[u8]) -> bool {
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
pub(super) fn effects_in_sequence(node: Node, text: &[u8]) -> bool {
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
pub(super) fn sequence(
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
pub(super) fn update_steps(u: Node, text: &[u8], env: &TypeEnv) -> Vec<Expr> {
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
pub(super) struct CallValues<'t> {
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
pub(super) fn call_values<'t>(
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
    // The temporaries, typed as the calls they hold; the call's own bytes
    // (a string literal's blanks are the program's).
    let mut hoist = ValueHoist::default();
    let mut substituted = Vec::new();
    for (k, c) in calls.iter().enumerate() {
        let name = format!("__cp_v{}", sites.values + k + 1);
        let call_text = String::from_utf8_lossy(&text[c.start_byte()..c.end_byte()]);
        hoist
            .decls
            .push_str(&format!("__auto_type {name} = {call_text}; "));
        let ret = env.type_of(*c);
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
pub(super) fn observe_pieces(
    node: Node,
    text: &[u8],
    env: &TypeEnv,
    site: &mut StmtSite,
    sites: &mut Sites,
) {
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
pub(super) fn assigned_then_read(
    atom: Node,
    text: &[u8],
    env: &TypeEnv,
) -> Option<(Option<Expr>, Expr)> {
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
    if !env.is_variable(name) {
        return None;
    }
    let vt = env.type_of(target);
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
pub(super) fn outermost_calls<'t>(node: Node<'t>, text: &[u8], out: &mut Vec<Node<'t>>) -> bool {
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
pub(super) fn reads_of(node: Node, text: &[u8], env: &TypeEnv, e: &mut effects::Effects) {
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
