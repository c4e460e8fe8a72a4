/* pmlab/pmlab.h: pmlab's C API — a persistent transactional heap (the redo or undo PTM) with persistent
 * maps in it, a failure-atomic log, a lock-free set and ring, a failure-atomic page store, and pools of
 * the caller's own layout, each in a pool file.
 *
 * Every function that can fail returns 0 (PMLAB_OK) or a negative PMLAB_E_* code, and leaves a one-line
 * message for pmlab_errormsg(). Objects are handles (pmlab_ptm, pmlab_log); a pool file is open in one
 * handle at a time (a second open, in this process or another, fails with PMLAB_E_BUSY) and is recovered
 * by the open that follows a crash. Offsets, not pointers, name data in a heap: a pool may be mapped at
 * another address every time.
 *
 * Thread safety: a handle may be used by several threads at once unless a function says otherwise.
 * Persistence: what a function says is durable is in the durability domain when it returns — on real
 * PMEM (fsdax) as on an emulated pool (a file on tmpfs or a disk, where pmlab issues the same
 * instructions but only PMEM would keep the data through a power failure). */
#ifndef PMLAB_PMLAB_H
#define PMLAB_PMLAB_H

#include <stddef.h>
#include <stdint.h>

#include <pmlab/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ errors */

/* The codes of the `pmlab` command's errors (its exit code for each: pmlab_exit_code). */
enum pmlab_status {
  PMLAB_OK = 0,
  PMLAB_E_INVALID_ARGUMENT = -1, /* a bad parameter: an offset outside the heap, an unknown writer */
  PMLAB_E_NOT_FOUND = -2,        /* the pool file does not exist */
  PMLAB_E_ALREADY_EXISTS = -3,   /* create: the file exists (pmlab never overwrites one) */
  PMLAB_E_IO = -4,
  PMLAB_E_NO_SPACE = -5, /* the file system, or a pool too small for what it must hold */
  PMLAB_E_PERMISSION_DENIED = -6,
  PMLAB_E_NOT_A_FILE = -7,
  PMLAB_E_NOT_A_POOL = -8,    /* the file is not a pmlab pool */
  PMLAB_E_CORRUPTED = -9,     /* a pool whose header or structure does not validate */
  PMLAB_E_WRONG_LAYOUT = -10, /* a pmlab pool of another kind (a log opened as a PTM) */
  PMLAB_E_BUSY = -11,         /* the pool is open elsewhere */
  PMLAB_E_POOL_FULL = -12,    /* no room left: a full heap or log lane */
  PMLAB_E_UNSUPPORTED = -13,  /* the CPU lacks the flush instruction asked for */
  PMLAB_E_FAILED = -14,       /* anything else; the message says what */
  /* A transaction's snapshot went stale (another thread committed over what it read): pass it on from
   * the body; pmlab_ptm_run runs the body again. Never returned by pmlab_ptm_run. */
  PMLAB_E_RETRY = -100
};

/* The message of this thread's last failed call: one line naming what is wrong; "" before any failed. A call
 * that succeeds leaves it as it was (as errno): read it when a call returns a negative code. The pointer is
 * valid until the thread's next pmlab call. */
const char* pmlab_errormsg(void);
/* A short name of a code ("pool full"). */
const char* pmlab_strerror(int status);
/* The `pmlab` command's exit code for a status: 0 ok, 2 bad argument, 3 pool or file, 4 unsupported,
 * 1 other. */
int pmlab_exit_code(int status);
/* The version of the library running ("MAJOR.MINOR.PATCH"); PMLAB_VERSION_STRING is the headers'. */
const char* pmlab_version(void);

/* -------------------------------------------------------------------------- transactional heap */

/* A PTM pool open in this process (pmlab_ptm_create, pmlab_ptm_open); a running transaction (valid inside
 * a body only). */
typedef struct pmlab_ptm pmlab_ptm;
typedef struct pmlab_tx pmlab_tx;

