/*
 * intake_socket.c — the intake's nng socket: listening, the peers as they
 * connect, and a watch on the listener.
 *
 * Listening comes before the collector touches its file: a second
 * collector finds the endpoint taken and stops (intake_listen).  A
 * sender's pid namespace is read when it connects (on_connect), while it
 * surely lives.
 *
 * The watch (nng 1.5.2, Debian's): a connection closed before its SP
 * handshake fails the negotiation, and the transport hands that failure
 * (NNG_ECLOSED) to the socket's pending accept, which then takes "no
 * further action": the listener never takes another sender.  Any local
 * user can do it with connect() and close() on the socket.  So every
 * WATCH_MS the receiver looks at the listener's count of failed accepts
 * (nng's statistics, "other"); when it grew, the collector dials its own
 * endpoint and waits PROBE_MS for the listener to accept that: if it does
 * not, the listener is closed and made again (the senders connected to
 * it reconnect by themselves; what they were sending then counts as their
 * own drops), said on stderr, counted in --stats (listener_restarts).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pipeline0/push.h>

#include "ingero/config.h"
#include "ingero/exit.h"
#include "ingero/wire.h"
#include "intake_internal.h"
#include "tracer.h"

#define WATCH_MS 500
#define PROBE_MS 300

void intake_peer_namespace(struct intake *in, uint32_t pipe_id, struct sender *s)
{
	pthread_mutex_lock(&in->peers_lock);
	for (int i = 0; i < PEERS; i++) {
		const struct peer *e = &in->peers[i];

		if (e->pipe_id == pipe_id && e->pid == s->pid) {
			s->ns_pid = e->ns_pid;
			s->in_ns = e->in_ns;
		}
	}
	pthread_mutex_unlock(&in->peers_lock);
}

/* nng's pipe callbacks (one of its threads): a sender connected (its
 * namespace, now) or closed; counted for the drain (intake.h). */
static void on_close(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct intake *in = arg;

	(void)p;
	(void)ev;
	pthread_mutex_lock(&in->lock);
	in->st.open_pipes--;
	in->st.last_close_ns = mono_now_ns();
	pthread_mutex_unlock(&in->lock);
}

static void on_connect(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct intake *in = arg;
	uint64_t pid = 0;
	uint32_t inner = 0;
	int levels = 0;

	(void)ev;
	pthread_mutex_lock(&in->lock);
	in->st.open_pipes++;
	pthread_mutex_unlock(&in->lock);
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) || !pid || pid > INT32_MAX ||
	    identity_nspid((uint32_t)pid, &inner, &levels))
		return;
	pthread_mutex_lock(&in->peers_lock);
	in->peers[in->next_peer++ % PEERS] = (struct peer){ nng_pipe_id(p), (uint32_t)pid,
							    levels > 1 ? inner : (uint32_t)pid, levels > 1 };
	pthread_mutex_unlock(&in->peers_lock);
}


static void make_ipc_dir(const char *url)
{
	char dir[4096], *slash;

	if (strncmp(url, "ipc://", 6) != 0)
		return;
	snprintf(dir, sizeof dir, "%s", url + 6);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = 0;
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return;
	fprintf(stderr, "ingero-collector: cannot create %s: %s\n", dir, strerror(errno));
}

/* Whether a collector listens at an ipc:// path already: asked by dialing
 * it with nng, so that the other collector sees a whole handshake.  nng's
 * own check, inside nng_listener_start, connects and closes at once, and
 * a connection closed before its handshake stops nng 1.5's listener from
 * taking any later sender (the error reaches the socket's pending accept:
 * NNG_ECLOSED, "no further action") — the first collector would go on
 * recording nothing from new senders. */
static int ipc_in_use(const char *endpoint)
{
	struct stat st;
	nng_socket probe;
	int live;

	if (strncmp(endpoint, "ipc://", 6) != 0 || stat(endpoint + 6, &st) != 0 || !S_ISSOCK(st.st_mode))
		return 0;
	if (nng_push0_open(&probe))
		return 0;
	live = nng_dial(probe, endpoint, NULL, 0) == 0;
	nng_close(probe);
	return live;
}

/* A listener on the socket at endpoint, started: 0, or nng's error. */
static int listen_on(struct intake *in, const char *endpoint)
{
	int rv = nng_listener_create(&in->l, in->sock, endpoint);

	if (rv)
		return rv;
	if (strncmp(endpoint, "ipc://", 6) == 0)
		nng_listener_set_int(in->l, NNG_OPT_IPC_PERMISSIONS, 0666);
	rv = nng_listener_start(in->l, 0);
	if (rv)
		nng_listener_close(in->l);
	return rv;
}

struct intake *intake_listen(const char *endpoint, int *status)
{
	struct intake *in = calloc(1, sizeof(*in));
	int rv;

