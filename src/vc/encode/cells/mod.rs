//! Loop facts about array cells: a bound on every cell a loop nest has visited so far, proved
//! inductive like the bounds on scalars ([`super::invariants`]) and carried to the reads of the
//! same cells after the nest.
//!
//! A *site* is a place read or written in a loop nest that writes it or leaves on a test of it
//! (`p[i * c + j]`, `xs[i]`), whose address is computed from SSA locals only: one counter per
//! loop of the nest (the local of the address that loop writes, started at one constant), the
//! others written nowhere in the nest. At the head of the nest's `k`-th loop the cells visited
//! so far are those of the counters' values before the current ones in lexicographic order,
//! each inner counter over `[start, bound)` (its loop's test, `j < c`); the candidate says each
//! of them satisfies a bound (not negative; for floats also never strictly between 0 and 1),
//! under the head's reach condition:
//!
//! `reach(h) ∧ (m before the counters at h) ⇒ bound(cell(m) in h's memory)` for every `m`.
//!
//! The obligation, on each way into the head (entering it, or a cut back edge), is that
//! implication for the way's state, at a fresh index tuple `m` (a Skolem constant: valid for it
//! is valid for all) taken apart from the tuples of the nest's own accesses, and at each of
//! those: a cell an iteration visits is then the very term its access read, and the solver
//! needs no arithmetic on indices. What the fixpoint assumes of the candidate is the implication
//! at the head for the same tuples (instances of a universal statement, each true when it is).
//! Once proved, its instance at each access after the nest (the same array indexed the same
//! way, perhaps by counters of its own) is a fact about the bytes that access reads. So a nest
//! that stores sums not negative in `xs[i]`, or leaves when a count `p[i * c + j]` is negative,
//! proves every cell it went over not negative, and the reads of `xs[i]` or `p[i * c + j]` in
//! later loops, with `i` below the counter the nest ended with, get the bound.
//!
//! Soundness: the argument of [`super::invariants`], with one difference for heads a run does
//! not reach: a cell's memory at a head need not be fresh there (a nest that only reads it), so
//! no choice of the head's values need make the bound hold; the reach condition does, being
//! false at a head off the run's path. An instance at an access is stated on the memory the
//! access reads only where that memory is the head's, or a join of memories one of which is,
//! under the joins' conditions that choose it, and only when the address's other locals hold
//! their values at the head. Guesses (the sites, the counters, their starts, the inner bounds)
//! only decide what is proposed: a wrong one gives an obligation that fails.

mod sites;

use super::invariants::Bound;
use super::loops::HavocSet;
use super::*;
use crate::cfg::loops::LoopForest;
use crate::vc::term::Node;

/// At most this many sites per function: each gives a candidate per bound and loop head, and
/// their questions read memory byte by byte.
const MAX_SITES: usize = 4;

/// At most this many candidates per frame, besides the scalars' ([`super::invariants`]).
const MAX_CANDIDATES: usize = 16;

/// At most this many reads of one site's place get the site's bound (each an instance).
const MAX_READS: usize = 16;

/// A place accessed in a loop nest, the nest's counters and what the cells are bounded by.
pub(super) struct Site {
    place: LValue,
    ty: CType,
    /// The nest's loops, outermost first.
    loops: Vec<NestLoop>,
    bounds: Vec<Bound>,
    signed: bool,
    /// The blocks of the nest's outermost loop.
    body: BTreeSet<BlockId>,
    /// The address's locals that are not counters.
    others: Vec<LocalId>,
}

/// A loop of a site's nest.
struct NestLoop {
    head: BlockId,
    /// The local the loop steps (written in it, and in no loop inside it).
    counter: LocalId,
    /// The one constant the function assigns the counter.
    start: i128,
    /// The bound its loop's test compares the counter with (none for the outermost).
    bound: Option<Expr>,
}

/// The sites of one frame, and what the encoding gathers for them.
#[derive(Default)]
pub(super) struct Cells {
    sites: Vec<Site>,
    /// Per site, the Skolem index tuple (made at the first head).
    skolem: Vec<Option<Vec<T>>>,
    /// Per site, the accesses to its place.
    accesses: Vec<Vec<Accessed>>,
    pending: Vec<CellPending>,
}

/// An access to a site's place: the counters' values there and, for one after the nest, its
/// state and the place it accesses (whose counters may be other locals).
struct Accessed {
    tuple: Vec<T>,
    after: Option<(State, LValue)>,
}

/// A candidate while the body is encoded.
pub(super) struct CellPending {
    node: usize,
    block: BlockId,
    site: usize,
    /// The loop of the nest the head is (its depth, 1 for the outermost).
    depth: usize,
    bound: Bound,
    reach: T,
    head: State,
    /// The ways into the head: each one's condition and state.
    ways: Vec<(T, State)>,
}

