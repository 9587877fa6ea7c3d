// lexpack-client's byte handling, apart from what it does with the bytes:
// C strings and the environment, a growable buffer and a reader for the wire
// format of server/protocol.cpp, and whole reads, writes and frames on a
// descriptor. For lexpack_client.c alone (no C library: linux_syscalls.h).
#pragma once

#include "client/linux_syscalls.h"

void* memcpy(void* dst, const void* src, size_t n);  // lexpack_client.c's

// --- C strings and the environment --------------------------------------------

static inline size_t str_len(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

static inline int str_eq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// The value of NAME in envp, or 0.
static inline const char* get_env(char** envp, const char* name) {
  size_t n = str_len(name);
  for (char** e = envp; *e; ++e) {
    const char* v = *e;
    size_t i = 0;
    while (i < n && v[i] == name[i]) ++i;
    if (i == n && v[n] == '=') return v + n + 1;
  }
  return 0;
}

static inline int set_not_zero(const char* v) {
  return v && *v && !str_eq(v, "0");
}

// --- a growable byte buffer on anonymous memory ------------------------------

struct Buf {
  char* p;
  size_t len, cap;
  int failed;
};

static inline void buf_reserve(struct Buf* b, size_t more) {
  if (b->failed || b->len + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more) cap *= 2;
  char* p = sys_mmap_anonymous(cap);  // the old block is left: the process is short
  if (!p) {
    b->failed = 1;
    return;
  }
  if (b->len) memcpy(p, b->p, b->len);
  b->p = p;
  b->cap = cap;
}

static inline void put_bytes(struct Buf* b, const void* p, size_t n) {
  buf_reserve(b, n);
  if (b->failed) return;
  memcpy(b->p + b->len, p, n);
  b->len += n;
}

static inline void put_str0(struct Buf* b, const char* s) {
  put_bytes(b, s, str_len(s));
}

static inline void put_decimal(struct Buf* b, unsigned long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) put_bytes(b, &digits[--n], 1);
}

// base/byte_codec.h's VarintWriter: LEB128 integers, strings as length + bytes.
static inline void put_u64(struct Buf* b, unsigned long v) {
  unsigned char c;
  while (v >= 0x80) {
    c = (unsigned char)(v | 0x80);
    put_bytes(b, &c, 1);
    v >>= 7;
  }
  c = (unsigned char)v;
  put_bytes(b, &c, 1);
}

static inline void put_str(struct Buf* b, const char* s, size_t n) {
  put_u64(b, n);
  put_bytes(b, s, n);
}

// --- reading the reply -------------------------------------------------------

struct Reader {
  const unsigned char* p;
  const unsigned char* end;
  int ok;
};

static inline unsigned long get_u64(struct Reader* r) {
  unsigned long v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) break;
    unsigned char c = *r->p++;
    v |= (unsigned long)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  r->ok = 0;
  return 0;
}

// A string of the reply, in place: its bytes are followed by the next
// field, so the caller copies it when it needs a terminating NUL.
static inline const char* get_str(struct Reader* r, size_t* n) {
  *n = get_u64(r);
  if (!r->ok || *n > (size_t)(r->end - r->p)) {
    r->ok = 0;
    return 0;
  }
  const char* s = (const char*)r->p;
  r->p += *n;
  return s;
}

// --- the socket ----------------------------------------------------------------

static inline int write_full(int fd, const char* p, size_t n, int is_socket) {
  while (n > 0) {
    long w = is_socket ? sys_send(fd, p, n, kMsgNoSignal) : sys_write(fd, p, n);
    if (w == -kEintr) continue;
    if (w <= 0) return 0;
    p += w;
    n -= (size_t)w;
  }
  return 1;
}

static inline int read_full(int fd, char* p, size_t n) {
  while (n > 0) {
    long r = sys_recv(fd, p, n);
    if (r == -kEintr) continue;
    if (r <= 0) return 0;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

// A frame (protocol.h: a 4-byte little-endian length, then the bytes) whose
// first 4 bytes were left for the length: one send.
static inline int send_frame(int fd, char* frame, size_t n) {
  size_t body = n - 4;
  for (int i = 0; i < 4; ++i) frame[i] = (char)(unsigned char)(body >> (8 * i));
  return write_full(fd, frame, n, 1);
}

enum { kMaxFrame = 1 << 30 };

static inline char* recv_frame(int fd, size_t* n) {
  unsigned char head[4];
  if (!read_full(fd, (char*)head, 4)) return 0;
  *n = (size_t)head[0] | (size_t)head[1] << 8 | (size_t)head[2] << 16 | (size_t)head[3] << 24;
  if (*n > kMaxFrame) return 0;
  char* p = sys_mmap_anonymous(*n ? *n : 1);
  if (!p || !read_full(fd, p, *n)) return 0;
  return p;
}
