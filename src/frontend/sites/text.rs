//! The source as text: what the parser cannot take blanked out (line markers, computed
//! gotos), positions mapped back to the original, statement starts and identifiers found in
//! bytes, and the `pc_label` calls of an annotated file.

use super::*;

/// The text as the parser can take it, every byte at its place: line markers and attributes
/// only warnings read blanked (see [`blank_line_markers`]) and GNU computed gotos (`goto *tab[op];`), which do not parse,
/// read as `(0), *tab[op];`, an expression statement, which is all the annotator needs to
/// place labels around them (the prover lowers the real text).
pub(super) fn parseable(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    let blanked = blank_line_markers(text);
    let mut out = match without_computed_gotos(blanked.as_deref().unwrap_or(text)) {
        Some(rewritten) => Cow::Owned(rewritten),
        None => blanked.map_or(Cow::Borrowed(text), Cow::Owned),
    };
    // Attributes only warnings read, which do not parse after a declarator.
    let mut copy = out.to_vec();
    let blanked = crate::frontend::source::blank_harmless_attributes(&mut copy);
    if crate::frontend::source::rewrite_typeof_zero_casts(&mut copy) || blanked {
        out = Cow::Owned(copy);
    }
    out
}

/// `goto *e;` rewritten as `(0), *e;` (same length); None when there is none.
pub(super) fn without_computed_gotos(text: &[u8]) -> Option<Vec<u8>> {
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
pub(super) fn blank_line_markers(text: &[u8]) -> Option<Vec<u8>> {
    let markers = crate::frontend::source::line_markers(text);
    if markers.is_empty() {
        return None;
    }
    let mut out = text.to_vec();
    for m in markers {
        out[m].fill(b' ');
    }
    Some(out)
}

/// A position of one side of `edits` at its place in the other: of the original text in the
/// rewritten one when `forward`, else back. A position inside an edited span goes to the start
/// of its counterpart.
pub(super) fn across(edits: &[crate::frontend::oldc::Edit], p: usize, forward: bool) -> usize {
    let mut delta: isize = 0;
    for e in edits {
        let ((from_start, from_end), (to_start, to_end)) = if forward {
            ((e.orig_start, e.orig_end), (e.new_start, e.new_end))
        } else {
            ((e.new_start, e.new_end), (e.orig_start, e.orig_end))
        };
        if from_end <= p {
            delta += (to_end - to_start) as isize - (from_end - from_start) as isize;
        } else if from_start < p {
            return to_start;
        } else {
            break;
        }
    }
    (p as isize + delta) as usize
}

/// Maps every byte position of `sites` from the rewritten text back to the original one.
pub(super) fn remap(sites: &mut Sites, edits: &[crate::frontend::oldc::Edit], text: &[u8]) {
    let map = |p: usize| across(edits, p, false);
    let pair = |r: &mut (usize, usize)| *r = (map(r.0), map(r.1));
    // Lines, from the original text.
    let lines = crate::frontend::source::Lines::new(text);
    let line_of = |p: usize| lines.line_col(p).0;
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
        for d in &mut s.plan.decisions {
            if let Some(span) = &mut d.span {
                pair(span);
            }
            for leaf in &mut d.leaves {
                pair(&mut leaf.range);
            }
        }
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
        let mut written = |w: &mut covprune_encoders::Written| {
            if let Some(r) = &mut w.0 {
                pair(r);
            }
        };
        let pieces = s.plan.hoist.iter_mut().flat_map(|h| &mut h.pieces);
        for e in s
            .decision
            .iter_mut()
            .map(|d| &mut d.expr)
            .chain(&mut s.exprs)
            .chain(&mut s.update)
            .chain(pieces.flat_map(|p| p.before.iter_mut().chain(&mut p.after)))
        {
            e.positions_mut(&mut written);
        }
        for r in &mut s.continues {
            pair(r);
        }
    }
}

/// The C identifiers of an expression text.
pub(super) fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
}

