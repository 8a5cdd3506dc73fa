/*
 * symbolize.c — naming sampled addresses while their processes live.
 *
 * Per process: its mappings, read from /proc/PID/maps when it is enrolled,
 * forked (copied from the parent), exec'd, or when an address falls outside
 * every known mapping.  Data mappings are kept too, though they hold no
 * code: frame-pointer walks through code built without frame pointers
 * return heap and stack words as "frames", and one of those must not send
 * us back to /proc (a PyTorch process maps thousands of regions).  An
 * address in no mapping re-reads at most every 50 ms, and each re-read
 * that still does not place it doubles the wait, up to 2 s.  Per mapped file
 * (a "module", keyed by device, inode and path): its PT_LOAD segments and
 * its function symbols from .symtab and .dynsym (libelf), sorted for binary
 * search; the Elf handle stays open so names point into its mapping.
 * An address becomes file offset (ip - map start + map offset), then the
 * ELF virtual address through the segment holding that offset, then the
 * function whose [start, start+size) holds it.  C++ names are demangled on
 * first use with the C++ runtime's __cxa_demangle and cached.
 *
 * Kernel addresses: /proc/kallsyms, read once, sorted.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "symbolize.h"
#include "tracer.h"

/* from the C++ runtime (libstdc++), C linkage */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct sym {
	uint64_t addr, size;
	const char *name;
	char *demangled;     /* lazily; NULL until asked */
};

struct seg {
	uint64_t off, vaddr, filesz;
	uint32_t flags;      /* PF_X, PF_W, PF_R */
};

struct module {
	char *path;
	uint64_t dev, ino;
	int fd;
	Elf *elf;
	int loaded;
	struct seg segs[16];
	int nsegs;
	struct sym *syms;
	size_t nsyms;
	struct module *next;
};

struct map {
	uint64_t start, end, off;
	struct module *mod;  /* NULL for anonymous / special / data mappings */
	const char *name;    /* "[vdso]", "[heap]", ... (static storage or module path) */
	int exec;            /* holds code; the others only place an address */
};

#define MAPS_WAIT_MIN_NS 50000000ull
#define MAPS_WAIT_MAX_NS 2000000000ull

struct pidmaps {
	uint32_t pid;        /* 0 = free slot */
	struct map *maps;    /* ascending, as /proc/PID/maps lists them */
	size_t n;
	uint64_t read_ns;    /* the last read, or try: a process gone keeps its maps */
	uint64_t wait_ns;    /* before the next re-read for an unplaced address */
};

struct ksym {
	uint64_t addr;
	char *name;
};

struct symbolizer {
	struct module *modules;
	struct pidmaps *pids;
	size_t pid_cap, pid_n;
	struct ksym *ksyms;
	size_t nksyms;
	int ksyms_loaded;
	/* sym_preload_kernel's reader: /proc/kallsyms takes ~0.1-0.3 s to read
	 * and sort, which a collector start no longer waits for; the first
	 * kernel frame (or sym_free) joins it */
	pthread_t ksyms_reader;
	int ksyms_reading;
	uint64_t maps_reads;
	uint64_t (*clock)(void);   /* CLOCK_MONOTONIC ns; a test's own */
};

struct symbolizer *sym_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	elf_version(EV_CURRENT);
	if (s)
		s->clock = mono_now_ns;
	return s;
}

/* --- modules ---------------------------------------------------------------------- */

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_symbols(struct module *m, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, cap;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	cap = m->nsyms + n;
	struct sym *p = realloc(m->syms, cap * sizeof(*p));
	if (!p)
		return;
	m->syms = p;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym es;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &es))
			continue;
		type = GELF_ST_TYPE(es.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || es.st_shndx == SHN_UNDEF ||
		    !es.st_value)
			continue;
		name = elf_strptr(m->elf, sh->sh_link, es.st_name);
		if (!name || !*name)
			continue;
		m->syms[m->nsyms++] = (struct sym){ es.st_value, es.st_size, name, NULL };
	}
}

