/*
 * pmdk-map: a driver and a checker for PMDK 1.12's example maps (examples/map/map.h), a subject for
 * `pmlab crash exec`.
 *
 *   pmdk-map TYPE create POOL           create the pool and an empty map in its root object
 *   pmdk-map TYPE insert POOL N [SEED]  insert keys #0..#N-1 (a pool that does not exist is created first)
 *   pmdk-map TYPE check POOL N [SEED]   open the pool (PMDK's recovery), run the map's own recovery, judge
 *
 * Key #i is subject_key(i, SEED) (subject_common.h); its value is a record {magic, key, i, checksum} in an
 * object of its own. insert skips keys already present, so it also resumes after a crash.
 *
 * What each map guarantees after a crash, and so what the check requires
 * ----------------------------------------------------------------------
 * Every type: the keys present are exactly #0..#m-1 for some m <= N (inserts happen in order, each is
 * failure-atomic), found alike by map_lookup, map_get and map_foreach (no key outside the sequence, none
 * twice); the value of each is an allocated value record holding that key, its index and a valid checksum.
 * Under crash exec, m also covers every insert that had returned before the crash: each key's lookup and
 * insert is an operation marked with pmlab/trace.h, which tells the check how many had ended.
 *
 *   btree, ctree, rbtree, skiplist, hashmap_tx: transactional (pmemobj_tx_*). The driver allocates the value
 *     and calls map_insert in ONE transaction (the inner ones flatten into it), so a crash undoes both or
 *     neither: besides the above, exactly m value records are allocated (none leaked, none dangling).
 *     hashmap_tx keeps a count under the same transaction: map_count == m. Their map_init is a no-op
 *     (hashmap_tx: srand(seed)).
 *   hashmap_atomic: atomic API only. Entries are allocated, constructed and linked by one
 *     POBJ_LIST_INSERT_NEW_HEAD (a redo-logged list operation); the count is guarded by count_dirty (set and
 *     persisted before the link, cleared after the count is persisted); a rebuild moves entries one atomic
 *     list move at a time into buckets_tmp. hm_atomic_init (map_init, which PMDK's mapcli calls after
 *     pmemobj_open) finishes an interrupted rebuild and recounts a dirty count, so after it map_count == m.
 *     The value is allocated before the insert (pmemobj_alloc with a constructor): a crash between leaks a
 *     record, so only "at least m value records" holds.
 *   hashmap_rp: reserve/publish. An insert's set_value actions (entry fields and count) are published at
 *     once; a rebuild fills and persists the new table before one publish switches to it. No recovery
 *     (hm_rp_init is a no-op); map_count == m; value records leak as for hashmap_atomic.
 *
 * The map's root: pmemobj_create and POBJ_ROOT allocate a zeroed root object atomically, and map_create
 * publishes the map into it atomically (a transaction, POBJ_ZNEW, or a publish). A pool without a root
 * object, or whose root map OID is null, is a crash during create: consistent with m = 0. A root map OID
 * whose offset is set but whose pool UUID is not the pool's is a torn 16-byte store: inconsistent.
 *
 * Then the check uses what recovery left: it inserts keys #m..#N-1 the way insert does and verifies again
 * (all N present). A crash can leave a structure pointing to an object its recovery freed (a rolled-back
 * allocation still linked in); such memory reads fine until the allocator hands it out again, which these
 * inserts do. PMDK_SUBJECT_CHECK_USE=0 skips this part. The image is the checker's to change: recovery
 * (pmemobj_open, map_init) writes to it anyway.
 *
 * The check is meant never to reject a legitimate post-crash state of the unmodified examples (it runs on
 * every image the crash checker builds: a false positive would be blamed on that), and the first violation
 * it finds is one line on stderr, exit 1. A crash of the checker itself on a damaged image (a dangling
 * pointer, a cycle) is caught and reported the same way (subject_guard_install).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpmemobj.h>
#include <hashmap.h>
#include <map.h>

#include "pmdk_map_subject.h"
#include "pmlab/trace.h"
#include "subject_common.h"

static char base_label[160]; /* PROGRAM [TYPE] COMMAND */
static char label[256];      /* base_label, and what the check is at */

