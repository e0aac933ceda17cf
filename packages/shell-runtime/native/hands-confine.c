/*
 * hands-confine: the first process of every hands job. It does, in this order:
 *
 *   1. --cgroup FILE     start the job inside the cgroup whose cgroup.procs is FILE: clone3
 *                        with CLONE_INTO_CGROUP, the child going on with 2–4 while this process
 *                        stays as its relay (it forwards the signals sent to it and ends as the
 *                        child ended). Moving a process with cgroup.procs waits for an RCU grace
 *                        period (~10 ms) after a quiet moment; a process born in its cgroup does
 *                        not. Where clone3 fails (Linux < 5.7, a seccomp filter), it writes
 *                        its own pid to FILE instead. Either way before anything restricts it, so the job cannot
 *                        skip joining;
 *   2. --landlock ...    drop the capabilities that see through a sandbox, PR_SET_NO_NEW_PRIVS,
 *                        then one Landlock ruleset for the job and all it starts: read and
 *                        execute everywhere except the --hide paths (--read and --list grant
 *                        back inside them), write only under --write, open for read/write
 *                        only --rw, optionally no TCP bind/connect
 *                        (--no-network, ABI >= 4) and no signals or abstract UNIX sockets
 *                        outside the job (--scope, ABI >= 6);
 *   3. --expect-cwd D:I  refuse to run unless the working directory is device D, inode I;
 *   4. exec PROGRAM ARGS (argv[0] from --argv0).
 *
 * Building the ruleset (splitting / and the home directory around the hidden paths) is most of
 * the cost. `--keep STAMP POLICY...` runs as a session's ruleset keeper: it builds the ruleset
 * once, writes STAMP (what the ruleset was built from: its pid and descriptor, a hash of the
 * policy, and the identity and times of every path the rules depend on), rebuilds when those
 * change, and exits when its stdin ends. A job started with `--ruleset-from STAMP` takes the
 * kept ruleset with pidfd_getfd after checking the stamp against the filesystem itself, and
 * builds its own whenever anything differs, so a stale ruleset is never applied.
 *
 * Any failure before the exec prints "hands-confine: ..." on stderr and exits 125: the program
 * never runs weaker than asked. `--probe` prints "landlock ABI" (0 and the reason when Landlock
 * cannot be used here) and exits 0. Rights the kernel's ABI lacks are left out; the caller knows
 * the ABI from --probe and says what is missing.
 *
 * Freestanding (no libc): it is exec'd before every command, and a static glibc's start-up alone
 * costs more than everything this program does. Linux x86-64 and arm64.
 */
#include <asm/unistd.h>
#include <linux/capability.h>
#include <linux/fcntl.h>
#include <linux/prctl.h>
#include <linux/stat.h>
#include <linux/types.h>

typedef unsigned long size_t;
typedef __u64 u64;

/* ---- system calls -------------------------------------------------------------------------- */

#if defined(__x86_64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
  return ret;
}
__asm__(".text\n.global _start\n_start:\n xor %rbp,%rbp\n mov %rsp,%rdi\n and $-16,%rsp\n call start\n hlt\n");
#elif defined(__aarch64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
}
__asm__(".text\n.global _start\n_start:\n mov x29, #0\n mov x30, #0\n mov x0, sp\n and sp, x0, #-16\n bl start\n");
#else
#error "hands-confine supports x86-64 and arm64"
#endif

#define sys(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

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

static size_t len(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}
static int eq(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}
static int starts(const char *s, const char *prefix, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != prefix[i]) return 0;
  return 1;
}

/* ---- messages ------------------------------------------------------------------------------ */

