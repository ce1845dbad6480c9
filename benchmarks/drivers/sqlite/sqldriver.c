/* Runs each SQL file named on the command line in a fresh in-memory database and prints every
   row, every error and the changes count, so two builds of SQLite can be compared by output. */
#include <stdio.h>
#include <stdlib.h>
#include "sqlite3.h"

static int row(void *unused, int n, char **values, char **names) {
  (void)unused;
  for (int i = 0; i < n; i++)
    printf("%s%s=%s", i ? "|" : "", names[i], values[i] ? values[i] : "NULL");
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  for (int a = 1; a < argc; a++) {
    FILE *f = fopen(argv[a], "rb");
    if (!f) { perror(argv[a]); return 2; }
    static char sql[1 << 20];
    size_t n = fread(sql, 1, sizeof sql - 1, f);
    fclose(f);
    sql[n] = 0;
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 2;
    /* Statements are run as sqlite3_complete() delimits them, line by line, so that one
       that fails does not stop the rest. */
    char *line = sql, *start = sql;
    while (*line) {
      char *nl = line;
      while (*nl && *nl != '\n') nl++;
      char saved = *nl;
      *nl = 0;
      if (sqlite3_complete(start)) {
        const char *tail = start;
        while (*tail) {
          sqlite3_stmt *st = 0;
          if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
            printf("prepare error: %s\n", sqlite3_errmsg(db));
            break;
          }
          if (!st) continue;
          int rc;
          while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int c = sqlite3_column_count(st);
            for (int i = 0; i < c; i++) {
              const unsigned char *v = sqlite3_column_text(st, i);
              printf("%s%s", i ? "|" : "", v ? (const char *)v : "NULL");
            }
            printf("\n");
          }
          if (rc != SQLITE_DONE) printf("step error: %s\n", sqlite3_errmsg(db));
          sqlite3_finalize(st);
        }
        start = nl + (saved ? 1 : 0);
      } else {
        *nl = saved;
      }
      line = nl + (saved ? 1 : 0);
      if (!saved) break;
    }
    printf("changes %d\n", sqlite3_total_changes(db));
    char *err = 0;
    sqlite3_exec(db, "PRAGMA integrity_check;", row, 0, &err);
    if (err) { printf("exec error: %s\n", err); sqlite3_free(err); }
    sqlite3_close(db);
  }
  return 0;
}
