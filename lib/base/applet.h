/* The applet table. Each file under applets/ defines one applet with
 * APPLET() at its end; applets/kern.c lists them. */
#ifndef KERN_APPLET_H
#define KERN_APPLET_H

struct applet {
	const char *name;	/* `kern NAME` and `kern-NAME` */
	const char *summary;	/* one line for `kern --help` */
	const char *usage;	/* printed by `kern NAME --help` */
	int (*main)(int argc, char **argv);
};

#define APPLET(id, summary_, usage_, main_) \
	const struct applet applet_##id = {#id, summary_, usage_, main_}

/* The applet called name, or NULL. */
const struct applet *applet_find(const char *name);

#endif
