//! Preprocessed text as tree-sitter sees it: line markers read into a map and blanked, and a few
//! GNU spellings that tree-sitter-c cannot parse rewritten in place, byte offsets unchanged.

use super::oldc::Edit;
use crate::ir::{FileId, Loc};
use std::collections::HashMap;

/// The lines of a text, for byte offsets as line and column.
pub struct Lines {
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(text: &[u8]) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { starts }
    }

    /// The line and column (1-based, the column in bytes) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset);
        (line, offset - self.starts[line - 1] + 1)
    }
}

/// Maps lines of the preprocessed text back to original files and lines.
#[derive(Debug, Default)]
pub struct LineMap {
    /// For each preprocessed line (0-based), its original file and 1-based line.
    origins: Vec<(FileId, u32)>,
    pub files: Vec<String>,
    /// Byte offset of the start of each preprocessed line.
    line_starts: Vec<usize>,
}

impl LineMap {
    /// The original location of a 0-based (row, column) point in the preprocessed text.
    pub fn loc(&self, row: usize, col: usize) -> Loc {
        let (file, line) = self.origins.get(row).copied().unwrap_or((FileId(0), 0));
        Loc {
            file,
            line,
            col: col as u32 + 1,
        }
    }

    /// The original location of a byte offset.
    pub fn loc_of_byte(&self, byte: usize) -> Loc {
        let row = match self.line_starts.binary_search(&byte) {
            Ok(r) => r,
            Err(r) => r.saturating_sub(1),
        };
        let col = byte - self.line_starts.get(row).copied().unwrap_or(0);
        self.loc(row, col)
    }
}

/// The text to parse plus its line map.
pub struct PreparedSource {
    pub text: Vec<u8>,
    pub line_map: LineMap,
    /// Old-C rewrites made after preprocessing, sorted (see `oldc`).
    pub edits: Vec<Edit>,
}

impl PreparedSource {
    /// The original location of a byte offset of `text`, through the old-C rewrites: a byte
    /// inside a replacement maps to the start of the text it replaced.
    pub fn loc_of_byte(&self, byte: usize) -> Loc {
        let idx = self.edits.partition_point(|e| e.new_start <= byte);
        let orig = match idx.checked_sub(1).map(|i| self.edits[i]) {
            None => byte,
            Some(e) if byte < e.new_end => e.orig_start,
            Some(e) => byte - e.new_end + e.orig_end,
        };
        self.line_map.loc_of_byte(orig)
    }
}

/// Parses line markers (`# 12 "file.c" 1`, `#line 12 "file.c"`) into a map, blanks every
/// directive line with spaces (keeping newlines, so byte offsets do not move), and rewrites GNU
/// spellings that would otherwise become parse errors. `main_file` names the input when the text
/// carries no marker (a file that was not preprocessed).
pub fn prepare(raw: &[u8], main_file: &str) -> PreparedSource {
    let mut text = raw.to_vec();
    let mut files: Vec<String> = Vec::new();
    let mut file_ids: HashMap<String, FileId> = HashMap::new();
    let mut intern = |name: &str, files: &mut Vec<String>| -> FileId {
        *file_ids.entry(name.to_string()).or_insert_with(|| {
            files.push(name.to_string());
            FileId(files.len() as u32 - 1)
        })
    };
    let mut current = intern(main_file, &mut files);
    let mut next_line: u32 = 1;
    let mut origins = Vec::new();
    let mut line_starts = Vec::new();
    let mut start = 0;
    while start <= text.len() {
        let end = text[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| start + p);
        line_starts.push(start);
        let line = &text[start..end];
        let first_non_ws = line.iter().position(|b| !b.is_ascii_whitespace());
        let is_directive = first_non_ws.is_some_and(|p| line[p] == b'#');
        if is_directive {
            origins.push((current, next_line));
            if let Some((num, file)) = parse_marker(line) {
                if let Some(f) = file {
                    current = intern(&f, &mut files);
                }
                next_line = num;
            } else {
                next_line += 1;
            }
            for b in &mut text[start..end] {
                if *b != b'\n' && *b != b'\r' {
                    *b = b' ';
                }
            }
        } else {
            origins.push((current, next_line));
            next_line += 1;
        }
        if end == text.len() {
            break;
        }
        start = end + 1;
    }
    rewrite_gnu_spellings(&mut text);
    PreparedSource {
        text,
        line_map: LineMap {
            origins,
            files,
            line_starts,
        },
        edits: Vec::new(),
    }
}

/// The line markers of `text` ([`is_line_marker`]): each one's byte range, its newline aside.
pub fn line_markers(text: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = text[start..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(text.len(), |p| start + p);
        if is_line_marker(&text[start..end]) {
            out.push(start..end);
        }
        start = end + 1;
    }
    out
}

