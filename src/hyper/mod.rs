//! Hyperlabels (HTOL): objectives over several labels, several runs and the values labels bind.
//! A `.hyperlabels` file (LTest's, or covprune's: the same grammar) lists entries
//! `N) <hyp|;guard;>,`, maybe followed by a status (`- COVERED - [ tests ]`) before the comma.
//! A `hyp` is built from atomic labels `lK`, sequences `sK`, conjunction `.` (covered by
//! possibly different runs), disjunction `+`, parentheses and nested `<hyp|;guard;>`. Each
//! is normalised to disjunctive normal form: a hyperlabel is covered when one of its disjuncts
//! is, and a disjunct (atomic labels and sequences under guards) is covered when each of its
//! items is covered, by some run each, with bound values that satisfy every guard.

pub mod claims;
pub mod coverage;
pub mod guard;
pub mod report;
pub mod sequences;
pub mod values;

use std::path::Path;

pub use guard::{Env, Guard};

/// A hyperlabel tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hyper {
    Label(u64),
    Sequence(u64),
    And(Box<Hyper>, Box<Hyper>),
    Or(Box<Hyper>, Box<Hyper>),
    Guarded(Box<Hyper>, Guard),
}

/// What a disjunct needs covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Item {
    Label(u64),
    Sequence(u64),
}

/// One disjunct of a hyperlabel's normal form: items, each covered by some run, whose bound
/// values satisfy every guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disjunct {
    pub items: Vec<Item>,
    pub guards: Vec<Guard>,
}

/// One entry of a `.hyperlabels` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hyperlabel {
    pub id: u64,
    /// The hyperlabel as written, without its status (`<l1.l2|;pa!=pb;>`).
    pub text: String,
    pub tree: Hyper,
    /// A status written after it (`COVERED`, `UNCOVERABLE`, ...), and its list.
    pub status: Option<(String, String)>,
}

impl Hyper {
    /// Disjunctive normal form: `(a + b) . c` is `a.c + b.c`; a guard goes to every disjunct
    /// of what it guards.
    pub fn dnf(&self) -> Vec<Disjunct> {
        match self {
            Hyper::Label(id) => vec![Disjunct {
                items: vec![Item::Label(*id)],
                guards: Vec::new(),
            }],
            Hyper::Sequence(id) => vec![Disjunct {
                items: vec![Item::Sequence(*id)],
                guards: Vec::new(),
            }],
            Hyper::Or(a, b) => {
                let mut out = a.dnf();
                out.extend(b.dnf());
                out
            }
            Hyper::And(a, b) => {
                let (left, right) = (a.dnf(), b.dnf());
                let mut out = Vec::new();
                for l in &left {
                    for r in &right {
                        let mut items = l.items.clone();
                        items.extend(r.items.iter().copied());
                        let mut guards = l.guards.clone();
                        guards.extend(r.guards.iter().cloned());
                        out.push(Disjunct { items, guards });
                    }
                }
                out
            }
            Hyper::Guarded(h, g) => h
                .dnf()
                .into_iter()
                .map(|mut d| {
                    if *g != Guard::True {
                        d.guards.push(g.clone());
                    }
                    d
                })
                .collect(),
        }
    }
}

impl Hyperlabel {
    /// Its disjunctive normal form.
    pub fn dnf(&self) -> Vec<Disjunct> {
        self.tree.dnf()
    }

    /// The entry's line, with `status` (a word and the tests) when given.
    pub fn line(&self, status: Option<(&str, &[String])>) -> String {
        match status {
            Some((word, [])) => format!("{}) {} - {word} - [ ],", self.id, self.text),
            Some((word, tests)) => format!(
                "{}) {} - {word} - [ {} ],",
                self.id,
                self.text,
                tests.join(" ")
            ),
            None => format!("{}) {},", self.id, self.text),
        }
    }
}

/// Step 1 of every label of `questions`, a copy of the program whose labels are the
/// hyperlabel questions, under `config` (without its trace or dumped questions, which are the
/// run's own labels').
fn ask(
    questions: &crate::ir::Program,
    config: &crate::prune::PruneConfig,
) -> Vec<crate::prune::LabelVerdict> {
    let mut c = config.clone();
    c.trace = false;
    c.dump_smt = None;
    crate::prune::step1(questions, &c)
}

/// Where the hyperlabels of an annotated file are: `STEM_labels.hyperlabels` beside it.
pub fn path_of(annotated: &Path) -> std::path::PathBuf {
    annotated.with_extension("hyperlabels")
}

/// Reads a `.hyperlabels` file.
pub fn read(path: &Path) -> Result<Vec<Hyperlabel>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_file(&text).map_err(|(line, e)| format!("{}:{line}: {e}", path.display()))
}

/// The entries of a `.hyperlabels` text; an error names its line.
pub fn parse_file(text: &str) -> Result<Vec<Hyperlabel>, (usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(parse_entry(line).map_err(|e| (i + 1, e))?);
    }
    Ok(out)
}