/* Which PTM a heap runs: chosen at create, recorded in the pool. */
enum pmlab_ptm_kind {
  PMLAB_PTM_REDO = 1, /* redo log, one fence per writing transaction; concurrent disjoint transactions */
  PMLAB_PTM_UNDO = 2  /* undo log, a fence per first write of a word; transactions one at a time */
};

/* Options of pmlab_ptm_create; a zero member takes its default. */
struct pmlab_ptm_config {
  enum pmlab_ptm_kind kind; /* 0: PMLAB_PTM_REDO */
  unsigned threads;         /* transactions that may run at once; 0: 8. More wait for a slot. */
  /* Bounds the words one transaction writes, about log_bytes_per_thread / 32 (2042 redo, 2046 undo at
     64 KiB; writes into blocks it allocated do not count); a transaction that writes more ends the process.
     0: 64 KiB. */
  uint64_t log_bytes_per_thread;
};

/* The number of root words (pmlab_tx_root). */
#define PMLAB_PTM_ROOTS 12

/* Creates PATH (which must not exist) as a pool of `pool_bytes` holding an empty heap. config may be
 * NULL (the defaults). On success *ptm is open. No file is left behind on failure. */
int pmlab_ptm_create(const char* path, uint64_t pool_bytes, const struct pmlab_ptm_config* config, pmlab_ptm** ptm);
/* Opens a PTM pool and recovers it: every transaction whose pmlab_ptm_run returned is there, none that
 * had not returned is, in part or whole. */
int pmlab_ptm_open(const char* path, pmlab_ptm** ptm);
/* Closes the handle (NULL is ignored). Everything committed is already durable. Not concurrent with
 * other calls on the handle. */
void pmlab_ptm_close(pmlab_ptm* ptm);

/* The body of a transaction. Returns 0 to commit, PMLAB_E_RETRY when a pmlab_tx_* call returned it, or any
 * other nonzero value to abort. It may run more than once (after PMLAB_E_RETRY): effects outside the heap
 * must be ones a rerun overwrites. It must not longjmp out or keep tx after returning. */
typedef int (*pmlab_tx_fn)(pmlab_tx* tx, void* arg);

/* Runs `body` as one failure-atomic transaction: its writes become durable together, or (abort, crash)
 * not at all. Returns 0 once committed (durable), or the body's nonzero value after undoing it.
 * Transactions do not nest: called from within a body of the same ptm (as are pmlab_session_open and
 * pmlab_session_run, and pmlab_map_create and pmlab_map_open, which run a transaction of their own), it returns
 * PMLAB_E_INVALID_ARGUMENT and runs nothing; pass the pmlab_tx to the inner code instead. */
int pmlab_ptm_run(pmlab_ptm* ptm, pmlab_tx_fn body, void* arg);

/* A log slot held by one thread across transactions: pmlab_session_run skips the slot hand-out (a
 * compare-and-swap) that pmlab_ptm_run does each time. Used by the thread that opened it only; closed
 * before its ptm. While open, other threads have one slot fewer (they wait for a free one). */
typedef struct pmlab_session pmlab_session;
/* Takes a free log slot of `ptm` for the calling thread (waits while every slot is taken). When the
 * thread's own sessions hold every slot, it and pmlab_ptm_run return PMLAB_E_INVALID_ARGUMENT instead of
 * waiting for themselves. */
int pmlab_session_open(pmlab_ptm* ptm, pmlab_session** session);
/* As pmlab_ptm_run, on the session's slot. */
int pmlab_session_run(pmlab_session* session, pmlab_tx_fn body, void* arg);
/* Frees the slot (NULL is ignored). */
void pmlab_session_close(pmlab_session* session);

/* Inside a body. `offset` names an 8-byte aligned word in the heap; each returns PMLAB_E_INVALID_ARGUMENT
 * for one outside it, PMLAB_E_RETRY when the transaction must start over (it then fails every later call
 * too, so a body may check only the last). */
