/*
 * clock_anchor.h — this node's CLOCK_REALTIME <-> CLOCK_MONOTONIC anchor
 * and boot id, stored in the session table (clock_anchor.c).
 */
#ifndef INGERO_COLLECTOR_CLOCK_ANCHOR_H
#define INGERO_COLLECTOR_CLOCK_ANCHOR_H

struct store;

void clock_anchor_record(struct store *st);

#endif
