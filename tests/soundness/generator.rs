//! The generator of the soundness harness's programs: random small C functions
//! `f(unsigned char a, signed char b)` over locals, and on demand memory (globals, arrays, a
//! struct, a pointer that aliases some of them), helpers called once or twice, loops and exits,
//! each label written where the generator knows what it stands for.

use std::collections::BTreeMap;
use std::fmt::Write;

/// xorshift64*: deterministic and dependency-free.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn seeded(seed: u64) -> Rng {
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
    /// A number in `lo..=hi`.
    pub(crate) fn small(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

/// The start of a program under test: `pc_label` defined away when compiled alone, and `f`'s
/// head.
pub(crate) const PROGRAM_START: &str =
    "#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\nint f(unsigned char a, signed char b)\n{\n";

pub(crate) const VARS: &[&str] = &["a", "b", "x", "y", "z"];
/// The variables of a helper's body: its parameters, then the locals it shares with `f`.
pub(crate) const HELPER_VARS: &[&str] = &["p", "q", "x", "y", "z"];

/// Where a hand-placed label sits, for recall per kind: the entry function, a helper called
/// once (`h1`), a helper called from two sites (`h2`), the exit helper `h`, or a loop body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Entry,
    CalledOnce,
    CalledTwice,
    ExitHelper,
    Loop,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Entry => "entry f",
            Kind::CalledOnce => "helper called once",
            Kind::CalledTwice => "helper called twice",
            Kind::ExitHelper => "exit helper h",
            Kind::Loop => "loop bodies",
        }
    }
}

/// A label as the generator placed it: its kind, and its straight-line segment (labels of one
/// segment are reached together, once per visit; any branch, loop, call that may exit or
/// return starts a new one).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub(crate) kind: Kind,
    pub(crate) segment: u32,
}

pub(crate) struct Gen {
    rng: Rng,
    /// False for programs that the annotator will label instead.
    emit_labels: bool,
    /// Programs over memory too: globals, arrays, a struct, a pointer that aliases some of
    /// them on some inputs, `memset`/`memcpy`.
    memory: bool,
    /// Programs over floating-point values too: `double` and `float` locals computed from the
    /// inputs, with NaNs, infinities and signed zeros among their values.
    floats: bool,
    next_label: u32,
    loops: u32,
    out: String,
    /// The variables expressions read (`VARS` in `f`, `HELPER_VARS` in helpers).
    vars: &'static [&'static str],
    /// Kind of the labels being written, outside loops.
    kind: Kind,
    /// Loops enclosing the statement being written.
    in_loops: u32,
    /// Whether expressions in loop bodies may read the loop counters.
    counters_in_labels: bool,
    /// Counters of the enclosing `for` loops, innermost last (with `counters_in_labels`).
    loop_counters: Vec<String>,
    segment: u32,
    placed: BTreeMap<u32, Placed>,
}

impl Gen {
    fn atom(&mut self) -> String {
        if self.memory && self.rng.chance(40) {
            return self.memory_read();
        }
        if self.rng.chance(35) {
            let c = self.rng.below(9) as i64 - 2;
            return match self.rng.below(6) {
                0 => "255".into(),
                1 => "127".into(),
                2 => "-128".into(),
                _ => c.to_string(),
            };
        }
        // The draw is made only when a counter is in scope, so that programs without counters
        // are the same as before counters existed (the planted-fault test relies on them).
        if let Some(i) = self.loop_counters.last().cloned() {
            if self.rng.chance(20) {
                return i;
            }
        }
        self.var().to_string()
    }

    /// A floating-point operand: a `double` or `float` local, an input converted, or a
    /// constant (signed zeros and huge values among them).
    fn fatom(&mut self) -> String {
        match self.rng.below(8) {
            0..=2 => ["u", "w", "v"][self.rng.below(3) as usize].into(),
            3 => format!("(double){}", self.var()),
            4 => format!("({} / 16.0)", self.var()),
            _ => [
                "0.0",
                "-0.0",
                "0.5",
                "-2.5",
                "0.1",
                "1e300",
                "3.0f",
                "(1.0 / 3.0)",
                "1e-310",
            ][self.rng.below(9) as usize]
                .into(),
        }
    }

