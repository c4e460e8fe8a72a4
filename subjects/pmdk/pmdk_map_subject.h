/*
 * The pool layout pmdk-map drives PMDK's example maps in, shared by the driver/checker and the tamper tool.
 */
#ifndef PMLAB_PMDK_MAP_SUBJECT_H
#define PMLAB_PMDK_MAP_SUBJECT_H

#include <stdint.h>

#include <libpmemobj.h>
#include <map.h>

/* Type number of the value records; the examples use 1000..1021 and 2020. */
#define SUBJECT_VALUE_TYPE 4242u
#define SUBJECT_VALUE_MAGIC 0x70646d6b2d6d6170ULL /* "pdmk-map" */
/* The hashmaps' seed (struct hashmap_args), fixed so recovery redraws the same hash coefficients. */
#define SUBJECT_MAP_SEED 0x5eedu

/* The value of key #index: a small persistent object the check verifies field by field. */
struct subject_value {
  uint64_t magic;
  uint64_t key;
  uint64_t index;
  uint64_t check; /* subject_value_check(key, index) */
};

struct subject_root {
  TOID(struct map) map; /* OID_NULL until the map is created */
};
TOID_DECLARE_ROOT(struct subject_root);

struct subject_map_type {
  const char* name;
  const struct map_ops* ops;
  /* 1: an insert is one transaction that also allocates the value, so the map and the value records
   * always agree; 0: the map's own atomic protocol, the value allocated before it (a crash between the
   * two leaks one record). */
  int transactional;
};

extern const struct subject_map_type subject_map_types[];
extern const size_t subject_map_type_count;

const struct subject_map_type* subject_map_type_find(const char* name);
/* "pmlab-pmdk-map:TYPE": a pool of one map type cannot be opened as another. */
void subject_map_layout(const struct subject_map_type* type, char* buf, size_t size);
/* The type names, separated by '|', for usage lines. */
const char* subject_map_type_names(void);

#endif /* PMLAB_PMDK_MAP_SUBJECT_H */
