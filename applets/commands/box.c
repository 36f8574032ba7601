/* kern box: run a command in a fresh, throw-away box.
 *
 * The launcher validates everything before any side effect, resolves the
 * image and the command, claims the name, then runs the steps of the
 * applet chain in this same process (kern-cg, kern-egress, kern-ns,
 * kern-wait; PID 1 runs kern-fs and kern-seccomp) — `--plan` prints that
 * chain, and running it by hand behaves the same. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/env.h"
#include "base/fdutil.h"
#include "base/json.h"
#include "base/parse.h"
#include "base/path.h"
#include "base/premap.h"
#include "base/selfexec.h"
#include "base/strv.h"
#include "base/testhook.h"
#include "base/xdg.h"
#include "box/box.h"
#include "box/envfile.h"
#include "box/init.h"
#include "box/logcap.h"
#include "box/nsjoin.h"
#include "box/mountspec.h"
#include "box/nouserns.h"
#include "box/ns.h"
#include "box/pid1sync.h"
#include "box/profiles.h"
#include "box/report.h"
#include "box/rootfs.h"
#include "box/supervise.h"
#include "box/users.h"
#include "box/userns_why.h"
#include "egress/egress.h"
#include "image/image.h"
#include "state/records.h"
#include "steps/checks.h"
#include "steps/steps.h"

#include "box.h"

static const char usage[] =
	"usage: kern box NAME [flags] [profile tokens] [-- CMD [ARG...]]\n"
	"\n"
	"Run CMD in a fresh, throw-away box. NAME: [A-Za-z0-9][A-Za-z0-9_.-]*, 1-64 bytes.\n"
	"\n"
	"root:\n"
	"  --image IMG            OCI image, or `host` (the host's system dirs, read-only)\n"
	"  --rootfs DIR           a prepared root directory (overlay; writes discarded)\n"
	"  --bind-rootfs          with --rootfs: bind DIR itself (writes land in DIR)\n"
	"  --pull POLICY          missing (default) | never | always\n"
	"  --platform OS/ARCH     image index selection (linux/amd64, arm64)\n"
	"  --ro, --read-only      read-only root\n"
	"  -v SRC:DST[:ro|:rw]    bind a host path (a missing SRC is created)\n"
	"  --mount type=bind,src=S,dst=D[,ro]   bind; SRC must exist\n"
	"  --netns PATH           join this network namespace instead of making one\n"
	"  --ipcns PATH, --utsns PATH   the same for the IPC and UTS namespaces\n"
	"                         (kern-oci's linux.namespaces path)\n"
	"  --seccomp-bpf FILE     a seccomp BPF program loaded as well as kern's own\n"
	"                         (kern-oci's compiled linux.seccomp)\n"
	"  --sysfs                a read-only sysfs of the box's own network namespace at\n"
	"                         /sys, firmware, powercap and debug entries masked\n"
	"  --tmpfs PATH[:SIZE]    fresh tmpfs (nosuid,nodev, mode 1777); after SIZE\n"
	"                         ,mode=OCTAL ,noexec ,strictatime may follow\n"
	"  -w, --workdir DIR      working directory (created if missing)\n"
	"command and environment:\n"
	"  --entrypoint STR       replace (or with \"\" clear) the image ENTRYPOINT\n"
	"  -e, --env K=V          add to the box environment\n"
	"  --env-file PATH        KEY=VALUE lines (also /proc/self/fd/N)\n"
	"  -u, --user SPEC        uid, name, uid:gid or name:group, from the box's /etc\n"
	"  --hostname NAME        box hostname (default: NAME)\n"
	"isolation:\n"
	"  --security-profile <untrusted>   seccomp allowlist, --cap-drop ALL, read-only root\n"
	"  --cap-drop CAP         ALL or [CAP_]NAME (repeatable)\n"
	"  --cap-add CAP          keep CAP, applied after --cap-drop (repeatable)\n"
	"  --apparmor NAME        enter this loaded AppArmor profile (fails closed)\n"
	"  --ulimit NAME=SOFT[:HARD]   setrlimit in the box (repeatable)\n"
	"  --uid-range            map a subordinate uid/gid range (warns if unavailable)\n"
	"  --no-uid-range         single-id map: box root = you\n"
	"  --map-host-root        root only: box root is host root (by default it is a\n"
	"                         subordinate id and binds are idmapped)\n"
	"  --userns auto|yes|no   no (root only; auto, for root, where the kernel\n"
	"                         refuses one): no user namespace; the workload then\n"
	"                         runs as --user, the image's non-root USER, or\n"
	"                         65534:65534, with no capabilities (default auto)\n"
	"  --workload-is-host-root   without a user namespace: let the workload run\n"
	"                         as host uid/gid 0 (still no capabilities)\n"
	"network:\n"
	"  --net [host|none], --network host|none   host network, or only lo (default)\n"
	"  --egress-allow D1,D2   only lo, plus an HTTP(S) proxy to these domains\n"
	"resources:\n"
	"  -m, --memory SIZE      memory cap (default 512m), swap 0, whole-box OOM kill\n"
	"  --disk SIZE            cap of the writable root, a tmpfs charged to the memory\n"
	"                         cap (default: half of it; 0 = the memory cap alone)\n"
	"  --cpus C               CPU bandwidth cap (0.5, 2, ...)\n"
	"  --pids-limit N         task cap (default 512)\n"
	"  --cpu-shares N         CPU weight, 2-262144 (v1 cpu.shares, v2 cpu.weight)\n"
	"  --cgroup-path /A/B     root: the box cgroup is exactly /A/B below each\n"
	"                         hierarchy's root (kern-oci's linux.cgroupsPath)\n"
	"  --require-limits       refuse to start unless memory and pids caps are enforced\n"
	"  --allow-uncapped       silence the notices when caps cannot be placed\n"
	"  --config PATH          kern.toml for vcpu:, vdisk:, vgpio: profile tokens\n"
	"lifetime:\n"
	"  --timeout N            SIGTERM at N seconds, SIGKILL 2 s later\n"
	"  -d, --detach           run in the background; print NAME\n"
	"  -t, --tty              a terminal of the box's own for CMD (job control),\n"
	"                         relayed to yours; stdin must be a terminal\n"
	"  --init                 accepted: kern's init is always PID 1\n"
	"  --label K=V            stored with the box, shown by `kern ps --json`\n"
	"output:\n"
	"  -q, --quiet            no notes or warnings (KERN_QUIET=1)\n"
	"  --show-config          print the resolved configuration and exit\n"
	"  --plan                 print the equivalent applet chain and exit\n"
	"\n"
	"Exit status: the command's own; 128+N when killed by signal N; 125 when the\n"
	"box could not be set up; 126/127 when CMD cannot be started; 1 for usage or\n"
	"image errors before any box exists.\n";

__attribute__((noreturn)) static void usage_error(const char *fmt, const char *arg)
{
	die("box", fmt, arg);
}

/* kern box's flags, each once: its name and alias, whether it takes a
 * value (the next word, or after `=` for a long flag; --net takes `host`
 * or `none` only when one follows), and what it does: a bare flag sets an
 * int of struct box_args (.set, to .val), a flag with a value is checked
 * and stored by its case in apply_flag(), whose error lines are
 * box-cli.md's. */
enum box_flag_id {
	BF_SET,			/* a bare flag: .set and .val say it all */
	BF_IMAGE,
	BF_BIND,
	BF_WORKDIR,
	BF_CAP_DROP,
	BF_CAP_ADD,
	BF_USER,
	BF_ENTRYPOINT,
	BF_TIMEOUT,
	BF_MEMORY,
	BF_DISK,
	BF_CPUS,
	BF_PIDS_LIMIT,
	BF_CPU_SHARES,
	BF_CGROUP_PATH,
	BF_SECCOMP_BPF,
	BF_NETNS,
	BF_IPCNS,
	BF_UTSNS,
	BF_SECURITY_PROFILE,
	BF_APPARMOR,
	BF_NET,
	BF_EGRESS_ALLOW,
	BF_TMPFS,
	BF_ENV_FILE,
	BF_ENV,
	BF_LABEL,
	BF_ULIMIT,
	BF_ROOTFS,
	BF_PULL,
	BF_PLATFORM,
	BF_HOSTNAME,
	BF_CONFIG,
	BF_USERNS,
};