    /// A floating-point expression: arithmetic (overflow to infinities, 0/0 and inf - inf to
    /// NaN), the math functions covprune knows, narrowing to `float`, a choice.
    fn fexpr(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(30) {
            return self.fatom();
        }
        let a = self.fexpr(depth - 1);
        match self.rng.below(11) {
            0 => format!("({a} + {})", self.fexpr(depth - 1)),
            1 => format!("({a} - {})", self.fexpr(depth - 1)),
            2 => format!("({a} * {})", self.fexpr(depth - 1)),
            3 => format!("({a} / {})", self.fexpr(depth - 1)),
            4 => format!("sqrt({a})"),
            5 => format!("fabs({a})"),
            6 => format!("floor({a})"),
            7 => format!("ceil({a})"),
            8 => format!("(float)({a})"),
            9 => format!("sqrtf((float)({a}))"),
            _ => format!("({} > 0 ? {a} : {})", self.atom(), self.fatom()),
        }
    }

    /// A condition on floating-point values: a comparison, a NaN test, or the sign of a
    /// quotient (which tells a negative zero from a positive one).
    fn fcond(&mut self) -> String {
        let a = self.fexpr(2);
        match self.rng.below(6) {
            0 => format!("({a} != {a})"),
            1 => format!("(1.0 / ({a}) < 0)"),
            _ => {
                let ops = ["<", "<=", ">", ">=", "==", "!="];
                let op = ops[self.rng.below(6) as usize];
                let b = self.fexpr(1);
                format!("({a} {op} {b})")
            }
        }
    }

