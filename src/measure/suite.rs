//! Test suites as users have them: a file of argument lines split the way `/bin/sh` splits them
//! (quotes, backslash escapes, unquoted `<`, `>`, `>>`, `2>`, `2>>`, `2>&1` as redirections), a
//! file of lines run by `/bin/sh` itself with the program in `$PROG`, or a directory of C test
//! drivers.

use std::path::{Path, PathBuf};

use super::MeasureError;

/// Where a test's standard output or error goes, besides being captured for comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    File {
        path: PathBuf,
        append: bool,
    },
    /// `2>&1`: standard error joins standard output.
    Stdout,
}

/// The redirections of an argument line, paths resolved against the directory tests run in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redirects {
    pub stdin: Option<PathBuf>,
    pub stdout: Option<Target>,
    pub stderr: Option<Target>,
}

/// One test: arguments of the program (with redirections), a line for `/bin/sh`, or a C driver
/// with its own `main` that includes the annotated file (LTest/LReplay style).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestSpec {
    Args {
        name: String,
        args: Vec<std::ffi::OsString>,
        redirects: Redirects,
    },
    Shell {
        name: String,
        /// The script for `/bin/sh -c` (see [`shell_script`]).
        script: std::ffi::OsString,
    },
    Driver {
        name: String,
        path: PathBuf,
    },
    /// A line `sh` could not run either (its input file is missing): reported, not run.
    NotRunnable {
        name: String,
        why: String,
    },
}

impl TestSpec {
    pub fn name(&self) -> &str {
        match self {
            TestSpec::Args { name, .. }
            | TestSpec::Shell { name, .. }
            | TestSpec::Driver { name, .. }
            | TestSpec::NotRunnable { name, .. } => name,
        }
    }
}

/// How the lines of a tests file are taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LineForm {
    /// Words and redirections, split like `sh` splits them; the program is run directly.
    #[default]
    Words,
    /// Each line is run by `/bin/sh -c`, with the program's path in `$PROG`; a line that does
    /// not mention `$PROG` gets it in front (`exec "$PROG" LINE`), as SIR's `universe` files
    /// expect.
    Shell,
}

/// Reads the tests: a directory of C drivers, or a file with one test per line (`#` starts a
/// comment line). Redirection paths are resolved against `cwd`, where the tests will run; a
/// line whose input file is missing is [`TestSpec::NotRunnable`] (`sh` would not run it
/// either). Tests are named by their line number, drivers by file stem.
pub fn read_tests(path: &Path, form: LineForm, cwd: &Path) -> Result<Vec<TestSpec>, MeasureError> {
    let read_err = |source| MeasureError::Read {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        let mut drivers: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read_err)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        drivers.sort();
        if drivers.is_empty() {
            return Err(MeasureError::Empty(path.to_path_buf()));
        }
        return Ok(drivers
            .into_iter()
            .map(|p| TestSpec::Driver {
                name: p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path: p,
            })
            .collect());
    }
    let bytes = std::fs::read(path).map_err(read_err)?;
    // Test lines are bytes for the shell: a Latin-1 argument is kept byte for byte on Unix.
    let (text, latin1) = crate::frontend::decode_text(&bytes);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let name = (i + 1).to_string();
        let malformed = |message: String| MeasureError::Malformed {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        match form {
            LineForm::Shell => out.push(TestSpec::Shell {
                name,
                script: text_to_os(&shell_script(trimmed), latin1),
            }),
            LineForm::Words => {
                let tokens = split_line(trimmed).map_err(malformed)?;
                let (args, redirects) = redirections(tokens, cwd).map_err(malformed)?;
                if let Some(missing) = redirects.stdin.as_ref().filter(|f| !f.is_file()) {
                    out.push(TestSpec::NotRunnable {
                        name,
                        why: format!("no such input file {}", missing.display()),
                    });
                    continue;
                }
                out.push(TestSpec::Args {
                    name,
                    args: args.iter().map(|a| text_to_os(a, latin1)).collect(),
                    redirects,
                });
            }
        }
    }
    if out.is_empty() {
        return Err(MeasureError::Empty(path.to_path_buf()));
    }
    Ok(out)
}

