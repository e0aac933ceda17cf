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
 * of the user's session). With --no-network, sockets other than UNIX, netlink and TCP: Landlock
 * governs only TCP, so UDP, raw, MPTCP (EPROTONOSUPPORT, so programs fall back to TCP) and every
 * other family are refused where they are made.
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
  int pidfd_open, pidfd_send_signal, io_uring_setup, keyctl, add_key, request_key, socket, socketcall;
  int kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, fcntl, fcntl64, ioctl;
};

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#else
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

static const struct table native = {
  NATIVE_ARCH, __NR_prlimit64, __NR_setpriority, __NR_sched_setparam, __NR_sched_setscheduler, __NR_sched_setaffinity,
  __NR_sched_setattr, __NR_ioprio_set, 434, 424, 425, __NR_keyctl, __NR_add_key, __NR_request_key, __NR_socket, -1,
  __NR_kill, __NR_tkill, __NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo, __NR_fcntl, -1, __NR_ioctl,
};
#if defined(__x86_64__)
/* 32-bit programs (int 0x80) on x86-64. */
static const struct table i386 = {
  AUDIT_ARCH_I386, 340, 97, 154, 156, 241, 351, 289, 434, 424, 425, 288, 286, 287, 359, 102, 37, 238, 270, 178, 335, 55, 221, 54,
};
#endif

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
  return KIND_NONE;
}

/* ---- a tiny assembler for classic BPF --------------------------------------------------------- */

static struct sock_filter prog[512];
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
#define ALLOW SECCOMP_RET_ALLOW
#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/* Open a block that runs when the call number (in A) is `nr`; every path of a block returns. */
static int open_block(int nr) {
  int at = n;
  emit(BPF_JMP | BPF_JEQ | BPF_K, (__u32)nr, 0, 0);
  return at;
}
static void close_block(int at) {
  if (at < (int)(sizeof prog / sizeof prog[0])) prog[at].jf = (__u8)(n - at - 1);
}

/* Refuse `nr` with `err`. */
static void refuse(int nr, int err) {
  if (nr < 0) return;
  int b = open_block(nr);
  RET(ERRNO(err));
  close_block(b);
}

/* `nr` goes on when its argument `arg` (an int) is 0 (the caller itself); else `action`. */
static void self_or(int nr, int arg, __u32 action) {
  int b = open_block(nr);
  LD(ARG_LO(arg));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
  RET(ALLOW);
  RET(action);
  close_block(b);
}

/* `nr` goes on when argument 0 is `which` and argument 1 (who) is 0; else `action`. */
static void which_self_or(int nr, __u32 which, __u32 action) {
  int b = open_block(nr);
  LD(ARG_LO(0));
  emit(BPF_JMP | BPF_JEQ | BPF_K, which, 0, 3);
  LD(ARG_LO(1));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
  RET(ALLOW);
  RET(action);
  close_block(b);
}

/* prlimit64(pid, resource, new, old): goes on for the caller itself or when it sets nothing. */
static void prlimit_rule(int nr, __u32 action) {
  int b = open_block(nr);
  LD(ARG_LO(0));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0); /* pid 0 → allow */
  LD(ARG_LO(2));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2); /* new == NULL (both halves) → allow */
  LD(ARG_HI(2));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
  RET(action);
  RET(ALLOW);
  close_block(b);
}

/* kill(pid, sig): pid 0 (the caller's group) and sig 0 (a probe) go on; else `action`. */
static void kill_rule(int nr, __u32 action) {
  int b = open_block(nr);
  LD(ARG_LO(0));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0);
  LD(ARG_LO(1));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
  RET(action);
  RET(ALLOW);
  close_block(b);
}

/* fcntl(fd, cmd, arg): F_SETOWN names a process to signal (supervised); F_SETOWN_EX does through
 * memory the filter cannot read (refused); every other command goes on. */
static void setown_rule(int nr, __u32 action) {
  if (nr < 0) return;
  int b = open_block(nr);
  LD(ARG_LO(1));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 8 /* F_SETOWN */, 2, 0);
  emit(BPF_JMP | BPF_JEQ | BPF_K, 15 /* F_SETOWN_EX */, 2, 0);
  RET(ALLOW);
  RET(action);
  RET(ERRNO(1));
  close_block(b);
}

/* ioctl(fd, FIOSETOWN / SIOCSPGRP, &pid): the process to signal is in memory: refused. */
static void ioctl_rule(int nr) {
  int b = open_block(nr);
  LD(ARG_LO(1));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0x8901 /* FIOSETOWN */, 2, 0);
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0x8902 /* SIOCSPGRP */, 1, 0);
  RET(ALLOW);
  RET(ERRNO(1));
  close_block(b);
}

