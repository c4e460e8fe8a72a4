/*
 * Keys and values of pmdk-art, shared by the driver/checker and the tamper tool.
 *
 * libart stores a key as a byte string and sets its last byte to 0 (COPY_BLOB writes s[len - 1] = '\0',
 * arttree.c passes strlen + 1), and an ART needs no key to be a prefix of another: so every key is a
 * NUL-terminated string of one fixed length, the NUL counted in its length. Two encodings of key #i:
 *   hex (default):      16 lowercase hex digits of subject_key(i, seed), 17 bytes. At most 16 distinct
 *                       bytes per position: the tree uses node4 and node16 only.
 *   wide (PMDK_ART_KEYS=wide): 'A' + (key & 3), then the key's 9 base-255 digits, least significant first,
 *                       each + 1, 11 bytes. Four subtrees of ~N/4 keys with up to 255 children each: the
 *                       tree grows node4 -> node16 -> node48 -> node256 below the root too.
 * The value of key #i is the string "value #i of KEY check CHECK" (NUL-terminated, NUL counted).
 */
#ifndef PMLAB_PMDK_ART_SUBJECT_H
#define PMLAB_PMDK_ART_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

#define ART_SUBJECT_LAYOUT "arttree_tx" /* POBJ_LAYOUT_NAME(arttree_tx), as arttree.c creates it */
#define ART_SUBJECT_KEY_MAX 24
#define ART_SUBJECT_VALUE_MAX 96

enum art_key_format { ART_KEYS_HEX, ART_KEYS_WIDE };

/* From PMDK_ART_KEYS (hex or wide); exits 2 on another value. */
enum art_key_format art_key_format_from_env(const char* prog);
const char* art_key_format_name(enum art_key_format format);

/* Writes the key's bytes (its NUL included) and returns their count. */
int art_key_encode(enum art_key_format format, uint64_t key, unsigned char* buf);
/* The key a stored byte string encodes; -1 when it is not a key of this format. */
int art_key_decode(enum art_key_format format, const unsigned char* bytes, uint32_t len, uint64_t* key);
/* Writes the value string of key #index (its NUL included) and returns its length with the NUL. */
int art_value_encode(uint64_t key, uint64_t index, char* buf);

#endif /* PMLAB_PMDK_ART_SUBJECT_H */
