/* libc-start: a program that does nothing, built twice (mk/static.mk):
 * static against musl, as kern's release binary is, and dynamic against
 * glibc with the development build's flags (PIE, full RELRO). Timed
 * beside kern in bench/box-startup, the two show what the dynamic build's
 * C library and loader cost a start before any kern code runs: the part of
 * kern-dyn/kern that no change to kern can take away. */
int main(void)
{
	return 0;
}
