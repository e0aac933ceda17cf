/*
 * hands-confine: the relay, the job's parent. The helper clones the job (into its cgroup with
 * CLONE_INTO_CGROUP where it has one: a process born in its cgroup does not wait for the RCU grace
 * period a move through cgroup.procs waits for, ~10 ms after a quiet moment) and stays outside the
 * job's cgroup and sandbox to:
 *
 *   - relay signals: those a process sends it (the host's SIGTERM/SIGCONT, a `kill` of the pid a
 *     result reports) go on to the job; the terminal's own signals do not (the terminal signals
 *     the job's process group itself), except a hangup, which the kernel sends the session leader;
 *   - supervise: the job's seccomp filter (seccomp.c) sends it the calls that name another
 *     process; each goes on only when its target is in the job's own tree; and the calls that
 *     change the filesystem, recorded (effects.c) and let go on. Past its first 64 such calls a
 *     job is answered by a thread of the relay that waits in the listener itself;
 *   - reap: as a child subreaper it adopts every orphan of the tree and reaps it, so a job's
 *     processes never become zombies of an init that does not reap (a container's first process);
 *   - end as the job ended: exit with its code or die by its signal. With a status descriptor the
 *     job's end is reported there at once and the relay stays until every process it adopted is
 *     gone (the host stops them), then ends the same way.
 */
#include "hands-confine.h"

#include <linux/fcntl.h>
#include <linux/ioctl.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>

#define CLONE_INTO_CGROUP_FLAG 0x200000000ULL
#define SIGCHLD_NR 17
#define SIGPIPE_NR 13
#define SI_KERNEL_CODE 0x80
#define WNOHANG_FLAG 1
#define WALL_FLAG 0x40000000
#define EINTR_NR 4
#define ECHILD_NR 10
#define EPERM_NR 1
/* SECCOMP_IOCTL_NOTIF_SET_FLAGS and its one flag (Linux 6.6; not in older headers). */
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS_NR 0x40082104
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP_FLAG 1

