/*
 * hands-confine --peer / --tcp-peer: who is on the other end of a socket the server accepted.
 * Node cannot read SO_PEERCRED, nor tell which process holds the other end of a loopback TCP
 * connection, so a server that must know (the attach socket, the HTTP front door) asks here:
 *
 *   --peer                       the UNIX socket on stdin: its peer as the kernel recorded it when
 *                                it connected (SO_PEERCRED, pinned by SO_PEERPIDFD where the kernel
 *                                has it, else by pidfd_open at once);
 *   --tcp-peer SERVER CLIENT     the loopback TCP connection from port CLIENT to port SERVER: the
 *                                process holding the client's socket (/proc/net/tcp{,6} for its
 *                                inode, then the descriptors of every process this one may see).
 *
 * It prints, one per line (`pid 0`, and for TCP the socket owner's `uid`, when no process could be
 * found):
 *
 *   pid P / uid U / gid G        the peer
 *   nnp 0|1                      whether it runs with no_new_privs (every sandboxed job does)
 *   seccomp N                    how many seccomp filters it runs under (every hands job: one more
 *                                than the server that started it)
 *   pidns N                      how deep in pid namespaces it is (a bubblewrap job: one deeper)
 *   relay 0|1                    whether one of its ancestors is a hands job's relay
 *   cgroup PATH                  its cgroup v2 path ("0::" line), or "cgroup ?" unreadable
 *   marker 0|1|?                 whether HANDS_JOB is in its environment (? unreadable)
 *   alive 0|1                    whether it was still the same process after those reads
 *
 * The peer is read through /proc only while a pidfd holds it, and `alive` says whether it still
 * lived after: a pid reused by another process in between is never described in its place.
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

/* The line of /proc/PID/status that starts with `key` (e.g. "NoNewPrivs:"), after the key and blanks; null when absent. */
static const char *status_line(long pid, const char *key) {
  char path[64];
  proc_path(path, pid, "status");
  long n = read_file(path, buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = 0;
  size_t k = len(key);
  for (long i = 0; i < n; i++) {
    if ((i == 0 || buf[i - 1] == '\n') && starts(buf + i, key, k)) {
      const char *p = buf + i + k;
      while (*p == ' ' || *p == '\t') p++;
      return p;
    }
  }
  return 0;
}

/* The first number of a status line, or -1. */
static long status_number(long pid, const char *key) {
  const char *p = status_line(pid, key);
  unsigned long long v;
  return p != 0 && parse_u64(&p, &v) ? (long)v : -1;
}

/* How many pid namespaces the process is in (the numbers of its NSpid line), or -1. */
static long pid_depth(long pid) {
  const char *p = status_line(pid, "NSpid:");
  if (p == 0) return -1;
  long count = 0;
  while (*p && *p != '\n') {
    unsigned long long v;
    if (!parse_u64(&p, &v)) break;
    count++;
    while (*p == ' ' || *p == '\t') p++;
  }
  return count;
}

/* The parent of `pid` (from /proc/PID/stat), or -1. */
static long parent_of(long pid) {
  char path[64];
  proc_path(path, pid, "stat");
  long n = read_file(path, buf, 1023);
  if (n <= 0) return -1;
  buf[n] = 0;
  long close_paren = -1;
  for (long i = 0; i < n; i++)
    if (buf[i] == ')') close_paren = i;
  if (close_paren < 0 || close_paren + 4 >= n) return -1;
  const char *p = buf + close_paren + 4;
  unsigned long long ppid;
  return parse_u64(&p, &ppid) ? (long)ppid : -1;
}

/* True when an ancestor of `pid` is a hands job's relay (its command is hands-confine). */
static int under_relay(long pid) {
  for (int depth = 0; depth < 4096; depth++) {
    pid = parent_of(pid);
    if (pid <= 1) return 0;
    char path[64], comm[32];
    proc_path(path, pid, "comm");
    long n = read_file(path, comm, sizeof comm - 1);
    if (n > 0) {
      comm[n] = 0;
      if (eq(comm, "hands-confine\n")) return 1;
    }
  }
  return 0;
}

static void put_cgroup(long pid) {
  char path[64];
  proc_path(path, pid, "cgroup");
  long n = read_file(path, buf, sizeof buf - 1);
  if (n > 0) {
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

__attribute__((noreturn)) static void describe(long pid, int pidfd, long uid, long gid) {
  put("pid "), put_num(pid), put("\nuid "), put_num(uid), put("\ngid "), put_num(gid), put("\n");
  put("nnp "), put_num(status_number(pid, "NoNewPrivs:")), put("\n");
  put("seccomp "), put_num(status_number(pid, "Seccomp_filters:")), put("\n");
  put("pidns "), put_num(pid_depth(pid)), put("\n");
  put("relay "), put(under_relay(pid) ? "1" : "0"), put("\n");
  put_cgroup(pid);
  put_marker(pid);
  /* Signal 0 through the pidfd: it fails once the process has exited. */
  long alive = pidfd >= 0 ? sys6(__NR_pidfd_send_signal, pidfd, 0, 0, 0, 0, 0) : -1;
  put("alive "), put(alive == 0 ? "1" : "0"), put("\n");
  flush(1);
  quit(0);
}

__attribute__((noreturn)) void print_peer(int fd) {
  struct peer_cred cred = {0, 0, 0};
  unsigned size = sizeof cred;
  long r = sys6(__NR_getsockopt, fd, SOL_SOCKET_NR, SO_PEERCRED_NR, (long)&cred, (long)&size, 0);
  if (r != 0 || cred.pid <= 0) die("stdin is not a connected UNIX socket", 0, r < 0 ? r : -22);
  int pidfd = -1;
  size = sizeof pidfd;
  if (sys6(__NR_getsockopt, fd, SOL_SOCKET_NR, SO_PEERPIDFD_NR, (long)&pidfd, (long)&size, 0) != 0) pidfd = (int)sys(__NR_pidfd_open, cred.pid, 0, 0);
  describe(cred.pid, pidfd, cred.uid, cred.gid);
}

/* The inode of the socket of the TCP connection from local port `client` to remote port `server`
 * in `table`, or 0; its owner's uid in *uid. */
static unsigned long long tcp_inode(const char *table, unsigned client, unsigned server, long *uid) {
  long n = read_file(table, buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = 0;
  /* Lines: "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ..." with
   * addresses as HEX:PORTHEX. */
  for (char *line = buf; *line;) {
    char *end = line;
    while (*end && *end != '\n') end++;
    char saved = *end;
    *end = 0;
    const char *fields[10];
    int k = 0;
    for (char *p = line; *p && k < 10;) {
      while (*p == ' ') p++;
      if (!*p) break;
      fields[k++] = p;
      while (*p && *p != ' ') p++;
    }
    if (k == 10) {
      unsigned ports[2] = {0, 0};
      for (int a = 0; a < 2; a++) {
        const char *p = fields[1 + a];
        while (*p && *p != ':') p++;
        if (*p == ':') p++;
        for (; (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'F'); p++) ports[a] = ports[a] * 16 + (unsigned)(*p <= '9' ? *p - '0' : *p - 'A' + 10);
      }
      if (ports[0] == client && ports[1] == server) {
        const char *p = fields[9], *u = fields[7];
        unsigned long long inode, owner;
        if (parse_u64(&u, &owner)) *uid = (long)owner;
        if (parse_u64(&p, &inode) && inode != 0) return inode;
      }
    }
    *end = saved;
    line = saved ? end + 1 : end;
  }
  return 0;
}

/* True when process `pid` holds a descriptor on socket `inode`. */
static int holds_socket(long pid, const char *want) {
  char path[64];
  proc_path(path, pid, "fd");
  int dir = (int)sys(__NR_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  char dents[4096] __attribute__((aligned(8)));
  int found = 0;
  for (;;) {
    long n = sys(__NR_getdents64, dir, dents, sizeof dents);
    if (n <= 0) break;
    for (long at = 0; at < n && !found;) {
      unsigned short reclen = *(unsigned short *)(dents + at + 16);
      const char *name = dents + at + 19;
      at += reclen;
      if (name[0] < '0' || name[0] > '9') continue;
      char link[64];
      long got = sys6(__NR_readlinkat, dir, (long)name, (long)link, sizeof link - 1, 0, 0);
      if (got <= 0) continue;
      link[got] = 0;
      if (eq(link, want)) found = 1;
    }
    if (found) break;
  }
  sys(__NR_close, dir, 0, 0);
  return found;
}

__attribute__((noreturn)) void print_tcp_peer(unsigned server, unsigned client) {
  long uid = -1;
  unsigned long long inode = tcp_inode("/proc/net/tcp", client, server, &uid);
  if (inode == 0) inode = tcp_inode("/proc/net/tcp6", client, server, &uid);
  if (inode == 0) {
    put("pid 0\n"), flush(1);
    quit(0);
  }
  char want[48] = "socket:[";
  size_t at = len(want);
  char digits[24];
  int nd = 0;
  do digits[nd++] = (char)('0' + inode % 10), inode /= 10;
  while (inode > 0);
  while (nd > 0) want[at++] = digits[--nd];
  want[at++] = ']', want[at] = 0;
  long self = sys(__NR_getpid, 0, 0, 0), server_pid = sys(__NR_getppid, 0, 0, 0);
  int proc = (int)sys(__NR_openat, AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) die("cannot list", "/proc", proc);
  static char dents[32768] __attribute__((aligned(8)));
  for (;;) {
    long n = sys(__NR_getdents64, proc, dents, sizeof dents);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      unsigned short reclen = *(unsigned short *)(dents + off + 16);
      const char *name = dents + off + 19;
      off += reclen;
      unsigned long long pid;
      const char *p = name;
      if (!parse_u64(&p, &pid) || *p || (long)pid == self || (long)pid == server_pid) continue;
      if (!holds_socket((long)pid, want)) continue;
      /* Pinned, then checked again: the descriptor is still this process's. */
      int pidfd = (int)sys(__NR_pidfd_open, pid, 0, 0);
      if (pidfd < 0 || !holds_socket((long)pid, want)) continue;
      long uid = status_number((long)pid, "Uid:"), gid = status_number((long)pid, "Gid:");
      describe((long)pid, pidfd, uid, gid);
    }
  }
  /* No process this one may see holds it: still, the table says whose socket it is. */
  put("pid 0\nuid "), put_num(uid), put("\n"), flush(1);
  quit(0);
}
