//! The markdown summary people paste into a pull request (`--markdown FILE`): per criterion
//! raw and cleaned coverage, the objectives no test covers with links to their lines, the
//! soundness alarms, and what changed since a previous summary (`--markdown-since OLD`). The
//! summary carries its own figures as JSON in a trailing comment, which is what a later run
//! compares with.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The comment line that opens the figures a summary carries.
const MARK: &str = "<!-- covprune-summary 1";

/// One summary: its rows, the places listed under it, its alarms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// `measure clamp_labels.c`, `project measure out`.
    pub title: String,
    /// What the rows count.
    #[serde(default)]
    pub kind: Kind,
    pub rows: Vec<Row>,
    /// The objectives left that no test covers.
    pub uncovered: Vec<Place>,
    /// The items a coverage report no longer counts, each with its proof (`exclude`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Place>,
    pub alarms: Vec<String>,
    /// Lines said under the table (a behaviour difference, files not measured).
    pub notes: Vec<String>,
}

/// What a summary's rows count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// covprune's labels, per criterion (`measure`, `project measure`, `audit`).
    #[default]
    Labels,
    /// The items of another tool's coverage report (`exclude`): branches, MC/DC conditions,
    /// mutants.
    Report,
}

/// A criterion's row (or `all`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub criterion: String,
    pub labels: usize,
    pub pruned: usize,
    /// The objectives left (labels - pruned + pending).
    pub kept: usize,
    pub covered: usize,
    pub kept_covered: usize,
    pub raw_percent: Option<f64>,
    pub cleaned_percent: Option<f64>,
}

/// An objective no test covers, where the original source has it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Place {
    /// The original file (as the labels file names it) and line, when known.
    pub file: String,
    pub line: Option<usize>,
    pub criterion: String,
    /// The label (0 for an item of another tool's report): a line's objectives are listed in
    /// label order.
    pub label: u64,
    /// The condition as the source writes it.
    pub text: String,
    /// Why it is listed apart (the proof of an excluded item).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

impl Place {
    /// What identifies an objective from one run to the next (ids change when the file is
    /// annotated again).
    fn key(&self) -> (&str, Option<usize>, &str, &str) {
        (&self.file, self.line, &self.criterion, &self.text)
    }

    /// A place from `FILE:LINE` (or anything else, kept as the file).
    pub fn at(origin: &str, criterion: &str, text: &str, label: u64) -> Place {
        let (file, line) = match origin.rsplit_once(':') {
            Some((f, l)) if l.parse::<usize>().is_ok() => (f.to_string(), l.parse().ok()),
            _ => (origin.to_string(), None),
        };
        Place {
            file,
            line,
            criterion: criterion.to_string(),
            text: text.to_string(),
            label,
            why: String::new(),
        }
    }

    /// The line of a list: its link, criterion, text and label.
    fn item(&self) -> String {
        let mut out = format!("{} {}", link(self), self.criterion);
        if !self.text.is_empty() {
            let _ = write!(out, " {}", code(&self.text));
        }
        if self.label != 0 {
            let _ = write!(out, " ({})", crate::console::label_id(self.label));
        }
        if !self.why.is_empty() {
            let _ = write!(out, ": {}", self.why);
        }
        out
    }
}

/// `+2.5 pts`, `-1.0 pts`, `=`, or `new`.
fn change(now: Option<f64>, then: Option<f64>) -> String {
    match (now, then) {
        (Some(a), Some(b)) if (a - b).abs() < 0.05 => "=".to_string(),
        (Some(a), Some(b)) => format!("{:+.1} pts", a - b),
        (_, None) => "new".to_string(),
        (None, Some(_)) => "-".to_string(),
    }
}