/// Whether a line is a line marker: `# 12 "file" flags` as `cc -E` writes them, or `#line 12`.
pub fn is_line_marker(line: &[u8]) -> bool {
    let trimmed = line.trim_ascii_start();
    trimmed.first() == Some(&b'#') && {
        let rest = trimmed[1..].trim_ascii_start();
        rest.first().is_some_and(u8::is_ascii_digit) || rest.starts_with(b"line ")
    }
}

/// `# 12 "file" flags` or `#line 12 "file"`: the line number of the next line and the file.
pub(crate) fn parse_marker(line: &[u8]) -> Option<(u32, Option<String>)> {
    if !is_line_marker(line) {
        return None;
    }
    let s = std::str::from_utf8(line).ok()?.trim_start();
    let rest = s.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return None;
    }
    let num: u32 = digits.parse().ok()?;
    let after = rest[digits.len()..].trim_start();
    let file = after.strip_prefix('"').and_then(|f| {
        // File names in markers escape backslashes and quotes.
        let mut out = String::new();
        let mut chars = f.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(chars.next()?),
                '"' => return Some(out),
                c => out.push(c),
            }
        }
        None
    });
    Some((num, file))
}

/// Rewrites, in place and length-preserving, GNU spellings tree-sitter-c turns into ERROR nodes:
/// `__signed__` (a plain `signed`), `__attribute__((fallthrough));` used as a statement (an
/// empty statement), `__builtin_offsetof(T, m)` (`offsetof(T, m)`, which the grammar knows) and
/// `__builtin_va_arg(ap, T)` (a cast `(T)__cp_va_arg(ap)` the lowering recognises).
fn rewrite_gnu_spellings(text: &mut [u8]) {
    replace_word(text, b"__signed__", b"signed");
    replace_word(text, b"__builtin_offsetof", b"offsetof");
    blank_fallthrough_attributes(text);
    blank_harmless_attributes(text);
    rewrite_typeof_zero_casts(text);
    rewrite_va_arg(text);
}

/// Rewrites, in place and length-preserving, `(__typeof__ (e)) 0` (gnulib's overflow checks
/// pass it to `__builtin_add_overflow_p` for its type) as `(e)*0`, the same type's zero, which
/// tree-sitter-c parses (it reads no cast to a `typeof` of an expression); whether it
/// rewrote any.
pub fn rewrite_typeof_zero_casts(text: &mut [u8]) -> bool {
    let mut any = false;
    for word in [&b"__typeof__"[..], b"__typeof", b"typeof"] {
        let hits: Vec<usize> = find_words(text, word).collect();
        for i in hits {
            // `(` before the word, blanks between.
            let Some(open) = text[..i].iter().rposition(|b| !b.is_ascii_whitespace()) else {
                continue;
            };
            if text[open] != b'(' {
                continue;
            }
            let arg = skip_ws(text, i + word.len());
            if text.get(arg) != Some(&b'(') {
                continue;
            }
            let Some(arg_end) = matching_paren(text, arg) else {
                continue;
            };
            let close = skip_ws(text, arg_end);
            if text.get(close) != Some(&b')') {
                continue;
            }
            let zero = skip_ws(text, close + 1);
            let after = text.get(zero + 1).copied().unwrap_or(b' ');
            if text.get(zero) != Some(&b'0') || is_ident_byte(after) || after == b'.' {
                continue;
            }
            blank(&mut text[open..arg]);
            text[close] = b'*';
            any = true;
        }
    }
    any
}

/// Attributes that change nothing a run does or a proof reads (warnings only): blanked where
/// they are, since tree-sitter-c does not parse them after a declarator
/// (`void *v __attribute__((unused)) = 0;`, as GNU foreach macros write).
const HARMLESS_ATTRIBUTES: &[&str] = &[
    "unused",
    "used",
    "deprecated",
    "maybe_unused",
    "warn_unused_result",
];

/// Blanks, in place and length-preserving, every `__attribute__((...))` whose attributes are
/// all [`HARMLESS_ATTRIBUTES`]; whether it blanked any.
pub fn blank_harmless_attributes(text: &mut [u8]) -> bool {
    let mut any = false;
    for (start, open, close) in attribute_spans(text) {
        let inner = String::from_utf8_lossy(&text[open..close]).into_owned();
        let list = inner
            .trim()
            .strip_prefix("((")
            .and_then(|r| r.strip_suffix("))"));
        let harmless = list.is_some_and(|l| {
            l.split(',').all(|a| {
                let a = a.trim();
                let name = a
                    .strip_prefix("__")
                    .and_then(|n| n.strip_suffix("__"))
                    .unwrap_or(a);
                HARMLESS_ATTRIBUTES.contains(&name)
            })
        });
        if harmless {
            any = true;
            blank(&mut text[start..close]);
        }
    }
    any
}

