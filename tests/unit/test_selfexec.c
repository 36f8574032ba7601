#include <stddef.h>
#include <string.h>

#include "base/selfexec.h"
#include "unit.h"

/* One reading of an argv[0] for the dispatcher, exec_next() and kern-ns. */
TEST(kern_applet_of_names)
{
	CHECK_STR(kern_applet_of("kern-wait"), "wait");
	CHECK_STR(kern_applet_of("/usr/local/bin/kern-ns"), "ns");
	CHECK_STR(kern_applet_of("kern"), "");
	CHECK_STR(kern_applet_of("./build/kern"), "");
	CHECK_STR(kern_applet_of("kern-"), "");
	CHECK(kern_applet_of("kernel") == NULL);
	CHECK(kern_applet_of("sh") == NULL);
	CHECK(kern_applet_of("/bin/kern/sh") == NULL);
	CHECK(kern_applet_of("kern-ns/") == NULL);
	CHECK(kern_applet_of("") == NULL);
	CHECK(kern_applet_of(NULL) == NULL);
}
