//! The C text of witnesses: each test is a function that sets the globals a model gave, fills
//! the buffers behind pointer arguments and calls the function under test. A test is written
//! twice from the same body: as an LTest driver (`TC_K.c`: includes the annotated file, whose
//! `pc_label` is a no-op unless a runtime defines it, and calls the test from `main`), and in
//! the runner covprune compiles, where `pc_label` reports each covered label on the spot.

use crate::ir::{CType, FloatKind, Program};
use crate::prune::witness::{Arg, Call, Origin, BUFFER_BEFORE, BUFFER_BYTES};

/// Wrappers of the allocators, before the annotated file in a runner or test whose calls fail
/// an allocation ([`super::allocations`]): they count the allocations since the test set
/// `covprune_fail_at`, and the one it names returns null. The macros have no parameters, so that
/// an allocator's address (a table of hooks such as `{ malloc, free, realloc }`) is a wrapper's
/// too. After `<stdlib.h>`, or after
/// [`ALLOCATORS`] for a preprocessed file, whose text declares them again (through the
/// macros, the wrappers: a later `extern` declaration keeps a `static` function's linkage).
const ALLOCATION_WRAPPERS: &str = "static long covprune_fail_at = -1;\n\
static long covprune_allocations;\n\
static int covprune_fails(void) { return covprune_allocations++ == covprune_fail_at; }\n\
static void *covprune_malloc(__SIZE_TYPE__ n) { return covprune_fails() ? (void *)0 : malloc(n); }\n\
static void *covprune_calloc(__SIZE_TYPE__ n, __SIZE_TYPE__ m) { return covprune_fails() ? (void *)0 : calloc(n, m); }\n\
static void *covprune_realloc(void *p, __SIZE_TYPE__ n) { return covprune_fails() ? (void *)0 : realloc(p, n); }\n\
#define malloc covprune_malloc\n\
#define calloc covprune_calloc\n\
#define realloc covprune_realloc\n";

/// The allocators' declarations, for a preprocessed file (whose text declares them too).
const ALLOCATORS: &str = "void *malloc(__SIZE_TYPE__ n);\n\
void *calloc(__SIZE_TYPE__ n, __SIZE_TYPE__ m);\n\
void *realloc(void *p, __SIZE_TYPE__ n);\n";

/// What goes before the annotated file of a runner or test whose calls fail an allocation:
/// [`ALLOCATION_WRAPPERS`] after `<stdlib.h>` (read first, so that its include guard keeps the
/// annotated file's `#include <stdlib.h>` from declaring the wrappers under the allocators'
/// names), or after [`ALLOCATORS`] for a `preprocessed` file.
fn allocation_wrappers(preprocessed: bool) -> String {
    let declarations = if preprocessed {
        ALLOCATORS
    } else {
        "#include <stdlib.h>\n"
    };
    format!("{declarations}{ALLOCATION_WRAPPERS}")
}

/// The name of test `k`'s function.
fn test_name(k: usize) -> String {
    format!("covprune_witness_{k}")
}

fn bytes_list(bytes: &[u8]) -> String {
    let items: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
    items.join(", ")
}

/// How a scalar parameter of type `ty` is declared (`None`: a pointer).
fn scalar_spelling(ty: &CType) -> Option<&'static str> {
    match ty {
        CType::Int(k) => Some(k.name()),
        CType::Float(FloatKind::Float) => Some("float"),
        CType::Float(_) => Some("double"),
        _ => None,
    }
}