struct clone3_args {
  u64 flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

struct signalfd_info {
  __u32 signo;
  __s32 err;
  __s32 code;
  __u32 rest[29];
};


/* Signals passed on to the job when a process sent them, and a hangup of the terminal. */
static const int relayed[] = {1, 2, 3, 10, 12, 14, 15, 18, 20, 28};

static unsigned long signal_bit(int sig) {
  return 1UL << (sig - 1);
}

static long relay_pid;
static long job_pid;
/* True once the job's listener came: its calls were seen. */
static int is_observed;

/* ---- the supervisor's question: is this process in the job's tree? --------------------------- */

/* The parent of `pid` (from /proc/PID/stat), or -1. */
static long parent_of(long pid) {
  char path[64], buf[1024];
  proc_path(path, pid, "stat");
  long n = read_file(path, buf, sizeof buf - 1);
  if (n <= 0) return -1;
  buf[n] = 0;
  long close_paren = -1;
  for (long i = 0; i < n; i++)
    if (buf[i] == ')') close_paren = i;
  if (close_paren < 0 || close_paren + 4 >= n) return -1;
  const char *p = buf + close_paren + 4; /* ") S PPID" */
  unsigned long long ppid;
  if (!parse_u64(&p, &ppid)) return -1;
  return (long)ppid;
}

/*
 * True when `pid` is a process (or thread) of the job's tree: its chain of parents reaches the
 * relay. Every process of the tree has one: the relay is a child subreaper, so an orphan of the
 * tree is adopted by it, and no process outside the tree has the relay as an ancestor (its only
 * child is the job). The relay itself is not in the tree.
 */
static int in_tree(long pid) {
  if (pid <= 0) return 0;
  for (int depth = 0; depth < 4096; depth++) {
    long ppid = parent_of(pid);
    if (ppid == relay_pid) return 1;
    if (ppid <= 1) return 0;
    pid = ppid;
  }
  return 0;
}

int relay_in_tree(long pid) {
  return in_tree(pid);
}

/* A process group of the job: its own first group (led by the relay) or one a process of the tree leads. */
static int group_in_tree(long pgid) {
  return pgid == relay_pid || in_tree(pgid);
}

/* 0 to let the call go on, or the -errno it fails with. */
static long decide(const struct seccomp_notif *req) {
  int kind = supervised_kind(req->data.arch, req->data.nr);
  int a0 = (int)req->data.args[0], a1 = (int)req->data.args[1], a2 = (int)req->data.args[2];
  switch (kind) {
    case KIND_PRLIMIT:
    case KIND_SCHED:
    case KIND_PIDFD_OPEN:
    case KIND_TARGET_ARG0:
      return a0 == 0 || in_tree(a0) ? 0 : -EPERM_NR;
    case KIND_TARGET_ARG1:
      return in_tree(a1) ? 0 : -EPERM_NR;
    case KIND_PRIORITY: /* PRIO_PROCESS, PRIO_PGRP, PRIO_USER (every process of the user) */
      if (a0 == 0) return a1 == 0 || in_tree(a1) ? 0 : -EPERM_NR;
      if (a0 == 1) return a1 == 0 || group_in_tree(a1) ? 0 : -EPERM_NR;
      return a0 == 2 ? -EPERM_NR : 0;
    case KIND_IOPRIO: /* IOPRIO_WHO_PROCESS, _PGRP, _USER */
      if (a0 == 1) return a1 == 0 || in_tree(a1) ? 0 : -EPERM_NR;
      if (a0 == 2) return a1 == 0 || group_in_tree(a1) ? 0 : -EPERM_NR;
      return a0 == 3 ? -EPERM_NR : 0;
    case KIND_KILL: /* kill(-1) reaches every process the caller may signal */
      if (a0 > 0) return in_tree(a0) ? 0 : -EPERM_NR;
      if (a0 == -1) return -EPERM_NR;
      return a0 == 0 || group_in_tree(-(long)a0) ? 0 : -EPERM_NR;
    case KIND_SETOWN:
      if (a2 > 0) return in_tree(a2) ? 0 : -EPERM_NR;
      return a2 == 0 || group_in_tree(-(long)a2) ? 0 : -EPERM_NR;
    default:
      return -EPERM_NR;
  }
}

/* Answer one notification. The call's arguments are integers in registers, so letting it go on
 * (CONTINUE) runs it with exactly what was checked. A call that changes the filesystem is
 * recorded (its paths read from the caller's memory first) and goes on. */
static long supervise(int listener) {
  struct seccomp_notif req;
  memset(&req, 0, sizeof req);
  long got = sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_RECV, &req);
  if (got != 0) return got;
  int kind = supervised_kind(req.data.arch, req.data.nr);
  if (kind == KIND_EFFECT) effects_record((long)req.pid, req.data.arch, req.data.nr, (const u64 *)req.data.args);
  /* Sockets, and metadata outside the writable paths: the guard performs or refuses them. */
  if (guard_answer(listener, &req)) return 0;
  if (kind == KIND_EFFECT) {
    struct seccomp_notif_resp go;
    memset(&go, 0, sizeof go);
    go.id = req.id, go.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_SEND, &go);
    return 0;
  }
  long err = decide(&req);
  struct seccomp_notif_resp resp;
  memset(&resp, 0, sizeof resp);
  resp.id = req.id;
  if (err == 0) {
    /* The caller still waits, so the /proc entries read were its tree's (no pid was reused). */
    if (sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) != 0) return 0;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  } else {
    resp.error = (__s32)err;
  }
  sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  return 0;
}

/* ---- the supervising thread ------------------------------------------------------------------- */

/*
 * A job that makes many supervised calls (a build writing thousands of files) is answered by a
 * thread of the relay that waits in the listener's RECV itself: each call then costs one RECV and
 * one SEND, with no ppoll around it. The first calls are answered by the main loop, so a job that
 * makes few (most commands) costs no thread.
 */
#define THREAD_AFTER 64

#define CLONE_THREAD_FLAGS (0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000) /* VM FS FILES SIGHAND THREAD SYSVSEM */
#define THREAD_STACK_BYTES (256 * 1024)
#define ENOENT_NR 2

static int thread_listener = -1;

static void supervising_thread(void) {
  for (;;) {
    long r = supervise(thread_listener);
    if (r != -ENOENT_NR && r != -EINTR_NR && r < 0) break;
    if (r == -ENOENT_NR) {
      /* The caller died before its call was read, or no process uses the filter any more (then
       * RECV returns at once for ever: the thread ends). */
      struct poll_fd fd = {thread_listener, 1, 0};
      struct {
        long sec, nsec;
      } now = {0, 0};
      if (sys6(__NR_ppoll, (long)&fd, 1, (long)&now, 0, 8, 0) > 0 && (fd.revents & (0x8 | 0x10))) break;
    }
  }
  for (;;) sys(__NR_exit, 0, 0, 0); /* this thread only */
}

