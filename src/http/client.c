/* SPDX-License-Identifier: Apache-2.0 */
#include "http/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "util/address.h"
#include "util/buf.h"
#include "util/xalloc.h"

/* What the callbacks learn while libcurl reads. */
struct reading {
	struct xd_buf body;
	size_t max_body;
	size_t head_len; /* header bytes so far, interim answers' included */
	bool body_too_big;
	bool head_too_big;
	bool connected; /* a connection was made and the request is going out */
};

/* Without a Content-Length (chunked, or up to the close) only counting
 * what arrives bounds the body: CURLOPT_MAXFILESIZE_LARGE acts on an
 * announced length. */
static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct reading *r = arg;

	n *= size; /* size is 1 */
	XD_ASSERT(r->body.len <= r->max_body);
	if (n > r->max_body - r->body.len) {
		r->body_too_big = true;
		return 0; /* n > 0 here: libcurl stops */
	}
	xd_buf_append(&r->body, data, n);
	return n;
}

/* Header lines are not kept (CURLINFO_CONTENT_TYPE has the one needed),
 * only counted. */
static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct reading *r = arg;

	(void)data;
	n *= size;
	r->head_len += n;
	if (r->head_len > XD_HTTP_MAX_HEAD) {
		r->head_too_big = true;
		return 0;
	}
	return n;
}

/* libcurl calls this once connected, before sending: a timeout after it
 * is the peer not answering, before it the connection not being made. */
static int on_connected(void *arg, char *peer_ip, char *local_ip,
			int peer_port, int local_port)
{
	struct reading *r = arg;

	(void)peer_ip;
	(void)local_ip;
	(void)peer_port;
	(void)local_port;
	r->connected = true;
	return CURL_PREREQFUNC_OK;
}

/*
 * The URL libcurl connects to: "http://host:port/", "http://[v6]:port/"
 * (a zone's '%' written %25, as URLs need), or "http://localhost/" for
 * a unix socket, which then goes beside it. Only scheme, host and port
 * count: the request target is sent as given (CURLOPT_REQUEST_TARGET).
 */
static char *url_of(const char *target)
{
	struct xd_buf url = XD_BUF_INIT;

	xd_buf_printf(&url, "http://");
	if (strncmp(target, "unix:", 5) == 0) {
		xd_buf_printf(&url, "localhost");
	} else {
		for (const char *p = target; *p; p++) {
			if (*p == '%')
				xd_buf_printf(&url, "%%25");
			else
				xd_buf_putc(&url, (uint8_t)*p);
		}
	}
	xd_buf_printf(&url, "/");
	xd_buf_putc(&url, '\0');
	return (char *)xd_buf_steal(&url, NULL);
}

/* Says why libcurl's `rc` ended the exchange, in the words xdsctl's
 * users (and its tests) know. */
static void explain(CURL *c, CURLcode rc, const char *curl_why,
		    const struct xd_http_request *q, const struct reading *r,
		    char *why, size_t why_len)
{
	const char *target = q->target;
	long os_errno = 0;

	curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
	if (curl_why[0] == '\0')
		curl_why = curl_easy_strerror(rc);
	if (r->body_too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(why, why_len, "answer from %s too large: over %zu bytes",
			 target, r->max_body);
	} else if (r->head_too_big) {
		snprintf(why, why_len, "answer from %s too large: headers over %d bytes",
			 target, XD_HTTP_MAX_HEAD);
	} else if (rc == CURLE_COULDNT_RESOLVE_HOST) {
		char host[256], port[8], bad[8];

		/* the host as the listeners' messages name it */
		if (xd_address_split(target, host, sizeof(host), port,
				     sizeof(port), bad, sizeof(bad)) != 0)
			snprintf(host, sizeof(host), "%s", target);
		snprintf(why, why_len, "cannot resolve '%s'", host);
	} else if (rc == CURLE_COULDNT_CONNECT) {
		snprintf(why, why_len, "cannot connect to %s: %s", target,
			 strerror(os_errno ? (int)os_errno : ECONNREFUSED));
	} else if (rc == CURLE_OPERATION_TIMEDOUT && !r->connected) {
		/* a host that drops SYNs, a listener whose backlog is full */
		snprintf(why, why_len, "cannot connect to %s: %s", target,
			 strerror(ETIMEDOUT));
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(why, why_len, "no answer from %s within %d ms", target,
			 q->timeout_ms);
	} else if (rc == CURLE_GOT_NOTHING) {
		snprintf(why, why_len, "%s closed the connection before answering",
			 target);
	} else if (rc == CURLE_PARTIAL_FILE) {
		snprintf(why, why_len, "%s closed the connection before the answer's end",
			 target);
	} else if (rc == CURLE_SEND_ERROR) {
		snprintf(why, why_len, "cannot send to %s: %s", target,
			 os_errno ? strerror((int)os_errno) : curl_why);
	} else if (rc == CURLE_RECV_ERROR) {
		snprintf(why, why_len, "reading from %s: %s", target,
			 os_errno ? strerror((int)os_errno) : curl_why);
	} else {
		snprintf(why, why_len, "bad answer from %s: %s", target, curl_why);
	}
}