#define FAIL(...) subject_fail(SUBJECT_INCONSISTENT, label, __VA_ARGS__)

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s TYPE create POOL\n"
          "       %s TYPE insert POOL N [SEED]\n"
          "       %s TYPE check POOL N [SEED]\n"
          "TYPE: %s; SEED: the key sequence (default 1).\n"
          "Pool size: PMDK_MAP_POOL_SIZE (default %zu bytes), or a poolset file's parts. check exits 0 consistent, 1 "
          "inconsistent,\n"
          "2 usage, 3 the pool cannot be opened.\n",
          prog, prog, prog, subject_map_type_names(), (size_t)PMEMOBJ_MIN_POOL);
  exit(SUBJECT_USAGE);
}

/* --- driver ------------------------------------------------------------------------------------------- */

struct value_args {
  uint64_t key;
  uint64_t index;
};

static void value_fill(struct subject_value* v, uint64_t key, uint64_t index) {
  v->magic = SUBJECT_VALUE_MAGIC;
  v->key = key;
  v->index = index;
  v->check = subject_value_check(key, index);
}

static int value_construct(PMEMobjpool* pop, void* ptr, void* arg) {
  const struct value_args* a = arg;
  value_fill(ptr, a->key, a->index);
  pmemobj_persist(pop, ptr, sizeof(struct subject_value));
  return 0;
}

static PMEMobjpool* open_pool(const struct subject_map_type* type, const char* path, int create) {
  char layout[64];
  subject_map_layout(type, layout, sizeof(layout));
  PMEMobjpool* pop;
  if (create)
    pop = pmemobj_create(
        path, layout, subject_is_poolset(path) ? 0 : subject_pool_size(label, "PMDK_MAP_POOL_SIZE", PMEMOBJ_MIN_POOL),
        0666);
  else pop = pmemobj_open(path, layout);
  if (!pop)
    subject_fail(SUBJECT_NO_POOL, label, "cannot %s pool %s: %s", create ? "create" : "open", path, pmemobj_errormsg());
  return pop;
}

/* The root map, created when the pool has none yet (a new pool, or a crash during create), then recovered. */
static TOID(struct map) prepare_map(PMEMobjpool* pop, struct map_ctx* mapc) {
  TOID(struct subject_root) root = POBJ_ROOT(pop, struct subject_root);
  if (TOID_IS_NULL(root))
    subject_fail(SUBJECT_INCONSISTENT, label, "cannot allocate the root object: %s", pmemobj_errormsg());
  if (TOID_IS_NULL(D_RO(root)->map)) {
    struct hashmap_args args = {.seed = SUBJECT_MAP_SEED};
    /*
     * hm_atomic_init re-creates a hashmap whose bucket array is null, drawing the hash coefficients
     * again after srand(seed): seeding here the same way keeps them equal (see README, findings).
     */
    srand(SUBJECT_MAP_SEED);
    if (map_create(mapc, &D_RW(root)->map, &args) != 0 || TOID_IS_NULL(D_RO(root)->map))
      subject_fail(SUBJECT_INCONSISTENT, label, "map_create failed: %s", pmemobj_errormsg());
  }
  TOID(struct map) map = D_RO(root)->map;
  if (map_init(mapc, map) != 0) subject_fail(SUBJECT_INCONSISTENT, label, "map_init failed: %s", pmemobj_errormsg());
  return map;
}

static void insert_one(const struct subject_map_type* type, PMEMobjpool* pop, struct map_ctx* mapc,
                       TOID(struct map) map, uint64_t key, uint64_t index) {
  if (type->transactional) {
    volatile int failed = 0;
    TX_BEGIN(pop) {
      PMEMoid value = pmemobj_tx_alloc(sizeof(struct subject_value), SUBJECT_VALUE_TYPE);
      value_fill(pmemobj_direct(value), key, index);
      if (map_insert(mapc, map, key, value) != 0) pmemobj_tx_abort(EINVAL);
    }
    TX_ONABORT { failed = 1; }
    TX_END
    if (failed)
      subject_fail(SUBJECT_INCONSISTENT, label, "inserting key #%" PRIu64 " failed: %s", index, pmemobj_errormsg());
    return;
  }
  struct value_args args = {key, index};
  PMEMoid value;
  if (pmemobj_alloc(pop, &value, sizeof(struct subject_value), SUBJECT_VALUE_TYPE, value_construct, &args))
    subject_fail(SUBJECT_INCONSISTENT, label, "allocating the value of key #%" PRIu64 " failed: %s", index,
                 pmemobj_errormsg());
  int ret = map_insert(mapc, map, key, value);
  if (ret != 0)
    subject_fail(SUBJECT_INCONSISTENT, label, "inserting key #%" PRIu64 " failed (%d): %s", index, ret,
                 pmemobj_errormsg());
}

