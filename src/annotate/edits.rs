//! The edits of one annotated file: insertions and replacements of the original text, in the
//! order they go at one position, the labels put before statements, and the text made.

use std::collections::{BTreeMap, BTreeSet};

use super::HEADER;
use crate::frontend::sites::{self, Branch, StmtKind};

/// The order key of a replacement: after every insertion at its start, which belongs before
/// the replaced text.
pub(super) const REPLACE: (u8, i64) = (2, 0);

/// An insertion (start == end) or replacement of the original text.
pub(super) struct Edit {
    pub(super) start: usize,
    pub(super) end: usize,
    /// Order among edits at one position: closings (deepest first) before openings
    /// (shallowest first); see [`Edits`].
    pub(super) key: (u8, i64),
    pub(super) text: String,
}

/// The edits of one file. At one position, closings go first, deepest first: an `if`'s added
/// `else` (key -(2d+1)) before the block that wraps it (-2d); then openings, shallowest first:
/// a wrapping block (2d) before its labels and a loop's rewritten head (2d+1).
#[derive(Default)]
pub(super) struct Edits {
    pub(super) edits: Vec<Edit>,
    /// Label texts to put before statements, by statement index.
    pub(super) before: BTreeMap<usize, String>,
}

impl Edits {
    pub(super) fn insert(&mut self, pos: usize, key: (u8, i64), text: String) {
        self.edits.push(Edit {
            start: pos,
            end: pos,
            key,
            text,
        });
    }
}

/// Puts `text` at the head of branch `b` of a statement at `owner_depth`.
pub(super) fn head(
    by_range: &BTreeMap<(usize, usize), usize>,
    b: &Branch,
    owner_depth: usize,
    text: String,
    edits: &mut Edits,
) {
    if b.compound {
        edits.insert(
            b.range.0 + 1,
            (1, 2 * owner_depth as i64 + 1),
            format!(" {text}"),
        );
    } else if let Some(&i) = by_range.get(&b.range) {
        edits.before.entry(i).or_default().push_str(&text);
    }
}

/// Puts the labels before statements: in a block of their own where the statement is another
/// one's branch (or computes hoisted call values), where the statement cannot take them.
pub(super) fn place_before(
    found: &sites::Sites,
    values_applied: &BTreeSet<usize>,
    edits: &mut Edits,
) {
    // Labels before statements, in a block where the statement is another one's branch.
    for (i, text) in std::mem::take(&mut edits.before) {
        let s = &found.statements[i];
        let depth = s.depth as i64;
        // Hoisted call values are declared in a block of their own, except for a
        // declaration, whose name must stay in scope.
        let wrap =
            s.needs_block || (values_applied.contains(&i) && s.kind != StmtKind::Declaration);
        if wrap {
            if !s.reliable {
                continue;
            }
            edits.insert(s.range.0, (1, 2 * depth), format!("{{ {text}"));
            edits.insert(s.range.1, (0, -2 * depth), " }".into());
        } else if s.safe_before {
            edits.insert(s.range.0, (1, 2 * depth + 1), text);
        }
    }
}

/// The annotated text: the header, then the source with the edits made, in their order.
pub(super) fn apply(mut edits: Vec<Edit>, source: &[u8], labels: usize) -> Vec<u8> {
    edits.sort_by_key(|e| (e.start, e.key));
    let mut text = Vec::with_capacity(source.len() + HEADER.len() + 64 * labels);
    text.extend_from_slice(HEADER.as_bytes());
    let mut pos = 0;
    for e in &edits {
        if e.start < pos {
            continue; // overlapping edits cannot happen for well-formed sites
        }
        text.extend_from_slice(&source[pos..e.start]);
        text.extend_from_slice(e.text.as_bytes());
        pos = e.end;
    }
    text.extend_from_slice(&source[pos..]);
    text
}
