/*
 * hands-confine: the relay's guard over what Landlock leaves open below ABI 9 — which socket files
 * a job connects to, and the mode, owner, times and extended attributes of files outside its
 * writable paths. The job's filter (seccomp.c) sends these calls to the relay; the guard resolves
 * what the call names as the job would (its root, its working directory, its descriptors), checks
 * where that lies, and then performs the call itself on what it checked: on a copy of the job's
 * descriptor (pidfd_getfd) and on the entry it opened, never on the job's memory again. So a
 * second thread that rewrites the path or swaps the descriptor after the check changes nothing.
 *
 *   connect        every socket: an inet one is connected as asked (its network namespace is the
 *                  job's, whoever connects it); a UNIX one only to a socket file under the roots,
 *                  TMPDIR or a path the host allowed (--socket-dir), connected through the entry
 *                  the guard opened (/proc/self/fd/N); an abstract one only when its listener is
 *                  a process of the job's tree (else shut down both ways: EPERM, as Landlock's
 *                  scope answers). A blocking connect that does not complete at once waits on a
 *                  worker thread, so the relay goes on answering the job's other calls meanwhile.
 *   metadata       chmod, chown, utimes and the extended attributes (every form): performed only
 *                  on an entry under the writable paths (--write) or the job's own terminal; a
 *                  descriptor the job opened for writing is under them already (Landlock let it).
 *
 * Datagram UNIX sockets are refused where they are made (the filter: a datagram socket sends to
 * any socket file by name, with the name in memory), so sendto and sendmsg need no guard.
 * As root the guard takes the caller's credentials for each call (its uid, gid, groups and
 * capabilities, on the performing thread only), so it grants nothing the caller lacked.
 * Each refusal is written once to the events file (--events): `socket PATH\0`, `metadata PATH\0`.
 */
#include "hands-confine.h"

#include <linux/fcntl.h>
#include <linux/ioctl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <linux/stat.h>

struct guard guard = {.events_fd = -1};

#define EPERM_NR 1
#define ENOENT_NR 2
#define EBADF_NR 9
#define EACCES_NR 13
#define ENOTDIR_NR 20
#define EINVAL_NR 22
#define ENAMETOOLONG_NR 36
#define ELOOP_NR 40
#define EOPNOTSUPP_NR 95
#define ECONNREFUSED_NR 111
#define EINPROGRESS_NR 115
#define EAGAIN_NR 11
#define EXDEV_NR 18
#define PATH_BYTES 4096
#define PIDFD_THREAD_FLAG O_EXCL
#define SOL_SOCKET_NR 1
#define SO_TYPE_NR 3
#define SO_PEERCRED_NR 17
#define SO_DOMAIN_NR 39
#define AF_UNIX_NR 1

/* ---- the allowed places ------------------------------------------------------------------------ */

static int entry_id(int fd, const char *path, int flags, struct guard_id *id) {
  memset(id, 0, sizeof *id);
  struct statx st;
  long r = sys6(__NR_statx, fd, (long)path, flags, STATX_INO | STATX_TYPE, (long)&st, 0);
  if (r != 0) return (int)r;
  id->major = st.stx_dev_major, id->minor = st.stx_dev_minor, id->ino = st.stx_ino;
  id->type = st.stx_mode & S_IFMT;
  return 0;
}

static int same(const struct guard_id *a, const struct guard_id *b) {
  return a->major == b->major && a->minor == b->minor && a->ino == b->ino;
}

int guard_add(int set, const char *path) {
  struct guard_set *s = set == GUARD_SOCKETS ? &guard.sockets : &guard.writable;
  if (s->n == (int)(sizeof s->ids / sizeof s->ids[0])) return -7;
  struct guard_id id;
  /* A place that does not exist holds nothing yet; it is checked again by each call's walk. */
  if (entry_id(AT_FDCWD, path, 0, &id) != 0) return 0;
  s->ids[s->n++] = id;
  return 0;
}

void guard_tty(const char *path) {
  guard.has_tty = entry_id(AT_FDCWD, path, 0, &guard.tty) == 0;
}

static int in_set(const struct guard_set *s, const struct guard_id *id) {
  for (int k = 0; k < s->n; k++)
    if (same(&s->ids[k], id)) return 1;
  return 0;
}

/* True when the directory `dir`, or one above it in the caller's view, is in `s`. */
static int under(int dir, const struct guard_set *s) {
  int cur = (int)sys(__NR_fcntl, dir, F_DUPFD_CLOEXEC, 0);
  if (cur < 0) return 0;
  int found = 0;
  struct guard_id id, up;
  if (entry_id(cur, "", AT_EMPTY_PATH, &id) != 0) goto out;
  for (int depth = 0; depth < 4096; depth++) {
    if (in_set(s, &id)) {
      found = 1;
      break;
    }
    int parent = (int)sys(__NR_openat, cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (parent < 0) break;
    sys(__NR_close, cur, 0, 0);
    cur = parent;
    if (entry_id(cur, "", AT_EMPTY_PATH, &up) != 0 || same(&up, &id)) break; /* the top */
    id = up;
  }
out:
  sys(__NR_close, cur, 0, 0);
  return found;
}

/* ---- the caller --------------------------------------------------------------------------------- */

/* A pidfd of thread `tid` (its own descriptor table); -errno. */
static long thread_pidfd(long tid) {
  long fd = sys(__NR_pidfd_open, tid, PIDFD_THREAD_FLAG, 0);
  if (fd != -EINVAL_NR) return fd;
  /* Before Linux 6.9: the thread group's, whose table the thread shares unless it unshared it. */
  char path[64], text[2048];
  proc_path(path, tid, "status");
  long n = read_file(path, text, sizeof text - 1);
  if (n <= 0) return n < 0 ? n : -ENOENT_NR;
  text[n] = 0;
  for (long i = 0; i + 6 < n; i++) {
    if ((i == 0 || text[i - 1] == '\n') && starts(text + i, "Tgid:\t", 6)) {
      const char *p = text + i + 6;
      unsigned long long tgid;
      if (parse_u64(&p, &tgid)) return sys(__NR_pidfd_open, (long)tgid, 0, 0);
    }
  }
  return -ENOENT_NR;
}


static long read_mem(long tid, u64 addr, void *buf, size_t n) {
  long r = read_remote(tid, addr, buf, n);
  return r < 0 ? r : r == (long)n ? 0 : -14 /* EFAULT */;
}

/* The NUL-terminated string at `addr`, into `out` (PATH_BYTES); its length, or -errno. */
static long read_path(long tid, u64 addr, char *out) {
  size_t got = 0;
  while (got < PATH_BYTES - 1) {
    size_t chunk = 4096 - ((addr + got) & 4095);
    if (chunk > PATH_BYTES - 1 - got) chunk = PATH_BYTES - 1 - got;
    long r = read_remote(tid, addr + got, out + got, chunk);
    if (r <= 0) return r < 0 ? r : -14;
    for (long i = 0; i < r; i++)
      if (out[got + (size_t)i] == 0) return (long)(got + (size_t)i);
    got += (size_t)r;
  }
  return -ENAMETOOLONG_NR;
}

/* ---- credentials --------------------------------------------------------------------------------- */

struct creds {
  unsigned euid, fsuid, egid, fsgid;
  unsigned groups[64];
  int n_groups;
  u64 cap_eff;
};

static unsigned own_groups[64], own_gid;
static int n_own_groups;
static struct {
  __u32 version;
  int pid;
} cap_header = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
static struct {
  __u32 effective, permitted, inheritable;
} own_caps[2];

void guard_start(void) {
  guard.is_root = sys(__NR_geteuid, 0, 0, 0) == 0;
  if (!guard.is_root) return;
  own_gid = (unsigned)sys(__NR_getegid, 0, 0, 0);
  long n = sys(__NR_getgroups, 64, own_groups, 0);
  n_own_groups = n < 0 ? 0 : (int)n;
  sys(__NR_capget, &cap_header, own_caps, 0);
}

/* Read a whitespace-separated list of numbers after `key` in /proc/TID/status text. */
static int status_numbers(const char *text, long n, const char *key, unsigned *out, int max, int is_hex, u64 *hex) {
  size_t k = len(key);
  for (long i = 0; i + (long)k < n; i++) {
    if ((i != 0 && text[i - 1] != '\n') || !starts(text + i, key, k)) continue;
    const char *p = text + i + k;
    int count = 0;
    for (;;) {
      while (*p == ' ' || *p == '\t') p++;
      if (*p == '\n' || *p == 0) break;
      if (is_hex) {
        u64 v = 0;
        while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) v = v * 16 + (u64)(*p <= '9' ? *p - '0' : *p - 'a' + 10), p++;
        *hex = v;
        return 1;
      }
      unsigned long long v;
      if (!parse_u64(&p, &v)) break;
      if (count < max) out[count] = (unsigned)v;
      count++;
    }
    return count;
  }
  return -1;
}

