//! The lowering's types at the nodes of the text being annotated. Each function body's tokens
//! are aligned with the tokens the lowering read of the same body (where the preprocessor
//! expanded macros, runs of tokens differ); a node's type is the one the lowering gave the
//! expression at the range its first and last tokens stand for there. A node whose ends fall
//! inside a run that differs, or that the lowering did not type, has none.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use similar::{capture_diff_slices_deadline, Algorithm, DiffTag};
use tree_sitter::Node;

use crate::ir::spans::{digest, SourceTypes, Token};
use crate::ir::CType;

/// How long aligning one body may take: past it the alignment is coarser (fewer nodes typed),
/// never wrong.
const ALIGN_BUDGET: Duration = Duration::from_secs(2);

/// Where the nodes of one body of the annotated text start and end in the lowered text.
#[derive(Default)]
pub struct NodeTypes<'p> {
    lowered: Option<&'p SourceTypes>,
    /// The lowered body's tokens.
    tokens: &'p [Token],
    /// A node starting at this byte of the annotated text starts at that byte of the lowered.
    starts: HashMap<usize, u32>,
    /// A node ending at this byte of the annotated text ends at that byte of the lowered.
    ends: HashMap<usize, u32>,
}

/// A token of the annotated text.
#[derive(Clone, Copy)]
struct Leaf {
    start: usize,
    end: usize,
    digest: u64,
    /// A macro's use (which no lowered token is).
    is_use: bool,
    /// Its line in the annotated text.
    row: u32,
}

impl<'p> NodeTypes<'p> {
    /// The body `body` of function `name` in `text`, aligned with its lowered tokens; a call of
    /// a macro is one token that matches none (its expansion stands there), and so is the name
    /// of an object-like one.
    pub fn of_body(
        lowered: &'p SourceTypes,
        name: &str,
        body: Node,
        text: &[u8],
        macros: &MacroNames,
    ) -> NodeTypes<'p> {
        let Some(tokens) = lowered.bodies.get(name) else {
            return NodeTypes::default();
        };
        let mut leaves = Vec::new();
        collect_leaves(body, text, macros, &mut leaves);
        let mut out = NodeTypes {
            lowered: Some(lowered),
            tokens,
            ..NodeTypes::default()
        };
        out.align(&leaves, tokens);
        out
    }

    /// The nodes of a macro's expansion (`root`, in `text`), where the call `call` of the
    /// annotated text was replaced by it: its tokens aligned with those `call` stands for.
    pub fn expansion(
        &self,
        call: Node,
        root: Node,
        text: &[u8],
        macros: &MacroNames,
    ) -> NodeTypes<'p> {
        let (Some(&from), Some(&to)) = (
            self.starts.get(&call.start_byte()),
            self.ends.get(&call.end_byte()),
        ) else {
            return NodeTypes::default();
        };
        let first = self.tokens.partition_point(|t| t.start < from);
        let last = self.tokens.partition_point(|t| t.end <= to);
        let mut leaves = Vec::new();
        collect_leaves(root, text, macros, &mut leaves);
        let mut out = NodeTypes {
            lowered: self.lowered,
            tokens: self.tokens,
            ..NodeTypes::default()
        };
        out.align(&leaves, &self.tokens[first..last.max(first)]);
        out
    }

    /// The type the lowering gave the expression `node` stands for.
    pub fn type_of(&self, node: Node) -> Option<CType> {
        let from = *self.starts.get(&node.start_byte())?;
        let to = *self.ends.get(&node.end_byte())?;
        self.type_at(from, to)
    }

    /// The type of the lowered expression at `from..to`: a parenthesized one has its inner
    /// expression's (a condition's parentheses are not lowered as an expression).
    fn type_at(&self, mut from: u32, mut to: u32) -> Option<CType> {
        let lowered = self.lowered?;
        let (open, close) = (digest(b"("), digest(b")"));
        loop {
            if let Some(t) = lowered.type_at((from, to)) {
                return Some(t.clone());
            }
            let first = self.tokens.partition_point(|t| t.start < from);
            let last = self
                .tokens
                .partition_point(|t| t.end <= to)
                .checked_sub(1)?;
            let run = self.tokens.get(first..=last)?;
            let enclosed = run.len() > 2
                && run[0].start == from
                && run[run.len() - 1].end == to
                && run[0].digest == open
                && run[run.len() - 1].digest == close
                && run[..run.len() - 1]
                    .iter()
                    .scan(0i64, |depth, t| {
                        *depth += i64::from(t.digest == open) - i64::from(t.digest == close);
                        Some(*depth)
                    })
                    .all(|d| d > 0);
            if !enclosed {
                return None;
            }
            (from, to) = (run[1].start, run[run.len() - 2].end);
        }
    }

    /// Maps the leaves onto the lowered tokens: equal runs token by token, and a run that
    /// differs by its two ends (a node covering exactly a macro's use covers its expansion).
    fn align(&mut self, leaves: &[Leaf], tokens: &[Token]) {
        let mut pair = |(start, end): (usize, usize), first: &Token, last: &Token| {
            self.starts.insert(start, first.start);
            self.ends.insert(end, last.end);
        };
        let runs = alignment(leaves, tokens);
        // Parentheses the lowering's text does not have (it drops those around a variable's
        // name, `(s)->x`) stand where what they enclose stands.
        let (open, close) = (digest(b"("), digest(b")"));
        let mut dropped = vec![false; leaves.len()];
        for (a, b) in &runs {
            if a.is_empty() || b.is_empty() {
                for k in a.clone() {
                    dropped[k] = leaves[k].digest == open || leaves[k].digest == close;
                }
                continue;
            }
            let run = (leaves[a.start].start, leaves[a.end - 1].end);
            pair(run, &tokens[b.start], &tokens[b.end - 1]);
        }
        for k in (0..leaves.len()).rev() {
            let next = leaves
                .get(k + 1)
                .and_then(|n| self.starts.get(&n.start).copied());
            if let (true, Some(to)) = (dropped[k] && leaves[k].digest == open, next) {
                self.starts.insert(leaves[k].start, to);
            }
        }
        for k in 1..leaves.len() {
            let before = self.ends.get(&leaves[k - 1].end).copied();
            if let (true, Some(to)) = (dropped[k] && leaves[k].digest == close, before) {
                self.ends.insert(leaves[k].end, to);
            }
        }
    }
}

