//! The harness over programs whose callees write through their pointer parameters on some
//! paths, called from several sites with pointers to different objects: a local whose address
//! also flows into another pointer, a global, an array element, a struct field. The callees'
//! sizes are drawn across every threshold that changes how a call is encoded (inlined, inlined
//! in context, opaque with the region analysis' writes, opaque past the inlining depth or the
//! inlining budget), and labels before and after each call read what the call may write.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::generator::{Generated, Rng};
use super::*;

/// Filler decisions in a callee: from none (always inlined) to past the blocks a context copy
/// may inline.
const FILLERS: &[u64] = &[0, 1, 3, 8, 16, 30, 60];

struct Writers {
    rng: Rng,
    next_label: u32,
    out: String,
}

impl Writers {
    fn atom(&mut self, vars: &[&str]) -> String {
        if self.rng.chance(30) {
            return self.rng.small(-3, 12).to_string();
        }
        vars[self.rng.below(vars.len() as u64) as usize].to_string()
    }

    /// An integer expression over `vars`: values stay small in every run (products are by
    /// constants only), so that no run has undefined behaviour.
    fn expr(&mut self, vars: &[&str], depth: u32) -> String {
        if depth == 0 || self.rng.chance(35) {
            return self.atom(vars);
        }
        let a = self.expr(vars, depth - 1);
        match self.rng.below(9) {
            0 => format!("({a} + {})", self.expr(vars, depth - 1)),
            1 => format!("({a} - {})", self.expr(vars, depth - 1)),
            2 => format!("({a} * {})", self.rng.small(-3, 7)),
            3 => format!("({a} & {})", self.expr(vars, depth - 1)),
            4 => format!("({a} ^ {})", self.expr(vars, depth - 1)),
            5 => format!("({a} % {})", self.rng.small(2, 9)),
            6 => format!("({a} >> {})", self.rng.small(0, 4)),
            7 => format!("(unsigned char)({a})"),
            _ => format!("({} ? {a} : {})", self.cond(vars, 0), self.atom(vars)),
        }
    }

    fn cond(&mut self, vars: &[&str], depth: u32) -> String {
        if depth > 0 && self.rng.chance(40) {
            let l = self.cond(vars, depth - 1);
            let r = self.cond(vars, depth - 1);
            return match self.rng.below(3) {
                0 => format!("({l} && {r})"),
                1 => format!("({l} || {r})"),
                _ => format!("!({l})"),
            };
        }
        let op = self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
        let l = self.expr(vars, 1);
        let r = self.atom(vars);
        format!("({l} {op} {r})")
    }

    fn label(&mut self, indent: &str, pred: &str) {
        self.next_label += 1;
        let _ = writeln!(
            self.out,
            "{indent}pc_label({pred}, {}, \"T\");",
            self.next_label
        );
    }

    /// A statement of a callee's body: a write through `dst` (on the paths that reach it),
    /// a local or a global set, a decision, a call one level down.
    fn callee_stmt(&mut self, vars: &[&str], writes: &[&str], down: Option<&str>, depth: u32) {
        let indent = "    ".repeat(3 - depth as usize);
        match self.rng.below(if depth == 0 { 4 } else { 7 }) {
            0 | 1 => {
                let w = writes[self.rng.below(writes.len() as u64) as usize];
                let e = self.expr(vars, 2);
                let _ = writeln!(self.out, "{indent}{w} = ({e}) % 1000;");
            }
            2 => {
                let e = self.expr(vars, 2);
                let _ = writeln!(self.out, "{indent}z = ({e}) % 1000;");
            }
            3 => {
                let c = self.cond(vars, 1);
                self.label(&indent, &c);
            }
            4 if down.is_some() => {
                let e = self.expr(vars, 1);
                let _ = writeln!(self.out, "{indent}z += {}(dst, {e});", down.unwrap());
            }
            6 => {
                let c = self.cond(vars, 1);
                let e = self.expr(vars, 1);
                let _ = writeln!(self.out, "{indent}if ({c}) return {e};");
            }
            _ => {
                let c = self.cond(vars, 1);
                let _ = writeln!(self.out, "{indent}if ({c}) {{");
                let n = 1 + self.rng.below(2);
                for _ in 0..n {
                    self.callee_stmt(vars, writes, down, depth - 1);
                }
                if self.rng.chance(50) {
                    let _ = writeln!(self.out, "{indent}}} else {{");
                    self.callee_stmt(vars, writes, down, depth - 1);
                }
                let _ = writeln!(self.out, "{indent}}}");
            }
        }
    }

