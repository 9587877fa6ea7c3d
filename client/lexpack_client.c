// lexpack-client: the smallest program that can take a cache hit from
// `lexpack server`. It sends the compile (argv, working directory, umask,
// environment) to the server and, on a hit, renames the outputs the server
// wrote into place and replays stdout, stderr and the exit status. On
// anything else (no server, a miss, an error, a server of another binary) it
// becomes `lexpack` beside it with the same arguments, which does exactly
// what it would have done alone. The wire format is the one of
// server/protocol.cpp; the end-to-end server tests run
// every case through both programs.
//
// Built with LEXPACK_FRONT_DOOR, this is `lexpack` itself, the program users
// and CMake's compiler launcher start: a compile (an argument "-c") asks the
// server first, so that a hit costs what it costs through lexpack-client;
// anything else (a subcommand, an option, a link step) becomes the full
// program, `lexpack-main` beside it, at once. Without a front door (where
// this file is not built) the full program is `lexpack` itself.
#include "client/client_bytes.h"
#include "client/linux_syscalls.h"

#include <linux/stat.h>

// --- the few C library pieces the compiler may call -------------------------

void* memcpy(void* dst, const void* src, size_t n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  while (n--) *d++ = *s++;
  return dst;
}
void* memset(void* dst, int c, size_t n) {
  unsigned char* d = dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}

// --- the compile ---------------------------------------------------------------

enum { kPathMax = 4096 };

// Client::declined: the server was busy, or is of another binary (it leaves)
enum { kDeclinedBusy = 2, kDeclinedReplace = 3 };

// The name this program's messages start with.
#if defined(LEXPACK_FRONT_DOOR)
static const char kSelf[] = "lexpack";
#else
static const char kSelf[] = "lexpack-client";
#endif

struct Client {
  int argc;
  char** argv;
  char** envp;
  const char* execfn;      // the path this program was started by (AT_EXECFN), or 0
  char lexpack[kPathMax];  // the full program beside this one
  struct stat lexpack_stat;
  // The server answered "miss" (1), was busy (kDeclinedBusy) or is of another
  // binary (kDeclinedReplace): lexpack need not ask it about a hit again (nor,
  // when busy or leaving, anything else).
  int declined;
  int unanswered;  // the pid of a running server that let the request wait the whole bound
};

// Becomes the full program with the same arguments and environment.
__attribute__((noreturn)) static void run_lexpack(struct Client* c) {
  c->argv[0] = c->lexpack;
  char** envp = c->envp;
  if (c->declined || c->unanswered > 0) {
    // LEXPACK_SERVER_DECLINED: lexpack takes it out of its environment
    // before anything else, and does not ask the server the same question.
    // "unanswered:<pid>": lexpack marks that server (stopped_server.h), and
    // the compiles that follow do not wait for it.
    static char kDeclined[] = "LEXPACK_SERVER_DECLINED=1";
    static char kBusy[] = "LEXPACK_SERVER_DECLINED=busy";
    static char kReplace[] = "LEXPACK_SERVER_DECLINED=replace";
    static char kUnanswered[64] = "LEXPACK_SERVER_DECLINED=unanswered:";
    char* mark = c->declined == kDeclinedBusy      ? kBusy
                 : c->declined == kDeclinedReplace ? kReplace
                                                   : kDeclined;
    if (!c->declined) {
      struct Buf pid = {0};
      put_decimal(&pid, (unsigned long)c->unanswered);
      size_t at = str_len(kUnanswered);
      if (!pid.failed && at + pid.len < sizeof kUnanswered) {
        memcpy(kUnanswered + at, pid.p, pid.len);
        kUnanswered[at + pid.len] = '\0';
        mark = kUnanswered;
      }
    }
    size_t n = 0;
    while (c->envp[n]) ++n;
    char** with = sys_mmap_anonymous((n + 2) * sizeof *with);
    if (with) {
      for (size_t i = 0; i < n; ++i) with[i] = c->envp[i];
      with[n] = mark;
      with[n + 1] = 0;
      envp = with;
    }
  }
  long err = sys_execve(c->lexpack, c->argv, envp);
  struct Buf msg = {0};
  put_str0(&msg, kSelf);
  put_str0(&msg, ": cannot run ");
  put_str0(&msg, c->lexpack);
  put_str0(&msg, " (error ");
  put_decimal(&msg, (unsigned long)-err);
  put_str0(&msg, ")\n");
  if (!msg.failed) write_full(2, msg.p, msg.len, 0);
  sys_exit(127);
}