int pmlab_tx_read(pmlab_tx* tx, uint64_t offset, uint64_t* value);
int pmlab_tx_write(pmlab_tx* tx, uint64_t offset, uint64_t value);
/* `size` bytes at an 8-byte aligned offset, through the same words (the last one padded with zeros). */
int pmlab_tx_read_bytes(pmlab_tx* tx, uint64_t offset, void* out, size_t size);
int pmlab_tx_write_bytes(pmlab_tx* tx, uint64_t offset, const void* data, size_t size);
/* A new block of at least `size` bytes (8-byte aligned offset, contents undefined) or PMLAB_E_POOL_FULL.
 * Freed again if the transaction does not commit. */
int pmlab_tx_alloc(pmlab_tx* tx, uint64_t size, uint64_t* offset);
/* Frees a block from pmlab_tx_alloc, when the transaction commits. */
int pmlab_tx_free(pmlab_tx* tx, uint64_t offset);
/* The offset of root word `i` (< PMLAB_PTM_ROOTS): where a structure keeps its entry point. Read and
 * write it like any word. 0 for an i out of range. */
uint64_t pmlab_tx_root(const pmlab_tx* tx, unsigned i);

/* What a PTM has done since it was opened. */
struct pmlab_ptm_stats {
  uint64_t transactions; /* committed since open */
  uint64_t writing;      /* of which wrote */
  uint64_t conflicts;    /* bodies run again after a conflict */
  uint64_t recovered;    /* transactions the open found unfinished: replayed (redo) or undone (undo) */
  uint64_t heap_bytes;   /* bytes of the heap, its header included */
};
int pmlab_ptm_get_stats(const pmlab_ptm* ptm, struct pmlab_ptm_stats* stats);

/* -------------------------------------------------------------------------------------------- log */

/* A log pool open in this process (pmlab_log_create, pmlab_log_open). */
typedef struct pmlab_log pmlab_log;

/* Options of pmlab_log_create; a zero member takes its default. */
struct pmlab_log_config {
  /* How an entry is made durable: "zero" (one fence per append; the default), "header" (libpmemlog's
   * way), "header-dancing", "classic"; a "-padded" suffix puts each entry on its own cache lines. NULL:
   * "zero". */
  const char* writer;
  unsigned lanes; /* concurrent appenders, each with its own share of the pool; 0: 1 */
};

/* Creates PATH (which must not exist) as a pool of `pool_bytes` holding an empty log. */
int pmlab_log_create(const char* path, uint64_t pool_bytes, const struct pmlab_log_config* config, pmlab_log** log);
/* Opens a log pool and recovers it: every entry whose append returned is kept, an append cut short by a
 * crash is gone whole, a truncation cut short is finished. */
int pmlab_log_open(const char* path, pmlab_log** log);
void pmlab_log_close(pmlab_log* log);

/* Appends `size` bytes through `lane` (< lanes; one thread per lane at a time) and returns once the entry
 * is durable, with its sequence number in *lsn (may be NULL). Sequence numbers grow across lanes: an append
 * that returned before another began has the smaller one. PMLAB_E_POOL_FULL when the lane has no room;
 * PMLAB_E_INVALID_ARGUMENT for an entry larger than a whole lane (no truncate makes room for it). */
int pmlab_log_append(pmlab_log* log, unsigned lane, const void* data, size_t size, uint64_t* lsn);

/* Called for each entry in sequence order; a nonzero return stops the walk and is returned by
 * pmlab_log_foreach. `data` is valid during the call only. */
typedef int (*pmlab_log_visit_fn)(uint64_t lsn, unsigned lane, const void* data, size_t size, void* arg);
/* Not concurrent with append or truncate. */
int pmlab_log_foreach(const pmlab_log* log, pmlab_log_visit_fn visit, void* arg);
/* Discards every entry, failure-atomically (after a crash: all of them or none). Not concurrent with
 * append. */
int pmlab_log_truncate(pmlab_log* log);
/* Discards the entries with an LSN below `lsn`, failure-atomically (after a crash: all of them or none,
 * and every entry from `lsn` on). Not concurrent with append. */