/// Where a place is accessed: a statement, or a block's terminator (its test).
#[derive(Clone, Copy)]
pub(super) enum Access<'a> {
    Stmt(&'a Stmt),
    Term(&'a Terminator),
}

impl Enc<'_> {
    /// The sites of the current frame's loops, given its candidates' `sources` (none without).
    pub(super) fn cells_of(
        &self,
        forest: &LoopForest,
        havoc_sets: &HashMap<BlockId, HavocSet>,
        sources: Option<&super::invariants::Sources>,
    ) -> Cells {
        let Some(sources) = sources else {
            return Cells::default();
        };
        // The bounds a cell of a place's type may have, and whether it is a signed integer.
        let kind = |place: &LValue| {
            let ty = self.lvalue_type(place);
            let (bounds, signed) = match ty {
                CType::Int(k) if k.is_signed() => (vec![Bound::AtLeast(0)], true),
                CType::Float(_) if crate::vc::fp::is_format(width_of(&ty)) => {
                    (vec![Bound::NotNegative, Bound::ZeroOrAtLeastOne], false)
                }
                _ => return None,
            };
            Some((ty, bounds, signed))
        };
        Cells::of(
            self.f,
            forest,
            havoc_sets,
            &sources.int_constants,
            &self.in_memory,
            kind,
        )
    }

    /// Proposes the bounds of the sites whose nest has head block `h` (node `n`), with the
    /// state `entering` the head was entered with (under `reach`) and `st` after its havoc.
    pub(super) fn propose_cell_facts(
        &mut self,
        cells: &mut Cells,
        (n, h): (usize, BlockId),
        reach: T,
        entering: &State,
        st: &State,
    ) {
        for si in 0..cells.sites.len() {
            let Some(depth) = cells.sites[si].loops.iter().position(|l| l.head == h) else {
                continue;
            };
            let depth = depth + 1;
            if cells.skolem[si].is_none() {
                let m = cells.sites[si]
                    .loops
                    .iter()
                    .map(|l| {
                        let w = self.local_width(l.counter);
                        self.fresh(w, "cell")
                    })
                    .collect();
                cells.skolem[si] = Some(m);
            }
            for k in 0..cells.sites[si].bounds.len() {
                if cells.pending.len() >= MAX_CANDIDATES {
                    return;
                }
                let bound = cells.sites[si].bounds[k];
                cells.pending.push(CellPending {
                    node: n,
                    block: h,
                    site: si,
                    depth,
                    bound,
                    reach,
                    head: st.clone(),
                    ways: vec![(reach, entering.clone())],
                });
            }
        }
    }

    /// Records the counters' values at a statement or test that reads or writes a site's
    /// place.
    pub(super) fn note_cell_reads(&mut self, cells: &mut Cells, access: Access, st: &State) {
        for si in 0..cells.sites.len() {
            if cells.accesses[si].len() >= MAX_READS {
                continue;
            }
            let site = &cells.sites[si];
            let mut found: Vec<(&LValue, Vec<LocalId>)> = Vec::new();
            access.visit(&mut |item| {
                if let crate::ir::visit::Item::Place { place: p, .. } = item {
                    if let Some(counters) = site.counters_of(p) {
                        found.push((p, counters));
                    }
                }
            });
            for (place, counters) in found {
                let values: Option<Vec<T>> =
                    counters.iter().map(|l| st.vars[l.0 as usize]).collect();
                let Some(v) = values else { continue };
                let inside = site.body.contains(&self.cur_block);
                let seen = cells.accesses[si]
                    .iter()
                    .any(|a| a.tuple == v && a.after.is_none() == inside);
                if !seen && cells.accesses[si].len() < MAX_READS {
                    let after = (!inside).then(|| (st.clone(), place.clone()));
                    cells.accesses[si].push(Accessed { tuple: v, after });
                }
            }
        }
    }

    /// The cut edge from node `n` under `cond` with state `st`, back into head node `head`.
    pub(super) fn cell_back_edge(&mut self, cells: &mut Cells, head: usize, cond: T, st: &State) {
        for p in cells.pending.iter_mut().filter(|p| p.node == head) {
            p.ways.push((cond, st.clone()));
        }
    }

    /// The candidates of bodies encoded whole, but those of `broken` blocks.
    pub(super) fn settle_cell_facts(&mut self, cells: Cells, broken: &BTreeSet<BlockId>) {
        let Cells {
            sites,
            skolem,
            accesses,
            pending,
        } = cells;
        for p in pending {
            if broken.contains(&p.block) {
                continue;
            }
            let site = &sites[p.site];
            let skolem_m = skolem[p.site].clone().expect("made at the head");
            // The instances: at the Skolem tuple and the nest's own accesses (what the
            // obligations need), then at every other access (what later questions need).
            let inside: Vec<&Vec<T>> = accesses[p.site]
                .iter()
                .filter(|a| a.after.is_none())
                .map(|a| &a.tuple)
                .collect();
            let mut own = vec![self.cells_bounded(site, p.bound, &p.head, p.depth, &skolem_m)];
            for r in &inside {
                own.push(self.cells_bounded(site, p.bound, &p.head, p.depth, r));
            }
            let own = self.t.and(&own);
            let assumed = self.t.implies(p.reach, own);
            let home = self.home(&site.place);
            let value = self.memory_for(home, &site.ty, &p.head);
            let mut memory = Vec::new();
            leaves_of(&self.t, value, is_var, &mut memory);
            // Once proved, the instance of each access after the nest is a fact of its own,
            // about the bytes the access reads (as the access reads them when it can be
            // said so, else as the head's memory holds them, and then about that memory).
            let mut proved = Vec::new();
            for (r, at) in accesses[p.site]
                .iter()
                .filter_map(|a| Some((&a.tuple, a.after.as_ref()?)))
            {
                let as_read = self.cell_as_read(site, p.bound, (&p.head, p.depth), r, at);
                let (at, mut about) = match as_read {
                    Some(at) => (at, Vec::new()),
                    None => {
                        let at = self.cells_bounded(site, p.bound, &p.head, p.depth, r);
                        (at, memory.clone())
                    }
                };
                leaves_of(&self.t, at, is_read, &mut about);
                let fact = self.t.implies(p.reach, at);
                proved.push(Fact {
                    about,
                    needs_all: false,
                    fact,
                    work: 0,
                });
            }
            let obligation = self.cell_obligation(site, &p, &skolem_m, &inside);
            self.loop_candidates.push(LoopCandidate {
                assumed,
                value,
                obligation,
                group: match p.bound {
                    Bound::NotNegative => CandidateGroup::FloatSignCells,
                    Bound::ZeroOrAtLeastOne => CandidateGroup::FloatWholeCells,
                    Bound::AtLeast(_) | Bound::AtMost(_) => CandidateGroup::IntegerCells,
                },
                proved,
            });
        }
    }

    /// `m` is a cell the nest visited before state `st` at its `depth`-th loop's head:
    /// lexicographically before the counters, inner indices within their loops' bounds.
    fn cells_before(&mut self, site: &Site, st: &State, depth: usize, m: &[T]) -> T {
        let mut scratch = st.clone();
        let (lt, le) = if site_counters_signed(self.f, site) {
            (CmpOp::Slt, CmpOp::Sle)
        } else {
            (CmpOp::Ult, CmpOp::Ule)
        };
        // Each index from its counter's start, and below its loop's bound.
        let (mut from, mut within) = (Vec::new(), Vec::new());
        for (u, l) in site.loops.iter().enumerate() {
            let w = self.local_width(l.counter);
            let s = self.t.bv_i(w, l.start);
            from.push(self.t.cmp(le, s, m[u]));
            let below = match &l.bound {
                Some(x) => {
                    let v = self.eval(x, &mut scratch);
                    let v = self.t.resize(v, w, is_signed(&x.ty));
                    self.t.cmp(lt, m[u], v)
                }
                None => self.t.tru(),
            };
            within.push(self.t.and2(from[u], below));
        }
        // Counters are SSA locals: each has a value in every state.
        let counters: Vec<T> = site
            .loops
            .iter()
            .map(|l| st.vars[l.counter.0 as usize].expect("an SSA local has a value"))
            .collect();
        let mut alternatives = Vec::new();
        for t in 0..depth {
            let mut conj = Vec::new();
            for (m_u, c_u) in m.iter().zip(&counters).take(t) {
                conj.push(self.t.eq(*m_u, *c_u));
            }
            conj.push(from[t]);
            conj.push(self.t.cmp(lt, m[t], counters[t]));
            conj.extend(within.iter().skip(t + 1).copied());
            alternatives.push(self.t.and(&conj));
        }
        self.t.or(&alternatives)
    }

    /// The obligation of candidate `p`: on each way into its head, its bound at the Skolem
    /// tuple `skolem_m` apart from the nest's accesses' tuples `inside`, and at each of those
    /// (a cell an iteration visits is then the term its access read, with no arithmetic on
    /// indices to reason about).
    fn cell_obligation(
        &mut self,
        site: &Site,
        p: &CellPending,
        skolem_m: &[T],
        inside: &[&Vec<T>],
    ) -> T {
        let apart: Vec<T> = inside
            .iter()
            .map(|r| {
                let same: Vec<T> = r
                    .iter()
                    .zip(skolem_m)
                    .map(|(a, b)| self.t.eq(*a, *b))
                    .collect();
                let same = self.t.and(&same);
                self.t.not(same)
            })
            .collect();
        let apart = self.t.and(&apart);
        let mut ways = Vec::new();
        for (cond, st) in &p.ways {
            let at = self.cells_bounded(site, p.bound, st, p.depth, skolem_m);
            let mut parts = vec![self.t.implies(apart, at)];
            for r in inside {
                parts.push(self.cells_bounded(site, p.bound, st, p.depth, r));
            }
            let all = self.t.and(&parts);
            ways.push(self.t.implies(*cond, all));
        }
        self.t.and(&ways)
    }

    /// The instance at an access after the nest, with state `at`, as the access reads the
    /// cell: when the memory it reads is the head's, or a join of memories one of which is
    /// the head's (then under the joins' conditions that choose it), the cell it reads is the
    /// head's (`None` when it is not so).
    fn cell_as_read(
        &mut self,
        site: &Site,
        bound: Bound,
        (head, depth): (&State, usize),
        m: &[T],
        (at, place): &(State, LValue),
    ) -> Option<T> {
        let home = self.home(&site.place);
        let at_head = self.memory_for(home, &site.ty, head);
        let read_from = self.memory_for(home, &site.ty, at);
        // The address's other locals hold the values they held at the head.
        let same = |l: &LocalId| at.vars[l.0 as usize] == head.vars[l.0 as usize];
        if !site.others.iter().all(same) {
            return None;
        }
        let chosen = chooses(&mut self.t, read_from, at_head)?;
        let before = self.cells_before(site, head, depth, m);
        let mut at = at.clone();
        let cell = self.read(place, &site.ty, &mut at);
        let holds = self.bound_of(bound, site.signed, cell);
        let given = self.t.and2(chosen, before);
        Some(self.t.implies(given, holds))
    }

    /// Every cell the nest visited before state `st` (at its `depth`-th loop's head) meets
    /// `bound`, for the index tuple `m`.
    fn cells_bounded(&mut self, site: &Site, bound: Bound, st: &State, depth: usize, m: &[T]) -> T {
        let before = self.cells_before(site, st, depth, m);
        let mut at = st.clone();
        for (u, l) in site.loops.iter().enumerate() {
            at.vars[l.counter.0 as usize] = Some(m[u]);
        }
        let cell = self.read(&site.place, &site.ty, &mut at);
        let holds = self.bound_of(bound, site.signed, cell);
        self.t.implies(before, holds)
    }
}

