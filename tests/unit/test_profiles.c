/* lib/box/profiles.c and lib/box/vgpio.c: kern.toml lookup, vcpu/vdisk/vgpio
 * resolution, the device refusals of box-cli.md §2.3 (profiles) on this
 * host's real device nodes, and the error lines. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "box/profiles.h"
#include "unit.h"

static char dir[64], errout[4096];

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

/* profiles_resolve with stderr captured into errout. */
static int resolve(const char *toml, char **tok, int n, struct profiles *p)
{
	char path[128], cap[128];
	snprintf(dir, sizeof dir, "/tmp/kern-unit-prof.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/kern.toml", dir);
	write_file(path, toml);
	setenv("KERN_CONFIG", path, 1);
	snprintf(cap, sizeof cap, "%s/stderr", dir);
	fflush(stderr);
	int saved = dup(2), fd = open(cap, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	close(fd);
	int rc = profiles_resolve(tok, n, NULL, p);
	dup2(saved, 2);
	close(saved);
	fd = open(cap, O_RDONLY);
	ssize_t got = read(fd, errout, sizeof errout - 1);
	errout[got > 0 ? got : 0] = 0;
	close(fd);
	unlink(cap);
	unlink(path);
	rmdir(dir);
	unsetenv("KERN_CONFIG");
	return rc;
}

static const char toml[] =
	"[[vcpu]]\nname = \"small\"\ncpus = 0.5\nmemory = \"256m\"\npids = 64\n"
	"[[vcpu]]\nname = \"big\"\ncpus = \"2\"\nmemory = 1073741824\n"
	"[[vdisk]]\nname = \"scratch\"\nsize = \"1g\"\n"
	"[[vdisk]]\nname = \"data\"\nsize = 4096\npath = \"/data\"\nbackend = \"tmpfs\"\n"
	"[[vgpio]]\nname = \"nulls\"\ndevices = [\"/dev/null\", \"/dev/full\", \"/dev/null\"]\n"
	"[[vgpio]]\nname = \"kmsg\"\ndevices = [\"/dev/kmsg\"]\n"
	"[[vgpio]]\nname = \"fd\"\ndevices = [\"/dev/fd/0\"]\n"
	"[registry]\nmirrors = \"docker.io=http://127.0.0.1:5000\"\n";

TEST(profiles_resolve_in_order_later_wins)
{
	struct profiles p;
	char *tok[] = {"vcpu:big", "vcpu:small", "vdisk:scratch", "vdisk:data", "vgpio:nulls"};
	char line[512];
	CHECK(resolve(toml, tok, 5, &p) == 0);
	CHECK(errout[0] == 0);
	CHECK(p.cpus_set && p.cpu_micro == 500000);
	CHECK(p.memory_set && p.memory == 256ULL << 20);
	CHECK(p.pids_set && p.pids == 64);
	CHECK(p.nvdisks == 2);
	CHECK_STR(p.vdisks[0].path, "/vdisk/scratch");
	CHECK(p.vdisks[0].size == 1ULL << 30);
	CHECK(p.vdisks[1].size == 4096);
	CHECK(p.ndevices == 2);
	profiles_devices_line(&p, line, sizeof line);
	CHECK_STR(line, "devices: /dev/null,/dev/full");
	profiles_vdisks_line(&p, line, sizeof line);
	CHECK_STR(line, "vdisks: scratch=1073741824@/vdisk/scratch,data=4096@/data");
	char *two[] = {"vcpu:small", "vcpu:big"};
	CHECK(resolve(toml, two, 2, &p) == 0);
	CHECK(p.cpu_micro == 2000000 && p.memory == 1ULL << 30 && p.pids == 64);
	CHECK(resolve(toml, NULL, 0, &p) == 0 && !p.memory_set && p.config_path[0] == 0);
}

TEST(profiles_refuse_undefined_and_bad_tables)
{
	struct profiles p;
	char *tok[] = {"vcpu:nope"};
	char want[256];
	CHECK(resolve(toml, tok, 1, &p) == -1);
	snprintf(want, sizeof want, "error: box: profile 'vcpu:nope' is not defined in %s/kern.toml\n", dir);
	CHECK_STR(errout, want);
	char *small[] = {"vcpu:small"};
	CHECK(resolve("[[vcpu]]\nname = \"small\"\nmemroy = \"1g\"\n", small, 1, &p) == -1);
	snprintf(want, sizeof want,
		 "error: box: %s/kern.toml:3:1: unknown key 'memroy' in [[vcpu]] (known: name, cpus, memory, pids)\n",
		 dir);
	CHECK_STR(errout, want);
	CHECK(resolve("[[vcpu]]\nname = \"small\"\ncpus = \"1e3\"\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:3:8: 'cpus' must be a decimal > 0") != NULL);
	CHECK(resolve("[[vcpu]]\nname = \"small\"\nmemory = -5\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:3:10: 'memory' must be a size") != NULL);
	CHECK(resolve("[[vcpu]]\nname = \"small\"\n[[vcpu]]\nname = \"small\"\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:4:8: vcpu:small is defined twice (first at line 1)") != NULL);
	CHECK(resolve("[vcpu]\nname = \"small\"\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:1:1: unknown table [vcpu]") != NULL);
	CHECK(resolve("memory = \"1g\"\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:1:1: key 'memory' outside any table") != NULL);
	CHECK(resolve("[[vcpu]]\ncpus = 1\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:1:1: [[vcpu]] has no name") != NULL);
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nsize = \"1g\"\npath = \"/dev/shm\"\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "'path' must be an absolute path outside") != NULL);
	/* backend = "disk": recorded, with a size mke2fs and ext4 take
	 * (1m..16t, whichever key comes first). */
	char *d[] = {"vdisk:d"};
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nsize = \"1g\"\nbackend = \"disk\"\n", d, 1, &p) == 0);
	CHECK(p.nvdisks == 1 && p.vdisks[0].disk == 1 && p.vdisks[0].size == 1ULL << 30);
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nsize = \"512k\"\nbackend = \"disk\"\n", d, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:3:8: a vdisk with backend = \"disk\" must have a 'size' from 1m to 16t") != NULL);
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nbackend = \"disk\"\nsize = \"17t\"\n", d, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:4:8: a vdisk with backend = \"disk\" must have a 'size' from 1m to 16t") != NULL);
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nsize = \"16t\"\nbackend = \"disk\"\n", d, 1, &p) == 0);
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nsize = \"1g\"\nbackend = \"ext4\"\n", d, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:4:11: 'backend' must be \"tmpfs\" or \"disk\"") != NULL);
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nsize = \"1g\"\nbackend = \"tmpfs\"\n", d, 1, &p) == 0);
	CHECK(p.nvdisks == 1 && p.vdisks[0].disk == 0);
	/* Not root: a tmpfs instead, one note; root with --map-host-root: refused. */
	CHECK(resolve("[[vdisk]]\nname = \"d\"\nsize = \"1g\"\nbackend = \"disk\"\n", d, 1, &p) == 0);
	fflush(stderr);
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	close(null);
	CHECK(profiles_disk_backend(&p, 1, 1, 0) == -1);
	dup2(saved, 2);
	close(saved);
	CHECK(profiles_disk_backend(&p, 1, 0, 0) == 0 && p.vdisks[0].disk == 1);
	CHECK(profiles_disk_backend(&p, 0, 0, 1) == 0 && p.vdisks[0].disk == 0);
	CHECK(resolve("[[vcpu]]\nname = \"small\"\ncpus = 1 x\n", small, 1, &p) == -1);
	CHECK(strstr(errout, "kern.toml:3:10: expected the end of the line after the value") != NULL);
	/* Nothing half-filled is returned on error. */
	CHECK(!p.memory_set && p.ndevices == 0 && p.nvdisks == 0);
	char *bad[] = {"vcpu:"};
	CHECK(resolve(toml, bad, 1, &p) == -1);
	CHECK_STR(errout, "error: box: bad profile token 'vcpu:'\n");
}