enum { ARG_NONE, ARG_VALUE, ARG_OPTIONAL };

#define FLAG_AT(field) (offsetof(struct box_args, field) + 1)

static const struct box_flag {
	const char *name, *alias;
	int arg;
	enum box_flag_id id;
	size_t set;		/* FLAG_AT(field) of the int a bare flag sets, or 0 */
	int val;
} box_flags[] = {
	{"--image", NULL, ARG_VALUE, .id = BF_IMAGE},
	{"-v", NULL, ARG_VALUE, .id = BF_BIND},
	{"--mount", NULL, ARG_VALUE, .id = BF_BIND},
	{"--workdir", "-w", ARG_VALUE, .id = BF_WORKDIR},
	{"--cap-drop", NULL, ARG_VALUE, .id = BF_CAP_DROP},
	{"--cap-add", NULL, ARG_VALUE, .id = BF_CAP_ADD},
	{"--user", "-u", ARG_VALUE, .id = BF_USER},
	{"--entrypoint", NULL, ARG_VALUE, .id = BF_ENTRYPOINT},
	{"--timeout", NULL, ARG_VALUE, .id = BF_TIMEOUT},
	{"--memory", "-m", ARG_VALUE, .id = BF_MEMORY},
	{"--disk", NULL, ARG_VALUE, .id = BF_DISK},
	{"--cpus", NULL, ARG_VALUE, .id = BF_CPUS},
	{"--pids-limit", NULL, ARG_VALUE, .id = BF_PIDS_LIMIT},
	{"--cpu-shares", NULL, ARG_VALUE, .id = BF_CPU_SHARES},
	{"--cgroup-path", NULL, ARG_VALUE, .id = BF_CGROUP_PATH},
	{"--seccomp-bpf", NULL, ARG_VALUE, .id = BF_SECCOMP_BPF},
	{"--netns", NULL, ARG_VALUE, .id = BF_NETNS},
	{"--ipcns", NULL, ARG_VALUE, .id = BF_IPCNS},
	{"--utsns", NULL, ARG_VALUE, .id = BF_UTSNS},
	{"--security-profile", NULL, ARG_VALUE, .id = BF_SECURITY_PROFILE},
	{"--apparmor", NULL, ARG_VALUE, .id = BF_APPARMOR},
	{"--network", NULL, ARG_VALUE, .id = BF_NET},
	{"--egress-allow", NULL, ARG_VALUE, .id = BF_EGRESS_ALLOW},
	{"--tmpfs", NULL, ARG_VALUE, .id = BF_TMPFS},
	{"--env-file", NULL, ARG_VALUE, .id = BF_ENV_FILE},
	{"--env", "-e", ARG_VALUE, .id = BF_ENV},
	{"--label", NULL, ARG_VALUE, .id = BF_LABEL},
	{"--ulimit", NULL, ARG_VALUE, .id = BF_ULIMIT},
	{"--rootfs", NULL, ARG_VALUE, .id = BF_ROOTFS},
	{"--pull", NULL, ARG_VALUE, .id = BF_PULL},
	{"--platform", NULL, ARG_VALUE, .id = BF_PLATFORM},
	{"--hostname", NULL, ARG_VALUE, .id = BF_HOSTNAME},
	{"--config", NULL, ARG_VALUE, .id = BF_CONFIG},
	{"--userns", NULL, ARG_VALUE, .id = BF_USERNS},
	{"--net", NULL, ARG_OPTIONAL, .id = BF_NET},
	{"--ro", "--read-only", ARG_NONE, .set = FLAG_AT(read_only), .val = 1},
	{"--uid-range", NULL, ARG_NONE, .set = FLAG_AT(uid_range), .val = 1},
	{"--no-uid-range", NULL, ARG_NONE, .set = FLAG_AT(uid_range), .val = -1},
	{"--map-host-root", NULL, ARG_NONE, .set = FLAG_AT(map_host_root), .val = 1},
	{"--workload-is-host-root", NULL, ARG_NONE, .set = FLAG_AT(host_root_workload), .val = 1},
	{"--require-limits", NULL, ARG_NONE, .set = FLAG_AT(limits.require_limits), .val = 1},
	{"--allow-uncapped", NULL, ARG_NONE, .set = FLAG_AT(limits.allow_uncapped), .val = 1},
	{"--show-config", NULL, ARG_NONE, .set = FLAG_AT(show_config), .val = 1},
	{"--plan", NULL, ARG_NONE, .set = FLAG_AT(plan), .val = 1},
	{"--detach", "-d", ARG_NONE, .set = FLAG_AT(detach), .val = 1},
	{"--tty", "-t", ARG_NONE, .set = FLAG_AT(tty), .val = 1},
	/* kern's init is always PID 1 (isolation.md §1): accepted, nothing to set. */
	{"--init", NULL, ARG_NONE, .id = BF_SET},
	{"--quiet", "-q", ARG_NONE, .set = FLAG_AT(quiet), .val = 1},
	{"--bind-rootfs", NULL, ARG_NONE, .set = FLAG_AT(bind_rootfs), .val = 1},
	{"--sysfs", NULL, ARG_NONE, .set = FLAG_AT(sysfs), .val = 1},
};

static const struct box_flag *flag_find(const char *f)
{
	for (size_t i = 0; i < sizeof box_flags / sizeof box_flags[0]; i++)
		if (!strcmp(box_flags[i].name, f) || (box_flags[i].alias && !strcmp(box_flags[i].alias, f)))
			return &box_flags[i];
	return NULL;
}

static void add(char **list, int *n, char *v, const char *flag)
{
	if (*n >= MAX_LIST)
		die("box", "too many %s flags", flag);
	list[(*n)++] = v;
}

/* Store the value v of flag fl, written as f (-e or --env: the error
 * lines name the flag as it was given). */
