//! What covprune knows of C library functions: which never return, which always return, and
//! which write no memory the program can see.

/// Functions that never return, whatever their declaration says.
pub const NEVER_RETURNS: &[&str] = &[
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "abort",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert",
    "__builtin_trap",
    "__builtin_abort",
    "__builtin_exit",
    "__stack_chk_fail",
    "__chk_fail",
    "pthread_exit",
    "err",
    "errx",
    "verr",
    "verrx",
    "thrd_exit",
];

/// `<ctype.h>`'s classifiers and converters: each reads its argument and the locale's tables,
/// writes no memory and always returns.
pub const CTYPE: &[&str] = &[
    "isalnum", "isalpha", "iscntrl", "isdigit", "isgraph", "islower", "isprint", "ispunct",
    "isspace", "isupper", "isxdigit", "tolower", "toupper",
];

/// Whether the library function `name` always returns to its caller.
pub fn always_returns(name: &str) -> bool {
    ALWAYS_RETURN.contains(&name) || CTYPE.contains(&name)
}

/// Whether the library function `name` writes no memory of the program's.
pub fn writes_no_memory(name: &str) -> bool {
    WRITES_NO_MEMORY.contains(&name) || CTYPE.contains(&name)
}

/// Library functions that read nothing but their arguments and write nothing the program
/// reads (see `frontend/sites/effects.rs` on `errno`).
pub fn computes_from_arguments(name: &str) -> bool {
    const MATH: &[&str] = &[
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
        "acosh", "atanh", "exp", "exp2", "expm1", "log", "log10", "log2", "log1p", "pow", "sqrt",
        "cbrt", "hypot", "fabs", "floor", "ceil", "round", "trunc", "fmod", "fmin", "fmax",
        "ldexp", "erf", "erfc", "tgamma", "lgamma",
    ];
    const OTHER: &[&str] = &["abs", "labs", "llabs", "isblank"];
    let base = name
        .strip_suffix('f')
        .or_else(|| name.strip_suffix('l'))
        .filter(|b| MATH.contains(b));
    MATH.contains(&name) || base.is_some() || OTHER.contains(&name) || CTYPE.contains(&name)
}

/// Library functions known to return to their caller (they may fail, but they come back).
/// Anything external not listed here may not return (it could call `exit` or `longjmp`).
const ALWAYS_RETURN: &[&str] = &[
    "abs",
    "labs",
    "llabs",
    "atoi",
    "atol",
    "atoll",
    "strtol",
    "strtoul",
    "strtoll",
    "strtoull",
    "strtod",
    "strtof",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "memchr",
    "strlen",
    "strnlen",
    "strcpy",
    "strncpy",
    "strcat",
    "strncat",
    "strcmp",
    "strncmp",
    "strchr",
    "strrchr",
    "strstr",
    "strdup",
    "strndup",
    "strspn",
    "strcspn",
    "strpbrk",
    "strtok",
    "strerror",
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "vprintf",
    "vfprintf",
    "vsprintf",
    "vsnprintf",
    "puts",
    "fputs",
    "putchar",
    "fputc",
    "putc",
    "getchar",
    "fgetc",
    "getc",
    "fgets",
    "gets",
    "ungetc",
    "scanf",
    "fscanf",
    "sscanf",
    "fopen",
    "fclose",
    "fread",
    "fwrite",
    "fseek",
    "ftell",
    "rewind",
    "fflush",
    "feof",
    "ferror",
    "clearerr",
    "perror",
    "__ctype_b_loc",
    "__ctype_toupper_loc",
    "__ctype_tolower_loc",
    "time",
    "clock",
    "rand",
    "srand",
    "qsort",
    "bsearch",
    "getenv",
    "open",
    "close",
    "read",
    "write",
    "lseek",
    "unlink",
    "stat",
    "fstat",
    "lstat",
    "setjmp",
    "_setjmp",
    "__sigsetjmp",
    "sqrt",
    "sqrtf",
    "pow",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "trunc",
    "truncf",
    "round",
    "roundf",
    "fabs",
    "fabsf",
    "exp",
    "expf",
    "log",
    "sin",
    "cos",
    "__errno_location",
    "__builtin_memcpy",
    "__builtin_memset",
    "__builtin_strlen",
    "__builtin_va_start",
    "__builtin_va_copy",
    "__builtin_alloca",
    "alloca",
];

