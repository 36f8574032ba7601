# Layer extraction (lib/layer/*.c): its codecs. Its
# fuzz targets FZ-2 and FZ-3 are built and run by mk/fuzz.mk.
LIBS += -lz -lzstd -lpthread
