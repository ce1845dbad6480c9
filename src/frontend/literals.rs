//! C literals read once for the whole front end: number literals with their C11 types (LP64)
//! and string or character literals with their escapes decoded. The lowering and the
//! annotator's typing both use them.

use crate::ir::{FloatKind, IntKind};

/// A number literal's value and C type.
pub enum Number {
    Int(i128, IntKind),
    /// The value, exactly as the C compiler reads it (`None` where covprune cannot: a
    /// hexadecimal literal with more significant bits than its type holds, or `long double`).
    Float(Option<f64>, FloatKind),
}

/// Reads a C number literal with its type (C11 6.4.4.1, LP64).
pub fn parse_number(text: &str) -> Option<Number> {
    let lower = text.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    let is_float = if is_hex {
        lower.contains('.') || lower.contains('p')
    } else {
        lower.contains('.') || lower.contains('e')
    };
    if is_float {
        let body = lower.trim_end_matches(['f', 'l']);
        let kind = if lower.ends_with('f') {
            FloatKind::Float
        } else if lower.ends_with('l') {
            FloatKind::LongDouble
        } else {
            FloatKind::Double
        };
        let v = match kind {
            FloatKind::LongDouble => None,
            _ if is_hex => hex_float(&body[2..], kind),
            // Read directly in the literal's own format: rounding once, as C does.
            FloatKind::Float => body.parse::<f32>().ok().map(f64::from),
            FloatKind::Double => body.parse::<f64>().ok(),
        };
        return Some(Number::Float(v, kind));
    }
    let digits_end = lower.find(['u', 'l']).unwrap_or(lower.len());
    let (digits, suffix) = lower.split_at(digits_end);
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    let value = u128::from_str_radix(body, radix).ok()?;
    let unsigned = suffix.contains('u');
    let longs = suffix.matches('l').count();
    let decimal = radix == 10;
    let candidates: &[IntKind] = match (unsigned, longs, decimal) {
        (false, 0, true) => &[IntKind::Int, IntKind::Long],
        (false, 0, false) => &[IntKind::Int, IntKind::UInt, IntKind::Long, IntKind::ULong],
        (true, 0, _) => &[IntKind::UInt, IntKind::ULong],
        (false, 1, true) => &[IntKind::Long],
        (false, 1, false) => &[IntKind::Long, IntKind::ULong],
        (true, 1, _) => &[IntKind::ULong],
        (false, _, true) => &[IntKind::LongLong],
        (false, _, false) => &[IntKind::LongLong, IntKind::ULongLong],
        (true, _, _) => &[IntKind::ULongLong],
    };
    for k in candidates {
        let max: u128 = if k.is_signed() {
            (1u128 << (k.bits() - 1)) - 1
        } else {
            (1u128 << k.bits()) - 1
        };
        if value <= max {
            return Some(Number::Int(value as i128, *k));
        }
    }
    // Too large for its candidates: GCC gives it an unsigned type.
    (value <= u128::from(u64::MAX)).then_some(Number::Int(value as i128, IntKind::ULong))
}

/// The value of a hexadecimal floating literal's digits and binary exponent (`1.8p3`), when
/// it is zero, or its significand fits its type and the value is a normal number (then exact).
fn hex_float(text: &str, kind: FloatKind) -> Option<f64> {
    let (digits, exp) = text.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all = format!("{int}{frac}");
    let m = u64::from_str_radix(&all, 16).ok()?;
    if m == 0 {
        return Some(0.0);
    }
    let significant = 64 - m.leading_zeros() - m.trailing_zeros();
    let limit = if kind == FloatKind::Float { 24 } else { 53 };
    if significant > limit {
        return None;
    }
    // Exact: a significand that fits, scaled by a power of two, where the result is normal.
    let v = (m as f64) * 2f64.powi(exp.checked_sub(4 * frac.len() as i32)?);
    let normal = if kind == FloatKind::Float {
        (v as f32).is_normal()
    } else {
        v.is_normal()
    };
    normal.then_some(v)
}

/// The bytes of a string or character literal, escapes decoded (prefix and quotes removed).
pub fn decode_literal(text: &[u8]) -> Vec<u8> {
    let start = text
        .iter()
        .position(|b| !matches!(b, b'L' | b'u' | b'U' | b'8'))
        .unwrap_or(text.len());
    let t = &text[start..];
    let bytes: &[u8] = if t.len() >= 2 {
        &t[1..t.len() - 1]
    } else {
        &[]
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 >= bytes.len() {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = bytes[i];
        i += 1;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'e' | b'E' => out.push(27),
            b'x' => {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let digits = std::str::from_utf8(&bytes[start..i]).unwrap_or("0");
                let v = u32::from_str_radix(digits, 16).unwrap_or(0);
                out.push(v as u8);
            }
            b'0'..=b'7' => {
                let start = i - 1;
                while i < bytes.len() && i - start < 3 && (b'0'..=b'7').contains(&bytes[i]) {
                    i += 1;
                }
                let digits = std::str::from_utf8(&bytes[start..i]).unwrap_or("0");
                let v = u32::from_str_radix(digits, 8).unwrap_or(0);
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(text: &str) -> (i128, IntKind) {
        match parse_number(text) {
            Some(Number::Int(v, k)) => (v, k),
            _ => panic!("{text} is not an integer literal"),
        }
    }

    #[test]
    fn integer_literal_types_follow_c11() {
        assert_eq!(int("1"), (1, IntKind::Int));
        assert_eq!(int("2147483648"), (2_147_483_648, IntKind::Long));
        assert_eq!(int("0xFFFFFFFF"), (4_294_967_295, IntKind::UInt));
        assert_eq!(int("10u"), (10, IntKind::UInt));
        assert_eq!(int("10UL"), (10, IntKind::ULong));
        assert_eq!(int("017"), (15, IntKind::Int));
        assert_eq!(int("0"), (0, IntKind::Int));
        assert_eq!(int("1LL"), (1, IntKind::LongLong));
        for (text, kind) in [
            ("1.5", FloatKind::Double),
            ("1.5f", FloatKind::Float),
            ("2e3L", FloatKind::LongDouble),
            ("0x1p3", FloatKind::Double),
        ] {
            assert!(
                matches!(parse_number(text), Some(Number::Float(_, k)) if k == kind),
                "{text}"
            );
        }
    }

    #[test]
    fn float_literals_round_once_in_their_own_format() {
        let value = |text: &str| match parse_number(text) {
            Some(Number::Float(v, _)) => v,
            _ => panic!("{text} is not a floating literal"),
        };
        assert_eq!(value("0.1"), Some(0.1));
        // Read as a float, not as a double then narrowed.
        assert_eq!(value("0.1f"), Some(f64::from(0.1f32)));
        assert_eq!(value("1e-3"), Some(0.001));
        assert_eq!(value(".5"), Some(0.5));
        assert_eq!(value("0x1.8p3"), Some(12.0));
        assert_eq!(value("0x10p-4f"), Some(1.0));
        assert_eq!(value("0x0p0"), Some(0.0));
        // Subnormal or beyond the exponent range: not read.
        assert_eq!(value("0x1p-1070"), None);
        assert_eq!(value("0x1p-140f"), None);
        // More significant bits than a double holds, or a long double: not read.
        assert_eq!(value("0x1.00000000000001p0"), None);
        assert_eq!(value("1.5L"), None);
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(decode_literal(br#""a\n\x41\101\0""#), b"a\nAA\0".to_vec());
        assert_eq!(decode_literal(br"'\''"), b"'".to_vec());
        assert_eq!(decode_literal(b"\"caf\xe9\""), b"caf\xe9".to_vec());
    }
}
