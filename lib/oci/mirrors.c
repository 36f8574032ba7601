#include <stdio.h>
#include <string.h>

#include "base/diag.h"
#include "base/env.h"
#include "oci/mirrors.h"
#include "oci/ref.h"

static const char *canonical(const char *reg)
{
	if (strcmp(reg, "docker.io") == 0 || strcmp(reg, "index.docker.io") == 0)
		return "registry-1.docker.io";
	return reg;
}

int mirrors_for(const char *registry, struct mirror *out, int max)
{
	const char *list = env_get("KERN_REGISTRY_MIRRORS");
	char buf[4096];
	int n = 0;
	if (!list)
		return 0;
	if (strlen(list) >= sizeof buf) {
		fatal("registry", "KERN_REGISTRY_MIRRORS is longer than %zu bytes", sizeof buf - 1);
		return -1;
	}
	strcpy(buf, list);
	char *save = NULL;
	for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), host[256];
		int https;
		if (!eq || eq == item) {
			fatal("registry", "KERN_REGISTRY_MIRRORS: '%s' is not REGISTRY=URL", item);
			return -1;
		}
		*eq = 0;
		char *url = eq + 1;
		size_t ul = strlen(url);
		while (ul > 0 && url[ul - 1] == '/')
			url[--ul] = 0;
		const char *auth = strstr(url, "://");
		if (url_host(url, host, sizeof host, &https) < 0 || !auth ||
		    strpbrk(auth + 3, "/?#@") || ul >= sizeof out[0].base) {
			fatal("registry", "KERN_REGISTRY_MIRRORS: mirror '%s' is not http(s)://HOST[:PORT]", url);
			return -1;
		}
		if (!https && !host_is_loopback(auth + 3)) {
			fatal("registry", "KERN_REGISTRY_MIRRORS: mirror '%s' uses plain http on a non-loopback host - refusing",
			      url);
			return -1;
		}
		if (strcmp(canonical(item), canonical(registry)) != 0 || n >= max)
			continue;
		snprintf(out[n].base, sizeof out[n].base, "%s", url);
		snprintf(out[n].host, sizeof out[n].host, "%s", auth + 3);
		n++;
	}
	return n;
}
