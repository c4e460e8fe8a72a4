/*
 * pmdk-art: a driver and a checker for PMDK 1.12's libart example (examples/libart/art.c, an adaptive radix
 * tree on libpmemobj transactions), a subject for `pmlab crash exec`.
 *
 *   pmdk-art create POOL           create the pool (layout arttree_tx) and an empty tree, as arttree.c does
 *   pmdk-art insert POOL N [SEED]  insert keys #0..#N-1 (a pool that does not exist is created first)
 *   pmdk-art check POOL N [SEED]   open the pool (PMDK's recovery) and judge the tree
 *
 * Keys and values: pmdk_art_subject.h. insert skips keys art_search finds, so it resumes after a crash.
 *
 * What libart guarantees, and so what the check requires: art_insert is one transaction (TX_ADD of the
 * root, the insert into the tree, the root's size), so inserts are failure-atomic and in order: the keys
 * present are exactly #0..#m-1, found alike by art_search and art_iter (no key outside the sequence, none
 * twice); art_size == m; each value is the right string in an allocated var_string object; and since each
 * insert allocates exactly its key's and its value's var_string in that transaction (and nothing frees one),
 * exactly 2m var_string objects are allocated. A pool without a root object is a crash during create
 * (m = 0); art_tree_init allocates the root zeroed, an empty tree. Beyond what the API shows, the check walks
 * the tree (art.h declares its nodes): every node, leaf and string reachable from the root must be an
 * allocated object of its declared type, which catches a pointer left to an object whose allocation a
 * crash rolled back. Then, as pmdk-map's check does, it inserts keys #m..#N-1 and verifies again
 * (PMDK_SUBJECT_CHECK_USE=0 skips that).
 *
 * libart's API makes two things impossible: keys that are raw 8-byte integers (the last byte of a stored key
 * becomes 0; an ART also needs prefix-free keys), and passing state to an art_iter callback (it receives a
 * cb_data of art.c's own, not the caller's pointer, and is called for inner nodes with a NULL key too).
 */
#define _GNU_SOURCE

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpmemobj.h>
/* art.h defines (not declares) art_node_names; art.c's copy is the one linked. */
#define art_node_names pmdk_art_driver_node_names
#include <art.h>
#undef art_node_names

#include "pmdk_art_subject.h"
#include "pmlab/trace.h"
#include "subject_common.h"

static char base_label[160]; /* PROGRAM COMMAND */
static char label[256];      /* base_label, and what the check is at */

#define FAIL(...) subject_fail(SUBJECT_INCONSISTENT, label, __VA_ARGS__)

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s create POOL\n"
          "       %s insert POOL N [SEED]\n"
          "       %s check POOL N [SEED]\n"
          "SEED: the key sequence (default 1). Keys: PMDK_ART_KEYS=hex (default) or wide.\n"
          "Pool size: PMDK_ART_POOL_SIZE (default %zu bytes). check exits 0 consistent, 1 inconsistent,\n"
          "2 usage, 3 the pool cannot be opened.\n",
          prog, prog, prog, (size_t)PMEMOBJ_MIN_POOL);
  exit(SUBJECT_USAGE);
}

static PMEMobjpool* open_pool(const char* path, int create) {
  PMEMobjpool* pop = create ? pmemobj_create(path, ART_SUBJECT_LAYOUT,
                                             subject_pool_size(label, "PMDK_ART_POOL_SIZE", PMEMOBJ_MIN_POOL), 0666)
                            : pmemobj_open(path, ART_SUBJECT_LAYOUT);
  if (!pop)
    subject_fail(SUBJECT_NO_POOL, label, "cannot %s pool %s: %s", create ? "create" : "open", path, pmemobj_errormsg());
  return pop;
}

static void tree_init(PMEMobjpool* pop, int newpool) {
  if (art_tree_init(pop, &newpool) != 0)
    subject_fail(SUBJECT_INCONSISTENT, label, "art_tree_init failed: %s", pmemobj_errormsg());
}

