// The declaration in include/CFuzzDriver.h is all this target provides; libFuzzer defines the
// function when the program is linked with -sanitize=fuzzer.
#include "CFuzzDriver.h"
