/*
 * hands-confine: shared declarations of the helper's parts (see main.c for what it does).
 * Freestanding: no libc. System calls go through sys6(); messages through put()/flush().
 */
#ifndef HANDS_CONFINE_H
#define HANDS_CONFINE_H

#include <asm/unistd.h>
#include <linux/seccomp.h>
#include <linux/types.h>

typedef unsigned long size_t;
typedef __u64 u64;

/* ---- system calls -------------------------------------------------------------------------- */

#if defined(__x86_64__)
static inline long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
static inline long sys6(long n, long a, long b, long c, long d, long e, long f) {
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
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_seccomp
#if defined(__x86_64__)
#define __NR_seccomp 317
#else
#define __NR_seccomp 277
#endif
#endif

/* ---- base.c: strings, numbers, messages ---------------------------------------------------- */

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);

size_t len(const char *s);
int eq(const char *a, const char *b);
int starts(const char *s, const char *prefix, size_t n);
/* Parse decimal digits at *s into *v, advancing *s; 0 when *s does not start with a digit. */
int parse_u64(const char **s, unsigned long long *v);

/* Messages are built in one buffer and written with one write(2). */
void put(const char *s);
void put_num(long v);
void put_error(long err);
void flush(int fd);
/* The buffer as built so far (for writes that are not messages). */
const char *put_buffer(size_t *n);
void put_reset(void);
const char *error_text(long err);
__attribute__((noreturn)) void quit(int code);
/* Print "hands-confine: WHAT [PATH]: ERROR" and exit 125. `ret` is the failed call's -errno. */
__attribute__((noreturn)) void die(const char *what, const char *path, long ret);

/* Read at most `size` bytes of the file at `path`; the count, or -errno. */
long read_file(const char *path, char *buf, size_t size);
/* Read `n` bytes at `addr` in process `pid` (process_vm_readv, else /proc/PID/mem where a seccomp
 * profile refuses that call); the count read, or -errno. */
long read_remote(long pid, u64 addr, void *buf, size_t n);
/* "/proc/<pid>/<leaf>" into buf (at least 64 bytes). */
void proc_path(char *buf, long pid, const char *leaf);

/* ---- landlock.c: the ruleset ---------------------------------------------------------------- */

/* The policy as parsed from the arguments (pointers into argv). */
struct policy {
  const char *paths[4][512]; /* write, rw, read, list */
  int counts[4];
  const char *hides[512];
  int n_hides;
  int is_no_network, is_scope;
};
extern struct policy policy;
/* Add one argument to the policy's hash (a kept ruleset is used only for the same policy). */
void hash_arg(const char *a);
/* The Landlock ABI the kernel offers (0 and *err when none). */
int landlock_abi(long *err);
/* Build the ruleset for the policy; returns its descriptor (dies on failure). */
int build_ruleset(int abi);
/* The kept ruleset the stamp in `file` names, when the stamp still holds; else -1. */
int kept_ruleset(const char *file);
/* A ruleset that only scopes signals and abstract UNIX sockets to the job (ABI >= 6; else -1). */
int scope_ruleset(int abi);
/* Run as a session's ruleset keeper (see landlock.c); never returns. */
__attribute__((noreturn)) void keep(const char *file, int abi);

/* ---- seccomp.c: the filter ------------------------------------------------------------------ */

/* Install the job's seccomp filter on this process (and so on everything it starts). With
 * `is_supervised`, calls that name another process notify the supervisor: returns the listener's
 * descriptor, or -errno when the kernel cannot give one (then nothing is installed). Without it,
 * those calls are refused. `flags`: FILTER_* below. */
long install_filter(int is_supervised, unsigned flags);
/* What a filter covers beside io_uring, the keyrings and clone3 (always refused). */
#define FILTER_PROCESSES 1  /* calls that name another process: supervised, or refused */
#define FILTER_SIGNALS 2    /* the signal calls too (Landlock below ABI 6 does not scope them) */
#define FILTER_NO_NETWORK 4 /* sockets other than UNIX and netlink refused */
#define FILTER_EFFECTS 8    /* calls that change the filesystem notify the supervisor (recorded, then go on) */
#define FILTER_NETNS_FAMILIES 16 /* sockets only of the families a network namespace confines: UNIX, netlink, IPv4, IPv6 */
#define FILTER_SOCKETS 32   /* connect notifies the supervisor (guard.c); datagram UNIX sockets are refused */
#define FILTER_METADATA 64  /* chmod, chown, utimes and extended attributes notify the supervisor (guard.c) */

