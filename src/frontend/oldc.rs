//! Rewrites old C that tree-sitter-c cannot parse into equivalent modern C, before parsing:
//! the `int` that implicit-int declarations leave out (`main() {`, `static x;`, `register r;`)
//! and K&R definitions (`char *f(s, n) char *s; int n; {`), which become prototype-style
//! (`char *f(char *s, int n) {`). A K&R callee converts its promoted arguments to the declared
//! parameter types, and a prototyped one receives them converted: the values are the same.
//! Every edit is recorded so that locations still map to the original text.

use std::collections::{HashMap, HashSet};

/// One replacement: the original byte range and where its replacement sits in the new text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    pub orig_start: usize,
    pub orig_end: usize,
    pub new_start: usize,
    pub new_end: usize,
}

pub struct Rewritten {
    pub text: Vec<u8>,
    pub edits: Vec<Edit>,
}

/// Words that may start a declaration without being its type.
const PREFIX_WORDS: &[&str] = &[
    "static",
    "extern",
    "inline",
    "__inline",
    "__inline__",
    "register",
    "const",
    "volatile",
    "auto",
    "_Noreturn",
    "__extension__",
];

/// Words that are (or start) a type.
const TYPE_WORDS: &[&str] = &[
    "void",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "_Bool",
    "struct",
    "union",
    "enum",
    "typedef",
    "__attribute__",
    "asm",
    "__asm__",
    "__asm",
    "typeof",
    "__typeof__",
    "__typeof",
    "_Static_assert",
    "__int128",
    "_Complex",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "bool",
    "char16_t",
    "char32_t",
    "wchar_t",
];

struct Scanner<'a> {
    text: &'a [u8],
    tokens: Vec<(usize, usize)>,
    typedefs: HashSet<String>,
}

