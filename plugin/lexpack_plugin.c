// The LD_PRELOAD library that `lexpack ninja` puts into ninja: it rewrites each
// C/C++ compile command ninja spawns ("/bin/sh -c <command>") into
// "<lexpack> <command>", and likewise the ar, ranlib and driver link commands
// of archive and link steps. In any other process it only forwards calls.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*SpawnFn)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                       const posix_spawnattr_t*, char* const[], char* const[]);

static int g_active;           // this process is the ninja that `lexpack ninja` started
static int g_debug;            // LEXPACK_PLUGIN_DEBUG is set
static int g_links;            // archive and link steps are routed (LEXPACK_CACHE_LINKS is not 0)
static char* g_launcher;       // shell-quoted lexpack path followed by one space
static char* g_launcher_path;  // the lexpack path itself
static size_t g_launcher_len;
static char* g_client;       // lexpack-client, quoted like g_launcher: compiles with the server on
static char* g_client_path;  // its path
static size_t g_client_len;
static int g_report_fd = -1;  // LEXPACK_NINJA_REPORT: compiles left to another launcher
static SpawnFn g_real_spawn;
static SpawnFn g_real_spawnp;

static void debug(const char* fmt, ...) {
  if (!g_debug) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "lexpack-plugin[%d]: ", (int)getpid());
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

static const char* skip_space(const char* p) {
  while (is_space(*p)) ++p;
  return p;
}

// True for "ninja", "ninja-build" and the like: the plugin works only inside ninja.
static int exe_is_ninja(void) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* base = strrchr(buf, '/');
  base = base ? base + 1 : buf;
  return strncmp(base, "ninja", 5) == 0;
}

