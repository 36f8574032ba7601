/* Placeholder until kern.toml support lands. */
#include <regex.h>
#include <string.h>

#include "diag.h"
#include "profiles.h"

int profile_token_valid(const char *tok)
{
	regex_t re;
	int ok;
	if (regcomp(&re, "^(vcpu|vgpio|vdisk):[A-Za-z0-9][A-Za-z0-9._-]*$", REG_EXTENDED | REG_NOSUB))
		return 0;
	ok = regexec(&re, tok, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

int profiles_resolve(char *const *tokens, int ntokens, const char *config_flag,
		     struct profiles *out)
{
	(void)config_flag;
	memset(out, 0, sizeof *out);
	if (ntokens == 0)
		return 0;
	fatal("box", "profile '%s' is not defined (kern.toml profiles are not built yet)", tokens[0]);
	return EXIT_CLI;
}
