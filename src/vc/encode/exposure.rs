//! Locals not exposed yet: an address-taken local of the root that lives in the shared memory
//! (some pointer to it reaches code outside the program somewhere in the function) keeps its
//! bytes across a call of outside code made before any pointer to it can have got there.
//!
//! Soundness argument (executions without undefined behaviour, DESIGN.md): code outside the
//! program writes an object only through a pointer to it: one it is given as an argument, or
//! reads from memory it reaches (globals, what earlier arguments reached), or gets from the
//! program's functions it calls back. A pointer to a local of the root's activation gets there
//! only through a statement of that activation, or of a function it called, that puts it
//! there. Those statements are all in [`PointsTo::before`]: every statement of the root that
//! can run before the call ends (each one that can reach it in the root's graph, the call
//! itself included) and the whole code of the functions analysed with the root. A local still
//! in a region of its own there has no pointer to it where outside code can find one when the
//! call runs, so the call leaves its bytes as they were. A root that an analysed function may
//! call is not refined (`before` gives up): another activation's locals share its nodes.
//!
//! The call itself may be of the program's own code that the encoding does not inline: that
//! code writes what its arguments reach. A local whose region, in the analysis of what runs
//! before the call, is among those the call writes ([`PointsTo::call_writes`] of that
//! analysis: the callee's code and all it calls, the arguments joined into its parameters) is
//! not kept.

use super::*;

/// At most this many calls of one encoding get an analysis of their own; later ones make the
/// whole shared memory fresh.
const MAX_ANALYSES: usize = 64;
/// Locals up to this size keep their bytes (one store per byte).
const MAX_KEPT_BYTES: u64 = 64;

/// What is known, per call of the root, of the locals no outside code can reach yet.
#[derive(Default)]
pub(super) struct Exposure {
    /// The functions defined in other files of the project ([`PointsTo::of`]'s `elsewhere`).
    elsewhere: BTreeSet<String>,
    /// The root's locals that could keep their bytes: in the shared memory, not static or
    /// volatile, of a known size up to [`MAX_KEPT_BYTES`]. None until first needed.
    candidates: Option<Vec<(LocalId, u64)>>,
    /// Per call of the root (block, statement): the candidates still unexposed there.
    at: HashMap<(u32, u32), Vec<(LocalId, u64)>>,
}

impl Exposure {
    pub(super) fn new(elsewhere: BTreeSet<String>) -> Exposure {
        Exposure {
            elsewhere,
            ..Default::default()
        }
    }
}

impl Enc<'_> {
    /// The shared memory after a call of code outside the program: fresh, but for the bytes
    /// of the root's locals that no pointer outside the program can reach yet.
    pub(super) fn memory_after_outside_call(
        &mut self,
        before: T,
        callee: &Callee,
        args: &[Expr],
    ) -> T {
        let fresh = self.t.var(Sort::Mem, "mem_call");
        if !self.instance_is_root(self.instance) || self.alias_blind || self.reference {
            return fresh;
        }
        let kept = self.unexposed_here(callee, args);
        let mut m = fresh;
        for (l, size) in kept {
            let base = self.base(MemObj::Local(0, l));
            for k in 0..size {
                let at = self.byte_at(base, k);
                let byte = self.t.select(before, at);
                m = self.t.store(m, at, byte);
            }
        }
        m
    }

    /// The candidates ([`Exposure::candidates`]) still unexposed at the root's current
    /// statement, the call `callee(args)`, and that call does not write.
    fn unexposed_here(&mut self, callee: &Callee, args: &[Expr]) -> Vec<(LocalId, u64)> {
        let candidates = match &self.exposure.candidates {
            Some(c) => c.clone(),
            None => {
                let c = self.exposure_candidates();
                self.exposure.candidates = Some(c.clone());
                c
            }
        };
        if candidates.is_empty() {
            return Vec::new();
        }
        if self.plants.exposure_blind {
            return candidates;
        }
        let key = (self.cur_block.0, self.cur_stmt);
        if let Some(v) = self.exposure.at.get(&key) {
            return v.clone();
        }
        if self.exposure.at.len() >= MAX_ANALYSES {
            return Vec::new();
        }
        let f = self.instance_fns[0];
        let (block, stmt) = (self.cur_block.0 as usize, self.cur_stmt as usize);
        let reaching = blocks_reaching(f, block);
        let keep = |b: usize, i: usize| reaching[b] || (b == block && i <= stmt);
        let before = PointsTo::before(
            self.prog,
            &self.sums.pointers,
            f,
            &self.exposure.elsewhere,
            &keep,
        );
        let unexposed: Vec<(LocalId, u64)> = match before {
            Some(mut p) => {
                let written = if self.plants.call_writes_blind {
                    BTreeSet::new()
                } else {
                    p.call_writes(&f.name, callee, args).regions
                };
                candidates
                    .into_iter()
                    .filter(|(l, _)| {
                        p.region_of_local(&f.name, *l)
                            .is_some_and(|r| !written.contains(&r))
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        self.exposure.at.insert(key, unexposed.clone());
        unexposed
    }

    fn exposure_candidates(&mut self) -> Vec<(LocalId, u64)> {
        let f = self.instance_fns[0];
        (0..f.locals.len() as u32)
            .map(LocalId)
            .filter(|&l| {
                let local = f.local(l);
                self.in_memory[l.0 as usize]
                    && !self.own_memory[l.0 as usize]
                    && !local.is_static
                    && !local.volatile
                    && self.pts.region_of_local(&f.name, l).is_none()
            })
            .filter_map(|l| {
                let size = self.prog.layout().size_of(&f.local(l).ty)?;
                (size > 0 && size <= MAX_KEPT_BYTES).then_some((l, size))
            })
            .collect()
    }
}

/// Which blocks of `f` can reach block `to` along one edge or more.
fn blocks_reaching(f: &Function, to: usize) -> Vec<bool> {
    let n = f.blocks.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for b in 0..n {
        for s in f.successors(BlockId(b as u32)) {
            preds[s.0 as usize].push(b);
        }
    }
    let mut reaching = vec![false; n];
    let mut work: Vec<usize> = preds[to].clone();
    while let Some(b) = work.pop() {
        if !std::mem::replace(&mut reaching[b], true) {
            work.extend(preds[b].iter().copied());
        }
    }
    reaching
}