static void apply_flag(struct box_args *a, const struct box_flag *fl, const char *f, char *v)
{
	const char *why = NULL;
	uint64_t u;
	unsigned long long ull;

	if (fl->set) {
		*(int *)(void *)((char *)a + fl->set - 1) = fl->val;
		return;
	}
	switch (fl->id) {
	case BF_IMAGE:
		a->image = v;
		break;
	case BF_BIND: {
		if (a->nbinds >= MAX_LIST)
			usage_error("too many binds%s", "");
		struct bind_spec *b = &a->binds[a->nbinds];
		if ((f[1] == 'v' ? parse_volume(v, b, &why) : parse_mount(v, b, &why)) < 0 ||
		    bind_check(b, &why) < 0) {
			die("box", "bad %s '%s': %s", f, v, why);
		}
		a->nbinds++;
		break;
	}
	case BF_WORKDIR:
		if (!path_is_clean_abs(v))
			usage_error("--workdir must be an absolute path without '.' or '..': '%s'", v);
		a->workdir = v;
		break;
	case BF_CAP_DROP:
		add(a->cap_drop, &a->ncap_drop, v, f);
		break;
	case BF_CAP_ADD:
		add(a->cap_add, &a->ncap_add, v, f);
		break;
	case BF_USER:
		if (!*v || strchr(v, '\n'))
			usage_error("bad --user '%s'", v);
		a->user = v;
		break;
	case BF_ENTRYPOINT:
		a->entrypoint = v;
		a->entrypoint_set = 1;
		break;
	case BF_TIMEOUT:
		if (parse_seconds(v, &ull) < 0)
			usage_error("--timeout takes whole seconds >= 1, not '%s'", v);
		a->timeout = ull;
		break;
	case BF_MEMORY:
		if (parse_size(v, 0, &u) < 0 || u < 4096)
			usage_error("bad --memory '%s' (bytes, or a number with b, k, m or g)", v);
		a->limits.memory = u;
		a->limits.memory_given = 1;
		break;
	case BF_DISK:
		if (parse_size(v, 1, &u) < 0)
			usage_error("bad --disk '%s' (bytes, or a number with b, k, m, g or t; "
				    "0 = only the memory cap)", v);
		a->disk = u;
		a->disk_given = 1;
		break;
	case BF_CPUS:
		if (parse_cpus(v, &u) < 0)
			usage_error("--cpus takes a decimal > 0, not '%s'", v);
		a->limits.cpu_micro = u;
		a->cpus_set = 1;
		break;
	case BF_PIDS_LIMIT:
		if (parse_u64(v, &ull) < 0 || ull < 1 || ull > 4194304)
			usage_error("--pids-limit takes an integer >= 1, not '%s'", v);
		a->limits.pids = ull;
		a->limits.pids_given = 1;
		break;
	case BF_CPU_SHARES:
		if (parse_u64(v, &ull) < 0 || ull < 2 || ull > 262144)
			usage_error("--cpu-shares takes an integer from 2 to 262144, not '%s'", v);
		a->limits.cpu_shares = ull;
		break;
	case BF_CGROUP_PATH:
		if (check_cgroup_path(v, &why) < 0)
			die("box", "bad --cgroup-path '%s': %s", v, why);
		if (geteuid() != 0)
			usage_error("--cgroup-path needs root (kern places a user's box cgroups itself): '%s'", v);
		a->limits.path = v;
		break;
	case BF_NETNS:
		if (v[0] != '/')
			usage_error("--netns must be an absolute path, not '%s'", v);
		/* The box keeps the namespace it starts in: the joined one. */
		a->netns = v;
		a->net = NET_HOST;
		a->net_flag = 1;
		break;
	case BF_IPCNS:
	case BF_UTSNS:
		if (v[0] != '/')
			usage_error("--ipcns and --utsns take an absolute path, not '%s'", v);
		*(fl->id == BF_IPCNS ? &a->ipcns : &a->utsns) = v;
		break;
	case BF_SECCOMP_BPF:
		if (v[0] != '/')
			usage_error("--seccomp-bpf must be an absolute path, not '%s'", v);
		a->seccomp_bpf = v;
		break;
	case BF_SECURITY_PROFILE:
		if (strcmp(v, "untrusted") != 0)
			usage_error("--security-profile takes only 'untrusted', not '%s'", v);
		a->untrusted = 1;
		break;
	case BF_APPARMOR: {
		size_t n = strlen(v);
		int ok = n >= 1 && n <= 128;
		for (size_t i = 0; ok && i < n; i++) {
			char c = v[i];
			int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
			ok = alnum || c == '_' || c == '.' || (i > 0 && c == '-');
		}
		if (!ok)
			usage_error("bad --apparmor profile name '%s'", v);
		a->apparmor = v;
		break;
	}
	case BF_NET:
		if (strcmp(v, "host") == 0)
			a->net = NET_HOST;
		else if (strcmp(v, "none") == 0)
			a->net = NET_NONE;
		else
			usage_error("--network takes host or none, not '%s'", v);
		a->net_flag = 1;
		break;
	case BF_EGRESS_ALLOW: {
		char *p, *d;
		a->egress_raw = v;
		/* The entries point into this copy, kept for the box's life. */
		a->egress_copy = strdup(v);
		if (!a->egress_copy)
			die("box", "out of memory");
		for (p = a->egress_copy; (d = strsep(&p, ","));) {
			if (!egress_domain_valid(d))
				usage_error("bad --egress-allow entry '%s' (LDH labels of 1-63 "
					    "characters, at least one dot, at most 253 in all)", d);
			add(a->egress, &a->negress, d, f);
		}
		break;
	}
	case BF_TMPFS:
		if (a->ntmpfs >= MAX_LIST)
			usage_error("too many --tmpfs%s", "");
		if (parse_tmpfs(v, &a->tmpfs[a->ntmpfs], &why) < 0)
			die("box", "bad --tmpfs '%s': %s", v, why);
		a->ntmpfs++;
		break;
	case BF_ENV_FILE:
		add(a->env_files, &a->nenv_files, v, f);
		break;
	case BF_ENV:
		if (!strchr(v, '=') || v[0] == '=')
			usage_error("--env takes KEY=VALUE, not '%s'", v);
		add(a->env_kv, &a->nenv_kv, v, f);
		break;
	case BF_LABEL:
		if (!strchr(v, '=') || v[0] == '=' || strchr(v, '\n'))
			usage_error("--label takes K=V with a non-empty K and no newline, not '%s'", v);
		if (a->nlabels >= RECORD_MAX_LABELS)
			usage_error("too many labels%s", "");
		a->labels[a->nlabels++] = v;
		break;
	case BF_ULIMIT:
		if (a->nulimits >= LOCKDOWN_MAX_ULIMITS)
			usage_error("too many --ulimit%s", "");
		if (ulimit_parse(v, &a->ulimits[a->nulimits], &why) < 0)
			die("box", "bad --ulimit '%s': %s", v, why);
		a->ulimit_raw[a->nulimits++] = v;
		break;
	case BF_ROOTFS:
		if (v[0] != '/')
			usage_error("--rootfs must be an absolute path, not '%s'", v);
		a->rootfs = v;
		break;
	case BF_PULL:
		if (!strcmp(v, "missing"))
			a->pull = PULL_MISSING;
		else if (!strcmp(v, "never"))
			a->pull = PULL_NEVER;
		else if (!strcmp(v, "always"))
			a->pull = PULL_ALWAYS;
		else
			usage_error("--pull takes missing, never or always, not '%s'", v);
		break;
	case BF_PLATFORM:
		if (image_platform(v, a->arch, sizeof a->arch) < 0)
			usage_error("bad --platform '%s' (linux/amd64, linux/arm64, or an arch)", v);
		a->platform = v;
		break;
	case BF_HOSTNAME: {
		size_t n = strlen(v);
		int ok = n >= 1;
		for (size_t i = 0; ok && i < n; i++)
			ok = (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
			     (v[i] >= '0' && v[i] <= '9') || v[i] == '-' || v[i] == '.';
		if (!ok)
			usage_error("bad --hostname '%s'", v);
		a->hostname = v;
		break;
	}
	case BF_CONFIG:
		a->config = v;
		break;
	case BF_USERNS:
		if ((a->userns = userns_mode_parse(v)) < 0)
			usage_error("--userns takes auto, yes or no, not '%s'", v);
		break;
	case BF_SET:
		break;
	}
}

static int parse(int argc, char **argv, struct box_args *a)
{
	int i;
	for (i = 1; i < argc; i++) {
		char *t = argv[i];
		if (strcmp(t, "--") == 0) {
			a->cmd = argv + i + 1;
			a->ncmd = argc - i - 1;
			break;
		}
		if (t[0] == '-' && t[1]) {
			char flag[64];
			char *eq = t[1] == '-' ? strchr(t, '=') : NULL;
			char *val = NULL;
			snprintf(flag, sizeof flag, "%.*s", eq ? (int)(eq - t) : (int)strlen(t), t);
			const struct box_flag *fl = flag_find(flag);
			if (!fl || (fl->arg == ARG_NONE && eq))
				die("box", "unknown flag '%s'", flag);
			if (eq) {
				val = eq + 1;
			} else if (fl->arg == ARG_OPTIONAL) {
				/* --net [host|none]: a following keyword is its value. */
				if (i + 1 < argc && (!strcmp(argv[i + 1], "host") || !strcmp(argv[i + 1], "none")))
					val = argv[++i];
				else
					val = "host";
			} else if (fl->arg == ARG_VALUE) {
				if (i + 1 >= argc)
					die("box", "flag '%s' needs a value", flag);
				val = argv[++i];
			}
			apply_flag(a, fl, flag, val);
			continue;
		}
		if (profile_token_valid(t)) {
			if (a->nprofiles >= MAX_LIST)
				usage_error("too many profile tokens%s", "");
			a->profile_tokens[a->nprofiles++] = t;
			continue;
		}
		if (!a->name) {
			if (!box_name_valid(t))
				die("box", "bad box name '%s' (expected [A-Za-z0-9][A-Za-z0-9_.-]*, 1-64 bytes)", t);
			a->name = t;
			continue;
		}
		die("box", "unexpected argument '%s' (did you forget `--` before the command?)", t);
	}
	if (!a->name) {
		fatal("box", "missing box NAME");
		die_hint("kern box NAME --image host -- CMD");
	}
	return 0;
}

/* A path has at most PATH_MAX / 2 components. */
#define ANCESTRY_MAX (PATH_MAX / 2)

static int listed_identity(const dev_t *dev, const ino_t *ino, int n, dev_t d, ino_t i)
{
	for (int k = 0; k < n; k++)
		if (dev[k] == d && ino[k] == i)
			return 1;
	return 0;
}

/* The path being checked against kern's state directories, with its
 * ancestry computed once for all of them. Static: large, and only the few
 * entries a real path needs are touched. */
static struct state_probe {
	char real[PATH_MAX];
	int resolved;	/* real is realpath()'s */
	int have, np;
	char runtime[PATH_MAX];	/* checked already: kern_runtime_each() names it again */
	dev_t pdev[ANCESTRY_MAX], sdev[ANCESTRY_MAX];
	ino_t pino[ANCESTRY_MAX], sino[ANCESTRY_MAX];
} probe;

/* 1 when probe.real is, contains, or lies inside the state directory st. */
static int overlaps_dir(const char *st, void *unused)
{
	char stc[PATH_MAX];
	int stc_self, resolved;
	(void)unused;
	if (!strcmp(st, probe.runtime))
		return 0;
	int ns = path_ancestry(st, stc, sizeof stc, probe.sdev, probe.sino, ANCESTRY_MAX, &stc_self,
			       &resolved);
	if (path_is_under(probe.real, stc) || path_is_under(stc, probe.real))
		return 1;
	if (!probe.have)
		return 0;
	/* Bind aliases: the path is the state dir or one of its ancestors by
	 * identity, or the state dir is one of the path's. */
	return listed_identity(probe.sdev, probe.sino, ns, probe.pdev[0], probe.pino[0]) ||
	       (stc_self && listed_identity(probe.pdev, probe.pino, probe.np, probe.sdev[0], probe.sino[0]));
}

/* A path that is, contains, or lies inside kern's own state, directly or
 * through a bind alias (same device and inode): the four state dirs, and
 * every other runtime directory that holds the caller's boxes (an older
 * kern's /tmp/kern-<uid>). */
static int overlaps_state(const char *path)
{
	static const enum kern_dir dirs[] = {KDIR_RUNTIME, KDIR_CACHE, KDIR_CONFIG, KDIR_DATA};
	static int mapped;
	char st[PATH_MAX];
	if (!mapped++)
		premap(&probe, sizeof probe);
	probe.np = path_ancestry(path, probe.real, sizeof probe.real, probe.pdev, probe.pino,
				 ANCESTRY_MAX, &probe.have, &probe.resolved);
	probe.runtime[0] = 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		if (kern_dir(dirs[i], st, sizeof st, 0) < 0)
			continue;
		if (overlaps_dir(st, NULL))
			return 1;
		if (dirs[i] == KDIR_RUNTIME)
			snprintf(probe.runtime, sizeof probe.runtime, "%s", st);
	}
	return kern_runtime_each(overlaps_dir, NULL);
}