int pmlab_log_truncate_before(pmlab_log* log, uint64_t lsn);

/* What a log holds, and what its open recovered. */
struct pmlab_log_stats {
  unsigned lanes;         /* lanes the log was created with */
  uint64_t lane_capacity; /* bytes of entries one lane holds */
  uint64_t recovered;     /* entries the open found */
  uint64_t torn_tails;    /* appends the open found cut short, and discarded */
};
int pmlab_log_get_stats(const pmlab_log* log, struct pmlab_log_stats* stats);
/* Bytes of lane `lane` in use. */
uint64_t pmlab_log_lane_used(const pmlab_log* log, unsigned lane);

/* ----------------------------------------------------------------------------------- persistent maps */

/* A persistent map in a PTM heap (pmlab_map_create, pmlab_map_open): pmlab's B+-tree or hash table of
 * fixed-size byte keys and values, whose operations run inside the heap's transactions — they commit,
 * abort and recover with the transaction's other writes. A handle holds no data: closing it changes
 * nothing in the heap. It is closed before its ptm and serves that ptm's transactions only. */
typedef struct pmlab_map pmlab_map;

/* Which structure a map is: chosen at create, recorded in the heap. */
enum pmlab_map_kind {
  PMLAB_MAP_BPTREE = 1,   /* ordered (memcmp order of the keys): pmlab_map_scan; grows as it fills */
  PMLAB_MAP_HASHTABLE = 2 /* no order (scan is PMLAB_E_UNSUPPORTED); buckets fixed at create */
};

/* Options of pmlab_map_create; a zero member takes its default. */
struct pmlab_map_config {
  enum pmlab_map_kind kind; /* 0: PMLAB_MAP_BPTREE */
  unsigned key_bytes;       /* every key's size, 1..8; 0: 8 */
  unsigned value_bytes;     /* every value's size, 1..1024; 0: 8 */
  uint64_t capacity;        /* hashtable: keys it is sized for; 0: 1024 */
};

/* Makes an empty map in a transaction of its own, linked from root word `root`, which must hold 0
 * (else PMLAB_E_ALREADY_EXISTS). config may be NULL. */
int pmlab_map_create(pmlab_ptm* ptm, unsigned root, const struct pmlab_map_config* config, pmlab_map** map);
/* The map root word `root` links to: PMLAB_E_NOT_FOUND when it holds 0, PMLAB_E_CORRUPTED when it links
 * to no map. */
int pmlab_map_open(pmlab_ptm* ptm, unsigned root, pmlab_map** map);
/* Closes the handle (NULL is ignored). */
void pmlab_map_close(pmlab_map* map);

/* Inside a body of the map's ptm. A key is `key_size` bytes (the map's key_bytes, else
 * PMLAB_E_INVALID_ARGUMENT), a value the map's value_bytes. Each returns PMLAB_E_RETRY as pmlab_tx_read
 * does; PMLAB_E_NOT_FOUND answers "no such key" and leaves no pmlab_errormsg. */
/* Copies the value of `key` into `value`. */
int pmlab_map_get(pmlab_tx* tx, const pmlab_map* map, const void* key, size_t key_size, void* value);
/* Sets the value of `key`, inserting it when absent; PMLAB_E_POOL_FULL when the heap has no room. */
int pmlab_map_put(pmlab_tx* tx, pmlab_map* map, const void* key, size_t key_size, const void* value);
/* Sets the value of a present key only (PMLAB_E_NOT_FOUND: nothing changed). */
int pmlab_map_update(pmlab_tx* tx, pmlab_map* map, const void* key, size_t key_size, const void* value);
/* Removes `key` (PMLAB_E_NOT_FOUND when absent). */
int pmlab_map_remove(pmlab_tx* tx, pmlab_map* map, const void* key, size_t key_size);

/* Called for each entry a scan visits: key_bytes of key, value_bytes of value, valid during the call. A
 * nonzero return stops the scan and is returned by pmlab_map_scan. It must not call into the map. */