static int cmd_create(const struct subject_map_type* type, const char* path) {
  PMEMobjpool* pop = open_pool(type, path, 1);
  struct map_ctx* mapc = map_ctx_init(type->ops, pop);
  if (!mapc) subject_fail(SUBJECT_INCONSISTENT, label, "map_ctx_init failed");
  prepare_map(pop, mapc);
  map_ctx_free(mapc);
  pmemobj_close(pop);
  return SUBJECT_OK;
}

static int cmd_insert(const struct subject_map_type* type, const char* path, uint64_t n, uint64_t seed) {
  PMEMobjpool* pop = open_pool(type, path, !subject_file_exists(path));
  struct map_ctx* mapc = map_ctx_init(type->ops, pop);
  if (!mapc) subject_fail(SUBJECT_INCONSISTENT, label, "map_ctx_init failed");
  TOID(struct map) map = prepare_map(pop, mapc);
  subject_arm_kill_timer();
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t key = subject_key(i, seed);
    pmlab_op_begin();
    /* Present: inserted before a crash, or by an earlier insert. */
    if (!map_lookup(mapc, map, key)) insert_one(type, pop, mapc, map, key, i);
    pmlab_op_end();
  }
  map_ctx_free(mapc);
  pmemobj_close(pop);
  return SUBJECT_OK;
}

/* --- checker ------------------------------------------------------------------------------------------ */

struct verifier {
  const struct subject_map_type* type;
  PMEMobjpool* pop;
  struct map_ctx* mapc;
  TOID(struct map) map;
  uint64_t pool_uuid;
  const struct subject_keys* keys;
  unsigned char* present; /* by map_lookup */
  unsigned char* seen;    /* by map_foreach */
  PMEMoid* value;         /* by map_get */
  uint64_t visited;
};

static struct verifier* visiting; /* some examples' map_foreach ignore the callback's result: no early stop */

static int foreach_visit(uint64_t key, PMEMoid value, void* arg) {
  (void)arg;
  struct verifier* v = visiting;
  int64_t i = subject_keys_find(v->keys, key);
  if (i < 0)
    FAIL("map_foreach reports key 0x%016" PRIx64 ", which is not among the %" PRIu64 " keys of seed %" PRIu64, key,
         v->keys->n, v->keys->seed);
  if (v->seen[i]) FAIL("map_foreach reports key #%" PRId64 " (0x%016" PRIx64 ") twice", i, key);
  v->seen[i] = 1;
  v->visited++;
  if (!v->present[i])
    FAIL("map_foreach reports key #%" PRId64 " (0x%016" PRIx64 "), which map_lookup does not find", i, key);
  if (!OID_EQUALS(value, v->value[i]))
    FAIL("map_foreach and map_get disagree on the value of key #%" PRId64 " (0x%016" PRIx64 "): 0x%" PRIx64
         ":0x%" PRIx64 " against 0x%" PRIx64 ":0x%" PRIx64,
         i, key, value.pool_uuid_lo, value.off, v->value[i].pool_uuid_lo, v->value[i].off);
  return 0;
}

static void check_value(const struct subject_objects* objects, uint64_t pool_uuid, uint64_t i, uint64_t key,
                        PMEMoid value) {
  if (value.pool_uuid_lo != pool_uuid)
    FAIL("value of key #%" PRIu64 " (0x%016" PRIx64 ") has pool uuid 0x%" PRIx64 " (the pool's is 0x%" PRIx64
         "), offset 0x%" PRIx64 ": a torn or foreign OID",
         i, key, value.pool_uuid_lo, pool_uuid, value.off);
  int64_t type = subject_objects_type(objects, value.off);
  if (type != (int64_t)SUBJECT_VALUE_TYPE)
    FAIL("value of key #%" PRIu64 " (0x%016" PRIx64 ") points to offset 0x%" PRIx64 ", which is %s", i, key, value.off,
         type < 0 ? "not an allocated value record (freed, rolled back or never allocated)"
                  : "an allocated object of another type, not a value record");
  const struct subject_value* v = pmemobj_direct(value);
  if (v->magic != SUBJECT_VALUE_MAGIC || v->key != key || v->index != i ||
      v->check != subject_value_check(v->key, v->index))
    FAIL("value of key #%" PRIu64 " (0x%016" PRIx64 ") corrupt: magic 0x%016" PRIx64 ", key 0x%016" PRIx64
         ", index %" PRIu64 ", checksum 0x%016" PRIx64 " (%s)",
         i, key, v->magic, v->key, v->index, v->check,
         v->check == subject_value_check(v->key, v->index) ? "valid, another key's record" : "invalid");
}

