#include "pmdk_art_subject.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subject_common.h"

enum art_key_format art_key_format_from_env(const char* prog) {
  const char* text = getenv("PMDK_ART_KEYS");
  if (!text || !*text || strcmp(text, "hex") == 0) return ART_KEYS_HEX;
  if (strcmp(text, "wide") == 0) return ART_KEYS_WIDE;
  subject_fail(SUBJECT_USAGE, prog, "PMDK_ART_KEYS=%s: hex or wide expected", text);
}

const char* art_key_format_name(enum art_key_format format) { return format == ART_KEYS_WIDE ? "wide" : "hex"; }

int art_key_encode(enum art_key_format format, uint64_t key, unsigned char* buf) {
  if (format == ART_KEYS_HEX) {
    snprintf((char*)buf, ART_SUBJECT_KEY_MAX, "%016" PRIx64, key);
    return 17;
  }
  buf[0] = (unsigned char)('A' + (key & 3));
  uint64_t rest = key;
  for (int d = 1; d <= 9; ++d) {
    buf[d] = (unsigned char)(rest % 255 + 1);
    rest /= 255;
  }
  buf[10] = 0;
  return 11;
}

int art_key_decode(enum art_key_format format, const unsigned char* bytes, uint32_t len, uint64_t* key) {
  if (format == ART_KEYS_HEX) {
    if (len != 17 || bytes[16] != 0) return -1;
    uint64_t v = 0;
    for (int d = 0; d < 16; ++d) {
      unsigned c = bytes[d];
      unsigned digit;
      if (c >= '0' && c <= '9') digit = c - '0';
      else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      else return -1;
      v = v << 4 | digit;
    }
    *key = v;
    return 0;
  }
  if (len != 11 || bytes[10] != 0) return -1;
  uint64_t v = 0;
  for (int d = 9; d >= 1; --d) {
    if (bytes[d] == 0) return -1;
    if (__builtin_mul_overflow(v, 255, &v) || __builtin_add_overflow(v, (uint64_t)(bytes[d] - 1), &v)) return -1;
  }
  if (bytes[0] != 'A' + (v & 3)) return -1;
  *key = v;
  return 0;
}

int art_value_encode(uint64_t key, uint64_t index, char* buf) {
  int n = snprintf(buf, ART_SUBJECT_VALUE_MAX, "value #%" PRIu64 " of %016" PRIx64 " check %016" PRIx64, index, key,
                   subject_value_check(key, index));
  return n + 1;
}
