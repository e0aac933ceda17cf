/*
 * hands-confine: the first process of every hands job. In this order:
 *
 *   --oom-score-adj N    make the job the OOM killer's first choice (its score adjustment is
 *                        raised to N; it is never lowered);
 *   --landlock ...       prepare the job's Landlock ruleset (landlock.c): take the session's kept
 *                        ruleset (--ruleset-from STAMP) when its stamp still holds, else build it;
 *                        with --own-tty, the terminal on stdin is the one device under /dev/pts
 *                        the job may open;
 *   --join FILE          (repeatable) the job's first process also joins this cgroup.procs (the
 *                        session's cgroup v1 limits), before anything restricts it;
 *   --cgroup FILE        start the job inside the cgroup whose cgroup.procs is FILE, as a child of
 *   --seccomp            this process, which stays as its relay (relay.c): it passes signals on,
 *   --status-fd N        answers the seccomp supervisor's questions, reaps the orphans of the tree
 *   --effects FILE       and ends as the job ended (reporting that on N first, with --status-fd);
 *                        with --effects it records in FILE every path the job changes (effects.c);
 *
 * then, in the job:
 *
 *   --nproc-beyond N     RLIMIT_NPROC at the machine's tasks now plus N (where no cgroup holds the
 *                        job's tree, a fork bomb stops there);
 *   capabilities         (with --landlock) only those that work inside the roots needs stay in
 *                        the bounding, inheritable and ambient sets: chown, dac_override, fowner,
 *                        fsetid, kill, setgid, setuid, setpcap, net_bind_service, sys_chroot,
 *                        audit_write (they matter only when hands runs as root);
 *   no_new_privs         setuid programs gain nothing;
 *   --seccomp            the filter of seccomp.c: calls that name another process are supervised
 *                        by the relay (refused where no relay can, or with --no-supervisor), io_uring
 *                        and the kernel keyrings are refused, and with --no-network every socket but
 *                        UNIX, netlink and TCP;
 *   landlock             the ruleset applied;
 *   --expect-cwd D:I     refuse to run unless the working directory is device D, inode I;
 *
 * Inside bubblewrap (whose namespaces already keep the job from other processes and the network),
 * the inner stage takes `--drop-caps` (the capability cut above), `--seccomp-basic` (only the
 * filter's io_uring, keyring and clone3 refusals; with `--netns-families`, no socket of a family a
 * network namespace does not hold, vsock among them; with `--no-network`, as unconfined commands
 * with the network cut get it, no socket but UNIX and netlink) and `--scope-only` (a Landlock domain that scopes
 * signals and abstract UNIX sockets, ABI >= 6: bubblewrap shares the host's abstract namespace).
 *   descriptors          every descriptor but 0, 1, 2 and the --keep-fd ones is closed;
 *   exec PROGRAM ARGS    (argv[0] from --argv0).
 *
 * Any failure before the exec prints "hands-confine: ..." on stderr and exits 125: the program
 * never runs weaker than asked. `--probe` prints what the kernel offers ("landlock N [why]",
 * "seccomp supervised|refusing|none [why]"). `--keep STAMP POLICY...` runs as a session's ruleset
 * keeper (landlock.c). `--peer` describes the peer of the UNIX socket on stdin, `--tcp-peer SERVER
 * CLIENT` the process on the client end of a loopback TCP connection (peer.c). `--spawner FD` runs as
 * a session's starter of piped jobs (spawner.c): it forks and execs the helper for each job Node
 * asks for on stdin, so starting a job does not fork the server. `--remove-tree FD` and `--copy-tree
 * SRC DEST` remove and copy trees by descriptor for fs-runtime's delete, copy and move (tree.c).
 *
 * Freestanding (no libc): it is exec'd before every command, and a static glibc's start-up alone
 * costs more than everything this program does. Linux x86-64 and arm64.
 */
#include "hands-confine.h"

#include <linux/capability.h>
#include <linux/fcntl.h>
#include <linux/filter.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <linux/stat.h>

