// Which commands of a ninja edge are archive and link steps, and where the
// launcher goes.
#include "plugin/link_rewrite.h"

#include <stdlib.h>
#include <string.h>

#include "plugin/command_words.h"

// "ar"/"ranlib", or "<triple>-ar"/"<triple>-ranlib".
static int is_tool_name(const char* name, size_t len, const char* tool) {
  size_t n = strlen(tool);
  if (len == n && memcmp(name, tool, n) == 0) return 1;
  if (len <= n + 1 || name[len - n - 1] != '-' || memcmp(name + len - n, tool, n) != 0) return 0;
  return memchr(name, '-', len - n - 1) != NULL;  // a triple has a '-' of its own
}

// True when the simple command [p, end) has the word `word`.
static int has_word(const char* p, const char* end, const char* word) {
  size_t n = strlen(word);
  for (const char* q = p; q + n <= end; ++q) {
    if ((q == p || is_space(q[-1])) && memcmp(q, word, n) == 0 && (q + n == end || is_space(q[n])))
      return 1;
  }
  return 0;
}

// True when [p, end) starts with the words of `words` (NULL-terminated),
// each followed by a space, and has at least one more word after them.
static int words_then_more(const char* p, const char* end, const char* const* words) {
  for (; *words; ++words) {
    p = skip_space(p);
    size_t n = strlen(*words);
    if ((size_t)(end - p) <= n || memcmp(p, *words, n) != 0 || !is_space(p[n])) return 0;
    p += n;
  }
  p = skip_space(p);
  return p < end && !is_space(*p);
}

// Where the launcher goes in the simple command [p, end) of an archive or
// link step ("ar ...", "ranlib ...", "<driver> ... -o out" without -c, and
// CMake's "cmake -E rm -f <archive>" before an archive step), or NULL.
static const char* link_word(const char* p, const char* end) {
  p = skip_space(p);
  const char* word_end = p;
  while (word_end < end && !is_space(*word_end)) ++word_end;
  if (word_end == p) return NULL;
  const char* base = p;
  for (const char* q = p; q < word_end; ++q)
    if (*q == '/') base = q + 1;
  size_t len = (size_t)(word_end - base);
  if (is_tool_name(base, len, "ar") || is_tool_name(base, len, "ranlib")) return p;
  static const char* const kCmakeRemove[] = {"-E", "rm", "-f", NULL};
  if (len == 5 && memcmp(base, "cmake", 5) == 0 && words_then_more(word_end, end, kCmakeRemove))
    return p;
  if (is_compiler_name(base, len) && !has_word(word_end, end, "-c") &&
      has_word(word_end, end, "-o"))
    return p;
  return NULL;
}