static void load_module(struct module *m, uint32_t pid)
{
	char path[4352];
	size_t nph = 0;
	Elf_Scn *scn = NULL;

	m->loaded = 1;
	m->fd = -1;
	/* a process in a container sees its files under its own root */
	snprintf(path, sizeof path, "/proc/%u/root%s", pid, m->path);
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		return;
	m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (!m->elf || elf_kind(m->elf) != ELF_K_ELF || elf_getphdrnum(m->elf, &nph))
		return;
	for (size_t i = 0; i < nph && m->nsegs < 16; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(m->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->segs[m->nsegs++] = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_flags };
	}
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			load_symbols(m, scn, &sh);
	}
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
}

static struct module *module_get(struct symbolizer *s, const char *path, uint64_t dev, uint64_t ino)
{
	for (struct module *m = s->modules; m; m = m->next)
		if (m->ino == ino && m->dev == dev && strcmp(m->path, path) == 0)
			return m;
	struct module *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(path);
	m->dev = dev;
	m->ino = ino;
	m->fd = -1;
	m->next = s->modules;
	s->modules = m;
	return m;
}

static const char *sym_name(struct sym *y)
{
	int status = -1;

	if (y->demangled)
		return y->demangled;
	if (strncmp(y->name, "_Z", 2) == 0)
		y->demangled = __cxa_demangle(y->name, NULL, NULL, &status);
	if (!y->demangled || status != 0) {
		free(y->demangled);
		y->demangled = strdup(y->name);
	}
	return y->demangled ? y->demangled : y->name;
}

/* --- processes --------------------------------------------------------------------- */

static struct pidmaps *pid_slot(struct symbolizer *s, uint32_t pid, int create)
{
	if (!s->pids) {
		if (!create)
			return NULL;
		s->pid_cap = 1024;
		s->pids = calloc(s->pid_cap, sizeof(*s->pids));
		if (!s->pids)
			return NULL;
	}
	if (create && (s->pid_n + 1) * 2 > s->pid_cap) {
		size_t cap = s->pid_cap * 2;
		struct pidmaps *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < s->pid_cap; i++) {
			if (!s->pids[i].pid)
				continue;
			size_t j = (s->pids[i].pid * 2654435761u) & (cap - 1);
			while (n[j].pid)
				j = (j + 1) & (cap - 1);
			n[j] = s->pids[i];
		}
		free(s->pids);
		s->pids = n;
		s->pid_cap = cap;
	}
	for (size_t i = (pid * 2654435761u) & (s->pid_cap - 1);; i = (i + 1) & (s->pid_cap - 1)) {
		if (s->pids[i].pid == pid)
			return &s->pids[i];
		if (!s->pids[i].pid) {
			if (!create)
				return NULL;
			s->pids[i].pid = pid;
			s->pid_n++;
			return &s->pids[i];
		}
	}
}

static const char *special_name(const char *path)
{
	static const char *const known[] = { "[vdso]", "[vsyscall]", "[heap]", "[stack]", "[vvar]" };

	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(path, known[i]) == 0)
			return known[i];
	return "[anon]";
}

