/* A bank on pmlab's C API: accounts in a persistent transactional heap, transfers as transactions, and
 * an audit log of them.
 *
 *   bank DIR create ACCOUNTS   an empty audit log, and a heap of ACCOUNTS accounts of 1000 each
 *   bank DIR transfer N        N random transfers, each one transaction, each logged once it committed
 *   bank DIR check             opens both (recovering them) and checks the money: exit 0 when it adds up
 *
 * A crash in `create` leaves a bank that `check` accepts (none yet, or no accounts yet), and which `create`
 * run again completes: the log is made first, then the heap, then the accounts in one transaction, which
 * is the mark that the bank exists.
 *
 * Kill `transfer` at any moment (kill -9) and `check` still finds the total unchanged: a transfer is in
 * the heap whole or not at all. The log may lack the last committed transfer (it is appended after the
 * commit), never hold one that did not commit; when full, it starts over. */
#define _POSIX_C_SOURCE 200809L /* stat */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pmlab/pmlab.h>

#define OPENING_BALANCE 1000

struct transfer {
  uint64_t from, to, amount;
};

/* Root 0: the accounts array's offset; root 1: the number of accounts. */
struct setup {
  uint64_t accounts;
};

/* Aborts with 2 when the accounts exist already: the bank was made before. */
static int create_accounts(pmlab_tx* tx, void* arg) {
  const struct setup* s = arg;
  uint64_t array, existing;
  int rc = pmlab_tx_read(tx, pmlab_tx_root(tx, 1), &existing);
  if (rc == 0 && existing != 0) return 2;
  if (rc == 0) rc = pmlab_tx_alloc(tx, 8 * s->accounts, &array);
  for (uint64_t i = 0; rc == 0 && i < s->accounts; ++i) rc = pmlab_tx_write(tx, array + 8 * i, OPENING_BALANCE);
  if (rc == 0) rc = pmlab_tx_write(tx, pmlab_tx_root(tx, 0), array);
  if (rc == 0) rc = pmlab_tx_write(tx, pmlab_tx_root(tx, 1), s->accounts);
  return rc;
}

static int move_money(pmlab_tx* tx, void* arg) {
  const struct transfer* t = arg;
  uint64_t array, from, to;
  int rc = pmlab_tx_read(tx, pmlab_tx_root(tx, 0), &array);
  if (rc == 0) rc = pmlab_tx_read(tx, array + 8 * t->from, &from);
  if (rc == 0) rc = pmlab_tx_read(tx, array + 8 * t->to, &to);
  if (rc != 0) return rc;
  /* Insufficient funds, or an account paying itself (both reads saw one word): abort, nothing changes. */
  if (from < t->amount || t->from == t->to) return 1;
  rc = pmlab_tx_write(tx, array + 8 * t->from, from - t->amount);
  if (rc == 0) rc = pmlab_tx_write(tx, array + 8 * t->to, to + t->amount);
  return rc;
}

struct totals {
  uint64_t accounts, sum;
};

static int add_up(pmlab_tx* tx, void* arg) {
  struct totals* t = arg;
  uint64_t array, balance;
  t->sum = 0;
  int rc = pmlab_tx_read(tx, pmlab_tx_root(tx, 0), &array);
  if (rc == 0) rc = pmlab_tx_read(tx, pmlab_tx_root(tx, 1), &t->accounts);
  for (uint64_t i = 0; rc == 0 && i < t->accounts; ++i) {
    rc = pmlab_tx_read(tx, array + 8 * i, &balance);
    t->sum += balance;
  }
  return rc;
}

static int count_entry(uint64_t lsn, unsigned lane, const void* data, size_t size, void* arg) {
  (void)lsn;
  (void)lane;
  (void)data;
  if (size != sizeof(struct transfer)) return 1;
  ++*(uint64_t*)arg;
  return 0;
}