static int validate(struct box_args *a)
{
	const char *v, *bad = NULL;
	char why[512];

	/* KERN_* variables (box-cli.md §3). */
	a->seccomp_mode = SECCOMP_ALLOWLIST;
	if ((v = env_get("KERN_SECCOMP"))) {
		a->seccomp_mode = seccomp_mode_parse(v);
		if (a->seccomp_mode < 0) {
			fatal("box", "KERN_SECCOMP=%s is not a seccomp mode", v);
			die_hint("use allowlist (the default), denylist or allowlist-audit");
		}
		if (a->untrusted && a->seccomp_mode != SECCOMP_ALLOWLIST)
			die("box", "KERN_SECCOMP=%s cannot weaken --security-profile untrusted", v);
	}
	if (env_get("KERN_REQUIRE_LIMITS"))
		a->limits.require_limits = 1;
	if (env_get("KERN_ALLOW_UNCAPPED"))
		a->limits.allow_uncapped = 1;
	if (env_get("KERN_NO_SCOPE"))
		a->limits.no_scope = 1;
	if (a->limits.require_limits && a->limits.allow_uncapped)
		die("box", "--require-limits and --allow-uncapped are mutually exclusive");
	/* A sysfs shows its network namespace's devices; the kernel gives a
	 * user namespace's box none of the host's. */
	if (a->netns && a->net != NET_HOST)
		die("box", "--netns joins a network namespace: --network none/--egress-allow do not apply");
	/* The supervisor joins them; no applet of the chain does. */
	if ((a->netns || a->ipcns || a->utsns) && a->plan)
		die("box", "--netns, --ipcns and --utsns have no applet-chain form (--plan)");
	if (a->utsns && a->hostname)
		die("box", "--utsns joins a UTS namespace: its name stays (no --hostname)");
	if (a->sysfs && a->net == NET_HOST && !a->netns)
		die("box", "--sysfs needs the box's own network namespace (not --net=host)");
	/* Roots. */
	if (!a->image && !a->rootfs) {
		fatal("box", "one of --image or --rootfs is required");
		die_hint("kern box NAME --image host -- CMD runs on the host's own system directories");
	}
	if (a->image && a->rootfs)
		die("box", "--image and --rootfs are mutually exclusive");
	if (a->bind_rootfs && (!a->rootfs || a->read_only))
		die("box", "--bind-rootfs needs --rootfs and cannot be combined with --ro or --image");
	if (a->image && strcmp(a->image, "host") != 0 && image_ref_check(a->image, &bad) < 0)
		die("image", "bad image reference '%s': %s", a->image, bad);
	if (a->rootfs && overlaps_state(a->rootfs))
		die("box", "--rootfs %s overlaps kern's own state", a->rootfs);
	/* The user namespace (nouserns.h): only root may box without one. */
	if (a->userns == USERNS_NO && geteuid() != 0)
		die("box", "--userns=no needs root");
	if (a->host_root_workload && (geteuid() != 0 || a->userns == USERNS_YES))
		die("box", "--workload-is-host-root applies only to root's boxes without a user namespace "
		    "(--userns=no or auto)");
	if (a->rootfs && probe.resolved)
		snprintf(a->rootfs_real, sizeof a->rootfs_real, "%s", probe.real);
	/* Network. */
	if (a->negress) {
		if (a->net == NET_HOST || a->detach)
			die("box", "--egress-allow cannot be combined with %s",
			    a->detach ? "-d" : "--net host");
		a->net = NET_EGRESS;
	}
	/* -t relays the caller's terminal: there must be one, and someone
	 * attached to it (docker refuses the same way). --plan only prints. */
	if (a->tty && a->detach)
		die("box", "-t cannot be combined with -d (a detached box has no terminal to relay)");
	if (a->tty && !a->plan && !a->show_config && a->console_fd < 0 && !isatty(0))
		die("box", "-t needs a terminal on stdin (the input device is not a TTY)");
	/* Capabilities and the security profile. */
	if (a->untrusted) {
		for (int i = 0; i < a->ncap_add; i++)
			if (!strcasecmp(a->cap_add[i], "ALL"))
				die("box", "--cap-add ALL cannot be combined with --security-profile untrusted");
		a->read_only = 1;
	}
	a->caps = caps_default();
	{
		char *drop[MAX_LIST + 1];
		int nd = 0;
		if (a->untrusted)
			drop[nd++] = "ALL";
		for (int i = 0; i < a->ncap_drop; i++)
			drop[nd++] = a->cap_drop[i];
		if (caps_adjust(&a->caps, drop, nd, a->cap_add, a->ncap_add, &bad) < 0)
			die("box", "unknown capability '%s'", bad);
	}
	/* Binds: sources outside kern's state (§8). */
	for (int i = 0; i < a->nbinds; i++)
		if (overlaps_state(a->binds[i].src))
			die("box", "bind source %s overlaps kern's own state (runtime, cache, config "
			    "or data directory)", a->binds[i].src);
	/* Environment files: read now, on the host, before anything forks. */
	for (int i = 0; i < a->nenv_files; i++) {
		if (overlaps_state(a->env_files[i]))
			die("box", "--env-file %s is inside kern's own state", a->env_files[i]);
		if (envfile_read(a->env_files[i], &a->envfile_entries, why, sizeof why) < 0)
			die("box", "--env-file: %s", why);
		a->envfile_end[i] = (int)a->envfile_entries.n;
	}
	/* Profiles: explicit flags win. */
	if (profiles_resolve(a->profile_tokens, a->nprofiles, a->config, &a->prof) ||
	    profiles_disk_backend(&a->prof, ns_shifted(&(struct ns_config){.uid = geteuid()}),
				  a->map_host_root, a->quiet || a->show_config))
		return EXIT_CLI;
	if (!a->limits.memory_given && a->prof.memory_set) {
		a->limits.memory = a->prof.memory;
		a->limits.memory_given = 1;
	}
	if (!a->limits.pids_given && a->prof.pids_set) {
		a->limits.pids = a->prof.pids;
		a->limits.pids_given = 1;
	}
	if (!a->cpus_set && a->prof.cpus_set) {
		a->limits.cpu_micro = a->prof.cpu_micro;
		a->cpus_set = 1;
	}
	if (a->cpus_set) {
		/* Clamped to the host's CPU count. */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n > 0 && a->limits.cpu_micro > (uint64_t)n * 1000000)
			a->limits.cpu_micro = (uint64_t)n * 1000000;
	}
	if (!a->limits.memory)
		a->limits.memory = KERN_MEMORY_DEFAULT;
	if (!a->disk_given)
		a->disk = disk_default(a->limits.memory);
	if (!a->limits.pids)
		a->limits.pids = 512;
	snprintf(a->hostname_buf, sizeof a->hostname_buf, "%.64s", a->hostname ? a->hostname : a->name);
	return 0;
}

