/*
 * The walker's former header and name. The walker is part of the schema
 * module now (schema.h: xd_schema_walk); this stays only until
 * src/snapshot/resource.c includes schema/schema.h and calls
 * xd_schema_walk, and then goes.
 */
#ifndef XD_SCHEMA_WALK_H
#define XD_SCHEMA_WALK_H

#include "schema/schema.h"

#define xd_pb_walk xd_schema_walk

#endif
