#include "pmdk_map_subject.h"

#include <stdio.h>
#include <string.h>

#include <map_btree.h>
#include <map_ctree.h>
#include <map_hashmap_atomic.h>
#include <map_hashmap_rp.h>
#include <map_hashmap_tx.h>
#include <map_rbtree.h>
#include <map_skiplist.h>

/* As PMDK's map/data_store.c drives them: the hashmaps on the atomic APIs outside transactions. */
const struct subject_map_type subject_map_types[] = {
    {"btree", MAP_BTREE, 1},           {"ctree", MAP_CTREE, 1},           {"rbtree", MAP_RBTREE, 1},
    {"skiplist", MAP_SKIPLIST, 1},     {"hashmap_tx", MAP_HASHMAP_TX, 1}, {"hashmap_atomic", MAP_HASHMAP_ATOMIC, 0},
    {"hashmap_rp", MAP_HASHMAP_RP, 0},
};
const size_t subject_map_type_count = sizeof(subject_map_types) / sizeof(subject_map_types[0]);

const struct subject_map_type* subject_map_type_find(const char* name) {
  for (size_t i = 0; i < subject_map_type_count; ++i)
    if (strcmp(subject_map_types[i].name, name) == 0) return &subject_map_types[i];
  return NULL;
}

void subject_map_layout(const struct subject_map_type* type, char* buf, size_t size) {
  snprintf(buf, size, "pmlab-pmdk-map:%s", type->name);
}

const char* subject_map_type_names(void) {
  static char names[256];
  if (!names[0]) {
    size_t len = 0;
    for (size_t i = 0; i < subject_map_type_count; ++i)
      len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? "|" : "", subject_map_types[i].name);
  }
  return names;
}
