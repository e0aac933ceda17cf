/*
 * hands-confine --effects FILE: what a job changes on disk, as the relay sees it. The job's seccomp
 * filter sends every call that can change the filesystem (an open that writes or creates, unlink,
 * rename, mkdir, rmdir, symlink, link, truncate, mknod, chmod, chown, utimes, the extended
 * attributes, and their *at and fd forms; bind of a UNIX socket) to the relay before
 * the kernel runs it. For each path it has not seen yet, the relay records the name the kernel
 * will use (absolute, resolved against the caller's working directory or directory descriptor, its
 * directory made real through symlinks and /proc magic links, the caller's /proc/self and /dev/fd
 * read as its own; for a call that follows a final symlink, the link's target too) and what stood
 * there before (lstat; in a directory the job's own mkdir made, nothing, without
 * looking: see parent_is_own). The host compares that with what stands there when it reads the
 * record (the job's end, or a shell_logs): created, modified, deleted, renamed.
 *
 * The record (FILE, written only by the relay, in the session's spool, which jobs cannot write):
 * one entry per path first seen, `<exists> <type> <dev> <ino> <size> <mtime_ns> <ctime_ns> <perm> <uid> <gid> <nlink> <btime_ns> <path>\0`
 * (type: f d l o; perm: the mode's low 12 bits; btime 0 where the file system keeps none; exists 0
 * with zeros when nothing was there), and these lines when they happen:
 *   `! unreadable <n>\0`  calls whose path could not be read (a process that hides its memory)
 *   `! limit <n>\0`       calls past the limit on distinct paths (counted, not named)
 *   `! toolong <n>\0`     calls whose path, or working directory, is longer than a path can be named
 *   `R <from>\0<to>\0`     each rename the job asked for (the host pairs renames only along these)
 *   `W <state> \0`        a file the job wrote whose change can show under names the record does not
 *                         hold (it has several names, or was reached through a descriptor whose name is
 *                         gone), its state before (an entry's fields, no path), once per file: the host
 *                         names every name of it under the roots and counts the rest
 *   `! unobserved\0`      (at the end) the job's filter had no supervisor: nothing was seen
 * Each count line gives the count so far; the last one holds.
 * It is flushed every 100 ms while the job runs and when the relay ends.
 */
#include "hands-confine.h"

#include <linux/fcntl.h>
#include <linux/mman.h>
#include <linux/stat.h>

#define MAX_PATHS (1 << 18)        /* distinct paths recorded for one job */
#define TABLE_SLOTS (1 << 19)      /* open addressing, at most half full */
#define ARENA_BYTES (64u << 20)    /* the paths themselves */
#define BUF_BYTES (64 * 1024)
#define PATH_MAX_BYTES 4096

static int out_fd = -1;
static char buf[BUF_BYTES];
static size_t used;
static __u32 *table;   /* arena offset + 1 of each slot's path, 0 for empty */
/* Per slot: the generation in which a mkdir of this job, its path's first sight, found nothing
 * there (the directory is the job's own), 0 for none. See parent_is_own(). */
static __u32 *marks;
/* Per slot: the entry had several names (hard links) when it was seen, or was renamed from one that had. */
static unsigned char *multi;
/* The files (device + 1, inode) noted by a `W` line (see note_written), each once. */
#define WRITTEN_SLOTS 4096
static u64 written_inodes[WRITTEN_SLOTS][2];
/* Bumped by every call that can make a name reach entries the job never named by that name
 * (EFFECT_MOVES, an unlinkat of a directory): a mark of an older generation says nothing. Past
 * GENERATION_LAST no mark is made any more. */
static __u32 generation = 1;
#define GENERATION_LAST 0xffffffffU

/*
 * Threads whose last move may still be running. The relay lets a call go on before the kernel runs
 * it, so another thread's move seen before a mkdir can land after it, and fill the directory the
 * mkdir found missing. A move is over once its thread makes its next recorded call, or is gone or
 * waits in another call; no mkdir marks while one may not be (nor for the rest of the job once
 * more than MAX_MOVERS were pending at once).
 */
#define MAX_MOVERS 16
static struct {
  long tid;
  int nr;
} movers[MAX_MOVERS];
static int n_movers, is_movers_lost;
static char *arena;
static size_t arena_used;
static long n_paths, n_unreadable, n_over, n_toolong;
/* The counts as last written (each line says the count so far). */
static long written_unreadable, written_over, written_toolong;
static int is_dirty;
/* The relay records from its supervising thread and writes from its main one (on a timer, and at
 * its end): each entry point below holds this lock. */
static int lock_word;
/* Written once when the buffer goes from clean to dirty, so the main thread starts its timer. */
static int wake_fd = -1;

