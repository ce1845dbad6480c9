//! What steps 1 to 3 of one function read: its labels, their statements, their co-reached
//! groups, and which of its questions an asker takes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::ir::{BlockId, Function, Loc, StmtKind};
use crate::vc::encode::LabelVc;

/// Location, tag and text of each label of a function (its first statement, for an id written
/// more than once).
pub(super) fn label_stmts(f: &Function) -> BTreeMap<u64, (Loc, String, String)> {
    let mut out = BTreeMap::new();
    for s in f.blocks.iter().flat_map(|b| &b.stmts) {
        if let StmtKind::Label { id, tag, text, .. } = &s.kind {
            out.entry(*id)
                .or_insert_with(|| (s.loc, tag.clone(), text.clone()));
        }
    }
    out
}

/// The models seen so far of one co-reached group, each as the values of its members'
/// predicates.
pub(super) type GroupModels = Vec<Vec<Option<u128>>>;

/// What steps 1 to 3 of one function share: its labels (its own, then those of its
/// called-once callees in their context here), their statements and co-reached groups.
pub(super) struct FunctionLabels<'a> {
    pub(super) function: &'a Function,
    /// The function's own label occurrences, in encoding order.
    pub(super) own: &'a [LabelVc],
    /// Its own, then the labels of inlined called-once callees.
    pub(super) all: Vec<LabelVc>,
    /// The first encoding of each label (its index in `all`), by id (a map: functions may
    /// hold thousands).
    by_id: HashMap<u64, usize>,
    /// Location, tag and text of each label ([`label_stmts`]).
    pub(super) stmts: BTreeMap<u64, (Loc, String, String)>,
    pub(super) groups: Vec<Vec<u64>>,
    /// The group of each grouped label.
    pub(super) group_of: BTreeMap<u64, usize>,
}

impl<'a> FunctionLabels<'a> {
    /// The labels of an encoding of `function`: its own (`own`) and those of the called-once
    /// callees inlined in their calls' context (`inlined`), in co-reached `groups`.
    pub(super) fn new(
        function: &'a Function,
        own: &'a [LabelVc],
        inlined: &[LabelVc],
        groups: Vec<Vec<u64>>,
    ) -> Self {
        let all: Vec<LabelVc> = own.iter().chain(inlined).cloned().collect();
        let mut by_id: HashMap<u64, usize> = HashMap::with_capacity(all.len());
        for (k, l) in all.iter().enumerate() {
            by_id.entry(l.id).or_insert(k);
        }
        let group_of = groups
            .iter()
            .enumerate()
            .flat_map(|(gi, g)| g.iter().map(move |id| (*id, gi)))
            .collect();
        FunctionLabels {
            function,
            own,
            all,
            by_id,
            stmts: label_stmts(function),
            groups,
            group_of,
        }
    }

    /// The first encoding of label `id`.
    pub(super) fn label(&self, id: u64) -> Option<&LabelVc> {
        self.by_id.get(&id).map(|&k| &self.all[k])
    }

    /// A label of a called-once callee, encoded in its context here.
    pub(super) fn is_context(&self, id: u64) -> bool {
        !self.own.iter().any(|l| l.id == id)
    }
}

/// The label statements of `f`, each once per block, in block order.
pub(super) fn unencoded_labels(f: &Function) -> Vec<(u64, BlockId)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        for s in &blk.stmts {
            if let StmtKind::Label { id, .. } = &s.kind {
                if seen.insert((*id, b)) {
                    out.push((*id, BlockId(b as u32)));
                }
            }
        }
    }
    out
}

/// Which of a function's own questions one asker asks.
pub(super) struct Asked<'a> {
    /// Indices into the function's own labels (step 1).
    pub(super) labels: &'a [usize],
    /// Indices into its groups (steps 2 and 3).
    pub(super) groups: &'a [usize],
    pub(super) encode_ms: u128,
    /// `(k, n)`: share k of n, for `-v`.
    pub(super) share: Option<(usize, usize)>,
}