    fn var(&mut self) -> &'static str {
        self.vars[self.rng.below(self.vars.len() as u64) as usize]
    }

    /// An argument of a helper call: mostly a restricted value of the inputs.
    fn restricted_arg(&mut self) -> String {
        let mask = [1, 3, 7, 15][self.rng.below(4) as usize];
        match self.rng.below(9) {
            0 => format!("a & {mask}"),
            1 => "(a + a) & 255".into(),
            2 => format!("b & {mask}"),
            3 => (self.rng.below(16) as i64 - 3).to_string(),
            4 => format!("(b & 3) + {}", self.rng.below(5)),
            5 => "a % 5".into(),
            6 => "a >> 5".into(),
            _ => self.var().to_string(),
        }
    }

    fn new_segment(&mut self) {
        self.segment += 1;
    }

    fn expr(&mut self, depth: u32) -> String {
        if self.floats && self.rng.chance(10) {
            // A floating-point value back to an integer, only where that is defined.
            let e = self.fexpr(1);
            return format!("(fabs({e}) < 1000.0 ? (int)({e}) : 0)");
        }
        if depth == 0 || self.rng.chance(30) {
            return self.atom();
        }
        let a = self.expr(depth - 1);
        match self.rng.below(12) {
            0 => format!("({a} + {})", self.expr(depth - 1)),
            1 => format!("({a} - {})", self.expr(depth - 1)),
            2 => format!("({a} * {})", self.atom()),
            3 => format!("({a} & {})", self.expr(depth - 1)),
            4 => format!("({a} | {})", self.expr(depth - 1)),
            5 => format!("({a} ^ {})", self.expr(depth - 1)),
            6 => format!("({a} / {})", 1 + self.rng.below(5)),
            7 => format!("({a} % {})", 1 + self.rng.below(7)),
            8 => format!("({a} >> {})", self.rng.below(8)),
            9 => format!("(unsigned char)({a})"),
            10 => format!("(signed char)({a})"),
            _ => format!("({} ? {a} : {})", self.cond(0), self.atom()),
        }
    }

    fn cond(&mut self, depth: u32) -> String {
        if depth > 0 && self.rng.chance(35) {
            let l = self.cond(depth - 1);
            let r = self.cond(depth - 1);
            return match self.rng.below(3) {
                0 => format!("({l} && {r})"),
                1 => format!("({l} || {r})"),
                _ => format!("!({l})"),
            };
        }
        if self.floats && self.rng.chance(50) {
            return self.fcond();
        }
        let ops = ["<", "<=", ">", ">=", "==", "!="];
        let op = ops[self.rng.below(6) as usize];
        let l = self.expr(2);
        let r = self.expr(1);
        format!("({l} {op} {r})")
    }

    fn label(&mut self, indent: &str) {
        let c = self.cond(2);
        self.label_with(indent, c);
    }

    /// A label of predicate `c` (a statement `;` in the unlabelled variant).
    fn label_with(&mut self, indent: &str, c: String) {
        if !self.emit_labels {
            let _ = writeln!(self.out, "{indent};");
            return;
        }
        self.next_label += 1;
        let kind = if self.in_loops == 0 {
            self.kind
        } else {
            Kind::Loop
        };
        self.placed.insert(
            self.next_label,
            Placed {
                kind,
                segment: self.segment,
            },
        );
        let _ = writeln!(
            self.out,
            "{indent}pc_label({c}, {}, \"T\");",
            self.next_label
        );
    }

    fn stmts(&mut self, depth: u32, indent: &str, n: u32) {
        for _ in 0..n {
            self.stmt(depth, indent);
        }
    }

    /// A read of memory: a global, an element at a computed index (masked in bounds), a
    /// field, a local that a pointer may reach, or through one of the pointers.
    fn memory_read(&mut self) -> String {
        let i = self.var();
        match self.rng.below(11) {
            0 => "g1".into(),
            1 => "g2".into(),
            2 => format!("arr[({i}) & 7]"),
            3 => format!("garr[({i}) & 3]"),
            4 => "s.p".into(),
            5 => format!("s.q[({i}) & 3]"),
            6 => format!("loc[({i}) & 3]"),
            7 => "ls.r".into(),
            8 => ["la", "lb"][self.rng.below(2) as usize].into(),
            9 => "*q".into(),
            _ => "*p".into(),
        }
    }

    fn memory_write(&mut self, indent: &str) {
        let e = self.expr(2);
        let i = self.var();
        let line = match self.rng.below(20) {
            0 => format!("g1 = {e};"),
            1 => format!("g2 = {e};"),
            2 => format!("arr[({i}) & 7] = {e};"),
            3 => format!("garr[({i}) & 3] = {e};"),
            4 => format!("s.p = {e};"),
            5 => format!("s.q[({i}) & 3] = {e};"),
            6 => format!("loc[({i}) & 3] = {e};"),
            7 => format!("*p = {e};"),
            8 => {
                let c = self.cond(0);
                let target =
                    ["&g2", "&garr[1]", "&loc[2]", "&garr[(a) & 3]"][self.rng.below(4) as usize];
                format!("p = {c} ? {target} : p;")
            }
            9 => format!("put(&garr[({i}) & 3], {e});"),
            10 => format!("memset(loc, ({e}) & 255, sizeof loc);"),
            11 => "memcpy(&ls, &s, sizeof ls);".into(),
            // `q` reaches the locals `la` and `lb` only, never a global.
            12 => format!("*q = {e};"),
            13 => {
                let c = self.cond(0);
                let target = ["&la", "&lb"][self.rng.below(2) as usize];
                format!("q = {c} ? {target} : q;")
            }
            14 => format!("put(q, {e});"),
            15 => format!("{} = {e};", ["la", "lb"][self.rng.below(2) as usize]),
            16 => format!("ls.r = {e};"),
            // Code outside the program (the driver's): it writes through `q`, or through the
            // pointer it kept (see `ext_keep` below), so `la` and `lb` are not `f`'s alone.
            17 => format!("ext_poke(q, {e});"),
            _ => {
                // A value outside the inputs' range, and a label that sees it whenever the
                // pointer kept outside reaches `la` or `lb`.
                let k = 300 + self.rng.below(700);
                let _ = writeln!(self.out, "{indent}ext_touch({k});");
                self.label_with(indent, format!("(la == {k} || lb == {k})"));
                return;
            }
        };
        let _ = writeln!(self.out, "{indent}{line}");
    }

    fn stmt(&mut self, depth: u32, indent: &str) {
        if self.memory && self.rng.chance(35) {
            self.memory_write(indent);
            return;
        }
        let inner = format!("{indent}    ");
        let choice = if depth == 0 {
            self.rng.below(4)
        } else {
            self.rng.below(11)
        };
        // Labels before and after anything but a label or an assignment are not co-reached.
        if choice >= 3 {
            self.new_segment();
        }
        match choice {
            0 | 1 => self.label(indent),
            2 if self.floats && self.rng.chance(50) => {
                let v = ["u", "w", "v"][self.rng.below(3) as usize];
                let e = self.fexpr(3);
                let _ = writeln!(self.out, "{indent}{v} = {e};");
            }
            2 => {
                let v = ["x", "y", "z"][self.rng.below(3) as usize];
                let e = self.expr(3);
                let _ = writeln!(self.out, "{indent}{v} = {e};");
            }
            3 => {
                let v = ["x", "y", "z"][self.rng.below(3) as usize];
                let e = self.expr(2);
                let _ = writeln!(self.out, "{indent}{v} = h({e});");
            }
            4 | 5 => {
                let c = self.cond(1);
                let _ = writeln!(self.out, "{indent}if ({c}) {{");
                let n = 1 + self.rng.below(3) as u32;
                self.stmts(depth - 1, &inner, n);
                if self.rng.chance(50) {
                    self.new_segment();
                    let _ = writeln!(self.out, "{indent}}} else {{");
                    let n = 1 + self.rng.below(3) as u32;
                    self.stmts(depth - 1, &inner, n);
                }
                let _ = writeln!(self.out, "{indent}}}");
            }
            6 => {
                self.loops += 1;
                let i = format!("i{}", self.loops);
                let bound = self.atom();
                let _ = writeln!(
                    self.out,
                    "{indent}for (int {i} = 0; {i} < (({bound}) & 3); {i}++) {{"
                );
                self.in_loops += 1;
                if self.counters_in_labels {
                    self.loop_counters.push(i);
                }
                let n = 1 + self.rng.below(3) as u32;
                self.stmts(depth - 1, &inner, n);
                if self.rng.chance(30) {
                    let c = self.cond(0);
                    let _ = writeln!(self.out, "{inner}if ({c}) break;");
                }
                if self.counters_in_labels {
                    self.loop_counters.pop();
                }
                self.in_loops -= 1;
                let _ = writeln!(self.out, "{indent}}}");
            }
            7 => {
                let e = self.expr(1);
                let _ = writeln!(self.out, "{indent}switch (({e}) & 3) {{");
                for case in 0..3 {
                    self.new_segment();
                    if case == 2 {
                        let _ = writeln!(self.out, "{indent}default:");
                    } else {
                        let _ = writeln!(self.out, "{indent}case {case}:");
                    }
                    let n = 1 + self.rng.below(2) as u32;
                    self.stmts(depth - 1, &inner, n);
                    if self.rng.chance(70) {
                        let _ = writeln!(self.out, "{inner}break;");
                    }
                }
                let _ = writeln!(self.out, "{indent}}}");
            }
            8 => {
                let c = self.cond(1);
                let e = self.expr(1);
                let _ = writeln!(self.out, "{indent}if ({c}) return {e};");
            }
            9 => {
                let c = self.cond(1);
                let _ = writeln!(self.out, "{indent}if ({c}) exit(1);");
            }
            _ => {
                let c = self.cond(1);
                let _ = writeln!(self.out, "{indent}while ({c}) {{");
                // A loop that runs at most once: it assigns what it tested.
                let v = ["x", "y", "z"][self.rng.below(3) as usize];
                let _ = writeln!(self.out, "{inner}{v} = {v} + 1;");
                self.in_loops += 1;
                self.label(&inner);
                self.in_loops -= 1;
                let _ = writeln!(self.out, "{inner}break;");
                let _ = writeln!(self.out, "{indent}}}");
            }
        }
        if choice >= 3 {
            self.new_segment();
        }
    }
}

