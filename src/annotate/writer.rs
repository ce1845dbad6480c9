//! Label ids and label statements: `pc_label(p, id, "TAG");`, and `pc_label_bindings` for the
//! labels of a hyperlabel.

use covprune_encoders::LabelSpec;

use super::{Annotated, LabelRecord};

/// Assigns ids and writes label statements.
pub(super) struct Writer<'a> {
    pub(super) next_id: u64,
    pub(super) next_hyper: usize,
    /// Decisions labelled so far, and the function whose statement is being labelled.
    pub(super) next_decision: usize,
    pub(super) function: Option<usize>,
    pub(super) out: &'a mut Annotated,
    /// FCC: (caller, callee) → call-site label ids, in order of first appearance.
    pub(super) fcc: Vec<((String, String), Vec<u64>)>,
}

impl Writer<'_> {
    pub(super) fn new_id(&mut self, tag: &str, line: usize) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.out.labels.push(LabelRecord {
            id,
            tag: tag.to_string(),
            line,
            function: self.function,
            decision: None,
            outcome: None,
            replacement: None,
        });
        id
    }

    /// Writes labels; a label with a binding names the hyperlabel `hyper_base + 1 + index`.
    pub(super) fn write(
        &mut self,
        specs: &[LabelSpec],
        line: usize,
        hyper_base: usize,
    ) -> (String, Vec<u64>) {
        let mut s = String::new();
        let mut ids = Vec::new();
        for l in specs {
            let id = self.new_id(&l.tag, line);
            let record = self
                .out
                .labels
                .last_mut()
                .expect("new_id records the label");
            record.outcome = l.outcome;
            record.replacement = l.replacement;
            ids.push(id);
            s.push_str(&label_stmt(l, id, hyper_base));
        }
        (s, ids)
    }
}

pub(super) fn label_stmt(l: &LabelSpec, id: u64, hyper_base: usize) -> String {
    match &l.binding {
        None => format!("pc_label({}, {id}, \"{}\"); ", l.predicate, l.tag),
        Some(b) => {
            let mut s = format!(
                "pc_label_bindings({}, {id}, \"{}\", {}, {}",
                l.predicate,
                l.tag,
                hyper_base + 1 + b.hyper,
                b.vars.len()
            );
            for (name, e) in &b.vars {
                s.push_str(&format!(", \"{name}\", {e}"));
            }
            s.push_str("); ");
            s
        }
    }
}
