# Schema and transcoder tests (included by Makefile.am).

# The command-line face of the transcoder, which the differential and
# bad-input tests drive.
check_PROGRAMS += tests/schema/transcode-tool
tests_schema_transcode_tool_SOURCES = tests/schema/transcode-tool.c
tests_schema_transcode_tool_LDADD = $(XDSD_LIBS)