typedef int (*pmlab_map_visit_fn)(const void* key, const void* value, void* arg);
/* Visits up to `limit` entries, in key order, from the first key not below the `from_size` bytes at
 * `from` (shorter: padded with zeros). *visited (may be NULL) receives how many. A B+-tree map only. */
int pmlab_map_scan(pmlab_tx* tx, const pmlab_map* map, const void* from, size_t from_size, uint64_t limit,
                   pmlab_map_visit_fn visit, void* arg, uint64_t* visited);
/* The number of keys (walks the whole map). */
int pmlab_map_size(pmlab_tx* tx, const pmlab_map* map, uint64_t* size);
/* Checks the structure's invariants: PMLAB_E_CORRUPTED, with a message saying what is broken. */
int pmlab_map_check(pmlab_tx* tx, const pmlab_map* map);

/* ------------------------------------------------------------------------- the persist B+-tree */

/* pmlab's persist B+-tree in a pool file of its own (pmlab/tree.hpp is the C++ API): an ordered map of
 * fixed-size byte keys and values whose every put, update and remove is durable and failure-atomic when
 * it returns, through the tree's own write-backs (no transaction). Any number of threads may call
 * anything on one handle concurrently, but for close. Opening recovers after a crash: every call that
 * returned is there, one in flight whole or not at all. */
typedef struct pmlab_tree pmlab_tree;

/* Options of pmlab_tree_create; a zero member takes its default. */
struct pmlab_tree_config {
  unsigned key_bytes;   /* every key's size, 1..8; 0: 8 */
  unsigned value_bytes; /* every value's size, 1..1024; 0: 8 */
};

/* Creates PATH (which must not exist) as a pool of `pool_bytes` holding an empty tree; config may be
 * NULL. No file is left behind on failure. */
int pmlab_tree_create(const char* path, uint64_t pool_bytes, const struct pmlab_tree_config* config, pmlab_tree** tree);
/* Opens and recovers a tree pool: PMLAB_E_BUSY when it is open elsewhere, PMLAB_E_CORRUPTED when its
 * leaves hold no tree. */
int pmlab_tree_open(const char* path, pmlab_tree** tree);
/* Closes the tree cleanly (its index written back, so the next open keeps it). NULL is ignored. */
void pmlab_tree_close(pmlab_tree* tree);

/* A key is `key_size` bytes (the tree's key_bytes, else PMLAB_E_INVALID_ARGUMENT), a value the tree's
 * value_bytes. PMLAB_E_NOT_FOUND answers "no such key" and leaves no pmlab_errormsg. */
/* Copies the value of `key` into `value`. */
int pmlab_tree_get(const pmlab_tree* tree, const void* key, size_t key_size, void* value);
/* Sets the value of `key`, inserting it when absent; PMLAB_E_POOL_FULL (nothing changed) when a leaf
 * must split and the pool has no room. */
int pmlab_tree_put(pmlab_tree* tree, const void* key, size_t key_size, const void* value);
/* Sets the value of a present key only (PMLAB_E_NOT_FOUND: nothing changed; PMLAB_E_POOL_FULL as put). */
int pmlab_tree_update(pmlab_tree* tree, const void* key, size_t key_size, const void* value);
/* Removes `key` (PMLAB_E_NOT_FOUND when absent). */
int pmlab_tree_remove(pmlab_tree* tree, const void* key, size_t key_size);
/* Visits up to `limit` entries, in key order, from the first key not below the `from_size` bytes at
 * `from` (shorter: padded with zeros), as pmlab_map_scan does; splits wait for it. `visit` must not call
 * into the tree. */
int pmlab_tree_scan(const pmlab_tree* tree, const void* from, size_t from_size, uint64_t limit,
                    pmlab_map_visit_fn visit, void* arg, uint64_t* visited);
/* Checks the leaves' invariants: PMLAB_E_CORRUPTED, with a message saying what is broken. */
int pmlab_tree_check(const pmlab_tree* tree);

