/*
 * hands-confine: the Landlock ruleset of a job. Read and execute everywhere except the hidden
 * paths (a directory that holds one gets only READ_DIR and its entries are granted one by one),
 * write under the --write paths, read/write the --rw files, TCP bind/connect refused with
 * --no-network (ABI >= 4), signals and abstract UNIX sockets scoped to the job (ABI >= 6).
 *
 * Building it (splitting / and the home directory around the hidden paths) is most of the
 * helper's cost, so a session's keeper (`--keep STAMP`) builds it once and stamps what it was
 * built from; a job takes the kept ruleset only after checking the stamp against the filesystem.
 */
#include "hands-confine.h"

#include <linux/fcntl.h>
#include <linux/prctl.h>
#include <linux/stat.h>

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

/* The UAPI, written out so the build does not depend on the kernel headers' age. */
struct ruleset_attr {
  u64 handled_access_fs;
  u64 handled_access_net; /* ABI 4 */
  u64 scoped;             /* ABI 6 */
};
struct path_beneath_attr {
  u64 allowed_access;
  __s32 parent_fd;
} __attribute__((packed));

#define CREATE_RULESET_VERSION (1U << 0)
#define RULE_PATH_BENEATH 1
#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_REFER (1ULL << 13)    /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define NET_BIND_TCP (1ULL << 0)
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

/* Rights that apply to a file (a rule on a non-directory may hold only these). */
#define FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE)
#define READ_RIGHTS (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
#define RW_RIGHTS (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_READ_DIR)
/* Everything under a writable path except creating device nodes (root could mknod a disk there). */
#define WRITE_RIGHTS (~(FS_MAKE_CHAR | FS_MAKE_BLOCK))

static int ruleset = -1;
static u64 handled_fs;

int landlock_abi(long *err) {
  long abi = sys(__NR_landlock_create_ruleset, 0, 0, CREATE_RULESET_VERSION);
  if (abi < 0) {
    *err = abi;
    return 0;
  }
  return (int)abi;
}