static void lock(void) {
  while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE)) sys(__NR_sched_yield, 0, 0, 0);
}
static void unlock(void) {
  __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

void effects_wake(int fd) {
  wake_fd = fd;
}

static void *map(size_t bytes) {
  long p = sys6(__NR_mmap, 0, (long)bytes, 3 /* PROT_READ | PROT_WRITE */, 0x22 | 0x4000 /* MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE */, -1, 0);
  return p < 0 && p > -4096 ? 0 : (void *)p;
}

int effects_open(const char *file) {
  out_fd = (int)sys6(__NR_openat, AT_FDCWD, (long)file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600, 0, 0);
  if (out_fd < 0) return out_fd;
  table = map(TABLE_SLOTS * sizeof(__u32));
  marks = map(TABLE_SLOTS * sizeof(__u32));
  multi = map(TABLE_SLOTS);
  arena = map(ARENA_BYTES);
  if (table == 0 || marks == 0 || multi == 0 || arena == 0) return -12;
  return 0;
}

static void append(const char *s, size_t n);
static void append_num(unsigned long long v);

/* Write the buffer to the record and empty it. */
static void write_out(void) {
  size_t at = 0;
  while (at < used) {
    long w = sys(__NR_write, out_fd, buf + at, used - at);
    if (w <= 0) break;
    at += (size_t)w;
  }
  used = 0;
}

static void flush_locked(void) {
  if (out_fd < 0) return;
  if (n_unreadable != written_unreadable) append("! unreadable ", 13), append_num((u64)n_unreadable), append("", 1), written_unreadable = n_unreadable;
  if (n_over != written_over) append("! limit ", 8), append_num((u64)n_over), append("", 1), written_over = n_over;
  if (n_toolong != written_toolong) append("! toolong ", 10), append_num((u64)n_toolong), append("", 1), written_toolong = n_toolong;
  write_out();
  __atomic_store_n(&is_dirty, 0, __ATOMIC_RELAXED);
}

void effects_flush(void) {
  lock();
  flush_locked();
  unlock();
}

int effects_dirty(void) {
  return __atomic_load_n(&is_dirty, __ATOMIC_RELAXED);
}

static void append(const char *s, size_t n) {
  /* Full: write what is there; the counts go with the next flush. */
  if (used + n > sizeof buf) write_out();
  if (n > sizeof buf) return;
  memcpy(buf + used, s, n);
  used += n;
  /* Dirty first, then the wake-up: the main thread, woken, must find it dirty and start its timer. */
  if (__atomic_exchange_n(&is_dirty, 1, __ATOMIC_SEQ_CST) == 0 && wake_fd >= 0) {
    u64 one = 1;
    sys(__NR_write, wake_fd, &one, sizeof one);
  }
}

static void append_num(unsigned long long v) {
  char d[24];
  int i = 0;
  do d[i++] = (char)('0' + v % 10), v /= 10;
  while (v > 0);
  char out[24];
  for (int k = 0; k < i; k++) out[k] = d[i - 1 - k];
  append(out, (size_t)i);
}

static u64 hash(const char *s, size_t n) {
  u64 h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return h;
}

/* The slot that holds the `n` bytes at `path`, or the empty one where they would go. */
static u64 slot_of(const char *path, size_t n) {
  u64 slot = hash(path, n) & (TABLE_SLOTS - 1);
  for (;;) {
    __u32 at = table[slot];
    if (at == 0) return slot;
    const char *seen = arena + at - 1;
    if (starts(seen, path, n) && seen[n] == 0) return slot;
    slot = (slot + 1) & (TABLE_SLOTS - 1);
  }
}

/* The slot + 1 of `path`, remembered, the first time it is seen; 0 after, or when nothing more fits. */
static u64 first_sight(const char *path, size_t n) {
  u64 slot = slot_of(path, n);
  if (table[slot] != 0) return 0;
  if (n_paths >= MAX_PATHS || arena_used + n + 1 > ARENA_BYTES) {
    n_over++;
    return 0;
  }
  memcpy(arena + arena_used, path, n + 1);
  table[slot] = (__u32)arena_used + 1;
  arena_used += n + 1;
  n_paths++;
  return slot + 1;
}

/*
 * True when the directory `path` (of `n` bytes) is in is the job's own: this job's mkdir named it
 * first, nothing stood there then, and since then the job has not renamed, removed a directory or
 * made a symlink. Then nothing can stand at `path` that stood there before the job, so its first
 * sight needs no statx: whatever stands there now was made since, by a call that named it (seen
 * first) or by one that named it otherwise, through a name the job made meanwhile (which voids the
 * mark) or through another process's (see docs/effects.md).
 */
static int parent_is_own(const char *path, size_t n) {
  size_t k = n;
  while (k > 0 && path[k - 1] != '/') k--;
  if (k <= 1) return 0;
  u64 slot = slot_of(path, k - 1);
  return table[slot] != 0 && marks[slot] == generation;
}

/* Read the NUL-terminated string at `addr` in process `pid` into out; its length, or -1. */
static long read_string(long pid, u64 addr, char *out, size_t room) {
  size_t got = 0;
  while (got < room - 1) {
    /* Up to the end of the page, so a read never crosses into an unmapped one; at first no more
     * than most paths take. */
    size_t chunk = 4096 - ((addr + got) & 4095);
    if (got == 0 && chunk > 256) chunk = 256;
    if (chunk > room - 1 - got) chunk = room - 1 - got;
    long r = read_remote(pid, addr + got, out + got, chunk);
    if (r <= 0) return -1;
    for (long i = 0; i < r; i++)
      if (out[got + (size_t)i] == 0) return (long)(got + (size_t)i);
    got += (size_t)r;
  }
  return -36; /* ENAMETOOLONG: longer than any path the kernel takes */
}

/*
 * /proc/TID of the threads that named relative paths lately, held open, so the base of the next is
 * read with a lookup of one name ("cwd", "fd/N") instead of four. A /proc/TID directory stays bound
 * to the thread it was opened for: once that thread is gone, a lookup in it fails even when its
 * number is used again, and it is opened anew.
 */
#define PROC_DIRS 64
static struct {
  long tid;
  int fd;
} proc_dirs[PROC_DIRS];

/* The open /proc/TID of `tid` (opened anew with `is_fresh`), or -errno. */
static int proc_dir(long tid, int is_fresh) {
  int at = (int)(tid % PROC_DIRS);
  if (!is_fresh && proc_dirs[at].fd > 0 && proc_dirs[at].tid == tid) return proc_dirs[at].fd;
  if (proc_dirs[at].fd > 0) sys(__NR_close, proc_dirs[at].fd, 0, 0);
  char path[64];
  proc_path(path, tid, "");
  int fd = (int)sys(__NR_openat, AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  proc_dirs[at].tid = tid, proc_dirs[at].fd = fd > 0 ? fd : 0;
  return fd;
}

/* The directory a relative path of `pid` starts from: its working directory, or `dirfd`. */
static long base_dir(long pid, long dirfd, char *out, size_t room) {
  char leaf[24] = "cwd";
  if (dirfd != -100 /* AT_FDCWD */ && dirfd >= 0) {
    size_t at = 3;
    char d[12];
    int i = 0;
    long v = dirfd;
    leaf[0] = 'f', leaf[1] = 'd', leaf[2] = '/';
    do d[i++] = (char)('0' + v % 10), v /= 10;
    while (v > 0);
    while (i > 0) leaf[at++] = d[--i];
    leaf[at] = 0;
  }
  long n = -2;
  for (int is_fresh = 0; is_fresh < 2 && (n == -2 /* ENOENT */ || n == -3 /* ESRCH */); is_fresh++) {
    int dir = proc_dir(pid, is_fresh);
    if (dir < 0) return -1;
    n = sys6(__NR_readlinkat, dir, (long)leaf, (long)out, (long)room - 1, 0, 0);
  }
  if (n <= 0) return -1;
  /* A directory whose path fills the buffer: too long to name (the caller counts it). */
  if (n >= (long)room - 1) return -36 /* ENAMETOOLONG */;
  out[n] = 0;
  return n;
}

/* `base` + "/" + `rel`, with "." and ".." taken out and slashes single (the kernel resolves the
 * rest, symlinks included; the host compares what stands at this name). */
static size_t join_clean(const char *base, size_t base_n, const char *rel, char *out, size_t room) {
  size_t n = 0;
  if (rel[0] != '/') {
    if (base_n + 1 >= room) return 0;
    memcpy(out, base, base_n);
    n = base_n;
  }
  const char *p = rel;
  while (*p) {
    while (*p == '/') p++;
    if (!*p) break;
    const char *start = p;
    while (*p && *p != '/') p++;
    size_t k = (size_t)(p - start);
    if (k == 1 && start[0] == '.') continue;
    if (k == 2 && start[0] == '.' && start[1] == '.') {
      while (n > 0 && out[n - 1] != '/') n--;
      if (n > 0) n--;
      continue;
    }
    if (n + 1 + k + 1 >= room) return 0;
    out[n++] = '/';
    memcpy(out + n, start, k);
    n += k;
  }
  if (n == 0) out[n++] = '/';
  out[n] = 0;
  return n;
}

/* Kernel file systems are not disk (bash opens /dev/tty to write at every start); /dev/shm is a
 * tmpfs where files live like anywhere else, and a root may be there. */
static int is_kernel_fs(const char *path) {
  return (starts(path, "/dev/", 5) && !starts(path, "/dev/shm/", 9)) || starts(path, "/proc/", 6) || starts(path, "/sys/", 5);
}

/* True when thread `tid` is past its call `nr`: gone, or waiting in another call (/proc/TID/syscall). */
static int is_past(long tid, int nr) {
  char path[64], text[32];
  proc_path(path, tid, "syscall");
  long n = read_file(path, text, sizeof text - 1);
  if (n == -2 /* ENOENT */ || n == -3 /* ESRCH */) return 1;
  if (n <= 0) return 0;
  text[n] = 0;
  /* "running" (it may be in that call yet), or the call it waits in ("-1" when in none). */
  const char *p = text + (text[0] == '-');
  unsigned long long now;
  if (!parse_u64(&p, &now)) return 0;
  return text[0] == '-' || (long)now != nr;
}

/* Forget the moves that are over; true when none may still be running. */
static int are_moves_over(void) {
  int kept = 0;
  for (int k = 0; k < n_movers; k++)
    if (!is_past(movers[k].tid, movers[k].nr)) movers[kept++] = movers[k];
  n_movers = kept;
  return n_movers == 0 && !is_movers_lost;
}

/* Thread `tid` makes a new call: its last one is over; when this one is a move (`nr`), it may run yet. */
static void track_moves(long tid, int nr, int is_move) {
  int at = 0;
  while (at < n_movers && movers[at].tid != tid) at++;
  if (!is_move) {
    if (at < n_movers) movers[at] = movers[--n_movers];
    return;
  }
  if (at == n_movers && n_movers == MAX_MOVERS) are_moves_over();
  if (at < n_movers || n_movers < MAX_MOVERS) {
    if (at == n_movers) n_movers++;
    movers[at].tid = tid, movers[at].nr = nr;
  } else {
    is_movers_lost = 1;
  }
}

/* True when the path names ".." (which join_clean takes out by its name, not by where it leads). */
static int has_dotdot(const char *path) {
  for (const char *p = path; *p; p++)
    if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == 0) && (p == path || p[-1] == '/')) return 1;
  return 0;
}

