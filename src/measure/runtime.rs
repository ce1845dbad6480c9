//! The recording runtime linked into programs under test: `pc_label` records, per label id,
//! whether it was reached and whether it was covered. One runtime serves `covprune measure`
//! (which reads the events a run writes to `$COVPRUNE_RECORD`) and the exhaustive soundness
//! harness (which asks the state of each label after each input, in process).

/// Included before the annotated file (`-include`): replaces the annotated file's empty
/// `pc_label` stubs by calls to the recorder. Label `id` records as `COVPRUNE_LABEL_BASE + id`:
/// 0 for one file; in a whole program (`project measure`) each annotated file defines its own
/// base, so that the files' ids, each numbered from 1, do not collide. A label with bindings
/// (`pc_label_bindings(c, id, tag, bind, n, "name1", e1, ...)`, up to 16 names) passes its
/// names and values, each value converted to `long` (a floating value is truncated). A label is
/// one statement. The warnings a label's condition can draw (a mutant such as `u < 0` on an
/// unsigned `u`, which `-Wextra` calls always false; a comparison of mixed signs) are turned
/// off for the annotated file, once at its top: a build that measures coverage does not warn
/// about its objectives (silencing them label by label costs the compiler memory per label). A label whose state (reached, or covered) is
/// already recorded calls nothing: the header reads the recorder's state table inline, so that
/// labels in a hot loop cost a few loads. LTest's
/// sequences (`pc_label_sequence(c, id, pos, len, var, n, ...)`: position `pos` of the chain
/// `id` of `len` positions, over variable `var`; `pc_label_sequence_condition(0, var)`: a
/// redefinition of `var`, which breaks its chains under way) record each chain whose
/// positions a run reached in order, `c` true at each, with no break of its variable between.
pub const HEADER: &str = r#"#ifndef COVPRUNE_RUNTIME_H
#define COVPRUNE_RUNTIME_H
void covprune_hit(int covered, long id);
void covprune_bind(int covered, long id, int n, ...);
unsigned char covprune_state_of(long id);
void covprune_reset(void);
void covprune_present(long base);
void covprune_seq(int c, long id, long pos, long len, long base, const char *var);
void covprune_seq_break(long base, const char *var);
extern volatile long covprune_at;
extern unsigned char *covprune_states;
extern long covprune_capacity;
#ifndef COVPRUNE_LABEL_BASE
#define COVPRUNE_LABEL_BASE 0L
#endif
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wsign-compare"
#pragma clang diagnostic ignored "-Wtautological-compare"
#pragma clang diagnostic ignored "-Wtautological-constant-out-of-range-compare"
#pragma clang diagnostic ignored "-Wbool-operation"
#pragma clang diagnostic ignored "-Wparentheses"
#pragma clang diagnostic ignored "-Wlogical-not-parentheses"
#pragma clang diagnostic ignored "-Wshift-count-overflow"
#pragma clang diagnostic ignored "-Wshift-count-negative"
#pragma clang diagnostic ignored "-Wshift-negative-value"
#pragma clang diagnostic ignored "-Wdivision-by-zero"
#pragma clang diagnostic ignored "-Wint-in-bool-context"
#pragma clang diagnostic ignored "-Wconstant-conversion"
#pragma clang diagnostic ignored "-Wpointer-integer-compare"
#pragma clang diagnostic ignored "-Wextra"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wbool-compare"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Woverflow"
#pragma GCC diagnostic ignored "-Wdiv-by-zero"
#pragma GCC diagnostic ignored "-Wint-in-bool-context"
#pragma GCC diagnostic ignored "-Wtautological-compare"
#pragma GCC diagnostic ignored "-Wlogical-not-parentheses"
#pragma GCC diagnostic ignored "-Wparentheses"
#pragma GCC diagnostic ignored "-Wshift-count-overflow"
#pragma GCC diagnostic ignored "-Wshift-count-negative"
#pragma GCC diagnostic ignored "-Wshift-negative-value"
#pragma GCC diagnostic ignored "-Wenum-compare"
#pragma GCC diagnostic ignored "-Waddress"
#pragma GCC diagnostic ignored "-Wbool-operation"
#endif
#undef pc_label
#undef pc_label_bindings
#undef pc_label_sequence
#undef pc_label_sequence_condition
#define pc_label_sequence(c, id, pos, len, var, ...) do { covprune_seq((c) ? 1 : 0, ((long)(id) + COVPRUNE_LABEL_BASE), (long)(pos), (long)(len), COVPRUNE_LABEL_BASE, #var); } while (0)
#define pc_label_sequence_condition(zero, var) covprune_seq_break(COVPRUNE_LABEL_BASE, #var)
#define pc_label(c, id, ...) do { long covprune_id_ = (long)(id) + COVPRUNE_LABEL_BASE; int covprune_c_; covprune_at = covprune_id_; covprune_c_ = (c) ? 3 : 1; covprune_at = -1; if (covprune_id_ >= covprune_capacity || covprune_id_ < 0 || (covprune_states[covprune_id_] & covprune_c_) != covprune_c_) covprune_hit(covprune_c_ == 3, covprune_id_); } while (0)
#define COVPRUNE_CAT(a, b) COVPRUNE_CAT_(a, b)
#define COVPRUNE_CAT_(a, b) a##b
#define pc_label_bindings(c, id, tag, bind, n, ...) do { covprune_at = ((long)(id) + COVPRUNE_LABEL_BASE); covprune_bind((c) ? 1 : 0, ((long)(id) + COVPRUNE_LABEL_BASE), n COVPRUNE_CAT(COVPRUNE_PAIRS_, n)(__VA_ARGS__)); } while (0)
#define COVPRUNE_PAIRS_0()
#define COVPRUNE_PAIRS_1(n1, v1), n1, (long)(v1)
#define COVPRUNE_PAIRS_2(n1, v1, n2, v2), n1, (long)(v1), n2, (long)(v2)
#define COVPRUNE_PAIRS_3(n1, v1, n2, v2, n3, v3), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3)
#define COVPRUNE_PAIRS_4(n1, v1, n2, v2, n3, v3, n4, v4), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4)
#define COVPRUNE_PAIRS_5(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5)
#define COVPRUNE_PAIRS_6(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6)
#define COVPRUNE_PAIRS_7(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7)
#define COVPRUNE_PAIRS_8(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8)
#define COVPRUNE_PAIRS_9(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9)
#define COVPRUNE_PAIRS_10(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9, n10, v10), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9), n10, (long)(v10)
#define COVPRUNE_PAIRS_11(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9, n10, v10, n11, v11), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9), n10, (long)(v10), n11, (long)(v11)
#define COVPRUNE_PAIRS_12(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9, n10, v10, n11, v11, n12, v12), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9), n10, (long)(v10), n11, (long)(v11), n12, (long)(v12)
#define COVPRUNE_PAIRS_13(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9, n10, v10, n11, v11, n12, v12, n13, v13), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9), n10, (long)(v10), n11, (long)(v11), n12, (long)(v12), n13, (long)(v13)
#define COVPRUNE_PAIRS_14(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9, n10, v10, n11, v11, n12, v12, n13, v13, n14, v14), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9), n10, (long)(v10), n11, (long)(v11), n12, (long)(v12), n13, (long)(v13), n14, (long)(v14)
#define COVPRUNE_PAIRS_15(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9, n10, v10, n11, v11, n12, v12, n13, v13, n14, v14, n15, v15), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9), n10, (long)(v10), n11, (long)(v11), n12, (long)(v12), n13, (long)(v13), n14, (long)(v14), n15, (long)(v15)
#define COVPRUNE_PAIRS_16(n1, v1, n2, v2, n3, v3, n4, v4, n5, v5, n6, v6, n7, v7, n8, v8, n9, v9, n10, v10, n11, v11, n12, v12, n13, v13, n14, v14, n15, v15, n16, v16), n1, (long)(v1), n2, (long)(v2), n3, (long)(v3), n4, (long)(v4), n5, (long)(v5), n6, (long)(v6), n7, (long)(v7), n8, (long)(v8), n9, (long)(v9), n10, (long)(v10), n11, (long)(v11), n12, (long)(v12), n13, (long)(v13), n14, (long)(v14), n15, (long)(v15), n16, (long)(v16)
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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned char *covprune_states;
long covprune_capacity;
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

