//! ACSL export: an annotated file's labels as Frama-C annotations, so that a deductive
//! verifier (Frama-C's WP) can be asked the same proof obligations as covprune's steps.
//!
//! Step 1 asks `!(p)` at each label (proved ⇒ infeasible), step 2 asks `p` (proved ⇒ always
//! true when reached). Each obligation is named `covprune_l<ID>`, which WP's goal names and
//! reports repeat, so that answers map back to labels.

use crate::frontend::sites::{label_calls, LabelCall};
use crate::frontend::source::line_markers;

#[derive(Clone, Debug)]
pub struct AcslOptions {
    /// 1: `!(p)`; 2: `p`.
    pub step: u8,
    /// `check` (default): proved on its own and never assumed afterwards, like covprune's
    /// obligations. `assert` is also a hypothesis for every later goal in WP, so one
    /// unproved assertion can make the next ones "proved".
    pub assert: bool,
    /// Keep `# LINE "FILE"` markers; by default they are blanked so that the verifier's line
    /// numbers are the exported file's own.
    pub keep_line_markers: bool,
}

/// One exported obligation.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Obligation {
    pub id: u64,
    /// 1-based line of the exported file.
    pub line: usize,
    pub tag: String,
    pub name: String,
}

#[derive(Debug, Default)]
pub struct Exported {
    pub text: String,
    pub obligations: Vec<Obligation>,
    /// Labels left as they were, with why.
    pub skipped: Vec<(String, String)>,
}

/// The ACSL name of label `id`'s obligation.
pub fn obligation_name(id: u64) -> String {
    format!("covprune_l{id}")
}

/// Rewrites every `pc_label(p, id, ...);` of `text` as `/*@ check covprune_lID: !(p); */ ;`
/// (or `p` for step 2); the rest of the text keeps its bytes and every line its number.
pub fn export(text: &str, opts: &AcslOptions) -> Exported {
    let calls = label_calls(text.as_bytes());
    let keyword = if opts.assert { "assert" } else { "check" };
    let mut out = Exported::default();
    let mut last = 0;
    let mut line = 1;
    for LabelCall {
        range: (start, end),
        predicate,
        id,
        tag,
    } in calls
    {
        let Some(n) = parse_id(&id) else {
            out.skipped
                .push((id, "the id is not a decimal constant".into()));
            continue;
        };
        if predicate.contains("*/") || predicate.contains("//") {
            out.skipped
                .push((id, "the predicate cannot sit in a comment".into()));
            continue;
        }
        out.text.push_str(&text[last..start]);
        line += text[last..start].matches('\n').count();
        let name = obligation_name(n);
        let goal = if opts.step == 2 {
            format!("({predicate})")
        } else {
            format!("!({predicate})")
        };
        // The empty statement after the annotation gives it a statement to precede, even
        // right before a closing brace.
        out.text
            .push_str(&format!("/*@ {keyword} {name}: {goal}; */ ;"));
        out.obligations.push(Obligation {
            id: n,
            line,
            tag,
            name,
        });
        // Keep the line count of the statement (a predicate written over several lines).
        let newlines = text[start..end].matches('\n').count() - predicate.matches('\n').count();
        out.text.push_str(&"\n".repeat(newlines));
        line += text[start..end].matches('\n').count();
        last = end;
    }
    out.text.push_str(&text[last..]);
    if !opts.keep_line_markers {
        out.text = blank_line_markers(&out.text);
    }
    out
}

fn parse_id(id: &str) -> Option<u64> {
    let t = id.trim().trim_end_matches(['u', 'U', 'l', 'L']);
    t.parse().ok()
}

/// Blanks the preprocessor's line markers (`# 12 "f.c" 1`, `#line 12`), keeping the lines.
fn blank_line_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for m in line_markers(text.as_bytes()) {
        out.push_str(&text[from..m.start]);
        from = m.end;
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANNOTATED: &str = "#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\n# 5 \"t.c\"\nint f(int x, int y) {\n  pc_label(x > 0 &&\n           y > 0, 3, \"CC\");\n  if (x) {\n    pc_label(x < 0, 4, \"MCC\");\n  }\n  return x;\n}\n";

    #[test]
    fn labels_become_named_checks_on_the_same_lines() {
        let opts = AcslOptions {
            step: 1,
            assert: false,
            keep_line_markers: false,
        };
        let e = export(ANNOTATED, &opts);
        assert_eq!(e.text.lines().count(), ANNOTATED.lines().count());
        let lines: Vec<&str> = e.text.lines().collect();
        assert_eq!(lines[3], "", "the line marker is blanked");
        assert_eq!(
            lines[5],
            "  /*@ check covprune_l3: !(x > 0 &&\n           y > 0); */ ;"
                .lines()
                .next()
                .unwrap()
        );
        assert_eq!(lines[8], "    /*@ check covprune_l4: !(x < 0); */ ;");
        assert_eq!(lines[10], "  return x;");
        assert_eq!(
            e.obligations
                .iter()
                .map(|o| (o.id, o.line, o.tag.as_str()))
                .collect::<Vec<_>>(),
            vec![(3, 6, "CC"), (4, 9, "MCC")]
        );
        let e2 = export(
            ANNOTATED,
            &AcslOptions {
                step: 2,
                assert: true,
                keep_line_markers: true,
            },
        );
        assert!(e2.text.contains("/*@ assert covprune_l4: (x < 0); */ ;"));
        assert!(e2.text.contains("# 5 \"t.c\""));
    }
}