/// Math functions whose result covprune computes: IEEE-754 and C require the square root
/// correctly rounded and the others exact; of `exp`, `log`, `sin` and `cos`, only bounds are
/// known (`exp` never negative, NaN exactly for a NaN; `log` NaN for a NaN or below zero, not
/// negative from 1 up, not positive from 0 to 1: C's Annex F fixes `log(1)` at +0 and
/// `log(±0)` at −∞, and a result within an ulp of the logarithm keeps its sign; `sin` and
/// `cos` NaN exactly for a NaN or an infinity, else within [-1, 1], and `|sin(x)| <= |x|`: a
/// result within an ulp of the true one cannot pass a bound that is itself a
/// floating-point number, as 1 and `|x|` are).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math {
    Sqrt,
    Fabs,
    Floor,
    Ceil,
    Trunc,
    Round,
    Exp,
    Log,
    Sin,
    Cos,
}

/// The math function `name` is, with the width of its argument and result (64 for `double`,
/// 32 for the `f`-suffixed `float` versions).
pub fn math_function(name: &str) -> Option<(Math, u32)> {
    let name = name.strip_prefix("__builtin_").unwrap_or(name);
    let base = |n: &str| {
        Some(match n {
            "sqrt" => Math::Sqrt,
            "fabs" => Math::Fabs,
            "floor" => Math::Floor,
            "ceil" => Math::Ceil,
            "trunc" => Math::Trunc,
            "round" => Math::Round,
            "exp" => Math::Exp,
            "log" => Math::Log,
            "sin" => Math::Sin,
            "cos" => Math::Cos,
            _ => return None,
        })
    };
    let (m, width) = match base(name) {
        Some(m) => (m, 64),
        None => (base(name.strip_suffix('f')?)?, 32),
    };
    Some((m, width))
}

/// The `<math.h>` functions whose arguments are numbers only, in their `double` form: C11
/// 7.12.1 lets them write `errno` and nothing else the program can see (`lgamma`, which may
/// write `signgam`, and those given pointers are not among them).
const ERRNO_ONLY: &[&str] = &[
    "acos",
    "asin",
    "atan",
    "atan2",
    "cos",
    "sin",
    "tan",
    "acosh",
    "asinh",
    "atanh",
    "cosh",
    "sinh",
    "tanh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log10",
    "log1p",
    "log2",
    "logb",
    "ilogb",
    "ldexp",
    "scalbn",
    "scalbln",
    "cbrt",
    "fabs",
    "hypot",
    "pow",
    "sqrt",
    "erf",
    "erfc",
    "tgamma",
    "ceil",
    "floor",
    "nearbyint",
    "rint",
    "lrint",
    "llrint",
    "round",
    "lround",
    "llround",
    "trunc",
    "fmod",
    "remainder",
    "copysign",
    "nextafter",
    "fdim",
    "fmax",
    "fmin",
    "fma",
];

/// Does `name` write `errno` only, of what the program can see: a math function
/// ([`ERRNO_ONLY`], in its `double`, `float` or `long double` form, or as a `__builtin_`), or
/// `free` (the block it deallocates is read by no run without undefined behaviour; C11 7.5p3
/// lets it set `errno`)?
pub fn writes_only_errno(name: &str) -> bool {
    let name = name.strip_prefix("__builtin_").unwrap_or(name);
    let known = |n: &str| ERRNO_ONLY.contains(&n);
    name == "free"
        || known(name)
        || name.strip_suffix('f').is_some_and(known)
        || name.strip_suffix('l').is_some_and(known)
}

/// The allocators whose result covprune knows something of: null when the size asked is more
/// than `PTRDIFF_MAX` bytes (`calloc`: the product of its arguments, computed without
/// overflow). No object can be that big on a 64-bit target (its address space is smaller),
/// and the C libraries (glibc, musl), the sanitizers' allocators and jemalloc all refuse such
/// sizes with a null. Below that, an allocation may fail or succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    /// `malloc(n)`.
    Malloc,
    /// `calloc(n, m)`.
    Calloc,
    /// `realloc(p, n)`.
    Realloc,
}

/// The allocator `name` is.
pub fn allocator(name: &str) -> Option<Allocator> {
    match name.strip_prefix("__builtin_").unwrap_or(name) {
        "malloc" => Some(Allocator::Malloc),
        "calloc" => Some(Allocator::Calloc),
        "realloc" => Some(Allocator::Realloc),
        _ => None,
    }
}

