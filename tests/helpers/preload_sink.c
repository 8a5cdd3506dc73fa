/*
 * preload_sink.c — a minimal receiver of the preload library's stream, for
 * tests and for looking at what the library sends: nng pull on an
 * endpoint, each message decoded with msgpack-c (independently of the
 * collector's decoder), totals printed as key=value lines at the end.
 *
 *   preload_sink [-v] [-i IDLE_MS [-u]] [-n BYES] [-d DELAY_MS] [-r READY_FILE] ENDPOINT
 *
 *   -v        print every record as it arrives
 *   -i MS     exit after MS ms without messages, once one has arrived (default: never)
 *   -u        ... and only once SIGUSR1 said the program under test has ended: a program
 *             starved of the CPU for longer than MS (a test on a loaded machine) between
 *             two messages must not find the sink gone
 *   -n N      exit once N BYE records have arrived and 200 ms passed quietly
 *   -d MS     sleep MS ms after each message that carried calls (a collector
 *             slower than the program: what it cannot take is the library's to count)
 *   -r FILE   create FILE once listening (for scripts to wait on)
 *   SIGINT/SIGTERM: print the totals and exit 0.
 *
 * Output (one line each, sorted by pid then api):
 *   hello pid=P ppid=Q comm=C exe=E
 *   calls pid=P api=NAME count=N dur_sum=NS dur_max=NS bytes=B pinned=N pageable=N stacks=N withheld=N
 *   counts pid=P made=M dropped=D          (the latest COUNTS of that pid)
 *   kernel pid=P addr=0x.. name=NAME
 *   pyframe stack=ID file=F func=G line=L  (innermost Python frame of each stack; -v: all)
 *   totals messages=N records=N calls=N stacks=N kernels=N byes=N malformed=N
 */
#include <errno.h>
#include <msgpack.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ingero/api.h"
#include "ingero/event.h"
#include "ingero/wire.h"

#define MAXP 4096

struct api_stat {
	uint64_t count, dur_sum, dur_max, bytes, pinned, pageable, stacks, withheld;
};

struct proc {
	uint32_t pid, ppid;
	int hello;
	char comm[64], exe[256];
	uint64_t made, dropped;
	int counts;
	struct api_stat api[INGERO_API_MAX];
};

static struct proc procs[MAXP];
static int nprocs;
static uint64_t messages, records, calls, stacks, kernels, byes, malformed;
static int verbose;
static volatile sig_atomic_t stop;

static struct proc *proc_of(uint32_t pid)
{
	for (int i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	if (nprocs == MAXP)
		return NULL;
	procs[nprocs].pid = pid;
	return &procs[nprocs++];
}

static int u64(const msgpack_object *o, uint64_t *v)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*v = o->via.u64;
		return 0;
	}
	return -1;
}

static int i64(const msgpack_object *o, int64_t *v)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*v = (int64_t)o->via.u64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*v = o->via.i64;
		return 0;
	}
	return -1;
}