/* The environments already written: (id, values) in an open-addressing table that doubles
   up to 1 << 16 entries; past that, `O` is written once and no more environments are. */
struct covprune_env {
    long id;
    int n;
    long v[16];
};
static struct covprune_env *covprune_envs;
static long covprune_env_cap, covprune_env_used;
static int covprune_env_full;

static unsigned long covprune_env_hash(long id, int n, const long *v)
{
    unsigned long h = (unsigned long)id * 1000003UL + (unsigned long)n;
    int i;
    for (i = 0; i < n; i++)
        h = h * 1000003UL ^ (unsigned long)v[i];
    return h;
}

/* Whether (id, v) is new; records it. */
static int covprune_env_new(long id, int n, const long *v)
{
    long i, cap;
    if (covprune_env_used * 4 >= covprune_env_cap * 3) {
        struct covprune_env *old = covprune_envs, *grown;
        long old_cap = covprune_env_cap;
        cap = old_cap ? old_cap * 2 : 256;
        if (cap > (1L << 16) || !(grown = (struct covprune_env *)calloc((size_t)cap, sizeof *grown))) {
            if (!covprune_env_full)
                covprune_emit('O', id);
            covprune_env_full = 1;
            return 0;
        }
        covprune_envs = grown;
        covprune_env_cap = cap;
        covprune_env_used = 0;
        for (i = 0; i < old_cap; i++)
            if (old[i].id > 0)
                covprune_env_new(old[i].id, old[i].n, old[i].v);
        free(old);
    }
    cap = covprune_env_cap;
    for (i = (long)(covprune_env_hash(id, n, v) % (unsigned long)cap);; i = (i + 1) % cap) {
        struct covprune_env *e = &covprune_envs[i];
        if (e->id == 0) {
            e->id = id;
            e->n = n;
            memcpy(e->v, v, (size_t)n * sizeof *v);
            covprune_env_used++;
            return 1;
        }
        if (e->id == id && e->n == n && !memcmp(e->v, v, (size_t)n * sizeof *v))
            return 0;
    }
}

