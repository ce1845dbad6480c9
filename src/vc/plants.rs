//! Planted faults: deliberately unsound variants of the encoding's claim paths, for the
//! soundness harnesses only. Each one removes the check that makes one path sound; a harness
//! that runs the programs for real must then find a false claim, which shows that the harness
//! reaches that path. No command line sets them: tests build them into the configuration.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Plants {
    /// A call of program code not encoded in place leaves the root's unexposed locals alone
    /// even when its arguments reach them (the exposure rule forgets the call's own writes).
    pub call_writes_blind: bool,
    /// Every local that could keep its bytes across a call of outside code keeps them, as if
    /// no pointer to it could have reached that code yet (the exposure rule without its
    /// analysis of what runs before the call).
    pub exposure_blind: bool,
    /// `errno` apart is never read back: an `int` or byte read after a call that writes
    /// `errno` only sees the memory from before the call, as if no place could be `errno`.
    pub errno_never_read: bool,
    /// An allocation whose block is in a region of its own leaves `errno` alone (a failed
    /// one sets it).
    pub allocation_keeps_errno: bool,
}

impl Plants {
    /// No fault planted.
    pub fn is_none(&self) -> bool {
        *self == Plants::default()
    }
}
