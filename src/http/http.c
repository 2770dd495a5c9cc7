/* SPDX-License-Identifier: Apache-2.0 */
#include "http/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/listen.h"
#include "util/address.h"
#include "util/bucket.h"
#include "util/common.h"
#include "util/list.h"
#include "util/log.h"
#include "util/loop_thread.h"
#include "util/xalloc.h"

/*
 * libmicrohttpd runs in its "external epoll" mode: it keeps its sockets
 * in an epoll set of its own, and xdsd's loop watches that set's
 * descriptor (uv_poll) and its next deadline (uv_timer), calling
 * MHD_run for both. Each call handles each ready connection once, so a
 * connection's pipelined requests are spread over loop turns.
 *
 * A request a handler does not answer at once is parked with
 * MHD_suspend_connection, which also takes the socket out of the
 * library's epoll set. xd_http_reply resumes the connection; the
 * library then asks for the answer on its next run, never from inside
 * xd_http_reply.
 *
 * An answer sent while it is written (xd_http_stream_start) is a
 * response of unknown length whose reader copies what the handler has
 * appended to x->out. With nothing left to copy and the answer not
 * over, the reader suspends the connection (the library allows it from
 * there) and returns 0; the next push resumes it, so neither side polls.
 *
 * Each connection also has a uv_poll of its own on its socket, for the
 * client's end of stream (UV_DISCONNECT): a held REST poll hears `gone`
 * at once rather than when it ends. And the library's epoll set is
 * edge-triggered: a read that returns less than it asked for makes it
 * wait for the next edge, so when the end of stream comes with the
 * client's last bytes (a request cut short, then gone; or a whole one
 * and the end, from a client that half-closes), it reads the bytes and
 * never the end, and the connection would stay until the idle timeout.
 * So once the client has ended its stream, and the connection waits
 * for request bytes (none is being handled or answered) and the library
 * has read every byte that came, xdsd shuts down the socket's reading
 * side: a new edge, on which the library reads the end and closes, as
 * for any client that leaves.
 */

#define MAX_HEAD (16u * 1024)
/* The library's per-connection memory: the request head and the
 * answer's head are read and written there. A head that does not fit
 * gets 431 from it; one over MAX_HEAD that does fit, 431 from us. */
#define CONN_MEMORY (32u * 1024)
/* Refusals of one kind: at most this many log lines a minute per
 * endpoint, the rest counted in the next line. */
#define LOG_BURST 10
#define LOG_WINDOW_MS 60000
/* What the library asks the reader of an answer sent while it is
 * written for at a time, at most (its buffer for HTTP/1.0 clients;
 * chunks are written in the connection's memory). */
#define STREAM_BLOCK (16u * 1024)

struct exchange;

struct conn {
	struct xd_http_server *srv;
	struct MHD_Connection *mc; /* NULL once the library closed it */
	struct sockaddr_storage addr;
	char peer[64];
	uv_timer_t head;        /* http_header_timeout */
	uv_poll_t hup;          /* the client's end of stream */
	bool hup_open;
	bool ended;             /* the client ended its stream */
	bool woken;             /* the library was made to read again */
	int handles;            /* open; freed at 0 once closed */
	struct xd_bucket requests;
	struct exchange *x;     /* the request being read or handled */
	struct xd_list link;
};

struct exchange {
	struct xd_http_exchange pub;
	struct conn *c;          /* NULL once its connection is gone */
	struct xd_buf uri, body;
	bool seen;               /* the head is complete */
	bool dispatched;         /* handed to the handler */
	bool in_handler;         /* inside that call */
	bool suspended;
	bool abandoned;          /* the client left while it was held */
	bool replied;
	bool streaming;          /* sent while written (xd_http_stream_start) */
	bool ended;              /* that answer's last bytes are in `out` */
	size_t sent;             /* of `out`, taken by the library */
	size_t low;              /* `room` when at most this much is unsent */
	void (*room)(struct xd_http_exchange *x);
	int refuse;              /* answered by us: close after */
	bool too_large;          /* a body over max_body, not announced */
	size_t dropped;          /* its bytes, read and dropped */
	struct MHD_Response *resp; /* the answer, until queued */
	struct iovec iov[4];
	int niov;
	void (*release)(void *arg);
	void *release_arg;
};

