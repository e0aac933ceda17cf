/* hands-confine: strings, numbers, messages and small file reads, without libc. */
#include "hands-confine.h"

#include <linux/fcntl.h>

/* gcc may call these for struct copies and zeroing. */
void *memset(void *d, int c, size_t n) {
  unsigned char *p = d;
  while (n--) *p++ = (unsigned char)c;
  return d;
}
void *memcpy(void *d, const void *s, size_t n) {
  unsigned char *p = d;
  const unsigned char *q = s;
  while (n--) *p++ = *q++;
  return d;
}

size_t len(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}
int eq(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}
int starts(const char *s, const char *prefix, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != prefix[i]) return 0;
  return 1;
}

int parse_u64(const char **s, unsigned long long *v) {
  const char *p = *s;
  unsigned long long n = 0;
  if (*p < '0' || *p > '9') return 0;
  while (*p >= '0' && *p <= '9') n = n * 10 + (unsigned long long)(*p++ - '0');
  *s = p;
  *v = n;
  return 1;
}

static char out[8192];
static size_t out_len;

void put(const char *s) {
  while (*s && out_len < sizeof out) out[out_len++] = *s++;
}
void put_num(long v) {
  char b[24];
  int i = 0;
  if (v < 0) put("-"), v = -v;
  do b[i++] = (char)('0' + v % 10), v /= 10;
  while (v > 0);
  while (i > 0) {
    char c[2] = {b[--i], 0};
    put(c);
  }
}
void flush(int fd) {
  sys(__NR_write, fd, out, out_len);
  out_len = 0;
}
const char *put_buffer(size_t *n) {
  *n = out_len;
  return out;
}
void put_reset(void) {
  out_len = 0;
}

const char *error_text(long err) {
  switch (err) {
    case 1: return "Operation not permitted";
    case 2: return "No such file or directory";
    case 3: return "No such process";
    case 7: return "Argument list too long";
    case 8: return "Exec format error";
    case 9: return "Bad file descriptor";
    case 12: return "Out of memory";
    case 13: return "Permission denied";
    case 16: return "Device or resource busy";
    case 20: return "Not a directory";
    case 22: return "Invalid argument";
    case 24: return "Too many open files";
    case 36: return "File name too long";
    case 38: return "Function not implemented";
    case 95: return "Operation not supported";
    default: return 0;
  }
}
void put_error(long err) {
  const char *t = error_text(err);
  if (t) put(t);
  else put("errno "), put_num(err);
}

/* The whole process ends (the relay may run a supervising thread beside its main one). */
__attribute__((noreturn)) void quit(int code) {
  for (;;) sys(__NR_exit_group, code, 0, 0);
}

__attribute__((noreturn)) void die(const char *what, const char *path, long ret) {
  put("hands-confine: "), put(what);
  if (path) put(" "), put(path);
  if (ret < 0) put(": "), put_error(-ret);
  put("\n"), flush(2);
  quit(125);
}

long read_file(const char *path, char *buf, size_t size) {
  long fd = sys(__NR_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fd;
  size_t got = 0;
  while (got < size) {
    long n = sys(__NR_read, fd, buf + got, size - got);
    if (n < 0) {
      sys(__NR_close, fd, 0, 0);
      return n;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  sys(__NR_close, fd, 0, 0);
  return (long)got;
}

void proc_path(char *buf, long pid, const char *leaf) {
  const char *head = "/proc/";
  size_t at = 0;
  while (*head) buf[at++] = *head++;
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + pid % 10), pid /= 10;
  while (pid > 0);
  while (n > 0) buf[at++] = digits[--n];
  buf[at++] = '/';
  while (*leaf) buf[at++] = *leaf++;
  buf[at] = 0;
}

/* Whether reads go through /proc/PID/mem: a container's seccomp profile may refuse process_vm_readv
 * (docker's before 23.0 answers EPERM without CAP_SYS_PTRACE), while opening and reading
 * /proc/PID/mem takes the same permission and no call a profile refuses. -1 until known. */
static int is_mem_file = -1;

long read_remote(long pid, u64 addr, void *buf, size_t n) {
  if (is_mem_file != 1) {
    struct {
      void *base;
      size_t len;
    } local = {buf, n}, remote = {(void *)addr, n};
    long r = sys6(__NR_process_vm_readv, pid, (long)&local, 1, (long)&remote, 1, 0);
    if (r >= 0) is_mem_file = 0;
    if (r >= 0 || is_mem_file == 0 || (r != -1 && r != -38)) return r;
    /* Refused: by a profile when it is refused for this process's own memory too. */
    char byte = 0;
    struct {
      void *base;
      size_t len;
    } l2 = {&byte, 1}, r2 = {&byte, 1};
    if (sys6(__NR_process_vm_readv, sys(__NR_getpid, 0, 0, 0), (long)&l2, 1, (long)&r2, 1, 0) >= 0) {
      is_mem_file = 0;
      return r;
    }
    is_mem_file = 1;
  }
  char path[64];
  proc_path(path, pid, "mem");
  long fd = sys(__NR_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fd;
  long got = sys6(__NR_pread64, fd, (long)buf, (long)n, (long)addr, 0, 0);
  sys(__NR_close, fd, 0, 0);
  return got;
}
