/*
 * hands-confine --effects FILE: what a job changes on disk, as the relay sees it. The job's seccomp
 * filter sends every call that can change the filesystem (an open that writes or creates, unlink,
 * rename, mkdir, rmdir, symlink, link, truncate, mknod, chmod, chown, utimes, the extended
 * attributes, and their *at and fd forms) to the relay before
 * the kernel runs it. For each path it has not seen yet, the relay records the path (absolute,
 * as the job named it, resolved against the caller's working directory or directory descriptor)
 * and what stood there before (lstat; in a directory the job's own mkdir made, nothing, without
 * looking: see parent_is_own). The host compares that with what stands there when it reads the
 * record (the job's end, or a shell_logs): created, modified, deleted, renamed.
 *
 * The record (FILE, written only by the relay, in the session's spool, which jobs cannot write):
 * one entry per path first seen, `<exists> <type> <dev> <ino> <size> <mtime_ns> <ctime_ns> <perm> <uid> <gid> <path>\0`
 * (type: f d l o; perm: the mode's low 12 bits; exists 0 with zeros when nothing was there), and these lines when they happen:
 *   `! unreadable <n>\0`  calls whose path could not be read (a process that hides its memory)
 *   `! limit <n>\0`       calls past the limit on distinct paths (counted, not named)
 *   `R <from>\0<to>\0`     each rename the job asked for (the host pairs renames only along these)
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
static long n_paths, n_unreadable, n_over;
/* The counts as last written (each line says the count so far). */
static long written_unreadable, written_over;
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
  arena = map(ARENA_BYTES);
  if (table == 0 || marks == 0 || arena == 0) return -12;
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
  return -1;
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

/* Record the path at `path_addr` of `pid` (relative to `dirfd`) into `abs`, the first time it is
 * seen with what stands there now; its length, or 0 when it could not be read. `is_mkdir`: the call
 * makes a directory there (which is then the job's own when nothing stood there). */
static size_t record_path(long pid, u64 path_addr, long dirfd, char *abs, int is_mkdir) {
  static char rel[PATH_MAX_BYTES], base[PATH_MAX_BYTES];
  /* No path (an fd form, or utimensat's NULL): the entry the descriptor names. */
  long rn = path_addr == 0 ? (rel[0] = 0) : read_string(pid, path_addr, rel, sizeof rel);
  if (rn < 0) {
    n_unreadable++;
    return 0;
  }
  long bn = 0;
  if (rel[0] != '/') {
    bn = base_dir(pid, dirfd, base, sizeof base);
    if (bn < 0) {
      n_unreadable++;
      return 0;
    }
    /* A descriptor of a pipe, socket or anonymous inode: no entry on disk. */
    if (base[0] != '/') return 0;
  }
  size_t n = join_clean(base, (size_t)bn, rel, abs, PATH_MAX_BYTES);
  if (n == 0 || is_kernel_fs(abs)) return n;
  u64 slot = first_sight(abs, n);
  if (slot == 0) return n;
  struct statx st;
  /* In a directory that is the job's own nothing stood before the job: no statx needed. */
  long r = parent_is_own(abs, n) ? -2 /* ENOENT */ : sys6(__NR_statx, AT_FDCWD, (long)abs, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME, (long)&st, 0);
  if (r != 0) {
    /* A mkdir that finds nothing makes a directory of the job's own (while no move voids it). A
     * ".." is left out: the kernel takes it after a symlink, join_clean by its name. */
    if (is_mkdir && r == -2 && generation != GENERATION_LAST && !has_dotdot(rel) && are_moves_over()) marks[slot - 1] = generation;
    append("0 - 0 0 0 0 0 0 0 0 ", 20);
  } else {
    unsigned type = st.stx_mode & S_IFMT;
    append("1 ", 2);
    append(type == S_IFREG ? "f " : type == S_IFDIR ? "d " : type == S_IFLNK ? "l " : "o ", 2);
    /* The device number as glibc's makedev() (and so Node's fs.Stats.dev) encodes it. */
    u64 ma = st.stx_dev_major, mi = st.stx_dev_minor;
    append_num(((ma & 0xfffff000ULL) << 32) | ((ma & 0xfffULL) << 8) | ((mi & 0xffffff00ULL) << 12) | (mi & 0xffULL)), append(" ", 1);
    append_num(st.stx_ino), append(" ", 1);
    append_num(st.stx_size), append(" ", 1);
    append_num((u64)st.stx_mtime.tv_sec * 1000000000ULL + st.stx_mtime.tv_nsec), append(" ", 1);
    append_num((u64)st.stx_ctime.tv_sec * 1000000000ULL + st.stx_ctime.tv_nsec), append(" ", 1);
    append_num(st.stx_mode & 07777), append(" ", 1);
    append_num(st.stx_uid), append(" ", 1);
    append_num(st.stx_gid), append(" ", 1);
  }
  append(abs, n + 1);
  return n;
}

static void record_locked(long pid, __u32 arch, int nr, const u64 *args) {
  if (out_fd < 0) return;
  const struct effect_call *call = effect_call(arch, nr);
  if (call == 0) return;
  if (call->flags == -2) {
    /* openat2: the flags are the first field of its struct open_how. */
    u64 flags = 0;
    if (read_remote(pid, args[2], &flags, sizeof flags) != (long)sizeof flags) {
      n_unreadable++;
      return;
    }
    if ((flags & (01 | 02 | 0100 | 01000 | 020000000)) == 0) return;
  }
  /* Before its paths are recorded: a move's own paths are never taken as in a directory of the job's. */
  int is_move = call->kind == EFFECT_MOVES || (call->kind == EFFECT_UNLINKAT && (args[2] & 0x200 /* AT_REMOVEDIR */));
  if (is_move && generation != GENERATION_LAST) generation++;
  if (is_move || n_movers > 0) track_moves(pid, nr, is_move);
  /* A dirfd is an int; AT_FDCWD is -100. */
  static char from[PATH_MAX_BYTES], to[PATH_MAX_BYTES];
  size_t n = record_path(pid, call->path < 0 ? 0 : args[(int)call->path], call->dirfd < 0 ? -100 : (long)(int)args[(int)call->dirfd], from, call->kind == EFFECT_MKDIR);
  if (call->path2 < 0) return;
  size_t m = record_path(pid, args[(int)call->path2], call->dirfd2 < 0 ? -100 : (long)(int)args[(int)call->dirfd2], to, 0);
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