/* Start `fn` on a thread of this process with its own stack; its tid, or -errno. */
static long start_thread(void (*fn)(void)) {
  long stack = sys6(__NR_mmap, 0, THREAD_STACK_BYTES, 3 /* PROT_READ | PROT_WRITE */, 0x22 | 0x4000 | 0x20000 /* PRIVATE ANONYMOUS NORESERVE STACK */, -1, 0);
  if (stack < 0 && stack > -4096) return stack;
  long top = (stack + THREAD_STACK_BYTES) & ~15L;
#if defined(__x86_64__)
  /* clone(flags, stack, parent_tid, child_tid, tls): the new thread returns from the syscall on
   * its own stack, with the registers the caller had; it calls fn (held in rbx) and never returns. */
  register long r10 __asm__("r10") = 0;
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
    : "a"((long)__NR_clone), "D"((long)CLONE_THREAD_FLAGS), "S"(top), "d"(0L), "r"(r10), "r"(r8), "b"(fn)
    : "rcx", "r11", "memory");
  return ret;
#else
  /* clone(flags, stack, parent_tid, tls, child_tid); fn in x9, which the new thread has too. */
  register long x8 __asm__("x8") = __NR_clone;
  register long x0 __asm__("x0") = CLONE_THREAD_FLAGS;
  register long x1 __asm__("x1") = top;
  register long x2 __asm__("x2") = 0;
  register long x3 __asm__("x3") = 0;
  register long x4 __asm__("x4") = 0;
  register long x9 __asm__("x9") = (long)fn;
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

/* Hand the listener to a supervising thread; true when it runs (the main loop stops reading it). */
static int hand_over(int listener, int wake_fd) {
  if (wake_fd < 0) return 0;
  thread_listener = listener;
  effects_wake(wake_fd);
  if (start_thread(supervising_thread) > 0) return 1;
  effects_wake(-1);
  thread_listener = -1;
  return 0;
}

/* The listener the job sends on `channel` once its filter is installed; -1 when none came. */
static int receive_listener(int channel) {
  char byte;
  struct io_vec iov = {&byte, 1};
  struct fd_control control;
  memset(&control, 0, sizeof control);
  struct message msg = {0, 0, &iov, 1, &control, sizeof control, 0};
  long n = sys(__NR_recvmsg, channel, &msg, 0x40000000 /* MSG_CMSG_CLOEXEC */);
  if (n <= 0 || control.level != 1 /* SOL_SOCKET */ || control.type != 1 /* SCM_RIGHTS */) return -1;
  return control.fd;
}

void send_listener(int channel, int listener) {
  char byte = 'L';
  struct io_vec iov = {&byte, 1};
  struct fd_control control = {sizeof(struct fd_control) - sizeof(int), 1, 1, listener, 0};
  struct message msg = {0, 0, &iov, 1, &control, sizeof control, 0};
  sys(__NR_sendmsg, channel, &msg, 0x4000 /* MSG_NOSIGNAL */);
}

/* ---- the relay's end --------------------------------------------------------------------------- */

static void report(int fd, int status) {
  int sig = status & 0x7f;
  put(sig == 0 ? "exit " : "signal "), put_num(sig == 0 ? (status >> 8) & 0xff : sig), put("\n");
  flush(fd);
  sys(__NR_close, fd, 0, 0);
}

/* Exit with the job's code, or die by the signal that killed it (128 + N if it is not fatal). */
__attribute__((noreturn)) static void finish(int status) {
  effects_close(is_observed);
  int sig = status & 0x7f;
  if (sig == 0) quit((status >> 8) & 0xff);
  /* Not dumpable first: the job dumped its core if it was to, and the relay adds none. Only that
   * signal is unblocked, so no other pending one ends the relay instead. */
  sys6(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0, 0);
  long dfl[4] = {0, 0, 0, 0};
  sys6(__NR_rt_sigaction, sig, (long)dfl, 0, 8, 0, 0);
  sys(__NR_kill, relay_pid, sig, 0);
  unsigned long mask = signal_bit(sig);
  sys6(__NR_rt_sigprocmask, 1 /* SIG_UNBLOCK */, (long)&mask, 0, 8, 0, 0);
  quit(128 + sig);
}