/* Everything the type guarantees (the comment at the top); returns m, the keys present. */
static uint64_t verify(struct verifier* v) {
  const struct subject_keys* keys = v->keys;
  uint64_t n = keys->n;

  subject_guard_phase("looking up the keys (map_lookup, map_get)", 0);
  memset(v->seen, 0, n ? n : 1);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t key = keys->key[i];
    int found = map_lookup(v->mapc, v->map, key);
    v->value[i] = map_get(v->mapc, v->map, key);
    if (found != !OID_IS_NULL(v->value[i]))
      FAIL("map_lookup %s key #%" PRIu64 " (0x%016" PRIx64 ") but map_get returns %s",
           found ? "finds" : "does not find", i, key, OID_IS_NULL(v->value[i]) ? "a null value" : "a value");
    v->present[i] = (unsigned char)(found != 0);
  }
  uint64_t m = 0;
  while (m < n && v->present[m]) m++;
  for (uint64_t j = m + 1; j < n; ++j)
    if (v->present[j])
      FAIL("key #%" PRIu64 " (0x%016" PRIx64 ") present but key #%" PRIu64 " (0x%016" PRIx64
           ") missing: not a prefix of the inserted keys",
           j, keys->key[j], m, keys->key[m]);

  subject_guard_phase("iterating the map (map_foreach)", 0);
  v->visited = 0;
  visiting = v;
  map_foreach(v->mapc, v->map, foreach_visit, NULL);
  if (v->visited != m) {
    uint64_t missed = 0;
    while (missed < m && v->seen[missed]) missed++;
    FAIL("map_foreach visits %" PRIu64 " keys but map_lookup finds %" PRIu64 " (key #%" PRIu64 " 0x%016" PRIx64
         " not visited)",
         v->visited, m, missed, keys->key[missed]);
  }

  subject_guard_phase("checking the value records", 0);
  struct subject_objects objects;
  if (subject_objects_collect(v->pop, &objects)) FAIL("out of memory");
  for (uint64_t i = 0; i < m; ++i) check_value(&objects, v->pool_uuid, i, keys->key[i], v->value[i]);
  size_t records = subject_objects_count_type(&objects, SUBJECT_VALUE_TYPE);
  subject_objects_free(&objects);
  if (v->type->transactional && records != m)
    FAIL("%zu value records allocated but %" PRIu64
         " keys present: an insert allocates its value in "
         "its own transaction, so the two must agree",
         records, m);

  subject_guard_phase("reading the map's count (map_count)", 0);
  if (v->type->ops->count) {
    size_t count = map_count(v->mapc, v->map);
    if (count != m) FAIL("map_count is %zu but %" PRIu64 " keys are present", count, m);
  }
  return m;
}

static int check_without_map(const struct subject_map_type* type, PMEMobjpool* pop, uint64_t n) {
  /* No map yet: a crash during create (or before it): no key can be present. */
  struct subject_objects objects;
  if (subject_objects_collect(pop, &objects)) FAIL("out of memory");
  size_t records = subject_objects_count_type(&objects, SUBJECT_VALUE_TYPE);
  subject_objects_free(&objects);
  if (type->transactional && records != 0)
    FAIL("%zu value records allocated but the pool has no map: a transactional insert leaks none", records);
  printf("%s: consistent: the map was never created, 0 of %" PRIu64 " keys present\n", label, n);
  pmemobj_close(pop);
  return SUBJECT_OK;
}