/// Runs of equal lines holding at least this many tokens are taken as they are; between them,
/// the tokens are aligned closely (see [`resync`]).
const ANCHOR: usize = 6;

/// The leaves and the lowered tokens cut into corresponding runs: single equal tokens, and
/// runs that differ (either side may be empty: a directive, text compiled out, an expansion).
/// A diff of the lines (the preprocessor keeps a line's tokens on its line) fixes the runs that
/// are certainly equal; between them a macro's use is paired with the shortest expansion after
/// which the tokens agree again, since a diff alone may pair a token after the use with its
/// twin inside the expansion (`N + M(c)` against `3 + ((c) + 1)`).
fn alignment(leaves: &[Leaf], tokens: &[Token]) -> Vec<(Range, Range)> {
    let old: Vec<u64> = leaves.iter().map(|l| l.digest).collect();
    let new: Vec<u64> = tokens.iter().map(|t| t.digest).collect();
    let uses: Vec<bool> = leaves.iter().map(|l| l.is_use).collect();
    let mut out = Vec::new();
    if old == new {
        out.extend((0..old.len()).map(|i| (i..i + 1, i..i + 1)));
        return out;
    }
    let old_lines = lines(leaves.iter().map(|l| l.row), &old);
    let new_lines = lines(tokens.iter().map(|t| t.row), &new);
    let digests = |ls: &[(Range, u64)]| ls.iter().map(|l| l.1).collect::<Vec<u64>>();
    let (o, n) = (digests(&old_lines), digests(&new_lines));
    let deadline = Instant::now() + ALIGN_BUDGET;
    let (mut i, mut j) = (0, 0);
    for op in capture_diff_slices_deadline(Algorithm::Myers, &o, &n, Some(deadline)) {
        let (tag, a, b) = op.as_tag_tuple();
        if tag != DiffTag::Equal {
            continue;
        }
        let a = old_lines[a.start].0.start..old_lines[a.end - 1].0.end;
        let b = new_lines[b.start].0.start..new_lines[b.end - 1].0.end;
        if a.len() < ANCHOR || a.len() != b.len() {
            continue;
        }
        resync((&old, &uses), &new, (i..a.start, j..b.start), &mut out);
        out.extend(a.clone().zip(b.clone()).map(|(x, y)| (x..x + 1, y..y + 1)));
        (i, j) = (a.end, b.end);
    }
    resync((&old, &uses), &new, (i..old.len(), j..new.len()), &mut out);
    out
}

