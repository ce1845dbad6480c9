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
}

impl Plants {
    /// No fault planted.
    pub fn is_none(&self) -> bool {
        *self == Plants::default()
    }
}