/// The declaration of scalar `name` of type `ty` holding `bits`: a literal where C has one
/// for the value, else its bytes copied in (NaNs, infinities).
fn scalar(program: &Program, ty: &CType, spelling: &str, name: &str, bits: u128) -> String {
    let size = program.layout().size_of(ty).unwrap_or(8).min(16) as usize;
    let literal = match ty {
        CType::Int(k) => {
            let width = k.bits();
            let mask = if width >= 128 {
                u128::MAX
            } else {
                (1u128 << width) - 1
            };
            let v = bits & mask;
            if k.is_signed() && width <= 64 && v >> (width - 1) & 1 == 1 {
                let neg = (v as i128) - (1i128 << width);
                if neg == i128::from(i64::MIN) {
                    // The most negative value has no literal of its own.
                    Some(format!("({spelling})(-9223372036854775807LL - 1)"))
                } else {
                    Some(format!("({spelling})({neg}LL)"))
                }
            } else if width <= 64 {
                let suffix = if k.is_signed() { "LL" } else { "ULL" };
                Some(format!("({spelling}){v}{suffix}"))
            } else {
                None
            }
        }
        CType::Float(FloatKind::Float) => {
            let f = f32::from_bits(bits as u32);
            f.is_finite().then(|| format!("{f:e}f"))
        }
        CType::Float(_) => {
            let f = f64::from_bits(bits as u64);
            f.is_finite().then(|| format!("{f:e}"))
        }
        _ => None,
    };
    match literal {
        Some(l) => format!("  {spelling} {name} = {l};\n"),
        None => {
            let bytes: Vec<u8> = bits.to_le_bytes()[..size].to_vec();
            format!(
                "  {spelling} {name};\n  {{\n    static const unsigned char v[{size}] = {{{}}};\n    __builtin_memcpy(&{name}, v, sizeof v);\n  }}\n",
                bytes_list(&bytes)
            )
        }
    }
}

/// The body of test `k`: a function calling `call.function` as `call` says.
pub fn test_function(program: &Program, call: &Call, k: usize) -> String {
    let f = program
        .function(&call.function)
        .expect("calls are of the program's functions");
    let from = match call.origin {
        Origin::Model => "from a model of l{}",
        Origin::Palette => "for l{}, its scalar arguments from covprune's palette of values",
        Origin::Outliers => {
            "for l{}, small counts with one extreme value in its buffers (covprune's outlier tables)"
        }
        Origin::Filled => {
            "from a model of l{}, its structs' null pointer fields pointing at zeroed buffers"
        }
        Origin::Aliases => "from a model of l{}, two of its pointers into one buffer",
    };
    let mut from = from.replace("{}", &call.target.to_string());
    if call.hooks {
        from.push_str(", function-pointer fields set to the program's functions of their types");
    }
    if let Some(k) = call.fail_allocation {
        from.push_str(&format!(", allocation {k} (from 0) returning null"));
    }
    let mut out = format!(
        "/* {}: {from} */\nstatic void {}(void)\n{{\n",
        call.function,
        test_name(k)
    );
    for (g, runs) in &call.globals {
        let name = &program.globals[g.0 as usize].name;
        for (at, bytes) in runs {
            let place = if *at == 0 {
                format!("(void *)&{name}")
            } else {
                format!("(unsigned char *)&{name} + {at}")
            };
            out.push_str(&format!(
                "  {{\n    static const unsigned char v[{}] = {{{}}};\n    __builtin_memcpy({place}, v, sizeof v);\n  }}\n",
                bytes.len(),
                bytes_list(bytes)
            ));
        }
    }
    let mut names = Vec::with_capacity(call.args.len());
    for (i, (arg, p)) in call.args.iter().zip(&f.params).enumerate() {
        let ty = &f.local(*p).ty;
        let name = format!("a{i}");
        match (arg, scalar_spelling(ty)) {
            (Arg::Bits(bits), Some(spelling)) => {
                out.push_str(&scalar(program, ty, spelling, &name, *bits));
            }
            (Arg::Buffer(bytes), None) => {
                out.push_str(&buffer(&name, bytes));
                if call.hooks {
                    out.push_str(&hooks(program, ty, &name));
                }
            }
            (Arg::Linked { data, children }, None) => {
                out.push_str(&buffer(&name, data));
                if call.hooks {
                    out.push_str(&hooks(program, ty, &name));
                }
                for (c, (offset, bytes)) in children.iter().enumerate() {
                    let child = format!("{name}_{c}");
                    out.push_str(&buffer(&child, bytes));
                    out.push_str(&format!(
                        "  __builtin_memcpy((unsigned char *){name} + {offset}, &{child}, sizeof {child});\n"
                    ));
                }
            }
            (Arg::Alias { of, offset }, None) => out.push_str(&format!(
                "  void *{name} = (unsigned char *)a{of} + {offset};\n"
            )),
            (_, Some(spelling)) => out.push_str(&format!("  {spelling} {name} = 0;\n")),
            (_, None) => out.push_str(&format!("  void *{name} = (void *)0;\n")),
        }
        names.push(name);
    }
    if let Some(k) = call.fail_allocation {
        out.push_str(&format!(
            "  covprune_fail_at = {k};\n  covprune_allocations = 0;\n"
        ));
    }
    out.push_str(&format!("  {}({});\n}}\n", call.function, names.join(", ")));
    out
}

