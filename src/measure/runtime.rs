//! The recording runtime linked into programs under test: `pc_label` records, per label id,
//! whether it was reached and whether it was covered. One runtime serves `covprune measure`
//! (which reads the events a run writes to `$COVPRUNE_RECORD`) and the exhaustive soundness
//! harness (which asks the state of each label after each input, in process).

/// Included before the annotated file (`-include`): replaces the annotated file's empty
/// `pc_label` stubs by calls to the recorder.
pub const HEADER: &str = r#"#ifndef COVPRUNE_RUNTIME_H
#define COVPRUNE_RUNTIME_H
void covprune_hit(int covered, long id);
unsigned char covprune_state_of(long id);
void covprune_reset(void);
#undef pc_label
#undef pc_label_bindings
#define pc_label(c, id, ...) covprune_hit((c) ? 1 : 0, (long)(id))
#define pc_label_bindings(c, id, ...) covprune_hit((c) ? 1 : 0, (long)(id))
#endif
"#;

/// The recorder, compiled on its own (no project flags or headers). A label's state has bit 1
/// (reached) and bit 2 (covered); each first reach and first cover is appended as one line
/// (`R id` / `C id`) to `$COVPRUNE_RECORD` with a single `write`, so that a run that crashes
/// keeps what it recorded before.
pub const SOURCE: &str = r#"#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char *covprune_states;
static long covprune_capacity;
static int covprune_fd = -2;

static void covprune_emit(char kind, long id)
{
    char line[40];
    int n;
    if (covprune_fd == -2) {
        const char *path = getenv("COVPRUNE_RECORD");
        covprune_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    }
    if (covprune_fd < 0)
        return;
    n = snprintf(line, sizeof line, "%c %ld\n", kind, id);
    if (write(covprune_fd, line, (size_t)n) < 0)
        covprune_fd = -1;
}

void covprune_hit(int covered, long id)
{
    unsigned char s;
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

/// Reached and covered label ids from a run's record (`R id` / `C id` lines).
pub fn parse_record(
    text: &str,
) -> (
    std::collections::BTreeSet<u64>,
    std::collections::BTreeSet<u64>,
) {
    let (mut reached, mut covered) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(kind), Some(id)) = (it.next(), it.next().and_then(|s| s.parse().ok())) else {
            continue;
        };
        match kind {
            "R" => {
                reached.insert(id);
            }
            "C" => {
                reached.insert(id);
                covered.insert(id);
            }
            _ => {}
        }
    }
    (reached, covered)
}