TEST(profiles_config_lookup_order)
{
	struct profiles p;
	char *tok[] = {"vcpu:x"};
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("KERN_CONFIG", "/nonexistent/k.toml", 1);
	fflush(stderr);
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	CHECK(profiles_resolve(tok, 1, "/also/not", &p) == -1);
	unsetenv("KERN_CONFIG");
	setenv("XDG_CONFIG_HOME", "/nonexistent-xdg", 1);
	setenv("HOME", "/nonexistent-home", 1);
	CHECK(profiles_resolve(tok, 1, NULL, &p) == -1);
	dup2(saved, 2);
	close(saved);
	close(null);
	/* --config is used when KERN_CONFIG is unset. */
	char d[] = "/tmp/kern-unit-cfg.XXXXXX", path[128];
	CHECK(mkdtemp(d) != NULL);
	snprintf(path, sizeof path, "%s/c.toml", d);
	write_file(path, "[[vcpu]]\nname = \"x\"\npids = 7\n");
	CHECK(profiles_resolve(tok, 1, path, &p) == 0 && p.pids == 7);
	CHECK_STR(p.config_path, path);
	/* $XDG_CONFIG_HOME/kern/kern.toml when neither is given. */
	char xdg[160], kd[192];
	snprintf(xdg, sizeof xdg, "%s", d);
	snprintf(kd, sizeof kd, "%s/kern", d);
	CHECK(mkdir(kd, 0700) == 0);
	snprintf(path, sizeof path, "%s/kern/kern.toml", d);
	write_file(path, "[[vcpu]]\nname = \"x\"\npids = 9\n");
	setenv("XDG_CONFIG_HOME", xdg, 1);
	CHECK(profiles_resolve(tok, 1, NULL, &p) == 0 && p.pids == 9);
	unlink(path);
	rmdir(kd);
	snprintf(path, sizeof path, "%s/c.toml", d);
	unlink(path);
	rmdir(d);
	unsetenv("XDG_CONFIG_HOME");
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	free(home);
}

