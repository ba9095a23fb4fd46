/* spawn_time.c — a whole process, as a shell or git pays for it: posix_spawn, then waitpid; the median and the
 * 90th percentile of RUNS runs (after 3 not counted), in milliseconds, as one JSON object. The command's output goes
 * to /dev/null; a run that exits non-zero stops the measurement (exit 1). Input, if INPUT_FILE is given, is that
 * file on stdin (a credential helper's request). Run by `make bench`; asserts nothing.
 *
 * Usage: spawn_time RUNS INPUT_FILE|- COMMAND [ARG…] */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int runs = argc > 3 ? atoi(argv[1]) : 0, k;
    double *samples;
    if (runs < 1 || runs > 100000) {
        fprintf(stderr, "usage: spawn_time RUNS INPUT_FILE|- COMMAND [ARG...]\n");
        return 2;
    }
    samples = calloc((size_t)runs, sizeof *samples);
    if (!samples) return 1;
    for (k = -3; k < runs; k++) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status = 0;
        double t0;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 0, strcmp(argv[2], "-") ? argv[2] : "/dev/null", O_RDONLY, 0);
        t0 = now_ms();
        if (posix_spawnp(&pid, argv[3], &fa, NULL, argv + 3, environ) != 0) {
            perror("posix_spawn");
            return 1;
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "spawn_time: %s failed (status %d)\n", argv[3], status);
            return 1;
        }
        if (k >= 0) samples[k] = now_ms() - t0;
        posix_spawn_file_actions_destroy(&fa);
    }
    qsort(samples, (size_t)runs, sizeof *samples, cmp_double);
    printf("{\"ms\":%.3f,\"p90_ms\":%.3f,\"runs\":%d}\n", samples[runs / 2], samples[runs * 9 / 10], runs);
    free(samples);
    return 0;
}
