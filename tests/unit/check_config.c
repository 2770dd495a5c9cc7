/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration parsing: defaults, every value type, overrides, relative
 * paths, and the golden set of broken files in tests/config/bad/ (each
 * NAME.yaml beside NAME.err holding the exact expected messages).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "xdtest.h"

static struct xd_config cfg;
static struct xd_diag diag;

static void setup(void)
{
	xd_config_init(&cfg, "/default/snapshots", "/default/xds-api.pb");
	memset(&diag, 0, sizeof(diag));
}

static void teardown(void)
{
	xd_config_free(&cfg);
	xd_diag_clear(&diag);
}

/* Loads `text` as a file named `name` in a temp dir; returns rc. */
static int load_text(const char *name, const char *text)
{
	char *path = xdtest_write_file(xdtest_tmpdir(), name, text);
	int rc = xd_config_load(&cfg, path, &diag);

	free(path);
	return rc;
}

static char *diag_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	xd_diag_print(&diag, f);
	fclose(f);
	return buf;
}

START_TEST(defaults)
{
	ck_assert_str_eq(cfg.listen, "127.0.0.1:18000");
	ck_assert_str_eq(cfg.snapshots, "/default/snapshots");
	ck_assert_str_eq(cfg.schema, "/default/xds-api.pb");
	ck_assert_int_eq(cfg.log_level, XD_LOG_INFO);
	ck_assert_uint_eq(cfg.keepalive_time_ms, 30000);
	ck_assert_uint_eq(cfg.keepalive_timeout_ms, 10000);
	ck_assert_uint_eq(cfg.min_client_ping_interval_ms, 5000);
	ck_assert_uint_eq(cfg.max_connection_age_ms, 0);
	ck_assert_uint_eq(cfg.max_connection_age_grace_ms, 60000);
	ck_assert_uint_eq(cfg.handshake_timeout_ms, 10000);
	ck_assert_uint_eq(cfg.max_streams_per_connection, 100);
	ck_assert_uint_eq(cfg.max_request_size, 4u << 20);
	ck_assert_int_eq(cfg.watch, 0);
	ck_assert_uint_eq(cfg.watch_delay_ms, 500);
}
END_TEST

START_TEST(empty_file_keeps_defaults)
{
	ck_assert_int_eq(load_text("empty.yaml", ""), 0);
	ck_assert_str_eq(cfg.listen, "127.0.0.1:18000");
	ck_assert_int_eq(load_text("comments.yaml", "# nothing\n\n"), 0);
	ck_assert_uint_eq(xd_diag_total(&diag), 0);
}
END_TEST

START_TEST(every_directive)
{
	ck_assert_int_eq(load_text("all.yaml",
				   "listen: '[::1]:9000'\n"
				   "snapshots: /srv/snap\n"
				   "schema: /opt/xds.pb\n"
				   "log_level: debug\n"
				   "keepalive_time: 1.5m\n"
				   "keepalive_timeout: 2500ms\n"
				   "min_client_ping_interval: 0\n"
				   "max_connection_age: 30m\n"
				   "max_connection_age_grace: 2m\n"
				   "handshake_timeout: 1h\n"
				   "max_streams_per_connection: 7\n"
				   "max_request_size: 512KiB\n"
				   "watch: true\n"
				   "watch_delay: 2s\n"),
			 0);
	ck_assert_str_eq(cfg.listen, "[::1]:9000");
	ck_assert_str_eq(cfg.snapshots, "/srv/snap");
	ck_assert_str_eq(cfg.schema, "/opt/xds.pb");
	ck_assert_int_eq(cfg.log_level, XD_LOG_DEBUG);
	ck_assert_uint_eq(cfg.keepalive_time_ms, 90000);
	ck_assert_uint_eq(cfg.keepalive_timeout_ms, 2500);
	ck_assert_uint_eq(cfg.min_client_ping_interval_ms, 0);
	ck_assert_uint_eq(cfg.max_connection_age_ms, 30 * 60000);
	ck_assert_uint_eq(cfg.max_connection_age_grace_ms, 120000);
	ck_assert_uint_eq(cfg.handshake_timeout_ms, 3600000);
	ck_assert_uint_eq(cfg.max_streams_per_connection, 7);
	ck_assert_uint_eq(cfg.max_request_size, 512 * 1024);
	ck_assert_int_eq(cfg.watch, 1);
	ck_assert_uint_eq(cfg.watch_delay_ms, 2000);
}
END_TEST