/// How a library function that writes bytes of its first argument's object, and nothing else,
/// fills them ([`byte_write`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteWrite {
    /// `memset(p, c, n)`: `n` bytes, each `(unsigned char) c`.
    Set,
    /// `memcpy(p, s, n)` and `memmove(p, s, n)`: the `n` bytes at `s` as they were before the
    /// call (what `memmove` means, and `memcpy` for objects that do not overlap: an overlap is
    /// undefined behaviour).
    Copy,
}

/// The library functions whose writes are bytes of their first argument's object only.
pub fn byte_write(name: &str) -> Option<ByteWrite> {
    match name {
        "memset" | "__builtin_memset" => Some(ByteWrite::Set),
        "memcpy" | "memmove" | "__builtin_memcpy" => Some(ByteWrite::Copy),
        _ => None,
    }
}

/// Library functions that write no program-visible memory (they may read it).
const WRITES_NO_MEMORY: &[&str] = &[
    "strlen",
    "strnlen",
    "strcmp",
    "strncmp",
    "memcmp",
    "strchr",
    "strrchr",
    "strstr",
    "strspn",
    "strcspn",
    "strpbrk",
    "memchr",
    "abs",
    "labs",
    "llabs",
    "__ctype_b_loc",
    "__ctype_toupper_loc",
    "__ctype_tolower_loc",
    "__errno_location",
    "getenv",
    "__builtin_strlen",
];

/// What a library function does with the pointers it is given ([`pointer_effects`]). None of
/// the functions described keeps a pointer it is given (in a global or a static): that is
/// what lets a caller's objects passed to them keep a memory of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerEffects {
    /// The arguments (from this index on, all the rest) whose objects it may write.
    pub writes_args: &'static [usize],
    pub writes_rest_from: Option<usize>,
    /// Copies the bytes of the second argument's object into the first's (`memcpy`).
    pub copies: Option<(usize, usize)>,
    /// Stores a pointer into the object of the first argument into that of the second
    /// (`strtol`'s end pointer).
    pub stores_pointer: Option<(usize, usize)>,
    /// Its result points into the object of this argument (`strchr`, `memcpy`).
    pub returns_arg: Option<usize>,
    /// Its result points into memory outside the program's objects (`malloc`, `getenv`).
    pub returns_external: bool,
    /// It may write memory none of its arguments points to (streams, errno, the allocator).
    pub writes_external: bool,
    /// The objects it writes receive bytes from outside the program (a stream, a format).
    pub external_bytes: bool,
    /// The `printf`-style format argument: the arguments after it are written (by `%n`)
    /// unless it is a string literal without `%n` ([`format_writes`]).
    pub format_arg: Option<usize>,
}

const PURE: PointerEffects = PointerEffects {
    writes_args: &[],
    writes_rest_from: None,
    copies: None,
    stores_pointer: None,
    returns_arg: None,
    returns_external: false,
    writes_external: false,
    external_bytes: false,
    format_arg: None,
};