/* The caller's credentials (from /proc/TID/status); 0, or -errno. */
static int caller_creds(long tid, struct creds *c) {
  char path[64];
  static char text[8192];
  proc_path(path, tid, "status");
  long n = read_file(path, text, sizeof text - 1);
  if (n <= 0) return n < 0 ? (int)n : -ENOENT_NR;
  text[n] = 0;
  unsigned ids[4];
  if (status_numbers(text, n, "Uid:", ids, 4, 0, 0) < 4) return -EINVAL_NR;
  c->euid = ids[1], c->fsuid = ids[3];
  if (status_numbers(text, n, "Gid:", ids, 4, 0, 0) < 4) return -EINVAL_NR;
  c->egid = ids[1], c->fsgid = ids[3];
  int g = status_numbers(text, n, "Groups:", c->groups, 64, 0, 0);
  if (g < 0 || g > 64) return -EINVAL_NR;
  c->n_groups = g;
  if (status_numbers(text, n, "CapEff:", 0, 0, 1, &c->cap_eff) != 1) return -EINVAL_NR;
  return 0;
}

/*
 * The threads that made guarded calls lately: a pidfd of each (held while it lives, so a number used
 * again is told apart: a pidfd of a thread that exited reads ready), and its credentials as last read
 * (read again after it asked to change them: the filter sends the set*id calls and capset here).
 */
#define CALLERS 64
static struct caller {
  long tid;
  int pidfd;
  int has_creds;
  struct creds creds;
} callers[CALLERS];

static int has_exited(int pidfd) {
  struct poll_fd p = {pidfd, 1 /* POLLIN */, 0};
  struct {
    long sec, nsec;
  } now = {0, 0};
  return sys6(__NR_ppoll, (long)&p, 1, (long)&now, 0, 8, 0) != 0;
}

/* The caller `tid` (its pidfd opened now, or still its own); null when it cannot be had. */
static struct caller *caller(long tid) {
  struct caller *c = &callers[tid % CALLERS];
  if (c->tid == tid && c->pidfd > 0 && !has_exited(c->pidfd)) return c;
  if (c->pidfd > 0) sys(__NR_close, c->pidfd, 0, 0);
  c->tid = tid, c->has_creds = 0;
  long fd = thread_pidfd(tid);
  c->pidfd = fd > 0 ? (int)fd : 0;
  return fd > 0 ? c : 0;
}

void guard_stale(long tid) {
  struct caller *c = &callers[tid % CALLERS];
  if (c->tid == tid) c->has_creds = 0;
}

/* A copy of descriptor `fd` of thread `tid` (the same open file); -errno. */
static long caller_fd(long tid, long fd) {
  struct caller *c = caller(tid);
  return c == 0 ? -3 /* ESRCH */ : sys(__NR_pidfd_getfd, c->pidfd, fd, 0);
}

/* The caller's credentials (read once per thread, again after it changed them); null when unreadable. */
static const struct creds *creds_of(long tid) {
  struct caller *c = caller(tid);
  if (c == 0) return 0;
  if (!c->has_creds) c->has_creds = caller_creds(tid, &c->creds) == 0;
  return c->has_creds ? &c->creds : 0;
}

/* True when acting as the relay would differ from acting as `c`: another uid or gid, other groups,
 * or (`is_caps`) capabilities the relay has and the caller lacks, where the call checks them. */
static int differs(const struct creds *c, int is_caps) {
  if (c->euid != 0 || c->fsuid != 0 || c->egid != own_gid || c->fsgid != own_gid || c->n_groups != n_own_groups) return 1;
  for (int k = 0; k < c->n_groups; k++)
    if (c->groups[k] != own_groups[k]) return 1;
  u64 own = (u64)own_caps[0].effective | ((u64)own_caps[1].effective << 32);
  return is_caps && (own & ~c->cap_eff) != 0;
}