START_TEST(address_forms)
{
	static const char *const good[] = {
		"0.0.0.0:18000", "[::]:18000", "localhost:1", "127.0.0.1:0",
		"unix:/run/xdsd.sock", "example.com:65535",
	};
	static const char *const bad[] = {
		"18000", ":18000", "[::1]", "[]:1", "[::1]x:1", "h:", "h:-1",
		"h:65536", "unix:", "::1:80",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(xd_config_set(&cfg, "listen", good[i], "t",
					    &diag) == 0,
			      "'%s' refused", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(xd_config_set(&cfg, "listen", bad[i], "t",
					    &diag) != 0,
			      "'%s' accepted", bad[i]);
	ck_assert_uint_eq(xd_diag_total(&diag), sizeof(bad) / sizeof(bad[0]));
}
END_TEST

START_TEST(size_units)
{
	static const struct {
		const char *in;
		uint64_t bytes;
	} cases[] = {{"1024", 1024},       {"2K", 2048},
		     {"2KB", 2048},        {"2KiB", 2048},
		     {"3M", 3u << 20},     {"3MiB", 3u << 20},
		     {"1G", 1u << 30},     {"1GiB", 1u << 30},
		     {"4096B", 4096}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(xd_config_set(&cfg, "max_request_size",
					       cases[i].in, "t", &diag),
				 0);
		ck_assert_uint_eq(cfg.max_request_size, cases[i].bytes);
	}
	ck_assert_int_ne(xd_config_set(&cfg, "max_request_size", "2GiB", "t",
				       &diag),
			 0);
	ck_assert_int_ne(xd_config_set(&cfg, "max_request_size",
				       "99999999999999999999999", "t", &diag),
			 0);
}
END_TEST

START_TEST(duration_forms)
{
	static const struct {
		const char *in;
		uint64_t ms;
	} cases[] = {{"0", 0},       {"1s", 1000},   {"1.5s", 1500},
		     {"250ms", 250}, {"2m", 120000}, {"1h", 3600000},
		     {"0.5h", 1800000}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(xd_config_set(&cfg, "max_connection_age_grace",
					       cases[i].in, "t", &diag),
				 0);
		ck_assert_uint_eq(cfg.max_connection_age_grace_ms, cases[i].ms);
	}
	ck_assert_int_ne(xd_config_set(&cfg, "keepalive_time", "s", "t", &diag), 0);
	ck_assert_int_ne(xd_config_set(&cfg, "keepalive_time", "-1s", "t", &diag), 0);
	ck_assert_int_ne(xd_config_set(&cfg, "keepalive_time", "1e99h", "t", &diag), 0);
	/* 0 turns keepalive off but is no timeout at all */
	ck_assert_int_eq(xd_config_set(&cfg, "keepalive_time", "0", "t", &diag), 0);
	ck_assert_int_ne(xd_config_set(&cfg, "keepalive_timeout", "0", "t", &diag), 0);
}
END_TEST

/* The buffers a connection keeps: its first read chunk (0: gRPC's own
 * reads) and, over TLS, the frame size; both bounded. */
START_TEST(connection_buffers)
{
	ck_assert_uint_eq(cfg.read_chunk_size, 512);
	ck_assert_uint_eq(cfg.tls.frame_size, 4096);
	ck_assert_int_eq(load_text("buffers.yaml",
				   "read_chunk_size: 2KiB\n"
				   "tls:\n"
				   "  cert: /c.pem\n"
				   "  key: /k.pem\n"
				   "  frame_size: 16KiB\n"),
			 0);
	ck_assert_uint_eq(cfg.read_chunk_size, 2048);
	ck_assert_uint_eq(cfg.tls.frame_size, 16384);
	ck_assert_int_eq(xd_config_set(&cfg, "read_chunk_size", "0", "t", &diag), 0);
	ck_assert_uint_eq(cfg.read_chunk_size, 0);
	ck_assert_int_ne(xd_config_set(&cfg, "read_chunk_size", "100", "t", &diag), 0);
	ck_assert_int_ne(xd_config_set(&cfg, "read_chunk_size", "2MiB", "t", &diag), 0);
	ck_assert_int_ne(load_text("frame-small.yaml",
				   "tls:\n  cert: /c.pem\n  key: /k.pem\n  frame_size: 512\n"),
			 0);
	ck_assert_int_ne(load_text("frame-big.yaml",
				   "tls:\n  cert: /c.pem\n  key: /k.pem\n  frame_size: 32KiB\n"),
			 0);
}
END_TEST

START_TEST(relative_paths_follow_the_file)
{
	char *dir;

	ck_assert(asprintf(&dir, "%s/conf", xdtest_tmpdir()) > 0);
	ck_assert(mkdir(dir, 0755) == 0 || errno == EEXIST);
	char *path = xdtest_write_file(dir, "x.yaml",
				       "snapshots: snap\nschema: ../api.pb\n");
	char *want_snap, *want_schema;

	ck_assert(asprintf(&want_snap, "%s/snap", dir) > 0);
	ck_assert(asprintf(&want_schema, "%s/../api.pb", dir) > 0);
	ck_assert_int_eq(xd_config_load(&cfg, path, &diag), 0);
	ck_assert_str_eq(cfg.snapshots, want_snap);
	ck_assert_str_eq(cfg.schema, want_schema);
	/* command-line values stay relative to the working directory */
	ck_assert_int_eq(xd_config_set(&cfg, "snapshots", "here", "--snapshots",
				       &diag),
			 0);
	ck_assert_str_eq(cfg.snapshots, "here");
	free(dir);
	free(path);
	free(want_snap);
	free(want_schema);
}
END_TEST

START_TEST(override_errors_name_the_flag)
{
	ck_assert_int_ne(xd_config_set(&cfg, "listen", "nowhere", "--listen",
				       &diag),
			 0);
	ck_assert_int_ne(xd_config_set(&cfg, "nope", "1", "--nope", &diag), 0);
	char *text = diag_text();

	ck_assert_str_eq(text,
			 "--listen: 'listen': bad value 'nowhere': missing :port (form: host:port)\n"
			 "--nope: unknown directive 'nope'\n");
	free(text);
}
END_TEST

/* ${CREDENTIALS_DIRECTORY} in the tls paths (config/expand.h): the
 * environment's value; unset, empty or another variable: an error that
 * names the directive and says why. */
START_TEST(credentials_directory_in_tls_paths)
{
	static const char text[] =
		"tls:\n"
		"  cert: ${CREDENTIALS_DIRECTORY}/tls.pem\n"
		"  key: ${CREDENTIALS_DIRECTORY}/tls.key\n"
		"  client_ca: /etc/ca-${CREDENTIALS_DIRECTORY}.pem\n";
	char *got;

	ck_assert(setenv("CREDENTIALS_DIRECTORY", "/run/credentials/xdsd.service", 1) == 0);
	ck_assert_int_eq(load_text("cred.yaml", text), 0);
	ck_assert_str_eq(cfg.tls.cert, "/run/credentials/xdsd.service/tls.pem");
	ck_assert_str_eq(cfg.tls.key, "/run/credentials/xdsd.service/tls.key");
	ck_assert_str_eq(cfg.tls.client_ca, "/etc/ca-/run/credentials/xdsd.service.pem");
	/* a "$" alone is no variable; only the tls paths are expanded */
	ck_assert_int_eq(load_text("dollar.yaml",
				   "snapshots: /srv/${CREDENTIALS_DIRECTORY}\n"
				   "tls:\n  cert: /etc/$cert.pem\n  key: /etc/k\n"), 0);
	ck_assert_str_eq(cfg.snapshots, "/srv/${CREDENTIALS_DIRECTORY}");
	ck_assert_str_eq(cfg.tls.cert, "/etc/$cert.pem");

	ck_assert(setenv("CREDENTIALS_DIRECTORY", "", 1) == 0);
	ck_assert_int_ne(xd_config_set(&cfg, "tls.key", "${CREDENTIALS_DIRECTORY}/k",
				       "--test", &diag), 0);
	ck_assert(unsetenv("CREDENTIALS_DIRECTORY") == 0);
	ck_assert_int_ne(xd_config_set(&cfg, "tls.key", "${CREDENTIALS_DIRECTORY}/k",
				       "--test", &diag), 0);
	ck_assert_int_ne(xd_config_set(&cfg, "tls.cert", "${HOME}/c.pem", "--test",
				       &diag), 0);
	ck_assert_int_ne(xd_config_set(&cfg, "tls.cert", "/x/${CREDENTIALS_DIRECTORY",
				       "--test", &diag), 0);
	got = diag_text();
	ck_assert_str_eq(got,
			 "--test: 'tls.key': bad value '${CREDENTIALS_DIRECTORY}/k': ${CREDENTIALS_DIRECTORY} is not set: "
			 "systemd sets it for a unit with LoadCredential= (systemd.exec(5))\n"
			 "--test: 'tls.key': bad value '${CREDENTIALS_DIRECTORY}/k': ${CREDENTIALS_DIRECTORY} is not set: "
			 "systemd sets it for a unit with LoadCredential= (systemd.exec(5))\n"
			 "--test: 'tls.cert': bad value '${HOME}/c.pem': unknown variable '${HOME}': only ${CREDENTIALS_DIRECTORY} is expanded\n"
			 "--test: 'tls.cert': bad value '/x/${CREDENTIALS_DIRECTORY': '${' without its '}'\n");
	free(got);
}
END_TEST

/* state_dir: relative to the file, "off" for none, and by default the
 * directory systemd's StateDirectory= passes as $STATE_DIRECTORY. */
START_TEST(state_dir_forms)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_ptr_null(cfg.state_dir);
	ck_assert_int_eq(load_text("state.yaml", "state_dir: state\n"), 0);
	ck_assert(strlen(cfg.state_dir) > 6);
	ck_assert_str_eq(cfg.state_dir + strlen(cfg.state_dir) - 6, "/state");
	ck_assert_int_eq(load_text("state-off.yaml", "state_dir: off\n"), 0);
	ck_assert_ptr_null(cfg.state_dir);
	f = open_memstream(&out, &len);
	xd_config_print(&cfg, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(out, "\nstate_dir: off    # "));
	free(out);

	ck_assert(setenv("STATE_DIRECTORY", "/var/lib/xdsd:/var/lib/other", 1) == 0);
	xd_config_free(&cfg);
	xd_config_init(&cfg, "/s", "/x.pb");
	ck_assert_str_eq(cfg.state_dir, "/var/lib/xdsd");
	ck_assert_int_eq(load_text("state-off.yaml", "state_dir: off\n"), 0);
	ck_assert_ptr_null(cfg.state_dir);
	ck_assert(unsetenv("STATE_DIRECTORY") == 0);
}
END_TEST

START_TEST(missing_file)
{
	ck_assert_int_ne(xd_config_load(&cfg, "/nonexistent/xdsd.yaml", &diag), 0);
	char *text = diag_text();

	ck_assert_str_eq(text, "/nonexistent/xdsd.yaml: cannot read the configuration: No such file or directory\n");
	free(text);
}
END_TEST

START_TEST(directory_is_not_a_config)
{
	ck_assert_int_ne(xd_config_load(&cfg, xdtest_tmpdir(), &diag), 0);
	char *text = diag_text();

	ck_assert_ptr_nonnull(strstr(text, ": the configuration is a directory; it must be a regular file"));
	free(text);
}
END_TEST

/* A FIFO or a device in place of the configuration: refused, with
 * what it is, without being opened (a FIFO would wait for a writer). */
START_TEST(fifo_or_device_is_not_a_config)
{
	char path[512], *text;

	snprintf(path, sizeof(path), "%s/fifo.yaml", xdtest_tmpdir());
	unlink(path);
	ck_assert(mkfifo(path, 0600) == 0);
	ck_assert_int_ne(xd_config_load(&cfg, path, &diag), 0);
	text = diag_text();
	ck_assert_ptr_nonnull(strstr(text, "fifo.yaml: the configuration is a FIFO; it must be a regular file"));
	free(text);
	xd_diag_clear(&diag);
	ck_assert_int_ne(xd_config_load(&cfg, "/dev/zero", &diag), 0);
	text = diag_text();
	ck_assert_str_eq(text, "/dev/zero: the configuration is a character device; it must be a regular file\n");
	free(text);
}
END_TEST

START_TEST(huge_file_refused)
{
	size_t n = (1u << 20) + 10;
	char *big = malloc(n + 1);

	memset(big, '#', n);
	big[n] = '\0';
	ck_assert_int_ne(load_text("big.yaml", big), 0);
	free(big);
	char *text = diag_text();

	ck_assert_ptr_nonnull(strstr(text, "big.yaml: the configuration is 1048586 bytes, larger than the limit of 1 MiB"));
	free(text);
}
END_TEST

START_TEST(nul_byte_in_value)
{
	char *path;
	FILE *f;

	ck_assert(asprintf(&path, "%s/nul.yaml", xdtest_tmpdir()) > 0);
	f = fopen(path, "wb");
	ck_assert(f != NULL);
	fwrite("listen: \"a\\0b:1\"\n", 1, 17, f);
	fclose(f);
	ck_assert_int_ne(xd_config_load(&cfg, path, &diag), 0);
	char *text = diag_text();

	ck_assert_ptr_nonnull(strstr(text, "value contains a NUL byte"));
	free(text);
	free(path);
}
END_TEST

/* What --check prints is itself a valid file giving the same values. */
/* trusted_proxies: addresses and prefixes, parsed as the servers match
 * them, printed as written and read back the same. */
START_TEST(trusted_proxies_list)
{
	struct xd_config again;
	char *out = NULL, *path;
	size_t len = 0;
	FILE *f;

	ck_assert_uint_eq(cfg.ntrusted_proxies, 0);
	ck_assert_int_eq(load_text("tp.yaml", "trusted_proxies: [10.0.0.0/8, \"fd00::/8\", 127.0.0.1]\n"), 0);
	ck_assert_uint_eq(cfg.ntrusted_proxies, 3);
	ck_assert_str_eq(cfg.trusted_proxies[1], "fd00::/8");
	ck_assert_int_eq(cfg.trusted_nets[0].family, AF_INET);
	ck_assert_uint_eq(cfg.trusted_nets[0].bits, 8);
	ck_assert_int_eq(cfg.trusted_nets[1].family, AF_INET6);
	ck_assert_uint_eq(cfg.trusted_nets[2].bits, 32);
	f = open_memstream(&out, &len);
	xd_config_print(&cfg, f);
	fclose(f);
	ck_assert_msg(strstr(out, "trusted_proxies:    # balancers and proxies exempt from the per-address limits\n"
				  "  - '10.0.0.0/8'\n  - 'fd00::/8'\n  - '127.0.0.1'\n") != NULL,
		      "%s", out);
	path = xdtest_write_file(xdtest_tmpdir(), "printed-tp.yaml", out);
	xd_config_init(&again, "x", "y");
	ck_assert_int_eq(xd_config_load(&again, path, &diag), 0);
	ck_assert_uint_eq(again.ntrusted_proxies, 3);
	ck_assert_int_eq(memcmp(again.trusted_nets, cfg.trusted_nets,
				3 * sizeof(*cfg.trusted_nets)), 0);
	xd_config_free(&again);
	free(out);
	free(path);
}
END_TEST

/* dry_run_dirs: directories, a relative one from the file's own
 * directory, printed and read back the same; a string is no list. */
START_TEST(dry_run_dirs_list)
{
	struct xd_config again;
	char *out = NULL, *path, want[4096];
	size_t len = 0;
	FILE *f;

	ck_assert_uint_eq(cfg.ndry_run_dirs, 0);
	ck_assert_int_eq(load_text("dr.yaml", "dry_run_dirs: [/srv/xds/releases, staged]\n"), 0);
	ck_assert_uint_eq(cfg.ndry_run_dirs, 2);
	ck_assert_str_eq(cfg.dry_run_dirs[0], "/srv/xds/releases");
	snprintf(want, sizeof(want), "%s/staged", xdtest_tmpdir());
	ck_assert_str_eq(cfg.dry_run_dirs[1], want);
	f = open_memstream(&out, &len);
	xd_config_print(&cfg, f);
	fclose(f);
	snprintf(want, sizeof(want),
		 "dry_run_dirs:    # directories a dry run may read, besides the snapshot directory\n"
		 "  - '/srv/xds/releases'\n  - '%s/staged'\n", xdtest_tmpdir());
	ck_assert_msg(strstr(out, want) != NULL, "%s", out);
	path = xdtest_write_file(xdtest_tmpdir(), "printed-dr.yaml", out);
	xd_config_init(&again, "x", "y");
	ck_assert_int_eq(xd_config_load(&again, path, &diag), 0);
	ck_assert_uint_eq(again.ndry_run_dirs, 2);
	ck_assert_str_eq(again.dry_run_dirs[1], cfg.dry_run_dirs[1]);
	xd_config_free(&again);
	free(out);
	free(path);
	ck_assert_int_eq(load_text("dr-bad.yaml", "dry_run_dirs: /srv\n"), -1);
	out = diag_text();
	ck_assert_msg(strstr(out, "'dry_run_dirs' is a list of directories, not") != NULL, "%s", out);
	free(out);
}
END_TEST

START_TEST(printed_config_reloads)
{
	struct xd_config again;
	char *out = NULL, *path;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(load_text("p.yaml", "keepalive_time: 90s\n"
					     "listen: \"[::1]:7\"\n"
					     "snapshots: /it's/here\n"
					     "max_request_size: 3000\n"
					     "log_level: warn\n"
					     "max_connection_age: 45m\n"),
			 0);
	f = open_memstream(&out, &len);
	xd_config_print(&cfg, f);
	fclose(f);
	path = xdtest_write_file(xdtest_tmpdir(), "printed.yaml", out);
	xd_config_init(&again, "x", "y");
	ck_assert_int_eq(xd_config_load(&again, path, &diag), 0);
	ck_assert_str_eq(again.listen, cfg.listen);
	ck_assert_str_eq(again.snapshots, cfg.snapshots);
	ck_assert_uint_eq(again.keepalive_time_ms, 90000);
	ck_assert_uint_eq(again.max_request_size, 3000);
	ck_assert_int_eq(again.log_level, XD_LOG_WARN);
	ck_assert_uint_eq(again.max_connection_age_ms, 45 * 60000);
	ck_assert_int_eq(memcmp(&again.keepalive_time_ms, &cfg.keepalive_time_ms,
				sizeof(cfg) - offsetof(struct xd_config,
						       keepalive_time_ms)),
			 0);
	xd_config_free(&again);
	free(out);
	free(path);
}
END_TEST

/* `rollout:`: off by default, on with its section; its list of globs,
 * and --check's printout read back the same (off printed as a comment,
 * which reads back as off). */
START_TEST(rollout_section)
{
	struct xd_config again;
	char *out = NULL, *path;
	size_t len = 0;
	FILE *f;

	ck_assert(!cfg.rollout.on);
	ck_assert_uint_eq(cfg.rollout.bake_ms, 60000);
	ck_assert_uint_eq(cfg.rollout.max_nacks, 0);
	ck_assert_uint_eq(cfg.rollout.percent, 0);
	ck_assert_uint_eq(cfg.rollout.timeout_ms, 10 * 60000);
	f = open_memstream(&out, &len);
	xd_config_print(&cfg, f);
	fclose(f);
	ck_assert_msg(strstr(out, "\n#rollout:") != NULL, "%s", out);
	path = xdtest_write_file(xdtest_tmpdir(), "printed-off.yaml", out);
	xd_config_init(&again, "x", "y");
	ck_assert_msg(xd_config_load(&again, path, &diag) == 0, "%s", out);
	ck_assert(!again.rollout.on);
	xd_config_free(&again);
	free(out);
	free(path);
	out = NULL;

	ck_assert_int_eq(load_text("rollout.yaml",
				   "rollout:\n"
				   "  canary: ['canary-*', 'cluster:staging-*']\n"
				   "  percent: 5\n"
				   "  bake: 90s\n"
				   "  max_nacks: 2\n"
				   "  timeout: 0\n"),
			 0);
	ck_assert(cfg.rollout.on);
	ck_assert_uint_eq(cfg.rollout.ncanary, 2);
	ck_assert_str_eq(cfg.rollout.canary[1], "cluster:staging-*");
	ck_assert_uint_eq(cfg.rollout.percent, 5);
	ck_assert_uint_eq(cfg.rollout.bake_ms, 90000);
	ck_assert_uint_eq(cfg.rollout.max_nacks, 2);
	ck_assert_uint_eq(cfg.rollout.timeout_ms, 0);
	f = open_memstream(&out, &len);
	xd_config_print(&cfg, f);
	fclose(f);
	path = xdtest_write_file(xdtest_tmpdir(), "printed-rollout.yaml", out);
	xd_config_init(&again, "x", "y");
	ck_assert_msg(xd_config_load(&again, path, &diag) == 0, "%s", out);
	ck_assert(again.rollout.on);
	ck_assert_uint_eq(again.rollout.ncanary, 2);
	ck_assert_str_eq(again.rollout.canary[0], "canary-*");
	ck_assert_uint_eq(again.rollout.percent, 5);
	ck_assert_uint_eq(again.rollout.bake_ms, 90000);
	ck_assert_uint_eq(again.rollout.max_nacks, 2);
	ck_assert_uint_eq(again.rollout.timeout_ms, 0);
	xd_config_free(&again);
	free(out);
	free(path);
}
END_TEST

/* The etcd snapshot source: its defaults, its section with a section
 * inside (tls, relative paths following the file), the dotted names of
 * command-line overrides, and --check's printout read back. */
START_TEST(etcd_source)
{
	struct xd_config again;
	char *out = NULL, *path, *want;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(cfg.source, XD_SOURCE_FILES);
	ck_assert_str_eq(cfg.etcd.prefix, "/xdsd/snapshots/");
	ck_assert_uint_eq(cfg.etcd.dial_timeout_ms, 5000);
	ck_assert_uint_eq(cfg.etcd.lease_ttl_ms, 10000);
	ck_assert_uint_eq(cfg.etcd.nendpoints, 0);
	ck_assert_int_eq(load_text("etcd.yaml",
				   "source: etcd\n"
				   "etcd:\n"
				   "  endpoints: [10.0.0.1:2379, '[::1]:2379']\n"
				   "  prefix: /fleet/\n"
				   "  dial_timeout: 750ms\n"
				   "  lease_ttl: 1h\n"
				   "  tls:\n"
				   "    cert: c.pem\n"
				   "    key: /k.pem\n"),
			 0);
	ck_assert_int_eq(cfg.source, XD_SOURCE_ETCD);
	ck_assert_uint_eq(cfg.etcd.nendpoints, 2);
	ck_assert_str_eq(cfg.etcd.endpoints[0], "10.0.0.1:2379");
	ck_assert_str_eq(cfg.etcd.endpoints[1], "[::1]:2379");
	ck_assert_str_eq(cfg.etcd.prefix, "/fleet/");
	ck_assert_uint_eq(cfg.etcd.dial_timeout_ms, 750);
	ck_assert_uint_eq(cfg.etcd.lease_ttl_ms, 3600000);
	ck_assert(asprintf(&want, "%s/c.pem", xdtest_tmpdir()) > 0);
	ck_assert_str_eq(cfg.etcd.tls.cert, want);
	ck_assert_str_eq(cfg.etcd.tls.key, "/k.pem");
	ck_assert_ptr_null(cfg.etcd.tls.ca);
	ck_assert_ptr_null(cfg.tls.cert);
	ck_assert_int_eq(xd_config_set(&cfg, "etcd.tls.ca", "/ca.pem", "--set",
				       &diag), 0);
	ck_assert_str_eq(cfg.etcd.tls.ca, "/ca.pem");
	ck_assert_int_eq(xd_config_set(&cfg, "etcd.prefix", "/p/", "--set",
				       &diag), 0);

	f = open_memstream(&out, &len);
	xd_config_print(&cfg, f);
	fclose(f);
	path = xdtest_write_file(xdtest_tmpdir(), "printed-etcd.yaml", out);
	xd_config_init(&again, "x", "y");
	ck_assert_msg(xd_config_load(&again, path, &diag) == 0, "%s", out);
	ck_assert_int_eq(again.source, XD_SOURCE_ETCD);
	ck_assert_uint_eq(again.etcd.nendpoints, 2);
	ck_assert_str_eq(again.etcd.endpoints[1], "[::1]:2379");
	ck_assert_str_eq(again.etcd.prefix, "/p/");
	ck_assert_uint_eq(again.etcd.dial_timeout_ms, 750);
	ck_assert_uint_eq(again.etcd.lease_ttl_ms, 3600000);
	ck_assert_str_eq(again.etcd.tls.cert, want);
	ck_assert_str_eq(again.etcd.tls.ca, "/ca.pem");
	xd_config_free(&again);
	free(out);
	free(path);
	free(want);
}
END_TEST

/* ---- golden files: tests/config/bad/NAME.yaml + NAME.err ---- */

static char **golden;
static int ngolden;

static void find_golden(void)
{
	char *dir;
	DIR *d;

	XDT_REQUIRE(asprintf(&dir, "%s/tests/config/bad",
			     xdtest_env("XDSD_SRCDIR")) > 0, "asprintf");
	d = opendir(dir);
	XDT_REQUIRE(d != NULL, "%s: %s", dir, strerror(errno));
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);

		if (n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0) {
			golden = realloc(golden, (size_t)(ngolden + 1) * sizeof(*golden));
			golden[ngolden++] = strndup(e->d_name, n - 5);
		}
	}
	closedir(d);
	free(dir);
}