static int cmd_check(const struct subject_map_type* type, const char* path, uint64_t n, uint64_t seed) {
  subject_guard_install(label);

  subject_guard_phase("opening the pool (pmemobj_open, PMDK's recovery)", 1);
  PMEMobjpool* pop = open_pool(type, path, 0);

  subject_guard_phase("reading the root object", 0);
  PMEMoid map = OID_NULL;
  PMEMoid root_oid = OID_NULL;
  size_t root_size = pmemobj_root_size(pop);
  if (root_size == 0) return check_without_map(type, pop, n);
  if (root_size < sizeof(struct subject_root))
    FAIL("the root object is %zu bytes, %zu expected", root_size, sizeof(struct subject_root));
  root_oid = pmemobj_root(pop, root_size); /* the existing root: nothing is allocated */
  map = ((const struct subject_root*)pmemobj_direct(root_oid))->map.oid;
  if (!OID_IS_NULL(map) && map.pool_uuid_lo != root_oid.pool_uuid_lo)
    FAIL("the root's map OID is torn: offset 0x%" PRIx64 " with pool uuid 0x%" PRIx64 " (the pool's is 0x%" PRIx64 ")",
         map.off, map.pool_uuid_lo, root_oid.pool_uuid_lo);
  if (OID_IS_NULL(map)) return check_without_map(type, pop, n);

  subject_guard_phase("building the key sequence", 0);
  struct subject_keys keys;
  struct map_ctx* mapc = map_ctx_init(type->ops, pop);
  if (subject_keys_init(&keys, n, seed) || !mapc) FAIL("out of memory");
  struct verifier v = {
      .type = type,
      .pop = pop,
      .mapc = mapc,
      .pool_uuid = root_oid.pool_uuid_lo,
      .keys = &keys,
      .present = calloc(n ? n : 1, 1),
      .seen = calloc(n ? n : 1, 1),
      .value = calloc(n ? n : 1, sizeof(PMEMoid)),
  };
  if (!v.present || !v.seen || !v.value) FAIL("out of memory");
  TOID_ASSIGN(v.map, map);

  subject_guard_phase("validating the map object (map_check)", 0);
  if (map_check(mapc, v.map))
    FAIL("the root's map OID (offset 0x%" PRIx64 ") does not point to a %s object", map.off, type->name);

  subject_guard_phase("running the map's recovery (map_init)", 0);
  if (type->ops->init && map_init(mapc, v.map) != 0) FAIL("map_init failed: %s", pmemobj_errormsg());

  uint64_t m = verify(&v);
  const uint64_t returned = subject_returned_inserts();
  if (m < returned) FAIL("%" PRIu64 " keys present, but %" PRIu64 " inserts had returned", m, returned);

  /*
   * Use what recovery left: complete the sequence and verify again. A pointer to an object the crash
   * freed (a rolled-back allocation still linked in) reads fine until the allocator hands the memory out
   * again; these inserts do that.
   */
  char first[160];
  snprintf(first, sizeof(first), "%" PRIu64 " of %" PRIu64 " keys present (a prefix)", m, n);
  if (m < n && !subject_env_is_off("PMDK_SUBJECT_CHECK_USE")) {
    snprintf(label, sizeof(label), "%s, after completing keys #%" PRIu64 "..#%" PRIu64 " on the recovered pool",
             base_label, m, n - 1);
    subject_guard_phase("completing the inserts on the recovered pool", 0);
    for (uint64_t i = m; i < n; ++i) insert_one(type, pop, mapc, v.map, keys.key[i], i);
    uint64_t all = verify(&v);
    if (all != n) FAIL("only %" PRIu64 " of the %" PRIu64 " keys present", all, n);
    strcpy(label, base_label);
  }

  printf("%s: consistent: %s\n", label, first);
  free(v.present);
  free(v.seen);
  free(v.value);
  map_ctx_free(mapc);
  subject_keys_free(&keys);
  pmemobj_close(pop);
  return SUBJECT_OK;
}

int main(int argc, char* argv[]) {
  const char* base = subject_program_name(argc, argv, "pmdk-map");
  if (argc < 4) usage(base);
  const struct subject_map_type* type = subject_map_type_find(argv[1]);
  if (!type) {
    fprintf(stderr, "%s: unknown map type '%s' (%s)\n", base, argv[1], subject_map_type_names());
    return SUBJECT_USAGE;
  }
  const char* cmd = argv[2];
  const char* path = argv[3];
  snprintf(base_label, sizeof(base_label), "%s %s %s", base, type->name, cmd);
  strcpy(label, base_label);

  if (strcmp(cmd, "create") == 0) {
    if (argc != 4) usage(base);
    return cmd_create(type, path);
  }
  if (strcmp(cmd, "insert") != 0 && strcmp(cmd, "check") != 0) usage(base);
  uint64_t n, seed = 1;
  if (argc < 5 || argc > 6 || subject_parse_u64(argv[4], &n) || n >= (1ULL << 40) ||
      (argc == 6 && subject_parse_u64(argv[5], &seed)))
    usage(base);
  return strcmp(cmd, "insert") == 0 ? cmd_insert(type, path, n, seed) : cmd_check(type, path, n, seed);
}
