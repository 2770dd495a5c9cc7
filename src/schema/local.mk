# Schema and transcoder sources (included by Makefile.am).
# src_libxdsd_a_SOURCES += src/schema/....c src/schema/....h