static u64 fs_rights_for(int abi) {
  u64 fs = (1ULL << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
  if (abi >= 2) fs |= FS_REFER;
  if (abi >= 3) fs |= FS_TRUNCATE;
  return fs;
}

static int is_dir_fd(int fd) {
  struct statx st;
  if (sys6(__NR_statx, fd, (long)"", AT_EMPTY_PATH, STATX_TYPE, (long)&st, 0) != 0) return -1;
  return (st.stx_mode & S_IFMT) == S_IFDIR ? 1 : (st.stx_mode & S_IFMT) == S_IFLNK ? -1 : 0;
}

/* Add a path-beneath rule for the O_PATH descriptor `fd` of a directory (or a file). */
static void add_rule_fd(int fd, int is_dir, u64 access, const char *path) {
  struct path_beneath_attr attr = {.allowed_access = access & handled_fs, .parent_fd = fd};
  if (!is_dir) attr.allowed_access &= FILE_RIGHTS;
  if (attr.allowed_access == 0) return;
  long r = sys6(__NR_landlock_add_rule, ruleset, RULE_PATH_BENEATH, (long)&attr, 0, 0, 0);
  if (r != 0) die("cannot add a Landlock rule for", path, r);
}

/* ---- the stamp: what a ruleset depends on ------------------------------------------------- */

#define STAMP_MAGIC 0x32504d5453434821ULL /* "!HCSTMP2" */
#define MAX_ENTRIES 512
struct stamp_header {
  u64 magic;
  u64 policy;
  /* The keeper's start time (clock ticks since boot): its pid alone could name a later process. */
  u64 started;
  __s32 pid, fd;
  __u32 count, strings;
};
struct stamp_entry {
  __u32 is_timed, exists, major, minor;
  u64 ino;
  __s64 mtime, mtime_ns, ctime, ctime_ns;
  __u32 path_at, path_len;
};
static struct stamp_header stamp;
static struct stamp_entry entries[MAX_ENTRIES];
static char strings[MAX_ENTRIES * 128];

/* What `path` is now: whether it exists, its device and inode, and (timed) its mtime and ctime. */
static struct stamp_entry identify(const char *path, int is_timed) {
  struct statx st;
  struct stamp_entry e = {.is_timed = (__u32)is_timed};
  if (sys6(__NR_statx, AT_FDCWD, (long)path, 0, STATX_INO | STATX_MTIME | STATX_CTIME, (long)&st, 0) != 0) return e;
  e.exists = 1, e.major = st.stx_dev_major, e.minor = st.stx_dev_minor, e.ino = st.stx_ino;
  if (is_timed) e.mtime = st.stx_mtime.tv_sec, e.mtime_ns = st.stx_mtime.tv_nsec, e.ctime = st.stx_ctime.tv_sec, e.ctime_ns = st.stx_ctime.tv_nsec;
  return e;
}

static int same(const struct stamp_entry *a, const struct stamp_entry *b) {
  return a->exists == b->exists && a->major == b->major && a->minor == b->minor && a->ino == b->ino && a->mtime == b->mtime &&
         a->mtime_ns == b->mtime_ns && a->ctime == b->ctime && a->ctime_ns == b->ctime_ns;
}

/* Record that the ruleset depends on `path` (its identity; with `is_timed`, also its entries). */
static void depend(const char *path, int is_timed) {
  size_t n = len(path) + 1;
  if (stamp.count == MAX_ENTRIES || stamp.strings + n > sizeof strings) {
    stamp.count = MAX_ENTRIES + 1; /* too much to record: the stamp is never written */
    return;
  }
  struct stamp_entry e = identify(path, is_timed);
  e.path_at = stamp.strings, e.path_len = (__u32)n;
  memcpy(strings + stamp.strings, path, n);
  stamp.strings += (__u32)n;
  entries[stamp.count++] = e;
}

/* True when every path the stamp in `buf` records is still what it was. */
static int stamp_holds(const char *buf, long size, u64 policy) {
  const struct stamp_header *h = (const struct stamp_header *)buf;
  if (size < (long)sizeof *h || h->magic != STAMP_MAGIC || h->policy != policy) return 0;
  long want = (long)(sizeof *h + h->count * sizeof(struct stamp_entry) + h->strings);
  if (h->count > MAX_ENTRIES || size != want) return 0;
  const struct stamp_entry *es = (const struct stamp_entry *)(buf + sizeof *h);
  const char *strs = buf + sizeof *h + h->count * sizeof(struct stamp_entry);
  for (__u32 k = 0; k < h->count; k++) {
    if (es[k].path_at + es[k].path_len > h->strings || es[k].path_len == 0 || strs[es[k].path_at + es[k].path_len - 1] != 0) return 0;
    struct stamp_entry now = identify(strs + es[k].path_at, (int)es[k].is_timed);
    if (!same(&now, &es[k])) return 0;
  }
  return 1;
}

/* Add a rule for `path` when it exists; a missing path grants nothing. */
static void add_rule_path(const char *path, u64 access) {
  depend(path, 0);
  int fd = (int)sys(__NR_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC);
  if (fd < 0) return;
  int dir = is_dir_fd(fd);
  if (dir >= 0) add_rule_fd(fd, dir, access, path);
  sys(__NR_close, fd, 0, 0);
}

#define MAX_HIDDEN 256
static char hidden_pool[MAX_HIDDEN * 256];
static size_t hidden_used;
static const char *hidden[MAX_HIDDEN];
static int n_hidden;

/* Add the real path of the open `fd` (resolved through /proc/self/fd), then `rest`, to the hidden paths. */
static void hide_at(int fd, const char *rest, const char *path) {
  char link[64] = "/proc/self/fd/";
  size_t at = len(link);
  char digits[12];
  int n = 0, v = fd;
  do digits[n++] = (char)('0' + v % 10), v /= 10;
  while (v > 0);
  while (n > 0) link[at++] = digits[--n];
  link[at] = 0;
  char *dest = hidden_pool + hidden_used;
  long room = (long)(sizeof hidden_pool - hidden_used) - 1 - (long)len(rest);
  long got = room > 0 ? sys6(__NR_readlinkat, AT_FDCWD, (long)link, (long)dest, room, 0, 0) : -36;
  if (got < 0) die("cannot resolve the hidden path", path, got);
  if (n_hidden == MAX_HIDDEN) die("too many hidden paths", 0, 0);
  if (got == 1 && *rest) got = 0; /* "/" + "/name" */
  size_t k = len(rest);
  memcpy(dest + got, rest, k + 1);
  got += (long)k;
  if (got == 1 && dest[0] == '/') return; /* hiding / would hide everything; refuse silently */
  hidden[n_hidden++] = dest;
  hidden_used += (size_t)got + 1;
}

/*
 * Record what `path` really is (symlinks resolved through /proc/self/fd). When it does not exist,
 * what it would be once made: its nearest existing ancestor resolved, then the rest. Either way the
 * directories on the way to it are split (granted entry by entry), so a secret store made after a
 * job started is not under any grant of that job; and that ancestor is a dependency, so the next
 * job's ruleset hides the store itself.
 */
static void hide(const char *path) {
  depend(path, 0);
  int fd = (int)sys(__NR_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC);
  if (fd >= 0) {
    hide_at(fd, "", path);
    sys(__NR_close, fd, 0, 0);
    return;
  }
  char parent[4096];
  size_t n = len(path);
  if (n >= sizeof parent || path[0] != '/') return;
  memcpy(parent, path, n + 1);
  for (;;) {
    while (n > 1 && parent[n - 1] != '/') n--;
    if (n > 1) n--;
    parent[n] = 0;
    struct stamp_entry e = identify(parent, 0);
    if (e.exists || n <= 1) break;
  }
  depend(parent, 1);
  int parent_fd = (int)sys(__NR_openat, AT_FDCWD, parent, O_PATH | O_CLOEXEC);
  if (parent_fd < 0) return;
  hide_at(parent_fd, path + (n <= 1 ? 0 : n), path);
  sys(__NR_close, parent_fd, 0, 0);
}

static int is_hidden(const char *path) {
  for (int i = 0; i < n_hidden; i++)
    if (eq(hidden[i], path)) return 1;
  return 0;
}

/* True when some hidden path lies strictly below `dir`. */
static int holds_hidden(const char *dir, size_t n) {
  if (n == 1) return n_hidden > 0;
  for (int i = 0; i < n_hidden; i++)
    if (starts(hidden[i], dir, n) && hidden[i][n] == '/') return 1;
  return 0;
}

struct dirent64 {
  u64 d_ino;
  __s64 d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};
#define DT_DIR 4
#define DT_REG 8
#define DT_LNK 10
#define DT_UNKNOWN 0

/*
 * Grant read and execute on everything under `dir` except the hidden paths. A directory that
 * holds a hidden path gets only READ_DIR (its names stay listable) and its entries are granted
 * one by one; symlinks are skipped (their targets are granted, or not, where they live).
 */
static void grant_read_except(const char *dir, int dir_fd) {
  depend(dir, 1);
  add_rule_fd(dir_fd, 1, FS_READ_DIR, dir);
  int list_fd = (int)sys(__NR_openat, dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list_fd < 0) return; /* unreadable to the user anyway */
  size_t dir_len = len(dir);
  char child[4096];
  memcpy(child, dir, dir_len);
  size_t base = dir_len == 1 ? 1 : dir_len + 1;
  child[base - 1] = '/';
  char buf[16384] __attribute__((aligned(8)));
  for (;;) {
    long n = sys(__NR_getdents64, list_fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      struct dirent64 *e = (struct dirent64 *)(buf + at);
      at += e->d_reclen;
      const char *name = e->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      if (e->d_type == DT_LNK) continue;
      size_t name_len = len(name);
      if (base + name_len + 1 > sizeof child) continue;
      memcpy(child + base, name, name_len + 1);
      if (is_hidden(child)) continue;
      int fd = (int)sys(__NR_openat, dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) continue;
      int is_dir = e->d_type == DT_DIR ? 1 : e->d_type == DT_UNKNOWN ? is_dir_fd(fd) : 0;
      if (is_dir == 1 && holds_hidden(child, base + name_len))
        grant_read_except(child, fd);
      else if (is_dir >= 0)
        add_rule_fd(fd, is_dir, READ_RIGHTS, child);
      sys(__NR_close, fd, 0, 0);
    }
  }
  sys(__NR_close, list_fd, 0, 0);
}

struct policy policy;
/* FNV-1a over the arguments that make the policy, so a kept ruleset is used only for the same one. */
static u64 policy_hash = 0xcbf29ce484222325ULL;

void hash_arg(const char *a) {
  for (const unsigned char *p = (const unsigned char *)a;; p++) {
    policy_hash = (policy_hash ^ *p) * 0x100000001b3ULL;
    if (*p == 0) break;
  }
}

/* Build the ruleset for the parsed policy, recording in `stamp` what it depends on; returns its descriptor. */
int build_ruleset(int abi) {
  stamp.count = 0, stamp.strings = 0, n_hidden = 0, hidden_used = 0;
  handled_fs = fs_rights_for(abi);
  struct ruleset_attr attr = {.handled_access_fs = handled_fs};
  if (policy.is_no_network && abi >= 4) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
  if (policy.is_scope && abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
  /* Older kernels take the shorter struct. */
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(u64) : sizeof(u64);
  long rs = sys(__NR_landlock_create_ruleset, &attr, size, 0);
  if (rs < 0) die("cannot create the Landlock ruleset", 0, rs);
  ruleset = (int)rs;
  for (int k = 0; k < policy.n_hides; k++) hide(policy.hides[k]);
  int root_fd = (int)sys(__NR_openat, AT_FDCWD, "/", O_PATH | O_CLOEXEC);
  if (root_fd < 0) die("cannot open", "/", root_fd);
  if (n_hidden == 0) add_rule_fd(root_fd, 1, READ_RIGHTS, "/");
  else grant_read_except("/", root_fd);
  sys(__NR_close, root_fd, 0, 0);
  for (int k = 0; k < policy.counts[3]; k++) add_rule_path(policy.paths[3][k], FS_READ_DIR);
  for (int k = 0; k < policy.counts[2]; k++) add_rule_path(policy.paths[2][k], READ_RIGHTS);
  for (int k = 0; k < policy.counts[1]; k++) add_rule_path(policy.paths[1][k], RW_RIGHTS);
  for (int k = 0; k < policy.counts[0]; k++) add_rule_path(policy.paths[0][k], WRITE_RIGHTS);
  return ruleset;
}

int scope_ruleset(int abi) {
  if (abi < 6) return -1;
  struct ruleset_attr attr = {.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL};
  long rs = sys(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (rs < 0) die("cannot create the Landlock scope", 0, rs);
  return (int)rs;
}

static char stamp_buf[sizeof(struct stamp_header) + sizeof entries + sizeof strings];

/* Read a whole small file into stamp_buf; its size, or -1. */
static long read_stamp(const char *file) {
  int fd = (int)sys(__NR_openat, AT_FDCWD, file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  long size = 0;
  for (;;) {
    long n = sys(__NR_read, fd, stamp_buf + size, sizeof stamp_buf - (size_t)size);
    if (n <= 0) break;
    size += n;
    if (size == (long)sizeof stamp_buf) break;
  }
  sys(__NR_close, fd, 0, 0);
  return size;
}

/* The kept ruleset named by the stamp in `file`, when the stamp still holds; else -1. */
/* The start time of process `pid` (field 22 of /proc/PID/stat), or 0. */
static u64 start_time(long pid) {
  char path[64], buf[1024];
  proc_path(path, pid, "stat");
  long n = read_file(path, buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = 0;
  long at = -1;
  for (long i = 0; i < n; i++)
    if (buf[i] == ')') at = i;
  if (at < 0) return 0;
  /* Fields after the command: state is field 3, the start time field 22. */
  int field = 2;
  for (long i = at + 1; i < n; i++) {
    if (buf[i] != ' ') continue;
    if (++field == 22) {
      const char *p = buf + i + 1;
      unsigned long long v;
      return parse_u64(&p, &v) ? v : 0;
    }
  }
  return 0;
}

int kept_ruleset(const char *file) {
  long size = read_stamp(file);
  if (size <= 0 || !stamp_holds(stamp_buf, size, policy_hash)) return -1;
  const struct stamp_header *h = (const struct stamp_header *)stamp_buf;
  long pidfd = sys(__NR_pidfd_open, h->pid, 0, 0);
  if (pidfd < 0) return -1;
  /* The pidfd holds the process it names; it must be the keeper that wrote the stamp. */
  if (h->started == 0 || start_time(h->pid) != h->started) {
    sys(__NR_close, pidfd, 0, 0);
    return -1;
  }
  long fd = sys(__NR_pidfd_getfd, pidfd, h->fd, 0);
  sys(__NR_close, pidfd, 0, 0);
  return fd < 0 ? -1 : (int)fd;
}

/* Write the stamp of the ruleset `fd` to `file` (through a temporary and a rename). */
static void write_stamp(const char *file, int fd) {
  if (stamp.count > MAX_ENTRIES) return;
  stamp.magic = STAMP_MAGIC, stamp.policy = policy_hash, stamp.pid = (__s32)sys(__NR_getpid, 0, 0, 0), stamp.fd = fd;
  stamp.started = start_time(stamp.pid);
  char tmp[4096];
  size_t n = len(file);
  if (n + 5 > sizeof tmp) return;
  memcpy(tmp, file, n);
  memcpy(tmp + n, ".tmp", 5);
  int out_fd = (int)sys6(__NR_openat, AT_FDCWD, (long)tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0400, 0, 0);
  if (out_fd < 0) return;
  sys(__NR_write, out_fd, &stamp, sizeof stamp);
  sys(__NR_write, out_fd, entries, stamp.count * sizeof(struct stamp_entry));
  sys(__NR_write, out_fd, strings, stamp.strings);
  sys(__NR_close, out_fd, 0, 0);
  sys6(__NR_renameat2, AT_FDCWD, (long)tmp, AT_FDCWD, (long)file, 0, 0);
}

/*
 * The ruleset keeper: build, stamp, and wait on stdin; each second, rebuild when the stamp no
 * longer holds (the previous ruleset stays open one round for a job that is taking it). Other
 * processes of the user may take its descriptors (Yama's PR_SET_PTRACER); a confined job may
 * not (Landlock refuses it ptrace access to a process outside its domain).
 */
__attribute__((noreturn)) void keep(const char *file, int abi) {
  sys6(__NR_prctl, PR_SET_PTRACER, -1 /* PR_SET_PTRACER_ANY */, 0, 0, 0, 0);
  int current = build_ruleset(abi), previous = -1;
  write_stamp(file, current);
  for (;;) {
    struct {
      int fd;
      short events, revents;
    } pfd = {0, 1 /* POLLIN */, 0};
    struct {
      long sec, nsec;
    } timeout = {1, 0};
    long r = sys6(__NR_ppoll, (long)&pfd, 1, (long)&timeout, 0, 8, 0);
    if (r > 0) {
      char c;
      if (sys(__NR_read, 0, &c, 1) <= 0) quit(0); /* the session ended */
      continue;
    }
    long size = read_stamp(file);
    if (size > 0 && stamp_holds(stamp_buf, size, policy_hash)) continue;
    if (previous >= 0) sys(__NR_close, previous, 0, 0);
    previous = current;
    current = build_ruleset(abi);
    write_stamp(file, current);
  }
}