/* Set by kern box in the copy of itself it starts when root's unprobed
 * box found user namespaces refused (box_run). */
#define SECOND_START_ENV "KERN_INTERNAL_SECOND_START"

/* This process is that second start: it probes, as any start that cannot
 * start again does, and the lines the first start printed before its
 * clone are not printed again. The variable is removed either way:
 * nothing of it reaches the box. */
static int second_start;

static void note_second_start(void)
{
	const char *v = getenv(SECOND_START_ENV);
	second_start = v && strcmp(v, "1") == 0;
	unsetenv(SECOND_START_ENV);
}

/* A -v source kern would create: whose it is depends on the mode, so
 * the mode is known before (probed) rather than found by a start that
 * has made it already. */
static int bind_source_missing(const struct box_args *a)
{
	struct stat st;
	for (int i = 0; i < a->nbinds; i++)
		if (lstat(a->binds[i].src, &st) < 0)
			return 1;
	return 0;
}

/* --userns, decided before anything depends on it (the workload's ids,
 * scratch, the record, the plan). auto decides only for root: a user's
 * box needs a user namespace and says why it cannot have one. A plain
 * foreground start does not probe (a clone into a new user namespace is
 * about 5% of a start): it assumes one and, when the box's own clone is
 * refused, undoes what it made and starts again without (box_run). What
 * another process waits on (detach, kern-oci's gate), --plan and a box
 * that would create a -v source probe. */
static void choose_userns(struct box_args *a)
{
	a->no_userns = a->userns == USERNS_NO;
	if (a->userns == USERNS_AUTO && geteuid() == 0) {
		int e;
		if (!second_start && !a->plan && !a->detach && a->gate_fd < 0 && a->ready_fd < 0 && a->console_fd < 0 &&
		    !bind_source_missing(a)) {
			a->userns_unprobed = 1;
			return;
		}
		e = userns_probe();
		/* Refusals; anything else (ENOMEM, EAGAIN) is no reason to box
		 * differently: the box's own clone then says what it is. */
		if (userns_refusal(e)) {
			a->no_userns = 1;
			a->userns_err = e;
		}
	}
	if (!a->no_userns)
		return;
	if (a->ncap_add)
		die("box", "--cap-add needs a user namespace: without one a kept capability is a host "
		    "capability (this box has none)");
	if (a->userns == USERNS_NO && (a->uid_range == 1 || a->map_host_root))
		die("box", "--userns=no maps no ids: %s does not apply",
		    a->uid_range == 1 ? "--uid-range" : "--map-host-root");
}

/* ---- --show-config: byte-identical for identical input ---- */

static void put_json_array(const char *key, char *const *v, int n)
{
	char q[8200];
	printf("%s: [", key);
	for (int i = 0; i < n; i++) {
		json_quote(v[i], q, sizeof q);
		printf("%s%s", i ? ", " : "", q);
	}
	printf("]\n");
}

static void show_config(const struct box_args *a)
{
	static const char *const nets[] = {"none", "host", "egress"};
	char buf[8200];
	printf("name: %s\n", a->name);
	printf("image: %s\n", a->image ? a->image : "");
	put_json_array("command", a->cmd, a->ncmd);
	printf("workdir: %s\n", a->workdir ? a->workdir : "");
	printf("user: %s\n", a->user ? a->user : "");
	printf("read_only: %s\n", a->read_only ? "true" : "false");
	printf("network: %s\n", nets[a->net]);
	printf("egress_allow: %s\n", a->egress_raw && a->negress ? a->egress_raw : "");
	printf("memory: %" PRIu64 "\n", a->limits.memory);
	if (a->cpus_set) {
		flag_cpus_text(a->limits.cpu_micro, buf, sizeof buf);
		printf("cpus: %s\n", buf);
	} else {
		printf("cpus: \n");
	}
	printf("pids_limit: %" PRIu64 "\n", a->limits.pids);
	if (a->timeout)
		printf("timeout: %llu\n", a->timeout);
	else
		printf("timeout: \n");
	printf("seccomp: %s\n", seccomp_mode_name(a->seccomp_mode));
	printf("seccomp_denied_syscalls: %d\n", seccomp_denied_count);
	printf("cap_drop: ");
	for (int i = 0; i < a->ncap_drop + a->untrusted; i++)
		printf("%s%s", i ? "," : "", i < a->untrusted ? "ALL" : a->cap_drop[i - a->untrusted]);
	printf("\ncap_add: ");
	for (int i = 0; i < a->ncap_add; i++)
		printf("%s%s", i ? "," : "", a->cap_add[i]);
	printf("\nsecurity_profile: %s\n", a->untrusted ? "untrusted" : "");
	printf("tmpfs: [");
	for (int i = 0; i < a->ntmpfs; i++) {
		json_quote(a->tmpfs[i].path, buf, sizeof buf);
		printf("%s{\"path\": %s, \"size\": %" PRIu64 "}", i ? ", " : "", buf, a->tmpfs[i].size);
	}
	printf("]\nmounts: [");
	for (int i = 0; i < a->nbinds; i++) {
		char dst[8200];
		json_quote(a->binds[i].src, buf, sizeof buf);
		json_quote(a->binds[i].dst, dst, sizeof dst);
		printf("%s{\"src\": %s, \"dst\": %s, \"ro\": %s}", i ? ", " : "", buf, dst,
		       a->binds[i].ro ? "true" : "false");
	}
	printf("]\nenv_keys: [");
	{
		/* Names only, never values: env-file keys, then --env keys. */
		int first = 1;
		for (size_t i = 0; i < a->envfile_entries.n; i++) {
			snprintf(buf, sizeof buf, "%.*s",
				 (int)strcspn(a->envfile_entries.v[i], "="), a->envfile_entries.v[i]);
			char q[8200];
			json_quote(buf, q, sizeof q);
			printf("%s%s", first ? "" : ", ", q);
			first = 0;
		}
		for (int i = 0; i < a->nenv_kv; i++) {
			snprintf(buf, sizeof buf, "%.*s", (int)strcspn(a->env_kv[i], "="), a->env_kv[i]);
			char q[8200];
			json_quote(buf, q, sizeof q);
			printf("%s%s", first ? "" : ", ", q);
			first = 0;
		}
	}
	printf("]\nlabels: {");
	for (int i = 0; i < a->nlabels; i++) {
		char k[8200], val[8200];
		snprintf(buf, sizeof buf, "%.*s", (int)strcspn(a->labels[i], "="), a->labels[i]);
		json_quote(buf, k, sizeof k);
		json_quote(strchr(a->labels[i], '=') + 1, val, sizeof val);
		printf("%s%s: %s", i ? ", " : "", k, val);
	}
	printf("}\n");
	put_json_array("profiles", a->profile_tokens, a->nprofiles);
	int has_vgpio = 0, has_vdisk = 0;
	for (int i = 0; i < a->nprofiles; i++) {
		has_vgpio |= !strncmp(a->profile_tokens[i], "vgpio:", 6);
		has_vdisk |= !strncmp(a->profile_tokens[i], "vdisk:", 6);
	}
	if (has_vgpio) {
		printf("devices: ");
		for (int i = 0; i < a->prof.ndevices; i++)
			printf("%s%s", i ? "," : "", a->prof.devices[i]);
		printf("\n");
	}
	if (a->tty)
		printf("tty: true\n");
	if (has_vdisk) {
		printf("vdisks: ");
		for (int i = 0; i < a->prof.nvdisks; i++)
			printf("%s%s=%" PRIu64 "@%s", i ? "," : "", a->prof.vdisks[i].name,
			       a->prof.vdisks[i].size, a->prof.vdisks[i].path);
		printf("\n");
	}
}

