//! The `covprune` executable: hands the command line to [`covprune::cli::run`].

fn main() -> std::process::ExitCode {
    covprune::cli::run(std::env::args().collect())
}