/// One argument as the program receives it (Latin-1 characters back to their bytes).
#[cfg(unix)]
fn text_to_os(s: &str, latin1: bool) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    std::ffi::OsString::from_vec(crate::frontend::encode_text(s, latin1))
}

#[cfg(not(unix))]
fn text_to_os(s: &str, _latin1: bool) -> std::ffi::OsString {
    s.into()
}

/// A word of a line: its characters, each with whether it is an unquoted glob character
/// (`*`, `?`, `[`), which `sh` expands against the files where the test runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word(Vec<(char, bool)>);

impl Word {
    fn push(&mut self, c: char) {
        self.0.push((c, false));
    }

    /// The word as written, quotes removed.
    pub fn literal(&self) -> String {
        self.0.iter().map(|(c, _)| c).collect()
    }

    fn is_pattern(&self) -> bool {
        self.0.iter().any(|(_, g)| *g)
    }

    fn is_bare(&self, text: &str) -> bool {
        !self.is_pattern() && self.literal() == text
    }

    /// The words `sh` makes of this one in `cwd`: the matching paths, sorted, or the word
    /// itself when it has no glob or nothing matches.
    pub fn expand(&self, cwd: &Path) -> Vec<String> {
        if !self.is_pattern() {
            return vec![self.literal()];
        }
        let parts: Vec<&[(char, bool)]> = self.0.split(|(c, _)| *c == '/').collect();
        // Paths so far: (text written, path on disk).
        let absolute = self.0.first().is_some_and(|(c, _)| *c == '/');
        let mut found: Vec<(String, PathBuf)> = vec![if absolute {
            (String::new(), PathBuf::from("/"))
        } else {
            (String::new(), cwd.to_path_buf())
        }];
        for (k, part) in parts.iter().enumerate() {
            let sep = if k == 0 { "" } else { "/" };
            if part.is_empty() {
                for f in &mut found {
                    f.0.push_str(sep);
                }
                continue;
            }
            let last = k + 1 == parts.len();
            let mut next = Vec::new();
            for (text, dir) in &found {
                if part.iter().any(|(_, g)| *g) {
                    let Ok(entries) = std::fs::read_dir(dir) else {
                        continue;
                    };
                    let mut names: Vec<String> = entries
                        .filter_map(|e| e.ok())
                        .filter(|e| last || e.path().is_dir())
                        .filter_map(|e| e.file_name().to_str().map(str::to_string))
                        .filter(|n| !n.starts_with('.') || part[0].0 == '.')
                        .filter(|n| glob_match(part, &n.chars().collect::<Vec<_>>()))
                        .collect();
                    names.sort();
                    for n in names {
                        next.push((format!("{text}{sep}{n}"), dir.join(&n)));
                    }
                } else {
                    let name: String = part.iter().map(|(c, _)| c).collect();
                    let path = dir.join(&name);
                    if last || path.is_dir() {
                        next.push((format!("{text}{sep}{name}"), path));
                    }
                }
            }
            found = next;
        }
        if found.is_empty() {
            vec![self.literal()]
        } else {
            found.into_iter().map(|(t, _)| t).collect()
        }
    }
}

/// Whether `name` matches a glob pattern (`*`, `?`, `[...]` with `!`/`^` and ranges; only
/// characters marked as globs are special).
fn glob_match(pat: &[(char, bool)], name: &[char]) -> bool {
    let Some(&(c, glob)) = pat.first() else {
        return name.is_empty();
    };
    match (c, glob) {
        ('*', true) => (0..=name.len()).any(|k| glob_match(&pat[1..], &name[k..])),
        ('?', true) => !name.is_empty() && glob_match(&pat[1..], &name[1..]),
        ('[', true) => match bracket(&pat[1..]) {
            Some((set, rest)) => {
                !name.is_empty() && set(name[0]) && glob_match(&pat[1 + rest..], &name[1..])
            }
            None => name.first() == Some(&'[') && glob_match(&pat[1..], &name[1..]),
        },
        _ => name.first() == Some(&c) && glob_match(&pat[1..], &name[1..]),
    }
}

type CharSet = Box<dyn Fn(char) -> bool>;

