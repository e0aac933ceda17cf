/*
 * hands-confine --spawner FD: a session's starter of piped jobs.
 *
 * Forking the server to start a job copies the page tables of a large Node process (1.4–2.2 ms of
 * CPU for a 186 MiB heap); forking this small process costs a few pages. Node starts one spawner
 * per session, with a pipe on stdin that only Node holds and Node's IPC channel (a UNIX socket) on
 * FD. For each job request on stdin the spawner forks, and the fork sets up the job's descriptors,
 * session and working directory and execs the program asked for (the helper, with the job's
 * arguments and environment): the job's first process is the same hands-confine, with the same
 * arguments, environment and descriptors, as when Node spawns it itself.
 *
 * Each descriptor the job gets "from Node" is one end of a UNIX stream socket pair (as libuv gives
 * a child); the other end goes back to Node over the channel (SCM_RIGHTS, in Node's own message
 * format, non-blocking as libuv expects), then a message with the job's pid. The spawner is the
 * parent of every job's first process: it reports each one's end on the channel, and reaps it only
 * when Node says so, so a pid Node has not yet seen end is never reused under it. It ends when
 * stdin or the channel ends (the session closed, or Node died) and dies with Node
 * (PR_SET_PDEATHSIG). It listens nowhere: only its parent's two descriptors reach it, and no job
 * inherits either (the fork closes every descriptor but the job's own before the exec).
 *
 * Requests on stdin (integers are little-endian 32-bit):
 *   LEN 'S' ID NFDS KIND[NFDS] ARGC ENVC FILE\0 CWD\0 ARG\0... ENV\0...   start a job
 *   LEN 'R' PID                                                            reap a job Node saw end
 * LEN counts the bytes after it. KIND says what the job's descriptor 0..NFDS-1 is: 0 closed,
 * 1 /dev/null, 2 a socket whose other end goes to Node.
 *
 * Messages on FD (JSON lines, Node's IPC format):
 *   {"ready":1}                                 once, before any request is read
 *   {"cmd":"NODE_HANDLE","type":"net.Socket","msg":{"id":ID,"fd":K}}   Node's end of job fd K
 *   {"id":ID,"pid":PID}                         the job started (after its descriptors)
 *   {"id":ID,"errno":E}                         nothing ran (E: why)
 *   {"exit":PID,"code":C} / {"exit":PID,"signal":S}   the job's first process ended (not reaped)
 */
#include "hands-confine.h"

#include <linux/fcntl.h>
#include <linux/prctl.h>

#define SIGCHLD_NR 17
#define SIGKILL_NR 9
#define AF_UNIX_NR 1
#define SOCK_STREAM_NR 1
#define SOCK_CLOEXEC_NR 0x80000
#define MSG_NOSIGNAL_NR 0x4000
#define P_PID_NR 1
#define WNOHANG_NR 1
#define WEXITED_NR 4
#define WNOWAIT_NR 0x01000000
#define CLD_EXITED_NR 1
#define EINTR_NR 4
#define ENOSPC_NR 28
#define EINVAL_NR 22

/* The largest request (a job's arguments and environment); Node sends larger ones to its own spawn. */
#define FRAME_MAX (1 << 20)
/* The most job descriptors, arguments and variables one request may carry. */
#define FDS_MAX 8
#define STRINGS_MAX 16384
/* Jobs whose first process has not been reaped yet. */
#define CHILDREN_MAX 4096

/* waitid's siginfo for SIGCHLD: the child's pid and status at offsets 16 and 24. */
struct child_info {
  int signo, err, code, pad;
  int pid, uid, status;
  char rest[100];
};

static int channel = -1, dev_null = -1;

/* ---- messages to Node ------------------------------------------------------------------------ */

