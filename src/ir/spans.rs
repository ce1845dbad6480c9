//! The types the lowering gave the expressions of function bodies, each at its byte range in
//! the lowered text, with every body's tokens: what the annotator reads its operand types from,
//! so that C is typed once.

use std::collections::{BTreeMap, HashMap};

use super::CType;

/// A token of a function body in the lowered text: a digest of its text, its byte range and line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub digest: u64,
    pub start: u32,
    pub end: u32,
    /// Its line in the lowered text (0-based).
    pub row: u32,
}

/// A token's text as the number tokens are compared by ([`Token::digest`]): FNV-1a, the same
/// on every run and machine.
pub fn digest(text: &[u8]) -> u64 {
    text.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// What the lowering read of each function body: its tokens, and the C type of each
/// expression it lowered (an expression lowered twice with two types has none). A value's
/// type is the one its read gives (a narrow bit-field's is `int`); a place only assigned to
/// has its own.
#[derive(Clone, Debug, Default)]
pub struct SourceTypes {
    /// Each defined function's body tokens, in order.
    pub bodies: BTreeMap<String, Vec<Token>>,
    values: HashMap<(u32, u32), Option<CType>>,
    places: HashMap<(u32, u32), Option<CType>>,
}

/// Records `ty` at `key`: a second, different type leaves none.
fn agreed(types: &mut HashMap<(u32, u32), Option<CType>>, key: (u32, u32), ty: &CType) {
    match types.get_mut(&key) {
        None => {
            types.insert(key, Some(ty.clone()));
        }
        Some(seen) => {
            if seen.as_ref() != Some(ty) {
                *seen = None;
            }
        }
    }
}

impl SourceTypes {
    /// Records that the expression at `range` of the lowered text has type `ty` as a value.
    pub fn record(&mut self, range: (usize, usize), ty: &CType) {
        agreed(&mut self.values, (range.0 as u32, range.1 as u32), ty);
    }

    /// Records that the lvalue at `range` of the lowered text designates an object of type `ty`.
    pub fn record_place(&mut self, range: (usize, usize), ty: &CType) {
        agreed(&mut self.places, (range.0 as u32, range.1 as u32), ty);
    }

    /// The type of the expression at `range` of the lowered text, when the lowering gave it one:
    /// its value's, else its place's.
    pub fn type_at(&self, range: (u32, u32)) -> Option<&CType> {
        match self.values.get(&range) {
            Some(t) => t.as_ref(),
            None => self.places.get(&range)?.as_ref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expression_typed_twice_alike_keeps_its_type_and_a_value_outranks_its_place() {
        let mut t = SourceTypes::default();
        t.record((0, 3), &CType::INT);
        t.record((0, 3), &CType::INT);
        t.record((4, 5), &CType::INT);
        t.record((4, 5), &CType::ULONG);
        assert_eq!(t.type_at((0, 3)), Some(&CType::INT));
        assert_eq!(t.type_at((4, 5)), None);
        assert_eq!(t.type_at((9, 9)), None);
        // A narrow bit-field: the place is unsigned, its read an `int`.
        t.record_place((6, 9), &CType::Int(crate::ir::IntKind::UInt));
        assert_eq!(
            t.type_at((6, 9)),
            Some(&CType::Int(crate::ir::IntKind::UInt))
        );
        t.record((6, 9), &CType::INT);
        assert_eq!(t.type_at((6, 9)), Some(&CType::INT));
        assert_eq!(digest(b"x"), digest(b"x"));
        assert_ne!(digest(b"x"), digest(b"y"));
    }
}