struct xd_http_server {
	uv_loop_t *loop;
	struct MHD_Daemon *mhd;
	uv_poll_t poll;   /* the library's epoll descriptor */
	uv_timer_t timer; /* its next deadline */
	struct xd_http_opts opts;
	char *name, *listen;
	bool unix_socket;
	int port;
	struct xd_list conns;
	struct xd_http_stats stats;
	unsigned long long closed; /* connections closed since start */
	struct xd_log_limit log_full, log_address, log_rate;
	size_t ended; /* connections ended by their client, library not woken */
	bool stopping;
	int handles; /* the server's own handles and every connection's */
	void (*done)(void *arg);
	void *done_arg;
};

static void run(struct xd_http_server *s);

/* For a broken invariant's message: the endpoint and the client. */
#define WHO(c) "%s: %s", (c)->srv->name, (c)->peer

/* One of the server's handles, or of its connections', is closed: the
 * last one frees it. */
static void server_unref(struct xd_http_server *s)
{
	void (*done)(void *);
	void *arg;

	XD_ASSERT(s->handles > 0);
	if (--s->handles > 0)
		return;
	done = s->done;
	arg = s->done_arg;
	free(s->name);
	free(s->listen);
	free(s);
	if (done != NULL)
		done(arg);
}

static void server_handle_closed(uv_handle_t *h)
{
	server_unref(h->data);
}

/* ---------------- exchanges ---------------- */

static void exchange_free(struct exchange *e)
{
	if (e->resp != NULL)
		MHD_destroy_response(e->resp); /* releases shared pieces */
	else if (e->release != NULL)
		e->release(e->release_arg);
	xd_buf_free(&e->uri);
	xd_buf_free(&e->body);
	xd_buf_free(&e->pub.out);
	free(e);
}

/* One of a connection's handles (its head timer, its hup watch) is
 * closed: the last one frees it. */
static void conn_handle_closed(uv_handle_t *h)
{
	struct conn *c = h->data;
	struct xd_http_server *s = c->srv;

	XD_ASSERT(c->handles > 0);
	if (--c->handles == 0)
		free(c);
	server_unref(s);
}

static void hup_stop(struct conn *c)
{
	if (!c->hup_open)
		return;
	c->hup_open = false;
	uv_close((uv_handle_t *)&c->hup, conn_handle_closed);
}

static void on_timer(uv_timer_t *t);

/* A held request goes back to the library, which calls on_access for
 * it on its next run: on the next loop turn, when the timer is due (in
 * this mode the library has no wake-up descriptor of its own). */
static void resume(struct exchange *e)
{
	struct xd_http_server *s = e->c->srv;

	if (!e->suspended)
		return;
	e->suspended = false;
	MHD_resume_connection(e->c->mc);
	if (!s->stopping)
		uv_timer_start(&s->timer, on_timer, 0, 0);
}

/*
 * The client ended its stream and the library may not know (see
 * above): when the connection waits for request bytes and none is left
 * unread, its reading side is shut down, which the library sees.
 * True once done (or no longer needed).
 */
static bool wake(struct conn *c)
{
	const union MHD_ConnectionInfo *ci;
	int unread = 0;

	if (c->mc == NULL)
		return true;
	if (c->x != NULL && c->x->dispatched)
		return false; /* being handled or answered: after that */
	ci = MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci == NULL)
		return true;
	if (ioctl(ci->connect_fd, FIONREAD, &unread) == 0 && unread > 0)
		return false; /* the library reads those first */
	shutdown(ci->connect_fd, SHUT_RD);
	return true;
}

static void wake_ended(struct xd_http_server *s)
{
	struct xd_list *l;

	xd_list_for_each(l, &s->conns) {
		struct conn *c = xd_container_of(l, struct conn, link);

		if (c->ended && !c->woken && wake(c)) {
			c->woken = true;
			(void)XD_UNREF(s->ended);
		}
	}
}