/* ---- the launcher ---- */

/* PID 1, cloned into its namespaces before its ids were mapped and
 * already in the box cgroup: it waits until the supervisor has mapped its
 * ids, makes the egress listener in its network namespace, builds the root
 * and runs init. */
static void pid1_main(void *ctx, int report_fd)
{
	struct launch *l = ctx;
	close(l->sync[0]);
	/* The host trees are asked for now, before the id maps arrive: the
	 * supervisor, still writing them, finds the requests waiting. Asked
	 * later, they wake a sleeping supervisor, which the scheduler runs
	 * on PID 1's CPU, ahead of PID 1, whenever the other CPU is busy
	 * (0.3-0.4 ms of PID 1's start when measured so). With
	 * --egress-allow the listener must come first (pid1sync.h). */
	if (l->a->net != NET_EGRESS)
		fs_prefetch(&l->fs);
	pid1sync_wait(l->sync[1], l->fs.shifted, l->a->net == NET_EGRESS);
	fs_build(&l->fs);
	/* The supervisor makes no more mounts for this box. */
	close(l->sync[1]);
	/* 12, late: into the cgroup made meanwhile, before anything of the
	 * box runs; its cgroup namespace is rooted there (17, best effort). */
	if (l->fs.cgroup_late) {
		pid1sync_join_cgroup(report_fd);
		(void)unshare(CLONE_NEWCGROUP);
	}
	init_run(&l->run, report_fd, l->alive_fd);
}

/* 7, late: the v1 box cgroup, made while PID 1 builds the root (the
 * mkdirs and limit writes are a tenth of a start), recorded, and handed to
 * PID 1 to join on its report socket. */
static int box_cgroup_late(struct supervisor *s)
{
	if (cg_create_later(s->cg) < 0)
		return -1;
	s->rec->byte1 = cg_byte1(s->cg);
	snprintf(s->rec->cgroup, sizeof s->rec->cgroup, "%s", cg_record(s->cg));
	test_phase("cgroup");
	return pid1sync_send_cgroup(s->report, s->cg);
}

/* The supervisor's side of the start, right after PID 1 was cloned into
 * its namespaces and (v2) the box cgroup (supervise() sees to that): steps
 * 9-11 of kern-ns (the id maps, written from outside), the egress
 * listener, a shifted box's idmapped mounts (pid1sync.h), a late box
 * cgroup. */
static int box_prepare(struct supervisor *s, pid_t pid1)
{
	struct launch *l = s->ctx;
	int rc;

	close(l->sync[1]);
	l->sync[1] = -1;
	if ((rc = ns_map(&l->nc, pid1, &l->ranged)))
		return rc;
	if (l->nonroot && !l->ranged && !l->nc.no_userns) {
		setup_failed("--user %u cannot be mapped: the subordinate id range could not be mapped",
			     (unsigned)l->run.ld.uid);
		return -1;
	}
	test_phase("unshare");
	s->idle = l->fs.cgroup_late ? box_cgroup_late : NULL;
	if ((rc = pid1sync_serve(l->sync[0], pid1, &l->nc, l->a->net == NET_EGRESS, l->egress_ctl, s)))
		return rc;
	if (supervise_idle(s) < 0)
		return -1;
	/* Off PID 1's path: other boxes' leftovers. */
	cg_sweep_parents(s->cg);
	return 0;
}

/* Missing absolute -v sources are created 0700, caller-owned (box-cli.md
 * §2.1), or, in a box without a user namespace (owner: its workload's
 * host ids, which write there), owned by the workload; --mount sources
 * must exist. Created with the same no-follow walk
 * the bind makes later (OT-9): one component at a time from /, mkdirat()
 * in the parent's descriptor, so a symlink on the way (a user's link to a
 * directory only root may write) is refused before anything is made
 * through it. */
static int prepare_sources(struct box_args *a, const struct lockdown *owner)
{
	for (int i = 0; i < a->nbinds; i++) {
		struct bind_spec *b = &a->binds[i];
		struct stat st;
		if (lstat(b->src, &st) == 0)
			continue;
		if (b->must_exist)
			die_setup_errno("--mount source %s", b->src);
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int fd = root < 0 ? -1 : mkdir_beneath(root, b->src + 1, 0700);
		int e = errno;
		const char *call = "create";
		if (root >= 0)
			close(root);
		if (fd >= 0 && owner && owner->user_set &&
		    fchownat(fd, "", owner->uid, owner->gid, AT_EMPTY_PATH) < 0) {
			e = errno;
			call = "fchownat (to the workload's ids)";
			close(fd);
			fd = -1;
		}
		if (fd < 0) {
			setup_failed("%s bind source %s: %s%s", call, b->src, strerror(e),
				     e == ELOOP ? " (a component is a symlink; kern never follows one)"
						: "");
			return EXIT_SETUP;
		}
		close(fd);
	}
	return 0;
}

/* -d: the supervisor becomes a session of its own writing to a log; the
 * launcher waits only until the workload was exec'd (or failed) and prints
 * NAME. Returns in the child; the parent exits. */
static int detach(struct launch *l, int *report_fd)
{
	int p[2];
	char log[PATH_MAX];
	if (pipe2(p, O_CLOEXEC) < 0)
		die_setup_errno("pipe");
	pid_t child = fork();
	if (child < 0)
		die_setup_errno("fork");
	if (child > 0) {
		char msg[4200];
		size_t got;
		close(p[1]);
		got = read_full(p[0], msg, sizeof msg - 1);
		msg[got] = 0;
		int code = got ? (int)strtol(msg, NULL, 10) : -1;
		char *text = strchr(msg, ' ');
		if (code == 0) {
			printf("%s\n", l->a->name);
			fflush(stdout);
			_exit(0);
		}
		if (text && text[1]) {
			for (char *line = text + 1, *e; *line; line = e + 1) {
				e = strchrnul(line, '\n');
				diag_line(0, "%.*s", (int)(e - line), line);
				if (!*e)
					break;
			}
		}
		alive_write(l->alive_fd, ALIVE_FAILED);
		_exit(code > 0 ? code : EXIT_SETUP);
	}
	close(p[0]);
	setsid();
	/* The detached supervisor holds neither the client's pipes nor its
	 * outcome and alive descriptors. */
	if (l->started_fd >= 0)
		close(l->started_fd);
	if (l->alive_fd >= 0)
		close(l->alive_fd);
	l->started_fd = l->alive_fd = -1;
	alive_remember(-1);
	/* The output goes through a relay that bounds the log (logcap.h). */
	char dir[PATH_MAX], file[128];
	const char *what;
	snprintf(dir, sizeof dir, "%s/logs", l->runtime);
	snprintf(file, sizeof file, "%s-%d.log", l->a->name, (int)getpid());
	snprintf(log, sizeof log, "%s/%s", dir, file);
	int lfd = log_relay_start(dir, file, &what);
	int nfd = lfd < 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (lfd < 0 || nfd < 0) {
		status_setup_failed(p[1], NULL, "%s %s: %s", lfd < 0 ? what : "open",
				    lfd < 0 ? log : "/dev/null", strerror(errno));
		_exit(EXIT_SETUP);
	}
	dup2(nfd, 0);
	dup2(lfd, 1);
	dup2(lfd, 2);
	close(nfd);
	close(lfd);
	*report_fd = p[1];
	return 0;
}

