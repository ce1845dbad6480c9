//! The `covprune` executable: hands the command line to [`covprune::cli::run`].

/// The stack of the thread that runs the command. Syntax trees of real C nest deeply (3,000
/// `else if` links, 20,000 nested parentheses in generated code) and several passes over them
/// recurse; the memory is only reserved, and touched as deep as the input goes.
const STACK_BYTES: usize = 1 << 30;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let worker = std::thread::Builder::new()
        .name("covprune".into())
        .stack_size(STACK_BYTES)
        .spawn(move || covprune::cli::run(args));
    match worker {
        Ok(handle) => handle.join().unwrap_or(std::process::ExitCode::from(70)),
        // No thread could be made (a tight address-space limit): run on the main thread.
        Err(_) => covprune::cli::run(std::env::args().collect()),
    }
}
