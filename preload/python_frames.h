/*
 * python_frames.h — the innermost Python frames of the calling thread, when
 * it runs CPython (3.10–3.13), read without taking the GIL.
 */
#ifndef INGERO_PRELOAD_PYTHON_FRAMES_H
#define INGERO_PRELOAD_PYTHON_FRAMES_H

#include <stddef.h>
#include <stdint.h>

struct ingero_pyframe {
	const char *file;     /* into the caller's string buffer, not NUL-terminated */
	const char *func;
	uint16_t file_len, func_len;
	uint32_t line;
};

#define INGERO_PY_FILE_MAX 255
#define INGERO_PY_FUNC_MAX 127
#define INGERO_PY_FRAMES_MAX 16

/* Up to max innermost frames into out, strings copied (UTF-8) into buf of
 * size cap; 0 when the thread is not running Python. */
int ingero_python_frames(struct ingero_pyframe *out, int max, char *buf, size_t cap);

/* A key of the same max innermost frames — each one's code object, its
 * file and name strings' addresses, its line table's address and print and
 * the bytecode offset it is at, mixed into h — without reading a string or
 * a line: the same key, the same frames (stack.c's memo).  0 when the
 * thread runs no Python, when a code object has no readable line table, or
 * before a first ingero_python_frames walk has proved the layout. */
uint64_t ingero_python_site(uint64_t h, int max);

/* 1: the calling thread is running Python code (it has a frame); 0: this is
 * a Python process, proved by a first walk, and the thread has none (a C++
 * thread: autograd's backward threads); -1: not known (no Python, or before
 * that first walk). */
int ingero_python_thread(void);

#endif