/* ---- conf.d: the files beside the configuration, read after it ---- */

/* A fresh directory holding xdsd.yaml (`main`) and an empty conf.d/;
 * returns xdsd.yaml's path, the directory in *dir. */
static char *confd_setup(const char *main, char **dir)
{
	char *confd, *path;

	*dir = xdtest_snapdir();
	ck_assert(asprintf(&confd, "%s/conf.d", *dir) > 0);
	ck_assert(mkdir(confd, 0755) == 0);
	free(confd);
	path = xdtest_write_file(*dir, "xdsd.yaml", main);
	return path;
}

static void confd_write(const char *dir, const char *name, const char *text)
{
	char *confd;

	ck_assert(asprintf(&confd, "%s/conf.d", dir) > 0);
	free(xdtest_write_file(confd, name, text));
	free(confd);
}

/* Later files set what they name over earlier ones, in byte order of
 * their names; only NAME.yaml that is not hidden is read. */
START_TEST(confd_later_files_override)
{
	char *dir, *path = confd_setup("listen: 127.0.0.1:1\nlog_level: warn\n"
				       "admin_listen: 127.0.0.1:2\n", &dir);
	char *want;

	confd_write(dir, "20-b.yaml", "listen: 127.0.0.1:3\n");
	confd_write(dir, "10-a.yaml", "listen: 127.0.0.1:4\nadmin_listen: off\n");
	confd_write(dir, ".30-hidden.yaml", "listen: 127.0.0.1:5\n");
	confd_write(dir, "40-old.yaml.dpkg-old", "listen: 127.0.0.1:6\n");
	confd_write(dir, "50-notes.txt", "listen: 127.0.0.1:7\n");
	confd_write(dir, "60-backup.yaml~", "listen: 127.0.0.1:8\n");
	ck_assert_msg(xd_config_load(&cfg, path, &diag) == 0, "%s", diag_text());
	ck_assert_str_eq(cfg.listen, "127.0.0.1:3");
	ck_assert_str_eq(cfg.admin_listen, "off");
	ck_assert_int_eq(cfg.log_level, XD_LOG_WARN);
	ck_assert_uint_eq(cfg.nfiles, 3);
	ck_assert_str_eq(cfg.files[0], path);
	ck_assert(asprintf(&want, "%s/conf.d/10-a.yaml", dir) > 0);
	ck_assert_str_eq(cfg.files[1], want);
	free(want);
	ck_assert(asprintf(&want, "%s/conf.d/20-b.yaml", dir) > 0);
	ck_assert_str_eq(cfg.files[2], want);
	free(want);
	free(path);
	free(dir);
}
END_TEST

