//! Which lines of a source file one configuration compiles out: the groups of `#if`, `#ifdef`,
//! `#ifndef`, `#elif` and `#else` whose text never reaches the compiler with the file's flags.
//!
//! The preprocessor decides, not a second reading of the conditions: each group gets a probe
//! line of its own (`__covprune_group_N__`) in a copy of the file, the copy is preprocessed with
//! the original's flags (its directory searched first for `#include "..."`, as the original's
//! would be), and a group whose probe is missing from the output is compiled out.

use std::path::Path;

use super::preprocess::{self, PreprocessOptions};

/// A conditional group: the byte range of its text (after its directive's line, up to the
/// start of the line of the next directive of its chain) and its lines (1-based, inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Group {
    body: (usize, usize),
    lines: (usize, usize),
}

/// The text the configuration compiles out, as byte ranges and their lines (1-based,
/// inclusive), in file order; nested groups inside an inactive one are not listed apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledOut {
    pub ranges: Vec<(usize, usize)>,
    pub lines: Vec<(usize, usize)>,
}

impl CompiledOut {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether the byte at `pos` is compiled out.
    pub fn contains(&self, pos: usize) -> bool {
        let i = self.ranges.partition_point(|r| r.1 <= pos);
        self.ranges.get(i).is_some_and(|r| r.0 <= pos)
    }

    /// Whether line `line` (1-based) is compiled out.
    pub fn contains_line(&self, line: usize) -> bool {
        let i = self.lines.partition_point(|r| r.1 < line);
        self.lines.get(i).is_some_and(|r| r.0 <= line)
    }

    /// The same text in a rewritten copy of the file, `to_new` taking a position of the
    /// original to the copy's (order-preserving), `new_text` the copy: its ranges and lines.
    pub fn moved(&self, to_new: impl Fn(usize) -> usize, new_text: &[u8]) -> CompiledOut {
        let lines = crate::frontend::source::Lines::new(new_text);
        let mut out = CompiledOut::default();
        for &(s, e) in &self.ranges {
            let (s, e) = (to_new(s), to_new(e));
            if s < e {
                out.ranges.push((s, e));
                out.lines
                    .push((lines.line_col(s).0, lines.line_col(e - 1).0));
            }
        }
        out
    }
}

/// What `path` compiles out with `opts`; nothing for preprocessed (`.i`) input, for a file
/// without conditional groups, or when the probe cannot be preprocessed (then every group
/// counts as compiled in, as without this analysis).
pub fn compiled_out(path: &Path, opts: &PreprocessOptions) -> CompiledOut {
    if path.extension().is_some_and(|e| e == "i") {
        return CompiledOut::default();
    }
    let Ok(text) = std::fs::read(path) else {
        return CompiledOut::default();
    };
    let groups = groups(&text);
    if groups.is_empty() {
        return CompiledOut::default();
    }
    let Some(output) = probe(path, opts, &text, &groups) else {
        return CompiledOut::default();
    };
    let present = probes_in(&output);
    let mut out = CompiledOut::default();
    for (n, g) in groups.iter().enumerate() {
        if present.contains(&n) {
            continue;
        }
        // Inside an inactive group already listed.
        if out.ranges.last().is_some_and(|r| g.body.1 <= r.1) {
            continue;
        }
        if g.body.0 < g.body.1 {
            out.ranges.push(g.body);
            out.lines.push(g.lines);
        }
    }
    out
}

/// The probe copy of `text` preprocessed with the original's flags; None when that fails.
fn probe(path: &Path, opts: &PreprocessOptions, text: &[u8], groups: &[Group]) -> Option<Vec<u8>> {
    let mut copy = Vec::with_capacity(text.len() + 32 * groups.len());
    let mut at = 0;
    let mut starts: Vec<(usize, usize)> = groups.iter().map(|g| g.body.0).zip(0..).collect();
    starts.sort();
    for (pos, n) in starts {
        copy.extend_from_slice(&text[at..pos]);
        copy.extend_from_slice(format!("__covprune_group_{n}__\n").as_bytes());
        at = pos;
    }
    copy.extend_from_slice(&text[at..]);
    let dir = tempfile::Builder::new()
        .prefix("covprune-probe-")
        .tempdir()
        .ok()?;
    let name = path.file_name()?;
    let copy_path = dir.path().join(name);
    std::fs::write(&copy_path, &copy).ok()?;
    let original_dir = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))?;
    let mut opts = opts.clone();
    if opts.database_entry.is_none() {
        opts.database_entry = Some(path.to_path_buf());
    }
    let quote = ["-iquote".to_string(), original_dir.display().to_string()];
    preprocess::preprocess_with(&copy_path, &opts, &quote).ok()
}

