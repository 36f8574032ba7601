/* Placeholder until kern-cg lands: every box runs uncapped. */
#include <stdlib.h>

#include "cgroup.h"
#include "diag.h"

struct cg_box {
	int byte1;
};

static int make(const struct cg_limits *req, struct cg_box **out)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return EXIT_SETUP;
	(*out)->byte1 = req && req->memory_given ? 2 : 0;
	if (req && req->require_limits) {
		setup_failed("requested resource caps could not be enforced here and --require-limits is set; refusing to start");
		return EXIT_SETUP;
	}
	return 0;
}

int cg_create(const char *name, pid_t supervisor, const struct cg_limits *req, struct cg_box **out)
{
	(void)name;
	(void)supervisor;
	return make(req, out);
}

int cg_open(const char *name, pid_t supervisor, const struct cg_limits *req, struct cg_box **out)
{
	(void)name;
	(void)supervisor;
	return make(req, out);
}

int cg_open_record(const char *record, struct cg_box **out)
{
	(void)record;
	return make(NULL, out);
}

const char *cg_record(const struct cg_box *cg) { (void)cg; return ""; }
int cg_byte1(const struct cg_box *cg) { return cg ? cg->byte1 : 0; }
int cg_is_v2(const struct cg_box *cg) { (void)cg; return 0; }
int cg_enter(struct cg_box *cg) { (void)cg; return 0; }
int cg_leave(struct cg_box *cg) { (void)cg; return 0; }
int cg_attach(struct cg_box *cg, pid_t pid) { (void)cg; (void)pid; return 0; }
int cg_oom_fd(struct cg_box *cg) { (void)cg; return -1; }
int cg_oom_fired(struct cg_box *cg) { (void)cg; return 0; }
int cg_oom_evidence(struct cg_box *cg) { (void)cg; return 0; }
void cg_kill_all(struct cg_box *cg) { (void)cg; }
void cg_destroy(struct cg_box *cg) { free(cg); }
void cg_close(struct cg_box *cg) { free(cg); }
int cg_sweep_orphans(int max) { (void)max; return 0; }
