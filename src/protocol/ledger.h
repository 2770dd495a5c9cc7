/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ledger: what one client holds of one resource type, as xdsd
 * records it (rule D1). A response body is the difference between a
 * ledger and what the client should hold (body.h), so the ledger says
 * exactly what that difference needs and nothing else:
 *
 *   - the table whose entries the client holds (the content of the last
 *     response it answered, or what it showed it has, rules S12, D7), or
 *     none;
 *   - whether it holds every resource of that table (a wildcard), and
 *     the keys it holds one by one, each with the kind of key it is and
 *     the entry of the table it stands for: which resource, which
 *     variant of it (rule P1), and so which version; or none, when the
 *     client was told the key names nothing (rule D8);
 *   - what is owed once: keys subscribed again, sent even if held (rule
 *     D5), and names the client said it holds that were gone already
 *     (rule D7), listed as removed.
 *
 * Ledgers are interned: equal states are one shared, immutable,
 * refcounted object, so the work of reading a state (looking each key
 * up) is done once per state, however many clients are in it, and
 * "same state" is a pointer comparison. Each has a process-unique id.
 *
 * Ownership: refcounted; a ledger holds references to its table and
 * name sets; the intern table holds no reference (a ledger leaves it
 * when its last reference goes). Thread: loop thread only.
 */
#ifndef XD_PROTOCOL_LEDGER_H
#define XD_PROTOCOL_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/nameset.h"
#include "snapshot/table.h"

/* A subscription or a held state: every name (wildcard) and/or these. */
struct xd_names {
	bool all;
	struct xd_nameset *set; /* never NULL */
};

/*
 * What a key a client sends stands for in a table: what the key is
 * (key.h, read once when its set was interned) and what the table has
 * under it. Told apart once, when a key is read against a table
 * (xd_name_kind_of), and carried as this field from then on.
 */
enum xd_name_kind {
	XD_NAME_PLAIN,   /* a resource's own name (or a name with none) */
	XD_NAME_ALIAS,   /* another name of a resource (VHDS, rule D10) */
	XD_NAME_LOCATOR, /* a name with dynamic parameters: it picks one
			    variant of the name, or none (rule P1) */
	XD_NAME_GLOB,    /* an xdstp glob collection: its members (rule X2) */
	XD_NAME_MEMBER,  /* a member of a glob collection the client also
			    holds, held by its own name (rules X2, D7) */
};

/* One key the client holds. */
struct xd_held {
	struct xd_name key;           /* as subscribed (a locator: its key) */
	const struct xd_key *asked;   /* the same, read (key.h): in the
					 ledger's name set */
	enum xd_name_kind kind;
	const struct xd_entry *entry; /* in the ledger's table: the resource
					 or variant held, at entry->version;
					 NULL when the key names nothing
					 there (the client was told so) */
};

struct xd_ledger {
	unsigned refs;
	uint64_t id;
	struct xd_table *table;     /* the content held, or NULL for none */
	struct xd_names names;      /* all: every entry of `table` (plain);
				       set: the keys held one by one */
	struct xd_held *held;       /* one per key of names.set, in its
				       order (sorted bytewise) */
	size_t nheld;
	struct xd_nameset *resend;  /* rule D5: send these even if held */
	struct xd_nameset *gone;    /* rule D7: held by the client, absent
				       here: listed as removed once */
	/* the intern table's */
	uint64_t hash;
	struct xd_ledger *next;
};

/*
 * The ledger of this state (a new reference): the client holds, of
 * `table` (NULL: nothing), every entry when `all`, and the keys of
 * `names` one by one; `resend` and `gone` (NULL: none) are owed once.
 * Borrows its arguments: the ledger takes its own references.
 */
struct xd_ledger *xd_ledger_make(struct xd_table *table, bool all,
				 struct xd_nameset *names,
				 struct xd_nameset *resend,
				 struct xd_nameset *gone);

/* The ledger of a client that holds nothing and is owed nothing. */
struct xd_ledger *xd_ledger_empty(void);

struct xd_ledger *xd_ledger_ref(struct xd_ledger *l);
void xd_ledger_unref(struct xd_ledger *l);

/* What key `k` stands for in `t` (NULL: an empty table), and in *entry
 * (if not NULL) the entry it finds there: by name, by alias, a locator's
 * variant (rule P1); NULL for a key that names nothing. */
enum xd_name_kind xd_name_kind_of(const struct xd_table *t,
				  const struct xd_key *k,
				  const struct xd_entry **entry);

/* The entry `k` finds in `t` by name, alias or locator (rules D10,
 * P1), or NULL. */
const struct xd_entry *xd_ledger_lookup(const struct xd_table *t,
					const struct xd_key *k);

/* The record of a key the client holds one by one, or NULL. */
const struct xd_held *xd_ledger_find(const struct xd_ledger *l,
				     const char *key, size_t len);

/*
 * Whether the client holds `key` at all: by the wildcard, one by one,
 * or (`delta`) through a glob collection it holds (rule X2).
 */
bool xd_ledger_covers(const struct xd_ledger *l, const char *key, size_t len,
		      bool delta);

/* The entry the client holds under `k` (which resource, which
 * variant, which version), or NULL when it holds none. */
const struct xd_entry *xd_ledger_entry(const struct xd_ledger *l,
				       const struct xd_key *k, bool delta);

/* Ledgers alive now (for tests and statistics). */
size_t xd_ledger_live(void);

#endif