// The quoted parts a link line of CMake or Meson holds, which no shell reads
// as an operator: CMake's `-Wl,-rpath,"\$ORIGIN..."` (CMAKE_BUILD_RPATH_USE_ORIGIN),
// a double-quoted part holding only "\$ORIGIN" and path characters, CMake's
// quoted paths (a double-quoted part of path characters alone), and Meson's
// single-quoted words (`'-Wl,-rpath,$ORIGIN/'`), inside which the shell
// takes every character as it is. A copy of `cmd` with each such part
// masked ('x'), for the checks of rewrite_links; NULL when malloc fails.
static char* mask_quoted_parts(const char* cmd) {
  static const char kOrigin[] = "\"\\$ORIGIN";
  static const char kPathChars[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,+=@%";
  size_t n = strlen(cmd);
  char* m = malloc(n + 1);
  if (!m) return NULL;
  memcpy(m, cmd, n + 1);
  for (char* q = strstr(m, kOrigin); q; q = strstr(q, kOrigin)) {
    char* e = q + sizeof kOrigin - 1;
    e += strspn(e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:");
    if (*e != '"') {
      q = e;  // left as it is: the check refuses the command
      continue;
    }
    memset(q, 'x', (size_t)(e - q + 1));
    q = e + 1;
  }
  // A double-quoted part holding only path characters (CMake quotes the
  // paths it writes into LINK_FLAGS: -Wl,--version-script,"/src/lib.map"),
  // in which the shell expands nothing. One holding anything else, escaped
  // or without its pair is left for the check to refuse.
  for (char* q = strchr(m, '"'); q; q = strchr(q, '"')) {
    char* e = strchr(q + 1, '"');
    if (!e || (q > m && q[-1] == '\\')) break;
    const size_t inside = (size_t)(e - q - 1);
    if (strspn(q + 1, kPathChars) == inside) memset(q, 'x', inside + 2);
    q = e + 1;
  }
  // Single quotes outside the double-quoted parts just masked (m has no
  // other double quote, or the check refuses it): each pair and what it
  // holds. One that is escaped (\'), opens $'...' (which reads escapes) or
  // has no pair is left for the check to refuse.
  if (!strchr(m, '"')) {
    for (char* q = strchr(m, '\''); q; q = strchr(q, '\'')) {
      char* e = strchr(q + 1, '\'');
      if (!e || (q > m && (q[-1] == '\\' || q[-1] == '$'))) break;
      memset(q, 'x', (size_t)(e - q + 1));
      q = e + 1;
    }
  }
  return m;
}

// A chain whose every command is an archive or link step or `:` (CMake's
// ": && cmake -E rm -f lib.a && ar qc lib.a ... && ranlib lib.a && :"):
// one launcher runs the steps in order, stopping at the first that fails,
// instead of one launcher per step. Its words: "--link-steps", then each
// step's words, the steps separated by the word "&&" (written \&\&, which
// no plain word of the chain can be: there, && is the shell's operator).
// NULL when the command holds a quoted part (masked) or another command.
static char* link_steps_command(const char* cmd, const char* masked, const char* const* starts,
                                const char* const* ends, size_t steps, const char* launcher,
                                size_t launcher_len) {
  static const char kMark[] = "--link-steps";
  static const char kAnd[] = " \\&\\& ";
  if (steps < 2 || strcmp(cmd, masked) != 0) return NULL;
  size_t n = launcher_len + sizeof kMark;
  for (size_t i = 0; i < steps; ++i) n += (size_t)(ends[i] - starts[i]) + sizeof kAnd;
  char* out = malloc(n + 1);
  if (!out) return NULL;
  size_t o = 0;
  memcpy(out + o, launcher, launcher_len);
  o += launcher_len;
  memcpy(out + o, kMark, sizeof kMark - 1);
  o += sizeof kMark - 1;
  for (size_t i = 0; i < steps; ++i) {
    if (i > 0) {
      memcpy(out + o, kAnd, sizeof kAnd - 1);
      o += sizeof kAnd - 1;
    } else {
      out[o++] = ' ';
    }
    memcpy(out + o, starts[i], (size_t)(ends[i] - starts[i]));
    o += (size_t)(ends[i] - starts[i]);
  }
  out[o] = '\0';
  return out;
}

// rewrite_links on a command whose quoted parts `masked` hides: the
// launcher before each archive or link word, found in `masked` and inserted
// at the same offsets of `cmd` (or one launcher for them all:
// link_steps_command).
static char* insert_link_launchers(const char* cmd, const char* masked, const char* launcher,
                                   size_t launcher_len) {
  for (const char* q = strchr(masked, '&'); q; q = strchr(q + 2, '&')) {
    if (q[1] != '&') return NULL;
  }
  const char* at[64];
  const char* step_end[64];  // in cmd, with `at`
  size_t count = 0;
  int only_steps = 1;  // every command a step or `:`
  const char* p = masked;
  for (;;) {
    const char* amp = strstr(p, "&&");
    const char* end = amp ? amp : p + strlen(p);
    const char* w = link_word(p, end);
    if (w) {
      if (count == sizeof at / sizeof at[0]) return NULL;
      const char* last = end;
      while (last > w && is_space(last[-1])) --last;
      step_end[count] = cmd + (last - masked);
      at[count++] = cmd + (w - masked);
    } else {
      const char* q = skip_space(p);
      const char* last = end;
      while (last > q && is_space(last[-1])) --last;
      if (!(last - q == 1 && *q == ':')) only_steps = 0;
    }
    if (!amp) break;
    p = amp + 2;
  }
  if (count == 0) return NULL;
  if (only_steps) {
    char* steps = link_steps_command(cmd, masked, at, step_end, count, launcher, launcher_len);
    if (steps) return steps;
  }
  size_t n = strlen(cmd);
  char* out = malloc(n + count * launcher_len + 1);
  if (!out) return NULL;
  size_t o = 0;
  const char* from = cmd;
  for (size_t i = 0; i < count; ++i) {
    memcpy(out + o, from, (size_t)(at[i] - from));
    o += (size_t)(at[i] - from);
    memcpy(out + o, launcher, launcher_len);
    o += launcher_len;
    from = at[i];
  }
  memcpy(out + o, from, strlen(from) + 1);
  return out;
}

char* rewrite_link_chain(const char* cmd, const char* launcher, size_t launcher_len) {
  char* masked = mask_quoted_parts(cmd);
  if (!masked) return NULL;
  char* out = NULL;
  if (!strpbrk(masked, "'\"\\$`;|<>(){}*?#~\n"))
    out = insert_link_launchers(cmd, masked, launcher, launcher_len);
  free(masked);
  return out;
}
