#include "plugin/command_words.h"

#include <string.h>

int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

const char* skip_space(const char* p) {
  while (is_space(*p)) ++p;
  return p;
}

int is_compiler_name(const char* name, size_t len) {
  size_t end = len;
  size_t i = len;
  while (i > 0 && ((name[i - 1] >= '0' && name[i - 1] <= '9') || name[i - 1] == '.')) --i;
  if (i < end && i > 0 && name[i - 1] == '-' && name[i] >= '0' && name[i] <= '9') end = i - 1;
  static const char* const kNames[] = {"gcc", "g++", "cc", "c++", "clang", "clang++"};
  for (size_t k = 0; k < sizeof kNames / sizeof kNames[0]; ++k) {
    size_t n = strlen(kNames[k]);
    if (end == n && memcmp(name, kNames[k], n) == 0) return 1;
    // A target prefix: "<triple>-gcc"; plain "cc" is too short to trust there.
    if (n >= 3 && end > n + 1 && name[end - n - 1] == '-' &&
        memcmp(name + end - n, kNames[k], n) == 0)
      return 1;
  }
  return 0;
}