/* What a tree holds and what its open found. */
struct pmlab_tree_stats {
  uint64_t keys;           /* keys present (a walk of the leaves: exact when no call runs beside it) */
  uint64_t bytes_used;     /* of the pool's data area */
  uint64_t bytes_capacity; /* the pool's data area */
  int index_rebuilt;       /* 1: the open rebuilt the index (the last close was not clean) */
};
int pmlab_tree_get_stats(const pmlab_tree* tree, struct pmlab_tree_stats* stats);

/* -------------------------------------------------------------------- the lock-free set and ring */

/* A lock-free sorted set of keys 1..PMLAB_SET_MAX_KEY in a pool file ([PMIdioBench] §6; pmlab/lockfree.hpp
 * is the C++ API). Every call names a thread index below the set's `threads`, used by one thread at a
 * time; calls of different indexes run concurrently and never block each other. What a call changed is
 * durable when it returns; the open after a crash recovers every call that returned, and a call in
 * flight either whole or not at all. */
typedef struct pmlab_set pmlab_set;

/* The largest key a set holds: keys are 1..PMLAB_SET_MAX_KEY (30 bits). */
#define PMLAB_SET_MAX_KEY ((((uint64_t)1) << 30) - 1)

/* How a set persists (docs/lockfree.md measures them). */
enum pmlab_set_design {
  PMLAB_SET_LINKFREE = 1, /* the link-free list: nodes with validity flags, links never persisted */
  PMLAB_SET_SOFT = 2,     /* SOFT: persistent nodes, the list itself in DRAM (rebuilt on open) */
  PMLAB_SET_TLOG = 3,     /* a persistent Harris list with a per-thread log of the update in flight */
  PMLAB_SET_LOGFREE = 4   /* eADR pools only: a fence at each linearization point */
};

/* Options of pmlab_set_create; a zero member takes its default. */
struct pmlab_set_config {
  enum pmlab_set_design design; /* 0: PMLAB_SET_LINKFREE */
  unsigned threads;             /* thread indexes, 1..64; 0: 8 */
  uint32_t capacity;            /* keys held at once; 0: 65536 */
};

/* Creates PATH (which must not exist) as a pool holding an empty set. A design correct only under eADR on
 * a pool mapped under ADR fails with PMLAB_E_UNSUPPORTED. */
int pmlab_set_create(const char* path, const struct pmlab_set_config* config, pmlab_set** set);
/* Opens a set pool and recovers it. */
int pmlab_set_open(const char* path, pmlab_set** set);
/* Closes the pool; no call on the set may be running. NULL is ignored. */
void pmlab_set_close(pmlab_set* set);
/* Adds `key`: 1 when added, 0 when present, or a negative code (PMLAB_E_POOL_FULL when every node is
 * taken, PMLAB_E_INVALID_ARGUMENT for a key outside 1..PMLAB_SET_MAX_KEY or a bad thread index). */
int pmlab_set_insert(pmlab_set* set, unsigned thread, uint64_t key);
/* Removes `key`: 1 when removed, 0 when absent, or a negative code. */
int pmlab_set_remove(pmlab_set* set, unsigned thread, uint64_t key);
/* Whether `key` is present: 1 or 0, or a negative code. */
int pmlab_set_contains(pmlab_set* set, unsigned thread, uint64_t key);
/* The keys in order into keys[0..capacity), their number in *count. When they do not fit, *count is how
 * many there are, nothing is written and the call fails with PMLAB_E_NO_SPACE. Quiescent: no other call on
 * the set may be running. */
int pmlab_set_keys(const pmlab_set* set, uint64_t* keys, size_t capacity, size_t* count);
/* Checks the set's invariants (order, links inside its slab): PMLAB_E_CORRUPTED when one fails. Quiescent. */
int pmlab_set_check(const pmlab_set* set);
/* What the set was created with. */
int pmlab_set_get_config(const pmlab_set* set, struct pmlab_set_config* config);