/* The options of one exchange; false when libcurl refuses one (out of
 * memory, or a libcurl built without what is asked). */
static bool set_up(CURL *c, const struct xd_http_request *q, const char *url,
		   struct curl_slist *headers, struct reading *r, char *curl_why)
{
	bool unix_socket = strncmp(q->target, "unix:", 5) == 0;
	bool has_body = q->body != NULL || strcmp(q->method, "POST") == 0;
	CURLcode rc = CURLE_OK;

#define SET(opt, value) \
	do { \
		if (rc == CURLE_OK) \
			rc = curl_easy_setopt(c, opt, value); \
	} while (0)
	SET(CURLOPT_ERRORBUFFER, curl_why);
	SET(CURLOPT_URL, url);
	SET(CURLOPT_PROTOCOLS_STR, "http");
	SET(CURLOPT_PROXY, ""); /* not from the environment */
	if (unix_socket)
		SET(CURLOPT_UNIX_SOCKET_PATH, q->target + 5);
	SET(CURLOPT_REQUEST_TARGET, q->path);
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	/* no SIGALRM around name resolution: the timeout bounds it, in
	 * libcurl's resolver thread */
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_TIMEOUT_MS, (long)q->timeout_ms);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max_body);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, r);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, r);
	SET(CURLOPT_PREREQFUNCTION, on_connected);
	SET(CURLOPT_PREREQDATA, r);
	SET(CURLOPT_HTTPHEADER, headers);
	if (strcmp(q->method, "HEAD") == 0) {
		/* an answer to HEAD has no body, whatever its length says */
		SET(CURLOPT_NOBODY, 1L);
	} else {
		if (has_body) {
			SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
			SET(CURLOPT_POSTFIELDS, q->body != NULL ? q->body : "");
		}
		/* libcurl says GET, or POST with a body; any other method
		 * by name */
		if (strcmp(q->method, has_body ? "POST" : "GET") != 0)
			SET(CURLOPT_CUSTOMREQUEST, q->method);
	}
#undef SET
	return rc == CURLE_OK;
}

int xd_http_fetch(const struct xd_http_request *q,
		  struct xd_http_response *out, char *why, size_t why_len)
{
	struct reading r = {.body = XD_BUF_INIT};
	char curl_why[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL, *h;
	const char *bad = xd_address_error(q->target), *type = NULL;
	char *url = NULL;
	CURL *c = NULL;
	CURLcode rc;
	long status = 0;
	int ret = -1;

	/* libcurl takes a timeout of 0 as none: never unbounded */
	XD_ASSERT_INFO(q->timeout_ms > 0 && q->method != NULL && q->path != NULL,
		       "request to '%s'", q->target);
	memset(out, 0, sizeof(*out));
	if (bad != NULL) {
		snprintf(why, why_len, "'%s': %s", q->target, bad);
		return -1;
	}
	if (strncmp(q->target, "unix:", 5) == 0 &&
	    strlen(q->target + 5) >= sizeof(((struct sockaddr_un *)NULL)->sun_path)) {
		snprintf(why, why_len, "socket path too long: %s", q->target + 5);
		return -1;
	}
	r.max_body = q->max_body != 0 ? q->max_body : XD_HTTP_MAX_BODY;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(why, why_len, "cannot ask %s: libcurl would not start",
			 q->target);
		return -1;
	}
	/* a POST's body is JSON, or nothing: said so, also because the
	 * admin endpoint takes no POST a web form could send (guard.h);
	 * and no "Expect: 100-continue" pause before a large body: not
	 * every server answers it */
	url = url_of(q->target);
	c = curl_easy_init();
	headers = curl_slist_append(NULL, q->body != NULL || strcmp(q->method, "POST") == 0 ?
						  "Content-Type: application/json" :
						  "Content-Type:");
	h = headers != NULL ? curl_slist_append(headers, "Expect:") : NULL;
	if (c == NULL || h == NULL || !set_up(c, q, url, headers, &r, curl_why)) {
		snprintf(why, why_len, "cannot ask %s: libcurl refused its options",
			 q->target);
		goto out;
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		explain(c, rc, curl_why, q, &r, why, why_len);
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type);
	out->status = (int)status;
	out->content_type = xd_strdup(type != NULL ? type : "");
	out->body_len = r.body.len;
	xd_buf_putc(&r.body, '\0');
	out->body = (char *)xd_buf_steal(&r.body, NULL);
	ret = 0;
out:
	if (c != NULL)
		curl_easy_cleanup(c);
	curl_slist_free_all(headers);
	curl_global_cleanup();
	free(url);
	xd_buf_free(&r.body);
	return ret;
}

void xd_http_response_free(struct xd_http_response *r)
{
	free(r->content_type);
	free(r->body);
	memset(r, 0, sizeof(*r));
}