/* Send the message built with put() (one JSON line), with `fd` attached when >= 0. */
static void send_message(int fd) {
  put("\n");
  size_t n;
  const char *text = put_buffer(&n);
  struct io_vec iov = {(void *)text, n};
  struct fd_control control = {sizeof(struct fd_control) - sizeof(int), 1 /* SOL_SOCKET */, 1 /* SCM_RIGHTS */, fd, 0};
  struct message msg = {0, 0, &iov, 1, fd >= 0 ? &control : 0, fd >= 0 ? sizeof control : 0, 0};
  /* Node drains the channel as it runs; a short write only happens on a full buffer. */
  long w = sys(__NR_sendmsg, channel, &msg, MSG_NOSIGNAL_NR);
  while (w > 0 && (size_t)w < n) {
    long more = sys6(__NR_sendto, channel, (long)(text + w), (long)(n - (size_t)w), MSG_NOSIGNAL_NR, 0, 0);
    if (more <= 0) break;
    w += more;
  }
  put_reset();
  if (w < 0 && w != -EINTR_NR) quit(0); /* Node is gone */
}

static void send_error(unsigned id, long err) {
  put("{\"id\":"), put_num(id), put(",\"errno\":"), put_num(-err), put("}");
  send_message(-1);
}

/* ---- the jobs' first processes --------------------------------------------------------------- */

static struct {
  long pid;
  int is_reported;
} children[CHILDREN_MAX];
static int n_children;

/* Report every child that ended and is not reported yet (it stays a zombie until Node says reap). */
static void report_ended(void) {
  for (int k = 0; k < n_children; k++) {
    if (children[k].is_reported) continue;
    struct child_info info;
    memset(&info, 0, sizeof info);
    long r = sys6(__NR_waitid, P_PID_NR, children[k].pid, (long)&info, WEXITED_NR | WNOHANG_NR | WNOWAIT_NR, 0, 0);
    if (r != 0 || info.pid != children[k].pid) continue;
    children[k].is_reported = 1;
    put("{\"exit\":"), put_num(children[k].pid);
    put(info.code == CLD_EXITED_NR ? ",\"code\":" : ",\"signal\":"), put_num(info.status), put("}");
    send_message(-1);
  }
}

/* Reap a child Node saw end (only then: until Node has seen it end, its pid stays ours). */
static void reap(long pid) {
  for (int k = 0; k < n_children; k++) {
    if (children[k].pid != pid || !children[k].is_reported) continue;
    struct child_info info;
    sys6(__NR_waitid, P_PID_NR, pid, (long)&info, WEXITED_NR, 0, 0);
    children[k] = children[--n_children];
    return;
  }
}

/* ---- starting a job -------------------------------------------------------------------------- */

static const char *strings[STRINGS_MAX + 2];

static unsigned read_u32(const unsigned char *p) {
  return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
}

/* In the fork: the job's descriptors, session and directory, then the exec. Never returns. */
__attribute__((noreturn)) static void become_job(const int *job_fds, int nfds, int cwd_fd, int err_fd, const int *go, const char *file, char **argv, char **envp) {
  /* Run only once Node has the job's pid: the spawner writes a byte on `go` after the pid message.
     Should the spawner die first, the pipe ends empty and nothing runs, so Node, which then starts
     the job itself, never starts it twice. */
  sys(__NR_close, go[1], 0, 0);
  char byte;
  long n;
  do n = sys(__NR_read, go[0], &byte, 1);
  while (n == -EINTR_NR);
  if (n != 1) quit(125);
  sys(__NR_close, go[0], 0, 0);
  unsigned long none = 0;
  sys6(__NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&none, 0, 8, 0, 0);
  long r = sys(__NR_setsid, 0, 0, 0);
  if (r >= 0) r = sys(__NR_fchdir, cwd_fd, 0, 0);
  /* Every source above the targets first, so placing one never closes another. */
  int high[FDS_MAX + 1];
  for (int k = 0; k < nfds && r >= 0; k++) {
    high[k] = job_fds[k] < 0 ? -1 : (int)sys(__NR_fcntl, job_fds[k], F_DUPFD_CLOEXEC, 64);
    if (job_fds[k] >= 0 && high[k] < 0) r = high[k];
  }
  if (r >= 0) r = high[nfds] = (int)sys(__NR_fcntl, err_fd, F_DUPFD_CLOEXEC, 64);
  for (int k = 0; k < nfds && r >= 0; k++) {
    if (high[k] >= 0) r = sys(__NR_dup3, high[k], k, 0);
    else sys(__NR_close, k, 0, 0);
  }
  if (r >= 0) r = sys(__NR_dup3, high[nfds], nfds, O_CLOEXEC);
  if (r >= 0) {
    err_fd = nfds;
    sys(__NR_close_range, (unsigned)nfds + 1, ~0U, 0);
    r = sys(__NR_execve, file, argv, envp);
  }
  int err = (int)-r;
  sys(__NR_write, err_fd, &err, sizeof err);
  quit(127);
}