/* A lock-free multi-producer multi-consumer FIFO of fixed-size records in a pool file. Threads and
 * persistence as for the set: a push or pop that returned is durable, and one in flight is whole or absent
 * after the open that follows a crash. */
typedef struct pmlab_ring pmlab_ring;

/* How a ring persists. */
enum pmlab_ring_design {
  PMLAB_RING_TX = 1,    /* each push and pop failure-atomic through a per-thread undo log: ADR and eADR */
  PMLAB_RING_TXFREE = 2 /* eADR pools only: stamps on the slots, no log */
};

/* Options of pmlab_ring_create; a zero member takes its default. */
struct pmlab_ring_config {
  enum pmlab_ring_design design; /* 0: PMLAB_RING_TX */
  unsigned threads;              /* thread indexes, 1..64; 0: 8 */
  uint32_t capacity;             /* slots, a power of two >= 2; 0: 1024 */
  uint32_t record_bytes;         /* every record's size, 1..16 MiB; 0: 64 */
};

/* Creates PATH (which must not exist) as a pool holding an empty ring. */
int pmlab_ring_create(const char* path, const struct pmlab_ring_config* config, pmlab_ring** ring);
/* Opens a ring pool and recovers it: the pushes that returned are there, less the pops that returned, in
 * order. */
int pmlab_ring_open(const char* path, pmlab_ring** ring);
/* Closes the pool; no call on the ring may be running. NULL is ignored. */
void pmlab_ring_close(pmlab_ring* ring);
/* Copies record_bytes from `record` into the ring; waits while it is full. */
int pmlab_ring_push(pmlab_ring* ring, unsigned thread, const void* record);
/* Copies the oldest record into `out` (record_bytes) and removes it; waits while the ring is empty. */
int pmlab_ring_pop(pmlab_ring* ring, unsigned thread, void* out);
/* The records held, into *size. Quiescent. */
int pmlab_ring_size(const pmlab_ring* ring, uint64_t* size);
/* What the ring was created with. */
int pmlab_ring_get_config(const pmlab_ring* ring, struct pmlab_ring_config* config);

/* -------------------------------------------------------------------------------- pools of one's own */

/* A pool file (or DAX device) with a layout of the caller's own (pmlab_pool_create, pmlab_pool_open): a
 * zero-filled data area the caller's design persists through the pool's calls below, which issue the
 * CPU's instructions for the pool's durability domain. Offsets from pmlab_pool_data name data: a pool may
 * be mapped at another address every time. What a crash leaves is the layout's to recover, after open. */
typedef struct pmlab_pool pmlab_pool;

/* The durability domain a pool's calls persist for, and the write-back instruction. */
enum pmlab_domain { PMLAB_DOMAIN_ADR = 1, PMLAB_DOMAIN_EADR = 2 };
enum pmlab_flush { PMLAB_FLUSH_CLWB = 1, PMLAB_FLUSH_CLFLUSHOPT = 2, PMLAB_FLUSH_CLFLUSH = 3, PMLAB_FLUSH_NTSTORE = 4 };

/* Options of pmlab_pool_create and pmlab_pool_open; a zero member takes its default. */
struct pmlab_pool_config {
  enum pmlab_domain domain; /* 0: the one the mapping reports (eADR where the platform says so, else ADR) */
  enum pmlab_flush flush;   /* 0: the CPU's best line write-back; one it lacks: PMLAB_E_UNSUPPORTED */
};

/* Creates PATH (which must not exist) with `bytes` in all (a multiple of 4096, 1 MiB at least) for
 * `layout` (1-31 printable characters without spaces; not one of pmlab's own) at `layout_version` (>= 1). */
int pmlab_pool_create(const char* path, uint64_t bytes, const char* layout, uint32_t layout_version,
                      const struct pmlab_pool_config* config, pmlab_pool** pool);
/* Opens PATH, a pool of `layout`: PMLAB_E_WRONG_LAYOUT for another, PMLAB_E_NOT_A_POOL for a file that is
 * none, PMLAB_E_BUSY when it is open elsewhere. */