/* A section's setting alone replaces its own; a list is replaced whole;
 * relative paths are the configuration file's directory's. */
START_TEST(confd_section_keys_and_lists)
{
	char *dir, *path = confd_setup(
		"tls:\n  cert: /etc/c.pem\n  key: /etc/k.pem\n  client_ca: /etc/ca.pem\n"
		"authorize:\n  - identity: a\n  - identity: b\n"
		"csds_allow: [x, y]\n"
		"trusted_proxies: [10.0.0.0/8, 127.0.0.1]\n"
		"dry_run_dirs: [/srv/a, /srv/b]\n", &dir);
	char *want;

	confd_write(dir, "tls.yaml", "tls:\n  key: keys/new.pem\n");
	confd_write(dir, "who.yaml", "authorize:\n  - identity: c\n    node_id: n\n"
				     "csds_allow: [z]\ntrusted_proxies: [192.0.2.1]\n"
				     "dry_run_dirs: [releases]\nsnapshots: snaps\n");
	ck_assert_msg(xd_config_load(&cfg, path, &diag) == 0, "%s", diag_text());
	ck_assert_str_eq(cfg.tls.cert, "/etc/c.pem");
	ck_assert(asprintf(&want, "%s/keys/new.pem", dir) > 0);
	ck_assert_str_eq(cfg.tls.key, want);
	free(want);
	ck_assert(asprintf(&want, "%s/snaps", dir) > 0);
	ck_assert_str_eq(cfg.snapshots, want);
	free(want);
	ck_assert_uint_eq(cfg.nauthorize, 1);
	ck_assert_str_eq(cfg.authorize[0].identity, "c");
	ck_assert_str_eq(cfg.authorize[0].node_id, "n");
	ck_assert_uint_eq(cfg.ncsds_allow, 1);
	ck_assert_str_eq(cfg.csds_allow[0], "z");
	ck_assert_uint_eq(cfg.ntrusted_proxies, 1);
	ck_assert_str_eq(cfg.trusted_proxies[0], "192.0.2.1");
	ck_assert_uint_eq(cfg.ndry_run_dirs, 1);
	ck_assert(asprintf(&want, "%s/releases", dir) > 0);
	ck_assert_str_eq(cfg.dry_run_dirs[0], want);
	free(want);
	free(path);
	free(dir);
}
END_TEST

