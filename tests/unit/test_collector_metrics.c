/*
 * test_collector_metrics.c — the /metrics server's answers (collector/metrics.c):
 * GET and HEAD of /metrics (a query string allowed) get the page in the text
 * exposition format, other paths 404, other methods 405, a request cut short or
 * garbage a 405 rather than a crash, and no page yet a comment, not an empty body.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../collector/metrics.h"

static char *answer(const char *req, const char *page, size_t *len)
{
	char *o = metrics_http_answer(req, strlen(req), page, len);
	assert_non_null(o);
	assert_int_equal(strlen(o), *len);
	return o;
}

static void get_metrics(void **state)
{
	(void)state;
	size_t len;
	char *o = answer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "ingero_up 1\n", &len);
	assert_non_null(strstr(o, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(o, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(o, "Content-Length: 12\r\n"));
	assert_string_equal(o + len - 12, "ingero_up 1\n");
	free(o);
	o = answer("GET /metrics?x=1 HTTP/1.0\r\n\r\n", "a 1\n", &len);
	assert_non_null(strstr(o, " 200 OK"));
	free(o);
	o = answer("HEAD /metrics HTTP/1.1\r\n\r\n", "a 1\n", &len);
	assert_non_null(strstr(o, "Content-Length: 4\r\n"));
	assert_string_equal(o + len - 4, "\r\n\r\n");   /* headers only */
	free(o);
	o = answer("GET /metrics HTTP/1.1\r\n\r\n", NULL, &len);
	assert_non_null(strstr(o, "# ingero-collector: no figures yet\n"));
	free(o);
}

static void refused(void **state)
{
	(void)state;
	size_t len;
	static const char *const req[][2] = {
		{ "GET / HTTP/1.1\r\n\r\n", "404 Not Found" },
		{ "GET /metricsx HTTP/1.1\r\n\r\n", "404 Not Found" },
		{ "POST /metrics HTTP/1.1\r\n\r\n", "405 Method Not Allowed" },
		{ "", "405 Method Not Allowed" },
		{ "\x01\x02\x03 garbage", "405 Method Not Allowed" },
		{ "GETGETGETGETGETGETGETGET /metrics", "405 Method Not Allowed" },
	};
	for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
		char *o = answer(req[i][0], "secret 1\n", &len);
		assert_non_null(strstr(o, req[i][1]));
		assert_null(strstr(o, "secret"));
		free(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(get_metrics),
		cmocka_unit_test(refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