/// The function-pointer fields of what pointer `name` (of type `ty`) points to, each set to
/// a function of its type the program takes the address of ([`super::hooks`]).
fn hooks(program: &Program, ty: &CType, name: &str) -> String {
    let CType::Pointer(to) = ty else {
        return String::new();
    };
    super::hooks::Hooks::of(program)
        .of_pointee(program, to, BUFFER_BYTES - BUFFER_BEFORE)
        .into_iter()
        .map(|(at, f)| {
            format!("  *(void (**)(void))((unsigned char *){name} + {at}) = (void (*)(void)){f};\n")
        })
        .collect()
}

/// A buffer of [`BUFFER_BYTES`] holding `bytes` from [`BUFFER_BEFORE`] bytes in, where
/// pointer `name` points.
fn buffer(name: &str, bytes: &[u8]) -> String {
    let mut all = bytes.to_vec();
    all.resize(BUFFER_BYTES as usize, 0);
    format!(
        "  static unsigned char {name}_data[{BUFFER_BYTES}] __attribute__((aligned(16))) = {{{}}};\n  void *{name} = {name}_data + {BUFFER_BEFORE};\n",
        bytes_list(&all)
    )
}

/// `#include` of the annotated file with its `main` renamed, so that a driver has its own.
fn include(annotated: &str) -> String {
    format!("#define main covprune_program_main\n#include \"{annotated}\"\n#undef main\n")
}

/// An LTest driver (`TC_n.c`) for `call`: `annotated` is how it includes the annotated file
/// (`preprocessed`: [`preprocessed`]).
pub fn standalone(
    annotated: &str,
    program: &Program,
    call: &Call,
    n: usize,
    preprocessed: bool,
) -> String {
    let wrappers = if call.fail_allocation.is_some() {
        allocation_wrappers(preprocessed)
    } else {
        String::new()
    };
    format!(
        "/* A witness written by covprune: a call of {} that covers labels of {annotated}. */\n{wrappers}{}\n{}\nint main(void)\n{{\n  {}();\n  return 0;\n}}\n",
        call.function,
        include(annotated),
        test_function(program, call, n),
        test_name(n)
    )
}

/// Whether `text` (an annotated file) is already preprocessed: it includes no header of its
/// own, so the declarations of the C library are its text, not a header's that an include
/// guard would keep from being read twice.
pub fn preprocessed(text: &str) -> bool {
    !text.lines().any(|l| {
        l.trim_start()
            .strip_prefix('#')
            .is_some_and(|d| d.trim_start().starts_with("include"))
    })
}

