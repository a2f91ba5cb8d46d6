// Bounds how many test cases of this test process run at once, before Swift Testing starts.
//
// Swift Testing otherwise starts every test of the run at once: 417 tests, each with a database
// to create, clients to connect, some a service or a cluster of their own to start. On a 2-core
// machine that ran 20 to 30 processes at a time, a new connection to the shared test cluster
// took 0.8 s at the median to authenticate and up to 6 s at the top, and tests failed on the
// 5 s connect timeout, a different one each run. With six at a time (three a core) the median
// was 9 ms, the longest 188 ms, and the whole run ended sooner (240 s against 250 to 300 s).
//
// It runs as the binary loads, before `main`, where Swift code cannot; a width already set in
// the environment (SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH) is kept. Swift Testing's
// --experimental-maximum-parallelization-width wins over the environment, and this process
// cannot read it: TestRunWidthTests holds the run to the environment's width, so with a wider
// flag it fails.
#include "TestRunWidth.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const width_variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";

__attribute__((constructor)) static void bound_the_test_run_width(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char width[24];
    snprintf(width, sizeof width, "%ld", 3 * (cores > 0 ? cores : 1));
    setenv(width_variable, width, 0);
}

int shortcut_sync_test_run_width(void) {
    const char *width = getenv(width_variable);
    return width ? atoi(width) : 0;
}