/// Markdown's inline code of `text` (its backquotes cannot end the span).
fn code(text: &str) -> String {
    let text = text.replace('\n', " ");
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// `[clamp.c:5](clamp.c#L5)`: the link a code host opens at the line.
fn link(p: &Place) -> String {
    match p.line {
        Some(l) => format!("[{}:{l}]({}#L{l})", p.file, p.file.replace(' ', "%20")),
        None => p.file.clone(),
    }
}

impl Summary {
    /// Whether a test run measured the rows (an `audit` before any `measure` has none).
    fn measured(&self) -> bool {
        self.rows.iter().any(|r| r.raw_percent.is_some())
    }

    /// The summary as markdown, compared with `previous` when given.
    pub fn to_markdown(&self, previous: Option<&Summary>) -> String {
        let mut out = format!("### covprune {}\n\n", self.title);
        let since = previous.is_some();
        out.push_str(match self.kind {
            Kind::Labels => {
                "| criterion | labels | pruned | objectives | objectives covered | raw | cleaned |"
            }
            Kind::Report => "| counted | items | excluded | kept | kept covered | raw | cleaned |",
        });
        out.push_str(if since {
            " cleaned since last |\n"
        } else {
            "\n"
        });
        out.push_str("|---|--:|--:|--:|--:|--:|--:|");
        out.push_str(if since { "--:|\n" } else { "\n" });
        for r in &self.rows {
            let _ = write!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                if r.criterion == "all" {
                    "**all**".to_string()
                } else {
                    r.criterion.clone()
                },
                r.labels,
                r.pruned,
                r.kept,
                r.kept_covered,
                crate::console::percent(r.raw_percent),
                crate::console::percent(r.cleaned_percent),
            );
            if let Some(p) = previous {
                let then = p.rows.iter().find(|o| o.criterion == r.criterion);
                let _ = write!(
                    out,
                    " {} |",
                    change(r.cleaned_percent, then.and_then(|t| t.cleaned_percent))
                );
            }
            out.push('\n');
        }
        out.push_str(match self.kind {
            Kind::Labels => "\nobjectives = labels - pruned (infeasible, duplicate or subsumed, proved) + pending; cleaned = covered objectives / objectives\n\n",
            Kind::Report => "\nkept = items - excluded (proved infeasible, or equivalent mutants); cleaned = kept covered / kept\n\n",
        });
        if self.alarms.is_empty() {
            out.push_str("Soundness alarms: none.\n");
        } else {
            let _ = writeln!(
                out,
                "**Soundness alarms: {}** (a test covers what a proof says it cannot):\n",
                self.alarms.len()
            );
            for a in &self.alarms {
                let _ = writeln!(out, "- {a}");
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "\n{n}");
        }
        if previous.is_some_and(|p| !p.measured()) {
            out.push_str("\nThe last summary holds no coverage to compare with.\n");
        }
        if let Some(p) = previous.filter(|p| p.measured()) {
            let now: BTreeSet<_> = self.uncovered.iter().map(Place::key).collect();
            let then: BTreeSet<_> = p.uncovered.iter().map(Place::key).collect();
            let newly_covered = p.uncovered.iter().filter(|u| !now.contains(&u.key()));
            let newly_uncovered: Vec<&Place> = self
                .uncovered
                .iter()
                .filter(|u| !then.contains(&u.key()))
                .collect();
            let covered: Vec<&Place> = newly_covered.collect();
            let _ = writeln!(
                out,
                "\nSince the last summary: {} covered now, {} uncovered that were not.",
                crate::console::count(covered.len() as u64, "objective"),
                newly_uncovered.len()
            );
            for (what, list) in [
                ("covered now", &covered),
                ("newly uncovered", &newly_uncovered),
            ] {
                for u in list.iter() {
                    let _ = writeln!(out, "- {what}: {}", u.item());
                }
            }
        }
        let noun = match self.kind {
            Kind::Labels => "objective",
            Kind::Report => "item",
        };
        for (list, what) in [
            (&self.uncovered, "no test covers"),
            (&self.excluded, "excluded, each with its proof"),
        ] {
            if list.is_empty() {
                continue;
            }
            let _ = write!(
                out,
                "\n<details><summary>{} {what}</summary>\n\n",
                crate::console::count(list.len() as u64, noun)
            );
            for u in list {
                let _ = writeln!(out, "- {}", u.item());
            }
            out.push_str("\n</details>\n");
        }
        let figures = serde_json::to_string(self).unwrap_or_default();
        // `--` may not appear inside an HTML comment.
        let _ = write!(
            out,
            "\n{MARK}\n{}\n-->\n",
            figures.replace("--", "-\\u002d")
        );
        out
    }

    /// The figures a summary written by [`Summary::to_markdown`] carries.
    pub fn read(path: &Path) -> Result<Summary, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let start = text.rfind(MARK).ok_or_else(|| {
            format!(
                "{} is not a summary covprune wrote (--markdown): it has no figures",
                path.display()
            )
        })?;
        let body = &text[start + MARK.len()..];
        let end = body.find("-->").unwrap_or(body.len());
        serde_json::from_str(body[..end].trim())
            .map_err(|e| format!("{}: its figures do not read: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(covered: usize, uncovered: &[(&str, &str)]) -> Summary {
        Summary {
            title: "measure t_labels.c".into(),
            rows: vec![Row {
                criterion: "CC".into(),
                labels: 10,
                pruned: 2,
                kept: 8,
                covered,
                kept_covered: covered,
                raw_percent: Some(covered as f64 * 10.0),
                cleaned_percent: Some(covered as f64 * 12.5),
            }],
            uncovered: uncovered
                .iter()
                .enumerate()
                .map(|(i, (at, text))| Place::at(at, "CC", text, i as u64 + 1))
                .collect(),
            alarms: vec![],
            notes: vec![],
            ..Summary::default()
        }
    }

    #[test]
    fn a_summary_reads_back_and_says_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let old = summary(4, &[("t.c:5", "x > 3"), ("t.c:9", "a && --b")]);
        let path = dir.path().join("old.md");
        std::fs::write(&path, old.to_markdown(None)).unwrap();
        assert_eq!(Summary::read(&path).unwrap(), old);
        let new = summary(5, &[("t.c:9", "a && --b"), ("t.c:12", "`y`")]);
        let text = new.to_markdown(Some(&old));
        assert!(
            text.contains("| CC | 10 | 2 | 8 | 5 | 50.0% | 62.5% | +12.5 pts |"),
            "{text}"
        );
        assert!(
            text.contains("- covered now: [t.c:5](t.c#L5) CC `x > 3`"),
            "{text}"
        );
        assert!(
            text.contains("- newly uncovered: [t.c:12](t.c#L12) CC `` `y` ``"),
            "{text}"
        );
        assert!(!text.contains("covered now: [t.c:9]"), "{text}");
        let other = dir.path().join("other.md");
        std::fs::write(&other, "# notes\n").unwrap();
        assert!(Summary::read(&other).unwrap_err().contains("not a summary"));
    }
}