__attribute__((noreturn)) static void relay(int sfd, int channel, int status_fd) {
  int listener = -1, job_status = 0, is_job_alive = 1, wake_fd = -1;
  long answered = 0, flush_at = 0;
  for (;;) {
    struct poll_fd fds[4];
    int k = 0;
    fds[k++] = (struct poll_fd){sfd, 1 /* POLLIN */, 0};
    if (channel >= 0) fds[k++] = (struct poll_fd){channel, 1, 0};
    if (listener >= 0) fds[k++] = (struct poll_fd){listener, 1, 0};
    if (wake_fd >= 0) fds[k++] = (struct poll_fd){wake_fd, 1, 0};
    /* A change waiting to be written is written within 100 ms of the first one (a reader may be
     * waiting), however often the relay wakes meanwhile. */
    struct {
      long sec, nsec;
    } now = {0, 0}, soon = {0, 0};
    long wait_ns = -1;
    if (effects_dirty()) {
      sys(__NR_clock_gettime, 1 /* CLOCK_MONOTONIC */, &now, 0);
      long now_ns = now.sec * 1000000000L + now.nsec;
      if (flush_at == 0) flush_at = now_ns + 100000000L;
      wait_ns = flush_at > now_ns ? flush_at - now_ns : 0;
      soon.sec = wait_ns / 1000000000L, soon.nsec = wait_ns % 1000000000L;
    } else {
      flush_at = 0;
    }
    long r = wait_ns == 0 ? 0 : sys6(__NR_ppoll, (long)fds, k, wait_ns > 0 ? (long)&soon : 0, 0, 8, 0);
    if (r < 0 && r != -EINTR_NR) quit(125);
    if (r == 0) {
      effects_flush();
      flush_at = 0;
      continue;
    }
    for (int i = 1; i < k; i++) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == channel) {
        listener = receive_listener(channel);
        is_observed = listener >= 0;
        /* The job's call wakes the relay on the job's own CPU, and the answer the job on the
         * relay's (Linux 6.6+; older kernels refuse the flag and wake as usual): the job waits for
         * each answer, so a wake-up on another CPU is only latency. */
        if (listener >= 0) sys(__NR_ioctl, listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS_NR, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP_FLAG);
        sys(__NR_close, channel, 0, 0);
        channel = -1;
      } else if (fds[i].fd == listener) {
        if (fds[i].revents & 1 /* POLLIN */) supervise(listener);
        /* No process uses the filter any more (the job's tree is gone): the listener stays ready
         * for ever, so it is dropped rather than polled in a loop until the relay ends. */
        if (fds[i].revents & (0x8 | 0x10) /* POLLERR | POLLHUP */) sys(__NR_close, listener, 0, 0), listener = -1;
        else if (++answered == THREAD_AFTER) {
          wake_fd = (int)sys(__NR_eventfd2, 0, O_CLOEXEC, 0);
          if (hand_over(listener, wake_fd)) listener = -1;
          else if (wake_fd >= 0) sys(__NR_close, wake_fd, 0, 0), wake_fd = -1;
        }
      } else if (fds[i].fd == wake_fd) {
        u64 count;
        sys(__NR_read, wake_fd, &count, sizeof count);
      }
    }
    if (fds[0].revents == 0) continue;
    struct signalfd_info info;
    if (sys(__NR_read, sfd, &info, sizeof info) != (long)sizeof info) continue;
    if (info.signo != SIGCHLD_NR) {
      if (!is_job_alive) continue;
      if (info.code != SI_KERNEL_CODE) sys(__NR_kill, job_pid, info.signo, 0);
      /* A hangup of the terminal signals the session leader alone, which the relay is: SIGHUP,
       * then SIGCONT so a stopped leader sees it. Pass both on, or the job never learns of it. */
      else if (info.signo == 1) sys(__NR_kill, job_pid, 1, 0), sys(__NR_kill, job_pid, 18, 0);
      continue;
    }
    int is_childless = 0;
    for (;;) {
      int status = 0;
      long w = sys6(__NR_wait4, -1, (long)&status, WNOHANG_FLAG | WALL_FLAG, 0, 0, 0);
      if (w > 0) {
        if (w == job_pid) {
          job_status = status, is_job_alive = 0;
          if (status_fd >= 0) report(status_fd, status);
        }
        continue;
      }
      if (w == -EINTR_NR) continue;
      is_childless = w == -ECHILD_NR;
      break;
    }
    if (!is_job_alive && (status_fd < 0 || is_childless)) finish(job_status);
  }
}

/* Clone the job; into the cgroup `dir_fd` when it is one. In the child, 0; the child's pid in
 * the parent; -errno when the kernel cannot (nothing has run then). */