static void start_job(const unsigned char *p, const unsigned char *end) {
  if (end - p < 8) return;
  unsigned id = read_u32(p), nfds = read_u32(p + 4);
  p += 8;
  if (nfds > FDS_MAX || end - p < (long)nfds + 8) return send_error(id, -EINVAL_NR);
  const unsigned char *kinds = p;
  p += nfds;
  unsigned argc = read_u32(p), envc = read_u32(p + 4);
  p += 8;
  if (argc < 1 || argc + envc + 2 > STRINGS_MAX) return send_error(id, -EINVAL_NR);
  /* FILE, CWD, then ARGC arguments and ENVC variables, each NUL-terminated inside the request. */
  unsigned n_strings = 2 + argc + envc;
  for (unsigned k = 0; k < n_strings; k++) {
    const unsigned char *s = p;
    while (p < end && *p) p++;
    if (p == end) return send_error(id, -EINVAL_NR);
    p++;
    strings[k + (k >= 2 + argc ? 1 : 0)] = (const char *)s;
  }
  const char *file = strings[0], *cwd = strings[1];
  char **argv = (char **)&strings[2];
  strings[2 + argc] = 0;
  char **envp = (char **)&strings[3 + argc];
  strings[3 + argc + envc] = 0;
  if (n_children == CHILDREN_MAX) return send_error(id, -ENOSPC_NR);

  int job_fds[FDS_MAX], node_fds[FDS_MAX], errs[2] = {-1, -1}, go[2] = {-1, -1};
  long r = 0;
  for (unsigned k = 0; k < nfds; k++) job_fds[k] = node_fds[k] = -1;
  int cwd_fd = (int)sys(__NR_openat, AT_FDCWD, cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cwd_fd < 0) r = cwd_fd;
  for (unsigned k = 0; k < nfds && r >= 0; k++) {
    if (kinds[k] == 1) job_fds[k] = dev_null;
    if (kinds[k] != 2) continue;
    int pair[2];
    r = sys6(__NR_socketpair, AF_UNIX_NR, SOCK_STREAM_NR | SOCK_CLOEXEC_NR, 0, (long)pair, 0, 0);
    if (r < 0) break;
    node_fds[k] = pair[0], job_fds[k] = pair[1];
    /* Node's end is read by libuv, which takes the descriptor as it comes: it must not block. */
    r = sys(__NR_fcntl, pair[0], F_SETFL, O_RDWR | O_NONBLOCK);
  }
  if (r >= 0) r = sys(__NR_pipe2, errs, O_CLOEXEC, 0);
  if (r >= 0) r = sys(__NR_pipe2, go, O_CLOEXEC, 0);
  long pid = r < 0 ? r : sys6(__NR_clone, SIGCHLD_NR, 0, 0, 0, 0, 0);
  if (pid == 0) become_job(job_fds, (int)nfds, cwd_fd, errs[1], go, file, argv, envp);
  if (cwd_fd >= 0) sys(__NR_close, cwd_fd, 0, 0);
  for (unsigned k = 0; k < nfds; k++)
    if (job_fds[k] >= 0 && job_fds[k] != dev_null) sys(__NR_close, job_fds[k], 0, 0);
  if (errs[1] >= 0) sys(__NR_close, errs[1], 0, 0);
  if (go[0] >= 0) sys(__NR_close, go[0], 0, 0);
  if (pid < 0) {
    if (go[1] >= 0) sys(__NR_close, go[1], 0, 0);
    if (errs[0] >= 0) sys(__NR_close, errs[0], 0, 0);
    for (unsigned k = 0; k < nfds; k++)
      if (node_fds[k] >= 0) sys(__NR_close, node_fds[k], 0, 0);
    return send_error(id, pid);
  }
  children[n_children].pid = pid, children[n_children].is_reported = 0, n_children++;
  for (unsigned k = 0; k < nfds; k++) {
    if (node_fds[k] < 0) continue;
    put("{\"cmd\":\"NODE_HANDLE\",\"type\":\"net.Socket\",\"msg\":{\"id\":"), put_num(id), put(",\"fd\":"), put_num(k), put("}}");
    send_message(node_fds[k]);
    sys(__NR_close, node_fds[k], 0, 0);
  }
  put("{\"id\":"), put_num(id), put(",\"pid\":"), put_num(pid), put("}");
  send_message(-1);
  /* Node has the pid: the job may run. Its exec closes the error pipe; an error number on it means
     the program never ran, and the job's first process then ends with 127 (reported as any end). */
  sys(__NR_write, go[1], "g", 1);
  sys(__NR_close, go[1], 0, 0);
  int err = 0;
  long n;
  do n = sys(__NR_read, errs[0], &err, sizeof err);
  while (n == -EINTR_NR);
  sys(__NR_close, errs[0], 0, 0);
}