/// `&name` somewhere in `body` (not `&&name`).
pub(super) fn address_taken(body: &[u8], name: &str) -> bool {
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

/// What precedes `pos` (skipping blanks, comments and directive lines) ends a statement, a
/// label or a statement head (`{`, `}`, `;`, `:`, `)`, `else`, `do`): tree-sitter did not
/// take part of an expression split by `#if` regions for a statement.
pub(super) fn starts_a_statement(text: &[u8], pos: usize) -> bool {
    match significant_before(text, pos) {
        None => false,
        Some(before) => {
            let last = *before.last().unwrap_or(&b';');
            matches!(last, b';' | b'{' | b'}' | b':' | b')')
                || before.ends_with(b"else")
                || before.ends_with(b"do")
        }
    }
}

/// What precedes `pos` ends with `)`: in a block, where no statement head can be, that is a
/// macro's arguments (`for_each (p, list)` expanding to a loop's head), whose statement the
/// next one may be.
pub(super) fn follows_a_parenthesis(text: &[u8], pos: usize) -> bool {
    significant_before(text, pos).is_some_and(|b| b.ends_with(b")"))
}

/// The text before `pos` without the blanks, comments and directive lines that end it
/// (empty at the file's start); None when a comment's start cannot be found.
fn significant_before(text: &[u8], pos: usize) -> Option<&[u8]> {
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
                return Some(&[]);
            }
            end = line_start - 1;
            continue;
        }
        let trimmed = before.trim_ascii_end();
        if trimmed.is_empty() {
            return Some(&[]);
        }
        if trimmed.ends_with(b"*/") {
            end = trimmed.windows(2).rposition(|w| w == b"/*")?;
            continue;
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
                    return Some(&[]);
                }
                continue;
            }
        }
        return Some(trimmed);
    }
}

/// Does the statement at `pos`, first on its line, follow a preprocessor directive line that
/// itself follows the head of a branch (`)`, `else`, `do` ending an earlier line)? Then the
/// statement may be that branch in a configuration the tree does not show (`else` then
/// `#endif` then `if (c) ...`): labels before it need a block of their own. Walking back, a
/// whole earlier conditional (`#if ... #endif`) and the sibling groups before the statement's
/// own (`#if A ... #else`) are passed over: in some configuration none of their text is there
/// (`if (c) #ifdef A return; #else x = 1; #endif`: `x = 1;` is the branch).
pub(super) fn branch_across_directive(text: &[u8], pos: usize) -> bool {
    let line_start = text[..pos]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |p| p + 1);
    if !text[line_start..pos].trim_ascii().is_empty() {
        return false;
    }
    // The code line before the statement in the configuration that keeps every group
    // (`passing` off), and in the one that drops the groups passed over.
    head_before(text, line_start, false) || head_before(text, line_start, true)
}

