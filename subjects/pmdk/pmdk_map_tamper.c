/*
 * pmdk-map-tamper: puts a pmdk-map pool into a state the tests need — one a crash can leave (no root, no
 * map yet) or damage the checker must catch — through PMDK's own API. A test tool, not a subject.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpmemobj.h>
#include <map.h>

#include "pmdk_map_subject.h"
#include "subject_common.h"

static const char* label = "pmdk-map-tamper";

static void usage(void) {
  fprintf(stderr,
          "usage: pmdk-map-tamper TYPE POOL N SEED ACTION\n"
          "ACTION: no-root        create POOL, no root object (a crash early in create)\n"
          "        null-map       create POOL, a root object with a null map (a crash before map_create)\n"
          "        hole           map_remove key #N/2: the keys present are no longer a prefix\n"
          "        corrupt-value  flip a bit of the checksum in key #N/2's value record\n"
          "        free-value     free key #N/2's value record, the map still pointing to it\n"
          "        extra-key      insert key #0 of sequence SEED+1 with a value record\n"
          "TYPE: %s\n",
          subject_map_type_names());
  exit(SUBJECT_USAGE);
}

static PMEMobjpool* pool(const struct subject_map_type* type, const char* path, int create) {
  char layout[64];
  subject_map_layout(type, layout, sizeof(layout));
  PMEMobjpool* pop = create ? pmemobj_create(path, layout, PMEMOBJ_MIN_POOL, 0666) : pmemobj_open(path, layout);
  if (!pop)
    subject_fail(SUBJECT_NO_POOL, label, "cannot %s %s: %s", create ? "create" : "open", path, pmemobj_errormsg());
  return pop;
}

static int value_construct(PMEMobjpool* pop, void* ptr, void* arg) {
  struct subject_value* v = ptr;
  const struct subject_value* proto = arg;
  *v = *proto;
  pmemobj_persist(pop, v, sizeof(*v));
  return 0;
}

int main(int argc, char* argv[]) {
  if (argc != 6) usage();
  const struct subject_map_type* type = subject_map_type_find(argv[1]);
  uint64_t n, seed;
  if (!type || subject_parse_u64(argv[3], &n) || subject_parse_u64(argv[4], &seed)) usage();
  const char* path = argv[2];
  const char* action = argv[5];

  if (strcmp(action, "no-root") == 0 || strcmp(action, "null-map") == 0) {
    PMEMobjpool* pop = pool(type, path, 1);
    if (strcmp(action, "null-map") == 0 && TOID_IS_NULL(POBJ_ROOT(pop, struct subject_root)))
      subject_fail(SUBJECT_INCONSISTENT, label, "cannot allocate the root: %s", pmemobj_errormsg());
    pmemobj_close(pop);
    return SUBJECT_OK;
  }

  PMEMobjpool* pop = pool(type, path, 0);
  if (pmemobj_root_size(pop) == 0) subject_fail(SUBJECT_INCONSISTENT, label, "%s has no root object", path);
  TOID(struct subject_root) root = POBJ_ROOT(pop, struct subject_root);
  TOID(struct map) map = D_RO(root)->map;
  struct map_ctx* mapc = map_ctx_init(type->ops, pop);
  if (TOID_IS_NULL(map) || !mapc || map_check(mapc, map) || map_init(mapc, map))
    subject_fail(SUBJECT_INCONSISTENT, label, "%s holds no usable %s map", path, type->name);

  uint64_t index = n / 2;
  uint64_t key = subject_key(index, seed);
  PMEMoid value = map_get(mapc, map, key);
  int needs_key = strcmp(action, "extra-key") != 0;
  if (needs_key && OID_IS_NULL(value))
    subject_fail(SUBJECT_INCONSISTENT, label, "key #%" PRIu64 " is not in the map", index);

  if (strcmp(action, "hole") == 0) {
    map_remove(mapc, map, key);
  } else if (strcmp(action, "corrupt-value") == 0) {
    struct subject_value* v = pmemobj_direct(value);
    uint64_t check = v->check ^ 1;
    pmemobj_memcpy_persist(pop, &v->check, &check, sizeof(check));
  } else if (strcmp(action, "free-value") == 0) {
    pmemobj_free(&value);
  } else if (strcmp(action, "extra-key") == 0) {
    uint64_t extra = subject_key(0, seed + 1);
    struct subject_value proto = {SUBJECT_VALUE_MAGIC, extra, 0, subject_value_check(extra, 0)};
    if (type->transactional) {
      TX_BEGIN(pop) {
        PMEMoid v = pmemobj_tx_alloc(sizeof(proto), SUBJECT_VALUE_TYPE);
        memcpy(pmemobj_direct(v), &proto, sizeof(proto));
        if (map_insert(mapc, map, extra, v) != 0) pmemobj_tx_abort(EINVAL);
      }
      TX_ONABORT { subject_fail(SUBJECT_INCONSISTENT, label, "insert failed: %s", pmemobj_errormsg()); }
      TX_END
    } else {
      PMEMoid v;
      if (pmemobj_alloc(pop, &v, sizeof(proto), SUBJECT_VALUE_TYPE, value_construct, &proto) ||
          map_insert(mapc, map, extra, v) != 0)
        subject_fail(SUBJECT_INCONSISTENT, label, "insert failed: %s", pmemobj_errormsg());
    }
  } else {
    usage();
  }
  map_ctx_free(mapc);
  pmemobj_close(pop);
  return SUBJECT_OK;
}
