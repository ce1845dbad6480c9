//! Where the translation unit's text names each function: called directly from which function
//! definitions, or used any other way (its address taken, a name the lowering may not have
//! understood). Read from the syntax tree, not from the lowered program, so that nothing the
//! lowering dropped or approximated (an expression it could not lower, a global initialiser, a
//! region with a syntax error) can hide a use.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use crate::ir::FunctionUses;

/// The uses of every identifier of the unit that names one of `functions`.
pub(super) fn function_uses(
    text: &[u8],
    root: Node,
    functions: &BTreeSet<String>,
) -> BTreeMap<String, FunctionUses> {
    let name_of = |n: Node| std::str::from_utf8(&text[n.byte_range()]).unwrap_or("");
    let mut out: BTreeMap<String, FunctionUses> = BTreeMap::new();
    // (node, the function definition it is in)
    let mut stack: Vec<(Node, Option<String>)> = vec![(root, None)];
    while let Some((n, within)) = stack.pop() {
        // A name the parser read as a type (`sizeof(f())` parses as the size of a type `f()`)
        // counts too: the parse of an ambiguous text must not hide a use.
        if matches!(n.kind(), "identifier" | "type_identifier") {
            let name = name_of(n);
            if functions.contains(name) {
                let uses = out.entry(name.to_string()).or_default();
                match use_kind(n) {
                    Use::Declared => {}
                    Use::Called => match &within {
                        Some(caller) => {
                            uses.called_from.insert(caller.clone());
                        }
                        None => uses.referenced = true,
                    },
                    Use::Other => uses.referenced = true,
                }
            }
            continue;
        }
        // A name in a string may be a symbol another way (`alias("f")`, `asm("call f")`).
        if n.kind() == "string_content" {
            for word in name_of(n).split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if functions.contains(word) {
                    out.entry(word.to_string()).or_default().referenced = true;
                }
            }
            continue;
        }
        // An attribute may have a function entered with no call (`constructor`, `destructor`,
        // `ifunc`, ...): only those known not to are ignored.
        if matches!(
            n.kind(),
            "attribute_specifier" | "attribute_declaration" | "ms_declspec_modifier"
        ) && !benign_attributes(n, &name_of)
        {
            for name in declared_functions(n)
                .into_iter()
                .map(|d| name_of(d).to_string())
            {
                if functions.contains(&name) {
                    out.entry(name).or_default().referenced = true;
                }
            }
        }
        let inside = if n.kind() == "function_definition" {
            definition_name(n, &name_of).or(within)
        } else {
            within
        };
        let mut c = n.walk();
        for child in n.children(&mut c) {
            stack.push((child, inside.clone()));
        }
    }
    out
}

enum Use {
    /// The name a declaration or definition declares, or an attribute's name.
    Declared,
    /// The function operand of a call: `name(...)`.
    Called,
    /// Anything else (its address, a shadowing variable, ...): counted as a use by an unknown
    /// caller.
    Other,
}

fn use_kind(id: Node) -> Use {
    let Some(parent) = id.parent() else {
        return Use::Other;
    };
    let is_field = |field: &str| parent.child_by_field_name(field) == Some(id);
    // An attribute's own name (`unused` in `__attribute__((unused))`, `format` in
    // `format(printf, 1, 2)`) names no function; its arguments may.
    let attribute_list = |n: Node| {
        n.kind() == "argument_list"
            && n.parent()
                .is_some_and(|p| p.kind() == "attribute_specifier")
    };
    if attribute_list(parent)
        || parent.kind() == "call_expression"
            && is_field("function")
            && parent.parent().is_some_and(attribute_list)
    {
        return Use::Declared;
    }
    match parent.kind() {
        _ if id.kind() != "identifier" => Use::Other,
        "function_declarator" if is_field("declarator") => Use::Declared,
        "call_expression" if is_field("function") => Use::Called,
        _ => Use::Other,
    }
}

/// The name a function definition defines, when its declarator is plain enough to read one.
fn definition_name<'t>(def: Node, name_of: &dyn Fn(Node) -> &'t str) -> Option<String> {
    let mut d = def.child_by_field_name("declarator")?;
    loop {
        match d.kind() {
            "function_declarator" | "pointer_declarator" | "parenthesized_declarator" => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child(0))?;
            }
            "identifier" => return Some(name_of(d).to_string()),
            _ => return None,
        }
    }
}

/// Attributes that never make a function run by themselves.
const BENIGN_ATTRIBUTES: &[&str] = &[
    "always_inline",
    "cold",
    "const",
    "deprecated",
    "format",
    "hot",
    "leaf",
    "malloc",
    "noinline",
    "nonnull",
    "noreturn",
    "nothrow",
    "pure",
    "returns_nonnull",
    "unused",
    "used",
    "warn_unused_result",
];

/// Does attribute node `n` name only [`BENIGN_ATTRIBUTES`] (with or without `__` around)?
fn benign_attributes<'t>(n: Node, name_of: &dyn Fn(Node) -> &'t str) -> bool {
    if n.kind() != "attribute_specifier" {
        return false;
    }
    let Some(args) = n.named_child(0).filter(|a| a.kind() == "argument_list") else {
        return false;
    };
    let mut c = args.walk();
    let items: Vec<Node> = args.named_children(&mut c).collect();
    items.iter().all(|item| {
        let word = match item.kind() {
            "identifier" => Some(*item),
            "call_expression" => item.child_by_field_name("function"),
            _ => None,
        };
        word.is_some_and(|w| {
            let w = name_of(w).trim_matches('_');
            BENIGN_ATTRIBUTES.contains(&w)
        })
    })
}

/// The names (identifier nodes) of the functions declared or defined by the declaration or
/// definition around attribute node `n` (not those inside a body).
fn declared_functions(n: Node) -> Vec<Node> {
    let mut holder = Some(n);
    while let Some(h) = holder {
        if matches!(h.kind(), "declaration" | "function_definition") {
            break;
        }
        holder = h.parent();
    }
    let Some(holder) = holder else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![holder];
    while let Some(x) = stack.pop() {
        if x.kind() == "compound_statement" {
            continue;
        }
        if x.kind() == "function_declarator" {
            if let Some(d) = x.child_by_field_name("declarator") {
                if d.kind() == "identifier" {
                    out.push(d);
                }
            }
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    out
}