/* Within one file a key set twice is still an error, and every file's
 * errors are reported, each with its own path. */
START_TEST(confd_errors_name_their_file)
{
	char *dir, *path = confd_setup("log_level: warn\n", &dir);
	char *got, *want;

	confd_write(dir, "a.yaml", "log_level: info\nlog_level: debug\n");
	confd_write(dir, "b.yaml", "lissten: 127.0.0.1:1\n");
	ck_assert_int_ne(xd_config_load(&cfg, path, &diag), 0);
	got = diag_text();
	ck_assert(asprintf(&want,
			   "%s/conf.d/a.yaml:2:1: 'log_level' is set twice (first on line 1)\n"
			   "%s/conf.d/b.yaml:1:1: unknown directive 'lissten' (did you mean 'listen'?)\n",
			   dir, dir) > 0);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	free(path);
	free(dir);
}
END_TEST

/* What goes together is checked once every file is read: the key may
 * come from another file than its certificate. A setting left alone is
 * reported in the file that set it. */
START_TEST(confd_together_across_files)
{
	char *dir, *path = confd_setup("tls:\n  cert: /etc/c.pem\n", &dir);
	char *got, *want;

	confd_write(dir, "key.yaml", "tls:\n  key: /etc/k.pem\n");
	ck_assert_msg(xd_config_load(&cfg, path, &diag) == 0, "%s", diag_text());
	ck_assert_str_eq(cfg.tls.key, "/etc/k.pem");
	free(path);
	free(dir);

	xd_config_free(&cfg);
	xd_config_init(&cfg, "/s", "/x.pb");
	path = confd_setup("log_level: info\n", &dir);
	confd_write(dir, "mtls.yaml", "# mTLS\n"
				      "tls:\n  cert: /etc/c.pem\n");
	ck_assert_int_ne(xd_config_load(&cfg, path, &diag), 0);
	got = diag_text();
	ck_assert(asprintf(&want, "%s/conf.d/mtls.yaml:2:1: tls: 'cert' and 'key' go together (line 3 sets only 'cert')\n",
			   dir) > 0);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	free(path);
	free(dir);
}
END_TEST

