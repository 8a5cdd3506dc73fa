/*
 * metrics.c — the /metrics page and its HTTP server (metrics.h).
 *
 * The page is a string owned here, replaced whole by the refresher; the
 * server copies it under `lock` and writes the copy, so the lock is held
 * for a memcpy only.  The server takes one connection at a time: a
 * scraper (Prometheus) sends one request per scrape, and a client that
 * sends nothing or reads nothing is dropped after a second.  Only GET (and
 * HEAD) of /metrics is answered; anything else gets 404 or 405.
 */
#include "metrics.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX 4096

struct metrics {
	int fd;
	unsigned port;
	unsigned refresh_ms;
	metrics_figures_fn fn;
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	char *page;
	volatile int stop_server, stop_refresh;
	pthread_t server, refresher;
	int refresher_started;
};

static const char empty_page[] = "# ingero-collector: no figures yet\n";

char *metrics_http_answer(const char *req, size_t len, const char *page, size_t *outlen)
{
	char method[16] = "", path[256] = "";
	const char *status = "200 OK", *body = page ? page : empty_page;
	int head = 0;
	/* the request line: METHOD SP PATH SP VERSION */
	size_t i = 0, k = 0;
	while (i < len && req[i] != ' ' && k + 1 < sizeof method)
		method[k++] = req[i++];
	method[k] = 0;
	k = 0;
	if (i < len && req[i] == ' ')
		i++;
	while (i < len && req[i] != ' ' && req[i] != '\r' && req[i] != '\n' && k + 1 < sizeof path)
		path[k++] = req[i++];
	path[k] = 0;
	char *q = strchr(path, '?');
	if (q)
		*q = 0;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = "405 Method Not Allowed";
		body = "only GET /metrics\n";
	} else if (strcmp(path, "/metrics")) {
		status = "404 Not Found";
		body = "only GET /metrics\n";
	}
	head = !strcmp(method, "HEAD");
	size_t blen = strlen(body);
	int ok = !strcmp(status, "200 OK");
	char hdr[256];
	int n = snprintf(hdr, sizeof hdr,
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n", status,
			 ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8", blen,
			 ok ? "" : "Allow: GET, HEAD\r\n");
	char *out = malloc((size_t)n + (head ? 0 : blen) + 1);
	if (!out)
		return NULL;
	memcpy(out, hdr, (size_t)n);
	if (!head)
		memcpy(out + n, body, blen);
	*outlen = (size_t)n + (head ? 0 : blen);
	out[*outlen] = 0;
	return out;
}

static void serve_one(struct metrics *m, int c)
{
	struct timeval tv = { 1, 0 };
	char req[REQ_MAX];
	size_t len = 0;
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	/* the request line and headers, up to the blank line (or the cap) */
	while (len < sizeof req - 1) {
		ssize_t r = recv(c, req + len, sizeof req - 1 - len, 0);
		if (r <= 0)
			break;
		len += (size_t)r;
		req[len] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	if (!len)
		return;
	pthread_mutex_lock(&m->lock);
	char *page = m->page ? strdup(m->page) : NULL;
	pthread_mutex_unlock(&m->lock);
	size_t olen = 0;
	char *out = metrics_http_answer(req, len, page, &olen);
	free(page);
	for (size_t o = 0; out && o < olen;) {
		ssize_t w = send(c, out + o, olen - o, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		o += (size_t)w;
	}
	free(out);
}

static void *server_main(void *arg)
{
	struct metrics *m = arg;
	while (!m->stop_server) {
		struct pollfd p = { m->fd, POLLIN, 0 };
		if (poll(&p, 1, 200) <= 0)
			continue;
		int c = accept(m->fd, NULL, NULL);
		if (c < 0)
			continue;
		serve_one(m, c);
		close(c);
	}
	return NULL;
}

static void set_page(struct metrics *m, char *page)
{
	if (!page)
		return;
	pthread_mutex_lock(&m->lock);
	char *old = m->page;
	m->page = page;
	pthread_mutex_unlock(&m->lock);
	free(old);
}

static void *refresher_main(void *arg)
{
	struct metrics *m = arg;
	pthread_mutex_lock(&m->lock);
	while (!m->stop_refresh) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += m->refresh_ms / 1000;
		until.tv_nsec += (long)(m->refresh_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!m->stop_refresh && pthread_cond_timedwait(&m->wake, &m->lock, &until) != ETIMEDOUT)
			;
		if (m->stop_refresh)
			break;
		pthread_mutex_unlock(&m->lock);
		set_page(m, m->fn(m->arg, 0));   /* (the analysis runs unlocked) */
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

static int listen_on(const char *addr, unsigned *port, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon || !colon[1]) {
		snprintf(err, errlen, "--metrics %s: expected HOST:PORT (127.0.0.1:9464)", addr);
		return -1;
	}
	size_t hl = (size_t)(colon - addr);
	if (hl >= sizeof host)
		hl = sizeof host - 1;
	memcpy(host, addr, hl);
	host[hl] = 0;
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {   /* [::1]:9464 */
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "--metrics %s: %s", addr, gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 8)) {
			snprintf(err, errlen, "--metrics %s: cannot listen: %s", addr, strerror(errno));
			close(fd);
			fd = -1;
			continue;
		}
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						       : ((struct sockaddr_in *)&ss)->sin_port);
	}
	freeaddrinfo(res);
	return fd;
}

struct metrics *metrics_start(const char *addr, unsigned refresh_ms, metrics_figures_fn fn, void *arg, char *err,
			      size_t errlen)
{
	struct metrics *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((m->fd = listen_on(addr, &m->port, err, errlen)) < 0) {
		free(m);
		return NULL;
	}
	m->refresh_ms = refresh_ms;
	m->fn = fn;
	m->arg = arg;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->wake, NULL);
	if (pthread_create(&m->server, NULL, server_main, m)) {
		snprintf(err, errlen, "--metrics: cannot start its thread");
		close(m->fd);
		free(m);
		return NULL;
	}
	m->refresher_started = refresh_ms && pthread_create(&m->refresher, NULL, refresher_main, m) == 0;
	return m;
}

unsigned metrics_port(const struct metrics *m)
{
	return m ? m->port : 0;
}

void metrics_finish(struct metrics *m, double linger_s, volatile int *stop)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop_refresh = 1;
	pthread_cond_broadcast(&m->wake);
	pthread_mutex_unlock(&m->lock);
	if (m->refresher_started)
		pthread_join(m->refresher, NULL);
	set_page(m, m->fn(m->arg, 1));
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		if (el >= linger_s || (stop && *stop))
			break;
		struct timespec nap = { 0, 50000000 };
		nanosleep(&nap, NULL);
	}
	m->stop_server = 1;
	pthread_join(m->server, NULL);
	close(m->fd);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->wake);
	free(m->page);
	free(m);
}
