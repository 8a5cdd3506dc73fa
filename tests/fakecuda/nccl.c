/*
 * nccl.c — a fake libnccl.so.2 (tests only): NCCL's entry points with
 * their real signatures, for ranks that are processes of one machine on
 * the fake CUDA libraries.
 *
 * A communicator is a shared mapping (/dev/shm), named in the ncclUniqueId
 * that ncclGetUniqueId makes and the program hands to every rank (as a
 * real program does through its store).  What a collective does, as a
 * real NCCL collective does on the GPU:
 *   - it can start on a rank once that rank's stream has finished its
 *     earlier work ("arrival": the later of the call and the stream's
 *     completion, fakecuda_stream_done_at of the fake driver);
 *   - it completes on every rank when the last rank has arrived, plus the
 *     transfer (FAKENCCL_LATENCY_US + bytes at FAKENCCL_GBPS): the rank's
 *     stream is then busy until that instant (fakecuda_stream_after), so a
 *     later cudaStreamSynchronize waits for it.
 * One difference, kept small on purpose: to know when the last rank
 * arrives, the host call waits (off-CPU, polling every 50 µs) until every
 * rank has *called* the collective, where real NCCL returns at once and
 * the wait happens on the GPU.  A rank that calls first therefore spends
 * its wait in the call, not in its next sync; where the GPU was is the
 * same.  FAKENCCL_TIMEOUT_S (60): a rank that never comes fails the call.
 *
 * The mapping's name is removed by the last rank to leave it (destroy, abort).
 * ncclSend/ncclRecv: a receive waits for the matching send (per pair, in
 * order).  ncclCommSplit: the parent's ranks exchange their colors through
 * the parent's mapping.  ncclCommInitAll: one process, every rank: its
 * collectives do not wait.  Groups are accepted and do nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int ncclResult_t;
enum { ncclSuccess = 0, ncclSystemError = 2, ncclInvalidArgument = 4, ncclInvalidUsage = 5 };
typedef struct { char internal[128]; } ncclUniqueId;

#define MAX_RANKS 64
#define SLOTS 256            /* collectives in flight: a rank is never more than one ahead */
#define SPLITS 16

struct shared {
	_Atomic uint32_t joined;
	_Atomic uint32_t left;                           /* ranks still in it: the last to leave unlinks it */
	uint32_t nranks;
	_Atomic uint64_t arrived[MAX_RANKS];             /* collectives called, per rank */
	_Atomic uint64_t arrive_ns[SLOTS][MAX_RANKS];    /* where each could start on the GPU */
	_Atomic uint64_t sent[MAX_RANKS][MAX_RANKS];     /* sends from -> to */
	_Atomic uint64_t sent_done[MAX_RANKS][MAX_RANKS][4];   /* ... the GPU instant each send could start (last 4) */
	_Atomic uint32_t split_in[SPLITS];               /* ranks that gave their color to split n */
	_Atomic int32_t split_color[SPLITS][MAX_RANKS], split_key[SPLITS][MAX_RANKS];
};

struct comm {
	struct shared *sh;
	char name[96];
	int rank, nranks, single;
	uint64_t seq, splits;
	uint64_t received[MAX_RANKS];
};

/* (the fake driver's, for the streams' timelines) */
uint64_t fakecuda_stream_done_at(void *stream);
void fakecuda_stream_after(void *stream, uint64_t t);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double env_num(const char *name, double dflt)
{
	const char *v = getenv(name);
	char *end;
	double d = v ? strtod(v, &end) : dflt;
	return v && (*end || d < 0) ? dflt : d;
}

static void nap(void)
{
	struct timespec ts = { 0, 50000 };
	nanosleep(&ts, NULL);
}

/* Waits until *p >= v; 0, or -1 after the timeout. */
static int wait_ge(_Atomic uint64_t *p, uint64_t v)
{
	uint64_t give_up = now_ns() + (uint64_t)(env_num("FAKENCCL_TIMEOUT_S", 60) * 1e9);
	while (atomic_load_explicit(p, memory_order_acquire) < v) {
		if (now_ns() > give_up)
			return -1;
		nap();
	}
	return 0;
}

static uint64_t transfer_ns(size_t bytes)
{
	double gbps = env_num("FAKENCCL_GBPS", 50);
	return (uint64_t)(env_num("FAKENCCL_LATENCY_US", 20) * 1000 + (gbps > 0 ? (double)bytes / gbps : 0));
}

static unsigned type_size(int t)
{
	static const unsigned char size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return t >= 0 && (unsigned)t < sizeof size ? size[t] : 1;
}

EXPORT ncclResult_t ncclGetVersion(int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = 22809;   /* what PyTorch 2.11 brings: 2.28.9 */
	return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
	return r == ncclSuccess ? "no error" : "fake NCCL error";
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	static _Atomic unsigned n;
	if (!id)
		return ncclInvalidArgument;
	memset(id, 0, sizeof *id);
	snprintf(id->internal, sizeof id->internal, "/fakenccl-%d-%u-%llx", (int)getpid(), atomic_fetch_add(&n, 1),
		 (unsigned long long)now_ns());
	return ncclSuccess;
}