	*status = INGERO_EXIT_RUNTIME;
	if (!in || !(in->senders = calloc(MAX_SENDERS, sizeof(*in->senders)))) {
		free(in);
		fprintf(stderr, "ingero-collector: out of memory\n");
		return NULL;
	}
	in->parked_tail = &in->parked;
	pthread_mutex_init(&in->lock, NULL);
	pthread_mutex_init(&in->peers_lock, NULL);
	if ((rv = nng_pull0_open(&in->sock))) {
		fprintf(stderr, "ingero-collector: nng: %s\n", nng_strerror(rv));
		goto fail;
	}
	nng_pipe_notify(in->sock, NNG_PIPE_EV_ADD_POST, on_connect, in);
	nng_pipe_notify(in->sock, NNG_PIPE_EV_REM_POST, on_close, in);
	/* nng drops a message over this size before we see it, uncounted (it
	 * closes the pipe, which it also does for a clean close: its statistics
	 * cannot tell them apart), so it lets through four times what the wire
	 * allows and the decoder refuses and counts the excess as malformed */
	nng_socket_set_size(in->sock, NNG_OPT_RECVMAXSZ, (size_t)4 * INGERO_WIRE_MAX_MSG_BYTES);
	nng_socket_set_ms(in->sock, NNG_OPT_RECVTIMEO, 50);
	nng_socket_set_int(in->sock, NNG_OPT_RECVBUF, 1024);
	make_ipc_dir(endpoint);
	if (ipc_in_use(endpoint)) {
		fprintf(stderr, "ingero-collector: cannot listen on %s: another collector listens there\n",
			endpoint);
		*status = INGERO_EXIT_USAGE;
		goto fail_sock;
	}
	if ((rv = listen_on(in, endpoint))) {
		if (rv == NNG_EADDRINUSE)
			fprintf(stderr, "ingero-collector: cannot listen on %s: another collector "
				"listens there\n", endpoint);
		else
			fprintf(stderr, "ingero-collector: cannot listen on %s: %s\n", endpoint,
				nng_strerror(rv));
		/* in use, or not an address nng can listen on: the caller's mistake */
		if (rv == NNG_EADDRINUSE || rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP || rv == NNG_EINVAL)
			*status = INGERO_EXIT_USAGE;
		goto fail_sock;
	}
	if (!(in->endpoint = strdup(endpoint))) {
		fprintf(stderr, "ingero-collector: out of memory\n");
		goto fail_sock;
	}
	*status = 0;
	return in;
fail_sock:
	nng_close(in->sock);
fail:
	pthread_mutex_destroy(&in->lock);
	pthread_mutex_destroy(&in->peers_lock);
	free(in->senders);
	free(in);
	return NULL;
}


/* One of the listener's statistics (0 when nng keeps none). */
static uint64_t listener_stat(struct intake *in, const char *name)
{
	nng_stat *all, *l, *s;
	uint64_t v = 0;

	if (nng_stats_get(&all))
		return 0;
	if ((l = nng_stat_find_listener(all, in->l)) && (s = nng_stat_find(l, name)))
		v = nng_stat_value(s);
	nng_stats_free(all);
	return v;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Does the listener still take senders?  Ask it with a connection of our own. */
static int listener_takes(struct intake *in)
{
	uint64_t before = listener_stat(in, "accept");
	nng_socket probe;
	int took = 0;

	if (nng_push0_open(&probe))
		return 1;   /* cannot tell */
	if (nng_dial(probe, in->endpoint, NULL, 0) == 0)
		for (int i = 0; i < PROBE_MS / 10 && !took; i++) {
			took = listener_stat(in, "accept") > before;
			if (!took)
				sleep_ms(10);
		}
	else
		took = 1;   /* not even dialled: not the failure watched for */
	nng_close(probe);
	return took;
}

void intake_watch_listener(struct intake *in)
{
	uint64_t now = mono_now_ns(), other;
	int rv;

	if (now < in->watch_next)
		return;
	in->watch_next = now + WATCH_MS * 1000000ull;
	other = listener_stat(in, "other");
	if (other == in->watch_other)
		return;
	in->watch_other = other;
	if (listener_takes(in))
		return;
	nng_listener_close(in->l);
	rv = listen_on(in, in->endpoint);
	in->watch_other = rv ? 0 : listener_stat(in, "other");
	pthread_mutex_lock(&in->lock);
	in->st.listener_restarts++;
	pthread_mutex_unlock(&in->lock);
	fprintf(stderr, "ingero-collector: %s: nng stopped taking senders (a connection closed before its "
		"handshake): listening again%s%s\n", in->endpoint, rv ? " failed: " : "", rv ? nng_strerror(rv) : "");
}