/* The client's end of stream (or an error on its socket). */
static void on_hup(uv_poll_t *p, int status XD_UNUSED, int events XD_UNUSED)
{
	struct conn *c = p->data;
	struct exchange *e = c->x;

	/* level-triggered: once is enough (hold() starts it again) */
	uv_poll_stop(&c->hup);
	if (e != NULL && e->suspended) {
		/* it left while its request was held */
		e->abandoned = true;
		resume(e);
		return;
	}
	if (c->ended)
		return;
	c->ended = true;
	if (wake(c))
		c->woken = true;
	else
		c->srv->ended++; /* tried again after each run */
}

static void hold(struct exchange *e)
{
	struct conn *c = e->c;

	/* a request not answered yet, or an answer waiting for its bytes */
	XD_ASSERT_INFO(!e->suspended && (!e->replied || e->streaming), WHO(c));
	MHD_suspend_connection(c->mc);
	e->suspended = true;
	/* a client that has already ended its stream is heard of at once */
	if (c->hup_open)
		uv_poll_start(&c->hup, UV_DISCONNECT, on_hup);
}

static void add_headers(struct exchange *e, struct MHD_Response *r)
{
	struct xd_http_exchange *x = &e->pub;

	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, x->content_type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (x->allow != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, x->allow);
	if (x->location != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, x->location);
	if (e->refuse != 0)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
}

static struct MHD_Response *make_response(struct exchange *e)
{
	struct xd_http_exchange *x = &e->pub;
	struct MHD_Response *r;

	if (e->niov > 0) {
		struct MHD_IoVec iov[4];

		for (int i = 0; i < e->niov; i++) {
			iov[i].iov_base = e->iov[i].iov_base;
			iov[i].iov_len = e->iov[i].iov_len;
		}
		r = MHD_create_response_from_iovec(iov, (unsigned)e->niov,
						   e->release, e->release_arg);
		if (r != NULL)
			e->release = NULL; /* the response's now */
	} else {
		size_t len = 0;
		uint8_t *data = xd_buf_steal(&x->out, &len);

		r = MHD_create_response_from_buffer(
			len, data != NULL ? (void *)data : (void *)"",
			data != NULL ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
		if (r == NULL)
			free(data);
	}
	if (r == NULL)
		xd_out_of_memory(0);
	add_headers(e, r);
	return r;
}

static enum MHD_Result queue(struct exchange *e)
{
	enum MHD_Result rc;

