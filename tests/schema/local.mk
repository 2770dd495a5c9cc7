# Schema and transcoder tests (included by Makefile.am).
