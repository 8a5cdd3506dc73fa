/* version.h — the collector's version, stored in session.collector_version:
 * the project's one version (include/ingero/version.h). */
#ifndef INGERO_COLLECTOR_VERSION
#include <ingero/version.h>
#define INGERO_COLLECTOR_VERSION INGERO_VERSION
#endif
