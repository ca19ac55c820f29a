/* What a linker's copy of the data costs, by where source and destination sit in a page.
 *
 * Usage: copy_offsets INPUT OUTPUT [MIB]
 *
 * Maps INPUT (at least MIB MiB + 8 KiB; default 256) read-only and touches every page, then
 * for each distance D in {0, 64, 192, 256, 1024, 2048} bytes: creates OUTPUT, sizes it,
 * maps it shared and writable, and copies MIB MiB with memcpy, in 16 MiB pieces as lld does,
 * from INPUT at offset 4096 - D to OUTPUT at offset 0 (a page), so that destination minus
 * source is D modulo 4096. Prints the page faults and the time of each copy. This is what
 * linkers do: they map their inputs and their output and memcpy each input section.
 * Part of bench/embed-pieces.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long faults(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt + r.ru_majflt;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s INPUT OUTPUT [MIB]\n", argv[0]);
    return 2;
  }
  size_t len = (size_t)(argc > 3 ? atol(argv[3]) : 256) << 20;
  const size_t piece = (size_t)16 << 20;
  int in = open(argv[1], O_RDONLY);
  if (in < 0) {
    perror(argv[1]);
    return 1;
  }
  off_t in_len = lseek(in, 0, SEEK_END);
  if (in_len < (off_t)(len + 8192)) {
    fprintf(stderr, "%s: needs at least %zu bytes\n", argv[1], len + 8192);
    return 1;
  }
  const char *src = mmap(NULL, (size_t)in_len, PROT_READ, MAP_PRIVATE, in, 0);
  if (src == MAP_FAILED) {
    perror("mmap input");
    return 1;
  }
  volatile char sink = 0;
  for (off_t i = 0; i < in_len; i += 4096) sink += src[i];

  const long distances[] = {0, 64, 192, 256, 1024, 2048};
  printf("%8s %12s %9s\n", "distance", "page faults", "seconds");
  for (size_t k = 0; k < sizeof distances / sizeof distances[0]; k++) {
    long d = distances[k];
    unlink(argv[2]);
    int out = open(argv[2], O_RDWR | O_CREAT | O_EXCL, 0644);
    if (out < 0 || ftruncate(out, (off_t)len) != 0) {
      perror(argv[2]);
      return 1;
    }
    char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, out, 0);
    if (dst == MAP_FAILED) {
      perror("mmap output");
      return 1;
    }
    const char *from = src + 4096 - d;
    long f0 = faults();
    double t0 = now();
    for (size_t at = 0; at < len; at += piece) {
      memcpy(dst + at, from + at, len - at < piece ? len - at : piece);
    }
    double t1 = now();
    long f1 = faults();
    printf("%8ld %12ld %9.3f\n", d, f1 - f0, t1 - t0);
    munmap(dst, len);
    close(out);
  }
  unlink(argv[2]);
  return 0;
}
