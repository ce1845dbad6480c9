//! Programs whose loops run an input-dependent number of times (up to 18 trips, so the
//! encoding havocs them) and carry values from one iteration to the next: counters stepped
//! both ways, flags set to constants, accumulators (`int`, `unsigned`, `double`, the last
//! also halved or stepped by a constant either way), values set
//! back to a constant on some iterations, a nested loop, `continue` and `break`. Labels
//! compare those values with small constants, inside the loops and after them: the bounds the
//! engine proves inductive at loop heads must never exclude a value some run reaches, and
//! traps (a value set negative on the fourth trip, a flag set past its other constants, a
//! `double` that goes negative only through an input) are among them.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::generator::{Generated, Kind, Placed, Rng};

struct LoopGen {
    rng: Rng,
    out: String,
    next_label: u32,
    placed: BTreeMap<u32, Placed>,
}

/// The values a label or a condition may read, with the constants labels compare them with.
const INTS: &[&str] = &["x", "y", "flag", "n"];

impl LoopGen {
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.below(items.len() as u64) as usize]
    }

    fn small(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.rng.below((hi - lo + 1) as u64) as i64
    }

    fn label(&mut self, indent: &str, kind: Kind) {
        self.next_label += 1;
        let id = self.next_label;
        self.placed.insert(id, Placed { kind, segment: 0 });
        let pred = match self.rng.below(6) {
            0 => format!("{} < 0", self.pick(&["x", "y", "flag", "n"])),
            1 => "d < 0".to_string(),
            2 => format!("u > {}", self.small(0, 40)),
            3 => format!("flag > {}", self.small(-1, 3)),
            4 => {
                let op = self.pick(&["<", "<=", "==", ">", ">="]);
                format!("{} {op} {}", self.pick(INTS), self.small(-6, 20))
            }
            _ => {
                let op = self.pick(&["<", "<=", ">"]);
                format!("d {op} {}.0", self.small(-3, 6))
            }
        };
        let _ = writeln!(self.out, "{indent}pc_label({pred}, {id}, \"T\");");
    }

    fn cond(&mut self, counter: &str) -> String {
        match self.rng.below(5) {
            0 => format!("(a & {}) == {}", self.small(1, 7), self.small(0, 3)),
            1 => format!("{counter} == {}", self.small(0, 6)),
            2 => format!("b < {}", self.small(-60, 60)),
            3 => format!("x > {}", self.small(-4, 12)),
            _ => format!("((a ^ {counter}) & 3) == {}", self.small(0, 3)),
        }
    }

    fn stmt(&mut self, indent: &str, counter: &str, depth: u32) {
        match self.rng.below(if depth > 0 { 12 } else { 11 }) {
            0 => {
                let k = self.small(-3, 5);
                let _ = writeln!(self.out, "{indent}x = x + {k};");
            }
            1 => {
                let c = self.cond(counter);
                let k = self.small(-2, 3);
                let _ = writeln!(self.out, "{indent}if ({c}) flag = {k};");
            }
            2 => {
                let k = self.small(-1, 1);
                let _ = writeln!(self.out, "{indent}y = (y * 2 + {k}) % 1000;");
            }
            3 => {
                let c = self.cond(counter);
                let k = self.small(-1, 4);
                let _ = writeln!(self.out, "{indent}if ({c}) x = {k};");
            }
            4 => {
                let e = self.pick(&["(b & 7)", "b", "(a - 100)", "(a & 3)", "1"]);
                let _ = writeln!(self.out, "{indent}d = d + (double)({e});");
            }
            5 => {
                let step = self.pick(&["d = d * 0.5;", "d = d - 0.5;", "d = d + 0.25;"]);
                let _ = writeln!(self.out, "{indent}{step}");
            }
            6 => {
                let k = self.small(0, 3);
                let _ = writeln!(self.out, "{indent}u = u + (a & {k});");
            }
            7 => {
                let c = self.cond(counter);
                let _ = writeln!(self.out, "{indent}if ({c}) continue;");
            }
            8 => {
                let c = self.cond(counter);
                let _ = writeln!(self.out, "{indent}if ({c}) break;");
            }
            9 => {
                let _ = writeln!(self.out, "{indent}n = n + 1;");
            }
            10 => self.label(indent, Kind::Loop),
            _ => {
                let k = self.small(1, 3);
                let _ = writeln!(self.out, "{indent}for (int j = 0; j < (b & {k}); j++) {{");
                let inner = format!("{indent}    ");
                for _ in 0..1 + self.rng.below(3) {
                    self.stmt(&inner, "j", depth - 1);
                }
                let _ = writeln!(self.out, "{indent}}}");
            }
        }
    }
}

/// A program of the loop harness (see the module's doc).
pub(crate) fn generate_loops(seed: u64) -> Generated {
    let mut g = LoopGen {
        rng: Rng::seeded(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1),
        out: String::new(),
        next_label: 0,
        placed: BTreeMap::new(),
    };
    g.out
        .push_str("#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\n");
    g.out.push_str("int f(unsigned char a, signed char b)\n{\n");
    let x0 = g.pick(&["0", "1", "(a & 7)", "-1", "b"]);
    let y0 = g.pick(&["0", "1", "(b & 3)"]);
    let flag0 = g.small(-1, 2);
    let d0 = g.pick(&["0.0", "1.5", "(double)b"]);
    let u0 = g.small(0, 5);
    let _ = writeln!(
        g.out,
        "    int x = {x0}, y = {y0}, flag = {flag0}, n = 0;\n    unsigned u = {u0};\n    double d = {d0};"
    );
    for _ in 0..1 + g.rng.below(2) {
        let bound = g.pick(&["(a & 15)", "(b & 7) + 2", "(a >> 4) + 3"]);
        let counted = g.rng.chance(70);
        if counted {
            let _ = writeln!(g.out, "    for (int i = 0; i < {bound}; i++) {{");
        } else {
            // A counter stepped down, the loop written as a `while`.
            let _ = writeln!(
                g.out,
                "    {{\n    int i = {bound};\n    while (i > 0) {{\n        i = i - 1;"
            );
        }
        for _ in 0..2 + g.rng.below(4) {
            g.stmt("        ", "i", 1);
        }
        let _ = writeln!(g.out, "    }}");
        if !counted {
            let _ = writeln!(g.out, "    }}");
        }
        for _ in 0..1 + g.rng.below(3) {
            g.label("    ", Kind::Entry);
        }
    }
    g.out
        .push_str("    return x + y + flag + n + (int)u + (int)d;\n}\n");
    let n = g.next_label;
    (g.out, n, g.placed)
}