/// The tokens cut into lines: each line's range of tokens and a digest of their digests.
fn lines(rows: impl Iterator<Item = u32>, digests: &[u64]) -> Vec<(Range, u64)> {
    let mut out: Vec<(Range, u64)> = Vec::new();
    let mut last = None;
    for (k, row) in rows.enumerate() {
        match out.last_mut() {
            Some((r, d)) if last == Some(row) => {
                r.end = k + 1;
                *d = (*d ^ digests[k]).wrapping_mul(0x0000_0100_0000_01b3);
            }
            _ => out.push((k..k + 1, digests[k])),
        }
        last = Some(row);
    }
    out
}

type Range = std::ops::Range<usize>;

/// How many tokens after a run that differs must agree for the run to end there.
const AGREE: usize = 4;

/// Aligns `old[a]` with `new[b]`: equal tokens pair one by one, and so does `x` in `(x)` where
/// the lowering has `x`; at a difference, the run that differs is the shortest after which the
/// next tokens agree (up to [`AGREE`] of them, fewer where a leaf of no token, a macro's use,
/// comes first), a macro's use alone against its expansion before any other run.
fn resync(
    (old, uses): (&[u64], &[bool]),
    new: &[u64],
    (a, b): (Range, Range),
    out: &mut Vec<(Range, Range)>,
) {
    let (open, close) = (digest(b"("), digest(b")"));
    let (mut i, mut j) = (a.start, b.start);
    'runs: while i < a.end && j < b.end {
        if old[i] == new[j] {
            out.push((i..i + 1, j..j + 1));
            (i, j) = (i + 1, j + 1);
            continue;
        }
        // `(x)` where the lowering has `x`.
        if old[i] == open && i + 2 < a.end && old[i + 2] == close && old[i + 1] == new[j] {
            out.extend([
                (i..i + 1, j..j),
                (i + 1..i + 2, j..j + 1),
                (i + 2..i + 3, j + 1..j + 1),
            ]);
            (i, j) = (i + 3, j + 1);
            continue;
        }
        let (room_i, room_j) = (a.end - i, b.end - j);
        // A macro's use stands for a run of lowered tokens: the use alone first, then any run.
        let alone = (0..=room_j).map(|dj| (1, dj)).filter(|_| uses[i]);
        let any = (1..=room_i + room_j).flat_map(|total| {
            (total.saturating_sub(room_j)..=total.min(room_i)).map(move |di| (di, total - di))
        });
        for (di, dj) in alone.chain(any) {
            let (x, y) = (i + di, j + dj);
            // A macro's expansion is balanced: `Abs(d) < e` is not `(d < ...`.
            if uses[i..x].iter().any(|u| *u) && !balanced(&new[j..y]) {
                continue;
            }
            let agree = (0..AGREE)
                .take_while(|k| x + k < a.end && y + k < b.end && old[x + k] == new[y + k])
                .count();
            let before_use = (x..a.end).take_while(|&k| !uses[k]).count();
            let wanted = AGREE.min(before_use).min(b.end - y);
            if wanted > 0 && agree >= wanted || x == a.end && y == b.end {
                out.push((i..x, j..y));
                (i, j) = (x, y);
                continue 'runs;
            }
        }
        break;
    }
    if i < a.end || j < b.end {
        out.push((i..a.end, j..b.end));
    }
}

/// Whether the tokens' parentheses, brackets and braces pair up.
fn balanced(tokens: &[u64]) -> bool {
    let pairs = [(b"(", b")"), (b"[", b"]"), (b"{", b"}")].map(|(o, c)| (digest(o), digest(c)));
    let mut open = Vec::new();
    for t in tokens {
        if let Some(&(_, c)) = pairs.iter().find(|(o, _)| o == t) {
            open.push(c);
        } else if pairs.iter().any(|(_, c)| c == t) && open.pop() != Some(*t) {
            return false;
        }
    }
    open.is_empty()
}

/// The annotated file's macros as the alignment reads them: the names a call may be a use of
/// (its expansion is what the lowering read), and the object-like ones' names, by digest.
#[derive(Debug, Default)]
pub struct MacroNames {
    calls: BTreeSet<String>,
    objects: HashSet<u64>,
}