static int cmd_create(const char* path) {
  PMEMobjpool* pop = open_pool(path, 1);
  tree_init(pop, 1);
  pmemobj_close(pop);
  return SUBJECT_OK;
}

static int cmd_insert(const char* path, uint64_t n, uint64_t seed, enum art_key_format format) {
  int create = !subject_file_exists(path);
  PMEMobjpool* pop = open_pool(path, create);
  tree_init(pop, create);
  subject_arm_kill_timer();
  unsigned char key[ART_SUBJECT_KEY_MAX];
  char value[ART_SUBJECT_VALUE_MAX];
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t k = subject_key(i, seed);
    int key_len = art_key_encode(format, k, key);
    pmlab_op_begin(); /* one operation: the lookup, and the insert of a key not there */
    if (TOID_IS_NULL(art_search(pop, key, key_len))) { /* else inserted before a crash, or by an earlier insert */
      int value_len = art_value_encode(k, i, value);
      art_insert(pop, key, key_len, value, value_len); /* aborts the process on a failed transaction */
    }
    pmlab_op_end();
  }
  pmemobj_close(pop);
  return SUBJECT_OK;
}

/* --- checker ------------------------------------------------------------------------------------------ */

struct verifier {
  PMEMobjpool* pop;
  PMEMoid root;
  const struct subject_keys* keys;
  enum art_key_format format;
  struct subject_objects objects;
  unsigned char* present; /* by art_search */
  unsigned char* seen;    /* by art_iter */
  PMEMoid* value;         /* by art_search */
  uint64_t visited;
  uint64_t nodes;
};

static struct verifier* visiting; /* art_iter hands its callback a cb_data of its own */

static int iter_visit(void* data, const unsigned char* key, uint32_t key_len, const unsigned char* value,
                      uint32_t value_len) {
  (void)data;
  struct verifier* v = visiting;
  if (!key) return 0; /* an inner node */
  uint64_t k;
  int64_t i = -1;
  if (art_key_decode(v->format, key, key_len, &k) == 0) i = subject_keys_find(v->keys, k);
  if (i < 0)
    FAIL("art_iter reports a key of %" PRIu32 " bytes, \"%.*s\", which is not among the %" PRIu64
         " %s keys of seed %" PRIu64,
         key_len, (int)(key_len > 24 ? 24 : key_len), (const char*)key, v->keys->n, art_key_format_name(v->format),
         v->keys->seed);
  if (v->seen[i]) FAIL("art_iter reports key #%" PRId64 " (0x%016" PRIx64 ") twice", i, k);
  v->seen[i] = 1;
  v->visited++;
  if (!v->present[i])
    FAIL("art_iter reports key #%" PRId64 " (0x%016" PRIx64 "), which art_search does not find", i, k);
  char expected[ART_SUBJECT_VALUE_MAX];
  int expected_len = art_value_encode(k, (uint64_t)i, expected);
  if (!value || value_len != (uint32_t)expected_len || memcmp(value, expected, (size_t)expected_len) != 0)
    FAIL("art_iter: value of key #%" PRId64 " (0x%016" PRIx64 ") corrupt: %" PRIu32 " bytes \"%.*s\"", i, k, value_len,
         value ? (int)(value_len > 60 ? 60 : value_len) : 0, value ? (const char*)value : "");
  return 0;
}

/* An OID the tree holds must lead to an allocated object of the type it is declared with. */
static void expect_object(struct verifier* v, PMEMoid oid, uint64_t type, const char* what, int depth) {
  if (oid.pool_uuid_lo != v->root.pool_uuid_lo)
    FAIL("the tree's %s at depth %d has pool uuid 0x%" PRIx64 " (the pool's is 0x%" PRIx64 "), offset 0x%" PRIx64
         ": a torn or foreign OID",
         what, depth, oid.pool_uuid_lo, v->root.pool_uuid_lo, oid.off);
  int64_t found = subject_objects_type(&v->objects, oid.off);
  if (found != (int64_t)type)
    FAIL("the tree's %s at depth %d points to offset 0x%" PRIx64 ", which is %s", what, depth, oid.off,
         found < 0 ? "not an allocated object (freed, rolled back or never allocated)"
                   : "an allocated object of another type");
}