#if defined(__x86_64__)
__asm__(".text\n.global _start\n_start:\n xor %rbp,%rbp\n mov %rsp,%rdi\n and $-16,%rsp\n call start\n hlt\n");
#else
__asm__(".text\n.global _start\n_start:\n mov x29, #0\n mov x30, #0\n mov x0, sp\n and sp, x0, #-16\n bl start\n");
#endif

/* ---- capabilities ---------------------------------------------------------------------------- */

/*
 * What a job may keep: owning, reading and writing files whatever their mode (chown, dac_override,
 * fowner, fsetid), changing user and group (a package manager dropping to its own user), signals
 * inside its tree, dropping capabilities further, low ports, chroot and audit messages. Everything
 * else reaches outside the roots: the clock (sys_time), file attributes such as immutable
 * (linux_immutable), raw and packet sockets (net_raw), priority and limits of any process
 * (sys_nice, sys_resource), file capabilities (setfcap), module loading, raw devices, mounts,
 * tracing, reading any file by handle (dac_read_search), memory locks, ...
 */
static const int kept_caps[] = {
  CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP,
  CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT, CAP_AUDIT_WRITE,
};

static int is_kept_cap(int cap) {
  for (size_t k = 0; k < sizeof kept_caps / sizeof kept_caps[0]; k++)
    if (kept_caps[k] == cap) return 1;
  return 0;
}

static void drop_caps(void) {
  /* Out of the bounding set, a capability is gone after the exec, even for root. Without
   * CAP_SETPCAP (not root) the process holds none of them anyway. */
  for (int cap = 0; cap < 64; cap++) {
    if (is_kept_cap(cap)) continue;
    long r = sys(__NR_prctl, PR_CAPBSET_DROP, cap, 0);
    if (r == -22 /* EINVAL: past the last capability */) break;
    if (r != 0 && r != -1 /* EPERM: not ours to drop, and not held */) die("cannot drop a capability", 0, r);
  }
  sys6(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0);
  /* The inheritable set keeps only kept capabilities too (it passes through an exec). */
  struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (sys(__NR_capget, &head, data, 0) != 0) return;
  __u32 keep[2] = {0, 0};
  for (size_t k = 0; k < sizeof kept_caps / sizeof kept_caps[0]; k++) keep[kept_caps[k] / 32] |= 1U << (kept_caps[k] % 32);
  if ((data[0].inheritable & ~keep[0]) == 0 && (data[1].inheritable & ~keep[1]) == 0) return;
  data[0].inheritable &= keep[0], data[1].inheritable &= keep[1];
  long r = sys(__NR_capset, &head, data, 0);
  if (r != 0) die("cannot clear the inheritable capabilities", 0, r);
}

/* ---- descriptors ----------------------------------------------------------------------------- */

static int keep_fds[16];
static int n_keep_fds;

static void close_from(unsigned lo, unsigned hi) {
  if (lo > hi) return;
  if (sys(__NR_close_range, lo, hi, 0) == 0) return;
  /* Before Linux 5.9: close what /proc/self/fd lists in that range. */
  int dir = (int)sys(__NR_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) die("cannot list the inherited descriptors", 0, dir);
  static int found[4096];
  int n_found = 0;
  char dents[8192] __attribute__((aligned(8)));
  for (;;) {
    long n = sys(__NR_getdents64, dir, dents, sizeof dents);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      unsigned short reclen = *(unsigned short *)(dents + at + 16);
      const char *name = dents + at + 19;
      at += reclen;
      unsigned long long fd;
      if (!parse_u64(&name, &fd) || *name) continue;
      if (fd >= lo && fd <= hi && (int)fd != dir && n_found < 4096) found[n_found++] = (int)fd;
    }
  }
  sys(__NR_close, dir, 0, 0);
  for (int k = 0; k < n_found; k++) sys(__NR_close, found[k], 0, 0);
}

/* Close every descriptor but 0, 1, 2 and the kept ones: a job inherits nothing else (no pipe of
 * the host's, no other terminal's master). */
