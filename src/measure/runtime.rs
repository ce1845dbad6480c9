//! The recording runtime linked into programs under test: `pc_label` records, per label id,
//! whether it was reached and whether it was covered. One runtime serves `covprune measure`
//! (which reads the events a run writes to `$COVPRUNE_RECORD`) and the exhaustive soundness
//! harness (which asks the state of each label after each input, in process).

/// Included before the annotated file (`-include`): replaces the annotated file's empty
/// `pc_label` stubs by calls to the recorder. Label `id` records as `COVPRUNE_LABEL_BASE + id`:
/// 0 for one file; in a whole program (`project measure`) each annotated file defines its own
/// base, so that the files' ids, each numbered from 1, do not collide.
pub const HEADER: &str = r#"#ifndef COVPRUNE_RUNTIME_H
#define COVPRUNE_RUNTIME_H
void covprune_hit(int covered, long id);
unsigned char covprune_state_of(long id);
void covprune_reset(void);
void covprune_present(long base);
extern volatile long covprune_at;
#ifndef COVPRUNE_LABEL_BASE
#define COVPRUNE_LABEL_BASE 0L
#endif
#undef pc_label
#undef pc_label_bindings
#define pc_label(c, id, ...) (covprune_at = ((long)(id) + COVPRUNE_LABEL_BASE), covprune_hit((c) ? 1 : 0, ((long)(id) + COVPRUNE_LABEL_BASE)))
#define pc_label_bindings(c, id, ...) (covprune_at = ((long)(id) + COVPRUNE_LABEL_BASE), covprune_hit((c) ? 1 : 0, ((long)(id) + COVPRUNE_LABEL_BASE)))
#endif
"#;

/// The recorder, compiled on its own (no project flags or headers). A label's state has bit 1
/// (reached) and bit 2 (covered); each first reach and first cover is appended as one line
/// (`R id` / `C id`) to `$COVPRUNE_RECORD` with a single `write`, so that a run that crashes
/// keeps what it recorded before. `covprune_at` holds the label whose predicate is being
/// evaluated: when the run records, a crash signal there appends `X id` before the process
/// dies of it, so that a label that crashes the program is named.
pub const SOURCE: &str = r#"#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char *covprune_states;
static long covprune_capacity;
static int covprune_fd = -2;
volatile long covprune_at = -1;

static void covprune_open(void)
{
    if (covprune_fd == -2) {
        const char *path = getenv("COVPRUNE_RECORD");
        covprune_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    }
}

/* Async-signal-safe (it runs in the crash handler too): no stdio, one write. */
static void covprune_emit(char kind, long id)
{
    char line[40], digits[24];
    int n = 0, d = 0;
    if (covprune_fd < 0)
        return;
    line[n++] = kind;
    line[n++] = ' ';
    do {
        digits[d++] = (char)('0' + id % 10);
        id /= 10;
    } while (id > 0 && d < 20);
    while (d > 0)
        line[n++] = digits[--d];
    line[n++] = '\n';
    if (write(covprune_fd, line, (size_t)n) < 0)
        covprune_fd = -1;
}

static void covprune_on_crash(int sig)
{
    if (covprune_at >= 0)
        covprune_emit('X', covprune_at);
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void covprune_start(void)
{
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    unsigned i;
    covprune_open();
    if (covprune_fd < 0)
        return;
    for (i = 0; i < sizeof crashes / sizeof crashes[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = covprune_on_crash;
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigaction(crashes[i], &sa, NULL);
    }
}

void covprune_hit(int covered, long id)
{
    unsigned char s;
    covprune_at = -1;
    covprune_open();
    if (id < 0)
        return;
    if (id >= covprune_capacity) {
        long cap = covprune_capacity ? covprune_capacity : 1024;
        unsigned char *grown;
        while (cap <= id)
            cap *= 2;
        grown = (unsigned char *)realloc(covprune_states, (size_t)cap);
        if (!grown)
            return;
        memset(grown + covprune_capacity, 0, (size_t)(cap - covprune_capacity));
        covprune_states = grown;
        covprune_capacity = cap;
    }
    s = covprune_states[id];
    if (!(s & 1)) {
        s |= 1;
        covprune_states[id] = s;
        covprune_emit('R', id);
    }
    if (covered && !(s & 2)) {
        covprune_states[id] = (unsigned char)(s | 2);
        covprune_emit('C', id);
    }
}

/* A program built from an annotated file says so when it starts (`P base`). */
void covprune_present(long base)
{
    covprune_open();
    covprune_emit('P', base);
}

unsigned char covprune_state_of(long id)
{
    return id >= 0 && id < covprune_capacity ? covprune_states[id] : 0;
}

void covprune_reset(void)
{
    if (covprune_states)
        memset(covprune_states, 0, (size_t)covprune_capacity);
}
"#;

/// What a run recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    pub reached: std::collections::BTreeSet<u64>,
    pub covered: std::collections::BTreeSet<u64>,
    /// The label whose predicate the run crashed in (`X id`).
    pub crashed_in: Option<u64>,
    /// The label bases of the annotated files built into the programs the run started
    /// (`P base`, written by each annotated file's constructor in `project measure`).
    pub present: std::collections::BTreeSet<u64>,
}

/// Reached and covered label ids from a run's record (`R id` / `C id` lines), the label a
/// crash happened in (`X id`) and the annotated files present (`P base`).
pub fn parse_record(text: &str) -> Recorded {
    let mut r = Recorded::default();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(kind), Some(id)) = (it.next(), it.next().and_then(|s| s.parse().ok())) else {
            continue;
        };
        match kind {
            "R" => {
                r.reached.insert(id);
            }
            "C" => {
                r.reached.insert(id);
                r.covered.insert(id);
            }
            "X" => r.crashed_in = Some(id),
            "P" => {
                r.present.insert(id);
            }
            _ => {}
        }
    }
    r
}