static int die(const char* what, int rc) {
  fprintf(stderr, "bank: %s: %s (%s)\n", what, pmlab_errormsg(), pmlab_strerror(rc));
  return pmlab_exit_code(rc);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bank DIR create ACCOUNTS | transfer N | check\n");
    return 2;
  }
  char heap_path[4096], log_path[4096];
  snprintf(heap_path, sizeof heap_path, "%s/bank.heap", argv[1]);
  snprintf(log_path, sizeof log_path, "%s/bank.log", argv[1]);
  pmlab_ptm* ptm = NULL;
  pmlab_log* log = NULL;
  int rc;

  if (strcmp(argv[2], "create") == 0 && argc == 4) {
    struct setup s = {strtoull(argv[3], NULL, 10)};
    struct pmlab_ptm_config config = {PMLAB_PTM_REDO, 1, 0};
    if (s.accounts == 0) {
      fprintf(stderr, "bank: a bank needs at least one account\n");
      return 2;
    }
    /* What a crashed create made is taken as it is (each pool is whole or absent: pmlab creates a pool
     * under another name and renames it once it is formatted). */
    if ((rc = pmlab_log_create(log_path, 8 << 20, NULL, &log)) == PMLAB_E_ALREADY_EXISTS)
      rc = pmlab_log_open(log_path, &log);
    if (rc != 0) return die("create log", rc);
    if ((rc = pmlab_ptm_create(heap_path, 8 << 20, &config, &ptm)) == PMLAB_E_ALREADY_EXISTS)
      rc = pmlab_ptm_open(heap_path, &ptm);
    if (rc != 0) return die("create heap", rc);
    if ((rc = pmlab_ptm_run(ptm, create_accounts, &s)) == 2) {
      fprintf(stderr, "bank: %s holds a bank already\n", argv[1]);
      return 3;
    }
    if (rc != 0) return die("open accounts", rc);
    printf("%" PRIu64 " accounts, %" PRIu64 " in all\n", s.accounts, s.accounts * OPENING_BALANCE);
  } else if (strcmp(argv[2], "transfer") == 0 && argc == 4) {
    if ((rc = pmlab_ptm_open(heap_path, &ptm)) != 0) return die("open heap", rc);
    if ((rc = pmlab_log_open(log_path, &log)) != 0) return die("open log", rc);
    struct totals t;
    if ((rc = pmlab_ptm_run(ptm, add_up, &t)) != 0) return die("read accounts", rc);
    if (t.accounts == 0) {
      fprintf(stderr, "bank: no accounts yet: run create again to finish it\n");
      return 3;
    }
    const uint64_t n = strtoull(argv[3], NULL, 10);
    srand(12345);
    uint64_t done = 0;
    /* One thread, many transactions: a session keeps its log slot. */
    pmlab_session* session = NULL;
    if ((rc = pmlab_session_open(ptm, &session)) != 0) return die("session", rc);
    for (uint64_t i = 0; i < n; ++i) {
      struct transfer tr = {(uint64_t)rand() % t.accounts, (uint64_t)rand() % t.accounts, (uint64_t)rand() % 200};
      rc = pmlab_session_run(session, move_money, &tr);
      if (rc == 1) continue; /* refused: insufficient funds */
      if (rc != 0) return die("transfer", rc);
      rc = pmlab_log_append(log, 0, &tr, sizeof tr, NULL);
      if (rc == PMLAB_E_POOL_FULL) { /* the audit log is full: start it over (a real bank would archive it) */
        if ((rc = pmlab_log_truncate(log)) == 0) rc = pmlab_log_append(log, 0, &tr, sizeof tr, NULL);
      }
      if (rc != 0) return die("log", rc);
      ++done;
    }
    pmlab_session_close(session);
    rc = 0; /* the last transfer may have been refused (rc 1): that is no failure of the run */
    printf("%" PRIu64 " transfers\n", done);
  } else if (strcmp(argv[2], "check") == 0) {
    /* No heap in DIR: no create got that far, and nothing was promised (the log alone is made first). A
     * DIR that is not there is a mistake, not an empty bank. */
    struct stat dir;
    if (stat(argv[1], &dir) != 0 || !S_ISDIR(dir.st_mode)) {
      fprintf(stderr, "bank: %s is not a directory\n", argv[1]);
      return 3;
    }
    if ((rc = pmlab_ptm_open(heap_path, &ptm)) == PMLAB_E_NOT_FOUND) {
      printf("no bank yet\n");
      return 0;
    }
    if (rc != 0) return die("open heap", rc);
    if ((rc = pmlab_log_open(log_path, &log)) != 0) return die("open log", rc);
    struct totals t;
    if ((rc = pmlab_ptm_run(ptm, add_up, &t)) != 0) return die("read accounts", rc);
    uint64_t logged = 0;
    if ((rc = pmlab_log_foreach(log, count_entry, &logged)) != 0)
      return die("read log", rc < 0 ? rc : PMLAB_E_CORRUPTED);
    struct pmlab_ptm_stats stats;
    pmlab_ptm_get_stats(ptm, &stats);
    printf("%" PRIu64 " accounts, %" PRIu64 " in all, %" PRIu64 " transfers logged, %" PRIu64
           " transaction(s) recovered\n",
           t.accounts, t.sum, logged, stats.recovered);
    if (t.sum != t.accounts * OPENING_BALANCE) {
      fprintf(stderr, "bank: money appeared or vanished: %" PRIu64 " instead of %" PRIu64 "\n", t.sum,
              t.accounts * OPENING_BALANCE);
      rc = 1;
    }
  } else {
    fprintf(stderr, "bank: unknown command '%s'\n", argv[2]);
    return 2;
  }
  pmlab_log_close(log);
  pmlab_ptm_close(ptm);
  return rc;
}