/* Joins the communicator named `name` as rank of nranks (the mapping is
 * made by whoever comes first; the last to leave does not remove it: the
 * launcher's ncclUniqueId names it, and tests remove /dev/shm/fakenccl-*). */
static ncclResult_t join(struct comm **out, const char *name, int nranks, int rank)
{
	if (!out || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks || name[0] != '/')
		return ncclInvalidArgument;
	int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return ncclSystemError;
	if (ftruncate(fd, sizeof(struct shared)) < 0) {
		close(fd);
		return ncclSystemError;
	}
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED)
		return ncclSystemError;
	struct comm *c = calloc(1, sizeof *c);
	if (!c) {
		munmap(sh, sizeof *sh);
		return ncclSystemError;
	}
	c->sh = sh;
	snprintf(c->name, sizeof c->name, "%s", name);
	c->rank = rank;
	c->nranks = nranks;
	sh->nranks = (uint32_t)nranks;
	atomic_fetch_add(&sh->left, 1);
	uint32_t joined = atomic_fetch_add(&sh->joined, 1) + 1;
	/* every rank waits for the others, as NCCL's init does */
	uint64_t give_up = now_ns() + (uint64_t)(env_num("FAKENCCL_TIMEOUT_S", 60) * 1e9);
	while (joined < (uint32_t)nranks) {
		if (now_ns() > give_up) {
			munmap(sh, sizeof *sh);
			free(c);
			return ncclSystemError;
		}
		nap();
		joined = atomic_load(&sh->joined);
	}
	*out = c;
	return ncclSuccess;
}

EXPORT ncclResult_t ncclCommInitRank(struct comm **comm, int nranks, ncclUniqueId id, int rank)
{
	id.internal[sizeof id.internal - 1] = 0;
	return join(comm, id.internal, nranks, rank);
}

EXPORT ncclResult_t ncclCommInitRankConfig(struct comm **comm, int nranks, ncclUniqueId id, int rank, void *config)
{
	(void)config;
	return ncclCommInitRank(comm, nranks, id, rank);
}

EXPORT ncclResult_t ncclCommInitAll(struct comm **comms, int ndev, const int *devlist)
{
	(void)devlist;
	if (!comms || ndev < 1 || ndev > MAX_RANKS)
		return ncclInvalidArgument;
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return ncclSystemError;
	sh->nranks = (uint32_t)ndev;
	for (int i = 0; i < ndev; i++) {
		comms[i] = calloc(1, sizeof **comms);
		if (!comms[i])
			return ncclSystemError;
		comms[i]->sh = sh;
		comms[i]->rank = i;
		comms[i]->nranks = ndev;
		comms[i]->single = 1;
	}
	return ncclSuccess;
}

EXPORT ncclResult_t ncclCommSplit(struct comm *comm, int color, int key, struct comm **newcomm, void *config)
{
	(void)config;
	if (!comm || !newcomm || comm->single)
		return ncclInvalidArgument;
	unsigned n = (unsigned)(comm->splits++ % SPLITS);
	struct shared *sh = comm->sh;
	atomic_store(&sh->split_color[n][comm->rank], color);
	atomic_store(&sh->split_key[n][comm->rank], key);
	/* the exchange: every rank of the parent gives its color (split n of the parent) */
	uint32_t in = atomic_fetch_add(&sh->split_in[n], 1) + 1;
	uint64_t give_up = now_ns() + (uint64_t)(env_num("FAKENCCL_TIMEOUT_S", 60) * 1e9);
	while (in % (uint32_t)comm->nranks) {
		if (now_ns() > give_up)
			return ncclSystemError;
		nap();
		in = atomic_load(&sh->split_in[n]);
	}
	*newcomm = NULL;
	if (color < 0)
		return ncclSuccess;
	int nr = 0, rank = 0;
	for (int r = 0; r < comm->nranks; r++) {
		int cr = atomic_load(&sh->split_color[n][r]), kr = atomic_load(&sh->split_key[n][r]);
		if (cr != color)
			continue;
		nr++;
		if (kr < key || (kr == key && r < comm->rank))
			rank++;
	}
	char name[96];
	snprintf(name, sizeof name, "%.60s.s%llu.c%d", comm->name, (unsigned long long)comm->splits - 1, color);
	return join(newcomm, name, nr, rank);
}

static ncclResult_t leave(struct comm *comm)
{
	if (!comm)
		return ncclInvalidArgument;
	/* the last rank out removes the mapping's name */
	if (!comm->single && atomic_fetch_sub(&comm->sh->left, 1) == 1)
		shm_unlink(comm->name);
	if (!comm->single || comm->rank == 0)
		munmap(comm->sh, sizeof *comm->sh);
	free(comm);
	return ncclSuccess;
}

