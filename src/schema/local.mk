# SPDX-License-Identifier: Apache-2.0
# Schema and transcoder sources (included by Makefile.am), module by
# module as docs/schema.md describes them: part of the core library.
src_libxdcore_a_SOURCES += \
	src/schema/schema.c src/schema/schema_rules.c \
	src/schema/schema_lookup.c src/schema/walk.c \
	src/schema/schema.h src/schema/schema_int.h \
	src/schema/scalar.c src/schema/scalar.h \
	src/schema/transcode.c src/schema/transcode.h \
	src/schema/split.c src/schema/split.h \
	src/schema/doc.c src/schema/doc_yaml.c src/schema/doc.h \
	src/schema/encode.c src/schema/encode_scalar.c \
	src/schema/encode_ann.c src/schema/encode_err.c src/schema/encode.h \
	src/schema/pbjson.c src/schema/pbjson.h
