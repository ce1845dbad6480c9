//! `--jobs`: how many workers or threads a command starts. 0 asks for one per core; more than
//! four per core only queue for the same cores, so a larger request is cut to that, with a
//! warning.

use crate::console::print_err;

pub struct Jobs;

impl Jobs {
    /// The most workers or threads a run starts.
    pub fn max() -> usize {
        4 * cores()
    }

    /// The number a request for `requested` starts; `warn`: say so when it is cut.
    pub fn resolve(requested: usize, warn: bool) -> usize {
        match requested {
            0 => cores(),
            n if n > Jobs::max() => {
                if warn {
                    print_err(&format!(
                        "warning: --jobs {n} is more than {} ({} cores): using {}",
                        Jobs::max(),
                        cores(),
                        Jobs::max()
                    ));
                }
                Jobs::max()
            }
            n => n,
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