/* ---- what a path names: the names the kernel will use -------------------------------------------- */

/* "/proc/<tid>/" + rest into out; the length, or 0 when it does not fit. */
static size_t proc_rooted(long tid, const char *rest, char *out, size_t room) {
  char head[64];
  proc_path(head, tid, "");
  size_t a = len(head), b = len(rest);
  if (a + b + 1 > room) return 0;
  memcpy(out, head, a);
  memcpy(out + a, rest, b + 1);
  return a + b;
}

/* The caller's own names for its process (/proc/self, /proc/thread-self, /dev/fd, /dev/stdin, ...)
 * as the relay can open them: under /proc/<tid>. Other paths stay as they are; 0 when too long. */
static size_t own_names(long tid, char *path, size_t n, size_t room) {
  static char out[PATH_MAX_BYTES];
  size_t m = 0;
  if (starts(path, "/proc/self", 10) && (path[10] == '/' || path[10] == 0)) m = proc_rooted(tid, path + (path[10] ? 11 : 10), out, room);
  else if (starts(path, "/proc/thread-self", 17) && (path[17] == '/' || path[17] == 0)) m = proc_rooted(tid, path + (path[17] ? 18 : 17), out, room);
  else if (starts(path, "/dev/fd/", 8)) {
    char rest[PATH_MAX_BYTES];
    size_t k = n - 8;
    if (k + 4 > sizeof rest) return 0;
    memcpy(rest, "fd/", 3), memcpy(rest + 3, path + 8, k + 1);
    m = proc_rooted(tid, rest, out, room);
  } else if (eq(path, "/dev/stdin")) m = proc_rooted(tid, "fd/0", out, room);
  else if (eq(path, "/dev/stdout")) m = proc_rooted(tid, "fd/1", out, room);
  else if (eq(path, "/dev/stderr")) m = proc_rooted(tid, "fd/2", out, room);
  else return n;
  if (m == 0) return 0;
  memcpy(path, out, m + 1);
  return m;
}