/* Take the caller's credentials on this thread (as root; a no-op otherwise). */
static int mirror(const struct creds *c) {
  if (!guard.is_root) return 0;
  long r = sys(__NR_setgroups, c->n_groups, c->groups, 0);
  if (r == 0) r = sys(__NR_setresgid, -1, c->egid, -1);
  if (r == 0) r = sys(__NR_setfsgid, c->fsgid, 0, 0) >= 0 ? 0 : -EPERM_NR;
  if (r == 0) r = sys(__NR_setresuid, -1, c->euid, -1);
  if (r == 0) sys(__NR_setfsuid, c->fsuid, 0, 0);
  if (r == 0) {
    struct {
      __u32 effective, permitted, inheritable;
    } caps[2] = {{(__u32)c->cap_eff & own_caps[0].permitted, own_caps[0].permitted, own_caps[0].inheritable},
                 {(__u32)(c->cap_eff >> 32) & own_caps[1].permitted, own_caps[1].permitted, own_caps[1].inheritable}};
    r = sys(__NR_capset, &cap_header, caps, 0);
  }
  return (int)r;
}

/* The relay's own credentials again on this thread. */
static void unmirror(void) {
  if (!guard.is_root) return;
  sys(__NR_setresuid, -1, 0, -1);
  sys(__NR_setfsuid, 0, 0, 0);
  sys(__NR_capset, &cap_header, own_caps, 0);
  sys(__NR_setresgid, -1, own_gid, -1);
  sys(__NR_setfsgid, own_gid, 0, 0);
  sys(__NR_setgroups, n_own_groups, own_groups, 0);
}

/* ---- what a path names, in the caller's view ---------------------------------------------------- */

/* `a` + "/" + `b` into out (PATH_BYTES); 0 or -ENAMETOOLONG. */
static long join(const char *a, const char *b, char *out) {
  size_t na = len(a), nb = len(b);
  if (na + 1 + nb + 1 > PATH_BYTES) return -ENAMETOOLONG_NR;
  memcpy(out, a, na);
  out[na] = '/';
  memcpy(out + na + 1, b, nb + 1);
  return 0;
}

/* The directory a relative path of `tid` starts from (its cwd, or directory descriptor `dirfd`), in its view. */
static long base_of(long tid, long dirfd, char *out) {
  char path[64], leaf[24] = "cwd";
  if (dirfd != AT_FDCWD) {
    if (dirfd < 0) return -EBADF_NR;
    int at = 3, i = 0;
    char d[12];
    long v = dirfd;
    leaf[0] = 'f', leaf[1] = 'd', leaf[2] = '/';
    do d[i++] = (char)('0' + v % 10), v /= 10;
    while (v > 0);
    while (i > 0) leaf[at++] = d[--i];
    leaf[at] = 0;
  }
  proc_path(path, tid, leaf);
  long n = sys6(__NR_readlinkat, AT_FDCWD, (long)path, (long)out, PATH_BYTES - 1, 0, 0);
  if (n <= 0) return n < 0 ? n : -ENOENT_NR;
  out[n] = 0;
  if (out[0] != '/') return -ENOTDIR_NR;
  /* A directory removed since: nothing can be found in it by name. */
  if (n > 10 && starts(out + n - 10, " (deleted)", 10)) return -ENOENT_NR;
  return 0;
}

/*
 * Resolve `path` as thread `tid` would (from `dirfd`: AT_FDCWD for its working directory; following
 * a final symlink with `follow`): *dir gets the directory holding the entry, *obj the entry (both
 * O_PATH; *obj -1 when nothing is there). Everything is looked up inside the caller's root
 * (RESOLVE_IN_ROOT: its "/" and ".." stay its own), and no magic link of /proc is followed.
 */
