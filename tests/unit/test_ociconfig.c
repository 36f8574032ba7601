/* lib/ociruntime: config.json read strictly, then mapped into kern box's
 * flags. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ociruntime/config.h"
#include "ociruntime/map.h"
#include "ociruntime/sysctl.h"
#include "steps/checks.h"
#include "unit.h"

static struct oci_config cfg;

#define BASE_PROCESS "\"process\": {\"args\": [\"sh\", \"-c\", \"true\"], \"cwd\": \"/\"}"
#define NS "\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}]"

/* Parse {"ociVersion": "1.0.2", "root": {"path": "/tmp"}, BASE_PROCESS, extra}. */
static int parse_with(const char *extra, char *why, size_t wl)
{
	char js[8192];
	snprintf(js, sizeof js, "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"/tmp\"}%s%s%s%s}",
		 strstr(extra, "\"process\"") ? "" : ", ", strstr(extra, "\"process\"") ? "" : BASE_PROCESS,
		 *extra ? ", " : "", extra);
	return oci_config_parse(js, strlen(js), &cfg, why, wl);
}

static int refused_with(const char *extra, const char *line)
{
	char why[512];
	int rc = parse_with(extra, why, sizeof why);
	if (rc == 0) {
		oci_config_free(&cfg);
		return 0;
	}
	if (strcmp(why, line) != 0) {
		fprintf(stderr, "why: %s\n", why);
		return 0;
	}
	return 1;
}

TEST(oci_config_reads_the_fields_it_maps)
{
	char why[512];
	CHECK(parse_with("\"process\": {\"args\": [\"sleep\", \"1\"], \"cwd\": \"/w\", \"env\": [\"A=1\"], "
			 "\"user\": {\"uid\": 1000, \"gid\": 50, \"umask\": 18}, \"oomScoreAdj\": -5, "
			 "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 10, \"hard\": 20}], "
			 "\"capabilities\": {\"bounding\": [\"CAP_KILL\"]}}, \"hostname\": \"h\", "
			 "\"mounts\": [{\"destination\": \"/d\", \"type\": \"bind\", \"source\": \"/s\", "
			 "\"options\": [\"rbind\", \"ro\"]}], \"annotations\": {\"k\": \"v\\\"\"}, "
			 "\"linux\": {" NS ", \"resources\": {\"memory\": {\"limit\": 4096, \"swap\": -1}, "
			 "\"pids\": {\"limit\": 9}, \"cpu\": {\"quota\": 50000, \"period\": 100000}}}",
			 why, sizeof why) == 0);
	CHECK(cfg.nargs == 2 && !strcmp(cfg.args[1], "1") && cfg.args[2] == NULL);
	CHECK_STR(cfg.cwd, "/w");
	CHECK(cfg.nenv == 1 && cfg.uid == 1000 && cfg.gid == 50 && cfg.umask_set && cfg.umask == 18);
	CHECK(cfg.oom_adj_set && cfg.oom_adj == -5);
	CHECK(cfg.nrlimits == 1 && cfg.rlimits[0].soft == 10 && cfg.rlimits[0].hard == 20);
	CHECK(cfg.caps_set && cfg.ncaps[OCI_CAP_BOUNDING] == 1);
	CHECK(cfg.nmounts == 1 && cfg.mounts[0].nopts == 2 && !strcmp(cfg.mounts[0].src, "/s"));
	CHECK(cfg.nns == 4 && cfg.mem_set && cfg.mem == 4096 && cfg.swap == UINT64_MAX);
	CHECK(cfg.pids_set && cfg.pids == 9 && cfg.cpu_set && cfg.cpu_quota == 50000);
	CHECK_STR(cfg.annotations, "{\"k\":\"v\\\"\"}");

	struct strv argv = {0};
	CHECK(oci_map(&cfg, "/b", "c1", &argv, why, sizeof why) == 0);
	char flat[4096] = "";
	for (size_t i = 0; i < argv.n; i++)
		snprintf(flat + strlen(flat), sizeof flat - strlen(flat), "%s ", argv.v[i]);
	CHECK(strstr(flat, "box c1 -q --rootfs /tmp --bind-rootfs --net=host --hostname h --workdir /w "
			   "--user 1000:50 --env A=1 --cap-drop ALL --cap-add CAP_KILL --ulimit nofile=10:20 "
			   "--mount type=bind,src=/s,dst=/d,ro --memory 4096 --pids-limit 9 --cpus 0.500000 "
			   "--label oci.bundle=/b -- sleep 1 ") != NULL);
	strv_free(&argv);
	oci_config_free(&cfg);
}

