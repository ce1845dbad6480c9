//! C types of the IR: LP64 integer kinds, pointers, arrays, functions and laid-out records.

use std::fmt;

/// Integer kinds with their LP64 (x86_64 Linux) widths and signedness.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum IntKind {
    Bool,
    Char,
    SChar,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    LongLong,
    ULongLong,
    Int128,
    UInt128,
}

impl IntKind {
    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            IntKind::Bool | IntKind::Char | IntKind::SChar | IntKind::UChar => 8,
            IntKind::Short | IntKind::UShort => 16,
            IntKind::Int | IntKind::UInt => 32,
            IntKind::Long | IntKind::ULong | IntKind::LongLong | IntKind::ULongLong => 64,
            IntKind::Int128 | IntKind::UInt128 => 128,
        }
    }

    /// Plain `char` is signed on x86_64 Linux.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            IntKind::Char
                | IntKind::SChar
                | IntKind::Short
                | IntKind::Int
                | IntKind::Long
                | IntKind::LongLong
                | IntKind::Int128
        )
    }

    /// Conversion rank (C11 6.3.1.1); equal ranks for signed/unsigned pairs.
    pub fn rank(self) -> u8 {
        match self {
            IntKind::Bool => 0,
            IntKind::Char | IntKind::SChar | IntKind::UChar => 1,
            IntKind::Short | IntKind::UShort => 2,
            IntKind::Int | IntKind::UInt => 3,
            IntKind::Long | IntKind::ULong => 4,
            IntKind::LongLong | IntKind::ULongLong => 5,
            IntKind::Int128 | IntKind::UInt128 => 6,
        }
    }

    /// The unsigned kind of the same rank.
    pub fn to_unsigned(self) -> IntKind {
        match self {
            IntKind::Char | IntKind::SChar => IntKind::UChar,
            IntKind::Short => IntKind::UShort,
            IntKind::Int => IntKind::UInt,
            IntKind::Long => IntKind::ULong,
            IntKind::LongLong => IntKind::ULongLong,
            IntKind::Int128 => IntKind::UInt128,
            other => other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IntKind::Bool => "_Bool",
            IntKind::Char => "char",
            IntKind::SChar => "signed char",
            IntKind::UChar => "unsigned char",
            IntKind::Short => "short",
            IntKind::UShort => "unsigned short",
            IntKind::Int => "int",
            IntKind::UInt => "unsigned int",
            IntKind::Long => "long",
            IntKind::ULong => "unsigned long",
            IntKind::LongLong => "long long",
            IntKind::ULongLong => "unsigned long long",
            IntKind::Int128 => "__int128",
            IntKind::UInt128 => "unsigned __int128",
        }
    }

    /// Wraps `value` to this kind's range (two's complement), as a C conversion does.
    pub fn wrap(self, value: i128) -> i128 {
        if self == IntKind::Bool {
            return i128::from(value != 0);
        }
        let bits = self.bits();
        if bits == 128 {
            return value;
        }
        let mask = (1i128 << bits) - 1;
        let low = value & mask;
        if self.is_signed() && low >> (bits - 1) == 1 {
            low - (1i128 << bits)
        } else {
            low
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FloatKind {
    Float,
    Double,
    LongDouble,
}

impl FloatKind {
    pub fn size(self) -> u64 {
        match self {
            FloatKind::Float => 4,
            FloatKind::Double => 8,
            FloatKind::LongDouble => 16,
        }
    }
}

/// Index of a struct or union in [`crate::ir::Program::records`].
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct RecordId(pub u32);

/// A C type. Enums are their underlying integer kind; qualifiers are dropped except where the
/// front end needs them (volatile variables are tracked on the variable).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CType {
    Void,
    Int(IntKind),
    Float(FloatKind),
    Pointer(Box<CType>),
    /// Element type and length; `None` for an incomplete array (`int a[]`).
    Array(Box<CType>, Option<u64>),
    Function(Box<FuncType>),
    Record(RecordId),
    /// A type the front end could not resolve; values of it are unconstrained.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FuncType {
    pub ret: CType,
    pub params: Vec<CType>,
    pub variadic: bool,
    /// False for K&R declarations and `f()`: arguments get the default promotions.
    pub prototyped: bool,
    pub noreturn: bool,
}

impl CType {
    pub const INT: CType = CType::Int(IntKind::Int);
    pub const ULONG: CType = CType::Int(IntKind::ULong);
    pub const LONG: CType = CType::Int(IntKind::Long);

    pub fn ptr_to(t: CType) -> CType {
        CType::Pointer(Box::new(t))
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, CType::Int(_))
    }
    pub fn is_pointer(&self) -> bool {
        matches!(self, CType::Pointer(_))
    }
    pub fn is_arithmetic(&self) -> bool {
        matches!(self, CType::Int(_) | CType::Float(_))
    }
    pub fn is_scalar(&self) -> bool {
        matches!(self, CType::Int(_) | CType::Float(_) | CType::Pointer(_))
    }
    pub fn is_aggregate(&self) -> bool {
        matches!(self, CType::Array(..) | CType::Record(_))
    }
    pub fn int_kind(&self) -> Option<IntKind> {
        match self {
            CType::Int(k) => Some(*k),
            _ => None,
        }
    }
    pub fn pointee(&self) -> Option<&CType> {
        match self {
            CType::Pointer(t) | CType::Array(t, _) => Some(t),
            _ => None,
        }
    }
    pub fn func(&self) -> Option<&FuncType> {
        match self {
            CType::Function(f) => Some(f),
            CType::Pointer(t) => match &**t {
                CType::Function(f) => Some(f),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A field of a laid-out struct or union.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Field {
    /// Empty for an anonymous member (its fields are reachable through it).
    pub name: String,
    pub ty: CType,
    /// Byte offset of the field (of its storage unit, for a bit-field).
    pub offset: u64,
    /// For a bit-field: bit offset inside the storage unit and width.
    pub bits: Option<(u32, u32)>,
}

/// A struct or union with its System V x86_64 layout.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub tag: Option<String>,
    pub is_union: bool,
    pub fields: Vec<Field>,
    pub size: u64,
    pub align: u64,
    /// False until the body is seen (`struct s;` or use before definition).
    pub complete: bool,
}

/// Size and alignment of types need the record table, so they live on this view.
pub struct Layout<'a> {
    pub records: &'a [Record],
}

impl Layout<'_> {
    pub fn size_of(&self, ty: &CType) -> Option<u64> {
        match ty {
            CType::Void => Some(1), // GNU: sizeof(void) == 1, pointer arithmetic on void*
            CType::Int(k) => Some(u64::from(k.bits() / 8)),
            CType::Float(f) => Some(f.size()),
            CType::Pointer(_) => Some(8),
            CType::Array(elem, Some(n)) => self.size_of(elem)?.checked_mul(*n),
            CType::Array(_, None) => Some(0),
            CType::Function(_) => Some(1),
            CType::Record(id) => {
                let r = self.records.get(id.0 as usize)?;
                r.complete.then_some(r.size)
            }
            CType::Unknown => None,
        }
    }

    pub fn align_of(&self, ty: &CType) -> Option<u64> {
        match ty {
            CType::Array(elem, _) => self.align_of(elem),
            CType::Record(id) => {
                let r = self.records.get(id.0 as usize)?;
                r.complete.then_some(r.align)
            }
            CType::Void | CType::Function(_) => Some(1),
            CType::Unknown => None,
            other => self.size_of(other),
        }
    }
}

impl fmt::Display for CType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CType::Void => write!(f, "void"),
            CType::Int(k) => write!(f, "{}", k.name()),
            CType::Float(FloatKind::Float) => write!(f, "float"),
            CType::Float(FloatKind::Double) => write!(f, "double"),
            CType::Float(FloatKind::LongDouble) => write!(f, "long double"),
            CType::Pointer(t) => write!(f, "{t}*"),
            CType::Array(..) => {
                // C order: the outermost dimension first (`int[2][3]`).
                let mut dims = String::new();
                let mut t = self;
                while let CType::Array(elem, n) = t {
                    match n {
                        Some(n) => dims.push_str(&format!("[{n}]")),
                        None => dims.push_str("[]"),
                    }
                    t = elem;
                }
                write!(f, "{t}{dims}")
            }
            CType::Function(ft) => {
                write!(f, "{}(", ft.ret)?;
                for (i, p) in ft.params.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{p}")?;
                }
                if ft.variadic {
                    write!(f, ", ...")?;
                }
                write!(f, ")")
            }
            CType::Record(id) => write!(f, "record#{}", id.0),
            CType::Unknown => write!(f, "?"),
        }
    }
}