    /// `static int name(int *dst, int k)`: statements that write `*dst` on some paths, and
    /// decisions with empty bodies in number drawn from [`FILLERS`], which make the callee
    /// larger without changing what it does.
    fn callee(&mut self, name: &str, down: Option<&str>) {
        let vars = ["*dst", "k", "z", "g_count", "g_tab[(k) & 3]"];
        let writes = ["*dst", "*dst", "*dst", "g_count"];
        let _ = writeln!(
            self.out,
            "static int {name}(int *dst, int k)\n{{\n    int z = k * {};",
            self.rng.small(1, 3)
        );
        let fillers = FILLERS[self.rng.below(FILLERS.len() as u64) as usize];
        let n = 2 + self.rng.below(4);
        for i in 0..n + fillers {
            if i % (fillers / n + 1) == 0 || fillers == 0 {
                self.callee_stmt(&vars, &writes, down, 2);
            } else {
                let c = self.cond(&vars, 1);
                let _ = writeln!(self.out, "    if ({c}) {{\n    }}");
            }
        }
        let e = self.expr(&vars, 1);
        let _ = writeln!(self.out, "    return ({e}) % 100;\n}}\n");
    }
}

/// A program of `f(unsigned char a, signed char b)` calling writer callees: `w3` (the deepest,
/// past the inlining depth when reached through `w2` and `w1`), `w2` calling `w3`, `w1` calling
/// `w2`, and `wp` with two pointer parameters. `f` calls them with `&x`, `p` (which points to
/// `x` or `y` on some inputs), `&g_count`, `&g_ext`, an element of `arr`, a field of `rec`,
/// labels around every call; a label after a call often repeats one before it.
pub(crate) fn generate_writers(seed: u64) -> Generated {
    let mut g = Writers {
        rng: Rng::seeded(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1),
        next_label: 0,
        out: String::new(),
    };
    let tab: Vec<i64> = (0..4).map(|_| g.rng.small(-2, 12)).collect();
    let _ = writeln!(
        g.out,
        "#ifndef pc_label\n#define pc_label(...) do{{}}while(0)\n#endif\n\
         #include <string.h>\n\
         struct S {{ int key; unsigned char tag; int cnt; }};\n\
         union U {{ unsigned int w; unsigned char b[4]; }};\n\
         static int g_count = {};\nint g_ext;\nstatic int g_tab[4] = {{{}, {}, {}, {}}};\n",
        g.rng.small(0, 120),
        tab[0],
        tab[1],
        tab[2],
        tab[3]
    );
    g.callee("w3", None);
    g.callee("w2", Some("w3"));
    g.callee("w1", Some("w2"));
    let c = g.cond(&["*dst", "*src", "k"], 1);
    let e = g.expr(&["*dst", "*src", "k"], 2);
    let _ = writeln!(
        g.out,
        "static void wp(int *dst, int *src, int k)\n{{\n    if ({c})\n        *dst = ({e}) % 1000;\n    else\n        *src = k;\n}}\n"
    );
    g.out.push_str(
        "int f(unsigned char a, signed char b)\n{\n    int x = a, y = b, r = 0;\n    int arr[4] = {a, b, 1, 2};\n",
    );
    let pc = g.cond(&["a", "b"], 0);
    let _ = writeln!(
        g.out,
        "    struct S rec = {{7, a + 1, b - 10}};\n    int *p = ({pc}) ? &x : &y;\n    \
         unsigned char buf[8] = {{b, 10, a, 0, 1, b, 3, 0}};\n    union U un = {{258}};"
    );
    if g.rng.chance(50) {
        // The globals from the inputs: every run then starts from a state the inputs decide.
        g.out
            .push_str("    g_count = a - b;\n    g_ext = b;\n    g_tab[a & 3] = b;\n");
    }
    let vars = [
        "a",
        "b",
        "x",
        "y",
        "r",
        "*p",
        "g_count",
        "g_ext",
        "arr[1]",
        "arr[(a) & 3]",
        "rec.cnt",
        "buf[(a) & 7]",
        "un.b[1]",
    ];
    let calls = 3 + g.rng.below(4);
    let mut last: Option<String> = None;
    for _ in 0..calls {
        for _ in 0..1 + g.rng.below(2) {
            let c = g.cond(&vars, 1);
            g.label("    ", &c);
            last = Some(c);
        }
        let arg = g.expr(&["a", "b", "x", "y"], 1);
        let target = g.rng.pick(&[
            "&x",
            "&x",
            "p",
            "p",
            "&g_count",
            "&g_ext",
            "&arr[(a) & 3]",
            "&rec.cnt",
            "&y",
        ]);
        let callee = g.rng.pick(&["w1", "w1", "w2", "w3"]);
        let call = match g.rng.below(6) {
            0 => {
                let other = g.rng.pick(&["&y", "&g_count", "p", "&arr[2]"]);
                format!("wp({target}, {other}, {arg});")
            }
            _ => format!("r += {callee}({target}, {arg});"),
        };
        if g.rng.chance(25) {
            let c = g.cond(&vars, 0);
            let _ = writeln!(g.out, "    if ({c})\n        {call}");
        } else {
            let _ = writeln!(g.out, "    {call}");
        }
        if let Some(c) = last.take().filter(|_| g.rng.chance(60)) {
            g.label("    ", &c);
        }
        for _ in 0..g.rng.below(2) {
            let c = g.cond(&vars, 1);
            g.label("    ", &c);
        }
        match g.rng.below(10) {
            0..=2 => {
                let e = g.expr(&vars, 1);
                let v = g.rng.pick(&["x", "y", "*p", "un.w"]);
                let _ = writeln!(g.out, "    {v} = ({e}) % 1000;");
            }
            3 => {
                let (to, from) = *[("&y", "&x"), ("buf", "&x"), ("&un", "&y"), ("&x", "&g_ext")]
                    .get(g.rng.below(4) as usize)
                    .unwrap();
                let _ = writeln!(g.out, "    memcpy({to}, {from}, sizeof(int));");
            }
            _ => {}
        }
    }
    g.out.push_str("    return r + x + y;\n}\n");
    (g.out, g.next_label, BTreeMap::new())
}

/// `COVPRUNE_SOUNDNESS_WRITERS` programs (default 40) whose callees write through their
/// pointer parameters ([`generate_writers`]).
#[test]
fn exhaustive_runs_check_the_claims_on_writer_callees() {
    run_harness_with(
        "writer callees",
        env_u64("COVPRUNE_SOUNDNESS_WRITERS", 40),
        "wr",
        generate_writers,
        &harness_config(),
    );
}

/// A planted fault: a call of program code not encoded in place that leaves alone the locals
/// it is given pointers to must be caught by the writer harness.
#[test]
fn the_writer_harness_catches_calls_blind_to_their_own_writes() {
    let mut config = harness_config();
    config.encode.plants.call_writes_blind = true;
    let caught = first_false_claim(&config, "wrf", 120, |seed| Some(generate_writers(seed)));
    assert!(
        caught.is_some(),
        "no false claim found with calls blind to their own writes in 120 writer programs"
    );
}