static char out[8192];
static size_t out_len;
static void put(const char *s) {
  while (*s && out_len < sizeof out) out[out_len++] = *s++;
}
static void put_num(long v) {
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
static void flush(int fd) {
  sys(__NR_write, fd, out, out_len);
  out_len = 0;
}
static const char *error_text(long err) {
  switch (err) {
    case 1: return "Operation not permitted";
    case 2: return "No such file or directory";
    case 3: return "No such process";
    case 7: return "Argument list too long";
    case 8: return "Exec format error";
    case 12: return "Out of memory";
    case 13: return "Permission denied";
    case 20: return "Not a directory";
    case 22: return "Invalid argument";
    case 36: return "File name too long";
    case 38: return "Function not implemented";
    case 95: return "Operation not supported";
    default: return 0;
  }
}
static void put_error(long err) {
  const char *t = error_text(err);
  if (t) put(t);
  else put("errno "), put_num(err);
}
__attribute__((noreturn)) static void quit(int code) {
  for (;;) sys(__NR_exit, code, 0, 0);
}
/* Print "hands-confine: WHAT [PATH]: ERROR" and exit 125. `ret` is the failed call's -errno. */
__attribute__((noreturn)) static void die(const char *what, const char *path, long ret) {
  put("hands-confine: "), put(what);
  if (path) put(" "), put(path);
  if (ret < 0) put(": "), put_error(-ret);
  put("\n"), flush(2);
  quit(125);
}

/* ---- Landlock ------------------------------------------------------------------------------ */

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

/*
 * Capabilities a confined job never keeps. With CAP_PERFMON or CAP_SYS_ADMIN the kernel lets a
 * process read any other's environment and memory maps (/proc/PID/environ) whatever Landlock
 * says; the others load code into the kernel, reach raw devices, reboot, or change the host's
 * network and security policy. They matter only when hands runs as root.
 */
static const int dropped_caps[] = {
  CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF, CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_PTRACE,
  CAP_SYS_BOOT, CAP_MKNOD, CAP_MAC_ADMIN, CAP_MAC_OVERRIDE, CAP_SYSLOG, CAP_AUDIT_CONTROL,
  CAP_NET_ADMIN, CAP_CHECKPOINT_RESTORE,
};

static int ruleset = -1;
static u64 handled_fs;

static int landlock_abi(long *err) {
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

#define STAMP_MAGIC 0x31504d5453434821ULL /* "!HCSTMP1" */
#define MAX_ENTRIES 512
struct stamp_header {
  u64 magic;
  u64 policy;
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

/*
 * Record what `path` really is (symlinks resolved through /proc/self/fd); nothing when it does
 * not exist — then the directory it would appear in is a dependency, so it is hidden once it does.
 */
static void hide(const char *path) {
  depend(path, 0);
  int fd = (int)sys(__NR_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    char parent[4096];
    size_t n = len(path);
    if (n >= sizeof parent) return;
    memcpy(parent, path, n + 1);
    for (;;) {
      while (n > 1 && parent[n - 1] != '/') n--;
      if (n > 1) n--;
      parent[n] = 0;
      struct stamp_entry e = identify(parent, 0);
      if (e.exists || n <= 1) break;
    }
    depend(parent, 1);
    return;
  }
  char link[64] = "/proc/self/fd/";
  size_t at = len(link);
  char digits[12];
  int n = 0, v = fd;
  do digits[n++] = (char)('0' + v % 10), v /= 10;
  while (v > 0);
  while (n > 0) link[at++] = digits[--n];
  link[at] = 0;
  char *dest = hidden_pool + hidden_used;
  long room = (long)(sizeof hidden_pool - hidden_used) - 1;
  long got = room > 0 ? sys6(__NR_readlinkat, AT_FDCWD, (long)link, (long)dest, room, 0, 0) : -36;
  sys(__NR_close, fd, 0, 0);
  if (got < 0) die("cannot resolve the hidden path", path, got);
  if (n_hidden == MAX_HIDDEN) die("too many hidden paths", 0, 0);
  dest[got] = 0;
  if (got == 1 && dest[0] == '/') return; /* hiding / would hide everything; refuse silently */
  hidden[n_hidden++] = dest;
  hidden_used += (size_t)got + 1;
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

/* ---- starting the job inside its cgroup ----------------------------------------------------- */

#define CLONE_INTO_CGROUP_FLAG 0x200000000ULL
#define SIGCHLD_NR 17
#define SI_KERNEL_CODE 0x80

struct clone3_args {
  u64 flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

struct signalfd_info {
  __u32 signo;
  __s32 err;
  __s32 code;
  __u32 rest[29];
};

/* Signals the relay passes on to the job when a process sent them (kill, not the terminal: the
 * terminal signals the whole foreground process group, the job included), and a hangup, which
 * the kernel sends to the session leader only. */
static const int relayed[] = {1, 2, 3, 10, 12, 14, 15, 18, 20, 28};

static unsigned long signal_bit(int sig) {
  return 1UL << (sig - 1);
}

/*
 * Clone a child into the cgroup directory `dir_fd`. In the child, return 0 (it goes on to become
 * the job); -errno when the kernel cannot (nothing has run then). In the parent, never return:
 * relay signals to the child and end as it ended — exit with its code, or die by its signal.
 */
static long clone_into(int dir_fd) {
  unsigned long relay_mask = signal_bit(SIGCHLD_NR), old_mask = 0;
  for (size_t k = 0; k < sizeof relayed / sizeof relayed[0]; k++) relay_mask |= signal_bit(relayed[k]);
  /* Block before the clone, so no signal meant for the job is lost between the clone and the relay. */
  sys6(__NR_rt_sigprocmask, 0 /* SIG_BLOCK */, (long)&relay_mask, (long)&old_mask, 8, 0, 0);
  /* The signalfd exists before the job does, so once the job runs nothing can keep the relay from
   * relaying. The child's copy closes at its exec. */
  int sfd = (int)sys6(__NR_signalfd4, -1, (long)&relay_mask, 8, O_CLOEXEC, 0, 0);
  if (sfd < 0) {
    sys6(__NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&old_mask, 0, 8, 0, 0);
    return sfd;
  }
  long parent = sys(__NR_getpid, 0, 0, 0);
  struct clone3_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_INTO_CGROUP_FLAG;
  args.exit_signal = SIGCHLD_NR;
  args.cgroup = (u64)dir_fd;
  long child = sys(__NR_clone3, &args, sizeof args, 0);
  if (child <= 0) {
    sys(__NR_close, sfd, 0, 0);
    sys6(__NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&old_mask, 0, 8, 0, 0);
    if (child == 0) {
      /* The job dies with its relay (a SIGKILL meant for the job's first process). */
      sys6(__NR_prctl, PR_SET_PDEATHSIG, 9, 0, 0, 0, 0);
      if (sys(__NR_getppid, 0, 0, 0) != parent) quit(137);
    }
    return child;
  }
  sys(__NR_close, dir_fd, 0, 0);
  for (;;) {
    int status = 0;
    long w = sys6(__NR_wait4, child, (long)&status, 1 /* WNOHANG */, 0, 0, 0);
    if (w == child) {
      int sig = status & 0x7f;
      if (sig == 0) quit((status >> 8) & 0xff);
      /* Die by the same signal, so the host sees what the job saw; 128 + N if it is not fatal.
       * Not dumpable first: the job dumped its core if it was to, and the relay adds none. Only
       * that signal is unblocked, so no other pending one ends the relay instead. */
      sys6(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0, 0);
      long dfl[4] = {0, 0, 0, 0};
      sys6(__NR_rt_sigaction, sig, (long)dfl, 0, 8, 0, 0);
      sys(__NR_kill, parent, sig, 0);
      unsigned long mask = signal_bit(sig);
      sys6(__NR_rt_sigprocmask, 1 /* SIG_UNBLOCK */, (long)&mask, 0, 8, 0, 0);
      quit(128 + sig);
    }
    if (w < 0 && w != -4 /* EINTR */) quit(125);
    struct signalfd_info info;
    long n = sys(__NR_read, sfd, &info, sizeof info);
    if (n != (long)sizeof info || info.signo == SIGCHLD_NR) continue;
    if (info.code != SI_KERNEL_CODE) sys(__NR_kill, child, info.signo, 0);
    /* A hangup of the terminal signals the session leader alone, which the relay is: SIGHUP, then
     * SIGCONT so a stopped leader sees it. Pass both on, or the job never learns of it. */
    else if (info.signo == 1 /* SIGHUP */) sys(__NR_kill, child, 1, 0), sys(__NR_kill, child, 18 /* SIGCONT */, 0);
  }
}

/* Start the job in the cgroup whose cgroup.procs is `procs`; write the pid there where clone3 fails. */
static void join_cgroup(const char *procs) {
  static char dir[4096];
  size_t n = len(procs), slash = 0;
  if (n >= sizeof dir) die("the job's cgroup path is too long", procs, -36);
  for (size_t k = 0; k < n; k++) dir[k] = procs[k], slash = procs[k] == '/' ? k : slash;
  dir[slash] = 0;
  int dir_fd = (int)sys(__NR_openat, AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    long r = clone_into(dir_fd);
    if (r == 0) {
      sys(__NR_close, dir_fd, 0, 0);
      return;
    }
    sys(__NR_close, dir_fd, 0, 0);
    /* Whatever clone3 refused (ENOSYS before 5.3, E2BIG for the cgroup field before 5.7, EPERM
     * from a seccomp profile, ...) or the relay could not set up, writing cgroup.procs below
     * works where the cgroup is usable, and says why where it is not. */
  }
  int fd = (int)sys(__NR_openat, AT_FDCWD, procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open the job's cgroup", procs, fd);
  put_num(sys(__NR_getpid, 0, 0, 0)), put("\n");
  long w = sys(__NR_write, fd, out, out_len);
  if (w != (long)out_len) die("cannot join the job's cgroup", procs, w < 0 ? w : -5);
  out_len = 0;
  sys(__NR_close, fd, 0, 0);
}

/* ---- main ---------------------------------------------------------------------------------- */

__attribute__((noreturn)) static void usage(const char *why) {
  put("hands-confine: "), put(why);
  put("\nusage: hands-confine [--probe] [--cgroup FILE] [--landlock [--abi-max N] [--write DIR]... [--rw PATH]... "
      "[--read PATH]... [--list DIR]... [--hide PATH]... [--no-network] [--scope] [--ruleset-from STAMP]] [--expect-cwd DEV:INO] [--argv0 NAME] -- PROGRAM [ARGS...]\n"
      "       hands-confine --keep STAMP POLICY...\n");
  flush(2);
  quit(125);
}

static int parse_u64(const char **s, unsigned long long *v) {
  const char *p = *s;
  unsigned long long n = 0;
  if (*p < '0' || *p > '9') return 0;
  while (*p >= '0' && *p <= '9') n = n * 10 + (unsigned long long)(*p++ - '0');
  *s = p;
  *v = n;
  return 1;
}

static void probe(void) {
  long err = 0;
  int abi = landlock_abi(&err);
  if (abi <= 0) {
    put("landlock 0 ");
    put(err == -38 ? "the kernel has no Landlock" : err == -95 ? "Landlock is disabled at boot" : error_text(-err) ? error_text(-err) : "unknown error");
    put("\n"), flush(1);
    quit(0);
  }
  /* Check that this process may actually restrict itself (a seccomp filter may refuse). */
  struct ruleset_attr attr = {.handled_access_fs = FS_MAKE_BLOCK};
  long fd = sys(__NR_landlock_create_ruleset, &attr, sizeof attr.handled_access_fs, 0);
  long r = fd < 0 ? fd : sys6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
  if (r >= 0) r = sys(__NR_landlock_restrict_self, fd, 0, 0);
  if (r < 0) {
    put("landlock 0 restricting a process failed: "), put_error(-r), put("\n"), flush(1);
    quit(0);
  }
  put("landlock "), put_num(abi), put("\n"), flush(1);
  quit(0);
}

/* The policy, as parsed from the arguments. Option values are pointers into argv. */
static const char *paths[4][512]; /* write, rw, read, list */
static int counts[4];
static const char *hides[512];
static int n_hides;
static int is_no_network, is_scope, abi_max = 1 << 30;
/* FNV-1a over the arguments that make the policy, so a kept ruleset is used only for the same one. */
static u64 policy_hash = 0xcbf29ce484222325ULL;

static void hash_arg(const char *a) {
  for (const unsigned char *p = (const unsigned char *)a;; p++) {
    policy_hash = (policy_hash ^ *p) * 0x100000001b3ULL;
    if (*p == 0) break;
  }
}

/* Build the ruleset for the parsed policy, recording in `stamp` what it depends on; returns its descriptor. */
static int build_ruleset(int abi) {
  stamp.count = 0, stamp.strings = 0, n_hidden = 0, hidden_used = 0;
  handled_fs = fs_rights_for(abi);
  struct ruleset_attr attr = {.handled_access_fs = handled_fs};
  if (is_no_network && abi >= 4) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
  if (is_scope && abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
  /* Older kernels take the shorter struct. */
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(u64) : sizeof(u64);
  long rs = sys(__NR_landlock_create_ruleset, &attr, size, 0);
  if (rs < 0) die("cannot create the Landlock ruleset", 0, rs);
  ruleset = (int)rs;
  for (int k = 0; k < n_hides; k++) hide(hides[k]);
  int root_fd = (int)sys(__NR_openat, AT_FDCWD, "/", O_PATH | O_CLOEXEC);
  if (root_fd < 0) die("cannot open", "/", root_fd);
  if (n_hidden == 0) add_rule_fd(root_fd, 1, READ_RIGHTS, "/");
  else grant_read_except("/", root_fd);
  sys(__NR_close, root_fd, 0, 0);
  for (int k = 0; k < counts[3]; k++) add_rule_path(paths[3][k], FS_READ_DIR);
  for (int k = 0; k < counts[2]; k++) add_rule_path(paths[2][k], READ_RIGHTS);
  for (int k = 0; k < counts[1]; k++) add_rule_path(paths[1][k], RW_RIGHTS);
  for (int k = 0; k < counts[0]; k++) add_rule_path(paths[0][k], WRITE_RIGHTS);
  return ruleset;
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
static int kept_ruleset(const char *file) {
  long size = read_stamp(file);
  if (size <= 0 || !stamp_holds(stamp_buf, size, policy_hash)) return -1;
  const struct stamp_header *h = (const struct stamp_header *)stamp_buf;
  long pidfd = sys(__NR_pidfd_open, h->pid, 0, 0);
  if (pidfd < 0) return -1;
  long fd = sys(__NR_pidfd_getfd, pidfd, h->fd, 0);
  sys(__NR_close, pidfd, 0, 0);
  return fd < 0 ? -1 : (int)fd;
}

/* Write the stamp of the ruleset `fd` to `file` (through a temporary and a rename). */
static void write_stamp(const char *file, int fd) {
  if (stamp.count > MAX_ENTRIES) return;
  stamp.magic = STAMP_MAGIC, stamp.policy = policy_hash, stamp.pid = (__s32)sys(__NR_getpid, 0, 0, 0), stamp.fd = fd;
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
__attribute__((noreturn)) static void keep(const char *file, int abi) {
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

__attribute__((used, noreturn)) void start(long *sp) {
  int argc = (int)sp[0];
  char **argv = (char **)(sp + 1);
  char **envp = argv + argc + 1;
  const char *cgroup = 0, *argv0 = 0, *expect_cwd = 0, *ruleset_from = 0, *keep_file = 0;
  int is_landlock = 0;

  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (eq(a, "--")) {
      i++;
      break;
    }
    int has_value = i + 1 < argc;
    int list = eq(a, "--write") ? 0 : eq(a, "--rw") ? 1 : eq(a, "--read") ? 2 : eq(a, "--list") ? 3 : -1;
    int is_policy = list >= 0 || eq(a, "--hide") || eq(a, "--abi-max");
    int is_valued = is_policy || eq(a, "--cgroup") || eq(a, "--argv0") || eq(a, "--expect-cwd") || eq(a, "--ruleset-from") || eq(a, "--keep");
    if (eq(a, "--probe")) probe();
    else if (eq(a, "--landlock")) is_landlock = 1;
    else if (eq(a, "--no-network")) is_no_network = 1, hash_arg(a);
    else if (eq(a, "--scope")) is_scope = 1, hash_arg(a);
    else if (!is_valued) usage("unknown option");
    else if (!has_value) usage("an option lacks its value");
    else {
      const char *v = argv[++i];
      if (is_policy) hash_arg(a), hash_arg(v);
      if (list >= 0) {
        if (counts[list] == 512) usage("too many paths");
        paths[list][counts[list]++] = v;
      } else if (eq(a, "--hide")) {
        if (n_hides == 512) usage("too many hidden paths");
        hides[n_hides++] = v;
      } else if (eq(a, "--cgroup")) cgroup = v;
      else if (eq(a, "--argv0")) argv0 = v;
      else if (eq(a, "--expect-cwd")) expect_cwd = v;
      else if (eq(a, "--ruleset-from")) ruleset_from = v;
      else if (eq(a, "--keep")) keep_file = v;
      else if (eq(a, "--abi-max")) {
        unsigned long long n;
        if (!parse_u64(&v, &n) || *v) usage("--abi-max takes a number");
        abi_max = (int)n;
      }
    }
  }
  if (keep_file == 0 && i >= argc) usage("no PROGRAM after --");

  if (cgroup) join_cgroup(cgroup);

  if (is_landlock || keep_file) {
    long err = 0;
    int abi = landlock_abi(&err);
    if (abi > abi_max) abi = abi_max;
    if (abi <= 0) die("Landlock is not available", 0, err ? err : -38);
    if (keep_file) keep(keep_file, abi);
    int fd = ruleset_from ? kept_ruleset(ruleset_from) : -1;
    if (fd < 0) fd = build_ruleset(abi);

    /* Out of the bounding set, a capability is gone after the exec, even for root. Without
     * CAP_SETPCAP (not root) the process holds none of them anyway. */
    for (size_t k = 0; k < sizeof dropped_caps / sizeof dropped_caps[0]; k++) {
      long r = sys(__NR_prctl, PR_CAPBSET_DROP, dropped_caps[k], 0);
      if (r != 0 && r != -22 && r != -1) die("cannot drop a capability", 0, r);
    }
    sys6(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0);
    long r = sys6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    if (r != 0) die("cannot set no_new_privs", 0, r);
    r = sys(__NR_landlock_restrict_self, fd, 0, 0);
    if (r != 0) die("cannot apply the Landlock ruleset", 0, r);
    sys(__NR_close, fd, 0, 0);
  }

  if (expect_cwd) {
    const char *p = expect_cwd;
    unsigned long long dev, ino;
    if (!parse_u64(&p, &dev) || *p++ != ':' || !parse_u64(&p, &ino) || *p) usage("--expect-cwd takes DEV:INO");
    struct statx st;
    long r = sys6(__NR_statx, AT_FDCWD, (long)".", 0, STATX_INO, (long)&st, 0);
    if (r != 0) die("cannot stat the working directory", 0, r);
    /* The device number as glibc's makedev() (and so Node's fs.Stats.dev) encodes it. */
    unsigned long long ma = st.stx_dev_major, mi = st.stx_dev_minor;
    unsigned long long d = ((ma & 0xfffff000ULL) << 32) | ((ma & 0xfffULL) << 8) | ((mi & 0xffffff00ULL) << 12) | (mi & 0xffULL);
    if (d != dev || st.stx_ino != ino) {
      put("hands-confine: the working directory was replaced while the command started; nothing ran\n"), flush(2);
      quit(125);
    }
  }

  const char *file = argv[i];
  if (argv0) argv[i] = (char *)argv0;
  long r = sys(__NR_execve, file, &argv[i], envp);
  die("cannot run", file, r);
}
