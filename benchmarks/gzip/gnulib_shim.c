/* The few gnulib functions gzip 1.12 links against, written over plain libc, so that gzip's
   eleven program files from the corpus build into a working `gzip` without its gnulib
   library (for `covprune measure` on a multi-file program). Not part of covprune itself. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char const *Version = "1.12";

static void *checked(void *p)
{
    if (!p) {
        fputs("gzip: memory exhausted\n", stderr);
        exit(1);
    }
    return p;
}

void *xcalloc(size_t n, size_t s) { return checked(calloc(n, s)); }
char *xstrdup(char const *s) { return (char *)checked(strdup(s)); }
int yesno(void) { return 0; }

int fdutimens(int fd, char const *file, struct timespec const ts[2])
{
    if (fd >= 0)
        return futimens(fd, ts);
    return utimensat(AT_FDCWD, file, ts, 0);
}

struct timespec get_stat_atime(struct stat const *st) { return st->st_atim; }
struct timespec get_stat_mtime(struct stat const *st) { return st->st_mtim; }

char *last_component(char const *name)
{
    char const *base = name, *p;
    int after_slash = 0;
    while (*base == '/')
        base++;
    for (p = base; *p; p++) {
        if (*p == '/')
            after_slash = 1;
        else if (after_slash) {
            base = p;
            after_slash = 0;
        }
    }
    return (char *)base;
}

int open_safer(char const *file, int flags, ...)
{
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return open(file, flags, mode);
}

int openat_safer(int dir, char const *file, int flags, ...)
{
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return openat(dir, file, flags, mode);
}

int rpl_fclose(FILE *f) { return fclose(f); }
int rpl_fflush(FILE *f) { return fflush(f); }

int rpl_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    long arg;
    va_start(ap, cmd);
    arg = va_arg(ap, long);
    va_end(ap);
    return fcntl(fd, cmd, arg);
}

/* Directory entries as consecutive NUL-terminated names, ended by an empty name. */
char *streamsavedir(DIR *dir, int option)
{
    size_t used = 0, size = 256;
    char *buf = (char *)checked(malloc(size));
    struct dirent *e;
    (void)option;
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name) + 1;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        while (used + n + 1 > size)
            buf = (char *)checked(realloc(buf, size *= 2));
        memcpy(buf + used, e->d_name, n);
        used += n;
    }
    buf[used] = '\0';
    return buf;
}
