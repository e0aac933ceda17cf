/*
 * fs-runtime's tree work, for large trees (its walk reaches each entry through /proc/self/fd/N/name,
 * Node having no *at calls; this costs what cp and rm cost). Several run side by side, each on a
 * share of one tree's top entries.
 *
 * hands-confine --remove-tree FD: remove entries of the directory open at descriptor FD, each with
 * everything under it. The names come on stdin, each ended by a NUL byte. Each directory is
 * opened with O_NOFOLLOW relative to its parent's descriptor, emptied through its own
 * (unlinkat), then removed by name from its parent. Something else found at a name (a symlink
 * swapped in for a directory) is unlinked itself, never followed. A name already gone is fine; a
 * directory that refills while being emptied is emptied again, a few times at most.
 *
 * hands-confine --copy-tree SRC DEST: copy listed entries of the directory at descriptor SRC into
 * the directory at descriptor DEST. The listing comes on stdin as NUL-ended fields: "f" NAME (a
 * regular file), "l" NAME, TEXT (a symlink made with exactly TEXT), "d" NAME (a directory: made,
 * then the entries listed after it are copied into it until "u"). Each source file is opened with
 * O_NOFOLLOW and must still be a regular file (else it stops: "changed"); each destination is
 * created exclusively (O_EXCL: nothing planted there is written through) with the source's
 * permission bits. Data: a reflink where the filesystem shares extents, else copy_file_range
 * (read and write for small files), keeping holes (SEEK_DATA) of a sparse file.
 *
 * Everything is reached through descriptors, never by path, so nothing outside the directories
 * at the given descriptors is reached whatever changes meanwhile. Exit 0 when done. On the first
 * failure it stops and prints one line on stdout, "ERRNO SYSCALL PATH" (PATH relative to the top
 * directory; ERRNO 0 with SYSCALL "changed" for a source that is no longer a regular file), and
 * exits 1; usage errors exit 125.
 */
#include "hands-confine.h"

#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/stat.h>

#define DT_DIR 4
/* Files up to this size are copied with read and write: fewer calls than the kernel's copy. */
#define SMALL_FILE (64 * 1024)
#define FICLONE_ 0x40049409
#define SEEK_DATA_ 3
#define SEEK_HOLE_ 4
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

/* All of stdin (NUL-ended fields); its length in *got. */
static const char *read_input(size_t *got) {
  char *input = reserve(INPUT_BYTES);
  size_t n_got = 0;
  for (;;) {
    if (n_got == INPUT_BYTES) die("the listing on stdin does not fit", 0, -7);
    long n = sys(__NR_read, 0, input + n_got, INPUT_BYTES - n_got);
    if (n < 0) die("cannot read the listing on stdin", 0, n);
    if (n == 0) break;
    n_got += (size_t)n;
  }
  if (n_got > 0 && input[n_got - 1] != 0) die("the fields on stdin must each end with a NUL byte", 0, 0);
  *got = n_got;
  return input;
}

/* A deep tree holds one descriptor per level: take every descriptor the hard limit allows. */
static void more_descriptors(void) {
  struct {
    u64 cur, max;
  } lim;
  if (sys6(__NR_prlimit64, 0, 7 /* RLIMIT_NOFILE */, 0, (long)&lim, 0, 0) == 0 && lim.cur < lim.max) {
    lim.cur = lim.max;
    sys6(__NR_prlimit64, 0, 7, (long)&lim, 0, 0, 0);
  }
}