/* ---- the loop -------------------------------------------------------------------------------- */

static unsigned char in[FRAME_MAX + 4];
static char scratch[4096];

__attribute__((noreturn)) void spawner(int fd) {
  channel = fd;
  /* Die with Node; and if Node already died, stdin has ended. */
  sys6(__NR_prctl, PR_SET_PDEATHSIG, SIGKILL_NR, 0, 0, 0, 0);
  dev_null = (int)sys(__NR_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
  unsigned long mask = 1UL << (SIGCHLD_NR - 1);
  sys6(__NR_rt_sigprocmask, 0 /* SIG_BLOCK */, (long)&mask, 0, 8, 0, 0);
  int sfd = (int)sys6(__NR_signalfd4, -1, (long)&mask, 8, O_CLOEXEC | O_NONBLOCK, 0, 0);
  if (dev_null < 0 || sfd < 0 || sys(__NR_fcntl, channel, F_SETFD, FD_CLOEXEC) < 0) quit(125);
  put("{\"ready\":1}");
  send_message(-1);

  size_t have = 0;
  for (;;) {
    struct poll_fd fds[3] = {{0, 1 /* POLLIN */, 0}, {channel, 1, 0}, {sfd, 1, 0}};
    long pr = sys6(__NR_ppoll, (long)fds, 3, 0, 0, 8, 0);
    if (pr < 0 && pr != -EINTR_NR) quit(125);
    if (fds[2].revents) {
      char info[128];
      while (sys(__NR_read, sfd, info, sizeof info) == (long)sizeof info) continue;
      report_ended();
    }
    if (fds[1].revents) {
      /* Node's acknowledgements of the descriptors it took; nothing else comes this way. */
      long n = sys(__NR_read, channel, scratch, sizeof scratch);
      if (n == 0 || (n < 0 && n != -EINTR_NR && n != -11 /* EAGAIN */)) quit(0);
    }
    if (fds[0].revents == 0) continue;
    long n = sys(__NR_read, 0, in + have, sizeof in - have);
    if (n == 0 || (n < 0 && n != -EINTR_NR)) quit(0);
    if (n < 0) continue;
    have += (size_t)n;
    size_t at = 0;
    while (have - at >= 4) {
      size_t len_ = read_u32(in + at);
      if (len_ > FRAME_MAX || len_ < 1) quit(125);
      if (have - at - 4 < len_) break;
      const unsigned char *body = in + at + 4, *end = body + len_;
      if (body[0] == 'S') start_job(body + 1, end);
      else if (body[0] == 'R' && len_ >= 5) reap((long)read_u32(body + 1));
      at += 4 + len_;
    }
    for (size_t k = at; k < have; k++) in[k - at] = in[k];
    have -= at;
  }
}