// "gcc", "g++", "cc", "c++", "clang", "clang++", with an optional target
// prefix ("x86_64-linux-gnu-g++") and version suffix ("g++-12", "clang-14").
static int is_compiler_name(const char* name, size_t len) {
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

// True when the simple command starting at `p` has a "-c" argument (a compile,
// not a link). Stops at the first shell operator.
static int has_compile_flag(const char* p) {
  for (; *p; ++p) {
    if (*p == ';' || *p == '|' || *p == '&' || *p == '\n') return 0;
    if (is_space(*p) && p[1] == '-' && p[2] == 'c' && (p[3] == '\0' || is_space(p[3]))) return 1;
  }
  return 0;
}

// Where the compiler word starts in `cmd`, or NULL when the command is not a
// compile this plugin should route.
static const char* find_compiler(const char* cmd) {
  const char* p = skip_space(cmd);
  while (strncmp(p, "cd ", 3) == 0) {  // CMake: "cd <dir> && <compiler> ..."
    const char* amp = strstr(p, "&&");
    if (!amp) return NULL;
    p = skip_space(amp + 2);
  }
  const char* word_end = p;
  while (*word_end && !is_space(*word_end)) {
    if (strchr("'\"\\$`;&|<>(){}*?=", *word_end)) return NULL;
    ++word_end;
  }
  if (word_end == p || !*word_end) return NULL;
  const char* base = p;
  for (const char* q = p; q < word_end; ++q)
    if (*q == '/') base = q + 1;
  if (!is_compiler_name(base, (size_t)(word_end - base))) return NULL;
  if (!has_compile_flag(word_end)) return NULL;
  return p;
}

// The first word of a compile that already goes through another launcher
// ("ccache g++ ... -c ..."): a first word that is no compiler, followed by one
// that is. NULL otherwise; *len is the word's length.
static const char* other_launcher(const char* cmd, size_t* len) {
  const char* p = skip_space(cmd);
  while (strncmp(p, "cd ", 3) == 0) {
    const char* amp = strstr(p, "&&");
    if (!amp) return NULL;
    p = skip_space(amp + 2);
  }
  const char* first_end = p;
  while (*first_end && !is_space(*first_end)) ++first_end;
  if (first_end == p || !*first_end) return NULL;
  const char* second = skip_space(first_end);
  const char* second_end = second;
  while (*second_end && !is_space(*second_end)) ++second_end;
  const char* base = second;
  for (const char* q = second; q < second_end; ++q)
    if (*q == '/') base = q + 1;
  if (!is_compiler_name(base, (size_t)(second_end - base)) || !has_compile_flag(second_end))
    return NULL;
  *len = (size_t)(first_end - p);
  return p;
}

// Tells `lexpack ninja` about a compile it leaves alone because another
// launcher runs it: one line with that launcher, appended.
static void report_other_launcher(char* const argv[]) {
  if (g_report_fd < 0 || !argv || !argv[0] || !argv[1] || !argv[2] || argv[3] ||
      strcmp(argv[1], "-c") != 0)
    return;
  size_t len = 0;
  const char* word = other_launcher(argv[2], &len);
  if (!word || len > 1000) return;
  char line[1024];
  memcpy(line, word, len);
  line[len] = '\n';
  ssize_t ignored = write(g_report_fd, line, len + 1);
  (void)ignored;
}

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
// a double-quoted part holding only "\$ORIGIN" and path characters, and
// Meson's single-quoted words (`'-Wl,-rpath,$ORIGIN/'`), inside which the
// shell takes every character as it is. A copy of `cmd` with each such part
// masked ('x'), for the checks of rewrite_links; NULL when malloc fails.
static char* mask_quoted_parts(const char* cmd) {
  static const char kOrigin[] = "\"\\$ORIGIN";
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
                                const char* const* ends, size_t steps) {
  static const char kMark[] = "--link-steps";
  static const char kAnd[] = " \\&\\& ";
  if (steps < 2 || strcmp(cmd, masked) != 0) return NULL;
  size_t n = g_launcher_len + sizeof kMark;
  for (size_t i = 0; i < steps; ++i) n += (size_t)(ends[i] - starts[i]) + sizeof kAnd;
  char* out = malloc(n + 1);
  if (!out) return NULL;
  size_t o = 0;
  memcpy(out + o, g_launcher, g_launcher_len);
  o += g_launcher_len;
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
static char* insert_link_launchers(const char* cmd, const char* masked) {
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
    char* steps = link_steps_command(cmd, masked, at, step_end, count);
    if (steps) return steps;
  }
  size_t n = strlen(cmd);
  char* out = malloc(n + count * g_launcher_len + 1);
  if (!out) return NULL;
  size_t o = 0;
  const char* from = cmd;
  for (size_t i = 0; i < count; ++i) {
    memcpy(out + o, from, (size_t)(at[i] - from));
    o += (size_t)(at[i] - from);
    memcpy(out + o, g_launcher, g_launcher_len);
    o += g_launcher_len;
    from = at[i];
  }
  memcpy(out + o, from, strlen(from) + 1);
  return out;
}

// The command with the launcher inserted before each archive or link tool of
// an "a && b && c" chain (CMake's ": && ... && :" shapes), or NULL. Only plain
// words are accepted: no quotes, expansions, redirections or other operators,
// the quoted parts of mask_quoted_parts aside.
static char* rewrite_links(const char* cmd) {
  if (!g_links) return NULL;
  char* masked = mask_quoted_parts(cmd);
  if (!masked) return NULL;
  char* out = NULL;
  if (!strpbrk(masked, "'\"\\$`;|<>(){}*?#~\n")) out = insert_link_launchers(cmd, masked);
  free(masked);
  return out;
}

// A new command with the launcher inserted before the compiler word (or the
// archive and link tools): one malloc'd buffer, or NULL when argv is not
// "sh -c <command>" of a step lexpack handles. A compile gets lexpack-client
// when `lexpack ninja` named one (the server is on): `*program` is the path
// of what was inserted.
static char* rewrite(char* const argv[], const char** program) {
  if (!argv || !argv[0] || !argv[1] || !argv[2] || argv[3]) return NULL;
  if (strcmp(argv[1], "-c") != 0) return NULL;
  const char* sh = strrchr(argv[0], '/');
  if (strcmp(sh ? sh + 1 : argv[0], "sh") != 0) return NULL;
  const char* cmd = argv[2];
  const char* at = find_compiler(cmd);
  *program = g_launcher_path;
  if (!at) return rewrite_links(cmd);
  const char* word = g_client ? g_client : g_launcher;
  size_t word_len = g_client ? g_client_len : g_launcher_len;
  if (g_client) *program = g_client_path;
  size_t head = (size_t)(at - cmd);
  size_t tail = strlen(at);
  char* out = malloc(head + word_len + tail + 1);
  if (!out) return NULL;
  memcpy(out, cmd, head);
  memcpy(out + head, word, word_len);
  memcpy(out + head + word_len, at, tail + 1);
  return out;
}

// A compile command made only of plain words ("g++ -O2 -c a.cpp -o a.o"):
// nothing a shell would quote, expand, glob, redirect or treat as an
// operator, separated by single spaces. Its words are exactly the argv the
// shell would give, so the launcher can be started without the shell.
static int plain_words(const char* cmd) {
  static const char kPlain[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:+=@% ";
  return *cmd && *cmd != ' ' && cmd[strspn(cmd, kPlain)] == '\0';
}

// "NAME=" with NAME a shell variable name: the shell drops other entries.
static int shell_variable(const char* e) {
  if (!((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_')) return 0;
  for (++e; *e != '='; ++e) {
    if (!((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9') ||
          *e == '_'))
      return 0;
  }
  return 1;
}

// "PWD=<dir>" as the shell exports it: $PWD when it is absolute and names
// this directory, else the physical working directory. Ninja's working
// directory does not change once it spawns, so it is decided once.
static const char* shell_pwd(char* const envp[]) {
  static char* pwd;
  if (pwd) return pwd;
  const char* old = NULL;
  for (char* const* e = envp; *e; ++e)
    if (strncmp(*e, "PWD=", 4) == 0) old = *e + 4;
  struct stat a, b;
  char buf[4096];
  if (!(old && old[0] == '/' && stat(old, &a) == 0 && stat(".", &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)) {
    old = getcwd(buf, sizeof buf);
    if (!old) return NULL;
  }
  char* made = malloc(strlen(old) + 5);
  if (!made) return NULL;
  memcpy(made, "PWD=", 4);
  strcpy(made + 4, old);
  pwd = made;
  return pwd;
}

// Starts `program` (lexpack or lexpack-client) for a plain compile command
// without "sh -c": the shell's start costs about as much as a hit. The
// environment is the one the shell would pass on (PWD as the shell sets it).
// -1 when the command or the environment is not one this can reproduce, or
// the program cannot be started; then the shell runs it as before.
static int spawn_direct(SpawnFn real, pid_t* pid, const posix_spawn_file_actions_t* actions,
                        const posix_spawnattr_t* attr, char* program, const char* cmd,
                        char* const envp[]) {
  if (!program || !plain_words(cmd) || !envp) return -1;
  size_t nenv = 0;
  for (char* const* e = envp; *e; ++e, ++nenv) {
    if (!strchr(*e, '=') || !shell_variable(*e)) return -1;
    size_t n = (size_t)(strchr(*e, '=') - *e) + 1;
    for (char* const* f = envp; f < e; ++f)
      if (strncmp(*f, *e, n) == 0) return -1;  // the shell would keep one of the two
  }
  const char* pwd = shell_pwd(envp);
  if (!pwd) return -1;
  size_t len = strlen(cmd), words = 1;
  for (size_t i = 0; i < len; ++i) words += cmd[i] == ' ';
  char* copy = malloc(len + 1);
  char** argv = malloc((words + 2) * sizeof *argv);
  char** env = malloc((nenv + 2) * sizeof *env);
  int rc = -1;
  if (copy && argv && env) {
    memcpy(copy, cmd, len + 1);
    size_t n = 0;
    argv[n++] = program;
    for (char* w = strtok(copy, " "); w; w = strtok(NULL, " ")) argv[n++] = w;
    argv[n] = NULL;
    size_t m = 0;
    for (char* const* e = envp; *e; ++e)
      if (strncmp(*e, "PWD=", 4) != 0) env[m++] = *e;
    env[m++] = (char*)pwd;
    env[m] = NULL;
    rc = real(pid, program, actions, attr, argv, env) == 0 ? 0 : -1;
  }
  int saved = errno;
  free(copy);
  free(argv);
  free(env);
  errno = saved;
  return rc;
}

static int spawn_hook(SpawnFn real, pid_t* pid, const char* path,
                      const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr,
                      char* const argv[], char* const envp[]) {
  if (!g_active) return real(pid, path, actions, attr, argv, envp);
  int saved = errno;
  const char* program = NULL;
  char* cmd = rewrite(argv, &program);
  errno = saved;
  if (!cmd) {
    report_other_launcher(argv);
    errno = saved;
    debug("unchanged: %s", argv && argv[0] && argv[1] && argv[2] ? argv[2] : "?");
    return real(pid, path, actions, attr, argv, envp);
  }
  const char* plain = argv[2] + strspn(argv[2], " ");
  const char* word = program == g_client_path ? g_client : g_launcher;
  size_t word_len = program == g_client_path ? g_client_len : g_launcher_len;
  if (strncmp(cmd, word, word_len) == 0 && strcmp(cmd + word_len, plain) == 0) {
    int rc = spawn_direct(real, pid, actions, attr, (char*)program, plain, envp);
    if (rc != -1) {
      debug("routed without a shell: %s (%s)", plain, program);
      saved = errno;
      free(cmd);
      errno = saved;
      return rc;
    }
    errno = saved;
  }
  debug("routed: %s", cmd);
  char* new_argv[4] = {argv[0], argv[1], cmd, NULL};
  int rc = real(pid, path, actions, attr, new_argv, envp);
  saved = errno;
  free(cmd);
  errno = saved;
  return rc;
}

EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                       const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  if (!g_real_spawn) g_real_spawn = (SpawnFn)dlsym(RTLD_NEXT, "posix_spawn");
  if (!g_real_spawn) return ENOSYS;
  return spawn_hook(g_real_spawn, pid, path, actions, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                        const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  if (!g_real_spawnp) g_real_spawnp = (SpawnFn)dlsym(RTLD_NEXT, "posix_spawnp");
  if (!g_real_spawnp) return ENOSYS;
  return spawn_hook(g_real_spawnp, pid, file, actions, attr, argv, envp);
}

// A program path as one shell word followed by a space; its length in *len.
static char* quote_program(const char* path, size_t* len) {
  size_t n = strlen(path);
  char* out = malloc(4 * n + 4);
  if (!out) return NULL;
  size_t o = 0;
  int plain =
      strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-") == n;
  if (!plain) out[o++] = '\'';
  for (size_t i = 0; i < n; ++i) {
    if (path[i] == '\'') {
      memcpy(out + o, "'\\''", 4);
      o += 4;
    } else {
      out[o++] = path[i];
    }
  }
  if (!plain) out[o++] = '\'';
  out[o++] = ' ';
  out[o] = '\0';
  *len = o;
  return out;
}

// Takes this library out of LD_PRELOAD so that ninja's children (compilers,
// scripts, the launcher) run without it; other preloaded libraries stay.
static void drop_self_from_preload(void) {
  const char* preload = getenv("LD_PRELOAD");
  Dl_info info;
  if (!preload || !dladdr((void*)&drop_self_from_preload, &info) || !info.dli_fname) return;
  const char* self = strrchr(info.dli_fname, '/');
  self = self ? self + 1 : info.dli_fname;
  char* kept = malloc(strlen(preload) + 1);
  if (!kept) return;
  size_t o = 0;
  for (const char* p = preload; *p;) {
    size_t n = strcspn(p, " :");
    const char* base = p;
    for (const char* q = p; q < p + n; ++q)
      if (*q == '/') base = q + 1;
    int mine = (size_t)(p + n - base) == strlen(self) && memcmp(base, self, strlen(self)) == 0;
    if (n > 0 && !mine) {
      if (o > 0) kept[o++] = ' ';
      memcpy(kept + o, p, n);
      o += n;
    }
    p += n;
    if (*p) ++p;
  }
  kept[o] = '\0';
  if (o == 0)
    unsetenv("LD_PRELOAD");
  else
    setenv("LD_PRELOAD", kept, 1);
  free(kept);
}

__attribute__((constructor)) static void plugin_init(void) {
  int saved = errno;
  const char* dbg = getenv("LEXPACK_PLUGIN_DEBUG");
  g_debug = dbg && *dbg && strcmp(dbg, "0") != 0;
  const char* links = getenv("LEXPACK_CACHE_LINKS");
  g_links = !(links && strcmp(links, "0") == 0);
  g_real_spawn = (SpawnFn)dlsym(RTLD_NEXT, "posix_spawn");
  g_real_spawnp = (SpawnFn)dlsym(RTLD_NEXT, "posix_spawnp");
  const char* pid = getenv("LEXPACK_NINJA_PID");
  const char* launcher = getenv("LEXPACK_NINJA_LAUNCHER");
  if (pid && launcher && launcher[0] == '/' && strtol(pid, NULL, 10) == (long)getpid() &&
      exe_is_ninja() && g_real_spawn) {
    g_launcher = quote_program(launcher, &g_launcher_len);
    g_launcher_path = strdup(launcher);
    // Set by `lexpack ninja` only when the server is on and the client exists.
    const char* client = getenv("LEXPACK_NINJA_CLIENT");
    if (client && client[0] == '/') {
      g_client = quote_program(client, &g_client_len);
      g_client_path = g_client ? strdup(client) : NULL;
      if (!g_client_path) g_client = NULL;
    }
    if (g_launcher && g_launcher_path) {
      g_active = 1;
      drop_self_from_preload();
      unsetenv("LEXPACK_NINJA_PID");
      unsetenv("LEXPACK_NINJA_LAUNCHER");
      unsetenv("LEXPACK_NINJA_CLIENT");
      const char* report = getenv("LEXPACK_NINJA_REPORT");
      if (report && *report) g_report_fd = open(report, O_WRONLY | O_APPEND | O_CLOEXEC);
      unsetenv("LEXPACK_NINJA_REPORT");
      debug("active, launcher %s, client %s", g_launcher, g_client ? g_client : "none");
    }
  }
  errno = saved;
}