static void covprune_append(char *line, int *n, const char *s)
{
    while (*s && *n < 1000)
        line[(*n)++] = *s++;
}

static void covprune_append_long(char *line, int *n, long v)
{
    char digits[24];
    int d = 0;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    if (v < 0)
        line[(*n)++] = '-';
    do {
        digits[d++] = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0 && d < 22);
    while (d > 0)
        line[(*n)++] = digits[--d];
}

/* A label with bindings: recorded as `pc_label` is; when covered, each new environment is
   written as one line `B id name value name value ...`. Ids are those of `covprune_hit`
   (base added), positive. */
void covprune_bind(int covered, long id, int n, ...)
{
    long v[16];
    const char *names[16];
    char line[1100];
    int i, len = 0;
    va_list ap;
    covprune_hit(covered, id);
    if (!covered || id <= 0 || n < 0 || n > 16 || covprune_fd < 0)
        return;
    va_start(ap, n);
    for (i = 0; i < n; i++) {
        names[i] = va_arg(ap, const char *);
        v[i] = va_arg(ap, long);
    }
    va_end(ap);
    if (!covprune_env_new(id, n, v))
        return;
    line[len++] = 'B';
    line[len++] = ' ';
    covprune_append_long(line, &len, id);
    for (i = 0; i < n && len < 1000; i++) {
        line[len++] = ' ';
        covprune_append(line, &len, names[i]);
        line[len++] = ' ';
        covprune_append_long(line, &len, v[i]);
    }
    line[len++] = '\n';
    if (write(covprune_fd, line, (size_t)len) < 0)
        covprune_fd = -1;
}