void sym_load_pid(struct symbolizer *s, uint32_t pid)
{
	char path[64], line[4608];
	FILE *f;
	struct pidmaps *p;
	struct map *maps = NULL;
	size_t n = 0, cap = 0;

	snprintf(path, sizeof path, "/proc/%u/maps", pid);
	s->maps_reads++;
	f = fopen(path, "re");
	if (!f) {
		/* gone: keep what we had, and when we tried (a slot even for a
		 * process never read, so its tries are rationed too) */
		if ((p = pid_slot(s, pid, 1)))
			p->read_ns = s->clock();
		return;
	}
	while (fgets(line, sizeof line, f)) {
		unsigned long long start, end, off, ino;
		unsigned dmaj, dmin;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &dmaj,
			   &dmin, &ino, &pos) < 7)
			continue;
		char *name = line + pos;
		name[strcspn(name, "\n")] = 0;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct map *m = realloc(maps, cap * sizeof(*m));
			if (!m)
				break;
			maps = m;
		}
		struct map *m = &maps[n++];
		m->start = start;
		m->end = end;
		m->off = off;
		m->mod = NULL;
		m->exec = perms[2] == 'x';
		if (!m->exec) {
			m->name = NULL;
		} else if (name[0] == '/' && ino) {
			char *del = strstr(name, " (deleted)");

			if (del)
				*del = 0;
			m->mod = module_get(s, name, (uint64_t)dmaj << 32 | dmin, ino);
			m->name = m->mod ? m->mod->path : NULL;
		} else {
			m->name = special_name(name);
		}
	}
	fclose(f);
	p = pid_slot(s, pid, 1);
	if (!p) {
		free(maps);
		return;
	}
	free(p->maps);
	p->maps = maps;
	p->n = n;
	p->read_ns = s->clock();
}

void sym_fork(struct symbolizer *s, uint32_t child, uint32_t parent)
{
	struct pidmaps *pp = pid_slot(s, parent, 0), *c;
	struct map *copy;
	size_t n;

	if (!pp || !pp->n)
		return;
	n = pp->n;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return;
	memcpy(copy, pp->maps, n * sizeof(*copy));
	c = pid_slot(s, child, 1);   /* may grow the table: pp is stale after this */
	if (!c) {
		free(copy);
		return;
	}
	free(c->maps);
	c->maps = copy;
	c->n = n;
	c->read_ns = 0;   /* inherited: re-read on the first miss */
	c->wait_ns = 0;
}

void sym_exec(struct symbolizer *s, uint32_t pid)
{
	struct pidmaps *p = pid_slot(s, pid, 0);

	if (p) {
		free(p->maps);
		p->maps = NULL;
		p->n = 0;
		p->read_ns = 0;
		p->wait_ns = 0;
	}
	sym_load_pid(s, pid);
}

