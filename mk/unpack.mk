# Layer extraction (lib/layer/*.c): its codecs, zlib and libzstd, are
# LAZY_LIBS (mk/lazylib.mk) in the dynamic build. Its fuzz targets FZ-2
# and FZ-3 are built and run by mk/fuzz.mk.
LIBS += -lpthread
