/*
 * preload_uprobe_count.c — counts calls of CUDA entry points with eBPF
 * uprobes (system-wide, so children count too) while a command runs: the
 * independent reference for the preload library's launch counts on a real
 * GPU (docs/preload.md).  Needs root.
 *
 *   preload_uprobe_count BPF_OBJECT LIB:FUNC [LIB:FUNC...] -- CMD [ARGS...]
 *   → "uprobe FUNC count=N" per probe, CMD's exit status as ours.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int sep = 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (argc < 5 || sep < 3 || sep == argc - 1 || sep - 2 > 64) {
		fprintf(stderr, "usage: preload_uprobe_count BPF_OBJECT LIB:FUNC... -- CMD [ARGS...]\n");
		return 2;
	}
	libbpf_set_print(NULL);
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "preload_uprobe_count: cannot load %s (root and BPF needed)\n", argv[1]);
		return 1;
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "count_hit");
	int fd = bpf_object__find_map_fd_by_name(obj, "hits");
	for (int i = 2; i < sep; i++) {
		char *spec = strdup(argv[i]);
		char *func = strrchr(spec, ':');
		if (!func) {
			fprintf(stderr, "preload_uprobe_count: %s: want LIB:FUNC\n", argv[i]);
			return 2;
		}
		*func++ = 0;
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = func, .bpf_cookie = (unsigned long long)(i - 2));
		if (!prog || !bpf_program__attach_uprobe_opts(prog, -1, spec, 0, &o)) {
			fprintf(stderr, "preload_uprobe_count: cannot attach to %s in %s\n", func, spec);
			return 1;
		}
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[sep + 1], argv + sep + 1);
		perror("exec");
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	for (int i = 2; i < sep; i++) {
		unsigned key = (unsigned)(i - 2);
		unsigned long long v = 0;
		bpf_map_lookup_elem(fd, &key, &v);
		printf("uprobe %s count=%llu\n", strrchr(argv[i], ':') + 1, v);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