/// Integer promotion (C11 6.3.1.1p2): kinds of rank below `int` become `int` (every such kind
/// fits in `int` under LP64).
pub fn promote(kind: IntKind) -> IntKind {
    if kind.rank() < IntKind::Int.rank() {
        IntKind::Int
    } else {
        kind
    }
}

/// The usual arithmetic conversions (C11 6.3.1.8) on two promoted integer kinds.
pub fn usual_arithmetic(a: IntKind, b: IntKind) -> IntKind {
    let (a, b) = (promote(a), promote(b));
    if a == b {
        return a;
    }
    if a.is_signed() == b.is_signed() {
        return if a.rank() >= b.rank() { a } else { b };
    }
    let (s, u) = if a.is_signed() { (a, b) } else { (b, a) };
    if u.rank() >= s.rank() {
        u
    } else if s.bits() > u.bits() {
        s
    } else {
        s.to_unsigned()
    }
}

/// The rank of a real floating kind (C11 6.3.1.8): `float` < `double` < `long double`.
pub fn float_rank(kind: FloatKind) -> u8 {
    match kind {
        FloatKind::Float => 1,
        FloatKind::Double => 2,
        FloatKind::LongDouble => 3,
    }
}

/// The type both operands convert to when at least one is floating (C11 6.3.1.8): the floating
/// kind of higher rank (an integer operand takes the other's); `double` when neither is.
pub fn float_common(a: &CType, b: &CType) -> CType {
    let rank = |t: &CType| match t {
        CType::Float(k) => float_rank(*k),
        _ => 0,
    };
    let (ra, rb) = (rank(a), rank(b));
    match (a, b) {
        (CType::Float(x), _) if ra >= rb => CType::Float(*x),
        (_, CType::Float(y)) => CType::Float(*y),
        _ => CType::Float(FloatKind::Double),
    }
}