/* A call that changes the filesystem: its number, and where its arguments are (see seccomp.c). */
struct effect_call {
  int nr;
  signed char path, dirfd, path2, dirfd2, flags, kind;
  /* Whether the call follows a final symlink of its path (the change lands at the link's target):
   * FOLLOW_NEVER, FOLLOW_ALWAYS, FOLLOW_OPEN (unless O_NOFOLLOW, or O_CREAT with O_EXCL), or
   * FOLLOW_AT(k) (unless argument k holds AT_SYMLINK_NOFOLLOW). */
  signed char follow;
};
#define FOLLOW_NEVER 0
#define FOLLOW_ALWAYS 1
#define FOLLOW_OPEN 2
#define FOLLOW_AT(k) (3 + (k))
/* What the relay tells apart among those calls (effects.c): a mkdir may mark the directory it makes
 * as the job's own; a rename, rmdir or symlink (and an unlinkat that removes a directory) can make
 * a name reach entries the job never named, so it ends every such mark. */
enum { EFFECT_OTHER, EFFECT_MKDIR, EFFECT_MOVES, EFFECT_UNLINKAT, EFFECT_BIND /* bind(2): a UNIX socket file, its path in the address */,
       EFFECT_LINK /* link(2): a new name (path) of an existing file (path2) */ };
const struct effect_call *effect_call(__u32 arch, int nr);

/* A call that changes a file's mode, owner, times or extended attributes (guard.c performs it): its
 * operation and where its arguments are (-1: none). No path argument: the descriptor in `dirfd`. */
struct meta_call {
  int nr;
  signed char op, follow, path, dirfd, mode, owner, times, times_kind, name, xattr_args, flags, is16;
};
enum { META_CHMOD, META_CHOWN, META_TIMES, META_SETXATTR, META_REMOVEXATTR };
/* How a times argument is laid out. */
enum { META_TIMESPEC, META_TIMESPEC32, META_TIMEVAL, META_TIMEVAL32, META_UTIMBUF, META_UTIMBUF32 };
const struct meta_call *meta_call(__u32 arch, int nr);

/* What a supervised call does, from its table and number: which argument names the target. */
enum {
  KIND_NONE,
  KIND_PRLIMIT,      /* prlimit64(pid, ...) */
  KIND_PRIORITY,     /* setpriority(which, who, ...) */
  KIND_SCHED,        /* sched_set*(pid, ...) */
  KIND_IOPRIO,       /* ioprio_set(which, who, ...) */
  KIND_PIDFD_OPEN,   /* pidfd_open(pid, ...) */
  KIND_KILL,         /* kill(pid, sig): pid < -1 names a process group, -1 everything */
  KIND_TARGET_ARG0,  /* tkill(tid, ...), rt_sigqueueinfo(tgid, ...) */
  KIND_TARGET_ARG1,  /* tgkill(tgid, tid, ...), rt_tgsigqueueinfo(tgid, tid, ...) */
  KIND_SETOWN,       /* fcntl(fd, F_SETOWN, pid): pid < 0 names a process group */
  KIND_EFFECT,       /* a call that changes the filesystem (effects.c records it) */
  KIND_CONNECT,      /* connect(fd, addr, len) (guard.c) */
  KIND_SOCKETCALL,   /* 32-bit socketcall(call, args) (guard.c) */
  KIND_CREDS,        /* set*id, setgroups, capset: the caller's credentials change (guard.c reads them again) */
};
int supervised_kind(__u32 arch, int nr);

/* ---- relay.c: the job's parent ------------------------------------------------------------ */

struct relay {
  /* In: the cgroup directory the job is born in (O_RDONLY|O_DIRECTORY), or -1. */
  int cgroup_dir;
  /* In: where the job's end is reported ("exit N" / "signal N") as it happens, or -1: then the
   * relay ends when the job does; with it, the relay stays until every process it adopted is gone. */
  int status_fd;
  /* In: the job will install a supervised seccomp filter and send the relay its listener. */
  int is_supervised;
  /* In: where the relay records what the job changes on disk (effects.c), or null. */
  const char *effects_file;
  /* Out, in the job: where to send the listener (send_listener), or -1. */
  int channel;
  /* Out, in the job: the job must join its cgroup itself (write cgroup.procs). */
  int needs_join;
};
/* Start the job as a child of this process. Returns 1 in the job (it goes on to exec); 0 when no
 * relay could be started (this process is then the job, alone). In the relay it never returns: it
 * relays signals, supervises, reaps, and ends as the job ended. */