/*
 * The real directories behind the directories jobs name, lately: a name through a symlink, a
 * /proc magic link or a bind mount is the directory the kernel will use. Found by opening the
 * directory (O_PATH) and reading back its name; kept per name until the job renames, removes a
 * directory or makes a symlink (the generation moves on).
 */
#define DIRS 64
static struct {
  __u32 generation;
  size_t n, real_n;
  char name[PATH_MAX_BYTES], real[PATH_MAX_BYTES];
} dirs[DIRS];

/* The real path of the directory `dir` (n bytes) into real; its length, or 0 when it cannot be opened. */
static size_t real_dir(const char *dir, size_t n, char *real) {
  u64 at = hash(dir, n) % DIRS;
  if (dirs[at].generation == generation && dirs[at].n == n && starts(dirs[at].name, dir, n)) {
    memcpy(real, dirs[at].real, dirs[at].real_n + 1);
    return dirs[at].real_n;
  }
  long fd = sys(__NR_openat, AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  char self[64];
  proc_path(self, sys(__NR_getpid, 0, 0, 0), "fd/");
  size_t k = len(self);
  char d[12];
  int i = 0;
  long v = fd;
  do d[i++] = (char)('0' + v % 10), v /= 10;
  while (v > 0);
  while (i > 0) self[k++] = d[--i];
  self[k] = 0;
  long m = sys6(__NR_readlinkat, AT_FDCWD, (long)self, (long)real, PATH_MAX_BYTES - 1, 0, 0);
  sys(__NR_close, fd, 0, 0);
  if (m <= 0 || m >= PATH_MAX_BYTES - 1 || real[0] != '/') return 0;
  real[m] = 0;
  dirs[at].generation = generation, dirs[at].n = n, dirs[at].real_n = (size_t)m;
  memcpy(dirs[at].name, dir, n + 1);
  memcpy(dirs[at].real, real, (size_t)m + 1);
  return (size_t)m;
}

/* `path` (n bytes, absolute, clean) with its directory made real, in place; the new length (the
 * path as it is when its directory cannot be opened: it does not exist yet), or 0 when too long. */
static size_t real_parent(char *path, size_t n) {
  size_t cut = n;
  while (cut > 0 && path[cut - 1] != '/') cut--;
  if (cut <= 1) return n; /* "/" or an entry of "/" */
  static char dir[PATH_MAX_BYTES], real[PATH_MAX_BYTES];
  memcpy(dir, path, cut - 1);
  dir[cut - 1] = 0;
  size_t m = real_dir(dir, cut - 1, real);
  if (m == 0 || (m == cut - 1 && starts(real, dir, m))) return n;
  size_t base_n = n - cut;
  if (m + 1 + base_n + 1 > PATH_MAX_BYTES) return 0;
  real[m] = '/';
  memcpy(real + m + 1, path + cut, base_n + 1);
  memcpy(path, real, m + 1 + base_n + 1);
  return m + 1 + base_n;
}

/* "1 <type> <dev> <ino> <size> <mtime_ns> <ctime_ns> <perm> <uid> <gid> <nlink> <btime_ns> ": what stands at an
 * entry (the birth time tells a renamed file from a new one that reuses its inode number). */
static void append_state(const struct statx *st, char type) {
  append("1 ", 2);
  append(&type, 1), append(" ", 1);
  /* The device number as glibc's makedev() (and so Node's fs.Stats.dev) encodes it. */
  u64 ma = st->stx_dev_major, mi = st->stx_dev_minor;
  append_num(((ma & 0xfffff000ULL) << 32) | ((ma & 0xfffULL) << 8) | ((mi & 0xffffff00ULL) << 12) | (mi & 0xffULL)), append(" ", 1);
  append_num(st->stx_ino), append(" ", 1);
  append_num(st->stx_size), append(" ", 1);
  append_num((u64)st->stx_mtime.tv_sec * 1000000000ULL + st->stx_mtime.tv_nsec), append(" ", 1);
  append_num((u64)st->stx_ctime.tv_sec * 1000000000ULL + st->stx_ctime.tv_nsec), append(" ", 1);
  append_num(st->stx_mode & 07777), append(" ", 1);
  append_num(st->stx_uid), append(" ", 1);
  append_num(st->stx_gid), append(" ", 1);
  append_num(st->stx_nlink), append(" ", 1);
  append_num((st->stx_mask & STATX_BTIME) ? (u64)st->stx_btime.tv_sec * 1000000000ULL + st->stx_btime.tv_nsec : 0), append(" ", 1);
}

/* What the record holds of an entry. */
#define STATX_ALL_WE_USE (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME | STATX_NLINK | STATX_BTIME)

/* While set, record_name only names a path (a link's existing file: its change time alone moves). */
static int is_naming_only;

/* Record `abs` (n bytes) the first time it is seen, with what stands there now; the before-state's
 * type into *type ('l' for a symlink, '-' when nothing stands there, 0 when not looked at). */
static void record_entry(const char *abs, size_t n, int is_mkdir, const char *rel, char *type) {
  *type = 0;
  if (n == 0 || is_kernel_fs(abs) || is_naming_only) return;
  u64 slot = first_sight(abs, n);
  if (slot == 0) return;
  struct statx st;
  /* In a directory that is the job's own nothing stood before the job: no statx needed. */
  long r = parent_is_own(abs, n) ? -2 /* ENOENT */ : sys6(__NR_statx, AT_FDCWD, (long)abs, AT_SYMLINK_NOFOLLOW, STATX_ALL_WE_USE, (long)&st, 0);
  if (r != 0) {
    /* A mkdir that finds nothing makes a directory of the job's own (while no move voids it). A
     * ".." is left out: the kernel takes it after a symlink, join_clean by its name. */
    if (is_mkdir && r == -2 && generation != GENERATION_LAST && (rel == 0 || !has_dotdot(rel)) && are_moves_over()) marks[slot - 1] = generation;
    /* Nothing stands there (so no link to follow): record_name need not look again. */
    if (r == -2) *type = '-';
    append("0 - 0 0 0 0 0 0 0 0 0 0 ", 24);
  } else {
    unsigned mode_type = st.stx_mode & S_IFMT;
    *type = mode_type == S_IFREG ? 'f' : mode_type == S_IFDIR ? 'd' : mode_type == S_IFLNK ? 'l' : 'o';
    append_state(&st, *type);
    if (st.stx_nlink > 1 && mode_type == S_IFREG) multi[slot - 1] = 1;
  }
  append(abs, n + 1);
}

/*
 * The file the call writes or changes the metadata of, named `abs` (n bytes) or reached through
 * the descriptor link `via` (/proc/<tid>/fd/<n>, or 0): when its change can show under a name the
 * record does not hold — it has several names, or `abs` no longer names it (the name was removed
 * or replaced since the descriptor was opened) — write its state once per file as
 * `W <state> ` (the fields of an entry, no path), so the host finds and names its names.
 */
static void note_written(const char *abs, size_t n, const char *via) {
  struct statx st, at_name;
  if (via != 0) {
    if (sys6(__NR_statx, AT_FDCWD, (long)via, 0, STATX_ALL_WE_USE, (long)&st, 0) != 0 || st.stx_nlink == 0) return;
    int is_named = n != 0 && sys6(__NR_statx, AT_FDCWD, (long)abs, AT_SYMLINK_NOFOLLOW, STATX_INO, (long)&at_name, 0) == 0 && at_name.stx_ino == st.stx_ino &&
                   at_name.stx_dev_major == st.stx_dev_major && at_name.stx_dev_minor == st.stx_dev_minor;
    if (is_named && st.stx_nlink == 1) return;
  } else {
    if (n == 0 || is_kernel_fs(abs)) return;
    u64 slot = slot_of(abs, n);
    if (table[slot] == 0 || !multi[slot]) return;
    if (sys6(__NR_statx, AT_FDCWD, (long)abs, AT_SYMLINK_NOFOLLOW, STATX_ALL_WE_USE, (long)&st, 0) != 0) return;
  }
  if ((st.stx_mode & S_IFMT) != S_IFREG) return;
  u64 key = ((u64)st.stx_dev_major << 32 | st.stx_dev_minor) + 1;
  u64 at = (key * 31 + st.stx_ino) % WRITTEN_SLOTS;
  for (u64 k = 0; k < WRITTEN_SLOTS; k++, at = (at + 1) % WRITTEN_SLOTS) {
    if (written_inodes[at][0] == key && written_inodes[at][1] == st.stx_ino) return;
    if (written_inodes[at][0] == 0) {
      written_inodes[at][0] = key, written_inodes[at][1] = st.stx_ino;
      append("W ", 2), append_state(&st, 'f'), append("", 1);
      return;
    }
  }
}

/* Whether `name` (n bytes) is what the kernel reads back for a descriptor whose file's name is gone. */
static int is_deleted_name(const char *name, size_t n) {
  return n > 10 && starts(name + n - 10, " (deleted)", 10);
}

/* Whether `path` is a descriptor's link, /proc/<n>/fd/<k> or /proc/<n>/task/<t>/fd/<k>. */
static int is_fd_link(const char *path) {
  if (!starts(path, "/proc/", 6)) return 0;
  const char *p = path + 6;
  for (int part = 0; part < 2; part++) {
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') p++;
    if (starts(p, "/task/", 6) && part == 0) {
      p += 6;
      continue;
    }
    break;
  }
  if (!starts(p, "/fd/", 4)) return 0;
  p += 4;
  if (*p < '0' || *p > '9') return 0;
  while (*p >= '0' && *p <= '9') p++;
  return *p == 0;
}

/*
 * Record what the path `rel` of `pid` (relative to `dirfd`) names, into `abs`: the name the kernel
 * will use, its directory made real (a symlink, /proc magic link or the caller's /proc/self and
 * /dev/fd on the way), then, for a call that follows a final symlink (`follow`), the entry the link
 * leads to as well (a write through `link` changes its target). Each the first time it is seen,
 * with what stands there now. The length of the name (the entry itself, not a link's target), or
 * 0 when it could not be named (counted: unreadable, too long).
 */
static size_t record_name(long pid, const char *rel, long dirfd, char *abs, int is_mkdir, int follow, int writes) {
  static char base[PATH_MAX_BYTES], target[PATH_MAX_BYTES], next[PATH_MAX_BYTES], via[PATH_MAX_BYTES];
  long bn = 0;
  /* The descriptor link the call reaches its file through when that file's name is gone (the
   * kernel reads it back as "<name> (deleted)"): see note_written. */
  int has_via = 0;
  if (rel[0] != '/') {
    bn = base_dir(pid, dirfd, base, sizeof base);
    if (bn == -36) {
      n_toolong++;
      return 0;
    }
    if (bn < 0) {
      n_unreadable++;
      return 0;
    }
    /* A descriptor of a pipe, socket or anonymous inode: no entry on disk. */
    if (base[0] != '/') return 0;
    if (writes && rel[0] == 0 && is_deleted_name(base, (size_t)bn)) {
      char leaf[16] = "fd/";
      size_t at = 3;
      char d[12];
      int i = 0;
      long v = dirfd;
      do d[i++] = (char)('0' + v % 10), v /= 10;
      while (v > 0);
      while (i > 0) leaf[at++] = d[--i];
      leaf[at] = 0;
      has_via = proc_rooted(pid, leaf, via, sizeof via) != 0;
    }
  }
  size_t n = join_clean(base, (size_t)bn, rel, abs, PATH_MAX_BYTES);
  if (n != 0) n = own_names(pid, abs, n, PATH_MAX_BYTES);
  if (n != 0) n = real_parent(abs, n);
  if (n == 0) {
    n_toolong++;
    return 0;
  }
  char type;
  record_entry(abs, n, is_mkdir, rel, &type);
  /* A link the call follows: its target is what changes (a dangling one is made there). Before the
   * job it may not have been looked at (its directory is the job's own): look now. */
  memcpy(target, abs, n + 1);
  size_t t = n;
  for (int hops = 0; follow && hops < 40; hops++) {
    struct statx st;
    if (type != 'l' && (type != 0 || sys6(__NR_statx, AT_FDCWD, (long)target, AT_SYMLINK_NOFOLLOW, STATX_TYPE, (long)&st, 0) != 0 || (st.stx_mode & S_IFMT) != S_IFLNK)) break;
    long k = sys6(__NR_readlinkat, AT_FDCWD, (long)target, (long)next, PATH_MAX_BYTES - 1, 0, 0);
    if (k <= 0 || k >= PATH_MAX_BYTES - 1) break;
    next[k] = 0;
    if (writes && !has_via && is_deleted_name(next, (size_t)k) && is_fd_link(target)) memcpy(via, target, t + 1), has_via = 1;
    /* Relative to the link's directory. */
    size_t cut = t;
    while (cut > 0 && target[cut - 1] != '/') cut--;
    size_t m = next[0] == '/' ? join_clean("", 0, next, target, PATH_MAX_BYTES) : join_clean(target, cut > 1 ? cut - 1 : 1, next, base, PATH_MAX_BYTES);
    if (next[0] != '/' && m != 0) memcpy(target, base, m + 1);
    if (m == 0) {
      n_toolong++;
      break;
    }
    m = own_names(pid, target, m, PATH_MAX_BYTES);
    if (m != 0) m = real_parent(target, m);
    if (m == 0) {
      n_toolong++;
      break;
    }
    t = m;
    record_entry(target, t, 0, 0, &type);
  }
  if (writes) note_written(target, t, has_via ? via : 0);
  return n;
}

/* Record the path at `path_addr` of `pid` (relative to `dirfd`) as record_name does; 0 when it could not be read. */
static size_t record_path(long pid, u64 path_addr, long dirfd, char *abs, int is_mkdir, int follow, int writes) {
  static char rel[PATH_MAX_BYTES];
  /* No path (an fd form, or utimensat's NULL): the entry the descriptor names. */
  long rn = path_addr == 0 ? (rel[0] = 0) : read_string(pid, path_addr, rel, sizeof rel);
  if (rn < 0) {
    if (rn == -36) n_toolong++;
    else n_unreadable++;
    return 0;
  }
  return record_name(pid, rel, dirfd, abs, is_mkdir, follow, writes);
}

/* Whether the call follows a final symlink of its path, by its table entry and flags. */
static int follows(const struct effect_call *call, const u64 *args, u64 open_flags) {
  if (call->follow == FOLLOW_ALWAYS) return 1;
  if (call->follow == FOLLOW_OPEN) return !(open_flags & 0400000 /* O_NOFOLLOW */) && (open_flags & 0300) != 0300 /* O_CREAT|O_EXCL */;
  if (call->follow >= FOLLOW_AT(0)) return !(args[call->follow - FOLLOW_AT(0)] & 0x100 /* AT_SYMLINK_NOFOLLOW */);
  return 0;
}

static void record_locked(long pid, __u32 arch, int nr, const u64 *args) {
  if (out_fd < 0) return;
  const struct effect_call *call = effect_call(arch, nr);
  if (call == 0) return;
  u64 open_flags = call->flags >= 0 ? args[(int)call->flags] : 0;
  if (call->flags == -2) {
    /* openat2: the flags are the first field of its struct open_how. */
    if (read_remote(pid, args[2], &open_flags, sizeof open_flags) != (long)sizeof open_flags) {
      n_unreadable++;
      return;
    }
    if ((open_flags & (01 | 02 | 0100 | 01000 | 020000000)) == 0) return;
  }
  if (call->kind == EFFECT_BIND) {
    /* bind(fd, addr, len): a UNIX socket bound to a path makes a socket file there. */
    char addr[112];
    size_t alen = args[2] > 110 ? 110 : (size_t)args[2];
    if (alen <= 2) return;
    if (read_remote(pid, args[1], addr, alen) != (long)alen) {
      n_unreadable++;
      return;
    }
    addr[alen] = 0;
    if (*(unsigned short *)addr != 1 /* AF_UNIX */ || addr[2] == 0) return;
    static char where[PATH_MAX_BYTES];
    record_name(pid, addr + 2, -100, where, 0, 0, 0);
    return;
  }
  /* Before its paths are recorded: a move's own paths are never taken as in a directory of the job's. */
  int is_move = call->kind == EFFECT_MOVES || (call->kind == EFFECT_UNLINKAT && (args[2] & 0x200 /* AT_REMOVEDIR */));
  if (is_move && generation != GENERATION_LAST) generation++;
  if (is_move || n_movers > 0) track_moves(pid, nr, is_move);
  /* A dirfd is an int; AT_FDCWD is -100. */
  static char from[PATH_MAX_BYTES], to[PATH_MAX_BYTES];
  /* A call that writes the entry's bytes or metadata (it follows, or names it by descriptor), not its name. */
  int writes = call->follow != FOLLOW_NEVER || call->path < 0;
  size_t n = record_path(pid, call->path < 0 ? 0 : args[(int)call->path], call->dirfd < 0 ? -100 : (long)(int)args[(int)call->dirfd], from, call->kind == EFFECT_MKDIR,
                         follows(call, args, open_flags), writes);
  if (call->path2 < 0) return;
  if (call->kind == EFFECT_LINK) {
    /* The file the new name is made for, named but not recorded (a link moves its change time
     * alone): both names now lead to one file with several; where the old name is not recorded
     * yet, its first sight will find the count of names. */
    is_naming_only = 1;
    size_t k = record_path(pid, args[(int)call->path2], call->dirfd2 < 0 ? -100 : (long)(int)args[(int)call->dirfd2], to, 0, 0, 0);
    is_naming_only = 0;
    if (k != 0 && table[slot_of(to, k)] != 0) multi[slot_of(to, k)] = 1;
    if (n != 0 && table[slot_of(from, n)] != 0) multi[slot_of(from, n)] = 1;
    return;
  }
  size_t m = record_path(pid, args[(int)call->path2], call->dirfd2 < 0 ? -100 : (long)(int)args[(int)call->dirfd2], to, 0, 0, 0);
  /* The file keeps its other names under the new one. */
  if (n != 0 && m != 0 && multi[slot_of(from, n)]) multi[slot_of(to, m)] = table[slot_of(to, m)] != 0;
  /* A rename, each one: the host pairs what left one name with what arrived at the other only along these. */
  if (n == 0 || m == 0) return;
  append("R ", 2), append(from, n + 1), append(to, m + 1);
  /* Written before the rename happens: a host reading a running job's record (shell_logs) must never
     see the rename's effect on disk without it, or it would report a deletion and a creation. */
  flush_locked();
}

void effects_record(long pid, __u32 arch, int nr, const u64 *args) {
  lock();
  record_locked(pid, arch, nr, args);
  unlock();
}

void effects_close(int is_observed) {
  lock();
  if (out_fd >= 0) {
    if (!is_observed) append("! unobserved", 13);
    flush_locked();
    sys(__NR_close, out_fd, 0, 0);
    out_fd = -1;
  }
  unlock();
}