/// Are the counters of `site` compared signed (their types are)?
fn site_counters_signed(f: &Function, site: &Site) -> bool {
    site.loops
        .iter()
        .all(|l| matches!(&f.local(l.counter).ty, CType::Int(k) if k.is_signed()))
}

/// The condition under which memory `m`, a tree of `ite` joins, is memory `leaf`; `None`
/// when no branch of it is.
fn chooses(t: &mut Terms, m: T, leaf: T) -> Option<T> {
    if m == leaf {
        return Some(t.tru());
    }
    let Node::Ite(c, a, b) = *t.node(m) else {
        return None;
    };
    let (ca, cb) = (chooses(t, a, leaf), chooses(t, b, leaf));
    if ca.is_none() && cb.is_none() {
        return None;
    }
    let fls = t.fls();
    let when_a = t.and2(c, ca.unwrap_or(fls));
    let not_c = t.not(c);
    let when_b = t.and2(not_c, cb.unwrap_or(fls));
    Some(t.or2(when_a, when_b))
}

/// The nodes of term `t` that `pick` chooses, not looking inside them, once each, in the
/// order met: its variables, or its memory reads (each byte read).
fn leaves_of(terms: &Terms, t: T, pick: fn(&Node) -> bool, out: &mut Vec<T>) {
    let mut todo = vec![t];
    let mut seen = HashSet::new();
    let mut ops = Vec::new();
    while let Some(x) = todo.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = terms.node(x);
        if pick(node) {
            out.push(x);
            continue;
        }
        node.push_operands(&mut ops);
        todo.append(&mut ops);
    }
}

fn is_var(n: &Node) -> bool {
    matches!(n, Node::Var { .. })
}

fn is_read(n: &Node) -> bool {
    matches!(n, Node::Select { .. })
}
