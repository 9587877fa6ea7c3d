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

#include "plugin/command_words.h"
#include "plugin/link_rewrite.h"

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

// The command with the launcher inserted before each archive or link tool
// (link_rewrite.h), or NULL; none with LEXPACK_CACHE_LINKS=0.
static char* rewrite_links(const char* cmd) {
  if (!g_links) return NULL;
  return rewrite_link_chain(cmd, g_launcher, g_launcher_len);
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