/// The runner's own code, a translation unit of its own so that the headers it needs never
/// meet the annotated file's text (a preprocessed file holds the same declarations):
/// `covprune_hit` writes each covered label (`id` and a newline) at once to the file
/// `COVPRUNE_WITNESS_OUT` names, apart from what the program prints, so that a run that
/// crashes or is killed later has told what it covered before.
pub fn runtime() -> String {
    String::from(
        "#include <fcntl.h>\n\
         #include <stdlib.h>\n\
         #include <unistd.h>\n\
         static unsigned char covprune_seen[1 << 17];\n\
         static int covprune_fd = -1;\n\
         void covprune_hit(int c, long id)\n\
         {\n\
         \x20 char buf[24];\n\
         \x20 int n = 0;\n\
         \x20 unsigned long v = (unsigned long)id;\n\
         \x20 if (!c) return;\n\
         \x20 if (covprune_fd < 0) {\n\
         \x20   const char *path = getenv(\"COVPRUNE_WITNESS_OUT\");\n\
         \x20   if (!path) return;\n\
         \x20   covprune_fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);\n\
         \x20   if (covprune_fd < 0) return;\n\
         \x20 }\n\
         \x20 if (v < (1UL << 20)) {\n\
         \x20   if (covprune_seen[v >> 3] & (1 << (v & 7))) return;\n\
         \x20   covprune_seen[v >> 3] |= (unsigned char)(1 << (v & 7));\n\
         \x20 }\n\
         \x20 buf[sizeof buf - 1] = '\\n';\n\
         \x20 do { buf[sizeof buf - 2 - n++] = (char)('0' + v % 10); v /= 10; } while (v);\n\
         \x20 if (write(covprune_fd, buf + sizeof buf - 1 - n, (size_t)n + 1) < 0) return;\n\
         }\n",
    )
}

/// The runner's tests, compiled with [`runtime`]: every test, chosen by its number in
/// `argv[1]`, with `pc_label` calling the runtime's `covprune_hit`. `allocations`: the
/// allocators are wrapped as in a test ([`allocation_wrappers`]).
pub fn runner(annotated: &str, bodies: &[String], allocations: bool, preprocessed: bool) -> String {
    let mut out = String::from(
        "void covprune_hit(int c, long id);\n\
         #define pc_label(c, id, ...) covprune_hit((c) ? 1 : 0, (long)(id))\n",
    );
    if allocations {
        out.push_str(&allocation_wrappers(preprocessed));
    }
    out.push_str(&include(annotated));
    for b in bodies {
        out.push('\n');
        out.push_str(b);
    }
    out.push_str("\nint main(int argc, char **argv)\n{\n  long k = 0;\n  const char *s = argc > 1 ? argv[1] : \"\";\n  while (*s >= '0' && *s <= '9') k = k * 10 + (*s++ - '0');\n  switch (k) {\n");
    for k in 0..bodies.len() {
        out.push_str(&format!("  case {k}: {}(); break;\n", test_name(k)));
    }
    out.push_str("  default: return 2;\n  }\n  return 0;\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IntKind;

    #[test]
    fn scalars_are_literals_where_c_has_one_and_bytes_where_not() {
        let p = crate::frontend::test_program("int f(void) { return 0; }\n");
        let int = CType::Int(IntKind::Int);
        let long = CType::Int(IntKind::Long);
        let uint = CType::Int(IntKind::UInt);
        assert_eq!(
            scalar(&p, &int, "int", "a0", 0xffff_fffb),
            "  int a0 = (int)(-5LL);\n"
        );
        assert_eq!(
            scalar(&p, &long, "long", "a0", 1u128 << 63),
            "  long a0 = (long)(-9223372036854775807LL - 1);\n"
        );
        assert_eq!(
            scalar(&p, &uint, "unsigned int", "a0", 0xffff_ffff),
            "  unsigned int a0 = (unsigned int)4294967295ULL;\n"
        );
        let double = CType::Float(FloatKind::Double);
        assert_eq!(
            scalar(&p, &double, "double", "a0", u128::from(1.5f64.to_bits())),
            "  double a0 = 1.5e0;\n"
        );
        let float = CType::Float(FloatKind::Float);
        assert_eq!(
            scalar(&p, &float, "float", "a0", u128::from(0.1f32.to_bits())),
            "  float a0 = 1e-1f;\n"
        );
        // A NaN has no literal: its bytes are copied in.
        let nan = scalar(&p, &double, "double", "a0", u128::from(f64::NAN.to_bits()));
        assert!(nan.contains("__builtin_memcpy(&a0, v, sizeof v)"), "{nan}");
        assert!(nan.contains("{0, 0, 0, 0, 0, 0, 248, 127}"), "{nan}");
    }
}
