/* Which cause kern names when CLONE_NEWUSER is refused (lib/box/userns_why.c):
 * the decision from observed facts, one case per cause and its order. */
#include <errno.h>
#include <string.h>

#include "unit.h"
#include "box/userns_why.h"

/* A host where nothing restricts user namespaces, for uid euid. */
static struct userns_facts clean(int err, uid_t euid)
{
	struct userns_facts f = {.err = err, .proc = 1, .chrooted = 0, .chroot_how = "how",
				 .ns_user = 1, .max_userns = 15000, .userns_clone = 1,
				 .aa_restrict = 0, .seccomp = 0, .euid = euid};
	return f;
}

static int has(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

TEST(userns_why_chroot_for_root_and_users)
{
	struct userns_why w;
	struct userns_facts f = clean(EPERM, 0);
	f.chrooted = 1;
	f.chroot_how = "no mount is at /";
	/* The sysctl is 0 too: for root it never matters, the chroot does. */
	f.userns_clone = 0;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "kern runs in a chroot (no mount is at /)"));
	CHECK(has(w.fix, "outside the chroot"));
	f.euid = 1000;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "kern runs in a chroot"));
}

TEST(userns_why_no_proc_first)
{
	struct userns_why w;
	struct userns_facts f = clean(EPERM, 0);
	f.proc = 0;
	f.ns_user = 0;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "/proc is not mounted"));
	CHECK_STR(w.fix, "mount -t proc proc /proc");
}

TEST(userns_why_no_config_user_ns_beats_chroot)
{
	struct userns_why w;
	struct userns_facts f = clean(EINVAL, 0);
	f.ns_user = 0;
	f.chrooted = 1;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "CONFIG_USER_NS"));
	CHECK(has(w.fix, "CONFIG_USER_NS=y"));
}

TEST(userns_why_max_user_namespaces)
{
	struct userns_why w;
	struct userns_facts f = clean(ENOSPC, 0);
	f.max_userns = 0;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "user.max_user_namespaces = 0"));
	CHECK(has(w.fix, "sysctl -w user.max_user_namespaces="));
	f.max_userns = 12;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "used up (sysctl user.max_user_namespaces = 12"));
	f.max_userns = -1;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "used up (sysctl user.max_user_namespaces, or"));
}

/* The Debian/Ubuntu sysctl and Ubuntu's AppArmor restriction: named for a
 * user, never for root (neither applies to CAP_SYS_ADMIN). */
TEST(userns_why_user_restrictions_only_for_users)
{
	static const struct {
		int err, userns_clone, aa_restrict;
		const char *why, *fix;
	} cases[] = {
		{EPERM, 0, 0, "unprivileged user namespaces are restricted on this host (sysctl "
		 "kernel.unprivileged_userns_clone = 0)", "sysctl -w kernel.unprivileged_userns_clone=1"},
		{EACCES, 1, 1, "unprivileged user namespaces are restricted on this host (sysctl "
		 "kernel.apparmor_restrict_unprivileged_userns = 1", "userns,"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct userns_why w;
		struct userns_facts f = clean(cases[i].err, 1000);
		f.userns_clone = cases[i].userns_clone;
		f.aa_restrict = cases[i].aa_restrict;
		userns_why_decide(&f, &w);
		CHECK(has(w.why, cases[i].why));
		CHECK(has(w.fix, cases[i].fix));
		f.euid = 0;
		userns_why_decide(&f, &w);
		CHECK(!has(w.why, "restricted on this host"));
	}
}

TEST(userns_why_seccomp_then_unknown)
{
	struct userns_why w;
	struct userns_facts f = clean(EPERM, 0);
	f.seccomp = 1;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "seccomp filter"));
	f.seccomp = 0;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "no chroot, sysctl, AppArmor or seccomp restriction found"));
	CHECK(!has(w.why, "could not tell"));
	f.chrooted = -1;
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "could not tell whether it runs in a chroot"));
	CHECK(w.fix[0] != 0);
}

TEST(userns_why_nesting_and_other_errnos)
{
	struct userns_why w;
	struct userns_facts f = clean(EUSERS, 1000);
	userns_why_decide(&f, &w);
	CHECK(has(w.why, "32 user namespaces deep"));
	/* Not a refusal: the errno alone says it, no cause and no hint. */
	f = clean(ENOMEM, 1000);
	f.chrooted = 1;
	userns_why_decide(&f, &w);
	CHECK_STR(w.why, "");
	CHECK_STR(w.fix, "");
}