/* Every node, leaf and string reachable from the root is allocated, with its declared type. */
static void walk(struct verifier* v, TOID(art_node_u) n, int depth) {
  if (depth > ART_SUBJECT_KEY_MAX + 1) FAIL("the tree is deeper than any key is long (depth %d): a cycle?", depth);
  if (++v->nodes > v->objects.count) FAIL("the tree reaches more nodes than the pool has objects: a cycle?");
  expect_object(v, n.oid, TOID_TYPE_NUM(art_node_u), "node", depth);
  const art_node_u* u = D_RO(n);
  unsigned count = 0;
  switch (u->art_node_type) {
    case NODE4:
      expect_object(v, u->u.an4.oid, TOID_TYPE_NUM(art_node4), "node4", depth);
      count = D_RO(u->u.an4)->n.num_children;
      if (count > 4) FAIL("a node4 at depth %d has %u children", depth, count);
      for (unsigned i = 0; i < count; ++i) walk(v, D_RO(u->u.an4)->children[i], depth + 1);
      break;
    case NODE16:
      expect_object(v, u->u.an16.oid, TOID_TYPE_NUM(art_node16), "node16", depth);
      count = D_RO(u->u.an16)->n.num_children;
      if (count > 16) FAIL("a node16 at depth %d has %u children", depth, count);
      for (unsigned i = 0; i < count; ++i) walk(v, D_RO(u->u.an16)->children[i], depth + 1);
      break;
    case NODE48:
      expect_object(v, u->u.an48.oid, TOID_TYPE_NUM(art_node48), "node48", depth);
      for (unsigned c = 0; c < 256; ++c) {
        unsigned slot = D_RO(u->u.an48)->keys[c];
        if (!slot) continue;
        if (slot > 48) FAIL("a node48 at depth %d maps byte %u to child %u", depth, c, slot);
        walk(v, D_RO(u->u.an48)->children[slot - 1], depth + 1);
      }
      break;
    case NODE256:
      expect_object(v, u->u.an256.oid, TOID_TYPE_NUM(art_node256), "node256", depth);
      for (unsigned c = 0; c < 256; ++c)
        if (!TOID_IS_NULL(D_RO(u->u.an256)->children[c])) walk(v, D_RO(u->u.an256)->children[c], depth + 1);
      break;
    case art_leaf_t:
      expect_object(v, u->u.al.oid, TOID_TYPE_NUM(art_leaf), "leaf", depth);
      expect_object(v, D_RO(u->u.al)->key.oid, TOID_TYPE_NUM(var_string), "leaf's key", depth);
      expect_object(v, D_RO(u->u.al)->value.oid, TOID_TYPE_NUM(var_string), "leaf's value", depth);
      break;
    default: FAIL("a node at depth %d has type %u, not one of libart's", depth, u->art_node_type);
  }
}