__attribute__((noreturn)) void remove_tree(int dirfd) {
  size_t got = 0;
  const char *input = read_input(&got);
  stack = reserve(STACK_BYTES);
  more_descriptors();
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

/* ---- copy ------------------------------------------------------------------------------------ */

static char *data;
static unsigned umask_now;

/* Copy bytes [from, to) of `in` to the same offsets of `out`: copy_file_range, or pread and
 * pwrite where the kernel cannot copy between these files. 0, or -errno with *call set. */
static long copy_range(int in, int out, long from, long to, const char **call) {
  int is_kernel = 1;
  while (from < to) {
    long n;
    if (is_kernel) {
      long long a = from, b = from;
      n = sys6(__NR_copy_file_range, in, (long)&a, out, (long)&b, to - from, 0);
      if (n == -EXDEV || n == -EINVAL || n == -ENOSYS || n == -EOPNOTSUPP) {
        is_kernel = 0;
        continue;
      }
      if (n < 0) return *call = "copyfile", n;
    } else {
      long want = to - from < SMALL_FILE ? to - from : SMALL_FILE;
      n = sys6(__NR_pread64, in, (long)data, want, from, 0, 0);
      if (n < 0) return *call = "read", n;
      for (long done = 0; done < n;) {
        long w = sys6(__NR_pwrite64, out, (long)(data + done), n - done, from + done, 0, 0);
        if (w < 0) return *call = "write", w;
        done += w;
      }
    }
    /* The source shrank meanwhile: the copy has what there was. */
    if (n == 0) break;
    from += n;
  }
  return 0;
}

/* The data of `in` (stats `st`) into the new empty file `out`. 0, or -errno with *call set. */
static long copy_data(int in, int out, const struct statx *st, const char **call) {
  long size = (long)st->stx_size;
  if (size == 0) return 0;
  int is_sparse = (long)st->stx_blocks * 512 < size;
  if (size <= SMALL_FILE && !is_sparse) {
    long at = 0;
    while (at < size) {
      long n = sys(__NR_read, in, data, SMALL_FILE);
      if (n < 0) return *call = "read", n;
      if (n == 0) break;
      for (long done = 0; done < n;) {
        long w = sys(__NR_write, out, data + done, n - done);
        if (w < 0) return *call = "write", w;
        done += w;
      }
      at += n;
    }
    return 0;
  }
  if (sys(__NR_ioctl, out, FICLONE_, in) == 0) return 0;
  if (!is_sparse) return copy_range(in, out, 0, size, call);
  /* Only the data: holes stay holes, then the file gets the source's length. */
  long at = 0;
  while (at < size) {
    long from = sys(__NR_lseek, in, at, SEEK_DATA_);
    if (from == -ENXIO) break;
    if (from < 0) return copy_range(in, out, at, size, call);
    long to = sys(__NR_lseek, in, from, SEEK_HOLE_);
    if (to < 0) to = size;
    long r = copy_range(in, out, from, to, call);
    if (r < 0) return r;
    at = to;
  }
  long r = sys(__NR_ftruncate, out, size, 0);
  if (r < 0) *call = "ftruncate";
  return r;
}

/* Copy the regular file `name` of `src` to a new file `name` of `dest`. */
static void copy_file(int src, int dest, const char *name) {
  long in = sys6(__NR_openat, src, (long)name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, 0, 0);
  if (in < 0) fail(in, "open");
  struct statx st;
  long r = sys6(__NR_statx, in, (long)"", AT_EMPTY_PATH, STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_BLOCKS, (long)&st, 0);
  if (r < 0) fail(r, "fstat");
  if ((st.stx_mode & S_IFMT) != S_IFREG) fail(0, "changed");
  unsigned mode = st.stx_mode & 07777;
  long out = sys6(__NR_openat, dest, (long)name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode, 0, 0);
  if (out < 0) fail(out, "open");
  /* open() applied the umask; only bits it stripped, or special bits, need a chmod. */
  if ((mode & umask_now) != 0 || mode > 0777) {
    r = sys(__NR_fchmod, out, mode, 0);
    if (r < 0) fail(r, "fchmod");
  }
  const char *call = "copyfile";
  r = copy_data((int)in, (int)out, &st, &call);
  if (r < 0) fail(r, call);
  sys(__NR_close, in, 0, 0);
  r = sys(__NR_close, out, 0, 0);
  if (r < 0) fail(r, "close");
}

/* The next NUL-ended field of the listing, or 0 at its end. */
static const char *field(const char *input, size_t got, size_t *at) {
  if (*at >= got) return 0;
  const char *f = input + *at;
  *at += len(f) + 1;
  return f;
}

/* Copy the listing from *at into `dest` from `src`, until its "u" (or its end at the top). */
static void copy_listed(int src, int dest, const char *input, size_t got, size_t *at) {
  const char *f;
  while ((f = field(input, got, at)) != 0) {
    char kind = f[0];
    const char *name = f + 1;
    if (kind == 'u') return;
    size_t back = enter(name);
    if (kind == 'f') copy_file(src, dest, name);
    else if (kind == 'l') {
      const char *text = field(input, got, at);
      if (text == 0) die("a symlink without its text in the listing:", name, 0);
      long r = sys(__NR_symlinkat, text, dest, name);
      if (r < 0) fail(r, "symlink");
    } else if (kind == 'd') {
      long r = sys(__NR_mkdirat, dest, name, 0777);
      if (r < 0) fail(r, "mkdir");
      long in = sys6(__NR_openat, src, (long)name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, 0, 0);
      if (in < 0) fail(in, "open");
      long out = sys6(__NR_openat, dest, (long)name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, 0, 0);
      if (out < 0) fail(out, "open");
      copy_listed((int)in, (int)out, input, got, at);
      sys(__NR_close, in, 0, 0);
      sys(__NR_close, out, 0, 0);
    } else die("not a listing record:", f, 0);
    leave(back);
  }
}

__attribute__((noreturn)) void copy_tree(int src, int dest) {
  size_t got = 0;
  const char *input = read_input(&got);
  data = reserve(SMALL_FILE);
  umask_now = (unsigned)sys(__NR_umask, 0, 0, 0);
  sys(__NR_umask, umask_now, 0, 0);
  more_descriptors();
  size_t at = 0;
  copy_listed(src, dest, input, got, &at);
  quit(0);
}
