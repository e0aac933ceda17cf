/*
 * hands-confine --peer: who is on the other end of the UNIX socket on stdin. Node cannot read
 * SO_PEERCRED, so a server that must know (the attach socket) runs this with the accepted socket
 * as stdin. It prints, one per line:
 *
 *   pid P / uid U / gid G        the peer's credentials when it connected (SO_PEERCRED)
 *   nnp 0|1                      whether the peer runs with no_new_privs (every sandboxed job does)
 *   cgroup PATH                  the peer's cgroup v2 path ("0::" line), or "cgroup ?" unreadable
 *   marker 0|1|?                 whether HANDS_JOB is in the peer's environment (? unreadable)
 *   alive 0|1                    whether the peer was still the same process after those reads
 *
 * The peer is pinned by a pidfd (SO_PEERPIDFD where the kernel has it, else pidfd_open at once),
 * and read through /proc only while that pidfd says it lives, so a pid reused by another process
 * in between is never described in its place. Exit 0, or 125 when stdin is not a connected socket.
 */
#include "hands-confine.h"

#include <linux/fcntl.h>

#define SOL_SOCKET_NR 1
#define SO_PEERCRED_NR 17
#define SO_PEERPIDFD_NR 77

struct peer_cred {
  int pid;
  unsigned uid, gid;
};

static char buf[65536];

/* The value of `key` (e.g. "NoNewPrivs:") in /proc/PID/status, or -1. */
static long status_field(long pid, const char *key) {
  char path[64];
  proc_path(path, pid, "status");
  long n = read_file(path, buf, sizeof buf - 1);
  if (n <= 0) return -1;
  buf[n] = 0;
  size_t k = len(key);
  for (long i = 0; i < n; i++) {
    if ((i == 0 || buf[i - 1] == '\n') && starts(buf + i, key, k)) {
      const char *p = buf + i + k;
      while (*p == ' ' || *p == '\t') p++;
      unsigned long long v;
      return parse_u64(&p, &v) ? (long)v : -1;
    }
  }
  return -1;
}

static void put_cgroup(long pid) {
  char path[64];
  proc_path(path, pid, "cgroup");
  long n = read_file(path, buf, sizeof buf - 1);
  if (n <= 0) {
    put("cgroup ?\n");
    return;
  }
  buf[n] = 0;
  for (long i = 0; i < n; i++) {
    if ((i == 0 || buf[i - 1] == '\n') && starts(buf + i, "0::", 3)) {
      long end = i;
      while (end < n && buf[end] != '\n') end++;
      buf[end] = 0;
      put("cgroup "), put(buf + i + 3), put("\n");
      return;
    }
  }
  put("cgroup ?\n");
}

static void put_marker(long pid) {
  char path[64];
  proc_path(path, pid, "environ");
  long n = read_file(path, buf, sizeof buf);
  if (n < 0) {
    put("marker ?\n");
    return;
  }
  const char *needle = "HANDS_JOB=";
  size_t k = len(needle);
  for (long i = 0; i + (long)k <= n; i++) {
    if ((i == 0 || buf[i - 1] == 0) && starts(buf + i, needle, k)) {
      put("marker 1\n");
      return;
    }
  }
  /* A full buffer may have cut the environment short: say so rather than "no marker". */
  put(n == (long)sizeof buf ? "marker ?\n" : "marker 0\n");
}

__attribute__((noreturn)) void print_peer(int fd) {
  struct peer_cred cred = {0, 0, 0};
  unsigned size = sizeof cred;
  long r = sys6(__NR_getsockopt, fd, SOL_SOCKET_NR, SO_PEERCRED_NR, (long)&cred, (long)&size, 0);
  if (r != 0 || cred.pid <= 0) die("stdin is not a connected UNIX socket", 0, r < 0 ? r : -22);
  int pidfd = -1;
  size = sizeof pidfd;
  if (sys6(__NR_getsockopt, fd, SOL_SOCKET_NR, SO_PEERPIDFD_NR, (long)&pidfd, (long)&size, 0) != 0) pidfd = (int)sys(__NR_pidfd_open, cred.pid, 0, 0);
  put("pid "), put_num(cred.pid), put("\nuid "), put_num(cred.uid), put("\ngid "), put_num(cred.gid), put("\n");
  put("nnp "), put_num(status_field(cred.pid, "NoNewPrivs:")), put("\n");
  put_cgroup(cred.pid);
  put_marker(cred.pid);
  /* Signal 0 through the pidfd: it fails once the process the socket named has exited. */
  long alive = pidfd >= 0 ? sys6(__NR_pidfd_send_signal, pidfd, 0, 0, 0, 0, 0) : -1;
  put("alive "), put(alive == 0 ? "1" : "0"), put("\n");
  flush(1);
  quit(0);
}