EXPORT ncclResult_t ncclCommDestroy(struct comm *comm) { return leave(comm); }
EXPORT ncclResult_t ncclCommAbort(struct comm *comm) { return leave(comm); }
EXPORT ncclResult_t ncclCommFinalize(struct comm *comm) { return comm ? ncclSuccess : ncclInvalidArgument; }

EXPORT ncclResult_t ncclCommCount(const struct comm *comm, int *count)
{
	if (!comm || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

EXPORT ncclResult_t ncclCommUserRank(const struct comm *comm, int *rank)
{
	if (!comm || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

EXPORT ncclResult_t ncclCommGetAsyncError(struct comm *comm, ncclResult_t *err)
{
	if (!comm || !err)
		return ncclInvalidArgument;
	*err = ncclSuccess;
	return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
EXPORT ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }

/* Every collective: arrive, wait for the others on the host, and leave the
 * stream busy until the last arrival plus the transfer. */
static ncclResult_t collective(struct comm *c, size_t bytes, void *stream)
{
	if (!c)
		return ncclInvalidArgument;
	uint64_t t = now_ns(), ready = fakecuda_stream_done_at(stream);
	uint64_t arrive = ready > t ? ready : t;
	if (c->single) {
		fakecuda_stream_after(stream, arrive + transfer_ns(bytes));
		return ncclSuccess;
	}
	struct shared *sh = c->sh;
	uint64_t seq = c->seq++;
	atomic_store_explicit(&sh->arrive_ns[seq % SLOTS][c->rank], arrive, memory_order_relaxed);
	atomic_store_explicit(&sh->arrived[c->rank], seq + 1, memory_order_release);
	uint64_t last = arrive;
	for (int r = 0; r < c->nranks; r++) {
		if (wait_ge(&sh->arrived[r], seq + 1) < 0)
			return ncclSystemError;
		uint64_t a = atomic_load_explicit(&sh->arrive_ns[seq % SLOTS][r], memory_order_relaxed);
		if (a > last)
			last = a;
	}
	fakecuda_stream_after(stream, last + transfer_ns(bytes));
	return ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, int dtype, int op, struct comm *c,
				  void *stream)
{
	return collective(c, count * type_size(dtype), stream);
}

EXPORT ncclResult_t ncclReduceScatter(const void *s, void *r, size_t recvcount, int dtype, int op, struct comm *c,
				      void *stream)
{
	return collective(c, recvcount * type_size(dtype) * (c ? (size_t)c->nranks : 1), stream);
}

EXPORT ncclResult_t ncclAllGather(const void *s, void *r, size_t sendcount, int dtype, struct comm *c, void *stream)
{
	return collective(c, sendcount * type_size(dtype) * (c ? (size_t)c->nranks : 1), stream);
}

EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, int dtype, int root, struct comm *c,
				  void *stream)
{
	return collective(c, count * type_size(dtype), stream);
}

EXPORT ncclResult_t ncclBcast(void *buff, size_t count, int dtype, int root, struct comm *c, void *stream)
{
	return collective(c, count * type_size(dtype), stream);
}

EXPORT ncclResult_t ncclReduce(const void *s, void *r, size_t count, int dtype, int op, int root, struct comm *c,
			       void *stream)
{
	return collective(c, count * type_size(dtype), stream);
}

EXPORT ncclResult_t ncclSend(const void *s, size_t count, int dtype, int peer, struct comm *c, void *stream)
{
	if (!c || peer < 0 || peer >= c->nranks || c->single)
		return ncclInvalidArgument;
	uint64_t t = now_ns(), ready = fakecuda_stream_done_at(stream);
	uint64_t n = atomic_load(&c->sh->sent[c->rank][peer]);
	atomic_store(&c->sh->sent_done[c->rank][peer][n % 4], ready > t ? ready : t);
	atomic_store_explicit(&c->sh->sent[c->rank][peer], n + 1, memory_order_release);
	fakecuda_stream_after(stream, (ready > t ? ready : t) + transfer_ns(count * type_size(dtype)));
	return ncclSuccess;
}

EXPORT ncclResult_t ncclRecv(void *r, size_t count, int dtype, int peer, struct comm *c, void *stream)
{
	if (!c || peer < 0 || peer >= c->nranks || c->single)
		return ncclInvalidArgument;
	uint64_t n = c->received[peer]++;
	if (wait_ge(&c->sh->sent[peer][c->rank], n + 1) < 0)
		return ncclSystemError;
	uint64_t t = now_ns(), ready = fakecuda_stream_done_at(stream);
	uint64_t from = atomic_load(&c->sh->sent_done[peer][c->rank][n % 4]);
	uint64_t start = ready > t ? ready : t;
	if (from > start)
		start = from;
	fakecuda_stream_after(stream, start + transfer_ns(count * type_size(dtype)));
	return ncclSuccess;
}