/* The mapping holding ip, code or not; NULL when none does. */
static const struct map *find_map(const struct pidmaps *p, uint64_t ip)
{
	size_t lo = 0, hi = p ? p->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < p->maps[mid].start)
			hi = mid;
		else if (ip >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

/* ip is in none of pid's known mappings: it may have been mapped since
 * (dlopen) or be a broken walk's garbage, which no re-read places — so
 * each fruitless re-read waits twice as long for the next.  A sample's
 * leaf is code for certain: found in a data mapping, or in none, the maps
 * are stale (a library mapped where memory was freed), and it re-reads
 * them at the shortest wait. */
static const struct map *find_map_fresh(struct symbolizer *s, uint32_t pid, uint64_t ip, int leaf)
{
	struct pidmaps *p = pid_slot(s, pid, 0);
	const struct map *m = find_map(p, ip);
	uint64_t wait;

	if (m && (m->exec || !leaf))
		return m;
	wait = !leaf && p && p->wait_ns ? p->wait_ns : MAPS_WAIT_MIN_NS;
	if (p && p->read_ns && s->clock() - p->read_ns < wait)
		return m;
	sym_load_pid(s, pid);
	if (!(p = pid_slot(s, pid, 0)))
		return NULL;
	m = find_map(p, ip);
	if (m && m->exec)
		p->wait_ns = MAPS_WAIT_MIN_NS;
	else if (!leaf)
		p->wait_ns = wait * 2 < MAPS_WAIT_MAX_NS ? wait * 2 : MAPS_WAIT_MAX_NS;
	return m;
}

static void sym_user_at(struct symbolizer *s, uint32_t pid, uint64_t ip, int leaf, struct sym_result *r)
{
	const struct map *m = find_map_fresh(s, pid, ip, leaf);
	struct module *mod;
	uint64_t file_off, vaddr;

	r->symbol = NULL;
	r->module = NULL;
	r->offset = ip;
	if (!m || !m->exec)
		return;
	r->module = m->name;
	mod = m->mod;
	file_off = ip - m->start + m->off;
	r->offset = file_off;
	if (!mod)
		return;
	if (!mod->loaded)
		load_module(mod, pid);
	vaddr = file_off;
	for (int i = 0; i < mod->nsegs; i++) {
		const struct seg *g = &mod->segs[i];

		if (file_off >= g->off && file_off < g->off + g->filesz) {
			vaddr = file_off - g->off + g->vaddr;
			break;
		}
	}
	if (!mod->nsyms)
		return;
	size_t lo = 0, hi = mod->nsyms;   /* last symbol with addr <= vaddr */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (mod->syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	struct sym *y = &mod->syms[lo];
	if (y->addr > vaddr || (y->size && vaddr >= y->addr + y->size))
		return;
	r->symbol = sym_name(y);
	r->offset = vaddr - y->addr;
}

void sym_user(struct symbolizer *s, uint32_t pid, uint64_t ip, struct sym_result *r)
{
	sym_user_at(s, pid, ip, 0, r);
}

void sym_user_leaf(struct symbolizer *s, uint32_t pid, uint64_t ip, struct sym_result *r)
{
	sym_user_at(s, pid, ip, 1, r);
}

int sym_is_return_address(struct symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct pidmaps *p = pid_slot(s, pid, 0);
	const struct map *m = find_map(p, addr);
	unsigned char b[8];
	uint64_t off;

	if (!m || !m->mod)   /* (only code mappings have a module) */
		return 0;
	if (!m->mod->loaded)
		load_module(m->mod, pid);
	off = addr - m->start + m->off;
	if (m->mod->fd < 0 || off < sizeof b || pread(m->mod->fd, b, sizeof b, (off_t)(off - sizeof b)) !=
	    (ssize_t)sizeof b)
		return 0;
	/* the bytes just before must be a call: e8 rel32 (5), ff /2 modrm forms
	 * call *disp32(%rip) (6), call *%reg (2), call *disp8(%reg) (3) */
	return b[3] == 0xe8 || (b[2] == 0xff && b[3] == 0x15) ||
	       (b[6] == 0xff && (b[7] & 0xf8) == 0xd0) || (b[5] == 0xff && (b[6] & 0xf8) == 0x50);
}

/* A symbol's ELF value, any type, from .symtab or .dynsym; 0 when absent. */
static uint64_t module_symbol(struct module *m, const char *name)
{
	Elf_Scn *scn = NULL;

	while (m->elf && (scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
			GElf_Sym es;
			const char *nm;

			if (!gelf_getsym(data, (int)i, &es) || es.st_shndx == SHN_UNDEF || !es.st_value)
				continue;
			nm = elf_strptr(m->elf, sh.sh_link, es.st_name);
			if (nm && strcmp(nm, name) == 0)
				return es.st_value;
		}
	}
	return 0;
}

uint64_t sym_find(struct symbolizer *s, uint32_t pid, const char *prefix, const char *name,
		  const char **module)
{
	struct pidmaps *p = pid_slot(s, pid, 0);

	if (!p || !p->n) {
		sym_load_pid(s, pid);
		p = pid_slot(s, pid, 0);
	}
	for (size_t i = 0; p && i < p->n; i++) {
		const struct map *m = &p->maps[i];
		const char *base;
		uint64_t v;

		if (!m->mod)
			continue;
		base = strrchr(m->mod->path, '/');
		base = base ? base + 1 : m->mod->path;
		if (strncmp(base, prefix, strlen(prefix)) != 0)
			continue;
		if (!m->mod->loaded)
			load_module(m->mod, pid);
		if (!(v = module_symbol(m->mod, name)))
			continue;
		/* this executable mapping's bias: it maps the executable segment
		 * from the page holding the segment's start (whose file offset
		 * need not be page aligned: lld), and file offsets and addresses
		 * agree modulo the page size */
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		for (int k = 0; k < m->mod->nsegs; k++) {
			const struct seg *g = &m->mod->segs[k];

			if ((g->flags & PF_X) && (g->off & ~(page - 1)) == m->off) {
				if (module)
					*module = m->mod->path;
				return v + m->start - (g->vaddr & ~(page - 1));
			}
		}
	}
	return 0;
}

/* --- kernel ------------------------------------------------------------------------ */

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* One line of /proc/kallsyms, "ADDR TYPE NAME[\t[MODULE]]": its address and
 * name when it is a text symbol (sscanf took most of the read's CPU). */
static int parse_ksym(char *line, uint64_t *addr, char **name)
{
	char *p;
	unsigned long long a = strtoull(line, &p, 16);
	if (p == line || *p != ' ' || !a)
		return 0;
	char type = p[1];
	if ((type != 't' && type != 'T' && type != 'w' && type != 'W') || p[2] != ' ')
		return 0;
	char *n = p + 3;
	n[strcspn(n, " \t\n")] = 0;
	if (!*n)
		return 0;
	*addr = a;
	*name = n;
	return 1;
}

static void load_kallsyms(struct symbolizer *s)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	size_t cap = 0;

	s->ksyms_loaded = 1;
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		uint64_t addr;
		char *name;

		if (!parse_ksym(line, &addr, &name))
			continue;
		if (s->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *k = realloc(s->ksyms, cap * sizeof(*k));
			if (!k)
				break;
			s->ksyms = k;
		}
		s->ksyms[s->nksyms++] = (struct ksym){ addr, strdup(name) };
	}
	fclose(f);
	if (s->nksyms)
		qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
}

static void *kallsyms_reader(void *arg)
{
	load_kallsyms(arg);
	return NULL;
}

/* The reader's table, once it is there (its thread joined), else read now. */
static void kallsyms_ready(struct symbolizer *s)
{
	if (s->ksyms_reading) {
		pthread_join(s->ksyms_reader, NULL);
		s->ksyms_reading = 0;
	}
	if (!s->ksyms_loaded)
		load_kallsyms(s);
}

void sym_preload_kernel(struct symbolizer *s)
{
	if (s->ksyms_loaded || s->ksyms_reading)
		return;
	/* on its own thread; read here if no thread can be made */
	if (pthread_create(&s->ksyms_reader, NULL, kallsyms_reader, s) == 0)
		s->ksyms_reading = 1;
	else
		load_kallsyms(s);
}

void sym_kernel(struct symbolizer *s, uint64_t ip, struct sym_result *r)
{
	size_t lo = 0, hi;

	kallsyms_ready(s);
	r->symbol = NULL;
	r->module = "[kernel]";
	r->offset = ip;
	hi = s->nksyms;
	if (!hi || s->ksyms[0].addr > ip)
		return;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (s->ksyms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	r->symbol = s->ksyms[lo].name;
	r->offset = ip - s->ksyms[lo].addr;
}

void sym_set_clock(struct symbolizer *s, uint64_t (*clock)(void))
{
	s->clock = clock;
}

uint64_t sym_maps_reads(const struct symbolizer *s)
{
	return s ? s->maps_reads : 0;
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->ksyms_reading)   /* (its thread writes s: joined before s goes) */
		pthread_join(s->ksyms_reader, NULL);
	for (struct module *m = s->modules, *next; m; m = next) {
		next = m->next;
		for (size_t i = 0; i < m->nsyms; i++)
			free(m->syms[i].demangled);
		free(m->syms);
		if (m->elf)
			elf_end(m->elf);
		if (m->fd >= 0)
			close(m->fd);
		free(m->path);
		free(m);
	}
	for (size_t i = 0; i < s->pid_cap; i++)
		free(s->pids[i].maps);
	free(s->pids);
	for (size_t i = 0; i < s->nksyms; i++)
		free(s->ksyms[i].name);
	free(s->ksyms);
	free(s);
}
