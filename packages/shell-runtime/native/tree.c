/*
 * hands-confine --remove-tree FD: remove entries of the directory open at descriptor FD, each with
 * everything under it, for fs-runtime's delete (its tree walk hands large trees over to this, and
 * runs several of these side by side on parts of one tree).
 *
 * The names come on stdin, each ended by a NUL byte. Everything is reached through descriptors,
 * never by path: each directory is opened with O_NOFOLLOW relative to its parent's descriptor,
 * emptied through its own (unlinkat), then removed by name from its parent. Something else found
 * at a name (a symlink swapped in for a directory) is unlinked itself, never followed, so nothing
 * outside the directory at FD is reached whatever changes meanwhile. A name already gone is fine;
 * a directory that refills while being emptied is emptied again, a few times at most.
 *
 * Exit 0 when every name is gone. On the first failure it stops and prints one line on stdout,
 * "ERRNO SYSCALL PATH" (PATH relative to the directory at FD), and exits 1; usage errors exit 125.
 */
#include "hands-confine.h"

#include <linux/errno.h>
#include <linux/fcntl.h>

#define DT_DIR 4
/* A directory that refills while being emptied is emptied again this many times at most. */
#define ATTEMPTS 3

struct dirent64 {
  u64 d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

/* Names waiting for their directory to be emptied, as a stack shared by every level; and the
 * names read from stdin. Reserved, not committed: the kernel gives pages as they are touched. */
#define STACK_BYTES (1UL << 30)
#define INPUT_BYTES (1UL << 30)
static char *stack;
static size_t stack_used;

/* The path being worked on, relative to the top directory, for the failure line. */
static char where[16384];
static size_t where_len;

static void *reserve(size_t bytes) {
  long p = sys6(__NR_mmap, 0, (long)bytes, 3 /* PROT_READ | PROT_WRITE */, 0x22 | 0x4000 /* MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE */, -1, 0);
  if (p < 0 && p > -4096) die("cannot reserve memory", 0, p);
  return (void *)p;
}

/* Enter `name` in the failure path; returns the length to go back to. */
static size_t enter(const char *name) {
  size_t back = where_len, n = len(name);
  if (where_len + n + 2 < sizeof where) {
    if (where_len > 0) where[where_len++] = '/';
    memcpy(where + where_len, name, n);
    where_len += n;
  }
  where[where_len] = 0;
  return back;
}

static void leave(size_t back) {
  where_len = back;
  where[where_len] = 0;
}

__attribute__((noreturn)) static void fail(long ret, const char *syscall) {
  put_reset();
  put_num(-ret), put(" "), put(syscall), put(" ");
  size_t n;
  const char *head = put_buffer(&n);
  sys(__NR_write, 1, head, n);
  sys(__NR_write, 1, where, where_len);
  sys(__NR_write, 1, "\n", 1);
  quit(1);
}

static void remove_at(int parent, const char *name);

/* Unlink every entry of the open directory `fd` but its directories, which are removed whole
 * after the listing (their names kept on the stack meanwhile). */
static void empty(int fd) {
  static char buf[65536];
  size_t base = stack_used;
  for (;;) {
    long n = sys(__NR_getdents64, fd, buf, sizeof buf);
    if (n < 0) fail(n, "scandir");
    if (n == 0) break;
    for (long at = 0; at < n;) {
      struct dirent64 *d = (struct dirent64 *)(buf + at);
      at += d->d_reclen;
      const char *s = d->d_name;
      if (s[0] == '.' && (s[1] == 0 || (s[1] == '.' && s[2] == 0))) continue;
      if (d->d_type != DT_DIR) {
        long r = sys(__NR_unlinkat, fd, s, 0);
        if (r == 0 || r == -ENOENT) continue;
        /* A directory after all (a file system that gives no types, or swapped meanwhile). */
        if (r != -EISDIR && r != -EPERM) enter(s), fail(r, "unlink");
      }
      size_t k = len(s) + 1;
      if (stack_used + k > STACK_BYTES) die("too many directories to remove at once", 0, -12);
      memcpy(stack + stack_used, s, k);
      stack_used += k;
    }
  }
  for (size_t at = base; at < stack_used;) {
    const char *s = stack + at;
    at += len(s) + 1;
    remove_at(fd, s);
  }
  stack_used = base;
}

/* Remove the entry `name` of the directory open at `parent`, with everything under it. */
static void remove_at(int parent, const char *name) {
  size_t back = enter(name);
  for (int attempt = 0;; attempt++) {
    long fd = sys(__NR_openat, parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd == -ENOENT) break;
    if (fd == -ENOTDIR || fd == -ELOOP) {
      /* Not a directory (or no longer one): the name itself goes, never what it points to. */
      long r = sys(__NR_unlinkat, parent, name, 0);
      if (r == 0 || r == -ENOENT) break;
      if ((r == -EISDIR || r == -EPERM) && attempt + 1 < ATTEMPTS) continue;
      fail(r, "unlink");
    }
    if (fd < 0) fail(fd, "open");
    empty((int)fd);
    sys(__NR_close, fd, 0, 0);
    long r = sys(__NR_unlinkat, parent, name, AT_REMOVEDIR);
    if (r == 0 || r == -ENOENT) break;
    if ((r == -ENOTEMPTY || r == -ENOTDIR) && attempt + 1 < ATTEMPTS) continue;
    fail(r, "rmdir");
  }
  leave(back);
}

__attribute__((noreturn)) void remove_tree(int dirfd) {
  char *input = reserve(INPUT_BYTES);
  stack = reserve(STACK_BYTES);
  size_t got = 0;
  for (;;) {
    if (got == INPUT_BYTES) die("the names on stdin do not fit", 0, -7);
    long n = sys(__NR_read, 0, input + got, INPUT_BYTES - got);
    if (n < 0) die("cannot read the names on stdin", 0, n);
    if (n == 0) break;
    got += (size_t)n;
  }
  if (got > 0 && input[got - 1] != 0) die("the names on stdin must each end with a NUL byte", 0, 0);
  /* A deep tree holds one descriptor per level: take every descriptor the hard limit allows. */
  struct {
    u64 cur, max;
  } lim;
  if (sys6(__NR_prlimit64, 0, 7 /* RLIMIT_NOFILE */, 0, (long)&lim, 0, 0) == 0 && lim.cur < lim.max) {
    lim.cur = lim.max;
    sys6(__NR_prlimit64, 0, 7, (long)&lim, 0, 0, 0);
  }
  for (size_t at = 0; at < got;) {
    const char *name = input + at;
    size_t n = len(name);
    at += n + 1;
    if (n == 0 || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.')) die("not an entry name:", name, 0);
    for (size_t k = 0; k < n; k++)
      if (name[k] == '/') die("not an entry name:", name, 0);
    remove_at(dirfd, name);
  }
  quit(0);
}
