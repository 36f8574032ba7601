/* The static release build (mk/static.mk defines KERN_STATIC) pins glibc's
 * name service to the backends built into libc since 2.34: "files" for
 * users and groups, "files dns" for host names (libcurl's getaddrinfo).
 * A static process cannot load any other NSS module from
 * /etc/nsswitch.conf: with "passwd: files systemd", getpwuid() of a uid
 * missing from /etc/passwd dlopen()s libnss_systemd and crashes; with
 * "hosts: files myhostname dns", getaddrinfo() fails with EAI_SYSTEM.
 * Pinned, those databases ignore /etc/nsswitch.conf: mdns, sss or
 * systemd-resolved's module do not apply, /etc/hosts and the servers in
 * /etc/resolv.conf (a local stub resolver too) do. The dynamic build keeps
 * the host's nsswitch.conf. */
#ifdef KERN_STATIC
#include <nss.h>

__attribute__((constructor)) static void pin_builtin_nss(void)
{
	__nss_configure_lookup("passwd", "files");
	__nss_configure_lookup("group", "files");
	__nss_configure_lookup("hosts", "files dns");
}
#endif