/// Whether the first code line before `line_start`, past at least one directive line, ends a
/// branch's head; with `pass_groups`, whole conditionals (`#if ... #endif`) and the sibling
/// groups before the statement's own are passed over.
fn head_before(text: &[u8], line_start: usize, pass_groups: bool) -> bool {
    let directive = |line: &[u8]| -> Option<Vec<u8>> {
        let rest = line.strip_prefix(b"#")?.trim_ascii_start();
        Some(
            rest.iter()
                .take_while(|b| b.is_ascii_alphabetic())
                .copied()
                .collect(),
        )
    };
    // How many conditionals are being passed over.
    let mut passing = 0usize;
    let (mut end, mut skipped) = (line_start, false);
    while end > 0 {
        let prev_end = end - 1;
        let ls = text[..prev_end]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
        let mut line = text[ls..prev_end].trim_ascii();
        end = ls;
        // Comments between the head and the statement are nothing: a `//` line, or a block
        // comment back to its `/*` (the text before it on that line is the line).
        if line.starts_with(b"//") {
            continue;
        }
        if line.ends_with(b"*/") {
            let Some(open) = text[..prev_end].windows(2).rposition(|w| w == b"/*") else {
                return false;
            };
            let open_ls = text[..open]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1);
            end = open_ls;
            line = text[open_ls..open].trim_ascii();
        }
        if line.is_empty() {
            continue;
        }
        if let Some(name) = directive(line) {
            skipped = true;
            if pass_groups {
                match name.as_slice() {
                    b"endif" => passing += 1,
                    b"if" | b"ifdef" | b"ifndef" => passing = passing.saturating_sub(1),
                    b"else" | b"elif" | b"elifdef" | b"elifndef" if passing == 0 => passing = 1,
                    _ => {}
                }
            }
            continue;
        }
        if passing > 0 {
            continue;
        }
        let word_end = |w: &[u8]| {
            line.ends_with(w)
                && (line.len() == w.len()
                    || !matches!(line[line.len() - w.len() - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_'))
        };
        return skipped && (line.ends_with(b")") || word_end(b"else") || word_end(b"do"));
    }
    false
}

/// The first word after `pos`, skipping whitespace, comments and preprocessor directive lines.
pub(super) fn next_word_after(text: &[u8], mut pos: usize) -> Vec<u8> {
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

/// Each label's predicate as the source writes it: the predicate of its `pc_label` statement
/// with every temporary the annotation evaluates a condition into (`__cp_t3`, assigned
/// `__cp_t3 = ((s == NULL) != 0)`) replaced by that condition's text, by the id's text.
pub fn source_predicates(text: &[u8]) -> std::collections::BTreeMap<String, String> {
    let whole = String::from_utf8_lossy(text);
    let temporary = |tail: &str| {
        "__cp_t".len()
            + tail["__cp_t".len()..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count()
    };
    let mut held: std::collections::BTreeMap<String, String> = Default::default();
    let mut rest: &str = &whole;
    while let Some(at) = rest.find("__cp_t") {
        let tail = &rest[at..];
        let len = temporary(tail);
        if let Some(value) = tail[len..].strip_prefix(" = (") {
            // The balanced text after `= (`.
            let mut depth = 1usize;
            let end = value.char_indices().find_map(|(i, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            });
            if let Some(end) = end {
                let inner = &value[..end];
                let condition = inner
                    .strip_suffix(" != 0")
                    .and_then(|c| c.strip_prefix('('))
                    .and_then(|c| c.strip_suffix(')'))
                    .unwrap_or(inner);
                held.entry(tail[..len].to_string())
                    .or_insert_with(|| condition.to_string());
            }
        }
        rest = &tail[len..];
    }
    label_calls(text)
        .into_iter()
        .map(|call| {
            let mut shown = String::new();
            let mut rest: &str = &call.predicate;
            while let Some(at) = rest.find("__cp_t") {
                shown.push_str(&rest[..at]);
                let tail = &rest[at..];
                let len = temporary(tail);
                match held.get(&tail[..len]) {
                    Some(c) => shown.push_str(&format!("({c})")),
                    None => shown.push_str(&tail[..len]),
                }
                rest = &tail[len..];
            }
            shown.push_str(rest);
            (call.id.trim().to_string(), shown)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn temporaries_read_as_the_conditions_they_hold() {
        let text = b"int f(const char *s, int n) { int __cp_t1 = 0, __cp_t2 = 0;\n  (void)((__cp_t1 = ((strlen(s) > 3) != 0)) && (__cp_t2 = ((n > 0) != 0))); pc_label(__cp_t1 && (!(__cp_t2)), 6, \"CC\"); pc_label(n > 1, 7, \"CC\"); if (__cp_t1 && __cp_t2) return 1; return 0; }\n";
        let shown = super::source_predicates(text);
        assert_eq!(shown["6"], "(strlen(s) > 3) && (!((n > 0)))");
        assert_eq!(shown["7"], "n > 1");
    }
}