	/* one answer per request */
	XD_ASSERT_INFO(!e->replied && e->resp != NULL, WHO(e->c));
	rc = MHD_queue_response(e->c->mc, (unsigned)e->pub.status, e->resp);
	MHD_destroy_response(e->resp); /* the library holds it now */
	e->resp = NULL;
	e->replied = true;
	return rc;
}

void xd_http_reply(struct xd_http_exchange *x)
{
	struct exchange *e = xd_container_of(x, struct exchange, pub);

	/* handlers answer from the loop, at once or later (a reload) */
	XD_ASSERT_LOOP();
	XD_ASSERT(!e->replied && e->resp == NULL);
	if (e->c == NULL) {
		/* the connection went away while this was pending */
		exchange_free(e);
		return;
	}
	e->resp = make_response(e);
	xd_buf_free(&x->out);
	if (!e->in_handler)
		resume(e);
}

void xd_http_reply_shared(struct xd_http_exchange *x, const struct iovec *iov,
			  int n, void (*release)(void *arg), void *arg)
{
	struct exchange *e = xd_container_of(x, struct exchange, pub);

	if (n < 1 || n > 4)
		xd_panic(__FILE__, __LINE__, "xd_http_reply_shared: 1 to 4 pieces");
	memcpy(e->iov, iov, (size_t)n * sizeof(*iov));
	e->niov = n;
	e->release = release;
	e->release_arg = arg;
	xd_http_reply(x);
}

/* The library asks for more of an answer sent while it is written. */
static ssize_t stream_read(void *cls, uint64_t pos XD_UNUSED, char *buf,
			   size_t max)
{
	struct exchange *e = cls;
	struct xd_buf *out = &e->pub.out;
	size_t n;

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(e->streaming && e->sent <= out->len, "%s %s",
		       e->pub.method, e->pub.path);
	if (e->abandoned || e->c == NULL)
		return MHD_CONTENT_READER_END_WITH_ERROR; /* closes */
	n = out->len - e->sent;
	if (n == 0) {
		if (e->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		/* the writer is behind: wait for its next push */
		hold(e);
		return 0;
	}
	if (n > max)
		n = max;
	memcpy(buf, out->data + e->sent, n);
	e->sent += n;
	if (!e->ended && out->len - e->sent <= e->low)
		e->room(&e->pub);
	return (ssize_t)n;
}

void xd_http_stream_start(struct xd_http_exchange *x, size_t low,
			  void (*room)(struct xd_http_exchange *x))
{
	struct exchange *e = xd_container_of(x, struct exchange, pub);

	XD_ASSERT_LOOP();
	/* one answer per request, this one instead of xd_http_reply */
	XD_ASSERT_INFO(!e->replied && e->resp == NULL && !e->streaming &&
			       e->niov == 0,
		       "%s %s", x->method, x->path);
	e->streaming = true;
	e->low = low;
	e->room = room;
	if (e->c == NULL)
		return; /* gone: xd_http_stream_end frees it */
	e->resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
						    stream_read, e, NULL);
	if (e->resp == NULL)
		xd_out_of_memory(0);
	add_headers(e, e->resp);
	if (!e->in_handler)
		resume(e);
}

void xd_http_stream_push(struct xd_http_exchange *x)
{
	struct exchange *e = xd_container_of(x, struct exchange, pub);

	XD_ASSERT_LOOP();
	XD_ASSERT(e->streaming);
	/* waiting in the reader for these bytes (not for its queueing,
	 * which on_access does once resumed) */
	if (e->c != NULL && e->suspended && e->replied)
		resume(e);
}

size_t xd_http_stream_held(struct xd_http_exchange *x)
{
	struct exchange *e = xd_container_of(x, struct exchange, pub);
	struct xd_buf *out = &x->out;
	size_t n;

	XD_ASSERT_INFO(e->streaming && e->sent <= out->len, "%s %s", x->method,
		       x->path);
	n = out->len - e->sent;
	if (e->sent > 0 && n > 0)
		memmove(out->data, out->data + e->sent, n);
	out->len = n;
	e->sent = 0;
	return n;
}

void xd_http_stream_end(struct xd_http_exchange *x)
{
	struct exchange *e = xd_container_of(x, struct exchange, pub);

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(e->streaming && !e->ended, "%s %s", x->method, x->path);
	e->ended = true;
	if (e->c == NULL) {
		/* the connection went away meanwhile */
		exchange_free(e);
		return;
	}
	xd_http_stream_push(x);
}

void xd_http_text(struct xd_http_exchange *x, int status, const char *text)
{
	size_t len = strlen(text), cap = 4 * len + 1;
	char *safe = xd_malloc(cap);

	/* the text may quote what a client, a file or an etcd key chose
	 * (a snapshot key, a name asked for): escaped as log lines are,
	 * so that neither a terminal's controls nor bytes that are not
	 * UTF-8 reach whoever reads the answer */
	len = xd_log_escape(safe, cap, text, len);
	x->status = status;
	x->content_type = "text/plain; charset=utf-8";
	x->out.len = 0;
	xd_buf_append(&x->out, safe, len);
	xd_buf_putc(&x->out, '\n');
	free(safe);
	xd_http_reply(x);
}

const char *xd_http_header(const struct xd_http_exchange *x, const char *name)
{
	const struct exchange *e = xd_container_of(x, struct exchange, pub);

	if (e->c == NULL || e->c->mc == NULL)
		return NULL;
	return MHD_lookup_connection_value(e->c->mc, MHD_HEADER_KIND, name);
}

/* ---------------- requests ---------------- */

/* Answers a request we refuse ourselves, then closes the connection. */
static enum MHD_Result refuse(struct exchange *e, int status, const char *text)
{
	e->refuse = status;
	e->pub.status = status;
	e->pub.content_type = "text/plain; charset=utf-8";
	xd_buf_printf(&e->pub.out, "%s\n", text);
	e->resp = make_response(e);
	return queue(e);
}

static void *on_uri(void *cls XD_UNUSED, const char *uri,
		    struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = ci != NULL ? ci->socket_context : NULL;
	struct exchange *e = xd_calloc(1, sizeof(*e));

	e->c = c;
	xd_buf_append(&e->uri, uri, strlen(uri) + 1);
	if (c != NULL)
		c->x = e;
	return e;
}

static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind XD_UNUSED,
				    const char *key, const char *value XD_UNUSED)
{
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
		++*(int *)cls;
	return MHD_YES;
}