/// The common type of two arithmetic operands (C11 6.3.1.8); None when either is not
/// arithmetic.
pub fn arithmetic_common(a: &CType, b: &CType) -> Option<CType> {
    match (a, b) {
        (CType::Int(x), CType::Int(y)) => Some(CType::Int(usual_arithmetic(*x, *y))),
        (x, y) if x.is_arithmetic() && y.is_arithmetic() => Some(float_common(x, y)),
        _ => None,
    }
}

/// The type of `c ? a : b` (C11 6.5.15).
pub fn conditional_type(a: &CType, b: &CType) -> CType {
    if let Some(t) = arithmetic_common(a, b) {
        return t;
    }
    match (a, b) {
        (CType::Pointer(p), CType::Pointer(q)) => {
            if **p == CType::Void || **q == CType::Void {
                CType::ptr_to(CType::Void)
            } else {
                a.clone()
            }
        }
        (CType::Pointer(_), CType::Int(_)) => a.clone(),
        (CType::Int(_), CType::Pointer(_)) => b.clone(),
        (CType::Array(e, _), _) | (_, CType::Array(e, _)) => CType::Pointer(e.clone()),
        (CType::Function(_), _) => CType::ptr_to(a.clone()),
        (_, CType::Function(_)) => CType::ptr_to(b.clone()),
        (x, y) if x == y => x.clone(),
        (CType::Void, _) | (_, CType::Void) => CType::Void,
        _ => CType::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_follows_twos_complement() {
        assert_eq!(IntKind::UChar.wrap(256), 0);
        assert_eq!(IntKind::SChar.wrap(128), -128);
        assert_eq!(IntKind::UInt.wrap(-1), 4_294_967_295);
        assert_eq!(IntKind::Bool.wrap(7), 1);
        assert_eq!(IntKind::Int.wrap(1 << 31), -(1 << 31));
    }

    #[test]
    fn usual_arithmetic_conversions_follow_c11() {
        assert_eq!(
            usual_arithmetic(IntKind::UChar, IntKind::UChar),
            IntKind::Int
        );
        assert_eq!(usual_arithmetic(IntKind::Int, IntKind::UInt), IntKind::UInt);
        assert_eq!(
            usual_arithmetic(IntKind::Long, IntKind::UInt),
            IntKind::Long
        );
        assert_eq!(
            usual_arithmetic(IntKind::LongLong, IntKind::ULong),
            IntKind::ULongLong
        );
        assert_eq!(
            usual_arithmetic(IntKind::Short, IntKind::UShort),
            IntKind::Int
        );
    }

    #[test]
    fn lp64_widths() {
        assert_eq!(IntKind::Long.bits(), 64);
        assert_eq!(IntKind::Int.bits(), 32);
        assert!(IntKind::Char.is_signed());
    }

    #[test]
    fn floating_operands_take_the_higher_rank() {
        let f = CType::Float(FloatKind::Float);
        let d = CType::Float(FloatKind::Double);
        let ld = CType::Float(FloatKind::LongDouble);
        let i = CType::Int(IntKind::Long);
        assert_eq!(arithmetic_common(&f, &d), Some(d.clone()));
        assert_eq!(arithmetic_common(&ld, &d), Some(ld.clone()));
        assert_eq!(arithmetic_common(&i, &f), Some(f.clone()));
        assert_eq!(arithmetic_common(&f, &i), Some(f.clone()));
        assert_eq!(
            arithmetic_common(&CType::Int(IntKind::UChar), &CType::Int(IntKind::Short)),
            Some(CType::Int(IntKind::Int))
        );
        assert_eq!(arithmetic_common(&CType::ptr_to(CType::Void), &i), None);
        assert_eq!(conditional_type(&i, &d), d);
        assert_eq!(
            conditional_type(&CType::ptr_to(CType::Void), &CType::ptr_to(i.clone())),
            CType::ptr_to(CType::Void)
        );
    }
}
