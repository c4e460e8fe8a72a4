/* A log kept with C's stdio: `append LOG N HOW` opens LOG with fopen(LOG, "w") and appends N records, each an
 * operation (pmlab/trace.h's marks) that returns once the record is flushed and synced (fflush, then fsync of
 * fileno). A record is a line "R <i> <payload> <checksum>", where the checksum (FNV-1a, in hex) covers what
 * precedes it. HOW says how a record is written: `fprintf`, `fwrite`, `putc` (a character at a time, through
 * the inline putc_unlocked), `large` (a record longer than the stream's buffer, which fwrite writes straight
 * to the file), `seek` (each record written over a placeholder line after an fseek back to it), `write` (no
 * stream: write(2) on its descriptor), `dprintf` (likewise, through the C library's own write), `syscall`
 * (likewise, and synced, by their numbers through syscall(): SYS_write, SYS_fsync), or `unsynced` (the bug:
 * fflush without fsync). After the last record the program prints a
 * trailer line it neither flushes nor syncs: the C library writes it at the exit. HOW `removed` writes as
 * `fwrite` does, then closes the log and deletes it with remove(3); `fcloseall` writes as `fwrite` does, and
 * fcloseall writes the trailer; `reopen` writes as `fwrite` does, then writes the log anew (freopen "w", every
 * record again, synced): a crash in between finds it cut (the bug, where every append had returned).
 * `check LOG` exits 1 unless LOG begins with whole records 1, 2, ... in order, as many as the operations that
 * had returned (PMLAB_CRASH_OPS_DONE) or more, and what follows them begins a record, a placeholder, the
 * trailer or zeros. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmlab/trace.h"

static uint32_t fnv1a(const char* s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* Record i, newline included, in `out`; its length. */
static size_t record(long i, size_t payload, char* out) {
  int n = sprintf(out, "R %ld ", i);
  for (size_t k = 0; k < payload; ++k) out[n++] = (char)('a' + (i + (long)k) % 26);
  n += sprintf(out + n, " %08x\n", fnv1a(out, (size_t)n));
  return (size_t)n;
}

static int check(const char* path) {
  static char data[1 << 20];
  FILE* f = fopen(path, "rb");
  const size_t n = f ? fread(data, 1, sizeof data - 1, f) : 0;
  if (f) fclose(f);
  /* Whole records from the start, then what a crash leaves of an unsynced record (zeros where it did not
   * persist) or of the trailer. */
  long whole = 0;
  size_t at = 0;
  while (at < n) {
    const char* end = memchr(data + at, '\n', n - at);
    const size_t line = end ? (size_t)(end - (data + at)) + 1 : 0;
    long i = 0;
    char sum[16];
    if (line < 10 || sscanf(data + at, "R %ld ", &i) != 1 || i != whole + 1) break;
    snprintf(sum, sizeof sum, "%08x", fnv1a(data + at, line - 10));
    if (memcmp(data + at + line - 9, sum, 8) != 0) break;
    ++whole;
    at += line;
  }
  if (at < n && data[at] != 0 && data[at] != 'R' && data[at] != '.' && data[at] != 'e') {
    printf("byte %zu, after %ld whole records, begins no record\n", at, whole);
    return 1;
  }
  const char* done = getenv("PMLAB_CRASH_OPS_DONE");
  if (done && whole < atol(done)) {
    printf("%ld whole records, but %s appends had returned\n", whole, done);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "check") == 0) return check(argv[2]);
  if (argc != 5 || strcmp(argv[1], "append") != 0) {
    fprintf(stderr,
            "usage: stdio_log append LOG N "
            "fprintf|fwrite|putc|large|seek|write|dprintf|syscall|unsynced|removed|fcloseall|reopen, or "
            "check LOG\n");
    return 2;
  }
  const char* how = argv[4];
  FILE* f = fopen(argv[2], "w");
  if (f == NULL) return 2;
  const size_t payload = strcmp(how, "large") == 0 ? 6000 : 40;
  static char line[8192];
  for (long i = 1; i <= atol(argv[3]); ++i) {
    pmlab_op_begin();
    const size_t n = record(i, payload, line);
    if (strcmp(how, "fprintf") == 0) {
      fprintf(f, "%s", line);
    } else if (strcmp(how, "putc") == 0) {
      for (size_t k = 0; k < n; ++k) putc_unlocked(line[k], f);
    } else if (strcmp(how, "seek") == 0) {
      const long at = ftell(f);
      for (size_t k = 0; k + 1 < n; ++k) fputc('.', f);
      fputc('\n', f);
      fseek(f, at, SEEK_SET);
      fwrite(line, 1, n, f);
    } else if (strcmp(how, "write") == 0) {
      if (write(fileno(f), line, n) != (ssize_t)n) return 2;
    } else if (strcmp(how, "dprintf") == 0) {
      dprintf(fileno(f), "%s", line);
    } else if (strcmp(how, "syscall") == 0) {
      if (syscall(SYS_write, fileno(f), line, n) != (long)n) return 2;
    } else {
      fwrite(line, 1, n, f);
    }
    fflush(f);
    if (strcmp(how, "syscall") == 0) syscall(SYS_fsync, fileno(f));
    else if (strcmp(how, "unsynced") != 0) fsync(fileno(f));
    pmlab_op_end();
  }
  if (strcmp(how, "reopen") == 0) {  // the log written anew: cut by freopen, every record again, synced
    f = freopen(argv[2], "w", f);
    for (long i = 1; f != NULL && i <= atol(argv[3]); ++i) fwrite(line, 1, record(i, payload, line), f);
    if (f == NULL || fflush(f) != 0 || fsync(fileno(f)) != 0) return 2;
  }
  fputs("end\n", f);
  if (strcmp(how, "removed") == 0) return fclose(f) != 0 || remove(argv[2]) != 0 ? 2 : 0;
  if (strcmp(how, "fcloseall") == 0) return fcloseall() != 0 ? 2 : 0;
  return 0;
}
