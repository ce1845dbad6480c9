//! Everything printed to the terminal goes through here (stdout for results, stderr for errors).

use std::io::Write;

pub fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`covprune ... | head`) is not an error worth reporting.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

pub fn print_err(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
}