fn parse_entry(line: &str) -> Result<Hyperlabel, String> {
    let (id, rest) = line.split_once(')').ok_or("an entry starts with `N)`")?;
    let id: u64 = id
        .trim()
        .parse()
        .map_err(|_| format!("`{}` is not an entry number", id.trim()))?;
    let rest = rest.trim().strip_suffix(',').unwrap_or(rest.trim()).trim();
    let mut p = HypParser {
        text: rest.as_bytes(),
        at: 0,
    };
    let tree = p.disjunction()?;
    let end = p.at;
    let hyp_text = rest[..end].trim().to_string();
    let tail = rest[end..].trim();
    let status = if tail.is_empty() {
        None
    } else {
        // `- STATUS - [ ... ]`
        let body = tail
            .strip_prefix('-')
            .ok_or_else(|| format!("unexpected `{tail}` after the hyperlabel"))?;
        let (word, list) = body
            .split_once('-')
            .ok_or_else(|| format!("a status without its list: `{tail}`"))?;
        Some((word.trim().to_string(), list.trim().to_string()))
    };
    Ok(Hyperlabel {
        id,
        text: hyp_text,
        tree,
        status,
    })
}

struct HypParser<'a> {
    text: &'a [u8],
    at: usize,
}

impl HypParser<'_> {
    fn skip(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip();
        self.text.get(self.at).copied()
    }

    fn disjunction(&mut self) -> Result<Hyper, String> {
        let mut h = self.conjunction()?;
        while self.peek() == Some(b'+') {
            self.at += 1;
            h = Hyper::Or(Box::new(h), Box::new(self.conjunction()?));
        }
        Ok(h)
    }

    fn conjunction(&mut self) -> Result<Hyper, String> {
        let mut h = self.atom()?;
        while self.peek() == Some(b'.') {
            self.at += 1;
            h = Hyper::And(Box::new(h), Box::new(self.atom()?));
        }
        Ok(h)
    }

    fn atom(&mut self) -> Result<Hyper, String> {
        match self.peek() {
            Some(b'(') => {
                self.at += 1;
                let h = self.disjunction()?;
                if self.peek() != Some(b')') {
                    return Err("a `(` without its `)`".into());
                }
                self.at += 1;
                Ok(h)
            }
            Some(b'<') => {
                self.at += 1;
                let h = self.disjunction()?;
                self.skip();
                let rest = &self.text[self.at..];
                let rest = std::str::from_utf8(rest).map_err(|e| e.to_string())?;
                let body = rest
                    .strip_prefix("|;")
                    .ok_or("a `<` hyperlabel without its `|;guard;>`")?;
                let end = body.find(";>").ok_or("a guard without its `;>`")?;
                let guard = Guard::parse(&body[..end])?;
                self.at += 2 + end + 2;
                Ok(Hyper::Guarded(Box::new(h), guard))
            }
            Some(c @ (b'l' | b's')) => {
                self.at += 1;
                let start = self.at;
                while self.at < self.text.len() && self.text[self.at].is_ascii_digit() {
                    self.at += 1;
                }
                let n: u64 = std::str::from_utf8(&self.text[start..self.at])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or("`l` or `s` without a number")?;
                Ok(if c == b'l' {
                    Hyper::Label(n)
                } else {
                    Hyper::Sequence(n)
                })
            }
            Some(c) => Err(format!("unexpected `{}` in a hyperlabel", c as char)),
            None => Err("a hyperlabel ends too early".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_with_and_without_status() {
        let h = parse_file(
            "1) <l1.l2|;pa!=pb;>,\n2) <s24.s25|;;> - UNCOVERABLE - [ ],\n3) <l3+l7|; ;>,\n",
        )
        .unwrap();
        assert_eq!(h.len(), 3);
        assert_eq!(h[0].text, "<l1.l2|;pa!=pb;>");
        assert_eq!(
            h[0].tree,
            Hyper::Guarded(
                Box::new(Hyper::And(
                    Box::new(Hyper::Label(1)),
                    Box::new(Hyper::Label(2))
                )),
                Guard::parse("pa != pb").unwrap()
            )
        );
        assert_eq!(
            h[1].status,
            Some(("UNCOVERABLE".to_string(), "[ ]".to_string()))
        );
        assert_eq!(
            h[1].dnf()[0].items,
            [Item::Sequence(24), Item::Sequence(25)]
        );
        assert_eq!(h[2].dnf().len(), 2);
        assert_eq!(
            h[0].line(Some(("COVERED", &["t1".to_string(), "t2".to_string()]))),
            "1) <l1.l2|;pa!=pb;> - COVERED - [ t1 t2 ],"
        );
        assert!(parse_file("1) <l1.|;;>,").is_err());
    }

    #[test]
    fn normal_form_distributes_conjunction_over_disjunction() {
        let h = parse_entry("4) <(l1+l2).<l3|;x==1;>|;y!=0;>,").unwrap();
        let d = h.tree.dnf();
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].items, [Item::Label(1), Item::Label(3)]);
        assert_eq!(d[1].items, [Item::Label(2), Item::Label(3)]);
        assert_eq!(d[0].guards.len(), 2);
    }
}