impl MacroNames {
    pub fn new<'n>(
        calls: impl IntoIterator<Item = String>,
        objects: impl IntoIterator<Item = &'n str>,
    ) -> MacroNames {
        MacroNames {
            calls: calls.into_iter().collect(),
            objects: objects.into_iter().map(|n| digest(n.as_bytes())).collect(),
        }
    }

    /// Whether `node` (in `text`) is a call of a macro.
    pub fn is_use(&self, node: Node, text: &[u8]) -> bool {
        node.kind() == "call_expression"
            && crate::frontend::syntax::callee(node, text).is_some_and(|c| self.calls.contains(c))
    }

    /// Whether the token of digest `d` is an object-like macro's name.
    fn is_object(&self, d: u64) -> bool {
        self.objects.contains(&d)
    }
}

/// The tokens of `node` in `text`, comments aside; a macro's call is one token, with a digest
/// no token has.
fn collect_leaves(node: Node, text: &[u8], macros: &MacroNames, out: &mut Vec<Leaf>) {
    let call = |n: Node| macros.is_use(n, text);
    for n in crate::frontend::syntax::tokens(node, &call) {
        let t = &text[n.byte_range()];
        let (digest, is_use) = if call(n) {
            let mut marked = vec![0u8];
            marked.extend_from_slice(t);
            (digest(&marked), true)
        } else {
            let d = digest(t);
            (d, macros.is_object(d))
        };
        out.push(Leaf {
            start: n.start_byte(),
            end: n.end_byte(),
            digest,
            is_use,
            row: n.start_position().row as u32,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IntKind;

    /// The program of `lowered` and the annotated text's tree, the types of the nodes of
    /// function `f` whose text is one of `probes`.
    fn types_in(annotated: &str, lowered: &str, probes: &[&str]) -> Vec<(String, Option<CType>)> {
        let program = crate::frontend::test_program(lowered);
        let tree = super::super::parse(annotated.as_bytes()).unwrap();
        let text = annotated.as_bytes();
        let mut body = None;
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "function_definition" {
                body = n.child_by_field_name("body");
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        let macros = MacroNames::new(["M".to_string()], ["N"]);
        let types = NodeTypes::of_body(&program.source_types, "f", body.unwrap(), text, &macros);
        let mut out = Vec::new();
        // The body's own nodes (a macro's argument is the macro's).
        let mut stack = vec![body.unwrap()];
        while let Some(n) = stack.pop() {
            if macros.is_use(n, text) {
                out.push((annotated[n.byte_range()].to_string(), types.type_of(n)));
                continue;
            }
            let t = &annotated[n.byte_range()];
            if probes.contains(&t) && n.is_named() {
                out.push((t.to_string(), types.type_of(n)));
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.dedup();
        out
    }

    #[test]
    fn nodes_take_the_lowered_types_through_spacing_comments_and_macros() {
        let annotated = "#define N 3\n#define M(a) ((a) + 1)\nlong f(char c, unsigned u) {\n  \
                         return (c  +  /* x */ u) * N + M(c) + -c + (c ? u : 2L) + (c) * 2;\n}\n";
        // The same body as `cc -E` writes it.
        let lowered = "long f(char c, unsigned u) {\n  \
                       return (c + u) * 3 + ((c) + 1) + -c + (c ? u : 2L) + (c) * 2;\n}\n";
        let got = types_in(
            annotated,
            lowered,
            &[
                "c  +  /* x */ u",
                "(c  +  /* x */ u) * N",
                "N",
                "M(c)",
                "-c",
                "c ? u : 2L",
                "c",
                "(c)",
                "(c) * 2",
            ],
        );
        let want = vec![
            (
                "(c  +  /* x */ u) * N".to_string(),
                Some(CType::Int(IntKind::UInt)),
            ),
            // The lowering reads `(c)` as `c`.
            ("(c)".to_string(), Some(CType::Int(IntKind::Char))),
            ("(c) * 2".to_string(), Some(CType::INT)),
            ("-c".to_string(), Some(CType::INT)),
            ("M(c)".to_string(), Some(CType::INT)),
            ("N".to_string(), Some(CType::INT)),
            ("c".to_string(), Some(CType::Int(IntKind::Char))),
            (
                "c  +  /* x */ u".to_string(),
                Some(CType::Int(IntKind::UInt)),
            ),
            ("c ? u : 2L".to_string(), Some(CType::LONG)),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_body_the_lowering_did_not_read_types_nothing() {
        let got = types_in(
            "int f(int a) { return a + 1; }",
            "int g(int a) { return a; }",
            &["a"],
        );
        assert_eq!(got, vec![("a".to_string(), None)]);
    }
}