static int fail_started(struct launch *l, int code)
{
	alive_write(l->alive_fd, ALIVE_FAILED);
	return code;
}

/* The wall clock's seconds by the system call itself: time(3) is the
 * vDSO's, and its first call in a process maps the vDSO's pages (three
 * page faults, 10-15 µs each on a VM) where the system call is one. Nothing
 * else on the start path reads a clock. */
static long long wall_seconds(void)
{
	struct timespec ts;
	if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) < 0)
		return (long long)time(NULL);
	return (long long)ts.tv_sec;
}

static int launch(struct box_args *a, int alive_fd, int started_fd)
{
	/* Static, not on the stack: these are large and mostly unused, and on
	 * a zeroed stack frame every page is touched (each first touch is a
	 * page fault, and the fork of PID 1 copies what was touched). launch()
	 * runs once per process. */
	static struct launch l;
	static struct box_record rec;
	premap(&l, sizeof l);
	premap_dense(&rec, sizeof rec);
	l.a = a;
	l.alive_fd = alive_fd;
	l.started_fd = started_fd;
	struct box_steps *st = &l.s;
	struct cg_box *cg = NULL;
	enum root_kind root;
	int rc, detach_fd = a->ready_fd;

	/* 3: the root. */
	if (a->image && strcmp(a->image, "host") == 0) {
		root = ROOT_HOST;
	} else if (a->image) {
		if (image_resolve(a->image, a->pull, a->platform ? a->arch : NULL, l.lower, sizeof l.lower,
				  &l.icfg) < 0)
			die_reported();
		root = ROOT_OVERLAY;
	} else {
		root = rootfs_root(a, l.lower, sizeof l.lower);
	}
	/* 4-15 as configs; the user from the image's own files. */
	if (resolve_steps(&l, root) < 0 || build_env(&l) < 0)
		die_setup("out of memory, or more than %d environment entries", SECCOMP_STEP_MAX_ENV);
	if (st->user_rc < 0)
		die_setup("--user %s: %s", st->user, st->user_why);
	if (a->no_userns && a->userns == USERNS_AUTO)
		nouserns_note(a->userns_err, st->ld.user_set ? st->ld.uid : 0, st->ld.user_set ? st->ld.gid : 0);
	if (a->no_userns && st->host_root_ids)
		warning("--workload-is-host-root: this box has no user namespace and its workload runs as "
			"host uid %u gid %u (no capabilities): what it writes through binds is root's",
			st->ld.user_set ? (unsigned)st->ld.uid : 0, st->ld.user_set ? (unsigned)st->ld.gid : 0);
	l.run.ld = st->ld;
	l.run.ld.caps = st->sc.caps;
	l.run.ld.seccomp_mode = st->sc.seccomp_mode;
	if (st->sc.bpf) {
		struct sock_filter *prog;
		if (seccomp_prog_read(st->sc.bpf, &prog, &l.run.ld.extra_len) < 0)
			die_setup_errno("--seccomp-bpf %s (whole BPF instructions, 1 to 4096)", st->sc.bpf);
		l.run.ld.extra_bpf = prog;
	}
	l.run.ld.apparmor = st->sc.apparmor;
	l.run.ld.restrict_sxid = st->sc.restrict_sxid;
	l.run.ld.host_ids = a->no_userns;
	l.run.ld.host_root_ok = st->sc.host_root;
	memcpy(l.run.ld.ulimits, a->ulimits, sizeof a->ulimits);
	l.run.ld.nulimits = a->nulimits;
	int nonroot = st->nonroot;
	l.range_wanted = st->ns.range != NS_RANGE_NO;
	l.range_silent = st->ns.range == NS_RANGE_IF_AVAILABLE;
	/* 9-11 are kern-ns, in box_prepare(): the supervisor clones PID 1
	 * straight into its namespaces and, still in the host's, writes its id
	 * maps. */
	l.nc = (struct ns_config){.uid = geteuid(), .gid = getegid()};
	ns_step_config(&st->ns, &l.nc);
	l.nonroot = nonroot;
	l.fs = st->fs;
	/* Namespaces joined by path (kern-oci), before PID 1 is cloned:
	 * it stays in them and makes no such namespace of its own. */
	if ((a->netns && ns_join_path("--netns", a->netns, CLONE_NEWNET, a->sysfs ? "sysfs" : NULL,
				      &l.fs.sysfs_fd) < 0) ||
	    (a->ipcns && ns_join_path("--ipcns", a->ipcns, CLONE_NEWIPC, "mqueue", &l.fs.mqueue_fd) < 0) ||
	    (a->utsns && ns_join_path("--utsns", a->utsns, CLONE_NEWUTS, NULL, NULL) < 0))
		return fail_started(&l, EXIT_SETUP);
	l.nc.keep_ipc = a->ipcns != NULL;
	l.nc.keep_uts = l.fs.uts_joined = a->utsns != NULL;
	if (l.fs.shifted) {
		ns_root_ids(&l.nc.ids);
		ns_give_stdio(l.nc.ids.ubase, l.nc.ids.gbase);
	}
	if (nonroot && !a->no_userns && !ns_range_available(geteuid(), a->map_host_root)) {
		setup_failed("--user %u:%u cannot be mapped: no subordinate id range for uid %u in "
			     "/etc/subuid and /etc/subgid (or no newuidmap)", (unsigned)l.run.ld.uid,
			     (unsigned)l.run.ld.gid, (unsigned)geteuid());
		return fail_started(&l, EXIT_SETUP);
	}
	if ((rc = prepare_sources(a, a->no_userns ? &st->ld : NULL)))
		return fail_started(&l, rc);

	if (runtime_root(l.runtime, sizeof l.runtime) < 0)
		return fail_started(&l, EXIT_SETUP);
	if (a->detach && (rc = detach(&l, &detach_fd)))
		return fail_started(&l, rc);

	/* 5: claim the name, make scratch. */
	snprintf(rec.name, sizeof rec.name, "%s", a->name);
	rec.sup_pid = getpid();
	rec.sup_start = proc_start_time(rec.sup_pid);
	rec.created = wall_seconds();
	/* What kern-wait records from its flags. */
	snprintf(rec.image, sizeof rec.image, "%s", st->wait.image);
	snprintf(rec.seccomp, sizeof rec.seccomp, "%s", st->wait.seccomp);
	rec.caps = st->wait.caps;
	rec.shifted = l.fs.shifted;
	rec.restrict_sxid = st->wait.restrict_sxid;
	rec.no_userns = st->wait.no_userns;
	rec.host_root = st->wait.host_root;
	snprintf(rec.user, sizeof rec.user, "%s", st->rec_user);
	snprintf(rec.lower, sizeof rec.lower, "%s", st->wait.lower ? st->wait.lower : "");
	for (int i = 0; i < st->wait.nlabels; i++)
		rec.labels[rec.nlabels++] = st->wait.labels[i];
	if (scratch_path(l.runtime, a->name, rec.scratch, sizeof rec.scratch) < 0) {
		setup_failed("no scratch directory off overlayfs: %s", strerror(errno));
		return fail_started(&l, EXIT_SETUP);
	}
	/* For `kern exec` (borrowed like the labels; never freed here). */
	rec.env = l.env.v;
	snprintf(rec.workdir, sizeof rec.workdir, "%s", l.fs.workdir);
	snprintf(rec.apparmor, sizeof rec.apparmor, "%s", st->sc.apparmor ? st->sc.apparmor : "");
	for (int i = 0; i < st->sc.nulimits && i < RECORD_MAX_ULIMITS; i++)
		rec.ulimits[rec.nulimits++] = (char *)st->sc.ulimits[i];
	if ((rc = records_claim(l.runtime, &rec))) {
		rec.nlabels = 0;
		if (detach_fd >= 0) {
			char msg[600];
			snprintf(msg, sizeof msg, "error: box: a box named '%s' is already running", a->name);
			status_send(detach_fd, EXIT_CLI, msg);
		}
		return fail_started(&l, rc);
	}
	test_phase("claim");
	rc = EXIT_SETUP;
	/* A shifted box's scratch belongs to its root. */
	if (scratch_create(l.runtime, a->name, st->wait.overlay, l.range_wanted || nonroot || a->no_userns,
			   l.fs.shifted ? &l.nc.ids : NULL, l.scratch, sizeof l.scratch) < 0)
		goto undo;

	/* 7: kern-cg. The orphan sweep waits until PID 1 runs. A v1 box
	 * cgroup waits too, root's or a rootless caller's, but for egress (its
	 * proxy joins the box cgroup before PID 1 exists): it is made while
	 * PID 1 builds the root (box_cgroup_late). */
	st->cg.limits.sweep_later = 1;
	st->cg.limits.later = !st->egress;
	if (cg_create(st->cg.name, getpid(), &st->cg.limits, &cg) < 0) {
		rc = EXIT_SETUP;
		goto undo;
	}
	l.fs.cgroup_late = cg_pending(cg);
	/* Recorded with PID 1 by the supervisor: one write, not two. A box
	 * killed before that leaves a cgroup named after its dead supervisor,
	 * which recover and the next start sweep. */
	if (!l.fs.cgroup_late) {
		rec.byte1 = cg_byte1(cg);
		snprintf(rec.cgroup, sizeof rec.cgroup, "%s", cg_record(cg));
		test_phase("cgroup");
	}

	/* 8: kern-egress; PID 1 makes the listener (box_prepare). */
	l.egress_ctl = -1;
	if (st->egress) {
		struct egress_config ec = {.allow = a->egress, .nallow = a->negress, .cg = cg};
		if (!second_start)
			note("this box reaches only %s and %s subdomains, through an HTTP CONNECT/forward "
		     "proxy at %s; it has no other route", st->eg.allow, a->negress > 1 ? "their" : "its",
		     EGRESS_PROXY_URL);
		(void)egress_start(&ec, &l.egress_ctl);
		test_phase("egress");
	}

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l.sync) < 0) {
		setup_failed("socketpair: %s", strerror(errno));
		goto undo_cg;
	}

	/* 12-15: kern-wait; PID 1 runs kern-fs and kern-seccomp. */
	/* kern-fs's config plus what the chain finds in KERN_PID1. */
	l.fs.scratch = l.scratch;
	l.fs.idm_fd = l.sync[1];
	l.fs.cgroup2 = cg_is_v2(cg);
	l.run.env = l.env.v;
	l.run.argv = l.argv.v;
	l.run.tty = st->sc.tty;
	l.run.gated = a->gate_fd >= 0;
	l.run.gate_fd = a->gate_fd;

	/* A shifted PID 1 cannot walk root's private runtime directory to its
	 * scratch; it inherits it as its working directory (fs_config). */
	if (l.fs.shifted && chdir(l.scratch) < 0) {
		setup_failed("chdir %s: %s", l.scratch, strerror(errno));
		goto undo_sync;
	}
	struct supervisor s = {.runtime = l.runtime, .rec = &rec, .scratch = l.scratch, .cg = cg,
			       .timeout = st->wait.timeout, .started_fd = l.started_fd,
			       .alive_fd = l.alive_fd, .detach_fd = detach_fd, .pid1 = pid1_main,
			       .ctx = &l, .prepare = box_prepare, .clone_flags = ns_flags(&l.nc),
			       .tty = st->wait.tty, .to_console = a->console_fd >= 0,
			       .console_fd = a->console_fd, .userns_unprobed = a->userns_unprobed};
	rc = supervise(&s);
	close(l.sync[0]);
	if (l.sync[1] >= 0)
		close(l.sync[1]);
	if (rc == SUPERVISE_RETRY) {
		a->userns_err = s.userns_unprobed;
		rec.nlabels = 0;
		return rc;
	}
	if (l.range_wanted && l.range_silent && !l.ranged && rc != 0 && rc != EXIT_SETUP)
		note("%s", single_map_note);
	rec.nlabels = 0;
	return rc;