/* The head is complete: what it says decides whether to go on. */
static enum MHD_Result head_done(struct exchange *e, const char *method)
{
	struct conn *c = e->c;
	struct xd_http_server *s = c->srv;
	const struct xd_http_opts *o = &s->opts;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	const char *cl = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te = MHD_lookup_connection_value(
		c->mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	char *end;
	int lengths = 0;

	XD_ASSERT_INFO(!e->seen && !e->dispatched, WHO(c));
	e->seen = true;
	uv_timer_stop(&c->head);
	if (ci != NULL && ci->header_size > MAX_HEAD) {
		s->stats.too_large++;
		return refuse(e, 431, "request head over 16 KiB");
	}
	/* two framings at once, or two lengths (the library would take
	 * the first): a smuggling attempt, or a broken client */
	MHD_get_connection_values(c->mc, MHD_HEADER_KIND, count_length, &lengths);
	if (cl != NULL && te != NULL)
		return refuse(e, 400, "both Content-Length and Transfer-Encoding");
	if (lengths > 1)
		return refuse(e, 400, "more than one Content-Length");
	if (cl != NULL && (strtoull(cl, &end, 10) > o->max_body || *end != '\0')) {
		s->stats.too_large++;
		return refuse(e, 413, "request body too large");
	}
	if (o->max_requests_per_second != 0 &&
	    !xd_bucket_take(&c->requests, o->max_requests_per_second,
			    o->max_request_burst, uv_now(s->loop))) {
		unsigned long quiet;

		s->stats.over_rate++;
		if (xd_log_limit_take(&s->log_rate, &quiet))
			xd_warn("%s: %s sent more than %llu requests a second (max_requests_per_second, burst %llu): answered 429 and closed (%lu more since)",
				s->name, c->peer,
				(unsigned long long)o->max_requests_per_second,
				(unsigned long long)o->max_request_burst, quiet);
		return refuse(e, 429, "too many requests");
	}
	e->pub.method = method;
	return MHD_YES;
}

/* A whole request: hand it over. */
static enum MHD_Result dispatch(struct exchange *e)
{
	struct xd_http_exchange *x = &e->pub;
	struct conn *c = e->c;
	struct xd_http_server *s = c->srv;
	char *q;