static void close_inherited(void) {
  for (int i = 1; i < n_keep_fds; i++) /* sort the few kept ones */
    for (int j = i; j > 0 && keep_fds[j - 1] > keep_fds[j]; j--) {
      int t = keep_fds[j];
      keep_fds[j] = keep_fds[j - 1], keep_fds[j - 1] = t;
    }
  unsigned lo = 3;
  for (int k = 0; k < n_keep_fds; k++) {
    if (keep_fds[k] < (int)lo) continue;
    close_from(lo, (unsigned)keep_fds[k] - 1);
    lo = (unsigned)keep_fds[k] + 1;
  }
  close_from(lo, ~0U);
}

/* ---- the rest -------------------------------------------------------------------------------- */

/* Raise this process's OOM score adjustment to `want` (children inherit it); never lower it. */
static void raise_oom_score(long want) {
  char now[32];
  long n = read_file("/proc/self/oom_score_adj", now, sizeof now - 1);
  if (n <= 0) return;
  now[n] = 0;
  const char *p = now;
  int is_negative = *p == '-';
  if (is_negative) p++;
  unsigned long long v;
  if (!parse_u64(&p, &v)) return;
  if ((is_negative ? -(long)v : (long)v) >= want) return;
  int fd = (int)sys(__NR_openat, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return; /* a read-only /proc: the job keeps the host's score */
  put_num(want);
  size_t len_out;
  const char *text = put_buffer(&len_out);
  sys(__NR_write, fd, text, len_out);
  put_reset();
  sys(__NR_close, fd, 0, 0);
}

/* The terminal on stdin, when it is one of /dev/pts; else null. */
static const char *own_terminal(void) {
  static char tty[64];
  long n = sys6(__NR_readlinkat, AT_FDCWD, (long)"/proc/self/fd/0", (long)tty, sizeof tty - 1, 0, 0);
  if (n <= 9) return 0;
  tty[n] = 0;
  if (!starts(tty, "/dev/pts/", 9)) return 0;
  for (long i = 9; i < n; i++)
    if (tty[i] < '0' || tty[i] > '9') return 0;
  return tty;
}

/* Start the job in the cgroup whose cgroup.procs is `procs` by writing its pid there. */
static void join_cgroup(const char *procs) {
  int fd = (int)sys(__NR_openat, AT_FDCWD, procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open the job's cgroup", procs, fd);
  put_num(sys(__NR_getpid, 0, 0, 0)), put("\n");
  size_t n;
  const char *text = put_buffer(&n);
  long w = sys(__NR_write, fd, text, n);
  if (w != (long)n) die("cannot join the job's cgroup", procs, w < 0 ? w : -5);
  put_reset();
  sys(__NR_close, fd, 0, 0);
}

/* The directory of `procs` (its cgroup), opened for clone3; -1 when it cannot be. */
static int cgroup_dir_of(const char *procs) {
  static char dir[4096];
  size_t n = len(procs), slash = 0;
  if (n >= sizeof dir) die("the job's cgroup path is too long", procs, -36);
  for (size_t k = 0; k < n; k++) dir[k] = procs[k], slash = procs[k] == '/' ? k : slash;
  dir[slash] = 0;
  return (int)sys(__NR_openat, AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * Hold the job to `beyond` processes and threads more than the machine runs now: RLIMIT_NPROC (soft
 * and hard, only ever lowered) at the total in /proc/loadavg plus `beyond`. The kernel counts the
 * user's tasks against it at each fork, and the user's tasks are at most the machine's, so the job
 * can always start `beyond` of its own; a fork bomb stops there, where stopping it converges. Where
 * no cgroup holds the job's tree this is the bound (the kernel does not hold root of the initial
 * user namespace to it).
 */
static void bound_processes(long beyond) {
  char text[128];
  long n = read_file("/proc/loadavg", text, sizeof text - 1);
  if (n <= 0) die("cannot read /proc/loadavg to bound the job's processes", 0, n < 0 ? n : -5);
  text[n] = 0;
  const char *p = text;
  for (int field = 0; field < 3 && *p; field++) { /* three load averages, then "running/total" */
    while (*p && *p != ' ') p++;
    while (*p == ' ') p++;
  }
  while (*p && *p != '/') p++;
  unsigned long long total;
  if (*p != '/' || (p++, !parse_u64(&p, &total))) die("cannot read the number of tasks from /proc/loadavg", 0, -22);
  struct {
    u64 cur, max;
  } now, want;
  long r = sys6(__NR_prlimit64, 0, 6 /* RLIMIT_NPROC */, 0, (long)&now, 0, 0);
  if (r != 0) die("cannot read the job's process limit", 0, r);
  u64 bound = (u64)total + (u64)beyond;
  want.cur = now.cur < bound ? now.cur : bound;
  want.max = now.max < bound ? now.max : bound;
  r = sys6(__NR_prlimit64, 0, 6, (long)&want, 0, 0, 0);
  if (r != 0) die("cannot bound the job's processes", 0, r);
}

__attribute__((noreturn)) static void usage(const char *why) {
  put("hands-confine: "), put(why);
  put("\nusage: hands-confine [--probe] [--peer] [--tcp-peer SERVER CLIENT] [--oom-score-adj N] [--cgroup FILE] [--status-fd N] [--keep-fd N]... [--seccomp] "
      "[--effects FILE] [--no-supervisor] [--guard-sockets [--socket-dir PATH]...] [--guard-metadata] [--guard-no-getfd] [--events FILE] [--nproc-beyond N] [--drop-caps] [--seccomp-basic [--netns-families]] [--scope-only] [--landlock [--abi-max N] [--write DIR]... [--rw PATH]... [--read PATH]... [--list DIR]... [--hide PATH]... [--no-network] "
      "[--scope] [--own-tty] [--ruleset-from STAMP]] [--expect-cwd DEV:INO] [--argv0 NAME] -- PROGRAM [ARGS...]\n"
      "       hands-confine --keep STAMP POLICY...\n"
      "       hands-confine --spawner FD\n"
      "       hands-confine --remove-tree FD  < NUL-ended names\n"
      "       hands-confine --copy-tree SRC DEST  < NUL-ended listing\n");
  flush(2);
  quit(125);
}

/* A filter that lets everything through, to learn whether this process may install one. */
static long try_filter(unsigned flags) {
  struct sock_filter allow = {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW};
  struct sock_fprog fprog = {1, &allow};
  return sys(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
}

/* The value of the `Seccomp:` line of /proc/self/status (0 none, 1 strict, 2 filter: a filter such
 * as a container engine's profile is on this process), or -1 when it cannot be read. */
static long seccomp_mode(void) {
  static char status[8192];
  long n = read_file("/proc/self/status", status, sizeof status - 1);
  if (n <= 0) return -1;
  status[n] = 0;
  for (long i = 0; i + 9 < n; i++) {
    if ((i == 0 || status[i - 1] == '\n') && starts(status + i, "Seccomp:\t", 9)) {
      const char *p = status + i + 9;
      unsigned long long v;
      return parse_u64(&p, &v) ? (long)v : -1;
    }
  }
  return -1;
}

/* One probe line's failure: "errno N TEXT". */
static void put_errno(long err) {
  put("errno "), put_num(err);
  const char *t = error_text(err);
  if (t) put(" "), put(t);
}

/*
 * What the kernel offers, and the facts that tell why something is missing, one line each:
 *   landlock N                     the ABI, and this process could restrict itself
 *   landlock 0 errno E TEXT        the version query failed (ENOSYS: not in the kernel, or a seccomp
 *                                  profile; EOPNOTSUPP: not enabled at boot; EPERM: a profile)
 *   landlock 0 restrict errno E    the kernel has it, but restricting this process failed
 *   seccomp supervised|refusing|none [errno E TEXT]
 *   filtered M                     the Seccomp: mode of this process before the probe (2: a filter,
 *                                  such as a container's profile, is already on it)
 *   kernel RELEASE                 uname's release
 *   lsm LIST                       the active security modules, when securityfs is readable
 */
static void probe(void) {
  long filtered = seccomp_mode();
  long err = 0;
  int abi = landlock_abi(&err);
  if (abi <= 0) {
    put("landlock 0 "), put_errno(err ? -err : 38), put("\n");
  } else {
    /* Check that this process may actually restrict itself (a seccomp filter may refuse). */
    struct {
      u64 fs, net, scoped;
    } attr = {1ULL << 11 /* MAKE_BLOCK */, 0, 0};
    long fd = sys(__NR_landlock_create_ruleset, &attr, sizeof attr.fs, 0);
    long r = fd < 0 ? fd : sys6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    if (r >= 0) r = sys(__NR_landlock_restrict_self, fd, 0, 0);
    if (r < 0) put("landlock 0 restrict "), put_errno(-r), put("\n");
    else put("landlock "), put_num(abi), put("\n");
  }
  sys6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
  long r = try_filter(SECCOMP_FILTER_FLAG_NEW_LISTENER);
  if (r >= 0) put("seccomp supervised\n");
  else {
    long s = try_filter(0);
    if (s == 0) put("seccomp refusing "), put_errno(-r), put("\n");
    else put("seccomp none "), put_errno(-s), put("\n");
  }
  /* What the relay's guard takes from a job: its descriptors, its memory (a profile may refuse either). */
  long self_fd = sys(__NR_pidfd_open, sys(__NR_getpid, 0, 0, 0), 0, 0);
  long taken = self_fd < 0 ? self_fd : sys(__NR_pidfd_getfd, self_fd, self_fd, 0);
  if (taken >= 0) put("takefd ok\n"), sys(__NR_close, taken, 0, 0);
  else put("takefd "), put_errno(-taken), put("\n");
  if (self_fd >= 0) sys(__NR_close, self_fd, 0, 0);
  char byte = 0;
  struct {
    void *base;
    size_t len;
  } local = {&byte, 1}, remote = {&byte, 1};
  long read = sys6(__NR_process_vm_readv, sys(__NR_getpid, 0, 0, 0), (long)&local, 1, (long)&remote, 1, 0);
  if (read >= 0) put("readmem ok\n");
  else put("readmem "), put_errno(-read), put(" (read through /proc/PID/mem instead)\n");
  put("filtered "), put_num(filtered), put("\n");
  struct {
    char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65];
  } uts;
  memset(&uts, 0, sizeof uts);
  if (sys(__NR_uname, &uts, 0, 0) == 0) put("kernel "), put(uts.release), put("\n");
  static char lsm[512];
  long n = read_file("/sys/kernel/security/lsm", lsm, sizeof lsm - 1);
  if (n > 0) {
    lsm[n] = 0;
    while (n > 0 && (lsm[n - 1] == '\n' || lsm[n - 1] == 0)) lsm[--n] = 0;
    put("lsm "), put(lsm), put("\n");
  }
  flush(1);
  quit(0);
}

__attribute__((used, noreturn)) void start(long *sp) {
  int argc = (int)sp[0];
  char **argv = (char **)(sp + 1);
  char **envp = argv + argc + 1;
  const char *cgroup = 0, *argv0 = 0, *expect_cwd = 0, *ruleset_from = 0, *keep_file = 0, *effects_file = 0, *events_file = 0;
  const char *socket_dirs[64];
  int n_socket_dirs = 0;
  const char *joins[8];
  int n_joins = 0;
  int is_landlock = 0, is_seccomp = 0, is_unsupervised = 0, is_own_tty = 0, status_fd = -1, abi_max = 1 << 30;
  int is_drop_caps = 0, is_seccomp_basic = 0, is_scope_only = 0, is_netns_families = 0;
  long nproc_beyond = -1;
  long oom_adj = -1001;

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
    int is_number = eq(a, "--status-fd") || eq(a, "--keep-fd") || eq(a, "--oom-score-adj") || eq(a, "--nproc-beyond");
    int is_valued = is_policy || is_number || eq(a, "--cgroup") || eq(a, "--join") || eq(a, "--effects") || eq(a, "--argv0") || eq(a, "--expect-cwd") || eq(a, "--ruleset-from") || eq(a, "--keep") ||
                    eq(a, "--socket-dir") || eq(a, "--events");
    if (eq(a, "--probe")) probe();
    else if (eq(a, "--peer")) print_peer(0);
    else if (eq(a, "--tcp-peer")) {
      unsigned long long server, client;
      const char *p = i + 2 < argc ? argv[i + 1] : "", *q = i + 2 < argc ? argv[i + 2] : "";
      if (!parse_u64(&p, &server) || *p || !parse_u64(&q, &client) || *q || server > 65535 || client > 65535) usage("--tcp-peer takes SERVER_PORT CLIENT_PORT");
      print_tcp_peer((unsigned)server, (unsigned)client);
    }
    else if (eq(a, "--spawner")) {
      const char *p = has_value ? argv[i + 1] : "";
      unsigned long long fd;
      if (!parse_u64(&p, &fd) || *p || fd > 1024) usage("--spawner takes the descriptor of Node's IPC channel");
      spawner((int)fd);
    }
    else if (eq(a, "--remove-tree")) {
      const char *p = has_value ? argv[i + 1] : "";
      unsigned long long fd;
      if (!parse_u64(&p, &fd) || *p || fd > 1 << 20) usage("--remove-tree takes the descriptor of the directory whose entries (named on stdin) it removes");
      remove_tree((int)fd);
    }
    else if (eq(a, "--copy-tree")) {
      const char *p = i + 2 < argc ? argv[i + 1] : "", *q = i + 2 < argc ? argv[i + 2] : "";
      unsigned long long src, dest;
      if (!parse_u64(&p, &src) || *p || !parse_u64(&q, &dest) || *q || src > 1 << 20 || dest > 1 << 20) usage("--copy-tree takes the descriptors of the source and destination directories");
      copy_tree((int)src, (int)dest);
    }
    else if (eq(a, "--landlock")) is_landlock = 1;
    else if (eq(a, "--seccomp")) is_seccomp = 1;
    else if (eq(a, "--no-supervisor")) is_unsupervised = 1;
    else if (eq(a, "--drop-caps")) is_drop_caps = 1;
    else if (eq(a, "--seccomp-basic")) is_seccomp_basic = 1;
    else if (eq(a, "--netns-families")) is_netns_families = 1;
    else if (eq(a, "--scope-only")) is_scope_only = 1;
    else if (eq(a, "--own-tty")) is_own_tty = 1;
    else if (eq(a, "--guard-sockets")) guard.is_sockets = 1;
    else if (eq(a, "--guard-metadata")) guard.is_metadata = 1;
    else if (eq(a, "--guard-no-getfd")) guard.is_no_getfd = 1;
    else if (eq(a, "--no-network")) policy.is_no_network = 1, hash_arg(a);
    else if (eq(a, "--scope")) policy.is_scope = 1, hash_arg(a);
    else if (!is_valued) usage("unknown option");
    else if (!has_value) usage("an option lacks its value");
    else {
      const char *v = argv[++i];
      if (is_policy) hash_arg(a), hash_arg(v);
      if (list >= 0) {
        if (policy.counts[list] == 511) usage("too many paths");
        policy.paths[list][policy.counts[list]++] = v;
      } else if (eq(a, "--hide")) {
        if (policy.n_hides == 512) usage("too many hidden paths");
        policy.hides[policy.n_hides++] = v;
      } else if (eq(a, "--cgroup")) cgroup = v;
      else if (eq(a, "--effects")) effects_file = v;
      else if (eq(a, "--events")) events_file = v;
      else if (eq(a, "--socket-dir")) {
        if (n_socket_dirs == 64) usage("too many --socket-dir");
        socket_dirs[n_socket_dirs++] = v;
      }
      else if (eq(a, "--join")) {
        if (n_joins == 8) usage("too many --join");
        joins[n_joins++] = v;
      }
      else if (eq(a, "--argv0")) argv0 = v;
      else if (eq(a, "--expect-cwd")) expect_cwd = v;
      else if (eq(a, "--ruleset-from")) ruleset_from = v;
      else if (eq(a, "--keep")) keep_file = v;
      else {
        int is_signed = eq(a, "--oom-score-adj") && *v == '-';
        const char *p = is_signed ? v + 1 : v;
        unsigned long long num;
        if (!parse_u64(&p, &num) || *p || num > 1000000) usage("a numeric option takes a number");
        if (eq(a, "--abi-max")) abi_max = (int)num;
        else if (eq(a, "--status-fd")) status_fd = (int)num;
        else if (eq(a, "--oom-score-adj")) oom_adj = is_signed ? -(long)num : (long)num;
        else if (eq(a, "--nproc-beyond")) nproc_beyond = (long)num;
        else if (n_keep_fds == 16) usage("too many --keep-fd");
        else keep_fds[n_keep_fds++] = (int)num;
      }
    }
  }
  if (keep_file == 0 && i >= argc) usage("no PROGRAM after --");

  int abi = 0;
  if (is_landlock || keep_file || is_scope_only) {
    long err = 0;
    abi = landlock_abi(&err);
    if (abi > abi_max) abi = abi_max;
    if (abi <= 0 && (is_landlock || keep_file)) die("Landlock is not available", 0, err ? err : -38);
    if (keep_file) keep(keep_file, abi);
  }
  if (oom_adj >= -1000) raise_oom_score(oom_adj);

  /* The ruleset is ready before the job is born: the relay checks the stamp and takes the kept
   * ruleset (the job then cannot: its own pidfd_open of the keeper is supervised). */
  int ruleset = -1;
  if (is_landlock) {
    const char *tty = is_own_tty ? own_terminal() : 0;
    if (tty) {
      if (policy.counts[1] == 511) usage("too many paths");
      policy.paths[1][policy.counts[1]++] = tty;
      hash_arg("--rw"), hash_arg(tty);
      guard_tty(tty);
    }
    ruleset = ruleset_from ? kept_ruleset(ruleset_from) : -1;
    if (ruleset < 0) ruleset = build_ruleset(abi);
  } else if (is_scope_only) {
    ruleset = scope_ruleset(abi);
  }

  /* The guard (guard.c): the places it allows, the relay's own credentials, where refusals go. */
  int is_guarded = guard.is_sockets || guard.is_metadata;
  if (is_guarded) {
    if (is_unsupervised || (guard.is_metadata && !is_seccomp)) usage("--guard-sockets and --guard-metadata take a supervisor (--seccomp, or the record of changes)");
    for (int k = 0; guard.is_metadata && k < policy.counts[0]; k++)
      if (guard_add(GUARD_WRITABLE, policy.paths[0][k]) != 0) usage("too many writable paths to guard");
    for (int k = 0; k < n_socket_dirs; k++)
      if (guard_add(GUARD_SOCKETS, socket_dirs[k]) != 0) usage("too many socket paths to guard");
    guard_start();
    if (events_file) {
      guard.events_fd = (int)sys6(__NR_openat, AT_FDCWD, (long)events_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600, 0, 0);
      if (guard.events_fd < 0) die("cannot open the record of refusals", events_file, guard.events_fd);
    }
  }

  struct relay r = {-1, status_fd, (is_seccomp && !is_unsupervised) || effects_file != 0 || is_guarded, effects_file, -1, cgroup != 0};
  if (cgroup || is_seccomp || status_fd >= 0 || effects_file || is_guarded) {
    if (cgroup) r.cgroup_dir = cgroup_dir_of(cgroup);
    if (!start_relayed(&r)) r.needs_join = cgroup != 0;
  }
  /* A guard that cannot run never lets the job run without it. */
  if (is_guarded && r.channel < 0) die("cannot start the relay that guards sockets and metadata", 0, -11);
  if (nproc_beyond >= 0) bound_processes(nproc_beyond);
  if (cgroup && r.needs_join) join_cgroup(cgroup);
  for (int k = 0; k < n_joins; k++) join_cgroup(joins[k]);
  if (status_fd >= 0) sys(__NR_close, status_fd, 0, 0);

  if (is_landlock || is_drop_caps) drop_caps();
  if (is_landlock || is_seccomp || is_seccomp_basic || ruleset >= 0) {
    long nnp = sys6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    if (nnp != 0) die("cannot set no_new_privs", 0, nnp);
  }
  if (is_seccomp) {
    /* Below Landlock ABI 6 the supervisor answers for signals too (refusing them all would break
     * every `kill` of the job's own processes). */
    unsigned flags = FILTER_PROCESSES | (policy.is_no_network ? FILTER_NO_NETWORK : 0);
    unsigned supervised = flags | (is_landlock && abi < 6 ? FILTER_SIGNALS : 0) | (effects_file != 0 ? FILTER_EFFECTS : 0) |
                          (guard.is_sockets ? FILTER_SOCKETS : 0) | (guard.is_metadata ? FILTER_METADATA : 0);
    long listener = r.channel >= 0 ? install_filter(1, supervised) : -1;
    if (listener >= 0) {
      send_listener(r.channel, (int)listener);
      sys(__NR_close, listener, 0, 0);
    } else if (is_guarded) {
      die("cannot install the seccomp filter that guards sockets and metadata", 0, listener);
    } else {
      /* No supervisor (the kernel has none, another one holds this process, or no relay could
       * start): the calls it would have answered are refused instead. */
      long s = install_filter(0, flags);
      if (s != 0) die("cannot install the seccomp filter", 0, s);
    }
  }
  if ((effects_file || guard.is_sockets) && !is_seccomp && r.channel >= 0) {
    /* The record of what the job changes and the guard of its sockets (bubblewrap's outer stage, or
     * unconfined as root, where no_new_privs is not needed): a filter that asks about nothing else. */
    unsigned flags = (effects_file ? FILTER_EFFECTS : 0) | (guard.is_sockets ? FILTER_SOCKETS : 0);
    long listener = install_filter(1, flags);
    if (listener == -13 /* EACCES: neither no_new_privs nor CAP_SYS_ADMIN */) {
      sys6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
      listener = install_filter(1, flags);
    }
    if (listener >= 0) {
      send_listener(r.channel, (int)listener);
      sys(__NR_close, listener, 0, 0);
    } else if (guard.is_sockets) {
      die("cannot install the seccomp filter that guards sockets", 0, listener);
    }
  }
  if (is_seccomp_basic) {
    long s = install_filter(0, policy.is_no_network ? FILTER_NO_NETWORK : is_netns_families ? FILTER_NETNS_FAMILIES : 0);
    if (s != 0) die("cannot install the seccomp filter", 0, s);
  }
  if (r.channel >= 0) sys(__NR_close, r.channel, 0, 0);
  if (ruleset >= 0) {
    long lr = sys(__NR_landlock_restrict_self, ruleset, 0, 0);
    if (lr != 0) die("cannot apply the Landlock ruleset", 0, lr);
    sys(__NR_close, ruleset, 0, 0);
  }

  if (expect_cwd) {
    const char *p = expect_cwd;
    unsigned long long dev, ino;
    if (!parse_u64(&p, &dev) || *p++ != ':' || !parse_u64(&p, &ino) || *p) usage("--expect-cwd takes DEV:INO");
    struct statx st;
    long sr = sys6(__NR_statx, AT_FDCWD, (long)".", 0, STATX_INO, (long)&st, 0);
    if (sr != 0) die("cannot stat the working directory", 0, sr);
    /* The device number as glibc's makedev() (and so Node's fs.Stats.dev) encodes it. */
    unsigned long long ma = st.stx_dev_major, mi = st.stx_dev_minor;
    unsigned long long d = ((ma & 0xfffff000ULL) << 32) | ((ma & 0xfffULL) << 8) | ((mi & 0xffffff00ULL) << 12) | (mi & 0xffULL);
    if (d != dev || st.stx_ino != ino) {
      put("hands-confine: the working directory was replaced while the command started; nothing ran\n"), flush(2);
      quit(125);
    }
  }

  close_inherited();
  const char *file = argv[i];
  if (argv0) argv[i] = (char *)argv0;
  long er = sys(__NR_execve, file, &argv[i], envp);
  die("cannot run", file, er);
}