/// The numbers of the probes in a preprocessed text.
fn probes_in(output: &[u8]) -> std::collections::BTreeSet<usize> {
    const PROBE: &[u8] = b"__covprune_group_";
    let mut found = std::collections::BTreeSet::new();
    let mut i = 0;
    while let Some(k) = find(&output[i..], PROBE) {
        let start = i + k + PROBE.len();
        let digits = output[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if let Ok(n) = std::str::from_utf8(&output[start..start + digits])
            .unwrap_or("")
            .parse()
        {
            found.insert(n);
        }
        i = start;
    }
    found
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A directive line of the file: where its logical line starts and ends (after its
/// newline), its line number, and its name (`if`, `ifdef`, `else`, ...).
struct Directive {
    start: usize,
    end: usize,
    line: usize,
    name: String,
}

/// The conditional groups of `text`, in the order of their directives.
fn groups(text: &[u8]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    // Per open chain: the index in `out` of its current group.
    let mut open: Vec<usize> = Vec::new();
    let close = |out: &mut Vec<Group>, g: usize, d: &Directive| {
        out[g].body.1 = d.start;
        out[g].lines.1 = d.line - 1;
    };
    for d in directives(text) {
        let opens = |out: &mut Vec<Group>| {
            out.push(Group {
                body: (d.end, d.end),
                lines: (d.line_after(text), d.line_after(text)),
            });
            out.len() - 1
        };
        match d.name.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let g = opens(&mut out);
                open.push(g);
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                if let Some(g) = open.pop() {
                    close(&mut out, g, &d);
                    let g = opens(&mut out);
                    open.push(g);
                }
            }
            "endif" => {
                if let Some(g) = open.pop() {
                    close(&mut out, g, &d);
                }
            }
            _ => {}
        }
    }
    // An unterminated chain (the compiler rejects it): nothing is claimed about it.
    for g in open {
        out[g].body.1 = out[g].body.0;
    }
    out
}

impl Directive {
    /// The line just after the directive's logical line.
    fn line_after(&self, text: &[u8]) -> usize {
        self.line
            + text[self.start..self.end.saturating_sub(1).max(self.start)]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
            + 1
    }
}

/// The directive lines of `text` outside comments, with their continuation lines joined.
fn directives(text: &[u8]) -> Vec<Directive> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut in_comment = false;
    while i < text.len() {
        let line_start = i;
        // The logical line: up to a newline not preceded by a backslash.
        let mut end = i;
        let mut newlines = 0;
        while end < text.len() {
            if text[end] == b'\n' {
                newlines += 1;
                let continued = end > 0 && text[end - 1] == b'\\'
                    || end > 1 && text[end - 1] == b'\r' && text[end - 2] == b'\\';
                end += 1;
                if !continued {
                    break;
                }
            } else {
                end += 1;
            }
        }
        let logical = &text[line_start..end];
        if !in_comment {
            let body = trim_start(logical);
            if let Some(rest) = body.strip_prefix(b"#") {
                let rest = trim_start(rest);
                let name: Vec<u8> = rest
                    .iter()
                    .take_while(|b| b.is_ascii_alphabetic())
                    .copied()
                    .collect();
                out.push(Directive {
                    start: line_start,
                    end,
                    line,
                    name: String::from_utf8_lossy(&name).into_owned(),
                });
            }
        }
        in_comment = ends_in_comment(logical, in_comment);
        line += newlines.max(1);
        i = end;
    }
    out
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c' | b'\x0b'))
        .count();
    &s[n..]
}

/// Whether a block comment is open at the end of `line`, given whether one was at its start
/// (string and character literals are skipped; a `//` comment ends the line).
fn ends_in_comment(line: &[u8], mut in_comment: bool) -> bool {
    let mut i = 0;
    while i < line.len() {
        if in_comment {
            if line[i..].starts_with(b"*/") {
                in_comment = false;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        match line[i] {
            b'/' if line[i..].starts_with(b"/*") => {
                in_comment = true;
                i += 2;
            }
            b'/' if line[i..].starts_with(b"//") => return false,
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < line.len() && line[i] != q && line[i] != b'\n' {
                    i += if line[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    in_comment
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "int a;\n#ifdef X\nint b;\n#elif Y\nint c;\n#else\nint d;\n#endif\n/*\n#if Z\n*/\nint e;\n";

    #[test]
    fn groups_span_the_lines_between_their_directives() {
        let g = groups(TEXT.as_bytes());
        let lines: Vec<(usize, usize)> = g.iter().map(|g| g.lines).collect();
        assert_eq!(lines, vec![(3, 3), (5, 5), (7, 7)]);
        let bodies: Vec<&str> = g.iter().map(|g| &TEXT[g.body.0..g.body.1]).collect();
        assert_eq!(bodies, vec!["int b;\n", "int c;\n", "int d;\n"]);
    }

    #[test]
    fn continued_directives_and_comments_are_read_as_the_preprocessor_does() {
        let text = "#if defined(A) && \\\n  defined(B)\nint x;\n#endif // done\n";
        let g = groups(text.as_bytes());
        assert_eq!(g.len(), 1);
        assert_eq!(&text[g[0].body.0..g[0].body.1], "int x;\n");
        assert_eq!(g[0].lines, (3, 3));
    }

    #[test]
    fn the_preprocessor_decides_which_groups_are_compiled_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.c");
        std::fs::write(&path, TEXT).unwrap();
        let with_y = PreprocessOptions {
            defines: vec!["Y".into()],
            ..PreprocessOptions::default()
        };
        let out = compiled_out(&path, &with_y);
        assert_eq!(out.lines, vec![(3, 3), (7, 7)]);
        assert!(out.contains_line(3) && !out.contains_line(5) && out.contains_line(7));
        assert!(out.contains(TEXT.find("int d").unwrap()));
        assert!(!out.contains(TEXT.find("int e").unwrap()));
        let plain = compiled_out(&path, &PreprocessOptions::default());
        assert_eq!(plain.lines, vec![(3, 3), (5, 5)]);
    }
}
