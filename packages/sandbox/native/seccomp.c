/*
 * hands-confine: the job's seccomp filter. Landlock keeps a job's files, signals (ABI >= 6),
 * tracing and abstract sockets inside its domain, but not the calls that change another process
 * by its pid: its resource limits (prlimit64), priority (setpriority, ioprio_set), scheduling and
 * CPUs (sched_set*), nor pidfds (pidfd_open, the way to process_madvise and process_mrelease).
 * With a supervisor, such a call that names a process other than the caller (pid 0) notifies
 * the relay, which lets it go on only when the target is in the job's own tree; without one it is
 * refused. Below Landlock ABI 6 the signal calls are supervised the same way.
 *
 * Always refused: io_uring_setup (ENOSYS, so programs fall back to plain system calls: io_uring's
 * operations pass no seccomp filter), the kernel keyrings (keyctl, add_key, request_key: secrets
 * of the user's session), clone3 (ENOSYS: its arguments are in memory, where CLONE_INTO_CGROUP
 * would start a child outside the job's cgroup). With --no-network, every socket but UNIX and
 * netlink: Landlock governs TCP bind and connect only, which leaves UDP, raw, MPTCP, TCP Fast Open
 * (sendto with MSG_FASTOPEN) and a listen() that binds by itself.
 */
#include "hands-confine.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>

/* The numbers of the supervised and refused calls, per system call table. */
struct table {
  __u32 arch;
  int prlimit64, setpriority, sched_setparam, sched_setscheduler, sched_setaffinity, sched_setattr, ioprio_set;
  int pidfd_open, pidfd_send_signal, io_uring_setup, keyctl, add_key, request_key, socket, socketcall, clone3;
  int kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, fcntl, fcntl64, ioctl;
  int connect, socketpair;
};

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#else
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

static const struct table native = {
  NATIVE_ARCH, __NR_prlimit64, __NR_setpriority, __NR_sched_setparam, __NR_sched_setscheduler, __NR_sched_setaffinity,
  __NR_sched_setattr, __NR_ioprio_set, 434, 424, 425, __NR_keyctl, __NR_add_key, __NR_request_key, __NR_socket, -1, 435,
  __NR_kill, __NR_tkill, __NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo, __NR_fcntl, -1, __NR_ioctl,
  __NR_connect, __NR_socketpair,
};
#if defined(__x86_64__)
/* 32-bit programs (int 0x80) on x86-64. */
static const struct table i386 = {
  AUDIT_ARCH_I386, 340, 97, 154, 156, 241, 351, 289, 434, 424, 425, 288, 286, 287, 359, 102, 435, 37, 238, 270, 178, 335, 55, 221, 54, 362, 360,
};
#endif

/* ---- calls that change the filesystem (recorded by the relay when effects are observed) --------- */

#ifndef __NR_open
#define __NR_open -1
#define __NR_creat -1
#define __NR_unlink -1
#define __NR_rename -1
#define __NR_mkdir -1
#define __NR_rmdir -1
#define __NR_symlink -1
#define __NR_link -1
#define __NR_mknod -1
#endif
#ifndef __NR_renameat
#define __NR_renameat -1
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_chmod
#define __NR_chmod -1
#define __NR_chown -1
#define __NR_lchown -1
#define __NR_utime -1
#define __NR_utimes -1
#define __NR_futimesat -1
#endif
/* Numbered alike in every table since 5.x (asm-generic). */
#define NR_FCHMODAT2 452
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466

/* Argument positions of a call that changes the filesystem (-1: none; a dirfd of -1 means the
 * working directory): the path it changes, a second one (a rename's destination), and where
 * open's flags are (such a call changes nothing unless they ask to write or create). A call with
 * no path argument (fchmod) changes the entry its descriptor, in the dirfd position, names. */
