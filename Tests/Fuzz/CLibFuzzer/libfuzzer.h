/* libFuzzer's driver, for a program that keeps its own main (SwiftPM links every executable with its own entry
 * point). Linked in by -sanitize=fuzzer; only the FUZZING build of nativeauth-fuzz refers to it. */
#ifndef NATIVEAUTH_LIBFUZZER_H
#define NATIVEAUTH_LIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