/* Sequences: per chain id (base added), the last position reached in order, its length, its
   variable (the file's base and the variable's text) and whether it was completed, which is
   written once as `S id`. */
struct covprune_chain {
    long id, at, len, base;
    const char *var;
    int done;
};
static struct covprune_chain *covprune_chains;
static long covprune_chain_cap, covprune_chain_used;

static struct covprune_chain *covprune_chain_of(long id)
{
    long i;
    for (i = 0; i < covprune_chain_used; i++)
        if (covprune_chains[i].id == id)
            return &covprune_chains[i];
    if (covprune_chain_used == covprune_chain_cap) {
        long cap = covprune_chain_cap ? covprune_chain_cap * 2 : 64;
        struct covprune_chain *grown =
            (struct covprune_chain *)realloc(covprune_chains, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        covprune_chains = grown;
        covprune_chain_cap = cap;
    }
    covprune_chains[covprune_chain_used].id = id;
    covprune_chains[covprune_chain_used].at = 0;
    covprune_chains[covprune_chain_used].done = 0;
    return &covprune_chains[covprune_chain_used++];
}

void covprune_seq(int c, long id, long pos, long len, long base, const char *var)
{
    struct covprune_chain *ch;
    covprune_open();
    ch = covprune_chain_of(id);
    if (!ch)
        return;
    ch->len = len;
    ch->base = base;
    ch->var = var;
    if (!c)
        return;
    if (pos == 1)
        ch->at = 1;
    else if (ch->at == pos - 1)
        ch->at = pos;
    if (ch->at >= len && !ch->done) {
        ch->done = 1;
        covprune_emit('S', id);
    }
}

void covprune_seq_break(long base, const char *var)
{
    long i;
    for (i = 0; i < covprune_chain_used; i++) {
        struct covprune_chain *ch = &covprune_chains[i];
        if (ch->base == base && ch->var && !strcmp(ch->var, var) && ch->at < ch->len)
            ch->at = 0;
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
    /// Per label with bindings, each distinct environment it was covered with (`B id name
    /// value ...`).
    pub bindings: Bindings,
    /// The run bound more environments than the recorder keeps (`O`): some are missing.
    pub bindings_overflow: bool,
    /// The sequences the run completed (`S id`).
    pub sequences: std::collections::BTreeSet<u64>,
}

/// Per label, the distinct environments of its bindings when covered: (name, value) lists.
pub type Bindings = std::collections::BTreeMap<u64, std::collections::BTreeSet<Vec<(String, i64)>>>;

/// Reached and covered label ids from a run's record (`R id` / `C id` lines), the label a
/// crash happened in (`X id`) and the annotated files present (`P base`).
pub fn parse_record(text: &str) -> Recorded {
    let mut r = Recorded::default();
    for line in text.lines() {
        if line == "O" || line.starts_with("O ") {
            r.bindings_overflow = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("B ") {
            let mut words = rest.split_whitespace();
            let Some(id) = words.next().and_then(|w| w.parse().ok()) else {
                continue;
            };
            let words: Vec<&str> = words.collect();
            let env: Option<Vec<(String, i64)>> = words
                .chunks(2)
                .map(|c| match c {
                    [name, value] => value.parse().ok().map(|v| (name.to_string(), v)),
                    _ => None,
                })
                .collect();
            if let Some(env) = env {
                r.bindings.entry(id).or_default().insert(env);
            }
            continue;
        }
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
            "S" => {
                r.sequences.insert(id);
            }
            _ => {}
        }
    }
    r
}