/* A conf.d that is not a directory, or holds more files than a site
 * keeps, is refused, saying so. */
START_TEST(confd_refused)
{
	char *dir, *path, *confd, *got, *name;

	dir = xdtest_snapdir();
	path = xdtest_write_file(dir, "xdsd.yaml", "log_level: info\n");
	free(xdtest_write_file(dir, "conf.d", "listen: x\n"));
	ck_assert_int_ne(xd_config_load(&cfg, path, &diag), 0);
	got = diag_text();
	ck_assert_msg(strstr(got, "/conf.d: cannot read the configuration's conf.d: Not a directory") != NULL,
		      "%s", got);
	free(got);
	free(path);
	free(dir);
	xd_diag_clear(&diag);

	path = confd_setup("", &dir);
	ck_assert(asprintf(&confd, "%s/conf.d", dir) > 0);
	for (int i = 0; i <= XD_CONFIG_MAX_CONFD; i++) {
		ck_assert(asprintf(&name, "%03d.yaml", i) > 0);
		free(xdtest_write_file(confd, name, "log_level: debug\n"));
		free(name);
	}
	ck_assert_int_ne(xd_config_load(&cfg, path, &diag), 0);
	got = diag_text();
	ck_assert_msg(strstr(got, "/conf.d: more than 256 files NAME.yaml; xdsd reads at most 256") != NULL,
		      "%s", got);
	free(got);
	free(confd);
	free(path);
	free(dir);
}
END_TEST

