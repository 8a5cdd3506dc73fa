/*
 * init.c — the library's constructor and destructor.
 *
 * The constructor runs in every process that loads the library, CUDA or
 * not (shells, compilers, pip…), so it stays cheap: read the environment,
 * map the shared ring (untouched pages cost nothing), register the fork
 * handler.  The sender thread and nng start later, on the first CUDA call
 * (fork.c), so a process that never calls CUDA never gets a thread.  The
 * mapping itself cannot wait: it must exist before the first fork, for
 * children forked before any CUDA call to share it with their parent.
 */
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fork.h"
#include "record.h"
#include "sender.h"
#include "shm.h"
#include "stack.h"

__attribute__((constructor)) static void ingero_init(void)
{
	ingero_config_load();
	ingero_hot.stack_classes = ingero_cfg.stack_classes;
	ingero_hot.launch_sample = ingero_cfg.launch_sample;
	ingero_hot.self_time = ingero_cfg.self_time;
	if (ingero_cfg.disabled) {
		ingero_self_init(NULL);
		return;   /* pure pass-through: wrappers forward, nothing records */
	}
	ingero_stack_init();
	ingero_clock_init();
	struct ingero_shm *shm = ingero_shm_create(ingero_cfg.ring_events, ingero_cfg.lanes, (uint32_t)getpid());
	if (!shm)
		ingero_debug("cannot map the event ring: tracing off");
	ingero_self_init(shm);
	ingero_hot.on = shm != NULL;
	atomic_store(&ingero_hot.recording, ingero_hot.on && !ingero_cfg.capture_profiler);
	ingero_capture_init();
	ingero_debug("loaded: endpoint %s, ring %llu events, stacks 0x%x depth %u, launch sample %u",
		     ingero_cfg.endpoint, (unsigned long long)ingero_cfg.ring_events,
		     ingero_cfg.stack_classes, ingero_cfg.stack_depth, ingero_cfg.launch_sample);
}

__attribute__((destructor)) static void ingero_fini(void)
{
	if (!ingero_hot.on || (uint32_t)getpid() != ingero_hot.pid)   /* not in a vfork child */
		return;
	if (ingero_hot.owner)
		ingero_sender_stop();
	else
		ingero_emit_bye();
}