TEST(oci_config_names_every_field_it_refuses)
{
	CHECK(refused_with("\"foo\": 1", "foo is not supported"));
	CHECK(refused_with("\"linux\": {\"intelRdt\": {}}", "linux.intelRdt is not supported"));
	CHECK(refused_with("\"linux\": {\"resources\": {\"memory\": {\"kernel\": 1}}}",
			   "linux.resources.memory.kernel is not supported"));
	CHECK(refused_with("\"linux\": {\"namespaces\": [{\"type\": \"net\", \"nspath\": \"/x\"}]}",
			   "linux.namespaces[0].nspath is not supported"));
	CHECK(refused_with("\"process\": {\"cwd\": \"/\"}", "process.args is missing"));
	CHECK(refused_with("\"process\": {\"args\": [\"a\"], \"cwd\": \"/\", \"terminal\": 1}",
			   "process.terminal must be true or false"));
	CHECK(refused_with("\"process\": {\"args\": [\"a\"], \"cwd\": \"/\", \"oomScoreAdj\": 1001}",
			   "process.oomScoreAdj must be an integer from -1000 to 1000"));
	CHECK(refused_with("\"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1}]}",
			   "linux.uidMappings[0].size is missing"));
	CHECK(refused_with("\"hooks\": {\"prestart\": []}", "hooks is not supported: kern runs no hooks"));
	CHECK(refused_with("\"process\": {\"args\": [\"a\"], \"cwd\": \"/\", \"user\": {\"uid\": 0, \"gid\": 5, "
			   "\"additionalGids\": [5, 6]}}",
			   "process.user.additionalGids[1] 6 is not supported: kern gives the process its primary "
			   "group (5) only"));
	CHECK(refused_with("\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_NOPE\"}}",
			   "linux.seccomp.defaultAction: unknown action 'SCMP_ACT_NOPE'"));
	CHECK(refused_with("\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": "
			   "[{\"names\": [\"Read!\"], \"action\": \"SCMP_ACT_ALLOW\"}]}}",
			   "linux.seccomp.syscalls[0].names[0]: 'Read!' is not a system call name"));
	CHECK(refused_with("\"linux\": {\"resources\": {\"devices\": [{\"allow\": true, \"type\": \"b\", "
			   "\"major\": 8, \"minor\": 0, \"access\": \"rwm\"}]}}",
			   "linux.resources.devices[0] allows a device kern's /dev does not have (it holds null, "
			   "zero, full, random, urandom, tty, console, ptmx and pts only)"));
}

TEST(oci_cgroups_path_cgroupfs_form_only)
{
	const char *why;
	const char *good[] = {"/default/c1", "a/b", "/libpod_parent/libpod-0123abcd", "/kubepods/pod@x+y.z", NULL};
	for (int i = 0; good[i]; i++)
		CHECK(check_cgroup_path(good[i], &why) == 0);
	const char *bad[] = {"", "/", "//a", "/a//b", "a/b/", "/a/../b", "..", "/a/.", "./a", "/a b",
			     "slice:prefix:name", "/a\nb", "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", NULL};
	for (int i = 0; bad[i]; i++)
		CHECK(check_cgroup_path(bad[i], &why) < 0);
	char longp[600];
	memset(longp, 'a', sizeof longp - 1);
	longp[0] = '/';
	longp[sizeof longp - 1] = 0;
	CHECK(check_cgroup_path(longp, &why) < 0);
	/* A dot inside a name is a name ("a..b", ".x"). */
	CHECK(check_cgroup_path("/a..b/.x", &why) == 0);

	char js[512], w[512];
	snprintf(js, sizeof js, "\"linux\": {" NS ", \"cgroupsPath\": \"/default/c1\", \"resources\": "
		 "{\"cpu\": {\"shares\": 512}}}");
	CHECK(parse_with(js, w, sizeof w) == 0);
	CHECK_STR(cfg.cgroups_path, "/default/c1");
	CHECK(cfg.cpu_shares == 512 && !cfg.cpu_set);
	oci_config_free(&cfg);
	CHECK(refused_with("\"linux\": {\"resources\": {\"cpu\": {\"shares\": 1}}}",
			   "linux.resources.cpu.shares must be 0 (unset) or from 2 to 262144"));
}