pub(crate) fn generate(seed: u64) -> Generated {
    generate_full(seed, true, false, false)
}

pub(crate) fn generate_with(seed: u64, emit_labels: bool) -> (String, u32) {
    generate_program(seed, emit_labels, false)
}

pub(crate) fn generate_program(seed: u64, emit_labels: bool, memory: bool) -> (String, u32) {
    let (text, n, _) = generate_full(seed, emit_labels, memory, false);
    (text, n)
}

/// A generated program: its text, its number of labels, and where each label sits.
pub(crate) type Generated = (String, u32, BTreeMap<u32, Placed>);

/// With `helpers`, `f` also calls two helpers with restricted arguments (masks, constants,
/// small ranges): `h1` from one site, `h2` from two; their bodies hold labels, branches and
/// loops whose labels may read the loop counters. Their labels are often infeasible only
/// because of what the callers pass.
pub(crate) fn generate_full(
    seed: u64,
    emit_labels: bool,
    memory: bool,
    helpers: bool,
) -> Generated {
    generate_in(seed, emit_labels, memory, helpers, false)
}

/// Programs over floating-point values (see [`Gen::fexpr`]), without memory or helpers.
pub(crate) fn generate_floats(seed: u64) -> Generated {
    generate_in(seed, true, false, false, true)
}