START_TEST(golden_bad_file)
{
	const char *name = golden[_i];
	char *yaml, *errfile, *want, *got;

	/* Messages carry the path as given, so load from tests/config. */
	ck_assert(chdir(xdtest_env("XDSD_SRCDIR")) == 0);
	ck_assert(chdir("tests/config") == 0);
	ck_assert(asprintf(&yaml, "bad/%s.yaml", name) > 0);
	ck_assert(asprintf(&errfile, "bad/%s.err", name) > 0);
	want = xdtest_read_file(errfile, NULL);
	ck_assert_msg(want != NULL, "%s is missing", errfile);
	ck_assert_msg(xd_config_load(&cfg, yaml, &diag) != 0,
		      "%s was accepted", yaml);
	got = diag_text();
	ck_assert_msg(strcmp(got, want) == 0, "%s:\nwant: %sgot:  %s", yaml,
		      want, got);
	free(yaml);
	free(errfile);
	free(want);
	free(got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("parse");
	TCase *confd = tcase_create("conf.d");
	TCase *gold = tcase_create("golden");

	xdtest_tmpdir();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, empty_file_keeps_defaults);
	tcase_add_test(tc, every_directive);
	tcase_add_test(tc, address_forms);
	tcase_add_test(tc, size_units);
	tcase_add_test(tc, duration_forms);
	tcase_add_test(tc, relative_paths_follow_the_file);
	tcase_add_test(tc, override_errors_name_the_flag);
	tcase_add_test(tc, credentials_directory_in_tls_paths);
	tcase_add_test(tc, state_dir_forms);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, directory_is_not_a_config);
	tcase_add_test(tc, fifo_or_device_is_not_a_config);
	tcase_add_test(tc, huge_file_refused);
	tcase_add_test(tc, nul_byte_in_value);
	tcase_add_test(tc, printed_config_reloads);
	tcase_add_test(tc, rollout_section);
	tcase_add_test(tc, trusted_proxies_list);
	tcase_add_test(tc, dry_run_dirs_list);
	tcase_add_test(tc, etcd_source);
	tcase_add_test(tc, connection_buffers);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(confd, setup, teardown);
	tcase_add_test(confd, confd_later_files_override);
	tcase_add_test(confd, confd_section_keys_and_lists);
	tcase_add_test(confd, confd_errors_name_their_file);
	tcase_add_test(confd, confd_together_across_files);
	tcase_add_test(confd, confd_refused);
	suite_add_tcase(s, confd);

	find_golden();
	XDT_REQUIRE(ngolden >= 20, "only %d golden files", ngolden);
	tcase_add_checked_fixture(gold, setup, teardown);
	tcase_add_loop_test(gold, golden_bad_file, 0, ngolden);
	suite_add_tcase(s, gold);
	return xdtest_run(s);
}