/// A bracket expression after its `[`: the set and how many pattern characters it used
/// (through the `]`), or `None` when it is not closed (then `[` is literal).
fn bracket(pat: &[(char, bool)]) -> Option<(CharSet, usize)> {
    let mut i = 0;
    let negate = matches!(pat.first(), Some(('!' | '^', _)));
    if negate {
        i += 1;
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    let start = i;
    while i < pat.len() {
        let c = pat[i].0;
        if c == ']' && i > start {
            let set = move |x: char| ranges.iter().any(|&(lo, hi)| lo <= x && x <= hi) != negate;
            return Some((Box::new(set), i + 1));
        }
        if i + 2 < pat.len() && pat[i + 1].0 == '-' && pat[i + 2].0 != ']' {
            ranges.push((c, pat[i + 2].0));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    None
}

/// A piece of a line: a word, or an unquoted redirection operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    Word(Word),
    /// `<`, `>`, `>>`, `2>`, `2>>`, `2>&1`.
    Op(&'static str),
}

/// Splits a line as POSIX `sh` splits a simple command: single quotes keep every byte, double
/// quotes keep all but `\`-escaped `$`, `` ` ``, `"`, `\`; outside quotes a backslash keeps the
/// next character. Unquoted `<`, `>` (and `2>` where a lone `2` starts the word) are operators;
/// unquoted `*`, `?`, `[` are globs ([`Word::expand`]). Other shell syntax (`|`, `;`, `&`,
/// `` ` ``, `$NAME`) is refused with a pointer to the `/bin/sh` form.
pub fn split_line(line: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut cur = Word::default();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let shell_only = |c: char| {
        format!("`{c}` needs a shell: quote it, or run the tests with --tests-sh (each line through /bin/sh)")
    };
    let end_word = |cur: &mut Word, in_word: &mut bool, out: &mut Vec<Token>| {
        if *in_word {
            out.push(Token::Word(std::mem::take(cur)));
            *in_word = false;
        }
    };
    while let Some(ch) = chars.next() {
        match ch {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('$' | '`' | '"' | '\\')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some('$')
                            if chars.peek().is_some_and(|&n| {
                                n.is_alphanumeric() || "_{(@*#?-$!".contains(n)
                            }) =>
                        {
                            return Err(shell_only('$'))
                        }
                        Some('`') => return Err(shell_only('`')),
                        Some(c) => cur.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                // A backslash ending the line continues nothing here: it stands for itself.
                cur.push(chars.next().unwrap_or('\\'));
            }
            c if c.is_whitespace() => end_word(&mut cur, &mut in_word, &mut out),
            '<' => {
                end_word(&mut cur, &mut in_word, &mut out);
                if chars.peek().is_some_and(|c| matches!(c, '<' | '&' | '>')) {
                    return Err(shell_only('<'));
                }
                out.push(Token::Op("<"));
            }
            '>' => {
                let fd_two = in_word && cur.is_bare("2") && !cur.0.is_empty();
                if fd_two {
                    cur = Word::default();
                    in_word = false;
                } else {
                    end_word(&mut cur, &mut in_word, &mut out);
                }
                let append = chars.peek() == Some(&'>');
                if append {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    chars.next();
                    match (fd_two, append, chars.next()) {
                        (true, false, Some('1')) => {
                            out.push(Token::Op("2>&1"));
                            continue;
                        }
                        _ => return Err(shell_only('&')),
                    }
                }
                out.push(Token::Op(match (fd_two, append) {
                    (false, false) => ">",
                    (false, true) => ">>",
                    (true, false) => "2>",
                    (true, true) => "2>>",
                }));
            }
            // `$` expands only before a name, a digit, `{`, `(` or a special parameter;
            // elsewhere (`abc$ `) it is a plain character, as in `sh`.
            '$' if chars
                .peek()
                .is_some_and(|&n| n.is_alphanumeric() || "_{(@*#?-$!".contains(n)) =>
            {
                return Err(shell_only('$'))
            }
            c @ ('|' | ';' | '&' | '`' | '(' | ')') => return Err(shell_only(c)),
            c => {
                in_word = true;
                cur.0.push((c, matches!(c, '*' | '?' | '[')));
            }
        }
    }
    end_word(&mut cur, &mut in_word, &mut out);
    Ok(out)
}

/// The program's arguments and redirections of a split line (globs expanded in `cwd`).
fn redirections(tokens: Vec<Token>, cwd: &Path) -> Result<(Vec<String>, Redirects), String> {
    let mut args = Vec::new();
    let mut r = Redirects::default();
    let mut it = tokens.into_iter();
    while let Some(t) = it.next() {
        let op = match t {
            Token::Word(w) => {
                args.extend(w.expand(cwd));
                continue;
            }
            Token::Op(op) => op,
        };
        if op == "2>&1" {
            r.stderr = Some(Target::Stdout);
            continue;
        }
        let Some(Token::Word(file)) = it.next() else {
            return Err(format!("`{op}` must be followed by a file name"));
        };
        let mut names = file.expand(cwd);
        if names.len() != 1 {
            return Err(format!("ambiguous redirection `{op} {}`", file.literal()));
        }
        let path = cwd.join(names.remove(0));
        match op {
            "<" => r.stdin = Some(path),
            ">" | ">>" => {
                r.stdout = Some(Target::File {
                    path,
                    append: op == ">>",
                })
            }
            _ => {
                r.stderr = Some(Target::File {
                    path,
                    append: op == "2>>",
                })
            }
        }
    }
    Ok((args, r))
}

/// The script `/bin/sh -c` runs for a line of the `/bin/sh` form.
pub fn shell_script(line: &str) -> String {
    if line.contains("$PROG") || line.contains("${PROG}") {
        line.to_string()
    } else {
        format!("exec \"$PROG\" {line}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split_line(line)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w.literal(),
                Token::Op(o) => format!("<op {o}>"),
            })
            .collect()
    }

    #[test]
    fn quotes_and_escapes_follow_sh() {
        assert_eq!(
            words(r#"-c "a b" 'c d'e f"#),
            vec!["-c", "a b", "c de", "f"]
        );
        // SIR's way of writing a single quote inside a single-quoted word.
        assert_eq!(words(r"'f)n'\'':Ig'"), vec!["f)n':Ig"]);
        assert_eq!(words(r"'!' '\-'"), vec!["!", r"\-"]);
        assert_eq!(words(r"a\ b \<"), vec!["a b", "<"]);
        assert_eq!(words(r#""x\"y\z""#), vec![r#"x"y\z"#]);
        assert!(split_line("'open").is_err());
        assert!(split_line("\"open").is_err());
    }

    #[test]
    fn unquoted_operators_redirect_and_quoted_ones_are_arguments() {
        assert_eq!(words("'<' < in"), vec!["<", "<op <>", "in"]);
        assert_eq!(
            words("a<in>out"),
            vec!["a", "<op <>", "in", "<op >>", "out"]
        );
        assert_eq!(
            words("x 2>err 2>&1 >>log"),
            vec!["x", "<op 2>>", "err", "<op 2>&1>", "<op >>>", "log"]
        );
        // `2` inside a word is not a descriptor.
        assert_eq!(words("a2>f"), vec!["a2", "<op >>", "f"]);
        assert!(split_line("a | b").unwrap_err().contains("--tests-sh"));
        assert!(split_line("a $HOME").is_err());
        assert_eq!(words("kkk$ x$"), vec!["kkk$", "x$"]);
        assert_eq!(words("a* [x"), vec!["a*", "[x"]);
    }

    #[test]
    fn unquoted_globs_expand_like_sh_and_stay_when_nothing_matches() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a1.txt", "a2.txt", "b.txt", ".hidden"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/c.txt"), "").unwrap();
        let expand = |line: &str| -> Vec<String> {
            redirections(split_line(line).unwrap(), dir.path())
                .unwrap()
                .0
        };
        assert_eq!(expand("a?.txt"), vec!["a1.txt", "a2.txt"]);
        assert_eq!(expand("*"), vec!["a1.txt", "a2.txt", "b.txt", "sub"]);
        assert_eq!(expand("[!a]*.txt"), vec!["b.txt"]);
        assert_eq!(expand("s*/*.txt"), vec!["sub/c.txt"]);
        assert_eq!(expand("'*' *4 5"), vec!["*", "*4", "5"]);
        assert_eq!(expand("a[12].txt"), vec!["a1.txt", "a2.txt"]);
    }

    #[test]
    fn a_line_without_prog_gets_it_in_front() {
        assert_eq!(shell_script("'a' < in"), "exec \"$PROG\" 'a' < in");
        assert_eq!(shell_script("echo x | $PROG -"), "echo x | $PROG -");
    }
}