#define CALL(nr, path, dirfd, path2, dirfd2, flags, follow) {nr, path, dirfd, path2, dirfd2, flags, EFFECT_OTHER, follow}
/* The same, for a call the relay tells apart (`kind`: EFFECT_* in hands-confine.h). */
#define KCALL(nr, path, dirfd, path2, dirfd2, kind, follow) {nr, path, dirfd, path2, dirfd2, -1, kind, follow}
static const struct effect_call native_calls[] = {
  CALL(__NR_open, 0, -1, -1, -1, 1, FOLLOW_OPEN),
  CALL(__NR_openat, 1, 0, -1, -1, 2, FOLLOW_OPEN),
  CALL(__NR_openat2, 1, 0, -1, -1, -2 /* in struct open_how */, FOLLOW_OPEN),
  CALL(__NR_creat, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_unlink, 0, -1, -1, -1, -1, FOLLOW_NEVER),
  KCALL(__NR_unlinkat, 1, 0, -1, -1, EFFECT_UNLINKAT, FOLLOW_NEVER),
  KCALL(__NR_rename, 0, -1, 1, -1, EFFECT_MOVES, FOLLOW_NEVER),
  KCALL(__NR_renameat, 1, 0, 3, 2, EFFECT_MOVES, FOLLOW_NEVER),
  KCALL(__NR_renameat2, 1, 0, 3, 2, EFFECT_MOVES, FOLLOW_NEVER),
  KCALL(__NR_mkdir, 0, -1, -1, -1, EFFECT_MKDIR, FOLLOW_NEVER),
  KCALL(__NR_mkdirat, 1, 0, -1, -1, EFFECT_MKDIR, FOLLOW_NEVER),
  KCALL(__NR_rmdir, 0, -1, -1, -1, EFFECT_MOVES, FOLLOW_NEVER),
  KCALL(__NR_symlink, 1, -1, -1, -1, EFFECT_MOVES, FOLLOW_NEVER),
  KCALL(__NR_symlinkat, 2, 1, -1, -1, EFFECT_MOVES, FOLLOW_NEVER),
  KCALL(__NR_link, 1, -1, 0, -1, EFFECT_LINK, FOLLOW_NEVER),
  KCALL(__NR_linkat, 3, 2, 1, 0, EFFECT_LINK, FOLLOW_NEVER),
  CALL(__NR_truncate, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_mknod, 0, -1, -1, -1, -1, FOLLOW_NEVER),
  CALL(__NR_mknodat, 1, 0, -1, -1, -1, FOLLOW_NEVER),
  CALL(__NR_chmod, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_fchmod, -1, 0, -1, -1, -1, FOLLOW_NEVER),
  CALL(__NR_fchmodat, 1, 0, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(NR_FCHMODAT2, 1, 0, -1, -1, -1, FOLLOW_AT(3)),
  CALL(__NR_chown, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_lchown, 0, -1, -1, -1, -1, FOLLOW_NEVER),
  CALL(__NR_fchown, -1, 0, -1, -1, -1, FOLLOW_NEVER),
  CALL(__NR_fchownat, 1, 0, -1, -1, -1, FOLLOW_AT(4)),
  CALL(__NR_utime, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_utimes, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_futimesat, 1, 0, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_utimensat, 1, 0, -1, -1, -1, FOLLOW_AT(3)),
  CALL(__NR_setxattr, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_lsetxattr, 0, -1, -1, -1, -1, FOLLOW_NEVER),
  CALL(__NR_fsetxattr, -1, 0, -1, -1, -1, FOLLOW_NEVER),
  CALL(NR_SETXATTRAT, 1, 0, -1, -1, -1, FOLLOW_AT(2)),
  CALL(__NR_removexattr, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(__NR_lremovexattr, 0, -1, -1, -1, -1, FOLLOW_NEVER),
  CALL(__NR_fremovexattr, -1, 0, -1, -1, -1, FOLLOW_NEVER),
  CALL(NR_REMOVEXATTRAT, 1, 0, -1, -1, -1, FOLLOW_AT(2)),
  KCALL(__NR_bind, -1, -1, -1, -1, EFFECT_BIND, FOLLOW_NEVER),
};
#if defined(__x86_64__)
static const struct effect_call i386_calls[] = {
  /* open openat openat2 creat unlink */
  CALL(5, 0, -1, -1, -1, 1, FOLLOW_OPEN),     CALL(295, 1, 0, -1, -1, 2, FOLLOW_OPEN),   CALL(437, 1, 0, -1, -1, -2, FOLLOW_OPEN), CALL(8, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(10, 0, -1, -1, -1, -1, FOLLOW_NEVER),
  /* unlinkat rename renameat renameat2 mkdir mkdirat rmdir symlink symlinkat */
  KCALL(301, 1, 0, -1, -1, EFFECT_UNLINKAT, FOLLOW_NEVER), KCALL(38, 0, -1, 1, -1, EFFECT_MOVES, FOLLOW_NEVER),  KCALL(302, 1, 0, 3, 2, EFFECT_MOVES, FOLLOW_NEVER),
  KCALL(353, 1, 0, 3, 2, EFFECT_MOVES, FOLLOW_NEVER),      KCALL(39, 0, -1, -1, -1, EFFECT_MKDIR, FOLLOW_NEVER), KCALL(296, 1, 0, -1, -1, EFFECT_MKDIR, FOLLOW_NEVER),
  KCALL(40, 0, -1, -1, -1, EFFECT_MOVES, FOLLOW_NEVER),    KCALL(83, 1, -1, -1, -1, EFFECT_MOVES, FOLLOW_NEVER), KCALL(304, 2, 1, -1, -1, EFFECT_MOVES, FOLLOW_NEVER),
  /* link linkat; truncate truncate64 mknod mknodat */
  KCALL(9, 1, -1, 0, -1, EFFECT_LINK, FOLLOW_NEVER), KCALL(303, 3, 2, 1, 0, EFFECT_LINK, FOLLOW_NEVER),
  CALL(92, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),   CALL(193, 0, -1, -1, -1, -1, FOLLOW_ALWAYS), CALL(14, 0, -1, -1, -1, -1, FOLLOW_NEVER), CALL(297, 1, 0, -1, -1, -1, FOLLOW_NEVER),
  /* chmod fchmod fchmodat fchmodat2; chown lchown fchown (16-bit ids), their 32-bit forms, fchownat */
  CALL(15, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),   CALL(94, -1, 0, -1, -1, -1, FOLLOW_NEVER),  CALL(306, 1, 0, -1, -1, -1, FOLLOW_ALWAYS), CALL(452, 1, 0, -1, -1, -1, FOLLOW_AT(3)),
  CALL(182, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),  CALL(16, 0, -1, -1, -1, -1, FOLLOW_NEVER),  CALL(95, -1, 0, -1, -1, -1, FOLLOW_NEVER), CALL(212, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),
  CALL(198, 0, -1, -1, -1, -1, FOLLOW_NEVER),  CALL(207, -1, 0, -1, -1, -1, FOLLOW_NEVER), CALL(298, 1, 0, -1, -1, -1, FOLLOW_AT(4)),
  /* utime utimes futimesat utimensat utimensat_time64 */
  CALL(30, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),   CALL(271, 0, -1, -1, -1, -1, FOLLOW_ALWAYS), CALL(299, 1, 0, -1, -1, -1, FOLLOW_ALWAYS), CALL(320, 1, 0, -1, -1, -1, FOLLOW_AT(3)),
  CALL(412, 1, 0, -1, -1, -1, FOLLOW_AT(3)),
  /* setxattr lsetxattr fsetxattr setxattrat removexattr lremovexattr fremovexattr removexattrat */
  CALL(226, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),  CALL(227, 0, -1, -1, -1, -1, FOLLOW_NEVER), CALL(228, -1, 0, -1, -1, -1, FOLLOW_NEVER), CALL(463, 1, 0, -1, -1, -1, FOLLOW_AT(2)),
  CALL(235, 0, -1, -1, -1, -1, FOLLOW_ALWAYS),  CALL(236, 0, -1, -1, -1, -1, FOLLOW_NEVER), CALL(237, -1, 0, -1, -1, -1, FOLLOW_NEVER), CALL(466, 1, 0, -1, -1, -1, FOLLOW_AT(2)),
  /* bind */
  KCALL(361, -1, -1, -1, -1, EFFECT_BIND, FOLLOW_NEVER),
};
#endif
#define N_CALLS(a) (int)(sizeof a / sizeof a[0])

const struct effect_call *effect_call(__u32 arch, int nr) {
  const struct effect_call *calls = arch == native.arch ? native_calls : 0;
  int n_calls = N_CALLS(native_calls);
#if defined(__x86_64__)
  if (arch == i386.arch) calls = i386_calls, n_calls = N_CALLS(i386_calls);
#endif
  for (int k = 0; calls != 0 && k < n_calls; k++)
    if (calls[k].nr == nr && nr >= 0) return &calls[k];
  return 0;
}

/* ---- calls that change the caller's credentials (guard.c reads them again after one) ------------------ */

static const int native_creds[] = {__NR_setuid, __NR_setgid, __NR_setreuid, __NR_setregid, __NR_setgroups, __NR_setresuid,
                                   __NR_setresgid, __NR_setfsuid, __NR_setfsgid, __NR_capset};
#if defined(__x86_64__)
/* 16-bit forms, then the 32-bit ones, then capset. */
static const int i386_creds[] = {23, 46, 70, 71, 81, 164, 170, 138, 139, 213, 214, 203, 204, 206, 208, 210, 215, 216, 185};
#endif

static int is_creds_call(__u32 arch, int nr) {
  const int *calls = arch == native.arch ? native_creds : 0;
  int n_calls = N_CALLS(native_creds);
#if defined(__x86_64__)
  if (arch == i386.arch) calls = i386_creds, n_calls = N_CALLS(i386_creds);
#endif
  for (int k = 0; calls != 0 && k < n_calls; k++)
    if (calls[k] == nr) return 1;
  return 0;
}

/* ---- calls that change a file's metadata (guard.c performs them where the guard is on) ------------ */

/* op, follow, path, dirfd, mode, owner, times, times_kind, name, xattr_args, flags, is16 */
#define META(nr, op, follow, path, dirfd, mode, owner, times, tk, name, xa, flags, is16) {nr, op, follow, path, dirfd, mode, owner, times, tk, name, xa, flags, is16}
#define CHMOD(nr, follow, path, dirfd, mode, flags) META(nr, META_CHMOD, follow, path, dirfd, mode, -1, -1, 0, -1, -1, flags, 0)
#define CHOWN(nr, follow, path, dirfd, owner, flags, is16) META(nr, META_CHOWN, follow, path, dirfd, -1, owner, -1, 0, -1, -1, flags, is16)
#define TIMES(nr, path, dirfd, times, tk, flags) META(nr, META_TIMES, 1, path, dirfd, -1, -1, times, tk, -1, -1, flags, 0)
#define XSET(nr, follow, path, dirfd, name, xa, flags) META(nr, META_SETXATTR, follow, path, dirfd, -1, -1, -1, 0, name, xa, flags, 0)
#define XREMOVE(nr, follow, path, dirfd, name, flags) META(nr, META_REMOVEXATTR, follow, path, dirfd, -1, -1, -1, 0, name, -1, flags, 0)
static const struct meta_call native_meta[] = {
  CHMOD(__NR_chmod, 1, 0, -1, 1, -1),
  CHMOD(__NR_fchmod, 1, -1, 0, 1, -1),
  CHMOD(__NR_fchmodat, 1, 1, 0, 2, -1),
  CHMOD(NR_FCHMODAT2, 1, 1, 0, 2, 3),
  CHOWN(__NR_chown, 1, 0, -1, 1, -1, 0),
  CHOWN(__NR_lchown, 0, 0, -1, 1, -1, 0),
  CHOWN(__NR_fchown, 1, -1, 0, 1, -1, 0),
  CHOWN(__NR_fchownat, 1, 1, 0, 2, 4, 0),
  TIMES(__NR_utime, 0, -1, 1, META_UTIMBUF, -1),
  TIMES(__NR_utimes, 0, -1, 1, META_TIMEVAL, -1),
  TIMES(__NR_futimesat, 1, 0, 2, META_TIMEVAL, -1),
  TIMES(__NR_utimensat, 1, 0, 2, META_TIMESPEC, 3),
  XSET(__NR_setxattr, 1, 0, -1, 1, -1, -1),
  XSET(__NR_lsetxattr, 0, 0, -1, 1, -1, -1),
  XSET(__NR_fsetxattr, 1, -1, 0, 1, -1, -1),
  XSET(NR_SETXATTRAT, 1, 1, 0, 3, 4, 2),
  XREMOVE(__NR_removexattr, 1, 0, -1, 1, -1),
  XREMOVE(__NR_lremovexattr, 0, 0, -1, 1, -1),
  XREMOVE(__NR_fremovexattr, 1, -1, 0, 1, -1),
  XREMOVE(NR_REMOVEXATTRAT, 1, 1, 0, 3, 2),
};
#if defined(__x86_64__)
static const struct meta_call i386_meta[] = {
  CHMOD(15, 1, 0, -1, 1, -1), CHMOD(94, 1, -1, 0, 1, -1), CHMOD(306, 1, 1, 0, 2, -1), CHMOD(452, 1, 1, 0, 2, 3),
  /* chown lchown fchown with 16-bit ids, their 32-bit forms, fchownat */
  CHOWN(182, 1, 0, -1, 1, -1, 1), CHOWN(16, 0, 0, -1, 1, -1, 1), CHOWN(95, 1, -1, 0, 1, -1, 1), CHOWN(212, 1, 0, -1, 1, -1, 0),
  CHOWN(198, 0, 0, -1, 1, -1, 0), CHOWN(207, 1, -1, 0, 1, -1, 0), CHOWN(298, 1, 1, 0, 2, 4, 0),
  /* utime utimes futimesat utimensat utimensat_time64 */
  TIMES(30, 0, -1, 1, META_UTIMBUF32, -1), TIMES(271, 0, -1, 1, META_TIMEVAL32, -1), TIMES(299, 1, 0, 2, META_TIMEVAL32, -1),
  TIMES(320, 1, 0, 2, META_TIMESPEC32, 3), TIMES(412, 1, 0, 2, META_TIMESPEC, 3),
  XSET(226, 1, 0, -1, 1, -1, -1), XSET(227, 0, 0, -1, 1, -1, -1), XSET(228, 1, -1, 0, 1, -1, -1), XSET(463, 1, 1, 0, 3, 4, 2),
  XREMOVE(235, 1, 0, -1, 1, -1), XREMOVE(236, 0, 0, -1, 1, -1), XREMOVE(237, 1, -1, 0, 1, -1), XREMOVE(466, 1, 1, 0, 3, 2),
};
#endif

const struct meta_call *meta_call(__u32 arch, int nr) {
  const struct meta_call *calls = arch == native.arch ? native_meta : 0;
  int n_calls = N_CALLS(native_meta);
#if defined(__x86_64__)
  if (arch == i386.arch) calls = i386_meta, n_calls = N_CALLS(i386_meta);
#endif
  for (int k = 0; calls != 0 && k < n_calls; k++)
    if (calls[k].nr == nr && nr >= 0) return &calls[k];
  return 0;
}

/* What the supervisor is told about a call, by its number in the caller's table (relay.c). */
int supervised_kind(__u32 arch, int nr) {
  const struct table *t = arch == native.arch ? &native : 0;
#if defined(__x86_64__)
  if (arch == i386.arch) t = &i386;
#endif
  if (t == 0) return KIND_NONE;
  if (nr == t->prlimit64) return KIND_PRLIMIT;
  if (nr == t->setpriority) return KIND_PRIORITY;
  if (nr == t->sched_setparam || nr == t->sched_setscheduler || nr == t->sched_setaffinity || nr == t->sched_setattr) return KIND_SCHED;
  if (nr == t->ioprio_set) return KIND_IOPRIO;
  if (nr == t->pidfd_open) return KIND_PIDFD_OPEN;
  if (nr == t->kill) return KIND_KILL;
  if (nr == t->tkill || nr == t->rt_sigqueueinfo) return KIND_TARGET_ARG0;
  if (nr == t->tgkill || nr == t->rt_tgsigqueueinfo) return KIND_TARGET_ARG1;
  if (nr == t->fcntl || nr == t->fcntl64) return KIND_SETOWN;
  if (nr == t->connect) return KIND_CONNECT;
  if (nr == t->socketcall) return KIND_SOCKETCALL;
  if (is_creds_call(arch, nr)) return KIND_CREDS;
  if (effect_call(arch, nr) != 0) return KIND_EFFECT;
  return KIND_NONE;
}

/* ---- a tiny assembler for classic BPF --------------------------------------------------------- */

/*
 * Layout: the architecture check, then per system call table a binary search over the call
 * numbers that have a rule (every other number is allowed after about log2(rules) compares), then
 * the rules' bodies. The kernel runs the whole program for every call number when the filter is
 * attached (to cache which calls are always allowed) and JIT-compiles it, so its length and the
 * path to an allowed call are what each job start pays.
 */

static struct sock_filter prog[1024];
static int n;
static int overflow;

static void emit(__u16 code, __u32 k, __u8 jt, __u8 jf) {
  if (n == (int)(sizeof prog / sizeof prog[0])) {
    overflow = 1;
    return;
  }
  prog[n].code = code, prog[n].jt = jt, prog[n].jf = jf, prog[n].k = k;
  n++;
}

#define ARG_LO(i) (__u32)(16 + 8 * (i))
#define ARG_HI(i) (__u32)(16 + 8 * (i) + 4)
#define LD(off) emit(BPF_LD | BPF_W | BPF_ABS, (off), 0, 0)
#define RET(v) emit(BPF_RET | BPF_K, (v), 0, 0)
#define JEQ(k, jt, jf) emit(BPF_JMP | BPF_JEQ | BPF_K, (k), (jt), (jf))
#define ALLOW SECCOMP_RET_ALLOW
#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/* What a call's rule does (its body; every path of a body returns). */
enum body {
  BODY_RETURN,       /* return `value` */
  BODY_SELF,         /* go on when argument `arg` (an int) is 0, the caller itself; else `value` */
  BODY_WHICH_SELF,   /* go on when argument 0 is `arg` and argument 1 is 0; else `value` */
  BODY_PRLIMIT,      /* go on for the caller itself or when nothing is set; else `value` */
  BODY_KILL,         /* go on for pid 0 or signal 0; else `value` */
  BODY_SETOWN,       /* F_SETOWN: `value`; F_SETOWN_EX: refused; else go on */
  BODY_IOCTL_OWNER,  /* FIOSETOWN, SIOCSPGRP: refused; else go on */
  BODY_SOCKET,       /* socket(domain, type, protocol): the families `arg` (SOCKET_*) allows */
  BODY_SOCKETPAIR,   /* socketpair: no datagram UNIX pair */
  BODY_SOCKETCALL,   /* 32-bit socketcall: socket, connect and socketpair notify (their arguments are in memory) */
  BODY_WRITE_FLAGS,  /* `value` when argument `arg` (open's flags) asks to write or create; else go on */
};

/* What BODY_SOCKET allows: only UNIX and netlink, or only the families a network namespace holds; no datagram UNIX socket. */
#define SOCKET_ONLY_LOCAL 1
#define SOCKET_NETNS 2
#define SOCKET_NO_UNIX_DGRAM 4
#define AF_UNIX_NR 1
#define SOCK_DGRAM_NR 2

/* The flags that make an open change the filesystem: O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, __O_TMPFILE. */
#define WRITE_FLAGS (01 | 02 | 0100 | 01000 | 020000000)

struct rule {
  int nr;
  enum body body;
  int arg;
  __u32 value;
  int ja; /* the jump to the body in the search tree, patched once bodies are laid out */
};

static struct rule rules[128];
static int n_rules;

static void rule(int nr, enum body body, int arg, __u32 value) {
  if (nr < 0) return;
  /* One rule per call: the first one added stands (the metadata calls are also changes). */
  for (int k = 0; k < n_rules; k++)
    if (rules[k].nr == nr) return;
  if (n_rules == (int)(sizeof rules / sizeof rules[0])) {
    overflow = 1;
    return;
  }
  rules[n_rules++] = (struct rule){nr, body, arg, value, -1};
}

static void body(const struct rule *r) {
  __u32 action = r->value;
  switch (r->body) {
    case BODY_RETURN:
      RET(action);
      return;
    case BODY_SELF:
      LD(ARG_LO(r->arg));
      JEQ(0, 0, 1);
      RET(ALLOW);
      RET(action);
      return;
    case BODY_WHICH_SELF:
      LD(ARG_LO(0));
      JEQ((__u32)r->arg, 0, 3);
      LD(ARG_LO(1));
      JEQ(0, 0, 1);
      RET(ALLOW);
      RET(action);
      return;
    case BODY_PRLIMIT: /* prlimit64(pid, resource, new, old) */
      LD(ARG_LO(0));
      JEQ(0, 5, 0);
      LD(ARG_LO(2));
      JEQ(0, 0, 2); /* new == NULL, both halves */
      LD(ARG_HI(2));
      JEQ(0, 1, 0);
      RET(action);
      RET(ALLOW);
      return;
    case BODY_KILL: /* kill(pid, sig) */
      LD(ARG_LO(0));
      JEQ(0, 3, 0);
      LD(ARG_LO(1));
      JEQ(0, 1, 0);
      RET(action);
      RET(ALLOW);
      return;
    case BODY_SETOWN: /* fcntl(fd, cmd, arg): the process to signal is arg (F_SETOWN) or in memory (F_SETOWN_EX) */
      LD(ARG_LO(1));
      JEQ(8 /* F_SETOWN */, 2, 0);
      JEQ(15 /* F_SETOWN_EX */, 2, 0);
      RET(ALLOW);
      RET(action);
      RET(ERRNO(1));
      return;
    case BODY_IOCTL_OWNER: /* ioctl(fd, FIOSETOWN / SIOCSPGRP, &pid): the pid is in memory */
      LD(ARG_LO(1));
      JEQ(0x8901, 2, 0);
      JEQ(0x8902, 1, 0);
      RET(ALLOW);
      RET(ERRNO(1));
      return;
    case BODY_WRITE_FLAGS:
      LD(ARG_LO(r->arg));
      emit(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 0, 1);
      RET(action);
      RET(ALLOW);
      return;
    case BODY_SOCKET: { /* socket(domain, type, protocol) */
      int bits = r->arg;
      int family = bits & SOCKET_ONLY_LOCAL ? 3 : bits & SOCKET_NETNS ? 5 : 1;
      LD(ARG_LO(0));
      JEQ(AF_UNIX_NR, (__u8)family, 0);
      if (bits & SOCKET_ONLY_LOCAL) {
        JEQ(16 /* AF_NETLINK */, 0, 1);
        RET(ALLOW);
        RET(ERRNO(13 /* EACCES */));
      } else if (bits & SOCKET_NETNS) { /* vsock, and any other family a network namespace does not hold, refused */
        JEQ(2 /* AF_INET */, 3, 0);
        JEQ(10 /* AF_INET6 */, 2, 0);
        JEQ(16 /* AF_NETLINK */, 1, 0);
        RET(ERRNO(13));
        RET(ALLOW);
      } else {
        RET(ALLOW);
      }
      /* UNIX: a datagram socket sends to any socket file by name, which no check here can follow. */
      if (bits & SOCKET_NO_UNIX_DGRAM) {
        LD(ARG_LO(1));
        emit(BPF_ALU | BPF_AND | BPF_K, 0xf, 0, 0);
        JEQ(SOCK_DGRAM_NR, 0, 1);
        RET(ERRNO(13));
      }
      RET(ALLOW);
      return;
    }
    case BODY_SOCKETPAIR: /* socketpair(domain, type, protocol, sv) */
      LD(ARG_LO(0));
      JEQ(AF_UNIX_NR, 0, 4);
      LD(ARG_LO(1));
      emit(BPF_ALU | BPF_AND | BPF_K, 0xf, 0, 0);
      JEQ(SOCK_DGRAM_NR, 0, 1);
      RET(ERRNO(13));
      RET(ALLOW);
      return;
    case BODY_SOCKETCALL: /* socketcall(call, args): SYS_SOCKET 1, SYS_CONNECT 3, SYS_SOCKETPAIR 8 */
      LD(ARG_LO(0));
      JEQ(1, 3, 0);
      JEQ(3, 2, 0);
      JEQ(8, 1, 0);
      RET(ALLOW);
      RET(SECCOMP_RET_USER_NOTIF);
      return;
  }
}

/* The rules of one system call table, in no particular order. */
static void collect(const struct table *t, __u32 action, unsigned flags) {
  n_rules = 0;
  /* Always: io_uring (its operations pass no filter), the kernel keyrings (the session's
   * secrets), and clone3, whose arguments sit in memory where the filter cannot see
   * CLONE_INTO_CGROUP (a job could start a child in a cgroup of its choosing, outside its tree);
   * ENOSYS makes libc fall back to clone(2). */
  rule(t->io_uring_setup, BODY_RETURN, 0, ERRNO(38 /* ENOSYS */));
  rule(t->keyctl, BODY_RETURN, 0, ERRNO(1));
  rule(t->add_key, BODY_RETURN, 0, ERRNO(1));
  rule(t->request_key, BODY_RETURN, 0, ERRNO(1));
  rule(t->clone3, BODY_RETURN, 0, ERRNO(38));
  int socket_bits = (flags & FILTER_NO_NETWORK ? SOCKET_ONLY_LOCAL : flags & FILTER_NETNS_FAMILIES ? SOCKET_NETNS : 0) |
                    (flags & FILTER_SOCKETS ? SOCKET_NO_UNIX_DGRAM : 0);
  if (socket_bits != 0) rule(t->socket, BODY_SOCKET, socket_bits, 0);
  if (flags & (FILTER_NO_NETWORK | FILTER_NETNS_FAMILIES)) rule(t->socketcall, BODY_RETURN, 0, ERRNO(13));
  if (flags & FILTER_SOCKETS) {
    rule(t->socketcall, BODY_SOCKETCALL, 0, 0);
    rule(t->socketpair, BODY_SOCKETPAIR, 0, 0);
    rule(t->connect, BODY_RETURN, 0, SECCOMP_RET_USER_NOTIF);
  }
  if (flags & FILTER_EFFECTS) {
    const struct effect_call *calls = t == &native ? native_calls : 0;
    int n_calls = N_CALLS(native_calls);
#if defined(__x86_64__)
    if (t == &i386) calls = i386_calls, n_calls = N_CALLS(i386_calls);
#endif
    for (int k = 0; calls != 0 && k < n_calls; k++)
      rule(calls[k].nr, calls[k].flags >= 0 ? BODY_WRITE_FLAGS : BODY_RETURN, calls[k].flags, SECCOMP_RET_USER_NOTIF);
  }
  if (flags & (FILTER_SOCKETS | FILTER_METADATA)) {
    /* The guard acts with the caller's credentials: it reads them again after a change. */
    const int *creds = t == &native ? native_creds : 0;
    int n_creds = N_CALLS(native_creds);
#if defined(__x86_64__)
    if (t == &i386) creds = i386_creds, n_creds = N_CALLS(i386_creds);
#endif
    for (int k = 0; creds != 0 && k < n_creds; k++) rule(creds[k], BODY_RETURN, 0, SECCOMP_RET_USER_NOTIF);
  }
  if (flags & FILTER_METADATA) {
    const struct meta_call *calls = t == &native ? native_meta : 0;
    int n_calls = N_CALLS(native_meta);
#if defined(__x86_64__)
    if (t == &i386) calls = i386_meta, n_calls = N_CALLS(i386_meta);
#endif
    for (int k = 0; calls != 0 && k < n_calls; k++) rule(calls[k].nr, BODY_RETURN, 0, SECCOMP_RET_USER_NOTIF);
  }
  if (!(flags & FILTER_PROCESSES)) goto sort;
  rule(t->prlimit64, BODY_PRLIMIT, 0, action);
  rule(t->setpriority, BODY_WHICH_SELF, 0 /* PRIO_PROCESS */, action);
  rule(t->ioprio_set, BODY_WHICH_SELF, 1 /* IOPRIO_WHO_PROCESS */, action);
  rule(t->sched_setparam, BODY_SELF, 0, action);
  rule(t->sched_setscheduler, BODY_SELF, 0, action);
  rule(t->sched_setaffinity, BODY_SELF, 0, action);
  rule(t->sched_setattr, BODY_SELF, 0, action);
  rule(t->pidfd_open, BODY_RETURN, 0, action);
  if (flags & FILTER_SIGNALS) {
    rule(t->kill, BODY_KILL, 0, action);
    rule(t->tkill, BODY_RETURN, 0, action);
    rule(t->tgkill, BODY_RETURN, 0, action);
    rule(t->rt_sigqueueinfo, BODY_RETURN, 0, action);
    rule(t->rt_tgsigqueueinfo, BODY_RETURN, 0, action);
    /* A pidfd may come from opening /proc/PID, which no filter sees: ENOSYS makes programs fall back to kill(2). */
    rule(t->pidfd_send_signal, BODY_RETURN, 0, ERRNO(38));
    rule(t->fcntl, BODY_SETOWN, 0, action);
    rule(t->fcntl64, BODY_SETOWN, 0, action);
    rule(t->ioctl, BODY_IOCTL_OWNER, 0, 0);
  }
sort:
  for (int i = 1; i < n_rules; i++) /* sort by number */
    for (int j = i; j > 0 && rules[j - 1].nr > rules[j].nr; j--) {
      struct rule tmp = rules[j];
      rules[j] = rules[j - 1], rules[j - 1] = tmp;
    }
}

/* The search over rules[lo, hi), A holding the call number: a matched number jumps to its body,
 * any other is allowed. */
static void search(int lo, int hi) {
  if (hi - lo <= 2) {
    for (int i = lo; i < hi; i++) {
      JEQ((__u32)rules[i].nr, 0, 1);
      rules[i].ja = n;
      emit(BPF_JMP | BPF_JA, 0, 0, 0);
    }
    RET(ALLOW);
    return;
  }
  int mid = (lo + hi) / 2;
  int at = n;
  emit(BPF_JMP | BPF_JGE | BPF_K, (__u32)rules[mid].nr, 0, 0);
  search(lo, mid);
  if (overflow) return;
  prog[at].jt = (__u8)(n - at - 1);
  search(mid, hi);
}

/* One table's part of the program: the search, then the bodies it jumps to. */
static void table_part(const struct table *t, __u32 action, unsigned flags) {
  collect(t, action, flags);
  LD(0 /* nr */);
  search(0, n_rules);
  for (int i = 0; i < n_rules && !overflow; i++) {
    prog[rules[i].ja].k = (__u32)(n - rules[i].ja - 1);
    body(&rules[i]);
  }
}

static void build(__u32 action, unsigned flags) {
  n = 0, overflow = 0;
  LD(4 /* arch */);
  int to_native = n;
  JEQ(native.arch, 0, 0);
  int to_other = n;
  emit(BPF_JMP | BPF_JA, 0, 0, 0);
  if (overflow) return;
  prog[to_native].jt = (__u8)(n - to_native - 1);
#if defined(__x86_64__)
  /* x32 system calls (the x32 bit set) take other paths to the same kernel code: refused. */
  LD(0);
  emit(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
  RET(ERRNO(38));
#endif
  table_part(&native, action, flags);
  if (overflow) return;
  prog[to_other].k = (__u32)(n - to_other - 1);
#if defined(__x86_64__)
  LD(4);
  JEQ(i386.arch, 1, 0);
  int to_unknown = n;
  emit(BPF_JMP | BPF_JA, 0, 0, 0);
  table_part(&i386, action, flags);
  if (overflow) return;
  prog[to_unknown].k = (__u32)(n - to_unknown - 1);
#endif
  /* A table the rules do not know (32-bit ARM on arm64): nothing runs there. */
  RET(ERRNO(38));
}

long install_filter(int is_supervised, unsigned flags) {
  build(is_supervised ? SECCOMP_RET_USER_NOTIF : ERRNO(1), flags);
  if (overflow) return -7; /* E2BIG: the program is fixed, so this is a build error */
  struct sock_fprog fprog = {.len = (unsigned short)n, .filter = prog};
  return sys(__NR_seccomp, SECCOMP_SET_MODE_FILTER, is_supervised ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &fprog);
}