	XD_ASSERT_INFO(e->seen && !e->dispatched && !e->replied, WHO(c));
	e->dispatched = true;
	xd_buf_putc(&e->body, '\0');
	x->path = (const char *)e->uri.data;
	q = strchr((char *)e->uri.data, '?');
	if (q != NULL) {
		*q = '\0';
		x->query = q + 1;
	} else {
		x->query = "";
	}
	x->body = e->body.data;
	x->body_len = e->body.len - 1;
	x->peer = c->peer;
	x->status = 200;
	x->content_type = "text/plain; charset=utf-8";
	s->stats.requests++;
	e->in_handler = true;
	s->opts.handle(s->opts.ctx, x);
	e->in_handler = false;
	if (e->resp != NULL)
		return queue(e);
	hold(e);
	return MHD_YES;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *mc,
				 const char *url XD_UNUSED, const char *method,
				 const char *version XD_UNUSED,
				 const char *upload, size_t *upload_size,
				 void **req_cls)
{
	struct xd_http_server *s = cls;
	struct exchange *e = *req_cls;

	if (e == NULL || e->c == NULL || e->c->mc != mc)
		return MHD_NO; /* cannot happen: on_uri made it */
	if (e->abandoned || s->stopping)
		return MHD_NO; /* closes the connection */
	if (e->resp != NULL)
		return queue(e);
	if (e->replied || e->dispatched)
		return MHD_YES;
	if (!e->seen)
		return head_done(e, method);
	if (*upload_size > 0) {
		/*
		 * A body over the bound that no Content-Length announced
		 * (chunked). The library takes no answer while a body comes
		 * in: the rest is read and dropped, as much again at most,
		 * then answered 413; a body that goes on past that closes
		 * the connection unanswered.
		 */
		if (!e->too_large &&
		    e->body.len + *upload_size > s->opts.max_body) {
			s->stats.too_large++;
			e->too_large = true;
			xd_buf_free(&e->body);
		}
		if (e->too_large) {
			e->dropped += *upload_size;
			*upload_size = 0;
			return e->dropped <= s->opts.max_body * 2 ? MHD_YES : MHD_NO;
		}
		xd_buf_append(&e->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (e->too_large)
		return refuse(e, 413, "request body too large");
	return dispatch(e);
}

static void on_completed(void *cls XD_UNUSED, struct MHD_Connection *mc XD_UNUSED,
			 void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct exchange *e = *req_cls;
	struct conn *c;

	*req_cls = NULL;
	if (e == NULL)
		return;
	c = e->c;
	if (c != NULL && c->x == e)
		c->x = NULL;
	if (c != NULL) {
		/* the next request's head is due within the deadline */
		if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && c->mc != NULL &&
		    !c->srv->stopping)
			uv_timer_again(&c->head);
	}
	/* the handler is done with it once it answered (or ended the
	 * answer it sends while writing it) */
	if (!e->dispatched ||
	    (e->streaming ? e->ended : e->replied || e->resp != NULL)) {
		exchange_free(e);
		return;
	}
	/* the handler still holds it: it hears `gone`, then replies,
	 * which frees it */
	e->c = NULL;
	if (e->pub.gone != NULL)
		e->pub.gone(&e->pub);
}

/* ---------------- connections ---------------- */

static void peer_of(struct conn *c, const struct sockaddr *sa)
{
	if (c->srv->unix_socket || sa->sa_family == AF_UNIX) {
		snprintf(c->peer, sizeof(c->peer), "unix");
		return;
	}
	memcpy(&c->addr, sa, sa->sa_family == AF_INET6 ?
				     sizeof(struct sockaddr_in6) :
				     sizeof(struct sockaddr_in));
	if (xd_address_format(sa, c->peer, sizeof(c->peer)) == 0)
		snprintf(c->peer, sizeof(c->peer), "?");
}

static void on_head_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;
	struct xd_http_server *s = c->srv;
	const union MHD_ConnectionInfo *ci;

	if (c->mc == NULL || (c->x != NULL && c->x->seen))
		return;
	ci = MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	s->stats.header_timeouts++;
	xd_info("%s: closed the connection from %s: no complete request within %llu ms (http_header_timeout)",
		s->name, c->peer, (unsigned long long)s->opts.header_timeout_ms);
	/* The library owns the socket; shutting it down makes it see the
	 * end on its next run and close it the usual way. */
	if (ci != NULL)
		shutdown(ci->connect_fd, SHUT_RDWR);
}

static void on_connection(void *cls, struct MHD_Connection *mc,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct xd_http_server *s = cls;
	struct conn *c;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		const union MHD_ConnectionInfo *fd = MHD_get_connection_info(
			mc, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = xd_calloc(1, sizeof(*c));
		c->srv = s;
		c->mc = mc;
		if (ci != NULL && ci->client_addr != NULL)
			peer_of(c, ci->client_addr);
		else
			snprintf(c->peer, sizeof(c->peer), s->unix_socket ? "unix" : "?");
		uv_timer_init(s->loop, &c->head);
		c->head.data = c;
		c->handles = 1;
		s->handles++;
		uv_timer_start(&c->head, on_head_timeout, s->opts.header_timeout_ms,
			       s->opts.header_timeout_ms);
		xd_bucket_init(&c->requests, s->opts.max_request_burst,
			       uv_now(s->loop));
		/* without it a held request waits to be answered, and an end
		 * of stream read with the last bytes waits for the idle
		 * timeout: no worse than that */
		if (fd != NULL && uv_poll_init(s->loop, &c->hup, fd->connect_fd) == 0) {
			c->hup.data = c;
			c->hup_open = true;
			c->handles++;
			s->handles++;
			uv_poll_start(&c->hup, UV_DISCONNECT, on_hup);
		}
		xd_list_init(&c->link);
		xd_list_push_back(&s->conns, &c->link);
		s->stats.connections++;
		*socket_context = c;
		return;
	}
	c = *socket_context;
	if (c == NULL)
		return;
	*socket_context = NULL;
	c->mc = NULL;
	if (c->x != NULL && !c->x->dispatched) {
		/* a head that never completed (the library does not report
		 * those as requests) */
		exchange_free(c->x);
	} else if (c->x != NULL) {
		c->x->c = NULL;
	}
	c->x = NULL;
	hup_stop(c);
	if (c->ended && !c->woken)
		(void)XD_UNREF(s->ended);
	xd_list_remove(&c->link);
	(void)XD_UNREF(s->stats.connections);
	s->closed++;
	uv_close((uv_handle_t *)&c->head, conn_handle_closed);
}

static bool same_address(const struct sockaddr_storage *a,
			 const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (b->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return false;
}

/* Whether a new connection from `sa` is within the bounds. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *sa,
				 socklen_t len XD_UNUSED)
{
	struct xd_http_server *s = cls;
	unsigned long quiet;
	size_t same = 0;
	char who[64];
	struct conn tmp = {.srv = s};
	struct xd_list *l;

	if (s->stopping)
		return MHD_NO;
	if (s->stats.connections >= s->opts.max_connections) {
		s->stats.over_connections++;
		if (xd_log_limit_take(&s->log_full, &quiet)) {
			peer_of(&tmp, sa);
			xd_warn("%s: refused a connection from %s: %zu connections are open, the most it takes (%lu more refused since)",
				s->name, tmp.peer, s->stats.connections, quiet);
		}
		return MHD_NO;
	}
	if (s->opts.max_per_address == 0 ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return MHD_YES;
	xd_list_for_each(l, &s->conns) {
		struct conn *c = xd_container_of(l, struct conn, link);

		if (same_address(&c->addr, sa))
			same++;
	}
	if (same < s->opts.max_per_address ||
	    xd_address_in(s->opts.trusted, s->opts.ntrusted, sa))
		return MHD_YES;
	s->stats.over_per_address++;
	if (xd_log_limit_take(&s->log_address, &quiet)) {
		peer_of(&tmp, sa);
		snprintf(who, sizeof(who), "%s", tmp.peer);
		*strrchr(who, ':') = '\0';
		xd_warn("%s: refused a connection from %s: that address holds %zu connections already (%s_max_connections_per_address%s; %lu more refused since)",
			s->name, who, same, s->opts.name,
			xd_address_is_private(sa) ?
				"; if that address is a balancer's or proxy's, list it in trusted_proxies" :
				"",
			quiet);
	}
	return MHD_NO;
}

/* What the library logs: its own refusals (400, 431) and troubles. */
static void on_library_log(void *cls, const char *fmt, va_list ap)
{
	struct xd_http_server *s = cls;
	char msg[512];
	size_t n;

	if (XD_LOG_DEBUG > xd_log_threshold)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
		msg[--n] = '\0';
	xd_debug("%s: http: %s", s->name, msg);
}

/* ---------------- the loop ---------------- */

static void on_timer(uv_timer_t *t)
{
	run(t->data);
}

static void on_poll(uv_poll_t *p, int status XD_UNUSED, int events XD_UNUSED)
{
	run(p->data);
}

static void run(struct xd_http_server *s)
{
	MHD_UNSIGNED_LONG_LONG ms;
	unsigned long long closed = s->closed;

	/* every callback of the library runs from here */
	XD_ASSERT_LOOP();
	if (s->stopping)
		return;
	MHD_run(s->mhd);
	if (s->ended > 0)
		wake_ended(s);
	/* The library stops accepting when it runs out of descriptors, and
	 * takes the listening socket back only at the start of a run: with
	 * connections closed in this one, run again on the next turn rather
	 * than wait for some other event. */
	if (s->closed != closed)
		ms = 0;
	else if (MHD_get_timeout(s->mhd, &ms) != MHD_YES)
		ms = UINT64_MAX;
	if (ms != UINT64_MAX)
		uv_timer_start(&s->timer, on_timer, ms, 0);
	else
		uv_timer_stop(&s->timer);
}

int xd_http_start(struct xd_http_server **out, uv_loop_t *loop,
		  const struct xd_http_opts *opts, char *why, size_t why_len)
{
	struct xd_http_server *s;
	const union MHD_DaemonInfo *di;
	int fd;

	struct xd_log_limit limit = XD_LOG_LIMIT_INIT(LOG_BURST, LOG_WINDOW_MS);

	XD_ASSERT_LOOP();
	s = xd_calloc(1, sizeof(*s));
	s->loop = loop;
	s->log_full = limit;
	s->log_address = limit;
	s->log_rate = limit;
	s->opts = *opts;
	s->name = xd_strdup(opts->name != NULL ? opts->name : "http");
	s->listen = xd_strdup(opts->listen);
	s->opts.name = s->name;
	s->opts.listen = s->listen;
	if (s->opts.max_request_burst == 0)
		s->opts.max_request_burst = 1;
	xd_list_init(&s->conns);
	s->unix_socket = strncmp(opts->listen, "unix:", 5) == 0;
	fd = xd_http_listen(opts->listen, &s->port, why, why_len);
	if (fd < 0)
		goto fail;
	s->mhd = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0,
		on_accept, s, on_access, s,
		MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)(opts->max_connections + 1),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)((opts->idle_ms + 999) / 1000),
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_EXTERNAL_LOGGER, on_library_log, s,
		MHD_OPTION_END);
	if (s->mhd == NULL) {
		snprintf(why, why_len, "cannot serve HTTP on %s", opts->listen);
		close(fd);
		goto fail;
	}
	di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (di == NULL || uv_poll_init(loop, &s->poll, di->epoll_fd) != 0) {
		snprintf(why, why_len, "cannot serve HTTP on %s: no epoll descriptor",
			 opts->listen);
		MHD_stop_daemon(s->mhd);
		goto fail;
	}
	uv_timer_init(loop, &s->timer);
	s->poll.data = s;
	s->timer.data = s;
	s->handles = 2;
	uv_poll_start(&s->poll, UV_READABLE, on_poll);
	*out = s;
	return 0;
