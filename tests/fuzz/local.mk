# libFuzzer targets for what peers send (included by Makefile.am).
# The transcoder's target lives with its corpora in tests/schema/local.mk.