static long clone_job(int dir_fd) {
  struct clone3_args args;
  memset(&args, 0, sizeof args);
  args.flags = dir_fd >= 0 ? CLONE_INTO_CGROUP_FLAG : 0;
  args.exit_signal = SIGCHLD_NR;
  args.cgroup = (u64)(dir_fd >= 0 ? dir_fd : 0);
  long child = sys(__NR_clone3, &args, sizeof args, 0);
  if (child >= 0 || dir_fd >= 0) return child;
  /* Before Linux 5.3 (or a seccomp profile refusing clone3): a plain fork. */
  return sys6(__NR_clone, SIGCHLD_NR, 0, 0, 0, 0, 0);
}

int start_relayed(struct relay *r) {
  relay_pid = sys(__NR_getpid, 0, 0, 0);
  /* Orphans of the job's tree come to the relay (it reaps them), not to the host's init. */
  sys6(__NR_prctl, PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0, 0);
  unsigned long relay_mask = signal_bit(SIGCHLD_NR), old_mask = 0;
  for (size_t k = 0; k < sizeof relayed / sizeof relayed[0]; k++) relay_mask |= signal_bit(relayed[k]);
  /* Block before the clone, so no signal meant for the job is lost between the clone and the
   * relay; SIGPIPE too (only blocked), so a status pipe the host closed cannot end the relay. */
  unsigned long blocked = relay_mask | signal_bit(SIGPIPE_NR);
  sys6(__NR_rt_sigprocmask, 0 /* SIG_BLOCK */, (long)&blocked, (long)&old_mask, 8, 0, 0);
  /* The signalfd and the channel exist before the job does, so once the job runs nothing can keep
   * the relay from relaying. The job's copies close at its exec. */
  int sfd = (int)sys6(__NR_signalfd4, -1, (long)&relay_mask, 8, O_CLOEXEC, 0, 0);
  int pair[2] = {-1, -1};
  if (sfd >= 0 && r->is_supervised) sys6(__NR_socketpair, 1 /* AF_UNIX */, 1 | 0x80000 /* SOCK_STREAM | SOCK_CLOEXEC */, 0, (long)pair, 0, 0);
  long child = sfd < 0 ? sfd : clone_job(r->cgroup_dir);
  int needs_join = 0;
  if (child < 0 && sfd >= 0 && r->cgroup_dir >= 0) {
    /* Whatever clone3 refused (ENOSYS before 5.3, E2BIG for the cgroup field before 5.7, EPERM
     * from a seccomp profile, ...): a plain child that writes cgroup.procs itself. */
    child = clone_job(-1), needs_join = 1;
  }
  if (child < 0) {
    if (r->cgroup_dir >= 0) sys(__NR_close, r->cgroup_dir, 0, 0);
    r->cgroup_dir = -1;
    if (sfd >= 0) sys(__NR_close, sfd, 0, 0);
    if (pair[0] >= 0) sys(__NR_close, pair[0], 0, 0), sys(__NR_close, pair[1], 0, 0);
    sys6(__NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&old_mask, 0, 8, 0, 0);
    sys6(__NR_prctl, PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0, 0);
    r->channel = -1, r->needs_join = 1;
    return 0;
  }
  if (child == 0) {
    sys(__NR_close, sfd, 0, 0);
    if (pair[0] >= 0) sys(__NR_close, pair[0], 0, 0);
    sys6(__NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&old_mask, 0, 8, 0, 0);
    /* The job dies with its relay (a SIGKILL meant for the job's first process). */
    sys6(__NR_prctl, PR_SET_PDEATHSIG, 9, 0, 0, 0, 0);
    if (sys(__NR_getppid, 0, 0, 0) != relay_pid) quit(137);
    r->channel = pair[1], r->needs_join = needs_join;
    return 1;
  }
  job_pid = child;
  /* The job waits on its first recorded call until the relay answers, which it does only after this. */
  if (r->effects_file != 0 && effects_open(r->effects_file) != 0) effects_close(0);
  if (r->cgroup_dir >= 0) sys(__NR_close, r->cgroup_dir, 0, 0);
  if (pair[1] >= 0) sys(__NR_close, pair[1], 0, 0);
  if (r->status_fd >= 0) {
    /* The relay outlives the job there: it must not hold the job's output open. */
    int null_fd = (int)sys(__NR_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3 && null_fd >= 0; fd++) sys(__NR_dup3, null_fd, fd, 0);
    if (null_fd > 2) sys(__NR_close, null_fd, 0, 0);
  }
  relay(sfd, pair[0], r->status_fd);
}