/* Everything libart guarantees (the comment at the top); returns m, the keys present. */
static uint64_t verify(struct verifier* v) {
  const struct subject_keys* keys = v->keys;
  uint64_t n = keys->n;
  subject_objects_free(&v->objects);
  if (subject_objects_collect(v->pop, &v->objects)) FAIL("out of memory");

  subject_guard_phase("walking the tree", 0);
  const struct art_tree_root* root = pmemobj_direct(v->root);
  v->nodes = 0;
  if (!TOID_IS_NULL(root->root)) walk(v, root->root, 0);

  subject_guard_phase("searching the keys (art_search)", 0);
  unsigned char key[ART_SUBJECT_KEY_MAX];
  memset(v->seen, 0, n ? n : 1);
  for (uint64_t i = 0; i < n; ++i) {
    int key_len = art_key_encode(v->format, keys->key[i], key);
    v->value[i] = art_search(v->pop, key, key_len).oid;
    v->present[i] = !OID_IS_NULL(v->value[i]);
  }
  uint64_t m = 0;
  while (m < n && v->present[m]) m++;
  for (uint64_t j = m + 1; j < n; ++j)
    if (v->present[j])
      FAIL("key #%" PRIu64 " (0x%016" PRIx64 ") present but key #%" PRIu64 " (0x%016" PRIx64
           ") missing: not a prefix of the inserted keys",
           j, keys->key[j], m, keys->key[m]);

  subject_guard_phase("iterating the tree (art_iter)", 0);
  v->visited = 0;
  visiting = v;
  art_iter(v->pop, iter_visit, NULL);
  if (v->visited != m) {
    uint64_t missed = 0;
    while (missed < m && v->seen[missed]) missed++;
    FAIL("art_iter visits %" PRIu64 " keys but art_search finds %" PRIu64 " (key #%" PRIu64 " 0x%016" PRIx64
         " not visited)",
         v->visited, m, missed, keys->key[missed]);
  }

  subject_guard_phase("checking the values", 0);
  for (uint64_t i = 0; i < m; ++i) {
    PMEMoid value = v->value[i];
    if (value.pool_uuid_lo != v->root.pool_uuid_lo)
      FAIL("value of key #%" PRIu64 " (0x%016" PRIx64 ") has pool uuid 0x%" PRIx64 " (the pool's is 0x%" PRIx64
           "): a torn or foreign OID",
           i, keys->key[i], value.pool_uuid_lo, v->root.pool_uuid_lo);
    if (subject_objects_type(&v->objects, value.off) != (int64_t)TOID_TYPE_NUM(var_string))
      FAIL("value of key #%" PRIu64 " (0x%016" PRIx64 ") points to offset 0x%" PRIx64
           ", which is not "
           "an allocated var_string (freed, rolled back or never allocated)",
           i, keys->key[i], value.off);
    const var_string* s = pmemobj_direct(value);
    char expected[ART_SUBJECT_VALUE_MAX];
    int expected_len = art_value_encode(keys->key[i], i, expected);
    if (s->len != (size_t)expected_len || memcmp(s->s, expected, (size_t)expected_len) != 0)
      FAIL("value of key #%" PRIu64 " (0x%016" PRIx64 ") corrupt: %zu bytes \"%.*s\"", i, keys->key[i], s->len,
           (int)(s->len > 60 ? 60 : s->len), (const char*)s->s);
  }
  size_t strings = subject_objects_count_type(&v->objects, TOID_TYPE_NUM(var_string));
  if (strings != 2 * m)
    FAIL("%zu var_string objects allocated but %" PRIu64
         " keys present: each insert allocates its key's "
         "and its value's in its own transaction, so there must be %" PRIu64,
         strings, m, 2 * m);

  subject_guard_phase("reading the tree's size (art_size)", 0);
  uint64_t size = art_size(v->pop);
  if (size != m) FAIL("art_size is %" PRIu64 " but %" PRIu64 " keys are present", size, m);
  return m;
}

