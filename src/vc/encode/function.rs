//! One function's encoding: the encoder's state made for it, its body encoded, and what it
//! found turned into a [`FunctionVc`], each label's occurrences merged into one.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::*;

pub fn encode(prog: &Program, f: &Function, sums: &Summaries, config: &EncodeConfig) -> FunctionVc {
    encode_until(prog, f, sums, config, None).expect("an encoding without a deadline ends")
}

/// [`encode`], given up when `deadline` passes (checked after the points-to analysis and at
/// every block encoded): `None` then, and no part of the encoding is returned. A partial one
/// would be unsound to ask: the labels of the blocks it did not reach would read as
/// unreachable.
pub fn encode_until(
    prog: &Program,
    f: &Function,
    sums: &Summaries,
    config: &EncodeConfig,
    deadline: Option<std::time::Instant>,
) -> Option<FunctionVc> {
    let mut e = Enc::new(prog, f, sums, config, deadline)?;
    e.run(config);
    if e.out_of_time {
        return None;
    }
    Some(e.finish())
}

impl<'a> Enc<'a> {
    /// The encoder's state for `f`, its points-to facts computed; None past `deadline`.
    fn new(
        prog: &'a Program,
        f: &'a Function,
        sums: &'a Summaries,
        config: &'a EncodeConfig,
        deadline: Option<std::time::Instant>,
    ) -> Option<Enc<'a>> {
        let in_memory = memory_locals(f);
        let named_globals: BTreeSet<GlobalId> = (0..prog.globals.len() as u32)
            .map(GlobalId)
            .filter(|_| !config.reference)
            .filter(|g| {
                config.alias_blind
                    || sums
                        .regions
                        .global_is_named_only(prog, *g, &f.name, config.entry_main)
            })
            .collect();
        let initialised: BTreeSet<GlobalId> = named_globals
            .iter()
            .copied()
            .filter(|g| !config.alias_blind && sums.regions.keeps_initialiser(*g))
            .collect();
        let static_values: BTreeMap<GlobalId, crate::vc::regions::StaticValues> = named_globals
            .iter()
            .filter(|_| !config.alias_blind)
            .filter_map(|g| Some((*g, sums.regions.static_values(*g)?.clone())))
            .collect();
        let own_memory = own_memory_locals(f, &in_memory, (config.alias_blind, config.reference));
        let elsewhere: BTreeSet<String> = config.externals.keys().cloned().collect();
        let pts = if config.alias_blind || config.reference {
            PointsTo::inactive()
        } else {
            PointsTo::of(prog, &sums.pointers, f, &elsewhere, config.escape_blind)
        };
        if deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return None;
        }
        Some(Enc {
            block_delay_ms: config.block_delay_ms,
            prog,
            f,
            in_memory,
            own_memory,
            alias_blind: config.alias_blind,
            plants: config.plants,
            reference: config.reference,
            named_globals,
            own_init: HashMap::new(),
            initialised,
            static_values,
            own_seen: BTreeSet::new(),
            instance_fns: vec![f],
            instance: 0,
            sums,
            functions: prog
                .functions
                .iter()
                .map(|g| (g.name.as_str(), g))
                .collect(),
            inline_stack: vec![f.name.as_str()],
            inline_budget: if config.inline && config.reference {
                REFERENCE_INLINE_BUDGET_STMTS
            } else if config.inline {
                INLINE_BUDGET_STMTS
            } else {
                0
            },
            opaque_calls: BTreeSet::new(),
            exactness: Exactness::default(),
            n_instances: 1,
            record_labels: true,
            context_callees: &config.context_callees,
            context_labels: Vec::new(),
            in_called_once_copy: false,
            context_functions: &config.context_functions,
            call_path: Vec::new(),
            copy: None,
            copies: Vec::new(),
            cur_stmt: 0,
            t: Terms::default(),
            facts: Vec::new(),
            bases: HashMap::new(),
            objects: Vec::new(),
            errno_addr: None,
            errno_apart: !config.reference && !prog.globals.iter().any(|g| g.name == "errno"),
            func_addrs: HashMap::new(),
            fp_results: HashMap::new(),
            fp_defs: HashMap::new(),
            fp_work: 0,
            labels: Vec::new(),
            cur_block: f.entry,
            cur_once: true,
            outer_once: true,
            inputs: Vec::new(),
            entry: EntryState::default(),
            pts,
            exposure: exposure::Exposure::new(elsewhere),
            deadline,
            out_of_time: false,
            loop_candidates_proposed: 0,
            float_candidates_proposed: 0,
            loop_candidates: Vec::new(),
        })
    }

    /// What the run found: the terms and facts, the labels' occurrences merged, the objects
    /// named, the entry state.
    fn finish(self) -> FunctionVc {
        let mut e = self;
        e.layout_constraints();
        // The objects of each region, by name; the others with a base are in the shared memory.
        let mut members: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        let mut shared = Vec::new();
        for &o in e.bases.keys() {
            match e.region_of_object(o) {
                Some(r) => members.entry(r).or_default().push(e.object_name(o)),
                None => shared.push(o),
            }
        }
        let name_all = |objs: Vec<MemObj>| -> Vec<String> {
            let mut v: Vec<String> = objs
                .into_iter()
                .map(|o| match o {
                    MemObj::Region(r) => {
                        let mut names = members.get(&r).cloned().unwrap_or_default();
                        names.sort();
                        names.dedup();
                        format!("[{}]", names.join(" "))
                    }
                    _ => e.object_name(o),
                })
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let own_objects = name_all(e.own_init.keys().chain(&e.own_seen).copied().collect());
        let shared_objects = name_all(shared);
        // A label in a peeled loop, or in a callee inlined there, occurs once per copy.
        let labels = merge_occurrences(&mut e.t, e.labels);
        let context_labels = merge_occurrences(&mut e.t, e.context_labels);
        let copies = merge_copies(&mut e.t, e.copies);
        let mut entry = std::mem::take(&mut e.entry);
        for (o, &m) in &e.own_init {
            if let MemObj::Global(g) = *o {
                let at = e.t.bv(64, 0);
                entry.globals.insert(g, (m, at));
            }
        }
        if let Some(mem0) = entry.mem0 {
            for (o, &b) in &e.bases {
                if let MemObj::Global(g) = *o {
                    entry.globals.entry(g).or_insert((mem0, b));
                }
            }
        }
        FunctionVc {
            terms: e.t,
            facts: e.facts,
            labels,
            context_labels,
            copies,
            own_objects,
            shared_objects,
            inputs: e.inputs,
            entry,
            opaque_calls: e.opaque_calls,
            exactness: e.exactness,
            loop_candidates: e.loop_candidates,
        }
    }
}