/// Each `__attribute__ (...)` of `text`: where the word starts, where its parenthesis opens,
/// and just past the one that closes it.
fn attribute_spans(text: &[u8]) -> Vec<(usize, usize, usize)> {
    find_words(text, b"__attribute__")
        .filter_map(|i| {
            let open = skip_ws(text, i + b"__attribute__".len());
            if text.get(open) != Some(&b'(') {
                return None;
            }
            matching_paren(text, open).map(|close| (i, open, close))
        })
        .collect()
}

/// Spaces over `bytes`, newlines kept (positions and lines stay where they were).
fn blank(bytes: &mut [u8]) {
    for b in bytes {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn find_words<'a>(text: &'a [u8], word: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let n = word.len();
    (0..text.len().saturating_sub(n - 1)).filter(move |&i| {
        text[i] == word[0]
            && &text[i..i + n] == word
            && (i == 0 || !is_ident_byte(text[i - 1]))
            && (i + n == text.len() || !is_ident_byte(text[i + n]))
    })
}

fn replace_word(text: &mut [u8], word: &[u8], by: &[u8]) {
    let hits: Vec<usize> = find_words(text, word).collect();
    for i in hits {
        text[i..i + by.len()].copy_from_slice(by);
        for b in &mut text[i + by.len()..i + word.len()] {
            *b = b' ';
        }
    }
}

/// Index just past the parenthesis matching the one at `open`, if any.
fn matching_paren(text: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in text.iter().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn blank_fallthrough_attributes(text: &mut [u8]) {
    for (start, open, close) in attribute_spans(text) {
        let is_fallthrough = text[open..close].windows(11).any(|w| w == b"fallthrough");
        let semi = skip_ws(text, close);
        if is_fallthrough && text.get(semi) == Some(&b';') {
            blank(&mut text[start..close]);
        }
    }
}

fn rewrite_va_arg(text: &mut [u8]) {
    const NAME: &[u8] = b"__builtin_va_arg";
    let hits: Vec<usize> = find_words(text, NAME).collect();
    for i in hits {
        let open = skip_ws(text, i + NAME.len());
        if text.get(open) != Some(&b'(') {
            continue;
        }
        let Some(close) = matching_paren(text, open) else {
            continue;
        };
        // Line markers inside the call leave newlines there: keep their number (moved to the
        // end of the rewritten span) so that later lines keep their rows.
        let newlines = text[i..close].iter().filter(|&&b| b == b'\n').count();
        // Split the arguments at the last top-level comma.
        let mut depth = 0i32;
        let mut comma = None;
        for (k, &b) in text.iter().enumerate().take(close - 1).skip(open + 1) {
            match b {
                b'(' => depth += 1,
                b')' => depth -= 1,
                b',' if depth == 0 => comma = Some(k),
                _ => {}
            }
        }
        let Some(comma) = comma else { continue };
        // The pieces with their whitespace collapsed (markers left long runs of it).
        let flat = |b: &[u8]| -> Vec<u8> {
            let s = String::from_utf8_lossy(b);
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .into_bytes()
        };
        let ap = flat(&text[open + 1..comma]);
        let ty = flat(&text[comma + 1..close - 1]);
        let mut out = Vec::with_capacity(close - i);
        out.push(b'(');
        out.extend_from_slice(&ty);
        out.extend_from_slice(b")__cp_va_arg(");
        out.extend_from_slice(&ap);
        out.push(b')');
        if out.len() + newlines > close - i {
            continue;
        }
        out.resize(close - i - newlines, b' ');
        out.extend(std::iter::repeat_n(b'\n', newlines));
        text[i..close].copy_from_slice(&out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let lines = Lines::new(b"ab\ncd\n\nx");
        assert_eq!(lines.line_col(0), (1, 1));
        assert_eq!(lines.line_col(1), (1, 2));
        assert_eq!(lines.line_col(3), (2, 1));
        assert_eq!(lines.line_col(7), (4, 1));
    }

    #[test]
    fn markers_map_lines_and_are_blanked() {
        let raw = b"# 1 \"a.c\"\nint x;\n# 10 \"b.h\" 1\nint y;\nint z;\n";
        let p = prepare(raw, "a.c");
        assert_eq!(p.text.len(), raw.len());
        assert!(p.text.starts_with(b"         \nint x;"));
        assert_eq!(p.line_map.loc(1, 0).line, 1);
        let l = p.line_map.loc(3, 4);
        assert_eq!(
            (p.line_map.files[l.file.0 as usize].as_str(), l.line, l.col),
            ("b.h", 10, 5)
        );
        assert_eq!(p.line_map.loc(4, 0).line, 11);
    }

    #[test]
    fn gnu_spellings_are_rewritten_in_place() {
        let raw = b"__signed__ int a; x = __builtin_va_arg(ap, int); __attribute__((fallthrough));";
        let p = prepare(raw, "a.c");
        let s = String::from_utf8(p.text).unwrap();
        assert_eq!(s.len(), raw.len());
        assert!(s.starts_with("signed     int a;"));
        assert!(s.contains("(int)__cp_va_arg(ap)"));
        assert!(!s.contains("fallthrough"));
    }
}
