/*
 * utf8.h — UTF-8 as the parts need it, in one place: a code point encoded
 * (Python's strings read from memory, NVTX's wide names), a sequence checked
 * (RFC 3629: no overlong forms, no surrogates — JSON output, names stored
 * from a program's memory), a string cut without splitting a character.
 */
#ifndef INGERO_UTF8_H
#define INGERO_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* c (below 0x110000) encoded at out: its bytes, 0 when cap is short. */
static inline size_t ingero_utf8_put(char *out, size_t cap, uint32_t c)
{
	char b[4];
	size_t n;
	if (c < 0x80) {
		b[0] = (char)c, n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3f)), n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12), b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f)), n = 3;
	} else {
		b[0] = (char)(0xf0 | (c >> 18 & 7)), b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f)), b[3] = (char)(0x80 | (c & 0x3f)), n = 4;
	}
	if (n > cap)
		return 0;
	memcpy(out, b, n);
	return n;
}

/* Length of the valid UTF-8 sequence at s (NUL-terminated: a NUL ends any
 * sequence), 0 when invalid. */
static inline int ingero_utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!n || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;   /* overlong or surrogate */
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

/* Up to max bytes of s, not cutting a UTF-8 sequence. */
static inline size_t ingero_utf8_cut(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);
	if (n <= max)
		return n;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

#endif
