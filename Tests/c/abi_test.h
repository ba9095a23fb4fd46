/* abi_test.h — what the C ABI test's files (abi_test.c, abi_started.c) share: the check counters and CHECK. */
#ifndef ABI_TEST_H
#define ABI_TEST_H
#include <nativeauth.h>
#include <stdio.h>

extern int failures;
extern int checks;
/* A configuration that creates a client (its server address refuses connections). */
extern const char *GOOD;

#define CHECK(cond, what)                                                                        \
    do {                                                                                         \
        checks++;                                                                                \
        if (!(cond)) {                                                                           \
            failures++;                                                                          \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what);                       \
        }                                                                                        \
    } while (0)

/* abi_started.c: na_start, na_op_*, the event fd and na_client_dispatch. */
void started_calls(void);
void started_reentrant(void);

#endif