/* socket(domain, type, protocol) with --no-network: UNIX, netlink and TCP only. */
static void socket_rule(int nr) {
  int b = open_block(nr);
  LD(ARG_LO(0));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 1 /* AF_UNIX */, 3, 0);
  emit(BPF_JMP | BPF_JEQ | BPF_K, 16 /* AF_NETLINK */, 2, 0);
  emit(BPF_JMP | BPF_JEQ | BPF_K, 2 /* AF_INET */, 2, 0);
  emit(BPF_JMP | BPF_JEQ | BPF_K, 10 /* AF_INET6 */, 1, 8);
  RET(ALLOW);
  LD(ARG_LO(2));
  emit(BPF_JMP | BPF_JEQ | BPF_K, 262 /* IPPROTO_MPTCP */, 6, 0);
  emit(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
  emit(BPF_JMP | BPF_JEQ | BPF_K, 6 /* IPPROTO_TCP */, 0, 3);
  LD(ARG_LO(1));
  emit(BPF_ALU | BPF_AND | BPF_K, 0xf, 0, 0); /* the type without SOCK_NONBLOCK / SOCK_CLOEXEC */
  emit(BPF_JMP | BPF_JEQ | BPF_K, 1 /* SOCK_STREAM */, 2, 0);
  RET(ERRNO(13 /* EACCES */));
  RET(ERRNO(93 /* EPROTONOSUPPORT */));
  RET(ALLOW);
  close_block(b);
}

/* The rules of one system call table; A holds the call number. */
static void rules(const struct table *t, __u32 action, int is_no_network, int is_signals) {
  prlimit_rule(t->prlimit64, action);
  which_self_or(t->setpriority, 0 /* PRIO_PROCESS */, action);
  which_self_or(t->ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, action);
  self_or(t->sched_setparam, 0, action);
  self_or(t->sched_setscheduler, 0, action);
  self_or(t->sched_setaffinity, 0, action);
  self_or(t->sched_setattr, 0, action);
  int b = open_block(t->pidfd_open);
  RET(action);
  close_block(b);
  refuse(t->io_uring_setup, 38 /* ENOSYS */);
  refuse(t->keyctl, 1);
  refuse(t->add_key, 1);
  refuse(t->request_key, 1);
  if (is_no_network) {
    socket_rule(t->socket);
    refuse(t->socketcall, 13);
  }
  if (is_signals) {
    kill_rule(t->kill, action);
    b = open_block(t->tkill);
    RET(action);
    close_block(b);
    b = open_block(t->tgkill);
    RET(action);
    close_block(b);
    b = open_block(t->rt_sigqueueinfo);
    RET(action);
    close_block(b);
    b = open_block(t->rt_tgsigqueueinfo);
    RET(action);
    close_block(b);
    /* A pidfd may come from opening /proc/PID, which no filter sees: ENOSYS makes programs fall back to kill(2). */
    refuse(t->pidfd_send_signal, 38);
    setown_rule(t->fcntl, action);
    setown_rule(t->fcntl64, action);
    ioctl_rule(t->ioctl);
  }
  RET(ALLOW);
}

static void build(__u32 action, int is_no_network, int is_signals) {
  n = 0, overflow = 0;
  LD(4 /* arch */);
  int to_native = n;
  emit(BPF_JMP | BPF_JEQ | BPF_K, native.arch, 0, 0);
  int to_other = n;
  emit(BPF_JMP | BPF_JA, 0, 0, 0);
  if (overflow) return;
  prog[to_native].jt = (__u8)(n - to_native - 1);
  LD(0 /* nr */);
#if defined(__x86_64__)
  /* x32 system calls (the x32 bit set) take other paths to the same kernel code: refused. */
  emit(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
  RET(ERRNO(38));
#endif
  rules(&native, action, is_no_network, is_signals);
  if (overflow) return;
  prog[to_other].k = (__u32)(n - to_other - 1);
  LD(4);
#if defined(__x86_64__)
  emit(BPF_JMP | BPF_JEQ | BPF_K, i386.arch, 1, 0);
  int to_unknown = n;
  emit(BPF_JMP | BPF_JA, 0, 0, 0);
  LD(0);
  rules(&i386, action, is_no_network, is_signals);
  if (overflow) return;
  prog[to_unknown].k = (__u32)(n - to_unknown - 1);
#endif
  /* A table the rules do not know (32-bit ARM on arm64): nothing runs there. */
  RET(ERRNO(38));
}

long install_filter(int is_supervised, int is_no_network, int is_signals) {
  build(is_supervised ? SECCOMP_RET_USER_NOTIF : ERRNO(1), is_no_network, is_signals);
  if (overflow) return -7; /* E2BIG: the program is fixed, so this is a build error */
  struct sock_fprog fprog = {.len = (unsigned short)n, .filter = prog};
  return sys(__NR_seccomp, SECCOMP_SET_MODE_FILTER, is_supervised ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &fprog);
}