fn generate_in(
    seed: u64,
    emit_labels: bool,
    memory: bool,
    helpers: bool,
    floats: bool,
) -> Generated {
    let mut g = Gen {
        emit_labels,
        memory,
        floats,
        rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        next_label: 0,
        loops: 0,
        out: String::new(),
        vars: VARS,
        kind: Kind::Entry,
        in_loops: 0,
        counters_in_labels: false,
        loop_counters: Vec::new(),
        segment: 0,
        placed: BTreeMap::new(),
    };
    g.out.push_str("#include <stdlib.h>\n");
    g.out
        .push_str("#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\n");
    let k = g.rng.below(200) as i64 - 50;
    // `h` has labels of its own: when `f` calls it once, they are related to `f`'s in context.
    let mut h_labels = String::new();
    if emit_labels {
        for _ in 0..2 {
            g.next_label += 1;
            g.placed.insert(
                g.next_label,
                Placed {
                    kind: Kind::ExitHelper,
                    segment: u32::MAX,
                },
            );
            let c = g.rng.below(300) as i64 - 100;
            let op = ["<", ">", "==", "<="][g.rng.below(4) as usize];
            let _ = writeln!(
                h_labels,
                "    pc_label(v {op} {c}, {}, \"T\");",
                g.next_label
            );
        }
    }
    let _ = writeln!(
        g.out,
        "static int h(int v)\n{{\n{h_labels}    if (v > {k} && v < {}) exit(2);\n    return v * 3 + 1;\n}}\n",
        k + 3
    );
    if memory {
        // `f` sets every global from its inputs first, so that the runs' ground truth is the
        // same whatever values the globals had at entry (the unit-testing view).
        g.out.push_str(
            "#include <string.h>\n\
             struct S { int p; unsigned char q[4]; short r; };\n\
             static int g1;\nint g2;\nstatic unsigned char arr[8];\nstatic struct S s;\nint garr[4];\n\
             static void put(int *q, int v) { *q = v; }\n             void ext_keep(int *q);\nvoid ext_poke(int *q, int v);\nvoid ext_touch(int v);\n\n",
        );
    }
    g.out
        .push_str("int f(unsigned char a, signed char b)\n{\n    int x = a, y = b, z = 0;\n");
    if floats {
        g.out.insert_str(0, "#include <math.h>\n");
        g.out
            .push_str("    double u = a / 8.0 - 3.0, w = b * 0.25;\n    float v = b / 3.0f;\n");
    }
    if memory {
        g.out.push_str(
            "    int loc[4] = {0};\n    struct S ls;\n    memset(&ls, 0, sizeof ls);\n    int *p = (b & 1) ? &g2 : &garr[(a) & 3];\n\
             \x20   int la = a, lb = b;\n    int *q = (b & 2) ? &la : &lb;\n\
             \x20   g1 = a - b;\n    g2 = b * 3;\n    s.p = b;\n    s.r = a;\n\
             \x20   for (int k = 0; k < 8; k++) arr[k] = a + k;\n\
             \x20   for (int k = 0; k < 4; k++) { s.q[k] = a ^ k; garr[k] = b - k; }\n",
        );
        // Half the programs give `q` to code outside them, which keeps it: on some inputs,
        // each later `ext_touch` writes `la` or `lb`.
        if g.rng.chance(50) {
            g.out.push_str("    if (b & 4) ext_keep(q);\n");
        }
    }
    if helpers {
        // Labels before the helpers' text keep their place in `f`'s numbering: generate the
        // helpers into a buffer of their own, then `f`.
        let f_start = std::mem::take(&mut g.out);
        g.counters_in_labels = true;
        g.vars = HELPER_VARS;
        for (name, kind) in [("h1", Kind::CalledOnce), ("h2", Kind::CalledTwice)] {
            g.kind = kind;
            g.new_segment();
            let _ = writeln!(
                g.out,
                "static int {name}(int p, int q)\n{{\n    int x = p, y = q, z = 0;"
            );
            let n = 3 + g.rng.below(5) as u32;
            g.stmts(2, "    ", n);
            g.label("    ");
            g.out.push_str("    return x + y + z;\n}\n\n");
        }
        g.vars = VARS;
        g.kind = Kind::Entry;
        g.new_segment();
        let helpers_text = std::mem::take(&mut g.out);
        let (head, tail) = f_start.split_at(f_start.find("int f(").expect("f is written"));
        g.out = format!("{head}{helpers_text}{tail}");
        // The body of `f`: statements around one call of `h1` and two of `h2` (the second
        // perhaps under a condition).
        let calls = [("x", "h1"), ("y", "h2"), ("z", "h2")];
        for (k, (v, h)) in calls.iter().enumerate() {
            let n = 1 + g.rng.below(3) as u32;
            g.stmts(2, "    ", n);
            g.new_segment();
            let (p, q) = (g.restricted_arg(), g.restricted_arg());
            if k == 2 && g.rng.chance(50) {
                let c = g.cond(1);
                let _ = writeln!(g.out, "    if ({c})\n        {v} = {h}({p}, {q});");
            } else {
                let _ = writeln!(g.out, "    {v} = {h}({p}, {q});");
            }
            g.new_segment();
        }
    }
    let n = if helpers { 1 } else { 4 } + g.rng.below(if helpers { 3 } else { 6 }) as u32;
    g.stmts(2, "    ", n);
    g.label("    ");
    g.out.push_str("    return x + y + z;\n}\n");
    (g.out, g.next_label, g.placed)
}
