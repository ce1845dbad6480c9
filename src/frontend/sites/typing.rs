//! Builds the encoders' expression trees from tree-sitter nodes of the unpreprocessed source,
//! typing variables, fields, cells and casts from the lowered program by name, so that
//! mutants are only written where they still compile. What cannot be typed is `Unknown`.

use tree_sitter::Node;

use covprune_encoders::{BinOp, Expr, Ty, UnOp};

use crate::ir::{CType, FloatKind, Function, Program};

/// Type knowledge for one function of a program (or none at all).
pub struct TypeEnv<'a> {
    pub program: Option<&'a Program>,
    pub function: Option<&'a Function>,
}

pub fn class(t: &CType) -> Ty {
    match t {
        CType::Int(_) => Ty::Int,
        CType::Float(_) => Ty::Float,
        CType::Pointer(_) | CType::Array(..) => Ty::Pointer,
        CType::Record(_) | CType::Function(_) | CType::Void => Ty::Other,
        CType::Unknown => Ty::Unknown,
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

impl TypeEnv<'_> {
    /// The type of a variable named `name` in this function: its locals (when all of that
    /// name agree), else a global.
    pub fn var(&self, name: &str) -> Option<CType> {
        if let Some(f) = self.function {
            let mut found: Option<&CType> = None;
            for l in f.locals.iter().filter(|l| l.name == name) {
                match found {
                    Some(t) if t != &l.ty => return Some(CType::Unknown),
                    _ => found = Some(&l.ty),
                }
            }
            if let Some(t) = found {
                return Some(t.clone());
            }
        }
        let p = self.program?;
        p.globals
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.ty.clone())
    }

    /// True when `name` is a local (not a parameter) of this function.
    /// A local variable or a parameter of the function.
    pub fn is_own_variable(&self, name: &str) -> bool {
        self.function
            .is_some_and(|f| f.locals.iter().any(|l| l.name == name))
    }

    pub fn is_local(&self, name: &str) -> bool {
        self.function
            .is_some_and(|f| f.locals.iter().any(|l| l.name == name && !l.is_param))
    }

    fn field(&self, record: &CType, name: &str) -> Option<CType> {
        let CType::Record(id) = record else {
            return None;
        };
        let rec = self.program?.records.get(id.0 as usize)?;
        for f in &rec.fields {
            if f.name == name {
                return Some(f.ty.clone());
            }
            if f.name.is_empty() {
                if let Some(t) = self.field(&f.ty, name) {
                    return Some(t);
                }
            }
        }
        None
    }

    /// The expression tree of a side-effect-free expression node, with its C type if known.
    pub fn build(&self, node: Node, text: &[u8]) -> (Expr, CType) {
        let opaque = |ty: Ty, ctype: CType| {
            (
                Expr::Opaque {
                    text: flat(node, text),
                    ty,
                    guards: division_guards(node, text),
                },
                ctype,
            )
        };
        let field = |n: &str| node.child_by_field_name(n);
        match node.kind() {
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner)
                    if inner.kind() != "compound_statement" && node.named_child_count() == 1 =>
                {
                    let (e, t) = self.build(inner, text);
                    (
                        Expr::Wrap {
                            pre: "(".into(),
                            e: Box::new(e),
                            post: ")".into(),
                            ty: None,
                        },
                        t,
                    )
                }
                _ => opaque(Ty::Unknown, CType::Unknown),
            },
            "identifier" => {
                let name = flat(node, text);
                match self.var(&name) {
                    Some(t) => (
                        Expr::Lval {
                            text: name,
                            ty: class(&t),
                            inner: Vec::new(),
                        },
                        t,
                    ),
                    None => opaque(Ty::Unknown, CType::Unknown),
                }
            }
            "number_literal" => {
                let t = flat(node, text);
                let lower = t.to_ascii_lowercase();
                let is_float = !lower.starts_with("0x")
                    && (lower.contains('.') || lower.contains('e'))
                    || lower.starts_with("0x") && lower.contains('p');
                if is_float {
                    (
                        Expr::Const {
                            text: t,
                            ty: Ty::Float,
                        },
                        CType::Float(FloatKind::Double),
                    )
                } else {
                    (
                        Expr::Const {
                            text: t,
                            ty: Ty::Int,
                        },
                        CType::INT,
                    )
                }
            }
            "char_literal" | "true" | "false" => (
                Expr::Const {
                    text: flat(node, text),
                    ty: Ty::Int,
                },
                CType::INT,
            ),
            "string_literal" | "concatenated_string" | "null" => {
                opaque(Ty::Pointer, CType::Pointer(Box::new(CType::Unknown)))
            }
            "sizeof_expression" | "alignof_expression" => (
                Expr::Opaque {
                    text: flat(node, text),
                    ty: Ty::Int,
                    guards: Vec::new(),
                },
                CType::ULONG,
            ),
            "field_expression" => {
                let (Some(arg), Some(f)) = (field("argument"), field("field")) else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (inner, at) = self.build(arg, text);
                let arrow = field("operator").is_some_and(|o| o.utf8_text(text) == Ok("->"));
                let rec = match (&at, arrow) {
                    (CType::Pointer(p), true) => (**p).clone(),
                    (CType::Array(p, _), true) => (**p).clone(),
                    (t, false) => t.clone(),
                    _ => CType::Unknown,
                };
                let t = self
                    .field(&rec, f.utf8_text(text).unwrap_or(""))
                    .unwrap_or(CType::Unknown);
                (
                    Expr::Lval {
                        text: flat(node, text),
                        ty: class(&t),
                        inner: vec![inner],
                    },
                    t,
                )
            }
            "subscript_expression" => {
                let (Some(arg), Some(idx)) = (field("argument"), field("index")) else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (a, at) = self.build(arg, text);
                let (i, it) = self.build(idx, text);
                let elem = |t: &CType| match t {
                    CType::Pointer(e) | CType::Array(e, _) => Some((**e).clone()),
                    _ => None,
                };
                let t = elem(&at).or_else(|| elem(&it)).unwrap_or(CType::Unknown);
                (
                    Expr::Lval {
                        text: flat(node, text),
                        ty: class(&t),
                        inner: vec![a, i],
                    },
                    t,
                )
            }
            "pointer_expression" => {
                let op = field("operator")
                    .and_then(|o| o.utf8_text(text).ok())
                    .unwrap_or("");
                let Some(arg) = field("argument") else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                if op == "&" {
                    return opaque(Ty::Pointer, CType::Pointer(Box::new(CType::Unknown)));
                }
                let (inner, t) = self.build(arg, text);
                let t = match t {
                    CType::Pointer(e) | CType::Array(e, _) => *e,
                    _ => CType::Unknown,
                };
                (
                    Expr::Lval {
                        text: flat(node, text),
                        ty: class(&t),
                        inner: vec![inner],
                    },
                    t,
                )
            }
            "unary_expression" => {
                let op = field("operator")
                    .and_then(|o| o.utf8_text(text).ok())
                    .unwrap_or("");
                let Some(arg) = field("argument") else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (inner, t) = self.build(arg, text);
                let op = match op {
                    "-" => UnOp::Neg,
                    "+" => UnOp::Plus,
                    "!" => UnOp::Not,
                    "~" => UnOp::BitNot,
                    _ => return opaque(Ty::Unknown, CType::Unknown),
                };
                let t = if matches!(op, UnOp::Neg | UnOp::Plus) {
                    t
                } else {
                    CType::INT
                };
                (Expr::Un(op, Box::new(inner)), t)
            }
            "binary_expression" => {
                let op = field("operator")
                    .and_then(|o| o.utf8_text(text).ok())
                    .unwrap_or("");
                let (Some(op), Some(l), Some(r)) =
                    (BinOp::from_c(op), field("left"), field("right"))
                else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let (l, _) = self.build(l, text);
                let (r, _) = self.build(r, text);
                let e = Expr::bin(op, l, r);
                let t = match e.ty() {
                    Ty::Int => CType::INT,
                    Ty::Float => CType::Float(FloatKind::Double),
                    Ty::Pointer => CType::Pointer(Box::new(CType::Unknown)),
                    _ => CType::Unknown,
                };
                (e, t)
            }
            "cast_expression" => {
                let (Some(ty), Some(v)) = (field("type"), field("value")) else {
                    return opaque(Ty::Unknown, CType::Unknown);
                };
                let ty_text = flat(ty, text);
                let (inner, _) = self.build(v, text);
                let t = cast_class(&ty_text);
                let ctype = match t {
                    Ty::Int => CType::INT,
                    Ty::Float => CType::Float(FloatKind::Double),
                    Ty::Pointer => CType::Pointer(Box::new(CType::Unknown)),
                    _ => CType::Unknown,
                };
                (
                    Expr::Wrap {
                        pre: format!("({ty_text})"),
                        e: Box::new(inner),
                        post: String::new(),
                        ty: Some(t),
                    },
                    ctype,
                )
            }
            _ => opaque(Ty::Unknown, CType::Unknown),
        }
    }
}

/// The class of a cast's type name, from its words: pointers, the arithmetic keywords; typedef
/// names are unknown.
fn cast_class(ty: &str) -> Ty {
    if ty.contains('*') || ty.contains('(') {
        return Ty::Pointer;
    }
    let words: Vec<&str> = ty.split_whitespace().collect();
    if words.iter().any(|w| matches!(*w, "float" | "double")) {
        return Ty::Float;
    }
    const INT_WORDS: &[&str] = &[
        "int", "char", "short", "long", "signed", "unsigned", "_Bool", "const", "volatile",
        "register",
    ];
    if words.iter().all(|w| INT_WORDS.contains(w)) && !words.is_empty() {
        Ty::Int
    } else {
        Ty::Unknown
    }
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
