/*
 * hot_data.c — the globals every recorded call reads, in one page: the
 * line of what every call reads (ingero_hot, hot_data.h), and the rest of
 * the process (ingero_self) and of the GPU marks' state (ingero_gpu; its
 * streams' slots apart, gpu_marks.c), which a call reads now and then (a
 * mark due, a thread's first call).  A big program evicts the library's
 * lines and their pages' TLB entries between two of its calls; each page a
 * call touches is then a page walk, which in a virtual machine walks the
 * host's tables too.
 *
 * One section of this file alone, so the linker keeps them together:
 * ingero_hot is aligned to 512 bytes and the three take 64 + 64 + 128
 * bytes at most (padded), so in whichever order the compiler lays them
 * out (GCC: last defined first) they end within 512 bytes of a 512-byte
 * boundary, inside one page (tests/e2e/preload_layout.sh checks the
 * layout the build made).
 */
#include "fork.h"
#include "hot_data.h"
#include "gpu_marks.h"

#define HOT_DATA(align) __attribute__((section(".data.ingero.hot"), aligned(align)))

struct ingero_gpu_state ingero_gpu HOT_DATA(64);
struct ingero_self ingero_self HOT_DATA(64) = { .procslot = -1 };
struct ingero_hot ingero_hot HOT_DATA(512);