undo_sync:
	close(l.sync[0]);
	close(l.sync[1]);
undo_cg:
	egress_stop();
	cg_destroy(cg);
undo:
	if (detach_fd >= 0) {
		status_send(detach_fd, EXIT_SETUP, "");
		close(detach_fd);
	}
	if (l.scratch[0])
		scratch_remove(l.scratch);
	records_remove(l.runtime, &rec);
	rec.nlabels = 0;
	return fail_started(&l, rc);
}

/* Root's unprobed box met a refused CLONE_NEWUSER, and what it had made
 * is undone: kern box runs again from its own image with the same
 * arguments and descriptors, and that start probes and boxes without a
 * user namespace (its note names the cause). Returns only when that
 * cannot be done, after the refusal's own lines. */
static int start_again_without_userns(int argc, char **argv, int err, int started_fd)
{
	char **args = calloc((size_t)argc + 2, sizeof *args);
	int n = 0;
	if (args && setenv(SECOND_START_ENV, "1", 1) == 0) {
		args[n++] = "kern";
		args[n++] = "box";
		for (int i = 1; i < argc; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		if (started_fd >= 0)
			set_cloexec(started_fd, 0);
		fflush(NULL);
		(void)exec_next(args);
	}
	free(args);
	userns_report("clone", err, -1);
	alive_fail();
	return EXIT_SETUP;
}

int box_run(int argc, char **argv, int gate_fd, int ready_fd, int console_fd)
{
	static struct box_args a;	/* large and sparse: see launch() */
	int alive_fd = env_fd("KERN_ALIVE_FD");
	int started_fd = env_fd("KERN_STARTED_FD");
	int rc;

	premap_stack();
	a.gate_fd = gate_fd;
	a.ready_fd = ready_fd;
	a.console_fd = console_fd;
	/* 1: the alive byte first, before anything can take time (a second
	 * start's first start wrote it: a second `A` would read as "past
	 * setup", box-cli.md §5). */
	note_second_start();
	alive_remember(alive_fd);
	if (!second_start)
		alive_write(alive_fd, ALIVE_STARTED);
	if (started_fd >= 0)
		set_cloexec(started_fd, 1);
	/* 2 */
	if ((rc = parse(argc, argv, &a)) || (rc = validate(&a))) {
		alive_write(alive_fd, ALIVE_FAILED);
		return rc;
	}
	if (a.quiet)
		diag_quiet = 1;
	test_phase("parse");
	if (a.show_config) {
		show_config(&a);
		return 0;
	}
	choose_userns(&a);
	if (a.plan)
		return box_plan(&a);
	if (env_get("KERN_LANDLOCK_REQUIRED"))
		die_setup("KERN_LANDLOCK_REQUIRED is set but Landlock is not part of this build; refusing to start");
	if (a.untrusted && !second_start) {
		char adds[1024] = "";
		for (int i = 0; i < a.ncap_add; i++)
			snprintf(adds + strlen(adds), sizeof adds - strlen(adds), "%s%s",
				 i ? "," : ", cap-add=", a.cap_add[i]);
		diag_line(1, "kern: security-profile=untrusted: seccomp=%s, cap-drop=ALL%s, "
			  "read-only=on (untrusted code profile)", seccomp_mode_name(a.seccomp_mode), adds);
	}
	rc = launch(&a, alive_fd, started_fd);
	if (rc == SUPERVISE_RETRY)
		rc = start_again_without_userns(argc, argv, a.userns_err, started_fd);
	return rc;
}

static int box_main(int argc, char **argv)
{
	return box_run(argc, argv, -1, -1, -1);
}

APPLET(box, "run a command in a fresh box", usage, box_main);