TEST(oci_sysctl_keys_of_the_box_namespaces_only)
{
	char path[256], why[512];
	CHECK(oci_sysctl_ns("net.ipv4.ping_group_range", 1, path, sizeof path, why, sizeof why) == CLONE_NEWNET);
	CHECK_STR(path, "/proc/sys/net/ipv4/ping_group_range");
	CHECK(oci_sysctl_ns("kernel.shmmax", 0, path, sizeof path, why, sizeof why) == CLONE_NEWIPC);
	CHECK(oci_sysctl_ns("fs.mqueue.msg_max", 0, path, sizeof path, why, sizeof why) == CLONE_NEWIPC);
	CHECK_STR(path, "/proc/sys/fs/mqueue/msg_max");
	CHECK(oci_sysctl_ns("net.ipv4.ip_forward", 0, path, sizeof path, why, sizeof why) < 0);
	CHECK(strstr(why, "needs a 'network' entry") != NULL);
	CHECK(oci_sysctl_ns("kernel.shmmaxx", 0, path, sizeof path, why, sizeof why) < 0);
	CHECK(oci_sysctl_ns("kernel.hostname", 1, path, sizeof path, why, sizeof why) < 0);
	CHECK(oci_sysctl_ns("vm.overcommit_memory", 1, path, sizeof path, why, sizeof why) < 0);
	CHECK(strstr(why, "linux.sysctl.vm.overcommit_memory is not supported") != NULL);
	const char *bad[] = {"", ".", "net.", ".net.x", "net..x", "net/../kernel", "net.ipv4.X", "net.a b", NULL};
	for (int i = 0; bad[i]; i++)
		CHECK(oci_sysctl_ns(bad[i], 1, path, sizeof path, why, sizeof why) < 0);
}

