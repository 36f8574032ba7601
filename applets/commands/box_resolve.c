/* kern box: every step's config from the validated flags, the image and
 * the host (box.h). launch() runs these configs and --plan prints them. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/strv.h"
#include "box/envfile.h"
#include "box/nouserns.h"
#include "box/users.h"
#include "egress/egress.h"

#include "box.h"

/* The user lookup of -u or the image's User, in the root's own /etc
 * (lower NULL: the host image, the host's /etc). */
static int resolve_user(const char *lower, const char *user, struct lockdown *ld, char *why,
			size_t len)
{
	int rootfd = lower ? open(lower, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	int rc = user_resolve(rootfd, user, ld, why, len);
	if (rootfd >= 0)
		close(rootfd);
	return rc;
}

/* 1 when box root writes host files as uid 0 in a shifted box: through a
 * writable bind or --bind-rootfs, which are idmapped (idmount.h). */
static int writes_host(const struct box_args *a)
{
	for (int i = 0; i < a->nbinds; i++)
		if (!a->binds[i].ro)
			return 1;
	return a->rootfs && a->bind_rootfs;
}

/* The id map a box gets; launch() and --plan decide it here. A non-root
 * user needs a range, --uid-range asks for one (a warning when it cannot be
 * had), and a registry image merely prefers one (silently). */
enum map_choice { MAP_SINGLE, MAP_RANGE_PREFERRED, MAP_RANGE };

static enum map_choice map_choice(const struct box_args *a, int nonroot)
{
	if (a->uid_range == 1 || nonroot)
		return MAP_RANGE;
	if (a->uid_range == 0 && a->image && strcmp(a->image, "host") != 0)
		return MAP_RANGE_PREFERRED;
	return MAP_SINGLE;
}

static int resolve_command(struct launch *l)
{
	struct box_args *a = l->a;
	char **ep = l->icfg.entrypoint, **cmd = l->icfg.cmd;
	if (a->entrypoint_set) {
		if (*a->entrypoint && strv_push(&l->argv, a->entrypoint) < 0)
			return -1;
	} else {
		for (char **p = ep; p && *p; p++)
			if (strv_push(&l->argv, *p) < 0)
				return -1;
	}
	if (a->ncmd > 0) {
		for (int i = 0; i < a->ncmd; i++)
			if (strv_push(&l->argv, a->cmd[i]) < 0)
				return -1;
	} else {
		for (char **p = cmd; p && *p; p++)
			if (strv_push(&l->argv, *p) < 0)
				return -1;
	}
	if (l->argv.n == 0 && strv_push(&l->argv, "/bin/sh") < 0)
		return -1;
	return 0;
}

static int env_item(struct seccomp_step *sc, const char *v, int tag)
{
	if (sc->nenv >= SECCOMP_STEP_MAX_ENV)
		return -1;
	sc->env[sc->nenv] = v;
	sc->env_tag[sc->nenv++] = tag;
	return 0;
}

/* The environment of the box as kern-seccomp's items: the image's, the
 * env files, -e, and the proxy variables of an egress box, in that order
 * (later wins). */
static int resolve_env(struct launch *l)
{
	static const char *const vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"};
	struct box_args *a = l->a;
	struct box_steps *s = &l->s;
	for (char **p = l->icfg.env; p && *p; p++)
		if (env_item(&s->sc, *p, SECCOMP_ENV_KV) < 0)
			return -1;
	for (int i = 0; i < a->nenv_files; i++) {
		snprintf(s->envfile_fd[i], sizeof s->envfile_fd[i], "/proc/self/fd/%d", 3 + i);
		if (env_item(&s->sc, s->envfile_fd[i], SECCOMP_ENV_FILE) < 0)
			return -1;
	}
	for (int i = 0; i < a->nenv_kv; i++)
		if (env_item(&s->sc, a->env_kv[i], SECCOMP_ENV_KV) < 0)
			return -1;
	for (int i = 0; a->net == NET_EGRESS && i < 4; i++) {
		snprintf(s->proxy_env[i], sizeof s->proxy_env[i], "%s=%s", vars[i], EGRESS_PROXY_URL);
		if (env_item(&s->sc, s->proxy_env[i], SECCOMP_ENV_KV) < 0)
			return -1;
	}
	return 0;
}

/* A box without a user namespace (nouserns.h): its ids are the host's.
 * An explicit --user stands; a root one only with --workload-is-host-root
 * (else exit 1). The image's USER stands unless it is root; else, and
 * without a user, 65534:65534, or root with --workload-is-host-root. */
static void host_identity(const struct box_args *a, struct box_steps *s)
{
	int root = !s->ld.user_set || s->ld.uid == 0 || s->ld.gid == 0;
	for (int i = 0; i < s->ld.ngroups; i++)
		root |= s->ld.groups[i] == 0;
	if (root && a->user && !a->host_root_workload)
		die("box", "--user %s is host uid or gid 0 in a box without a user namespace; "
		    "--workload-is-host-root allows it", a->user);
	if (root && !a->host_root_workload) {
		static const char nobody[] = "65534:65534";
		s->ld.user_set = 1;
		s->ld.uid = NOUSERNS_UID;
		s->ld.gid = NOUSERNS_GID;
		s->ld.ngroups = 0;
		s->user = nobody;
		root = 0;
	}
	s->host_root_ids = root;
}

/* Steps 4-15 as configs (struct box_steps), once the root is known (the
 * image resolved into l->lower and l->icfg). Only the user lookup reads
 * files. Returns 0, or -1 when out of room (an image with too many Env
 * entries) or memory. */
int resolve_steps(struct launch *l, enum root_kind root)
{
	struct box_args *a = l->a;
	struct box_steps *s = &l->s;
	const char *lower = root == ROOT_HOST ? NULL : l->lower;

	/* 4: command and user, from the image's own files. */
	if (resolve_command(l) < 0)
		return -1;
	s->user = a->user ? a->user : (l->icfg.user && *l->icfg.user ? l->icfg.user : NULL);
	if (s->user)
		s->user_rc = resolve_user(lower, s->user, &s->ld, s->user_why, sizeof s->user_why);
	if (a->no_userns && s->user_rc == 0)
		host_identity(a, s);
	s->nonroot = s->user_rc < 0 || (s->ld.user_set && (s->ld.uid != 0 || s->ld.gid != 0));
	user_format(&s->ld, s->rec_user, sizeof s->rec_user);

	/* 7: kern-cg. */
	s->cg = cg_step_defaults;
	s->cg.name = a->name;
	s->cg.limits = a->limits;

	/* 8: kern-egress, its control descriptor at PLAN_EGRESS_FD. */
	s->egress = a->net == NET_EGRESS;
	s->eg = egress_step_defaults;
	s->eg.allow = a->egress_raw;
	s->eg.name = a->name;
	s->eg.fd = PLAN_EGRESS_FD;

	/* 9-11: kern-ns. Registry images map a subordinate range when one is
	 * available; a non-root user needs one. */
	enum map_choice map = map_choice(a, s->nonroot);
	s->ns = ns_step_defaults;
	s->ns.net_host = a->net == NET_HOST;
	s->ns.range = map == MAP_RANGE ? NS_RANGE_ASKED
		      : map == MAP_RANGE_PREFERRED ? NS_RANGE_IF_AVAILABLE : NS_RANGE_NO;
	s->ns.host_root = a->map_host_root;
	if (a->no_userns) {
		/* No ids to map: root's --map-host-root and ranges do not apply. */
		s->ns.no_userns = 1;
		s->ns.range = NS_RANGE_NO;
		s->ns.host_root = 0;
	}
	if (s->egress)
		s->ns.egress_fd = PLAN_EGRESS_FD;
	struct ns_config nc = {.uid = geteuid(), .gid = getegid()};
	ns_step_config(&s->ns, &nc);
	int shifted = ns_shifted(&nc);
	/* A shifted box (a root caller's, unless --map-host-root) writes host
	 * files as uid 0 only through idmapped binds: no setuid files there. */
	int sxid = shifted && writes_host(a);
	uint64_t caps = a->no_userns ? 0 : sxid ? a->caps & ~LOCKDOWN_SXID_CAPS : a->caps;

	/* 12: kern-wait, and what it records. */
	s->wait = wait_step_defaults;
	s->wait.name = a->name;
	s->wait.runtime = l->runtime;
	s->wait.limits = a->limits;
	s->wait.timeout = a->timeout;
	s->wait.image = a->image ? a->image : a->rootfs;
	s->wait.lower = lower;
	s->wait.overlay = root == ROOT_OVERLAY;
	for (int i = 0; i < a->nlabels; i++)
		s->wait.labels[i] = a->labels[i];
	s->wait.nlabels = a->nlabels;
	s->wait.seccomp = seccomp_mode_name(a->seccomp_mode);
	s->wait.caps = s->nonroot ? 0 : caps;
	s->wait.user = s->rec_user[0] ? s->rec_user : NULL;
	s->wait.tty = a->tty;
	s->wait.restrict_sxid = sxid;
	s->wait.no_userns = a->no_userns;
	s->wait.host_root = a->no_userns && s->host_root_ids;

	/* 13-27: kern-fs in PID 1. The cgroup2 view is the caller's to say. */
	s->fs = fs_step_defaults;
	s->fs.root = root;
	s->fs.lower = lower;
	s->fs.hostname = a->hostname_buf;
	s->fs.disk = a->disk;
	s->fs.read_only = a->read_only;
	s->fs.rootless = geteuid() != 0;
	s->fs.shifted = shifted;
	s->fs.net_host = a->net == NET_HOST;
	s->fs.sysfs = a->sysfs;
	s->fs.tty = a->tty;
	s->fs.workdir = a->workdir ? a->workdir
		       : (l->icfg.workdir && *l->icfg.workdir ? l->icfg.workdir : "/");
	s->fs.binds = a->binds;
	s->fs.nbinds = a->nbinds;
	/* vdisk: profiles are tmpfs mounts of their size, or with backend =
	 * "disk" (root's) an ext4 the supervisor makes (vdisk.h). */
	memcpy(s->tmpfs, a->tmpfs, sizeof *s->tmpfs * (size_t)a->ntmpfs);
	s->fs.ntmpfs = a->ntmpfs;
	s->fs.nvdisks = 0;
	for (int i = 0; i < a->prof.nvdisks; i++) {
		struct vdisk *v = &a->prof.vdisks[i];
		struct tmpfs_spec *t = v->disk ? &s->vdisks[s->fs.nvdisks++] : &s->tmpfs[s->fs.ntmpfs++];
		*t = (struct tmpfs_spec){.path = v->path, .size = v->size};
	}
	s->fs.tmpfs = s->tmpfs;
	s->fs.vdisks = s->vdisks;
	/* vgpio: profiles pass devices through. */
	for (int i = 0; i < a->prof.ndevices; i++)
		s->devices[i].path = a->prof.devices[i];
	s->fs.devices = s->devices;
	s->fs.ndevices = a->prof.ndevices;

	/* 28-32: kern-seccomp. */
	if (resolve_env(l) < 0)
		return -1;
	s->sc.caps = caps;
	s->sc.caps_given = 1;
	s->sc.restrict_sxid = sxid;
	s->sc.host_root = a->no_userns && s->host_root_ids;
	s->sc.user = s->user;
	s->sc.seccomp_mode = a->seccomp_mode;
	s->sc.bpf = a->seccomp_bpf;
	s->sc.seccomp_given = 1;
	for (int i = 0; i < a->nulimits; i++)
		s->sc.ulimits[i] = a->ulimit_raw[i];
	s->sc.nulimits = a->nulimits;
	s->sc.apparmor = a->apparmor;
	s->sc.tty = a->tty;
	return 0;
}

/* The environment kern-seccomp would build from the items: the env files
 * were read by validate(), one after another, into envfile_entries. */
int build_env(struct launch *l)
{
	struct box_args *a = l->a;
	const struct seccomp_step *sc = &l->s.sc;
	int file = 0;
	if (env_defaults(&l->env, l->s.fs.hostname) < 0)
		return -1;
	for (int i = 0; i < sc->nenv; i++) {
		if (sc->env_tag[i] == SECCOMP_ENV_KV) {
			if (env_put(&l->env, sc->env[i]) < 0)
				return -1;
			continue;
		}
		for (int k = file ? a->envfile_end[file - 1] : 0; k < a->envfile_end[file]; k++)
			if (env_put(&l->env, a->envfile_entries.v[k]) < 0)
				return -1;
		file++;
	}
	return 0;
}

enum root_kind rootfs_root(const struct box_args *a, char *lower, size_t len)
{
	if (a->rootfs_real[0])
		snprintf(lower, len, "%s", a->rootfs_real);
	else if (!realpath(a->rootfs, lower))
		die_errno("box", "--rootfs %s", a->rootfs);
	return a->bind_rootfs ? ROOT_BIND : ROOT_OVERLAY;
}
