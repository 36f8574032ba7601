/* kern: the multicall entry point. Dispatches on the basename of argv[0]
 * (`kern-ns`) or on the first argument (`kern ns`, `kern box`). */
#include <stdio.h>
#include <string.h>

#include "base/applet.h"
#include "base/diag.h"
#include "base/proctitle.h"
#include "base/selfexec.h"
#include "base/version.h"

static const char usage[] =
	"usage: kern COMMAND [ARGS...]\n"
	"       kern-APPLET [ARGS...]\n"
	"       kern --version | --help\n"
	"\n"
	"kern runs a command in a fresh, throw-away Linux box: rootless, daemonless,\n"
	"in a few milliseconds. `kern COMMAND --help` describes each command.\n";

/* Commands users type, then the chain steps in the order a box runs them. */
#define COMMANDS(X) \
	X(box) X(exec) X(ps) X(oci) X(stop) X(recover) X(pull) X(load) X(images) X(rmi) X(gc) X(login) \
	X(doctor) X(spawner)
#define STEPS(X) X(pull) X(unpack) X(cg) X(egress) X(ns) X(wait) X(fs) X(seccomp)

#define DECLARE(id) extern const struct applet applet_##id;
COMMANDS(DECLARE)
extern const struct applet applet_unpack, applet_cg, applet_egress, applet_ns, applet_wait,
	applet_fs, applet_seccomp;
#define ENTRY(id) &applet_##id,
static const struct applet *const commands[] = {COMMANDS(ENTRY)};
static const struct applet *const steps[] = {STEPS(ENTRY)};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const struct applet *applet_find(const char *name)
{
	for (size_t i = 0; i < COUNT(commands); i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	for (size_t i = 0; i < COUNT(steps); i++)
		if (strcmp(steps[i]->name, name) == 0)
			return steps[i];
	return NULL;
}

static int list(void)
{
	fputs(usage, stdout);
	fputs("\ncommands:\n", stdout);
	for (size_t i = 0; i < COUNT(commands); i++)
		printf("  kern %-9s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\napplets, in the order a box runs them (each does one step, then execs\n"
	      "the rest of its argv; `kern box --plan` prints the chain):\n", stdout);
	for (size_t i = 0; i < COUNT(steps); i++)
		printf("  kern-%-9s %s\n", steps[i]->name, steps[i]->summary);
	return 0;
}

static int run(const struct applet *a, int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(a->usage, stdout);
		return 0;
	}
	return a->main(argc, argv);
}

int main(int argc, char **argv)
{
	const char *name = kern_applet_of(argv[0]);
	const struct applet *a;

	diag_init();
	proctitle_init(argc, argv);
	if (name && *name && (a = applet_find(name)))
		return run(a, argc, argv);
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_CLI;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		if (argc != 2)
			die("box", "--version takes no arguments");
		printf("kern %s\n", KERN_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc >= 3 && (a = applet_find(argv[2]))) {
			fputs(a->usage, stdout);
			return 0;
		}
		return list();
	}
	if ((a = applet_find(argv[1])))
		return run(a, argc - 1, argv + 1);
	fatal("box", "unknown command '%s'", argv[1]);
	die_hint("run `kern --help` for the list of commands");
}