// c->lexpack = "<dir>/lexpack-main" for the directory part of `path` (n
// bytes): the full program.
static int lexpack_beside(struct Client* c, const char* path, size_t n) {
  static const char kName[] = "/lexpack-main";
  while (n > 0 && path[n - 1] != '/') --n;
  if (n == 0 || n + sizeof kName > kPathMax) return 0;
  memcpy(c->lexpack, path, n - 1);
  memcpy(c->lexpack + n - 1, kName, sizeof kName);
  return 1;
}

// `lexpack` beside this program, and its signature. The path it was started
// by names its directory unless it is a symlink (then /proc/self/exe, whose
// lookup costs a fresh process far more than one lstat, says where it is).
static int find_lexpack(struct Client* c) {
  struct stat st;
  if (c->execfn && sys_stat(c->execfn, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      (st.st_mode & S_IFMT) == S_IFREG && lexpack_beside(c, c->execfn, str_len(c->execfn))) {
    if (sys_stat(c->lexpack, &c->lexpack_stat, 0) == 0) return 1;
  }
  char self[kPathMax];
  long n = sys_readlink("/proc/self/exe", self, kPathMax);
  if (n <= 0 || n >= kPathMax || !lexpack_beside(c, self, (size_t)n)) return 0;
  if (sys_stat(c->lexpack, &c->lexpack_stat, 0) != 0) c->lexpack_stat.st_mode = 0;
  return 1;
}

// protocol_version() of the `lexpack` this client runs: the server answers
// only requests of its own binary.
static void put_version(struct Buf* b, const struct stat* st) {
  put_str0(b, "lexpack-server 1 ");
  put_decimal(b, st->st_dev);
  put_str0(b, ":");
  put_decimal(b, st->st_ino);
  put_str0(b, ":");
  put_decimal(b, st->st_size);
  put_str0(b, ":");
  long seconds = (long)st->st_mtime;  // signed, as std::to_string prints it
  if (seconds < 0) put_str0(b, "-");
  put_decimal(b, seconds < 0 ? 0ul - (unsigned long)seconds : (unsigned long)seconds);
  put_str0(b, ".");
  put_decimal(b, st->st_mtime_nsec);
}

// base::working_dir(): $PWD when it is absolute and names ".", else getcwd.
static const char* working_dir(char** envp, char* buf) {
  const char* pwd = get_env(envp, "PWD");
  struct stat a, b;
  if (pwd && pwd[0] == '/' && sys_stat(pwd, &a, 0) == 0 && sys_stat(".", &b, 0) == 0 &&
      a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
    return pwd;
  }
  return sys_getcwd(buf, kPathMax) > 0 ? buf : 0;
}

// get_env(), with an empty value taken as unset (cache/config/config.cpp's env()).
static const char* get_set_env(char** envp, const char* name) {
  const char* v = get_env(envp, name);
  return v && *v ? v : 0;
}

// server_dir(default_cache_dir()) + "/sock" in sa, when the socket lives in
// the cache directory (the other places are left to `lexpack`), and only in
// a directory that is this user's alone.
static int socket_address(char** envp, struct sockaddr_un* sa) {
  struct Buf path = {0};
  const char* dir = get_set_env(envp, "LEXPACK_DIR");
  if (dir) {
    put_str0(&path, dir);
  } else if ((dir = get_set_env(envp, "XDG_CACHE_HOME"))) {
    put_str0(&path, dir);
    put_str0(&path, "/lexpack");
  } else if ((dir = get_set_env(envp, "HOME"))) {
    put_str0(&path, dir);
    put_str0(&path, "/.cache/lexpack");
  } else {
    return 0;
  }
  if (path.len == 0) return 0;
  put_str0(&path, "/server-");
  put_decimal(&path, (unsigned long)sys_geteuid());
  size_t dir_len = path.len;
  put_str0(&path, "/sock");
  put_bytes(&path, "", 1);
  // protocol.cpp's server_dir(): the socket path must stay under 100 bytes.
  if (path.failed || path.len - 1 >= 100) return 0;
  path.p[dir_len] = '\0';
  struct stat st;
  if (sys_stat(path.p, &st, AT_SYMLINK_NOFOLLOW) != 0 || (st.st_mode & S_IFMT) != S_IFDIR ||
      st.st_uid != (unsigned long)sys_geteuid() || (st.st_mode & 077) != 0) {
    return 0;
  }
  // A server marked stopped (stopped_server.h) is left to `lexpack`, which
  // asks it again once it runs.
  path.p[dir_len] = '/';
  static const char kStopped[] = "/stopped";
  char mark[128];
  memcpy(mark, path.p, dir_len);
  memcpy(mark + dir_len, kStopped, sizeof kStopped);
  if (sys_stat(mark, &st, AT_SYMLINK_NOFOLLOW) == 0) return 0;
  memset(sa, 0, sizeof *sa);
  sa->sun_family = kAfUnix;
  memcpy(sa->sun_path, path.p, path.len);
  return 1;
}

static int connect_server(const struct sockaddr_un* sa) {
  int fd = (int)sys_socket(kAfUnix, kSockStream | kSockCloexec, 0);
  if (fd < 0) return -1;
  // A server that does not answer within this long is treated as absent.
  struct timeval tv = {2, 0};
  sys_setsockopt(fd, kSolSocket, kSoRcvTimeo, &tv, sizeof tv);
  sys_setsockopt(fd, kSolSocket, kSoSndTimeo, &tv, sizeof tv);
  if (sys_connect(fd, sa, sizeof *sa) != 0) {
    sys_close(fd);
    return -1;
  }
  return fd;
}

// The pid of the process at the other end of `fd` (the server), or 0.
static int peer_pid(int fd) {
  struct {
    int pid;
    unsigned uid, gid;
  } cred = {0, 0, 0};
  unsigned len = sizeof cred;
  if (sys_getsockopt(fd, kSolSocket, kSoPeercred, &cred, &len) != 0 || cred.pid <= 0) return 0;
  return cred.pid;
}

// "/proc/<pid><what>", NUL-terminated when `what` ends the path.
static struct Buf proc_path(int pid, const char* what) {
  struct Buf path = {0};
  put_str0(&path, "/proc/");
  put_decimal(&path, (unsigned long)pid);
  put_bytes(&path, what, str_len(what) + 1);
  if (!path.failed) --path.len;  // the NUL stays, the next put overwrites it
  return path;
}

// What /proc/<pid>/stat says of process `pid` (the server): its state
// letter in *state and the CPU ticks it and its waited-for children used
// (fields 14-17) in *ticks. 0: no such process.
static int read_process(int pid, char* state, unsigned long* ticks) {
  if (pid <= 0) return 0;
  struct Buf path = proc_path(pid, "/stat");
  if (path.failed) return 0;
  int f = (int)sys_open(path.p, O_RDONLY | O_CLOEXEC, 0);
  if (f < 0) return 0;
  char buf[512];
  long n = sys_read(f, buf, sizeof buf);
  sys_close(f);
  long close_paren = -1;  // "pid (name) S ...": the name may hold anything
  for (long i = 0; i < n; ++i) {
    if (buf[i] == ')') close_paren = i;
  }
  if (close_paren < 0 || close_paren + 2 >= n) return 0;
  *state = buf[close_paren + 2];
  *ticks = 0;
  int field = 3;
  unsigned long value = 0;
  for (long i = close_paren + 3; i < n && field <= 17; ++i) {
    if (buf[i] == ' ') {
      if (field >= 14) *ticks += value;
      ++field;
      value = 0;
    } else if (buf[i] >= '0' && buf[i] <= '9') {
      value = value * 10 + (unsigned long)(buf[i] - '0');
    }
  }
  return 1;
}

// Whether process `pid` (the server) is stopped (state T or t): then it
// will not answer.
static int process_stopped(int pid) {
  char state = 0;
  unsigned long ticks = 0;
  return read_process(pid, &state, &ticks) && (state == 'T' || state == 't');
}

// Whether server `pid` was working since it used `ticks_before`: its CPU
// time grew, or a child of it (a compiler it runs) is alive
// (stopped_server.cpp's process_working).
static int process_working(int pid, unsigned long ticks_before) {
  char state = 0;
  unsigned long ticks = 0;
  if (!read_process(pid, &state, &ticks)) return 0;
  if (ticks != ticks_before) return 1;
  struct Buf path = proc_path(pid, "/task/");
  put_decimal(&path, (unsigned long)pid);
  put_bytes(&path, "/children", 10);
  if (path.failed) return 0;
  int f = (int)sys_open(path.p, O_RDONLY | O_CLOEXEC, 0);
  if (f < 0) return 0;
  char c;
  long n = sys_read(f, &c, 1);
  sys_close(f);
  return n == 1;
}

// Waits up to about 2 s for the server's reply, looking after 5 ms and then
// every 50 ms whether its process is stopped (client.cpp's wait_for_reply):
// a busy server is waited for, a stopped one is not. 1: readable. A running
// server that let the whole bound pass without working: its pid in
// *unanswered; one that was working: *busy set.
static int wait_reply(int fd, int* unanswered, int* busy) {
  int waited = 0, slice = 5;
  int pid = peer_pid(fd);
  char state = 0;
  unsigned long ticks = 0;
  read_process(pid, &state, &ticks);
  while (waited < 2000) {
    long r = sys_poll_in(fd, slice);
    if (r > 0) return 1;
    if (r < 0 && r != -kEintr) return 1;  // the read says what went wrong
    waited += slice;
    if (process_stopped(pid)) return 0;
    slice = 50;
  }
  if (process_working(pid, ticks)) {
    *busy = kDeclinedBusy;
  } else {
    *unanswered = pid;
  }
  return 0;
}

// The hit's bookkeeping under `lexpack ninja` (ninja/build_counts.cpp).
static void note_build_counts(char** envp, const char* saved_us, size_t saved_len) {
  const char* path = get_env(envp, "LEXPACK_BUILD_COUNTS");
  if (!path || !*path) return;
  int fd = (int)sys_open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return;
  write_full(fd, "hits 1\n", 7, 0);
  struct Buf line = {0};
  put_str0(&line, "time_saved_us ");
  size_t digits = 0;
  while (digits < saved_len && saved_us[digits] >= '0' && saved_us[digits] <= '9') ++digits;
  if (digits == 0) put_str0(&line, "0");
  put_bytes(&line, saved_us, digits);
  put_str0(&line, "\n");
  if (!line.failed) write_full(fd, line.p, line.len, 0);
  sys_close(fd);
}

enum { kRequestCompile = 1, kReplyHit = 1, kReplyMiss = 2, kReplyIncompatible = 3 };

// A hit's outputs renamed into place and its results replayed, or 0 when
// this was not a hit (nothing was renamed then, or `lexpack` writes every
// output again).
static int take_hit(struct Client* c, int fd, const char* reply, size_t n, int* exit_code) {
  struct Reader r = {(const unsigned char*)reply, (const unsigned char*)reply + n, 1};
  if (n == 0 || (unsigned char)*r.p++ != kReplyHit) return 0;
  long code = (long)get_u64(&r);
  size_t out_len, err_len, info_len;
  const char* out = get_str(&r, &out_len);
  const char* err = get_str(&r, &err_len);
  const char* info = get_str(&r, &info_len);
  unsigned long renames = get_u64(&r);
  if (!r.ok || renames > n) return 0;
  // Check the whole reply before renaming anything.
  const unsigned char* first = r.p;
  for (unsigned long i = 0; i < 2 * renames && r.ok; ++i) {
    size_t len;
    get_str(&r, &len);
    if (len == 0 || len >= kPathMax) r.ok = 0;
  }
  if (!r.ok || r.p != r.end) return 0;
  r.p = first;
  for (unsigned long i = 0; i < renames; ++i) {
    char from[kPathMax], to[kPathMax];
    size_t len;
    const char* s = get_str(&r, &len);
    memcpy(from, s, len);
    from[len] = '\0';
    s = get_str(&r, &len);
    memcpy(to, s, len);
    to[len] = '\0';
    // The old output goes first: ext4 writes a file's data out at once when
    // it is renamed over another (its guard against empty files after a
    // power loss, which a compiler writing its output does not have either),
    // and that cost a third of a hit's CPU here. While the system runs, the
    // final path never holds a partial file. The server removes what is left
    // when no acknowledgement comes.
    sys_unlink(to);
    if (sys_rename(from, to) != 0) return 0;
  }
  char ack[] = "\0\0\0\0ok";
  send_frame(fd, ack, 6);
  note_build_counts(c->envp, info, info_len);
  write_full(1, out, out_len, 0);
  write_full(2, err, err_len, 0);
  *exit_code = (int)code;
  return 1;
}

#if defined(LEXPACK_FRONT_DOOR)
// The subcommands of the full program (cli/launch_command.cpp's list).
static const char* const kSubcommands[] = {
    "lex",    "explain", "ninja",  "scan",   "warm",   "stats",  "gc",
    "verify", "clear",   "export", "import", "config", "server", 0,
};

// Whether the front door asks the server: a compiler with "-c" among its
// arguments, not a subcommand or an option of lexpack's.
static int is_compile(const struct Client* c) {
  const char* first = c->argv[1];
  if (first[0] == '-' || first[0] == '\0') return 0;
  for (const char* const* s = kSubcommands; *s; ++s) {
    if (str_eq(first, *s)) return 0;
  }
  for (int i = 2; i < c->argc; ++i) {
    if (str_eq(c->argv[i], "-c")) return 1;
  }
  return 0;
}
#endif

static int run(struct Client* c) {
  if (!find_lexpack(c)) {
    static const char kMsg[] = ": cannot find lexpack-main beside this program\n";
    write_full(2, kSelf, str_len(kSelf), 0);
    write_full(2, kMsg, sizeof kMsg - 1, 0);
    return 127;
  }
  if (c->argc < 2) run_lexpack(c);
#if defined(LEXPACK_FRONT_DOOR)
  if (!is_compile(c)) run_lexpack(c);
#endif
  // LEXPACK_SERVER=0 turns the server off; LEXPACK_DISABLE means lexpack
  // touches nothing (client.cpp's server_enabled()).
  const char* server = get_env(c->envp, "LEXPACK_SERVER");
  if ((server && str_eq(server, "0")) || set_not_zero(get_env(c->envp, "LEXPACK_DISABLE"))) {
    run_lexpack(c);
  }
  struct sockaddr_un sa;
  char cwd_buf[kPathMax];
  const char* cwd = working_dir(c->envp, cwd_buf);
  if (!cwd || !socket_address(c->envp, &sa) || c->lexpack_stat.st_mode == 0) run_lexpack(c);
  int mask = (int)sys_umask(0);
  sys_umask(mask);

  struct Buf req = {0}, version = {0};
  put_version(&version, &c->lexpack_stat);
  put_bytes(&req, "\0\0\0\0", 4);  // the frame's length
  unsigned char kind = kRequestCompile;
  put_bytes(&req, &kind, 1);
  put_str(&req, version.p, version.len);
  put_u64(&req, (unsigned long)(c->argc - 1));
  for (int i = 1; i < c->argc; ++i) put_str(&req, c->argv[i], str_len(c->argv[i]));
  put_str(&req, cwd, str_len(cwd));
  unsigned long nenv = 0;
  for (char** e = c->envp; *e; ++e) ++nenv;
  put_u64(&req, nenv);
  for (char** e = c->envp; *e; ++e) put_str(&req, *e, str_len(*e));
  put_u64(&req, (unsigned long)mask);
  if (req.failed || version.failed || req.len - 4 > kMaxFrame) run_lexpack(c);

  int fd = connect_server(&sa);
  if (fd < 0) run_lexpack(c);
  size_t n = 0;
  char* reply = send_frame(fd, req.p, req.len) && wait_reply(fd, &c->unanswered, &c->declined)
                    ? recv_frame(fd, &n)
                    : 0;
  int exit_code = 0;
  int hit = reply && take_hit(c, fd, reply, n, &exit_code);
  sys_close(fd);
  if (!hit) {
    // A server of another binary leaves: lexpack starts this one's in its
    // place (by the time it runs, the old one may hold its lock no more, or
    // still: only the mark tells it that a server is to be replaced).
    if (!c->declined && reply && n > 0) {
      unsigned char kind = (unsigned char)reply[0];
      c->declined = kind == kReplyMiss ? 1 : kind == kReplyIncompatible ? kDeclinedReplace : 0;
    }
    run_lexpack(c);
  }
  return exit_code;
}

// The process entry: the kernel's initial stack holds argc, argv, 0, envp, 0.
__attribute__((used, noreturn)) void lexpack_client_start(long* stack) {
  struct Client c;
  c.declined = 0;
  c.unanswered = 0;
  c.argc = (int)stack[0];
  c.argv = (char**)(stack + 1);
  c.envp = c.argv + c.argc + 1;
  // The auxiliary vector follows the environment's terminating null.
  char** e = c.envp;
  while (*e) ++e;
  c.execfn = 0;
  for (unsigned long* aux = (unsigned long*)(e + 1); aux[0] != 0; aux += 2) {
    if (aux[0] == kAtExecfn) c.execfn = (const char*)aux[1];
  }
  sys_exit(run(&c));
}

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".global _start\n"
    "_start:\n"
    "  xor %rbp, %rbp\n"
    "  mov %rsp, %rdi\n"
    "  and $-16, %rsp\n"
    "  call lexpack_client_start\n"
    "  hlt\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".global _start\n"
    "_start:\n"
    "  mov x29, #0\n"
    "  mov x30, #0\n"
    "  mov x0, sp\n"
    "  and sp, x0, #-16\n"
    "  bl lexpack_client_start\n"
    "  brk #0\n");
#endif