impl Scanner<'_> {
    fn tok(&self, i: usize) -> &[u8] {
        self.tokens
            .get(i)
            .map_or(&b""[..], |&(s, e)| &self.text[s..e])
    }
    fn is_type_word(&self, t: &[u8]) -> bool {
        let s = as_str(t);
        TYPE_WORDS.contains(&s) || self.typedefs.contains(s)
    }
    fn is_plain_ident(&self, t: &[u8]) -> bool {
        is_ident(t) && !self.is_type_word(t) && !PREFIX_WORDS.contains(&as_str(t))
    }
    /// Index of the token closing the bracket opened at `open`.
    fn matching(&self, open: usize) -> Option<usize> {
        let mut depth = 0i32;
        for i in open..self.tokens.len() {
            match self.tok(i) {
                b"(" | b"[" | b"{" => depth += 1,
                b")" | b"]" | b"}" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// Removes the parentheses around a lone variable name followed by `-`, `+`, `*` or `&`
/// (`(x) - 1`, `(p) && q`), in place and keeping lengths. tree-sitter-c, which cannot tell
/// types from variables, reads `(x) - 1` as a cast of `-1` to a type `x`; ` x  - 1` means the
/// same in C and parses right. Typedef names keep their parentheses (`(T)-1` is a cast).
/// Returns whether anything changed.
pub fn strip_variable_parens(text: &mut [u8], typedefs: &HashSet<String>) -> bool {
    let tokens = tokenize(text);
    let sc = Scanner {
        text,
        tokens,
        typedefs: typedefs.clone(),
    };
    let mut spots = Vec::new();
    for k in 1..sc.tokens.len().saturating_sub(3) {
        if sc.tok(k) != b"(" || sc.tok(k + 2) != b")" {
            continue;
        }
        let name = sc.tok(k + 1);
        if !sc.is_plain_ident(name) || KEYWORDS.contains(&as_str(name)) {
            continue;
        }
        if !matches!(sc.tok(k + 3), b"-" | b"+" | b"*" | b"&") {
            continue;
        }
        let prev = sc.tok(k - 1);
        let prev_ok = if is_ident(prev) {
            matches!(as_str(prev), "return" | "case" | "sizeof" | "else" | "do")
        } else {
            !matches!(prev, b")" | b"]") && !prev.first().is_some_and(u8::is_ascii_digit)
        };
        if prev_ok {
            spots.push((sc.tokens[k].0, sc.tokens[k + 2].0));
        }
    }
    for (open, close) in &spots {
        text[*open] = b' ';
        text[*close] = b' ';
    }
    !spots.is_empty()
}

/// C keywords that are not types (a parenthesized one is never a variable).
const KEYWORDS: &[&str] = &[
    "sizeof",
    "return",
    "if",
    "else",
    "while",
    "for",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "goto",
    "_Alignof",
    "__alignof__",
    "_Generic",
    // GNU and ISO TS 18661 type names (glibc's <math.h> declares functions of them): without
    // them, `int __fpclassifyf128 (_Float128 __value)` reads as a K&R head.
    "_Float16",
    "_Float32",
    "_Float64",
    "_Float128",
    "_Float32x",
    "_Float64x",
    "_Float128x",
    "__float128",
    "__int128",
    "_Complex",
    "__complex__",
    "_Atomic",
];

/// Rewrites old-style constructs; `None` when there are none.
pub fn rewrite(text: &[u8], typedefs: &HashSet<String>) -> Option<Rewritten> {
    let sc = Scanner {
        text,
        tokens: tokenize(text),
        typedefs: typedefs.clone(),
    };
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut i = 0;
    let mut at_start = true;
    while i < sc.tokens.len() {
        let t = sc.tok(i);
        if at_start && is_ident(t) {
            at_start = false;
            if let Some(next) = declaration_start(&sc, i, &mut edits) {
                i = next;
                continue;
            }
        }
        match t {
            b"(" | b"[" | b"{" => {
                // Skip a whole bracketed region; a top-level `}` ends a function body or a
                // struct body, and only the former starts a new declaration.
                let Some(close) = sc.matching(i) else { break };
                let prev = if i > 0 { sc.tok(i - 1) } else { b";" };
                if t == b"{" && (prev == b")" || prev == b";") {
                    at_start = true;
                }
                i = close + 1;
                continue;
            }
            b";" => at_start = true,
            _ => {}
        }
        i += 1;
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|e| e.0);
    let mut out = Vec::with_capacity(text.len() + 64 * edits.len());
    let mut recorded = Vec::new();
    let mut last = 0;
    for (s, e, rep) in edits {
        if s < last {
            continue; // overlapping edits cannot happen, but never corrupt the text
        }
        out.extend_from_slice(&text[last..s]);
        let new_start = out.len();
        out.extend_from_slice(rep.as_bytes());
        recorded.push(Edit {
            orig_start: s,
            orig_end: e,
            new_start,
            new_end: out.len(),
        });
        last = e;
    }
    out.extend_from_slice(&text[last..]);
    Some(Rewritten {
        text: out,
        edits: recorded,
    })
}

/// Looks at a top-level declaration starting at token `i`; records edits and returns the token
/// index to continue from when it rewrote a K&R header.
fn declaration_start(
    sc: &Scanner,
    i: usize,
    edits: &mut Vec<(usize, usize, String)>,
) -> Option<usize> {
    let mut j = i;
    while PREFIX_WORDS.contains(&as_str(sc.tok(j))) {
        j += 1;
    }
    let had_prefix = j > i;
    let name = sc.tok(j);
    let next = sc.tok(j + 1);
    // Implicit int: `f(...)`, or `static x;` / `register y = 1;`.
    let implicit = sc.is_plain_ident(name)
        && (next == b"(" || (had_prefix && matches!(next, b";" | b"," | b"=" | b"[")));
    if implicit {
        let at = sc.tokens[j].0;
        edits.push((at, at, "int ".into()));
    }
    // A K&R definition: `NAME ( ident, ... ) decl; ... {`. Find the first `(` after a name.
    let mut k = j;
    while k < sc.tokens.len() && !matches!(sc.tok(k), b";" | b"{" | b"=" | b",") {
        if sc.tok(k) == b"(" && k > 0 && sc.is_plain_ident(sc.tok(k - 1)) {
            return kr_definition(sc, k, edits);
        }
        if sc.tok(k) == b"(" {
            k = sc.matching(k)? + 1;
            continue;
        }
        k += 1;
    }
    None
}

/// Rewrites `( a, b ) T a; T b; {` at token `open` into a prototype-style parameter list.
fn kr_definition(
    sc: &Scanner,
    open: usize,
    edits: &mut Vec<(usize, usize, String)>,
) -> Option<usize> {
    let close = sc.matching(open)?;
    let mut names = Vec::new();
    for (n, k) in (open + 1..close).enumerate() {
        let t = sc.tok(k);
        // An identifier list alternates names and commas: `(a, b)`; two names in a row
        // (`(_Float128 __value)`) are a prototype's type and parameter.
        if n % 2 == 1 {
            if t != b"," {
                return None;
            }
            continue;
        }
        if !sc.is_plain_ident(t) {
            return None; // a prototype, or `(void)`
        }
        names.push(as_str(t).to_string());
    }
    if names.is_empty() {
        return None;
    }
    // Declarations until the body's `{`.
    let mut k = close + 1;
    let mut decl_types: HashMap<String, String> = HashMap::new();
    let mut decl_start = k;
    loop {
        let t = sc.tok(k);
        match t {
            b"{" => break,
            b";" => {
                // Every declaration there declares parameters: anything else (`typedef`,
                // a prototype) means `( a, b );` was a call or a prototype of type names.
                let before = decl_types.len();
                parse_kr_declaration(sc, decl_start, k, &names, &mut decl_types);
                if decl_types.len() == before || sc.tok(decl_start) == b"typedef" {
                    return None;
                }
                decl_start = k + 1;
            }
            b"(" | b"[" => {
                k = sc.matching(k)?;
            }
            b"" | b"}" | b"=" => return None,
            _ => {}
        }
        k += 1;
    }
    if k == close + 1 {
        return None; // `f(a, b) {`: tree-sitter parses it; the lowering types the names as int
    }
    let params: Vec<String> = names
        .iter()
        .map(|n| {
            decl_types
                .get(n)
                .cloned()
                .unwrap_or_else(|| format!("int {n}"))
        })
        .collect();
    let replacement = format!("({}) ", params.join(", "));
    // Replace from `(` up to the `{`, which is kept.
    let s = sc.tokens[open].0;
    let e = sc.tokens[k].0;
    edits.push((s, e, replacement));
    Some(k)
}

/// `T d1, d2;` between the tokens `[s, e)`: records "T d" for each declared parameter name.
fn parse_kr_declaration(
    sc: &Scanner,
    s: usize,
    e: usize,
    names: &[String],
    out: &mut HashMap<String, String>,
) {
    // Split at top-level commas.
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = s;
    for k in s..e {
        match sc.tok(k) {
            b"(" | b"[" => depth += 1,
            b")" | b"]" => depth -= 1,
            b"," if depth == 0 => {
                parts.push((start, k));
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push((start, e));
    let Some(&(first_s, first_e)) = parts.first() else {
        return;
    };
    // The declarator of the first part starts at the first `*`, `(` or parameter name.
    let decl_begin = (first_s..first_e).find(|&k| {
        let t = sc.tok(k);
        t == b"*" || t == b"(" || names.iter().any(|n| n.as_bytes() == t)
    });
    let Some(decl_begin) = decl_begin else { return };
    let base_words: Vec<&str> = (first_s..decl_begin)
        .map(|k| as_str(sc.tok(k)))
        .filter(|w| !matches!(*w, "register" | "auto"))
        .collect();
    let base = if base_words.iter().all(|w| PREFIX_WORDS.contains(w)) {
        let mut b: Vec<&str> = base_words.clone();
        b.push("int");
        b.join(" ")
    } else {
        text_of(sc, first_s, decl_begin)
            .replace("register", "")
            .trim()
            .to_string()
    };
    let mut declarators = vec![(decl_begin, first_e)];
    declarators.extend(parts.iter().skip(1).copied());
    for (ds, de) in declarators {
        let Some(name) = (ds..de)
            .map(|k| as_str(sc.tok(k)))
            .find(|t| names.iter().any(|n| n == t))
        else {
            continue;
        };
        out.insert(name.to_string(), format!("{base} {}", text_of(sc, ds, de)));
    }
}

fn text_of(sc: &Scanner, s: usize, e: usize) -> String {
    if s >= e {
        return String::new();
    }
    let (bs, be) = (sc.tokens[s].0, sc.tokens[e - 1].1);
    as_str(&sc.text[bs..be])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn as_str(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

fn is_ident(tok: &[u8]) -> bool {
    tok.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
}

/// Token byte ranges: identifiers and numbers as one token, string and char literals skipped,
/// every other non-space byte a token of its own.
fn tokenize(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < text.len() {
        let c = text[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let at_line_start = std::mem::replace(&mut line_start, false);
        if c == b'#' && at_line_start {
            // A directive (unpreprocessed input): up to the end of the line, continued lines
            // included. Line markers of preprocessed input are skipped the same way.
            while i < text.len() && text[i] != b'\n' {
                if text[i] == b'\\' && text.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                i += 1;
            }
        } else if text[i..].starts_with(b"/*") {
            i += 2;
            while i < text.len() && !text[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if text[i..].starts_with(b"//") {
            while i < text.len() && text[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            out.push((s, i));
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < text.len() && text[i] != c {
                if text[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else {
            out.push((i, i + 1));
            i += 1;
        }
    }
    out
}

/// Names declared by `typedef` anywhere in the (partly parsed) tree.
pub fn typedef_names(text: &[u8], root: tree_sitter::Node) -> HashSet<String> {
    let mut names = HashSet::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "type_definition" {
            let mut c = node.walk();
            for d in node.children_by_field_name("declarator", &mut c) {
                collect_declared_names(text, d, &mut names);
            }
        } else if node.kind() == "translation_unit" || node.is_error() {
            stack.extend(node.named_children(&mut cursor));
        }
    }
    names
}

fn collect_declared_names(text: &[u8], node: tree_sitter::Node, out: &mut HashSet<String>) {
    match node.kind() {
        "type_identifier" | "identifier" | "primitive_type" => {
            if let Ok(s) = node.utf8_text(text) {
                out.insert(s.to_string());
            }
        }
        _ => {
            if let Some(d) = node.child_by_field_name("declarator") {
                collect_declared_names(text, d, out);
            } else {
                let mut c = node.walk();
                for ch in node.named_children(&mut c) {
                    collect_declared_names(text, ch, out);
                }
            }
        }
    }
}