static long resolve(long tid, long dirfd, const char *path, int follow, int *dir, int *obj) {
  static char full[PATH_BYTES], next[PATH_BYTES], base[PATH_BYTES], link[PATH_BYTES];
  *dir = -1, *obj = -1;
  if (path[0] == 0) return -ENOENT_NR;
  char root_path[64];
  proc_path(root_path, tid, "root");
  int root = (int)sys(__NR_openat, AT_FDCWD, root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return root;
  long r = 0;
  if (path[0] == '/') {
    size_t n = len(path);
    memcpy(full, path, n + 1);
  } else {
    r = base_of(tid, dirfd, base);
    if (r == 0) r = join(base, path, full);
  }
  for (int hops = 0; r == 0; hops++) {
    if (hops > 40) {
      r = -ELOOP_NR;
      break;
    }
    /* Split off the last component (trailing slashes dropped). */
    size_t n = len(full);
    while (n > 1 && full[n - 1] == '/') full[--n] = 0;
    size_t cut = n;
    while (cut > 0 && full[cut - 1] != '/') cut--;
    const char *last = full + cut;
    char saved = 0;
    if (cut > 1) saved = full[cut - 1], full[cut - 1] = 0;
    const char *parent = cut <= 1 ? "/" : full;
    struct open_how how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    long p = sys6(__NR_openat2, root, (long)parent, (long)&how, sizeof how, 0, 0);
    if (cut > 1) full[cut - 1] = saved;
    if (p < 0) {
      r = p;
      break;
    }
    if (*last == 0 || eq(last, ".") || eq(last, "..")) {
      /* A directory named by "." or "..": itself, and its parent holds it. */
      long o = *last == 0 ? sys(__NR_fcntl, p, F_DUPFD_CLOEXEC, 0) : sys(__NR_openat, p, last, O_PATH | O_CLOEXEC);
      sys(__NR_close, p, 0, 0);
      if (o < 0) {
        r = o;
        break;
      }
      long up = sys(__NR_openat, o, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (up < 0) {
        sys(__NR_close, o, 0, 0);
        r = up;
        break;
      }
      *dir = (int)up, *obj = (int)o;
      break;
    }
    long o = sys(__NR_openat, p, last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (o == -ENOENT_NR) {
      *dir = (int)p;
      break;
    }
    if (o < 0) {
      sys(__NR_close, p, 0, 0);
      r = o;
      break;
    }
    struct guard_id id;
    if (follow && entry_id((int)o, "", AT_EMPTY_PATH, &id) == 0 && id.type == S_IFLNK) {
      long k = sys6(__NR_readlinkat, o, (long)"", (long)link, PATH_BYTES - 1, 0, 0);
      sys(__NR_close, o, 0, 0);
      sys(__NR_close, p, 0, 0);
      if (k <= 0) {
        r = k < 0 ? k : -ENOENT_NR;
        break;
      }
      link[k] = 0;
      if (link[0] == '/') memcpy(next, link, (size_t)k + 1);
      else {
        if (cut > 1) full[cut - 1] = 0;
        r = join(cut <= 1 ? "" : full, link, next);
      }
      if (r == 0) memcpy(full, next, len(next) + 1);
      continue;
    }
    *dir = (int)p, *obj = (int)o;
    break;
  }
  sys(__NR_close, root, 0, 0);
  if (r < 0) {
    if (*dir >= 0) sys(__NR_close, *dir, 0, 0);
    if (*obj >= 0) sys(__NR_close, *obj, 0, 0);
    *dir = *obj = -1;
    /* A magic link of /proc (the caller's /proc/self/fd/N) is not followed: refused like any other place outside. */
    if (r == -EXDEV_NR) r = -EACCES_NR;
  }
  return r;
}

/* ---- refusals, once each ------------------------------------------------------------------------ */

#define EVENTS_MAX 64
static u64 reported[EVENTS_MAX];
static int n_reported, events_lock;

static void event(const char *what, const char *path) {
  u64 h = 0xcbf29ce484222325ULL;
  for (const char *p = what; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
  for (const char *p = path; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
  while (__atomic_exchange_n(&events_lock, 1, __ATOMIC_ACQUIRE)) sys(__NR_sched_yield, 0, 0, 0);
  int is_new = guard.events_fd >= 0 && n_reported < EVENTS_MAX;
  for (int k = 0; is_new && k < n_reported; k++)
    if (reported[k] == h) is_new = 0;
  if (is_new) {
    reported[n_reported++] = h;
    char line[PATH_BYTES + 32];
    size_t a = len(what), b = len(path);
    if (b > PATH_BYTES - 1) b = PATH_BYTES - 1;
    memcpy(line, what, a);
    line[a] = ' ';
    memcpy(line + a + 1, path, b);
    line[a + 1 + b] = 0;
    sys(__NR_write, guard.events_fd, line, a + b + 2);
  }
  __atomic_store_n(&events_lock, 0, __ATOMIC_RELEASE);
}

/* ---- answering ----------------------------------------------------------------------------------- */

static void respond(int listener, u64 id, long result) {
  struct seccomp_notif_resp resp;
  memset(&resp, 0, sizeof resp);
  resp.id = id;
  if (result < 0) resp.error = (__s32)result;
  else resp.val = result;
  sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* The caller is still waiting in its call (so the pid read was its own, not a reused one). */
static int still_waiting(int listener, u64 id) {
  return sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* ---- connect ------------------------------------------------------------------------------------- */

struct connect_task {
  int listener;
  u64 id;
  int sock;
  /* The socket file the guard opened (O_PATH), or -1: then `addr` is connected to as it is. */
  int target;
  int is_abstract;
  unsigned len;
  char addr[128];
  struct creds creds;
  int has_creds;
  /* For a worker: the connection is in progress (wait for it), not to be made again. */
  int is_in_progress;
  /* On a worker, which holds a copy of the listener (the relay may close its own meanwhile). */
  int is_worker;
};

/* Connect the job's socket as the task says, with the caller's credentials where they differ. */
static long connect_once(struct connect_task *t) {
  long r;
  if (t->has_creds && mirror(&t->creds) != 0) {
    unmirror();
    return -EPERM_NR;
  }
  if (t->target >= 0) {
    /* The entry checked, through its descriptor: the path cannot be swapped under it. */
    struct {
      unsigned short family;
      char path[108];
    } via;
    memset(&via, 0, sizeof via);
    via.family = AF_UNIX_NR;
    proc_path(via.path, sys(__NR_getpid, 0, 0, 0), "fd/");
    size_t at = len(via.path);
    char d[12];
    int i = 0;
    long v = t->target;
    do d[i++] = (char)('0' + v % 10), v /= 10;
    while (v > 0);
    while (i > 0) via.path[at++] = d[--i];
    r = sys(__NR_connect, t->sock, &via, 2 + at + 1);
  } else {
    r = sys(__NR_connect, t->sock, t->addr, t->len);
  }
  if (t->has_creds) unmirror();
  return r;
}

/* Wait until the connection in progress on the task's socket is made or failed (`ms` < 0: for as long as it takes); its result, or -EINPROGRESS. */
static long wait_connected(struct connect_task *t, long ms) {
  struct poll_fd p = {t->sock, 4 /* POLLOUT */, 0};
  struct {
    long sec, nsec;
  } limit = {ms / 1000, (ms % 1000) * 1000000};
  long n;
  do n = sys6(__NR_ppoll, (long)&p, 1, ms < 0 ? 0 : (long)&limit, 0, 8, 0);
  while (n == -4 /* EINTR */);
  if (n == 0) return -EINPROGRESS_NR;
  int err = 0;
  unsigned err_len = sizeof err;
  sys6(__NR_getsockopt, t->sock, SOL_SOCKET_NR, 4 /* SO_ERROR */, (long)&err, (long)&err_len, 0);
  return -(long)err;
}

/* After a connect: one to an abstract socket whose listener is outside the job's tree is shut down. */
static long checked(struct connect_task *t, long r) {
  if (r == 0 && t->is_abstract) {
    struct {
      int pid;
      unsigned uid, gid;
    } peer;
    unsigned peer_len = sizeof peer;
    long g = sys6(__NR_getsockopt, t->sock, SOL_SOCKET_NR, SO_PEERCRED_NR, (long)&peer, (long)&peer_len, 0);
    if (g != 0 || !relay_in_tree(peer.pid)) {
      /* Connected to a listener outside the tree: nothing may pass (Landlock's scope answers EPERM). */
      sys(__NR_shutdown, t->sock, 2 /* SHUT_RDWR */, 0);
      char name[110];
      size_t n = t->len > 3 ? t->len - 3 : 0;
      if (n > sizeof name - 2) n = sizeof name - 2;
      name[0] = '@';
      memcpy(name + 1, t->addr + 3, n);
      name[n + 1] = 0;
      for (size_t k = 1; k <= n; k++)
        if (name[k] == 0) name[k] = '@';
      event("socket", name);
      r = -EPERM_NR;
    }
  }
  return r;
}

/* Answer the task and close what it holds (a worker's own copy of the listener too). */
static void finish_connect(struct connect_task *t, long r) {
  respond(t->listener, t->id, r);
  sys(__NR_close, t->sock, 0, 0);
  if (t->target >= 0) sys(__NR_close, t->target, 0, 0);
  if (t->is_worker) sys(__NR_close, t->listener, 0, 0);
}

/* Workers: a blocking connect waits on one of these, so the relay answers the job's other calls meanwhile. */
#define WORKERS 16
#define WORKER_STACK (128 * 1024)
static struct worker {
  int tid_word; /* non-zero while its thread lives (the kernel clears it at the thread's exit) */
  char *stack;
  struct connect_task task;
} workers[WORKERS];

static void worker_main(void) {
  char here;
  struct worker *w = 0;
  for (int k = 0; k < WORKERS; k++)
    if (workers[k].stack && &here > workers[k].stack && &here < workers[k].stack + WORKER_STACK) w = &workers[k];
  if (w != 0) {
    /* A connection in progress is waited for; a UNIX listener with its backlog full is connected to again, blocking. */
    struct connect_task *t = &w->task;
    finish_connect(t, checked(t, t->is_in_progress ? wait_connected(t, -1) : connect_once(t)));
  }
  for (;;) sys(__NR_exit, 0, 0, 0); /* this thread only */
}

#define WORKER_FLAGS (0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000 | 0x200000) /* VM FS FILES SIGHAND THREAD SYSVSEM CHILD_CLEARTID */

static long start_worker(struct worker *w) {
  long top = ((long)w->stack + WORKER_STACK) & ~15L;
#if defined(__x86_64__)
  register long r10 __asm__("r10") = (long)&w->tid_word;
  register long r8 __asm__("r8") = 0;
  long ret;
  __asm__ volatile(
    "syscall\n"
    "test %%rax, %%rax\n"
    "jnz 1f\n"
    "xor %%ebp, %%ebp\n"
    "call *%%rbx\n"
    "hlt\n"
    "1:\n"
    : "=a"(ret)
    : "a"((long)__NR_clone), "D"((long)WORKER_FLAGS), "S"(top), "d"(0L), "r"(r10), "r"(r8), "b"(worker_main)
    : "rcx", "r11", "memory");
  return ret;
#else
  register long x8 __asm__("x8") = __NR_clone;
  register long x0 __asm__("x0") = WORKER_FLAGS;
  register long x1 __asm__("x1") = top;
  register long x2 __asm__("x2") = 0;
  register long x3 __asm__("x3") = 0;
  register long x4 __asm__("x4") = (long)&w->tid_word;
  register long x9 __asm__("x9") = (long)worker_main;
  __asm__ volatile(
    "svc 0\n"
    "cbnz x0, 1f\n"
    "mov x29, #0\n"
    "blr x9\n"
    "brk #0\n"
    "1:\n"
    : "+r"(x0)
    : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x9)
    : "x30", "memory");
  return x0;
#endif
}

/* Hand `t` to a free worker; false when none is free (the caller connects itself). */
static int to_worker(const struct connect_task *t) {
  for (int k = 0; k < WORKERS; k++) {
    struct worker *w = &workers[k];
    if (__atomic_load_n(&w->tid_word, __ATOMIC_ACQUIRE) != 0) continue;
    if (w->stack == 0) {
      long p = sys6(__NR_mmap, 0, WORKER_STACK, 3, 0x22 | 0x4000 | 0x20000 /* PRIVATE ANONYMOUS NORESERVE STACK */, -1, 0);
      if (p < 0 && p > -4096) return 0;
      w->stack = (char *)p;
    }
    w->task = *t;
    __atomic_store_n(&w->tid_word, 1, __ATOMIC_RELEASE);
    if (start_worker(w) > 0) return 1;
    __atomic_store_n(&w->tid_word, 0, __ATOMIC_RELEASE);
    return 0;
  }
  return 0;
}

static void guard_connect(int listener, const struct seccomp_notif *req, u64 sock_arg, u64 addr_arg, u64 len_arg) {
  long tid = (long)req->pid;
  struct connect_task t;
  memset(&t, 0, sizeof t);
  t.listener = listener, t.id = req->id, t.sock = -1, t.target = -1;
  long r;
  int domain = 0;
  if (guard.is_no_getfd) {
    /* No copy of the job's socket can be had: its address decides, and the kernel connects. */
    domain = AF_UNIX_NR;
  } else {
    r = caller_fd(tid, (long)(int)sock_arg);
    if (r < 0) {
      respond(listener, req->id, r == -EPERM_NR ? -EACCES_NR : r);
      return;
    }
    t.sock = (int)r;
    unsigned dlen = sizeof domain;
    sys6(__NR_getsockopt, t.sock, SOL_SOCKET_NR, SO_DOMAIN_NR, (long)&domain, (long)&dlen, 0);
  }
  t.len = (unsigned)len_arg > sizeof t.addr ? sizeof t.addr : (unsigned)len_arg;
  if ((long)(int)len_arg < 0) t.len = 0;
  r = t.len == 0 ? 0 : read_mem(tid, addr_arg, t.addr, t.len);
  if (r == 0 && domain == AF_UNIX_NR && t.len > 2 && *(unsigned short *)t.addr == AF_UNIX_NR) {
    if (t.addr[2] == 0) {
      t.is_abstract = 1;
    } else {
      /* A socket file: resolved in the caller's view, and only one under the allowed places. */
      char path[112];
      size_t n = t.len - 2;
      memcpy(path, t.addr + 2, n);
      path[n] = 0;
      int dir, obj;
      r = resolve(tid, AT_FDCWD, path, 1, &dir, &obj);
      if (r == 0 && obj < 0) r = -ENOENT_NR;
      struct guard_id id;
      if (r == 0 && entry_id(obj, "", AT_EMPTY_PATH, &id) != 0) r = -ENOENT_NR;
      if (r == 0 && id.type != S_IFSOCK) r = -ECONNREFUSED_NR;
      if (r == 0 && !in_set(&guard.sockets, &id) && !under(dir, &guard.sockets)) {
        r = -EACCES_NR;
        event("socket", path);
      }
      if (dir >= 0) sys(__NR_close, dir, 0, 0);
      if (r == 0) t.target = obj;
      else if (obj >= 0) sys(__NR_close, obj, 0, 0);
    }
  }
  if (guard.is_no_getfd) {
    /* Checked, then made by the kernel from the job's memory (a thread of the job could change it
     * meanwhile: the summary says so). */
    if (t.target >= 0) sys(__NR_close, t.target, 0, 0);
    if (r == 0) {
      struct seccomp_notif_resp go;
      memset(&go, 0, sizeof go);
      go.id = req->id, go.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_SEND, &go);
    } else {
      respond(listener, req->id, r);
    }
    return;
  }
  if (r == 0 && guard.is_root) {
    /* A connection carries the connector's uid and gid (SO_PEERCRED): the caller's, never the relay's. */
    const struct creds *c = creds_of(tid);
    if (c == 0) r = -EACCES_NR;
    else if (differs(c, 0)) t.creds = *c, t.has_creds = 1;
  }
  if (r == 0 && !still_waiting(listener, req->id)) r = -ENOENT_NR;
  if (r < 0) {
    respond(listener, req->id, r);
    sys(__NR_close, t.sock, 0, 0);
    if (t.target >= 0) sys(__NR_close, t.target, 0, 0);
    return;
  }
  t.listener = listener;
  long flags = sys(__NR_fcntl, t.sock, F_GETFL, 0);
  if (flags < 0 || (flags & O_NONBLOCK)) {
    finish_connect(&t, checked(&t, connect_once(&t)));
    return;
  }
  /*
   * A blocking socket: connected here without blocking (O_NONBLOCK for the moment of the call, on a
   * socket no one uses before it is connected), which is all most connects need (a UNIX listener,
   * loopback). One still in progress after 2 ms, or a UNIX listener whose backlog is full, waits on
   * a worker thread, so the relay goes on answering the job's other calls.
   */
  sys(__NR_fcntl, t.sock, F_SETFL, flags | O_NONBLOCK);
  r = connect_once(&t);
  sys(__NR_fcntl, t.sock, F_SETFL, flags);
  if (r == -EINPROGRESS_NR) r = wait_connected(&t, 2);
  if (r != -EINPROGRESS_NR && r != -EAGAIN_NR) {
    finish_connect(&t, checked(&t, r));
    return;
  }
  t.is_in_progress = r == -EINPROGRESS_NR;
  struct connect_task w = t;
  w.listener = (int)sys(__NR_fcntl, listener, F_DUPFD_CLOEXEC, 0);
  w.is_worker = 1;
  if (w.listener >= 0 && to_worker(&w)) return;
  if (w.listener >= 0) sys(__NR_close, w.listener, 0, 0);
  finish_connect(&t, checked(&t, t.is_in_progress ? wait_connected(&t, -1) : connect_once(&t)));
}

/*
 * 32-bit programs reach sockets through socketcall(call, args), the arguments in memory, where the
 * filter cannot see them: the guard copies them and acts on its copy. A connect as above; a socket or
 * a pair made by the guard itself (in the job's network namespace: the relay shares it under
 * Landlock, and bubblewrap with the network cut refuses socketcall outright) and handed to the job.
 */
static void guard_socketcall(int listener, const struct seccomp_notif *req, int call, u64 args_addr) {
  long tid = (long)req->pid;
  __u32 args[4];
  long r = read_mem(tid, args_addr, args, call == 8 ? 16 : 12);
  if (r < 0) {
    respond(listener, req->id, r);
    return;
  }
  if (call == 3 /* SYS_CONNECT */) {
    guard_connect(listener, req, args[0], args[1], args[2]);
    return;
  }
  int domain = (int)args[0], type = (int)args[1];
  if (domain == AF_UNIX_NR && (type & 0xf) == 2 /* SOCK_DGRAM */) {
    respond(listener, req->id, -EACCES_NR);
    return;
  }
  struct seccomp_notif_addfd add;
  memset(&add, 0, sizeof add);
  add.id = req->id;
  add.newfd_flags = (type & O_CLOEXEC) ? O_CLOEXEC : 0;
  if (call == 1 /* SYS_SOCKET */) {
    long fd = sys(__NR_socket, domain, type & ~O_CLOEXEC, (int)args[2]);
    if (fd < 0) {
      respond(listener, req->id, fd);
      return;
    }
    add.srcfd = (__u32)fd, add.flags = SECCOMP_ADDFD_FLAG_SEND;
    /* With SEND the new descriptor is the call's result, sent at once. */
    long got = sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
    sys(__NR_close, fd, 0, 0);
    if (got < 0) respond(listener, req->id, got);
    return;
  }
  int pair[2];
  r = sys6(__NR_socketpair, domain, type & ~O_CLOEXEC, (int)args[2], (long)pair, 0, 0);
  int got[2] = {-1, -1};
  for (int k = 0; r == 0 && k < 2; k++) {
    add.srcfd = (__u32)pair[k];
    r = sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
    if (r >= 0) got[k] = (int)r, r = 0;
  }
  if (r == 0) {
    struct io_vec local = {got, sizeof got}, remote = {(void *)(u64)args[3], sizeof got};
    long w = sys6(__NR_process_vm_writev, tid, (long)&local, 1, (long)&remote, 1, 0);
    r = w == (long)sizeof got ? 0 : w < 0 ? w : -14;
  }
  if (pair[0] >= 0 && r != -EINVAL_NR) sys(__NR_close, pair[0], 0, 0), sys(__NR_close, pair[1], 0, 0);
  respond(listener, req->id, r);
}

/* ---- metadata ------------------------------------------------------------------------------------ */

/* Is `fd` (a copy of the caller's descriptor) under the writable places: open for writing (Landlock
 * let it), not a file on disk (a pipe, a socket), or found under them by its name now. */
static int fd_allowed(int fd, char *name) {
  long flags = sys(__NR_fcntl, fd, F_GETFL, 0);
  if (flags >= 0 && (flags & O_ACCMODE) != O_RDONLY && !(flags & O_PATH)) return 1;
  char self[64];
  proc_path(self, sys(__NR_getpid, 0, 0, 0), "fd/");
  size_t at = len(self);
  char d[12];
  int i = 0;
  long v = fd;
  do d[i++] = (char)('0' + v % 10), v /= 10;
  while (v > 0);
  while (i > 0) self[at++] = d[--i];
  self[at] = 0;
  long n = sys6(__NR_readlinkat, AT_FDCWD, (long)self, (long)name, PATH_BYTES - 1, 0, 0);
  if (n <= 0) return 0;
  name[n] = 0;
  if (name[0] != '/') return 1;
  struct guard_id id;
  if (guard.has_tty && entry_id(fd, "", AT_EMPTY_PATH, &id) == 0 && same(&id, &guard.tty)) return 1;
  if (n > 10 && starts(name + n - 10, " (deleted)", 10)) name[n - 10] = 0;
  size_t cut = len(name);
  while (cut > 1 && name[cut - 1] != '/') cut--;
  char saved = name[cut - 1];
  name[cut > 1 ? cut - 1 : cut] = 0;
  struct open_how how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS};
  long dir = sys6(__NR_openat2, AT_FDCWD, (long)(cut > 1 ? name : "/"), (long)&how, sizeof how, 0, 0);
  if (cut > 1) name[cut - 1] = saved;
  if (dir < 0) return 0;
  int ok = under((int)dir, &guard.writable);
  sys(__NR_close, dir, 0, 0);
  return ok;
}

/* The metadata call `op` with the arguments as copied, on what the caller named. */
struct meta {
  int op;
  int follow;
  long dirfd;        /* AT_FDCWD, a directory descriptor, or the descriptor acted on (is_fd) */
  int is_fd;
  u64 path;          /* the path argument's address, or 0 */
  unsigned mode;
  unsigned uid, gid; /* as the kernel takes them (-1: unchanged) */
  int has_times;
  struct {
    long long sec, nsec;
  } times[2];
  int at_flags;      /* utimensat's own flags beside AT_SYMLINK_NOFOLLOW */
  u64 name, value;
  size_t size;
  int xflags;
};

static long perform(struct meta *m, int target, int is_fd_target, long tid) {
  static char name[256], value[65536];
  long r = 0;
  if (m->op == META_SETXATTR || m->op == META_REMOVEXATTR) {
    r = read_path(tid, m->name, value);
    if (r < 0) return r;
    if (r >= (long)sizeof name) return -34 /* ERANGE */;
    memcpy(name, value, (size_t)r + 1);
    if (m->op == META_SETXATTR) {
      if (m->size > sizeof value) return -7 /* E2BIG */;
      if (m->size > 0 && (r = read_mem(tid, m->value, value, m->size)) < 0) return r;
    }
  }
  char via[64];
  proc_path(via, sys(__NR_getpid, 0, 0, 0), "fd/");
  size_t at = len(via);
  char d[12];
  int i = 0;
  long v = target;
  do d[i++] = (char)('0' + v % 10), v /= 10;
  while (v > 0);
  while (i > 0) via[at++] = d[--i];
  via[at] = 0;
  struct guard_id id;
  int is_link = !is_fd_target && entry_id(target, "", AT_EMPTY_PATH, &id) == 0 && id.type == S_IFLNK;
  struct {
    long long sec, nsec;
  } *ts = m->has_times ? (void *)m->times : 0;
  switch (m->op) {
    case META_CHMOD:
      if (is_fd_target) return sys(__NR_fchmod, target, m->mode, 0);
      if (is_link) return -EOPNOTSUPP_NR;
      return sys6(__NR_fchmodat, AT_FDCWD, (long)via, m->mode, 0, 0, 0);
    case META_CHOWN:
      if (is_fd_target) return sys(__NR_fchown, target, m->uid, m->gid);
      return sys6(__NR_fchownat, target, (long)"", m->uid, m->gid, AT_EMPTY_PATH, 0);
    case META_TIMES:
      if (is_fd_target) return sys6(__NR_utimensat, target, 0, (long)ts, 0, 0, 0);
      return sys6(__NR_utimensat, target, (long)"", (long)ts, AT_EMPTY_PATH, 0, 0);
    case META_SETXATTR:
      if (is_fd_target) return sys6(__NR_fsetxattr, target, (long)name, (long)value, (long)m->size, m->xflags, 0);
      if (is_link) return -EPERM_NR;
      return sys6(__NR_setxattr, (long)via, (long)name, (long)value, (long)m->size, m->xflags, 0);
    case META_REMOVEXATTR:
      if (is_fd_target) return sys(__NR_fremovexattr, target, name, 0);
      if (is_link) return -EPERM_NR;
      return sys(__NR_removexattr, via, name, 0);
  }
  return -EINVAL_NR;
}

/* Read the times argument (`kind`: META_TIMESPEC, META_TIMESPEC32, META_TIMEVAL, META_TIMEVAL32, META_UTIMBUF, META_UTIMBUF32) into m->times. */
static long read_times(long tid, u64 addr, int kind, struct meta *m) {
  if (addr == 0) return 0;
  long long out[4] = {0, 0, 0, 0};
  if (kind == META_TIMESPEC) {
    long r = read_mem(tid, addr, out, 32);
    if (r < 0) return r;
  } else if (kind == META_TIMESPEC32 || kind == META_TIMEVAL32) {
    int in[4];
    long r = read_mem(tid, addr, in, 16);
    if (r < 0) return r;
    for (int k = 0; k < 4; k++) out[k] = in[k];
    if (kind == META_TIMEVAL32) out[1] *= 1000, out[3] *= 1000;
  } else if (kind == META_TIMEVAL) {
    long r = read_mem(tid, addr, out, 32);
    if (r < 0) return r;
    out[1] *= 1000, out[3] *= 1000;
  } else if (kind == META_UTIMBUF || kind == META_UTIMBUF32) {
    long long b[2] = {0, 0};
    if (kind == META_UTIMBUF) {
      long r = read_mem(tid, addr, b, 16);
      if (r < 0) return r;
    } else {
      int c[2];
      long r = read_mem(tid, addr, c, 8);
      if (r < 0) return r;
      b[0] = c[0], b[1] = c[1];
    }
    out[0] = b[0], out[2] = b[1];
  }
  for (int k = 0; k < 2; k++) m->times[k].sec = out[2 * k], m->times[k].nsec = out[2 * k + 1];
  m->has_times = 1;
  return 0;
}

/*
 * The descriptor of its own that thread `tid` names by `path` (/proc/self/fd/N, /proc/thread-self/fd/N,
 * /proc/TID/fd/N, /dev/fd/N, /dev/stdin, /dev/stdout, /dev/stderr), or -1. Such a name leads, in the
 * caller's view, to the file the descriptor is open on (glibc's lchmod and fchmodat with
 * AT_SYMLINK_NOFOLLOW, before fchmodat2, chmod through /proc/self/fd/N); in the relay's view it would
 * name the relay's own descriptor.
 */
static long own_fd(const char *path, long tid) {
  if (eq(path, "/dev/stdin")) return 0;
  if (eq(path, "/dev/stdout")) return 1;
  if (eq(path, "/dev/stderr")) return 2;
  const char *p = 0;
  if (starts(path, "/dev/fd/", 8)) p = path + 8;
  else if (starts(path, "/proc/self/fd/", 14)) p = path + 14;
  else if (starts(path, "/proc/thread-self/fd/", 21)) p = path + 21;
  else if (starts(path, "/proc/", 6)) {
    long n = 0;
    const char *q = path + 6;
    while (*q >= '0' && *q <= '9') n = n * 10 + (*q++ - '0');
    if (q == path + 6 || n != tid || !starts(q, "/fd/", 4)) return -1;
    p = q + 4;
  }
  if (p == 0 || *p == 0) return -1;
  long fd = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9' || fd > 1 << 20) return -1;
    fd = fd * 10 + (*p - '0');
  }
  return fd;
}

static void guard_metadata(int listener, const struct seccomp_notif *req) {
  long tid = (long)req->pid;
  const struct meta_call *c = meta_call(req->data.arch, req->data.nr);
  const u64 *a = (const u64 *)req->data.args;
  struct meta m;
  memset(&m, 0, sizeof m);
  m.op = c->op, m.follow = c->follow, m.dirfd = AT_FDCWD;
  if (c->dirfd >= 0) m.dirfd = (long)(int)a[(int)c->dirfd];
  if (c->path >= 0) m.path = a[(int)c->path];
  else m.is_fd = 1;
  if (c->mode >= 0) m.mode = (unsigned)a[(int)c->mode];
  if (c->owner >= 0) {
    m.uid = (unsigned)a[(int)c->owner], m.gid = (unsigned)a[(int)c->owner + 1];
    if (c->is16) {
      if ((m.uid & 0xffff) == 0xffff) m.uid = (unsigned)-1;
      else m.uid &= 0xffff;
      if ((m.gid & 0xffff) == 0xffff) m.gid = (unsigned)-1;
      else m.gid &= 0xffff;
    }
  }
  long r = 0;
  if (c->times >= 0) r = read_times(tid, a[(int)c->times], c->times_kind, &m);
  if (c->name >= 0) {
    m.name = a[(int)c->name];
    if (c->op == META_SETXATTR && c->xattr_args < 0) m.value = a[(int)c->name + 1], m.size = (size_t)a[(int)c->name + 2], m.xflags = (int)a[(int)c->name + 3];
  }
  if (c->xattr_args >= 0 && r == 0) {
    /* setxattrat: struct xattr_args { u64 value; u32 size; u32 flags; } */
    struct {
      u64 value;
      __u32 size, flags;
    } xa;
    r = read_mem(tid, a[(int)c->xattr_args], &xa, sizeof xa);
    m.value = xa.value, m.size = xa.size, m.xflags = (int)xa.flags;
  }
  /* The flags argument of the *at forms: AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH. */
  int at_flags = c->flags >= 0 ? (int)a[(int)c->flags] : 0;
  if (at_flags & 0x100 /* AT_SYMLINK_NOFOLLOW */) m.follow = 0;
  static char path[PATH_BYTES], name[PATH_BYTES];
  path[0] = 0;
  if (r == 0 && m.path != 0) {
    long n = read_path(tid, m.path, path);
    r = n < 0 ? n : 0;
  }
  /* No path (utimensat's NULL), or an empty one with AT_EMPTY_PATH: the descriptor itself. */
  if (r == 0 && !m.is_fd && (m.path == 0 || (path[0] == 0 && (at_flags & AT_EMPTY_PATH)))) m.is_fd = 1;
  /* A name of the caller's own descriptor, followed: the file it is open on, found through /proc/TID/fd/N. */
  int is_own_link = 0;
  if (r == 0 && !m.is_fd && m.follow && path[0] == '/') {
    long fd = own_fd(path, tid);
    if (fd >= 0) m.is_fd = 1, m.dirfd = fd, is_own_link = 1;
  }
  /* As root, the caller's credentials where they decide: another uid or group than the relay's, or
   * the capabilities security. and trusted. attributes take (the rest of a job's are the relay's too). */
  struct creds creds;
  int is_mirrored = 0;
  if (r == 0 && guard.is_root) {
    const struct creds *c = creds_of(tid);
    if (c == 0) r = -EACCES_NR;
    else {
      creds = *c;
      is_mirrored = differs(c, m.op == META_SETXATTR || m.op == META_REMOVEXATTR);
    }
  }
  int target = -1, dir = -1;
  if (r == 0 && m.is_fd && (guard.is_no_getfd || is_own_link)) {
    /* No copy of the descriptor (or a name of it, which acts on its file whatever its open mode): its
     * file, opened again through /proc/TID/fd/N, checked by where it is and changed. */
    char fd_path[64], leaf[24] = "fd/";
    int at = 3, i = 0;
    char d[12];
    long v = m.dirfd < 0 ? 0 : m.dirfd;
    do d[i++] = (char)('0' + v % 10), v /= 10;
    while (v > 0);
    while (i > 0) leaf[at++] = d[--i];
    leaf[at] = 0;
    proc_path(fd_path, tid, leaf);
    long fd = m.dirfd < 0 ? -EBADF_NR : sys(__NR_openat, AT_FDCWD, fd_path, O_PATH | O_CLOEXEC);
    if (fd < 0) r = fd == -ENOENT_NR ? -EBADF_NR : fd;
    else {
      target = (int)fd;
      m.is_fd = 0;
      if (!fd_allowed(target, name)) {
        r = -EACCES_NR;
        event("metadata", name);
      }
    }
  } else if (r == 0 && m.is_fd) {
    long fd = caller_fd(tid, m.dirfd);
    if (fd < 0) r = fd == -EPERM_NR ? -EACCES_NR : fd;
    else {
      target = (int)fd;
      if (!fd_allowed(target, name)) {
        r = -EACCES_NR;
        event("metadata", name);
      }
    }
  } else if (r == 0) {
    r = resolve(tid, m.dirfd, path, m.follow, &dir, &target);
    if (r == 0 && target < 0) r = -ENOENT_NR;
    struct guard_id id;
    int is_known = r == 0 && entry_id(target, "", AT_EMPTY_PATH, &id) == 0;
    /* The entry itself a writable place (a root, TMPDIR), or in one; or the job's own terminal. */
    int is_own = is_known && ((guard.has_tty && same(&id, &guard.tty)) || in_set(&guard.writable, &id));
    if (r == 0 && !is_own && !under(dir, &guard.writable)) {
      r = -EACCES_NR;
      event("metadata", path);
    }
  }
  if (r == 0 && !still_waiting(listener, req->id)) r = -ENOENT_NR;
  if (r == 0) {
    if (is_mirrored) {
      r = mirror(&creds) == 0 ? perform(&m, target, m.is_fd, tid) : -EPERM_NR;
      unmirror();
    } else {
      r = perform(&m, target, m.is_fd, tid);
    }
  }
  if (dir >= 0) sys(__NR_close, dir, 0, 0);
  if (target >= 0) sys(__NR_close, target, 0, 0);
  respond(listener, req->id, r);
}

/* ---- the entry ------------------------------------------------------------------------------------ */

int guard_answer(int listener, const struct seccomp_notif *req) {
  int kind = supervised_kind(req->data.arch, req->data.nr);
  const u64 *a = (const u64 *)req->data.args;
  if (kind == KIND_CONNECT && guard.is_sockets) {
    guard_connect(listener, req, a[0], a[1], a[2]);
    return 1;
  }
  if (kind == KIND_SOCKETCALL && guard.is_sockets) {
    guard_socketcall(listener, req, (int)a[0], a[1]);
    return 1;
  }
  if (kind == KIND_CREDS) {
    guard_stale((long)req->pid);
    struct seccomp_notif_resp go;
    memset(&go, 0, sizeof go);
    go.id = req->id, go.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_SEND, &go);
    return 1;
  }
  if (kind == KIND_EFFECT && guard.is_metadata && meta_call(req->data.arch, req->data.nr) != 0) {
    guard_metadata(listener, req);
    return 1;
  }
  return 0;
}
