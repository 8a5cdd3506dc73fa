/* version.h — the collector's version, stored in session.collector_version. */
#ifndef INGERO_COLLECTOR_VERSION
#define INGERO_COLLECTOR_VERSION "0.1.0"
#endif
