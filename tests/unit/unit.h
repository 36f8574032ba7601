/* A tiny unit-test runner: TEST(name) { ... } registers a case; CHECK()
 * records a failure with file and line and carries on. */
#ifndef KERN_UNIT_H
#define KERN_UNIT_H

#include <stdio.h>
#include <string.h>

struct unit_case {
	const char *name;
	void (*fn)(void);
	struct unit_case *next;
};

void unit_register(struct unit_case *c);
void unit_fail(const char *file, int line, const char *expr);

#define TEST(id)                                                            \
	static void test_##id(void);                                        \
	static struct unit_case case_##id = {#id, test_##id, NULL};         \
	__attribute__((constructor)) static void reg_##id(void)             \
	{                                                                   \
		unit_register(&case_##id);                                  \
	}                                                                   \
	static void test_##id(void)

#define CHECK(e)                                          \
	do {                                              \
		if (!(e))                                 \
			unit_fail(__FILE__, __LINE__, #e); \
	} while (0)
#define CHECK_STR(a, b) CHECK(strcmp((a), (b)) == 0)

#endif