int start_relayed(struct relay *r);
/* Send the seccomp listener to the relay. */
void send_listener(int channel, int listener);

/* ---- effects.c: what a job changes on disk ------------------------------------------------- */
/* Open the record (before the job runs); 0, or -errno. */
int effects_open(const char *file);
/* Record the paths a call that changes the filesystem names (from the caller's memory), first seen only. */
void effects_record(long pid, __u32 arch, int nr, const u64 *args);
/* Write what is buffered; true when something waits to be written. */
void effects_flush(void);
int effects_dirty(void);
/* Once the record is written to from another thread: the descriptor (an eventfd) it writes to when
 * the buffer stops being empty, so the thread that flushes knows to start its timer. */
void effects_wake(int fd);
/* Write the rest and close (`is_observed` false: the job ran without the supervisor). */
void effects_close(int is_observed);

/* True when `pid` is a process of the job's tree (its parents reach the relay). */
int relay_in_tree(long pid);

/* ---- guard.c: sockets and metadata, performed by the relay --------------------------------- */
struct guard_id {
  unsigned major, minor;
  u64 ino;
  unsigned type;
};
struct guard_set {
  struct guard_id ids[520];
  int n;
};
struct guard {
  int is_sockets, is_metadata, is_root, has_tty;
  /* pidfd_getfd is refused here (a container's profile): connects are checked and let go on, and
   * a descriptor's file is opened again through /proc/TID/fd/N. */
  int is_no_getfd;
  /* Where socket files may be connected to; where metadata may be changed. */
  struct guard_set sockets, writable;
  /* The job's own terminal (a background shell's), whose mode it may change too. */
  struct guard_id tty;
  /* Where refusals are written once each, or -1. */
  int events_fd;
};
extern struct guard guard;
enum { GUARD_SOCKETS, GUARD_WRITABLE };
/* Add the place at `path` to a set (nothing when it does not exist); 0 or -errno. */
int guard_add(int set, const char *path);
/* The job's own terminal, whose mode it may change. */
void guard_tty(const char *path);
/* Note the relay's own credentials (before the job starts). */
void guard_start(void);
/* Thread `tid` is changing its credentials: read them again at its next guarded call. */
void guard_stale(long tid);
/* Answer a notification the guard owns (1), or leave it to the caller (0). */
int guard_answer(int listener, const struct seccomp_notif *req);

/* ---- peer.c: who is on the other end of a UNIX socket --------------------------------------- */
__attribute__((noreturn)) void print_peer(int fd);
__attribute__((noreturn)) void print_tcp_peer(unsigned server, unsigned client);

/* ---- kernel structures the helper's files share (no libc headers) ---------------------------- */
struct poll_fd {
  int fd;
  short events, revents;
};
/* recvmsg/sendmsg: one buffer, and at most one descriptor passed with SCM_RIGHTS. */
struct io_vec {
  void *base;
  size_t len;
};
struct message {
  void *name;
  int name_len;
  struct io_vec *iov;
  size_t iov_len;
  void *control;
  size_t control_len;
  unsigned flags;
};
struct fd_control {
  size_t len;
  int level, type;
  int fd;
  int pad;
};

/* ---- spawner.c: a session's starter of piped jobs ------------------------------------------- */
/* Serve job requests from Node (stdin), replying on Node's IPC channel `fd`; never returns. */
__attribute__((noreturn)) void spawner(int fd);

/* ---- tree.c: fs-runtime's tree work ------------------------------------------------------------ */
/* Remove the entries named on stdin (NUL-ended) of the directory at `dirfd`; never returns. */
__attribute__((noreturn)) void remove_tree(int dirfd);
/* Copy the entries listed on stdin from the directory at `src` into the one at `dest`; never returns. */
__attribute__((noreturn)) void copy_tree(int src, int dest);

#endif