/* a str/bin/nil field into buf (NUL-terminated, cut to fit) */
static int str(const msgpack_object *o, char *buf, size_t cap)
{
	const char *p;
	size_t n;
	if (o->type == MSGPACK_OBJECT_STR) {
		p = o->via.str.ptr;
		n = o->via.str.size;
	} else if (o->type == MSGPACK_OBJECT_BIN) {
		p = o->via.bin.ptr;
		n = o->via.bin.size;
	} else if (o->type == MSGPACK_OBJECT_NIL) {
		p = "";
		n = 0;
	} else {
		return -1;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return 0;
}

static int record(const msgpack_object *r)
{
	if (r->type != MSGPACK_OBJECT_ARRAY || r->via.array.size < 1)
		return -1;
	const msgpack_object *f = r->via.array.ptr;
	uint32_t n = r->via.array.size;
	uint64_t type;
	if (u64(&f[0], &type))
		return -1;
	records++;
	switch (type) {
	case INGERO_REC_HELLO: {
		uint64_t pid, ppid, start;
		char comm[64], exe[256], cmd[512];
		if (n != 7 || u64(&f[1], &pid) || u64(&f[2], &ppid) || u64(&f[3], &start) ||
		    str(&f[4], comm, sizeof comm) || str(&f[5], exe, sizeof exe) || str(&f[6], cmd, sizeof cmd))
			return -1;
		struct proc *p = proc_of((uint32_t)pid);
		if (p) {
			p->ppid = (uint32_t)ppid;
			p->hello = 1;
			snprintf(p->comm, sizeof p->comm, "%s", comm);
			snprintf(p->exe, sizeof p->exe, "%s", exe);
		}
		if (verbose)
			printf("HELLO pid=%lu ppid=%lu comm=%s exe=%s cmdline=%s\n", (unsigned long)pid,
			       (unsigned long)ppid, comm, exe, cmd);
		break;
	}
	case INGERO_REC_CALL: {
		uint64_t v[13];
		int64_t ret;
		if (n != 13 && n != 19)
			return -1;
		for (uint32_t i = 1; i < 13; i++)
			if (i != 10 && u64(&f[i], &v[i]))
				return -1;
		if (i64(&f[10], &ret))
			return -1;
		uint64_t grid[6] = { 0 };
		for (uint32_t i = 13; i < n; i++)
			if (u64(&f[i], &grid[i - 13]))
				return -1;
		calls++;
		if (v[1] >= INGERO_API_MAX)
			return -1;
		struct proc *p = proc_of((uint32_t)v[2]);
		if (p) {
			struct api_stat *a = &p->api[v[1]];
			a->count++;
			a->dur_sum += v[5];
			if (v[5] > a->dur_max)
				a->dur_max = v[5];
			a->bytes += v[7];
			if (v[9] & INGERO_FLAG_HOST_PINNED)
				a->pinned++;
			if (v[9] & INGERO_FLAG_HOST_PAGEABLE)
				a->pageable++;
			if (v[11])
				a->stacks++;
			if (v[9] & INGERO_FLAG_STACK_WITHHELD)
				a->withheld++;
		}
		if (verbose) {
			const char *name = ingero_api_name((unsigned)v[1]);
			printf("CALL %s pid=%lu tid=%lu start=%lu dur=%lu stream=0x%lx bytes=%lu dir=%lu "
			       "flags=0x%lx ret=%ld stack=0x%lx kernel=0x%lx grid=%lu,%lu,%lu block=%lu,%lu,%lu\n",
			       name ? name : "?", (unsigned long)v[2], (unsigned long)v[3], (unsigned long)v[4],
			       (unsigned long)v[5], (unsigned long)v[6], (unsigned long)v[7],
			       (unsigned long)v[8], (unsigned long)v[9], (long)ret, (unsigned long)v[11],
			       (unsigned long)v[12], (unsigned long)grid[0], (unsigned long)grid[1],
			       (unsigned long)grid[2], (unsigned long)grid[3], (unsigned long)grid[4],
			       (unsigned long)grid[5]);
		}
		break;
	}
	case INGERO_REC_COUNTS: {
		uint64_t pid, made, dropped;
		if (n != 4 || u64(&f[1], &pid) || u64(&f[2], &made) || u64(&f[3], &dropped))
			return -1;
		struct proc *p = proc_of((uint32_t)pid);
		if (p) {
			/* the latest wins; they only grow */
			if (made >= p->made)
				p->made = made;
			if (dropped >= p->dropped)
				p->dropped = dropped;
			p->counts = 1;
		}
		if (verbose)
			printf("COUNTS pid=%lu made=%lu dropped=%lu\n", (unsigned long)pid,
			       (unsigned long)made, (unsigned long)dropped);
		break;
	}
	case INGERO_REC_STACK: {
		uint64_t pid, id;
		if (n != 5 || u64(&f[1], &pid) || u64(&f[2], &id) || f[3].type != MSGPACK_OBJECT_ARRAY ||
		    f[4].type != MSGPACK_OBJECT_ARRAY)
			return -1;
		stacks++;
		const msgpack_object_array *nat = &f[3].via.array, *py = &f[4].via.array;
		for (uint32_t i = 0; i < nat->size; i++) {
			const msgpack_object *fr = &nat->ptr[i];
			char sym[256], mod[256];
			uint64_t ip, off;
			if (fr->type != MSGPACK_OBJECT_ARRAY || fr->via.array.size != 4 ||
			    u64(&fr->via.array.ptr[0], &ip) || str(&fr->via.array.ptr[1], sym, sizeof sym) ||
			    str(&fr->via.array.ptr[2], mod, sizeof mod) || u64(&fr->via.array.ptr[3], &off))
				return -1;
			if (verbose)
				printf("NATIVE stack=0x%lx #%u ip=0x%lx %s+0x%lx (%s)\n", (unsigned long)id, i,
				       (unsigned long)ip, sym, (unsigned long)off, mod);
		}
		for (uint32_t i = 0; i < py->size; i++) {
			const msgpack_object *fr = &py->ptr[i];
			char file[512], func[256];
			uint64_t line;
			if (fr->type != MSGPACK_OBJECT_ARRAY || fr->via.array.size != 3 ||
			    str(&fr->via.array.ptr[0], file, sizeof file) ||
			    str(&fr->via.array.ptr[1], func, sizeof func) || u64(&fr->via.array.ptr[2], &line))
				return -1;
			if (verbose || i == 0)
				printf("pyframe stack=0x%lx depth=%u file=%s func=%s line=%lu\n", (unsigned long)id,
				       i, file, func, (unsigned long)line);
		}
		if (verbose)
			printf("STACK pid=%lu id=0x%lx native=%u python=%u\n", (unsigned long)pid,
			       (unsigned long)id, nat->size, py->size);
		break;
	}
	case INGERO_REC_KERNEL: {
		uint64_t pid, addr;
		char name[512];
		if (n != 4 || u64(&f[1], &pid) || u64(&f[2], &addr) || str(&f[3], name, sizeof name))
			return -1;
		kernels++;
		printf("kernel pid=%lu addr=0x%lx name=%s\n", (unsigned long)pid, (unsigned long)addr, name);
		break;
	}
	case INGERO_REC_BYE: {
		uint64_t pid, end;
		if (n != 3 || u64(&f[1], &pid) || u64(&f[2], &end))
			return -1;
		byes++;
		if (verbose)
			printf("BYE pid=%lu end=%lu\n", (unsigned long)pid, (unsigned long)end);
		break;
	}
	case INGERO_REC_ORPHAN: {
		uint64_t pid;
		if (n != 2 || u64(&f[1], &pid))
			return -1;
		printf("orphan pid=%lu\n", (unsigned long)pid);
		break;
	}
	case INGERO_REC_CAPTURE: {
		uint64_t pid, t, rec;
		if (n != 4 || u64(&f[1], &pid) || u64(&f[2], &t) || u64(&f[3], &rec))
			return -1;
		printf("capture pid=%lu t=%lu recording=%lu\n", (unsigned long)pid, (unsigned long)t,
		       (unsigned long)rec);
		break;
	}
	default:
		break;   /* unknown: skipped, as the contract says */
	}
	return 0;
}

static void message(const char *buf, size_t len)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	int ok = msgpack_unpack_next(&u, buf, len, &off) == MSGPACK_UNPACK_SUCCESS && off == len;
	const msgpack_object *o = &u.data;
	uint64_t ver, sender;
	if (ok)
		ok = o->type == MSGPACK_OBJECT_ARRAY && o->via.array.size == 3 &&
		     !u64(&o->via.array.ptr[0], &ver) && ver == INGERO_WIRE_VERSION &&
		     !u64(&o->via.array.ptr[1], &sender) && o->via.array.ptr[2].type == MSGPACK_OBJECT_ARRAY;
	if (ok) {
		const msgpack_object_array *recs = &o->via.array.ptr[2].via.array;
		for (uint32_t i = 0; i < recs->size; i++)
			if (record(&recs->ptr[i]) != 0) {
				malformed++;
				break;
			}
	} else {
		malformed++;
	}
	msgpack_unpacked_destroy(&u);
	messages++;
	fflush(stdout);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static volatile sig_atomic_t ended = 1; /* -u: 0 until SIGUSR1 */
static void on_ended(int sig)
{
	(void)sig;
	ended = 1;
}

static void totals(void)
{
	for (int i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];
		if (p->hello)
			printf("hello pid=%u ppid=%u comm=%s exe=%s\n", p->pid, p->ppid, p->comm, p->exe);
		for (unsigned a = 0; a < INGERO_API_MAX; a++) {
			struct api_stat *s = &p->api[a];
			if (!s->count)
				continue;
			printf("calls pid=%u api=%s count=%lu dur_sum=%lu dur_max=%lu bytes=%lu pinned=%lu "
			       "pageable=%lu stacks=%lu withheld=%lu\n",
			       p->pid, ingero_api_name(a) ? ingero_api_name(a) : "?", (unsigned long)s->count,
			       (unsigned long)s->dur_sum, (unsigned long)s->dur_max, (unsigned long)s->bytes,
			       (unsigned long)s->pinned, (unsigned long)s->pageable, (unsigned long)s->stacks,
			       (unsigned long)s->withheld);
		}
		if (p->counts)
			printf("counts pid=%u made=%lu dropped=%lu\n", p->pid, (unsigned long)p->made,
			       (unsigned long)p->dropped);
	}
	printf("totals messages=%lu records=%lu calls=%lu stacks=%lu kernels=%lu byes=%lu malformed=%lu\n",
	       (unsigned long)messages, (unsigned long)records, (unsigned long)calls, (unsigned long)stacks,
	       (unsigned long)kernels, (unsigned long)byes, (unsigned long)malformed);
	fflush(stdout);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	long idle_ms = -1, want_byes = -1, delay_ms = 0;
	const char *ready = NULL;
	int c;
	/* first: a SIGUSR1 from a script that gave up waiting for -r's file
	 * must not kill the sink */
	struct sigaction sa = { .sa_handler = on_ended, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	while ((c = getopt(argc, argv, "vi:un:d:r:")) != -1) {
		switch (c) {
		case 'v':
			verbose = 1;
			break;
		case 'i':
			idle_ms = strtol(optarg, NULL, 10);
			break;
		case 'u':
			ended = 0;
			break;
		case 'n':
			want_byes = strtol(optarg, NULL, 10);
			break;
		case 'd':
			delay_ms = strtol(optarg, NULL, 10);
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			fprintf(stderr, "usage: preload_sink [-v] [-i IDLE_MS [-u]] [-n BYES] [-d DELAY_MS] [-r READY_FILE] ENDPOINT\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "preload_sink: one ENDPOINT expected (e.g. ipc:///tmp/x.sock)\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	nng_socket s;
	int rv;
	if ((rv = nng_pull0_open(&s)) != 0 || (rv = nng_listen(s, argv[optind], NULL, 0)) != 0) {
		fprintf(stderr, "preload_sink: %s: %s\n", argv[optind], nng_strerror(rv));
		return 1;
	}
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 50);
	nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, INGERO_WIRE_MAX_MSG_BYTES);
	if (ready) {
		FILE *f = fopen(ready, "w");
		if (f)
			fclose(f);
	}
	uint64_t last = 0;
	int was_ended = ended;
	while (!stop) {
		char *buf = NULL;
		size_t len = 0;
		rv = nng_recv(s, &buf, &len, NNG_FLAG_ALLOC);
		uint64_t t = now_ms();
		if (rv == 0) {
			uint64_t before = calls;
			message(buf, len);
			nng_free(buf, len);
			if (delay_ms > 0 && calls > before) {
				struct timespec d = { delay_ms / 1000, (delay_ms % 1000) * 1000000 };
				nanosleep(&d, NULL);
			}
			last = now_ms();
			continue;
		}
		if (rv != NNG_ETIMEDOUT) {
			fprintf(stderr, "preload_sink: recv: %s\n", nng_strerror(rv));
			break;
		}
		if (ended && !was_ended) {   /* a whole idle_ms from the signal on */
			was_ended = 1;
			if (last)
				last = t;
		}
		if (last && idle_ms >= 0 && ended && t - last >= (uint64_t)idle_ms)
			break;
		if (want_byes >= 0 && byes >= (uint64_t)want_byes && last && t - last >= 200)
			break;
	}
	totals();
	nng_close(s);
	return 0;
}
