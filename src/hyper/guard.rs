//! Guards of hyperlabels: C-like predicates over the names that labels bind (`pa!=pb`,
//! `cA1 == cB1 && cA2== cB2`), parsed once and evaluated over an environment of bound values.

use std::collections::BTreeMap;

/// A guard expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guard {
    /// No constraint (an empty guard).
    True,
    Name(String),
    Int(i64),
    Not(Box<Guard>),
    Neg(Box<Guard>),
    Bin(Op, Box<Guard>, Box<Guard>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
}

/// Bound values: a name to the value it took.
pub type Env = BTreeMap<String, i64>;

impl Guard {
    /// The guard written `text` (blank: no constraint).
    pub fn parse(text: &str) -> Result<Guard, String> {
        let tokens = tokens(text)?;
        if tokens.is_empty() {
            return Ok(Guard::True);
        }
        let mut p = Parser { tokens, at: 0 };
        let g = p.expr(0)?;
        match p.tokens.get(p.at) {
            None => Ok(g),
            Some(t) => Err(format!("unexpected `{t}` in guard `{}`", text.trim())),
        }
    }

    /// The names it reads.
    pub fn names(&self, out: &mut Vec<String>) {
        match self {
            Guard::Name(n) => {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
            Guard::Not(g) | Guard::Neg(g) => g.names(out),
            Guard::Bin(_, a, b) => {
                a.names(out);
                b.names(out);
            }
            Guard::True | Guard::Int(_) => {}
        }
    }

    /// Its value over `env` (C's: non-zero is true); None when it reads a name `env` lacks.
    pub fn eval(&self, env: &Env) -> Option<i64> {
        Some(match self {
            Guard::True => 1,
            Guard::Int(v) => *v,
            Guard::Name(n) => *env.get(n)?,
            Guard::Not(g) => i64::from(g.eval(env)? == 0),
            Guard::Neg(g) => g.eval(env)?.wrapping_neg(),
            Guard::Bin(Op::And, a, b) => i64::from(a.eval(env)? != 0 && b.eval(env)? != 0),
            Guard::Bin(Op::Or, a, b) => i64::from(a.eval(env)? != 0 || b.eval(env)? != 0),
            Guard::Bin(op, a, b) => {
                let (x, y) = (a.eval(env)?, b.eval(env)?);
                match op {
                    Op::Eq => i64::from(x == y),
                    Op::Ne => i64::from(x != y),
                    Op::Lt => i64::from(x < y),
                    Op::Le => i64::from(x <= y),
                    Op::Gt => i64::from(x > y),
                    Op::Ge => i64::from(x >= y),
                    Op::Add => x.wrapping_add(y),
                    Op::Sub => x.wrapping_sub(y),
                    Op::And | Op::Or => unreachable!("handled above"),
                }
            }
        })
    }

    pub fn holds(&self, env: &Env) -> bool {
        self.eval(env).is_some_and(|v| v != 0)
    }
}

fn tokens(text: &str) -> Result<Vec<String>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(text[start..i].to_string());
        } else {
            let two = text.get(i..i + 2).unwrap_or("");
            if ["&&", "||", "==", "!=", "<=", ">="].contains(&two) {
                out.push(two.to_string());
                i += 2;
            } else if b"()!<>+-".contains(&c) {
                out.push((c as char).to_string());
                i += 1;
            } else {
                return Err(format!(
                    "unexpected `{}` in guard `{}`",
                    c as char,
                    text.trim()
                ));
            }
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<String>,
    at: usize,
}

/// Binary operators by precedence level, loosest first.
const LEVELS: [&[(&str, Op)]; 5] = [
    &[("||", Op::Or)],
    &[("&&", Op::And)],
    &[("==", Op::Eq), ("!=", Op::Ne)],
    &[("<", Op::Lt), ("<=", Op::Le), (">", Op::Gt), (">=", Op::Ge)],
    &[("+", Op::Add), ("-", Op::Sub)],
];

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(String::as_str)
    }

    fn expr(&mut self, level: usize) -> Result<Guard, String> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.expr(level + 1)?;
        while let Some(op) = self
            .peek()
            .and_then(|t| LEVELS[level].iter().find(|(s, _)| *s == t))
            .map(|(_, op)| *op)
        {
            self.at += 1;
            let right = self.expr(level + 1)?;
            left = Guard::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Guard, String> {
        let t = self.peek().ok_or("a guard ends too early")?.to_string();
        self.at += 1;
        match t.as_str() {
            "!" => Ok(Guard::Not(Box::new(self.unary()?))),
            "-" => Ok(Guard::Neg(Box::new(self.unary()?))),
            "(" => {
                let g = self.expr(0)?;
                if self.peek() != Some(")") {
                    return Err("a `(` without its `)` in a guard".into());
                }
                self.at += 1;
                Ok(g)
            }
            t if t.as_bytes()[0].is_ascii_digit() => t
                .parse()
                .map(Guard::Int)
                .map_err(|_| format!("`{t}` is not a number")),
            t if t.as_bytes()[0].is_ascii_alphabetic() || t.starts_with('_') => {
                Ok(Guard::Name(t.to_string()))
            }
            t => Err(format!("unexpected `{t}` in a guard")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, i64)]) -> Env {
        pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    #[test]
    fn ltest_guards_parse_and_evaluate() {
        let cacc = Guard::parse("pa!=pb").unwrap();
        assert!(cacc.holds(&env(&[("pa", 1), ("pb", 0)])));
        assert!(!cacc.holds(&env(&[("pa", 1), ("pb", 1)])));
        // A name the environment lacks: not satisfied.
        assert!(!cacc.holds(&env(&[("pa", 1)])));
        let racc = Guard::parse("cA1 == cB1 && cA2== cB2").unwrap();
        assert!(racc.holds(&env(&[("cA1", 1), ("cB1", 1), ("cA2", 0), ("cB2", 0)])));
        assert!(!racc.holds(&env(&[("cA1", 1), ("cB1", 0), ("cA2", 0), ("cB2", 0)])));
        assert_eq!(Guard::parse(" ").unwrap(), Guard::True);
        assert!(Guard::True.holds(&Env::new()));
        let mut names = Vec::new();
        racc.names(&mut names);
        assert_eq!(names, ["cA1", "cB1", "cA2", "cB2"]);
        // Precedence: `a || b && c` is `a || (b && c)`; `!` binds tightest.
        let g = Guard::parse("a || b && !c").unwrap();
        assert!(g.holds(&env(&[("a", 0), ("b", 1), ("c", 0)])));
        assert!(!g.holds(&env(&[("a", 0), ("b", 1), ("c", 1)])));
        assert!(Guard::parse("a == (b").is_err());
        assert!(Guard::parse("a ? b").is_err());
    }
}
