// A confined command that races its own threads against the guard's checks, for check.sh (built
// static on the host, bind-mounted into the image, run by shell_run):
//
//   race connect N SPIN   N connects through one sockaddr that a second thread keeps rewriting
//                         between /workspace/race.sock (this program listens there) and
//                         /run/db/db.sock (a server on the host, outside the roots); counts which
//                         listener answered
//   race metadata N SPIN  N fchmod(fd, 0600) and futimens(fd, 0) on a descriptor a second thread
//                         keeps swapping (dup2) between ./race-file (in the root) and ~/.profile
//                         (outside); then whether ~/.profile's mode or mtime changed
//
// SPIN is how long the second thread holds each value (empty loop iterations). Prints one line:
//   connect: N: local L, outside the roots O, EACCES E, other X
//   metadata: N: fchmod D done, E EACCES; futimens D done, E EACCES; other X; ~/.profile changed|unchanged
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define INSIDE "/workspace/race.sock"
#define OUTSIDE "/run/db/db.sock"
#define SWAPPED 50

static volatile int stop;
static int spin;
static struct sockaddr_un target;
static int inside_fd, outside_fd;

static void hold(void) {
  __asm__ volatile("" ::: "memory");
  for (volatile int i = 0; i < spin; i++) {
  }
  __asm__ volatile("" ::: "memory");
}

static void *flip_path(void *arg) {
  (void)arg;
  while (!stop) {
    memset(target.sun_path, 0, sizeof target.sun_path);
    strcpy(target.sun_path, OUTSIDE);
    hold();
    strcpy(target.sun_path, INSIDE);
    hold();
  }
  return NULL;
}

static void *serve(void *arg) {
  int listener = *(int *)arg;
  for (;;) {
    int c = accept(listener, NULL, NULL);
    if (c < 0) continue;
    (void)!write(c, "local\n", 6);
    close(c);
  }
  return NULL;
}

static int race_connect(int n) {
  unlink(INSIDE);
  int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un own = {.sun_family = AF_UNIX};
  strcpy(own.sun_path, INSIDE);
  if (bind(listener, (struct sockaddr *)&own, sizeof own) != 0 || listen(listener, 128) != 0) {
    perror("race: listen on " INSIDE);
    return 2;
  }
  pthread_t server, flipper;
  pthread_create(&server, NULL, serve, &listener);
  target.sun_family = AF_UNIX;
  strcpy(target.sun_path, INSIDE);
  pthread_create(&flipper, NULL, flip_path, NULL);
  int local = 0, outside = 0, refused = 0, other = 0;
  for (int i = 0; i < n; i++) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&target, sizeof target) == 0) {
      char reply[64] = {0};
      (void)!read(s, reply, sizeof reply - 1);
      if (strncmp(reply, "local", 5) == 0)
        local++;
      else if (reply[0] != 0)
        outside++;
      else
        other++;
    } else if (errno == EACCES) {
      refused++;
    } else {
      other++;
    }
    close(s);
  }
  stop = 1;
  pthread_join(flipper, NULL);
  unlink(INSIDE);
  printf("connect: %d: local %d, outside the roots %d, EACCES %d, other %d\n", n, local, outside, refused, other);
  return 0;
}

static void *flip_fd(void *arg) {
  (void)arg;
  while (!stop) {
    dup2(outside_fd, SWAPPED);
    hold();
    dup2(inside_fd, SWAPPED);
    hold();
  }
  return NULL;
}

static int race_metadata(int n) {
  char profile[4096];
  snprintf(profile, sizeof profile, "%s/.profile", getenv("HOME") ? getenv("HOME") : "");
  struct stat before, after;
  if (stat(profile, &before) != 0) {
    perror(profile);
    return 2;
  }
  close(open("race-file", O_CREAT | O_WRONLY, 0644));
  inside_fd = open("race-file", O_RDONLY);
  outside_fd = open(profile, O_RDONLY);
  if (inside_fd < 0 || outside_fd < 0) {
    perror("race: open");
    return 2;
  }
  dup2(inside_fd, SWAPPED);
  pthread_t flipper;
  pthread_create(&flipper, NULL, flip_fd, NULL);
  int mode_done = 0, mode_refused = 0, times_done = 0, times_refused = 0, other = 0;
  const struct timespec epoch[2] = {{0, 0}, {0, 0}};
  for (int i = 0; i < n; i++) {
    if (fchmod(SWAPPED, 0600) == 0)
      mode_done++;
    else if (errno == EACCES)
      mode_refused++;
    else
      other++;
    if (futimens(SWAPPED, epoch) == 0)
      times_done++;
    else if (errno == EACCES)
      times_refused++;
    else
      other++;
  }
  stop = 1;
  pthread_join(flipper, NULL);
  stat(profile, &after);
  int changed = (after.st_mode & 07777) != (before.st_mode & 07777) || after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
                after.st_mtim.tv_nsec != before.st_mtim.tv_nsec;
  unlink("race-file");
  printf("metadata: %d: fchmod %d done, %d EACCES; futimens %d done, %d EACCES; other %d; ~/.profile %s\n", n, mode_done,
         mode_refused, times_done, times_refused, other, changed ? "changed" : "unchanged");
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: race connect|metadata N SPIN\n");
    return 2;
  }
  int n = atoi(argv[2]);
  spin = atoi(argv[3]);
  if (strcmp(argv[1], "connect") == 0) return race_connect(n);
  if (strcmp(argv[1], "metadata") == 0) return race_metadata(n);
  fprintf(stderr, "usage: race connect|metadata N SPIN\n");
  return 2;
}
