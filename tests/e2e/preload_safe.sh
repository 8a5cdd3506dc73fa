#!/bin/sh
# preload_safe.sh — the library stays out of the way: INGERO_DISABLE=1 is
# pure pass-through; programs that never call CUDA run unchanged and get no
# thread; other interposers keep working (our dlsym keeps RTLD_NEXT
# relative to its real caller); a process without any CUDA library loaded
# is fine.
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_KERNEL_US=1

# kill switch
start_sink "$T/off.sink"
INGERO_DISABLE=1 traced "$B/tests/preload_calls" all 3 >"$T/off.truth"
check_eq "INGERO_DISABLE=1: the program runs" 0 $?
INGERO_DISABLE=1 traced "$B/tests/preload_calls" driver 2 >/dev/null
check_eq "INGERO_DISABLE=1: driver pointers still work" 0 $?
sleep 1
kill "$SINK_PID"; wait "$SINK_PID" 2>/dev/null; SINK_PID=
check_eq "INGERO_DISABLE=1: nothing sent" "messages=0" "$(grep -o 'messages=[0-9]*' "$T/off.sink")"

# programs without CUDA
check_eq "a shell runs unchanged" "hi" "$(traced sh -c 'echo hi')"
check_eq "python without CUDA: no extra thread" 1 \
	"$(traced python3 -c 'import os; print(len(os.listdir("/proc/self/task")))')"
check_eq "python without CUDA: forks fine" "ok" \
	"$(traced python3 -c 'import os; p = os.fork()
if p == 0: os._exit(0)
os.waitpid(p, 0); print("ok")')"

# another interposer chain: libA.foo → dlsym(RTLD_NEXT) → libB.foo → libc-free base
cat >"$T/a.c" <<'C'
#include <dlfcn.h>
int foo(void) { int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "foo"); return next ? 10 + next() : -1; }
C
cat >"$T/b.c" <<'C'
int foo(void) { return 1; }
C
cat >"$T/main.c" <<'C'
#include <stdio.h>
int foo(void);
int main(void) { printf("%d\n", foo()); return 0; }
C
if cc -shared -fPIC -o "$T/liba.so" "$T/a.c" -ldl && cc -shared -fPIC -o "$T/libb.so" "$T/b.c" &&
	cc -o "$T/main" "$T/main.c" -L"$T" -lb -Wl,-rpath,"$T"; then
	check_eq "RTLD_NEXT stays relative to its caller (interposer chains work)" 11 \
		"$(LD_PRELOAD="$PRELOAD $T/liba.so" "$T/main")"
else
	skip "no C compiler for the interposer chain check"
fi

# the wrapped driver look-up also works for a program that dlopens libcuda itself
start_sink "$T/drv.sink" -n 1
traced "$B/tests/preload_calls" driver 1 >/dev/null
check_eq "driver look-ups through dlsym on libcuda's handle" 0 $?
wait_sink
finish
