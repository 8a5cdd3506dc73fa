/*
 * python_frames.c — placeholder until the CPython reader lands.
 */
#include "python_frames.h"

int ingero_python_frames(struct ingero_pyframe *out, int max, char *buf, size_t cap)
{
	(void)out; (void)max; (void)buf; (void)cap;
	return 0;
}
