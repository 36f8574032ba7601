/* probe-int80 EAX [EBX]: enter the kernel through the i386 entry point
 * (int 0x80) from a 64-bit process, which the kernel handles with the
 * i386 table and AUDIT_ARCH_I386 (i386 21 is mount, 20 getpid). Prints
 * "ret <eax>" (a negative errno on failure) if it comes back. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: probe-int80 EAX [EBX]\n");
		return 2;
	}
#if defined(__x86_64__)
	long eax = strtol(argv[1], NULL, 0), ebx = argc > 2 ? strtol(argv[2], NULL, 0) : 0;
	__asm__ volatile("int $0x80" : "+a"(eax) : "b"(ebx), "c"(0L), "d"(0L) : "memory", "r8", "r9", "r10", "r11");
	printf("ret %ld\n", eax);
	return 0;
#else
	fprintf(stderr, "probe-int80: x86_64 only\n");
	return 3;
#endif
}