/// One occurrence per label (and block), in first-occurrence order: a label encoded several
/// times (in the peeled copies of a loop, or in several inlined copies of a callee at one call
/// site) is reached when any occurrence is, and covered when any occurrence is reached with its
/// predicate true. So its questions are about whole runs: infeasible when no occurrence can be
/// covered; always true when a run that reaches it covers it; and one label implies another
/// when every run covering the first covers the second, which is what coverage means.
fn merge_occurrences(t: &mut Terms, labels: Vec<LabelVc>) -> Vec<LabelVc> {
    group_in_order(labels, |l| (l.id, l.block))
        .into_iter()
        .map(|((id, block), mut occs)| {
            if occs.len() == 1 {
                return occs.pop().expect("one occurrence");
            }
            let reaches: Vec<T> = occs.iter().map(|l| l.reach).collect();
            let covered: Vec<T> = occs.iter().map(|l| t.and2(l.reach, l.pred)).collect();
            LabelVc {
                id,
                block,
                reach: t.or(&reaches),
                pred: t.or(&covered),
            }
        })
        .collect()
}

/// One copy per call path: a call in a peeled loop is inlined once per copy of the loop, and
/// the copies of one call site are one calling context (their labels merged as in
/// [`merge_occurrences`]).
fn merge_copies(t: &mut Terms, copies: Vec<InlinedCopy>) -> Vec<InlinedCopy> {
    group_in_order(copies, |c| c.path.clone())
        .into_iter()
        .map(|(_, same_path)| {
            let mut rest = same_path.into_iter();
            let mut copy = rest.next().expect("a group has a copy");
            copy.labels.extend(rest.flat_map(|c| c.labels));
            copy.labels = merge_occurrences(t, std::mem::take(&mut copy.labels));
            copy
        })
        .collect()
}

/// `items` grouped by `key`, the groups in the order their keys first occur.
fn group_in_order<K: Eq + std::hash::Hash + Clone, V>(
    items: Vec<V>,
    key: impl Fn(&V) -> K,
) -> Vec<(K, Vec<V>)> {
    let mut groups: Vec<(K, Vec<V>)> = Vec::new();
    let mut at: HashMap<K, usize> = HashMap::new();
    for item in items {
        let k = key(&item);
        match at.get(&k) {
            Some(&g) => groups[g].1.push(item),
            None => {
                at.insert(k.clone(), groups.len());
                groups.push((k, vec![item]));
            }
        }
    }
    groups
}
