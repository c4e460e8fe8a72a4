/*
 * pmdk-art-tamper: puts a pmdk-art pool into a state the tests need — one a crash can leave (no root yet)
 * or damage the checker must catch — through libart's and PMDK's own API. A test tool, not a subject.
 */
#define _GNU_SOURCE

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpmemobj.h>
#define art_node_names pmdk_art_tamper_node_names
#include <art.h>
#undef art_node_names

#include "pmdk_art_subject.h"
#include "subject_common.h"

static const char* label = "pmdk-art-tamper";

static void usage(void) {
  fprintf(stderr,
          "usage: pmdk-art-tamper POOL N SEED ACTION\n"
          "ACTION: no-root        create POOL, no root object (a crash early in create)\n"
          "        hole           art_delete key #N/2: the keys present are no longer a prefix\n"
          "        corrupt-value  change a byte of key #N/2's value string\n"
          "        free-value     free key #N/2's value string, the tree still pointing to it\n"
          "        extra-key      art_insert key #0 of sequence SEED+1\n"
          "        bad-size       add one to the tree's size\n"
          "Keys: PMDK_ART_KEYS as for pmdk-art.\n");
  exit(SUBJECT_USAGE);
}

int main(int argc, char* argv[]) {
  uint64_t n, seed;
  if (argc != 5 || subject_parse_u64(argv[2], &n) || subject_parse_u64(argv[3], &seed)) usage();
  const char* path = argv[1];
  const char* action = argv[4];
  enum art_key_format format = art_key_format_from_env(label);

  if (strcmp(action, "no-root") == 0) {
    PMEMobjpool* pop = pmemobj_create(path, ART_SUBJECT_LAYOUT, PMEMOBJ_MIN_POOL, 0666);
    if (!pop) subject_fail(SUBJECT_NO_POOL, label, "cannot create %s: %s", path, pmemobj_errormsg());
    pmemobj_close(pop);
    return SUBJECT_OK;
  }

  PMEMobjpool* pop = pmemobj_open(path, ART_SUBJECT_LAYOUT);
  if (!pop) subject_fail(SUBJECT_NO_POOL, label, "cannot open %s: %s", path, pmemobj_errormsg());
  int newpool = 0;
  art_tree_init(pop, &newpool);

  uint64_t index = n / 2;
  unsigned char key[ART_SUBJECT_KEY_MAX];
  int key_len = art_key_encode(format, subject_key(index, seed), key);
  TOID(var_string) value = art_search(pop, key, key_len);
  if (strcmp(action, "extra-key") != 0 && strcmp(action, "bad-size") != 0 && TOID_IS_NULL(value))
    subject_fail(SUBJECT_INCONSISTENT, label, "key #%" PRIu64 " is not in the tree", index);

  if (strcmp(action, "hole") == 0) {
    art_delete(pop, key, key_len);
  } else if (strcmp(action, "corrupt-value") == 0) {
    unsigned char c = (unsigned char)(D_RO(value)->s[0] ^ 0x20);
    pmemobj_memcpy_persist(pop, &D_RW(value)->s[0], &c, 1);
  } else if (strcmp(action, "free-value") == 0) {
    PMEMoid oid = value.oid;
    pmemobj_free(&oid);
  } else if (strcmp(action, "extra-key") == 0) {
    uint64_t extra = subject_key(0, seed + 1);
    char text[ART_SUBJECT_VALUE_MAX];
    int text_len = art_value_encode(extra, 0, text);
    key_len = art_key_encode(format, extra, key);
    art_insert(pop, key, key_len, text, text_len);
  } else if (strcmp(action, "bad-size") == 0) {
    TOID(struct art_tree_root) root = POBJ_ROOT(pop, struct art_tree_root);
    TX_BEGIN(pop) {
      TX_ADD_FIELD(root, size);
      D_RW(root)->size++;
    }
    TX_END
  } else {
    usage();
  }
  pmemobj_close(pop);
  return SUBJECT_OK;
}
