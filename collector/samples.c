/*
 * samples.c — on-CPU sampling (placeholder until bpf/samples.bpf.c lands).
 */
#include "tracer.h"

int samples_attach(struct tracer *t) { (void)t; return 0; }
void samples_event(struct tracer *t, const void *data, size_t len) { (void)t; (void)data; (void)len; }
void samples_detach(struct tracer *t) { (void)t; }
