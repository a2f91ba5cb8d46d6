#ifndef TEST_RUN_WIDTH_H
#define TEST_RUN_WIDTH_H

/// How many test cases Swift Testing runs at once in this process, as set before it started
/// (0 when nothing set it).
int shortcut_sync_test_run_width(void);

#endif