int pmlab_pool_open(const char* path, const char* layout, const struct pmlab_pool_config* config, pmlab_pool** pool);
/* Unmaps and unlocks the pool; makes nothing durable that was not persisted. NULL is ignored. */
void pmlab_pool_close(pmlab_pool* pool);
/* The data area (4096-byte aligned) and its size; NULL and 0 for a NULL pool. */
void* pmlab_pool_data(const pmlab_pool* pool);
uint64_t pmlab_pool_data_size(const pmlab_pool* pool);
/* Each of these returns PMLAB_E_INVALID_ARGUMENT, having done nothing, for a NULL pool or address, a range
 * not inside the pool's data area, or (store8) a word that is not 8-byte aligned. */
/* Writes back the cache lines of [addr, addr+len): durable at the next fence. */
int pmlab_pool_flush(const pmlab_pool* pool, const void* addr, size_t len);
/* Makes every earlier write-back of this thread durable, and orders later stores after it. */
int pmlab_pool_fence(const pmlab_pool* pool);
/* Both: [addr, addr+len) is durable when it returns. */
int pmlab_pool_persist(const pmlab_pool* pool, const void* addr, size_t len);
/* An 8-byte aligned store no crash tears (a commit word). Durable once persisted. */
int pmlab_pool_store8(const pmlab_pool* pool, uint64_t* word, uint64_t value);

/* ------------------------------------------------------------------------------------- page store */

/* Failure-atomic page writes (pmlab_page_store_create, pmlab_page_store_open): after a crash every page
 * is wholly the version its last returned write left, or, for a write in flight, wholly the new one. A
 * lane is one writer's (0 .. lanes-1); writes through different lanes run in parallel on different
 * pages; a page is written by one lane at a time and read while nobody writes it. */
typedef struct pmlab_page_store pmlab_page_store;

/* How writes persist: copy-on-write of the whole page, a micro-log of the lines that changed, or per write
 * whichever a cost model calibrated at open predicts cheaper. */
enum pmlab_page_flush { PMLAB_PAGE_COW = 1, PMLAB_PAGE_ULOG = 2, PMLAB_PAGE_HYBRID = 3 };

/* Options of pmlab_page_store_create; a zero member takes its default (pages has none). */
struct pmlab_page_store_config {
  uint32_t page_size; /* 4 KiB to 64 KiB, a power of two; 0: 16384 */
  uint64_t pages;     /* pages 0 .. pages-1, zero-filled at create */
  unsigned lanes;     /* concurrent writers; 0: 1 */
};

/* Creates PATH (which must not exist) sized for `config`; `flush` 0: PMLAB_PAGE_HYBRID. */
int pmlab_page_store_create(const char* path, const struct pmlab_page_store_config* config, enum pmlab_page_flush flush,
                            pmlab_page_store** store);
/* Opens PATH and recovers it: every page is then one whole version. */
int pmlab_page_store_open(const char* path, enum pmlab_page_flush flush, pmlab_page_store** store);
void pmlab_page_store_close(pmlab_page_store* store);
/* What the store was made with. */
int pmlab_page_store_get_config(const pmlab_page_store* store, struct pmlab_page_store_config* config);
/* Copies page `page` (page_size bytes) into `out`. */
int pmlab_page_store_read(const pmlab_page_store* store, uint64_t page, void* out);
/* Makes `data` (page_size bytes) the page's content, durably when it returns; only the lines that differ
 * from the page's are written. */
int pmlab_page_store_write(pmlab_page_store* store, unsigned lane, uint64_t page, const void* data);
/* As pmlab_page_store_write, for `size` bytes at `offset`, the rest of the page as it was. */
int pmlab_page_store_update(pmlab_page_store* store, unsigned lane, uint64_t page, size_t offset, const void* data,
                            size_t size);

#ifdef __cplusplus
}
#endif

#endif /* PMLAB_PMLAB_H */