/// The pointer behaviour of a library function, when known; `None`: it may keep or write
/// anything it is given.
pub fn pointer_effects(name: &str) -> Option<PointerEffects> {
    let streams = PointerEffects {
        writes_external: true,
        ..PURE
    };
    let e = match name {
        "strlen" | "strnlen" | "strcmp" | "strncmp" | "memcmp" | "strspn" | "strcspn" | "abs"
        | "labs" | "llabs" | "__builtin_strlen" | "atoi" | "atol" | "atoll" => PURE,
        n if CTYPE.contains(&n) => PURE,
        "strchr" | "strrchr" | "strstr" | "strpbrk" | "memchr" => PointerEffects {
            returns_arg: Some(0),
            ..PURE
        },
        "getenv"
        | "__ctype_b_loc"
        | "__ctype_toupper_loc"
        | "__ctype_tolower_loc"
        | "__errno_location" => PointerEffects {
            returns_external: true,
            ..PURE
        },
        "malloc" | "calloc" | "fopen" => PointerEffects {
            returns_external: true,
            writes_external: true,
            ..PURE
        },
        "puts" | "putchar" | "fputs" | "fputc" | "putc" | "fflush" | "fclose" | "getc"
        | "fgetc" | "getchar" | "ungetc" | "feof" | "ferror" | "perror" | "free" | "exit"
        | "_exit" | "abort" | "__assert_fail" => streams,
        "printf" => PointerEffects {
            format_arg: Some(0),
            ..streams
        },
        "fprintf" => PointerEffects {
            format_arg: Some(1),
            ..streams
        },
        "memcpy" | "memmove" | "__builtin_memcpy" | "strcpy" | "strncpy" | "strcat" | "strncat" => {
            PointerEffects {
                writes_args: &[0],
                copies: Some((0, 1)),
                returns_arg: Some(0),
                ..PURE
            }
        }
        "memset" | "__builtin_memset" => PointerEffects {
            writes_args: &[0],
            returns_arg: Some(0),
            ..PURE
        },
        "fgets" => PointerEffects {
            external_bytes: true,
            writes_args: &[0],
            returns_arg: Some(0),
            writes_external: true,
            ..PURE
        },
        "gets" | "fread" => PointerEffects {
            external_bytes: true,
            writes_args: &[0],
            writes_external: true,
            ..PURE
        },
        "sprintf" | "snprintf" => PointerEffects {
            external_bytes: true,
            writes_args: &[0],
            writes_external: true,
            format_arg: Some(if name == "sprintf" { 1 } else { 2 }),
            ..PURE
        },
        "scanf" => PointerEffects {
            external_bytes: true,
            writes_rest_from: Some(1),
            writes_external: true,
            ..PURE
        },
        "sscanf" => PointerEffects {
            external_bytes: true,
            writes_rest_from: Some(2),
            writes_external: true,
            ..PURE
        },
        "fscanf" => PointerEffects {
            external_bytes: true,
            writes_rest_from: Some(2),
            writes_external: true,
            ..PURE
        },
        "strtol" | "strtoul" | "strtoll" | "strtoull" | "strtod" | "strtof" => PointerEffects {
            writes_args: &[1],
            stores_pointer: Some((0, 1)),
            writes_external: true,
            ..PURE
        },
        _ => return None,
    };
    Some(e)
}

/// May a `printf`-style format write through its arguments (a `%n` conversion)? Flags, width,
/// precision and length modifiers may stand between the `%` and the `n`.
pub fn format_writes(format: &[u8]) -> bool {
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        while i < format.len() && b"-+ #0123456789.*'lhjztLqI$".contains(&format[i]) {
            i += 1;
        }
        match format.get(i) {
            Some(b'n') => return true,
            Some(_) => i += 1,
            None => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{format_writes, math_function, Math};

    #[test]
    fn math_functions_are_known_with_their_format() {
        assert_eq!(math_function("sqrt"), Some((Math::Sqrt, 64)));
        assert_eq!(math_function("sqrtf"), Some((Math::Sqrt, 32)));
        assert_eq!(math_function("__builtin_fabs"), Some((Math::Fabs, 64)));
        assert_eq!(math_function("ceilf"), Some((Math::Ceil, 32)));
        assert_eq!(math_function("expf"), Some((Math::Exp, 32)));
        assert_eq!(math_function("logf"), Some((Math::Log, 32)));
        assert_eq!(math_function("sinf"), Some((Math::Sin, 32)));
        assert_eq!(math_function("__builtin_cos"), Some((Math::Cos, 64)));
        assert_eq!(math_function("log2"), None);
        assert_eq!(math_function("f"), None);
        assert_eq!(math_function("sqrtl"), None);
    }

    #[test]
    fn math_functions_without_pointers_and_free_write_only_errno() {
        use super::writes_only_errno;
        for name in [
            "log",
            "logf",
            "logl",
            "__builtin_sqrt",
            "atan2",
            "fmaxf",
            "ilogb",
            "free",
        ] {
            assert!(writes_only_errno(name), "{name}");
        }
        for name in [
            "lgamma", "frexp", "modf", "remquo", "nan", "logging", "printf", "f", "malloc",
            "realloc",
        ] {
            assert!(!writes_only_errno(name), "{name}");
        }
    }

    #[test]
    fn only_a_percent_n_conversion_writes() {
        assert!(!format_writes(b"%s: %d lines, 100%% done\n"));
        assert!(!format_writes(b"%-10.3s|%*d|%lu|%p"));
        assert!(format_writes(b"%s%n"));
        assert!(format_writes(b"%5hhn"));
        assert!(format_writes(b"%ln"));
        assert!(!format_writes(b"%%n"));
        assert!(!format_writes(b"trailing %"));
    }
}
