# kern-oci (lib/ociruntime): a config's seccomp profile is compiled by
# libseccomp (lib/ociruntime/seccomp.c; opened on first use in the dynamic
# build, mk/lazylib.mk, and built from Debian's source in the static one,
# mk/static.mk).
#
# tests/unit/test_ociseccomp.c checks kern's program for a profile against
# the program libseccomp makes from the same rules written as its own calls
# (what runc does with that JSON): the unit binary links libseccomp itself.
$(B)/unit: LIBS += -lseccomp