TEST(oci_config_refuses_hostile_bytes)
{
	char why[512];
	char *big = malloc(OCI_CONFIG_MAX + 2);
	memset(big, ' ', OCI_CONFIG_MAX + 1);
	big[OCI_CONFIG_MAX + 1] = 0;
	CHECK(oci_config_parse(big, OCI_CONFIG_MAX + 1, &cfg, why, sizeof why) < 0);
	CHECK(strstr(why, "larger than") != NULL);
	free(big);
	const char *bad[] = {"", "[]", "{\"ociVersion\": \"2.0\"}", "{\"ociVersion\": \"1.0\", \"ociVersion\": \"1.0\"}",
			     "{\"ociVersion\": \"1.0\", \"root\": {\"path\": \"a\\u0000b\"}}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(oci_config_parse(bad[i], strlen(bad[i]), &cfg, why, sizeof why) < 0);
}

TEST(oci_map_refuses_what_a_box_cannot_be)
{
	char why[512];
	struct strv argv = {0};
	CHECK(parse_with("\"mounts\": [{\"destination\": \"/a/../b\", \"type\": \"tmpfs\"}], \"linux\": {" NS "}",
			 why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK_STR(why, "mounts[0].destination '/a/../b' must be an absolute path without '.' or '..'");
	strv_free(&argv);
	oci_config_free(&cfg);
	CHECK(parse_with("\"mounts\": [{\"destination\": \"/sys\", \"type\": \"sysfs\"}], \"linux\": {" NS "}",
			 why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK_STR(why, "mounts[0]: a sysfs needs a 'network' entry in linux.namespaces (kern's sysfs is the box's "
		  "own network namespace's)");
	strv_free(&argv);
	oci_config_free(&cfg);
	CHECK(parse_with("\"mounts\": [{\"destination\": \"/sys\", \"type\": \"sysfs\", \"options\": [\"rw\"]}], \"linux\": {" NS "}",
			 why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK_STR(why, "mounts[0].options: 'rw' is not supported on sysfs (kern's is ro, nosuid, nodev, noexec)");
	strv_free(&argv);
	oci_config_free(&cfg);
	CHECK(parse_with("\"mounts\": [{\"destination\": \"/x\", \"type\": \"sysfs\"}], \"linux\": {" NS "}",
			 why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK(strstr(why, "type 'sysfs' at /x is not supported (kern mounts sysfs at /sys only)") != NULL);
	strv_free(&argv);
	oci_config_free(&cfg);
	/* A path joins a network, IPC or UTS namespace; another type's is refused. */
	CHECK(parse_with("\"linux\": {\"namespaces\": [{\"type\": \"pid\", \"path\": \"/proc/1/ns/pid\"}, "
			 "{\"type\": \"mount\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}]}", why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK_STR(why, "linux.namespaces[0].path: joining a 'pid' namespace is not supported (kern joins network, "
		  "IPC and UTS namespaces only; a box has its own pid namespace)");
	strv_free(&argv);
	oci_config_free(&cfg);
	CHECK(parse_with("\"hostname\": \"h\", \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": "
			 "\"mount\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\", \"path\": \"/run/u\"}]}",
			 why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK_STR(why, "hostname with a joined uts namespace (linux.namespaces[3].path) is not supported: the "
		  "namespace keeps its own name");
	strv_free(&argv);
	oci_config_free(&cfg);
	CHECK(parse_with("\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": "
			 "\"ipc\", \"path\": \"/run/i\"}, {\"type\": \"uts\", \"path\": \"/run/u\"}, "
			 "{\"type\": \"network\", \"path\": \"/run/netns/n\"}]}",
			 why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) == 0);
	int found = 0;
	for (size_t i = 0; i + 1 < argv.n; i++)
		found += (!strcmp(argv.v[i], "--netns") && !strcmp(argv.v[i + 1], "/run/netns/n")) +
			 (!strcmp(argv.v[i], "--ipcns") && !strcmp(argv.v[i + 1], "/run/i")) +
			 (!strcmp(argv.v[i], "--utsns") && !strcmp(argv.v[i + 1], "/run/u"));
	CHECK(found == 3);
	strv_free(&argv);
	oci_config_free(&cfg);
	CHECK(parse_with("\"linux\": {\"namespaces\": [{\"type\": \"pid\"}]}", why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK(strstr(why, "no 'mount' entry") != NULL);
	strv_free(&argv);
	oci_config_free(&cfg);
	CHECK(parse_with("\"linux\": {" NS ", \"maskedPaths\": [\"/proc/interrupts\"]}", why, sizeof why) == 0);
	CHECK(oci_map(&cfg, "/b", "c", &argv, why, sizeof why) < 0);
	CHECK(strstr(why, "linux.maskedPaths[0] '/proc/interrupts' is not supported") != NULL);
	strv_free(&argv);
	oci_config_free(&cfg);
	/* root.path "/" */
	CHECK(oci_config_parse("{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"/\"}, " BASE_PROCESS "}",
			       strlen("{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"/\"}, " BASE_PROCESS "}"),
			       &cfg, why, sizeof why) == 0);
	char root[4096];
	CHECK(oci_root_path(&cfg, "/b", root, sizeof root, why, sizeof why) < 0);
	CHECK(strstr(why, "resolves to /: refused") != NULL);
	oci_config_free(&cfg);
}