static int cmd_check(const char* path, uint64_t n, uint64_t seed, enum art_key_format format) {
  subject_guard_install(label);

  subject_guard_phase("opening the pool (pmemobj_open, PMDK's recovery)", 1);
  PMEMobjpool* pop = open_pool(path, 0);

  subject_guard_phase("reading the root object", 0);
  size_t root_size = pmemobj_root_size(pop);
  if (root_size == 0) {
    /* A crash during create, before art_tree_init allocated the root: an empty tree. */
    struct subject_objects objects;
    if (subject_objects_collect(pop, &objects)) FAIL("out of memory");
    size_t strings = subject_objects_count_type(&objects, TOID_TYPE_NUM(var_string));
    subject_objects_free(&objects);
    if (strings != 0)
      FAIL(
          "%zu var_string objects allocated but the pool has no root: a transactional insert "
          "leaks none",
          strings);
    printf("%s: consistent: no root object yet, 0 of %" PRIu64 " keys present\n", label, n);
    pmemobj_close(pop);
    return SUBJECT_OK;
  }
  if (root_size < sizeof(struct art_tree_root))
    FAIL("the root object is %zu bytes, %zu expected", root_size, sizeof(struct art_tree_root));
  PMEMoid root_oid = pmemobj_root(pop, root_size); /* the existing root: nothing is allocated */
  const struct art_tree_root* root = pmemobj_direct(root_oid);
  if (!OID_IS_NULL(root->root.oid) && root->root.oid.pool_uuid_lo != root_oid.pool_uuid_lo)
    FAIL("the tree's root OID is torn: offset 0x%" PRIx64 " with pool uuid 0x%" PRIx64 " (the pool's is 0x%" PRIx64 ")",
         root->root.oid.off, root->root.oid.pool_uuid_lo, root_oid.pool_uuid_lo);
  tree_init(pop, 0);

  subject_guard_phase("building the key sequence", 0);
  struct subject_keys keys;
  if (subject_keys_init(&keys, n, seed)) FAIL("out of memory");
  struct verifier v = {
      .pop = pop,
      .root = root_oid,
      .keys = &keys,
      .format = format,
      .present = calloc(n ? n : 1, 1),
      .seen = calloc(n ? n : 1, 1),
      .value = calloc(n ? n : 1, sizeof(PMEMoid)),
  };
  if (!v.present || !v.seen || !v.value) FAIL("out of memory");
  uint64_t m = verify(&v);
  const uint64_t returned = subject_returned_inserts();
  if (m < returned) FAIL("%" PRIu64 " keys present, but %" PRIu64 " inserts had returned", m, returned);

  /* Use what recovery left, as pmdk-map's check does: complete the sequence and verify again. */
  if (m < n && !subject_env_is_off("PMDK_SUBJECT_CHECK_USE")) {
    snprintf(label, sizeof(label), "%s, after completing keys #%" PRIu64 "..#%" PRIu64 " on the recovered pool",
             base_label, m, n - 1);
    subject_guard_phase("completing the inserts on the recovered pool", 0);
    unsigned char key[ART_SUBJECT_KEY_MAX];
    char value[ART_SUBJECT_VALUE_MAX];
    for (uint64_t i = m; i < n; ++i) {
      int key_len = art_key_encode(format, keys.key[i], key);
      int value_len = art_value_encode(keys.key[i], i, value);
      art_insert(pop, key, key_len, value, value_len);
    }
    uint64_t all = verify(&v);
    if (all != n) FAIL("only %" PRIu64 " of the %" PRIu64 " keys present", all, n);
    strcpy(label, base_label);
  }

  printf("%s: consistent: %" PRIu64 " of %" PRIu64 " %s keys present (a prefix)\n", label, m, n,
         art_key_format_name(format));
  free(v.present);
  free(v.seen);
  free(v.value);
  subject_objects_free(&v.objects);
  subject_keys_free(&keys);
  pmemobj_close(pop);
  return SUBJECT_OK;
}

int main(int argc, char* argv[]) {
  const char* base = subject_program_name(argc, argv, "pmdk-art");
  if (argc < 3) usage(base);
  const char* cmd = argv[1];
  const char* path = argv[2];
  snprintf(base_label, sizeof(base_label), "%s %s", base, cmd);
  strcpy(label, base_label);

  if (strcmp(cmd, "create") == 0) {
    if (argc != 3) usage(base);
    return cmd_create(path);
  }
  if (strcmp(cmd, "insert") != 0 && strcmp(cmd, "check") != 0) usage(base);
  uint64_t n, seed = 1;
  if (argc < 4 || argc > 5 || subject_parse_u64(argv[3], &n) || n >= (1ULL << 40) ||
      (argc == 5 && subject_parse_u64(argv[4], &seed)))
    usage(base);
  enum art_key_format format = art_key_format_from_env(label);
  return strcmp(cmd, "insert") == 0 ? cmd_insert(path, n, seed, format) : cmd_check(path, n, seed, format);
}
