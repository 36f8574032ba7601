# kern-egress: the bench load generator (its fuzz target: mk/fuzz.mk).

# bench/egress: a C load generator, so the measurement is of the proxy and
# not of an interpreter.
$(B)/bench/egress-load: bench/egress-load.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

bench: $(B)/bench/egress-load
