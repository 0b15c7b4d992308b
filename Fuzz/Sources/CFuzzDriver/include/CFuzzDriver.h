#ifndef LUPINE_CFUZZDRIVER_H
#define LUPINE_CFUZZDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs with their own main (LLVM 12 and later): parses the
/// command line as libFuzzer does and runs `callback` on each input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
