//! Programs whose loops fill arrays, check or store their cells, and read them back in later
//! loops: the bounds the engine proves on the cells a nest went over
//! (`covprune::vc::encode`'s cells) must never exclude a value some run reads. Arrays are
//! local and zeroed first (no read of an indeterminate value), or, in a third of the
//! programs, globals (each run starts with what the run before left), indexed by one counter or two
//! (`t[i * c + j]`, read back column by column). Traps: a check loop that steps by two, starts
//! at one or stops at a zero; a read loop that goes past the checked cells; a write through a
//! pointer into the array after the check; floating-point cells that are halves, or negative.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::generator::{Generated, Kind, Placed, Rng, PROGRAM_START};

struct CellGen {
    rng: Rng,
    out: String,
    next_label: u32,
    placed: BTreeMap<u32, Placed>,
}

impl CellGen {
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        self.rng.pick(items)
    }

    fn small(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.small(lo, hi)
    }

    fn label(&mut self, indent: &str, pred: &str) {
        self.next_label += 1;
        let id = self.next_label;
        self.placed.insert(
            id,
            Placed {
                kind: Kind::Loop,
                segment: 0,
            },
        );
        let _ = writeln!(self.out, "{indent}pc_label({pred}, {id}, \"T\");");
    }

    /// Labels on an integer cell `v` and a floating-point one `d`.
    fn cell_labels(&mut self, indent: &str) {
        for _ in 0..1 + self.rng.below(3) {
            let pred = match self.rng.below(6) {
                0 => "v < 0".to_string(),
                1 => format!("v < {}", self.small(-3, 2)),
                2 => format!("v == {}", self.small(-2, 3)),
                3 => "d < 0".to_string(),
                4 => "d > 0 && d < 1".to_string(),
                _ => format!("d > {}.0", self.small(0, 3)),
            };
            self.label(indent, &pred);
        }
    }

    /// The check of one loop over `t`'s first `n` cells, maybe a trap.
    fn check(&mut self) {
        let (start, step) = match self.rng.below(6) {
            0 => ("1", "i++"),
            1 => ("0", "i += 2"),
            _ => ("0", "i++"),
        };
        let limit = self.small(-2, 1);
        let _ = writeln!(self.out, "    for (int i = {start}; i < n; {step}) {{");
        if self.rng.chance(20) {
            let stop = self.small(0, 3);
            let _ = writeln!(self.out, "        if (t[i] == {stop}) break;");
        }
        let _ = writeln!(self.out, "        if (t[i] < {limit}) return -1;");
        let _ = writeln!(self.out, "    }}");
    }
}

/// A program of the cell harness (see the module's doc).
pub(crate) fn generate_cells(seed: u64) -> Generated {
    let mut g = CellGen {
        rng: Rng::seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        out: format!("{PROGRAM_START}    int t[16] = {{0}};\n    double w[16] = {{0}};\n"),
        next_label: 0,
        placed: BTreeMap::new(),
    };
    let two = g.rng.chance(35);
    if two {
        // Two counters: `r` rows of `c` cells, checked row by row, read column by column.
        let _ = writeln!(g.out, "    int r = (a & 3) + 1, c = ((a >> 2) & 3) + 1;");
        let fill = g.pick(&["(b >> (i + j)) + 1", "(a >> (i + j)) & 3", "b + i - j"]);
        let _ = writeln!(
            g.out,
            "    for (int i = 0; i < r; i++)\n        for (int j = 0; j < c; j++)\n            t[i * c + j] = {fill};"
        );
        let limit = g.small(-1, 1);
        let inner = g.pick(&["c", "c", "(b & 3) + 1"]);
        let _ = writeln!(
            g.out,
            "    for (int i = 0; i < r; i++)\n        for (int j = 0; j < {inner}; j++)\n            if (t[i * c + j] < {limit}) return -1;"
        );
        let rows = g.pick(&["r", "r", "(b & 3) + 1"]);
        let _ = writeln!(
            g.out,
            "    for (int y = 0; y < c; y++)\n        for (int x = 0; x < {rows}; x++) {{\n            int v = t[x * c + y];\n            double d = (double)v / 2.0;"
        );
        g.cell_labels("            ");
        g.out.push_str("        }\n");
    } else {
        let bound = g.pick(&["(a & 7) + 1", "(b & 7) + 1", "(a >> 5) + 2"]);
        let _ = writeln!(g.out, "    int n = {bound};");
        let fill = g.pick(&["(b >> (i & 3)) + 1", "(a >> i) - 1", "i - (b & 3)", "b + i"]);
        let wfill = g.pick(&[
            "(double)(t[i] * t[i])",
            "(double)t[i]",
            "(double)(a >> i) / 2.0",
            "(double)(a & 15)",
        ]);
        let _ = writeln!(
            g.out,
            "    for (int i = 0; i < n; i++) {{\n        t[i] = {fill};\n        w[i] = {wfill};\n    }}"
        );
        g.check();
        if g.rng.chance(20) {
            let _ = writeln!(g.out, "    int *p = t + (a & 7);\n    *p = -(b & 3);");
        }
        let reads = g.pick(&["n", "n", "n", "(b & 7) + 1"]);
        let _ = writeln!(
            g.out,
            "    for (int j = 0; j < {reads}; j++) {{\n        int v = t[j];\n        double d = w[j];"
        );
        g.cell_labels("        ");
        g.out.push_str("    }\n");
    }
    g.out.push_str("    return t[0] + (int)w[1];\n}\n");
    // Drawn apart, so that a seed's program is the same but for where its arrays live.
    if Rng::seeded((seed ^ 0x5EED_0F61_0BA1) | 1).chance(33) {
        let locals = "    int t[16] = {0};\n    double w[16] = {0};\n";
        g.out = format!(
            "int t[16];\ndouble w[16];\n{}",
            g.out.replacen(locals, "", 1)
        );
    }
    let n = g.next_label;
    (g.out, n, g.placed)
}
