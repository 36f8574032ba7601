# The cgroup module's test helpers: cg-run (a minimal supervisor driving
# lib/cgroup/cgroup.h as kern-wait does) and cg-hog (memory, tmpfs, fork and cpu
# workloads). Built with `all` so tests/run copies them with build/.
CG_HELPERS := $(B)/helpers/cg-run $(B)/helpers/cg-hog

all: $(CG_HELPERS)

$(B)/helpers/cg-run: $(B)/obj/tests/helpers/cg-run.o $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $^ $(LIBS)

$(B)/helpers/cg-hog: $(B)/obj/tests/helpers/cg-hog.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DYN_CFLAGS) $(DYN_LDFLAGS) -o $@ $^

-include $(B)/obj/tests/helpers/cg-run.d $(B)/obj/tests/helpers/cg-hog.d
