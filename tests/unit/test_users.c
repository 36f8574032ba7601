/* --user in the image's own /etc/passwd and /etc/group (lib/box/users.c). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/rmtree.h"
#include "unit.h"
#include "box/users.h"

/* A root holding etc/passwd and etc/group with the given text. */
static int make_root(char *dir, const char *passwd, const char *group)
{
	strcpy(dir, "/tmp/kern-unit-users-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	int root = open(dir, O_RDONLY | O_DIRECTORY);
	if (root < 0 || mkdirat(root, "etc", 0755) < 0)
		return -1;
	const char *names[] = {"etc/passwd", "etc/group"}, *text[] = {passwd, group};
	for (int i = 0; i < 2; i++) {
		int fd = openat(root, names[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, text[i], strlen(text[i])) != (ssize_t)strlen(text[i]))
			return -1;
		close(fd);
	}
	return root;
}

static void drop_root(int root, const char *dir)
{
	close(root);
	CHECK(rmtree(dir) == 0);
	CHECK(access(dir, F_OK) < 0);
}

/* Found by the image_config fuzz target: a passwd line with too few
 * fields took its uid from the next line (here root's). */
TEST(users_fields_stay_on_their_line)
{
	char dir[64], why[256];
	struct lockdown ld;
	int root = make_root(dir, "app\nroot:x:0:0:root:/root:/bin/sh\nweb:x:33\n33:x:7:7::/:/bin/sh\n",
			     "grp\nstaff:x:50:app\n");
	CHECK(root >= 0);
	memset(&ld, 0, sizeof ld);
	CHECK(user_resolve(root, "app", &ld, why, sizeof why) < 0);
	CHECK(strstr(why, "no user 'app'") != NULL);
	/* web has a uid but no gid field: gid 0, nothing borrowed. */
	memset(&ld, 0, sizeof ld);
	CHECK(user_resolve(root, "web", &ld, why, sizeof why) == 0 && ld.uid == 33 && ld.gid == 0);
	/* A group line with too few fields is no group. */
	memset(&ld, 0, sizeof ld);
	CHECK(user_resolve(root, "root:grp", &ld, why, sizeof why) < 0);
	/* uid 33 is web's line, not a line whose first field is "33". */
	memset(&ld, 0, sizeof ld);
	CHECK(user_resolve(root, "33", &ld, why, sizeof why) == 0 && ld.uid == 33 && ld.gid == 0);
	drop_root(root, dir);
}

/* Also found by it: a group listed twice was a supplementary group twice. */
TEST(users_groups_listed_once)
{
	char dir[64], why[256];
	struct lockdown ld;
	int root = make_root(dir, "app:x:1000:1000::/home/app:/bin/sh\n",
			     "app:x:1000:app\nstaff:x:50:app,app\nstaff2:x:50:app\nwheel:x:10:root,app\n");
	CHECK(root >= 0);
	memset(&ld, 0, sizeof ld);
	CHECK(user_resolve(root, "app", &ld, why, sizeof why) == 0);
	CHECK(ld.uid == 1000 && ld.gid == 1000 && ld.ngroups == 3);
	CHECK(ld.groups[0] == 1000 && ld.groups[1] == 50 && ld.groups[2] == 10);
	drop_root(root, dir);
}
