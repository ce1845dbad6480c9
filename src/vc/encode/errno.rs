//! `errno` apart from the shared memory. The C library's math functions write no memory the
//! program can see but `errno` (C11 7.12.1), an `int` object of the library's own, distinct
//! from every object of the program; nor do `free` and an allocation whose block is in a
//! region of its own (but for that region: [`Enc::writes_errno_only`]). A call of one leaves
//! the shared memory as it was and gives `errno` a value of its own in the state
//! (`State::errno`): while it has one, the memory a run holds is `mem` with `errno`'s four
//! bytes replaced by that value.
//!
//! Why a read may skip those bytes: C11 6.5p7 lets a run access an object's stored value only
//! through a compatible type (or its signed or unsigned variant), an aggregate containing one,
//! or a character type, else the behaviour is undefined. So a read or write of a type that
//! cannot access an `int` (a 64-bit integer, a pointer, a floating type: [`may_be_errno`])
//! touches no byte of `errno` in a run without undefined behaviour: `mem` and the run's memory
//! agree on its bytes, and a write of one leaves `errno`'s value where it is. Every other use
//! of the shared memory (an `int`, `unsigned` or character read, a copy, a byte write, a join
//! of memories, what a callee is given) sees `errno` written back at its address
//! ([`Enc::shared_memory`]), and a write through it ends the value apart.
//!
//! `errno`'s address is an object like the program's (non-null, aligned, apart from the
//! others); a pointer the function is given may still point to it, as a test may pass
//! `&errno`. A program that declares a global `errno` of its own (old code does, without
//! `<errno.h>`) writes it by name: there these calls write memory as any other library
//! function does.

use super::*;

/// May a place of type `ty` be (a part of) `errno`, an `int`, in a run without undefined
/// behaviour? Integers below 64 bits may (`int`, `unsigned`, the character types; smaller
/// ones are kept too), and anything that is not a scalar.
pub(super) fn may_be_errno(ty: &CType) -> bool {
    match ty {
        CType::Float(_) | CType::Pointer(_) => false,
        CType::Int(k) => k.bits() < 64,
        _ => true,
    }
}

impl Enc<'_> {
    /// What a call `dst = callee(...)` writes when it writes `errno` and nothing else but
    /// regions (their bytes made any): a C library function that writes `errno` only
    /// ([`crate::libc::writes_only_errno`]), or a `malloc` or `calloc` whose block is in a
    /// region of its own (the allocator's state is nothing a run without undefined behaviour
    /// reads; a block that may be reached from outside is in the shared memory, whose bytes
    /// there are any only once it is havocked). `None` for any other call, or in a program
    /// with an `errno` of its own.
    pub(super) fn writes_errno_only(
        &mut self,
        callee: &Callee,
        dst: Option<&LValue>,
    ) -> Option<Vec<u32>> {
        let Callee::Direct(name) = callee else {
            return None;
        };
        if !self.errno_apart {
            return None;
        }
        if crate::libc::writes_only_errno(name) && self.sums.is_library(name) {
            return Some(Vec::new());
        }
        let block = self.pts.allocated_region(&self.f.name, name, dst?)?;
        Some(vec![block])
    }

    /// `errno`'s address: an object of 4 bytes, made at its first use.
    fn errno_addr(&mut self) -> T {
        if let Some(e) = self.errno_addr {
            return e;
        }
        let e = self.t.var(Sort::Bv(64), "&errno");
        self.t.register_object(e, 4);
        self.exactness.entry.insert(e);
        self.objects.push((e, 4, 4));
        self.errno_addr = Some(e);
        e
    }

    /// A call that writes `errno` only: `errno` holds any value after it.
    pub(super) fn write_errno(&mut self, st: &mut State) {
        self.errno_addr();
        st.errno = Some(self.fresh(32, "errno"));
    }

    /// The shared memory as a run holds it: `errno`'s value written back at its address.
    pub(super) fn shared_memory(&mut self, st: &State) -> T {
        match st.errno {
            None => st.mem,
            Some(v) => {
                let e = self.errno_addr();
                self.t.store_value(st.mem, e, v)
            }
        }
    }

    /// The value of `errno` in a state.
    fn errno_value(&mut self, st: &State) -> T {
        match st.errno {
            Some(v) => v,
            None => {
                let e = self.errno_addr();
                self.t.load(st.mem, e, 4)
            }
        }
    }

    /// `errno` where states meet: apart if it is apart in one of them.
    pub(super) fn join_errno(&mut self, ins: &[(T, &State)]) -> Option<T> {
        if ins.iter().all(|(_, s)| s.errno.is_none()) {
            return None;
        }
        let vals: Vec<(T, T)> = ins.iter().map(|(c, s)| (*c, self.errno_value(s))).collect();
        Some(self.join(&vals, Sort::Bv(32), "errno_phi"))
    }
}
