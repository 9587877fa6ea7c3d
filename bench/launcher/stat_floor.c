/* lexpack-bench-stat-floor: the least a cache hit that checks its inputs by
 * stat can cost on this machine. It does nothing but stat(2) each path listed
 * in a file (one per line), each relative to an O_PATH handle of its
 * directory as lexpack's hit does, and prints nothing: missing paths are
 * stat'ed too, as failed include probes are. Linked like lexpack (static PIE
 * when the toolchain allows), so that starting it costs what starting lexpack
 * does, less lexpack's own size.
 *
 * usage: lexpack-bench-stat-floor LIST
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lexpack-bench-stat-floor LIST\n");
    return 2;
  }
  FILE* list = fopen(argv[1], "r");
  if (!list) {
    perror(argv[1]);
    return 1;
  }
  char line[4096], dir[4096] = "";
  int dir_fd = -1;
  struct stat st;
  while (fgets(line, sizeof line, list)) {
    line[strcspn(line, "\n")] = '\0';
    char* slash = strrchr(line, '/');
    if (!slash || slash == line) {
      stat(line, &st);
      continue;
    }
    *slash = '\0';
    if (strcmp(dir, line) != 0) {
      if (dir_fd >= 0) close(dir_fd);
      dir_fd = open(line, O_PATH | O_DIRECTORY | O_CLOEXEC);
      snprintf(dir, sizeof dir, "%s", line);
    }
    fstatat(dir_fd, slash + 1, &st, 0);
  }
  fclose(list);
  return 0;
}
