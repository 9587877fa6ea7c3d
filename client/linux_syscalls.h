// The few Linux system calls lexpack-client makes, called directly: the
// client is built without a C library, since a statically linked glibc alone
// costs about 1 ms of CPU per process start on a virtual machine (its CPU
// feature and cache probing), as much as the rest of a hit. x86-64 and ARM64.
#pragma once

#include <asm/stat.h>
#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/time.h>
#include <linux/un.h>

typedef unsigned long size_t;
typedef long ssize_t;

// Values shared by both architectures' Linux ABIs (not exported by the
// kernel's user-space headers).
enum {
  kAfUnix = 1,
  kSockStream = 1,
  kSockCloexec = O_CLOEXEC,
  kSolSocket = 1,
  kSoRcvTimeo = 20,
  kSoSndTimeo = 21,
  kSoPeercred = 17,
  kMsgNoSignal = 0x4000,
  kProtRead = 1,
  kProtWrite = 2,
  kMapPrivate = 2,
  kMapAnonymous = 0x20,
  kEintr = 4,
  kAtExecfn = 31,  // auxiliary vector: the path execve was given
};

#if defined(__x86_64__)
static inline long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
static inline long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory");
  return x0;
}
#else
#error "lexpack-client supports x86-64 and ARM64"
#endif

// Each returns the kernel's result: >= 0, or -errno.
static inline long sys_read(int fd, void* p, size_t n) {
  return sys6(__NR_read, fd, (long)p, (long)n, 0, 0, 0);
}
static inline long sys_write(int fd, const void* p, size_t n) {
  return sys6(__NR_write, fd, (long)p, (long)n, 0, 0, 0);
}
static inline long sys_open(const char* path, int flags, int mode) {
  return sys6(__NR_openat, AT_FDCWD, (long)path, flags, mode, 0, 0);
}
static inline long sys_close(int fd) {
  return sys6(__NR_close, fd, 0, 0, 0, 0, 0);
}
static inline long sys_stat(const char* path, struct stat* st, int flags) {
  return sys6(__NR_newfstatat, AT_FDCWD, (long)path, (long)st, flags, 0, 0);
}
static inline long sys_readlink(const char* path, char* buf, size_t n) {
  return sys6(__NR_readlinkat, AT_FDCWD, (long)path, (long)buf, (long)n, 0, 0);
}
static inline long sys_getcwd(char* buf, size_t n) {
  return sys6(__NR_getcwd, (long)buf, (long)n, 0, 0, 0, 0);
}
static inline long sys_umask(int mask) {
  return sys6(__NR_umask, mask, 0, 0, 0, 0, 0);
}
static inline long sys_geteuid(void) {
  return sys6(__NR_geteuid, 0, 0, 0, 0, 0, 0);
}
static inline long sys_unlink(const char* path) {
  return sys6(__NR_unlinkat, AT_FDCWD, (long)path, 0, 0, 0, 0);
}
static inline long sys_rename(const char* from, const char* to) {
  return sys6(__NR_renameat2, AT_FDCWD, (long)from, AT_FDCWD, (long)to, 0, 0);
}
static inline long sys_socket(int domain, int type, int protocol) {
  return sys6(__NR_socket, domain, type, protocol, 0, 0, 0);
}
static inline long sys_connect(int fd, const void* addr, size_t len) {
  return sys6(__NR_connect, fd, (long)addr, (long)len, 0, 0, 0);
}
static inline long sys_setsockopt(int fd, int level, int name, const void* value, size_t len) {
  return sys6(__NR_setsockopt, fd, level, name, (long)value, (long)len, 0);
}
static inline long sys_getsockopt(int fd, int level, int name, void* value, unsigned* len) {
  return sys6(__NR_getsockopt, fd, level, name, (long)value, (long)len, 0);
}
// poll(2) of one descriptor for input, up to `ms` milliseconds (ppoll: ARM64
// has no poll). 1 when readable (or hung up), 0 on timeout, -errno.
static inline long sys_poll_in(int fd, int ms) {
  struct {
    int fd;
    short events, revents;
  } p = {fd, 1 /* POLLIN */, 0};
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  return sys6(__NR_ppoll, (long)&p, 1, (long)&ts, 0, 0, 0);
}
static inline long sys_send(int fd, const void* p, size_t n, int flags) {
  return sys6(__NR_sendto, fd, (long)p, (long)n, flags, 0, 0);
}
static inline long sys_recv(int fd, void* p, size_t n) {
  return sys6(__NR_recvfrom, fd, (long)p, (long)n, 0, 0, 0);
}
static inline void* sys_mmap_anonymous(size_t n) {
  long r = sys6(__NR_mmap, 0, (long)n, kProtRead | kProtWrite, kMapPrivate | kMapAnonymous, -1, 0);
  return r < 0 && r > -4096 ? (void*)0 : (void*)r;
}
static inline long sys_execve(const char* path, char* const argv[], char* const envp[]) {
  return sys6(__NR_execve, (long)path, (long)argv, (long)envp, 0, 0, 0);
}
__attribute__((noreturn)) static inline void sys_exit(int code) {
  for (;;) sys6(__NR_exit_group, code, 0, 0, 0, 0, 0);
}