fail:
	free(s->name);
	free(s->listen);
	free(s);
	return -1;
}

int xd_http_port(const struct xd_http_server *s)
{
	return s->unix_socket ? 0 : s->port;
}

const struct xd_http_stats *xd_http_stats(const struct xd_http_server *s)
{
	return &s->stats;
}

void xd_http_stop(struct xd_http_server *s, void (*done)(void *arg),
		  void *arg)
{
	struct xd_list *l;

	XD_ASSERT_LOOP();
	XD_ASSERT_INFO(!s->stopping, "%s", s->name); /* once */
	s->done = done;
	s->done_arg = arg;
	/* the library refuses to stop with held requests: hand them back;
	 * stopping then closes every connection, and each held request's
	 * handler hears `gone` */
	xd_list_for_each(l, &s->conns) {
		struct conn *c = xd_container_of(l, struct conn, link);

		if (c->x != NULL && c->x->suspended) {
			c->x->abandoned = true;
			resume(c->x);
		}
	}
	s->stopping = true;
	/* before the library closes the descriptor it watches */
	uv_close((uv_handle_t *)&s->poll, server_handle_closed);
	uv_close((uv_handle_t *)&s->timer, server_handle_closed);
	MHD_stop_daemon(s->mhd);
	if (s->unix_socket)
		unlink(s->listen + 5);
}