static const char *refusal(const char *dev)
{
	const char *why = NULL;
	int fd = vgpio_open(dev, &why);
	if (fd >= 0) {
		close(fd);
		return NULL;
	}
	return why;
}

TEST(vgpio_refuses_by_what_the_node_is)
{
	const char *w;
	CHECK(refusal("/dev/null") == NULL);
	CHECK(refusal("/dev//full") == NULL);
	CHECK((w = refusal("/dev/kmsg")) && strstr(w, "kernel log"));
	if (access("/dev/mem", F_OK) == 0)
		CHECK((w = refusal("/dev/mem")) && strstr(w, "memory"));
	if (access("/dev/net/tun", F_OK) == 0)
		CHECK((w = refusal("/dev/net/tun")) && strstr(w, "tun"));
	if (access("/dev/kvm", F_OK) == 0)
		CHECK((w = refusal("/dev/kvm")) && strstr(w, "kvm"));
	CHECK((w = refusal("/dev/console")) && strstr(w, "terminal"));
	CHECK((w = refusal("/dev/ptmx")) && strstr(w, "terminal"));
	CHECK((w = refusal("/dev/tty")) && strstr(w, "terminal"));
	CHECK((w = refusal("/dev/pts/0")) && strstr(w, "terminal"));
	CHECK((w = refusal("/dev/fd/0")) && strstr(w, "symlink"));
	CHECK((w = refusal("/dev/shm")) && strstr(w, "character device"));
	CHECK((w = refusal("/dev")) && strstr(w, "under /dev"));
	CHECK((w = refusal("/etc/passwd")) && strstr(w, "under /dev"));
	CHECK((w = refusal("/dev/../etc/passwd")) && strstr(w, "clean"));
	CHECK((w = refusal("dev/null")) && strstr(w, "clean"));
	CHECK((w = refusal("/dev/nonexistent")) && strstr(w, "No such file"));
	struct stat st;
	const char *blk = NULL;
	static const char *const cands[] = {"/dev/loop0", "/dev/vda", "/dev/sda", "/dev/nvme0n1"};
	for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !blk; i++)
		if (lstat(cands[i], &st) == 0 && S_ISBLK(st.st_mode))
			blk = cands[i];
	if (blk)
		CHECK((w = refusal(blk)) && strstr(w, "block"));
}

TEST(profiles_vgpio_refusal_names_the_device)
{
	struct profiles p;
	char *tok[] = {"vgpio:nulls", "vgpio:kmsg"};
	CHECK(resolve(toml, tok, 2, &p) == -1);
	CHECK_STR(errout, "error: box: profile 'vgpio:kmsg': refusing device '/dev/kmsg': memory, port "
			  "and kernel log devices are never passed to a box\n");
	char *fd[] = {"vgpio:fd"};
	CHECK(resolve(toml, fd, 1, &p) == -1);
	CHECK(strstr(errout, "refusing device '/dev/fd/0': the path goes through a symlink") != NULL);
}

TEST(profile_token_syntax)
{
	static const char *const good[] = {"vcpu:small", "vgpio:nulls", "vdisk:a", "vcpu:0", "vdisk:a.b_c-d9"};
	static const char *const bad[] = {"vcpu:", "vcpu:.x", "vcpu:-x", "vcpu:_x", "vcpux:a", "vdisk", "box",
					  "vcpu:a b", "vcpu:a/b", "vcpu:é", "VCPU:a", " vcpu:a", "vcpu:a\n",
					  "vnet:a", ""};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		CHECK(profile_token_valid(good[i]));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(!profile_token_valid(bad[i]));
}

TEST(profiles_without_tokens_are_empty)
{
	static struct profiles p;
	memset(&p, 0x5a, sizeof p);
	CHECK(profiles_resolve(NULL, 0, "/not/read", &p) == 0);
	CHECK(p.memory == 0 && !p.memory_set && p.pids == 0 && !p.pids_set);
	CHECK(p.cpu_micro == 0 && !p.cpus_set && p.nvdisks == 0 && p.ndevices == 0);
	CHECK_STR(p.config_path, "");
}
