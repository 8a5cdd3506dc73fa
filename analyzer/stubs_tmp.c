/* stubs_tmp.c — subcommands not written yet (removed as each lands). */
#include "cli.h"
int ia_cmd_per_process(const struct ia_cli *c) { ia_err("per-process: not implemented yet"); return 1; }
int ia_cmd_timeline(const struct ia_cli *c) { ia_err("timeline: not implemented yet"); return 1; }
int ia_cmd_export(const struct ia_cli *c) { ia_err("export: not implemented yet"); return 1; }
int ia_cmd_report(const struct ia_cli *c) { ia_err("report: not implemented yet"); return 1; }
