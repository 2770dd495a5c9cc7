#include "http/http.h"

#include <arpa/inet.h>
#include <http_parser.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/common.h"
#include "util/list.h"
#include "util/xalloc.h"

#define MAX_HEAD (16u * 1024)
/* After an error answer, what the client still sends is read and
 * dropped for this long before the connection closes: closing with
 * unread bytes would reset it, and the client could lose the answer. */
#define LINGER_MS 2000
#define READ_CHUNK 4096

struct conn {
	struct xd_http_server *srv;
	union {
		uv_stream_t stream;
		uv_tcp_t tcp;
		uv_pipe_t pipe;
	} h;
	uv_timer_t idle;
	int handles; /* open handles; freed at 0 once closing */
	bool closing;
	char peer[64];

	http_parser parser;
	struct xd_buf in; /* read but not parsed yet (behind a pending request) */
	size_t in_off;

	/* the request being parsed */
	struct xd_buf url, body;
	size_t head;         /* bytes of its head so far */
	int refuse;          /* 413 or 431 once over a bound: reply, close */
	bool complete;       /* a whole request is waiting to be handled */
	/* the header being read, as far as "Expect: 100-continue" needs:
	 * longer names and values than these cannot be that one */
	char hname[8], hvalue[16];
	size_t hname_len, hvalue_len;
	bool in_value, expect_continue;

	struct xd_http_exchange x;
	bool pending;        /* handed to the handler, not replied yet */
	bool keep_alive;
	bool head_request; /* HEAD: the response goes without its body */
	bool lingering;    /* answered and shut down for writing; draining */
	uv_shutdown_t shutdown;
	struct xd_list link;
};

struct xd_http_server {
	uv_loop_t *loop;
	union {
		uv_stream_t stream;
		uv_tcp_t tcp;
		uv_pipe_t pipe;
	} listener;
	bool unix_socket;
	int port;
	struct xd_http_opts opts;
	char *listen;
	struct xd_list conns;
	size_t nconns;
	bool stopping;
	int closing; /* handles whose close callback is still due */
	void (*done)(void *arg);
	void *done_arg;
};

static http_parser_settings settings;
static void conn_close(struct conn *c);
static void on_idle_linger(uv_timer_t *t);
static void parse_more(struct conn *c);

/* ---------------- responses ---------------- */

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 204: return "No Content";
	case 302: return "Found";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 422: return "Unprocessable Content";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

struct write_req {
	uv_write_t req;
	struct conn *c;
	uint8_t *data;
	bool close_after;
};

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b);

static void shut_down(uv_shutdown_t *req, int status XD_UNUSED)
{
	struct conn *c = req->data;

	c->handles--;
	if (c->closing && c->handles == 0)
		free(c);
}

/* The last answer is out: the client gets its end of stream, and what
 * it still sends is drained until it closes or LINGER_MS pass. */
static void linger(struct conn *c)
{
	c->lingering = true;
	c->shutdown.data = c;
	c->handles++;
	if (uv_shutdown(&c->shutdown, &c->h.stream, shut_down) != 0) {
		c->handles--;
		conn_close(c);
		return;
	}
	uv_timer_start(&c->idle, on_idle_linger, LINGER_MS, 0);
	uv_read_start(&c->h.stream, on_alloc, on_read);
}

static void written(uv_write_t *req, int status)
{
	struct write_req *w = xd_container_of(req, struct write_req, req);
	struct conn *c = w->c;

	free(w->data);
	if (status != 0)
		conn_close(c);
	else if (w->close_after && !c->closing)
		linger(c);
	free(w);
	c->handles--; /* the write held the connection */
	if (c->closing && c->handles == 0)
		free(c);
}

/* Queues `out`'s bytes (taken) on the connection; writes go out in the
 * order they were queued. */
static void write_out(struct conn *c, struct xd_buf *out, bool close_after)
{
	struct write_req *w = xd_calloc(1, sizeof(*w));
	uv_buf_t b;

	w->c = c;
	w->close_after = close_after;
	w->data = xd_buf_steal(out, &b.len);
	b.base = (char *)w->data;
	c->handles++;
	if (uv_write(&w->req, &c->h.stream, &b, 1, written) != 0) {
		free(w->data);
		free(w);
		c->handles--;
		conn_close(c);
	}
}

static void send_response(struct conn *c, int status, const char *type,
			  const char *allow, const char *location,
			  const struct xd_buf *body, bool close_after)
{
	struct xd_buf out = XD_BUF_INIT;

	xd_buf_printf(&out,
		      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		      "Cache-Control: no-store\r\n%s%s%s%s%s%s%s\r\n",
		      status, reason(status), type, body->len,
		      allow ? "Allow: " : "", allow ? allow : "", allow ? "\r\n" : "",
		      location ? "Location: " : "", location ? location : "",
		      location ? "\r\n" : "",
		      close_after ? "Connection: close\r\n" : "");
	if (!c->head_request)
		xd_buf_append(&out, body->data, body->len);
	if (c->closing) {
		xd_buf_free(&out);
		return;
	}
	write_out(c, &out, close_after);
	uv_timer_again(&c->idle);
}

/* A request xdsd will not handle: answer and close. */
static void refuse(struct conn *c, int status, const char *text)
{
	struct xd_buf body = XD_BUF_INIT;

	xd_buf_printf(&body, "%s\n", text);
	send_response(c, status, "text/plain; charset=utf-8", NULL, NULL, &body,
		      true);
	xd_buf_free(&body);
	uv_read_stop(&c->h.stream);
	c->refuse = status;
}

void xd_http_reply(struct xd_http_exchange *x)
{
	struct conn *c = xd_container_of(x, struct conn, x);

	c->pending = false;
	send_response(c, x->status, x->content_type, x->allow, x->location,
		      &x->out, !c->keep_alive);
	xd_buf_free(&x->out);
	if (c->closing) {
		/* the client went away while this was pending */
		if (c->handles == 0)
			free(c);
		return;
	}
	if (c->keep_alive) {
		http_parser_pause(&c->parser, 0);
		parse_more(c);
	}
}

void xd_http_text(struct xd_http_exchange *x, int status, const char *text)
{
	x->status = status;
	x->content_type = "text/plain; charset=utf-8";
	x->out.len = 0;
	xd_buf_printf(&x->out, "%s\n", text);
	xd_http_reply(x);
}

/* ---------------- parsing ---------------- */

static int on_message_begin(http_parser *p)
{
	struct conn *c = p->data;

	c->url.len = 0;
	c->body.len = 0;
	c->head = 0;
	c->hname_len = c->hvalue_len = 0;
	c->in_value = c->expect_continue = false;
	return 0;
}

static int count_head(struct conn *c, size_t n)
{
	c->head += n;
	if (c->head > MAX_HEAD) {
		refuse(c, 431, "request head over 16 KiB");
		return -1;
	}
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	if (count_head(c, n) != 0)
		return -1;
	xd_buf_append(&c->url, at, n);
	return 0;
}

/* Appends a piece of a header's name or value (the parser may hand
 * them over in pieces), keeping no more than the buffer: a longer one
 * is marked so by a length past it. */
static void keep(char *buf, size_t cap, size_t *len, const char *at, size_t n)
{
	if (*len + n <= cap)
		memcpy(buf + *len, at, n);
	*len += n;
}

static bool is_text(const char *buf, size_t len, const char *text)
{
	return len == strlen(text) && strncasecmp(buf, text, len) == 0;
}

/* A header ends: "Expect: 100-continue" asks for a go-ahead before the
 * body (curl asks for bodies over 1 KiB, and waits a second without it). */
static void header_done(struct conn *c)
{
	if (c->in_value && is_text(c->hname, c->hname_len, "expect") &&
	    is_text(c->hvalue, c->hvalue_len, "100-continue"))
		c->expect_continue = true;
	c->in_value = false;
	c->hname_len = c->hvalue_len = 0;
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	if (c->in_value)
		header_done(c);
	keep(c->hname, sizeof(c->hname), &c->hname_len, at, n);
	return count_head(c, n);
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	c->in_value = true;
	keep(c->hvalue, sizeof(c->hvalue), &c->hvalue_len, at, n);
	return count_head(c, n);
}

/* A declared body over the bound is refused before it is sent. */
static int on_headers_complete(http_parser *p)
{
	struct conn *c = p->data;

	header_done(c);
	if ((p->flags & F_CONTENTLENGTH) != 0 &&
	    p->content_length > c->srv->opts.max_body) {
		refuse(c, 413, "request body too large");
		return -1;
	}
	if (c->expect_continue && p->http_major == 1 && p->http_minor >= 1 &&
	    !c->closing) {
		struct xd_buf go = XD_BUF_INIT;

		xd_buf_printf(&go, "HTTP/1.1 100 Continue\r\n\r\n");
		write_out(c, &go, false);
	}
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	if (c->body.len + n > c->srv->opts.max_body) {
		refuse(c, 413, "request body too large");
		return -1;
	}
	xd_buf_append(&c->body, at, n);
	return 0;
}

/* A whole request: hand it over, and parse nothing more until it is
 * answered (requests on a connection are answered in order). */
static int on_message_complete(http_parser *p)
{
	struct conn *c = p->data;

	c->complete = true;
	http_parser_pause(p, 1);
	return 0;
}

static void dispatch(struct conn *c)
{
	struct xd_http_exchange *x = &c->x;
	char *q;

	c->complete = false;
	xd_buf_putc(&c->url, '\0');
	xd_buf_putc(&c->body, '\0');
	c->keep_alive = http_should_keep_alive(&c->parser) != 0;
	c->head_request = c->parser.method == HTTP_HEAD;
	memset(x, 0, sizeof(*x));
	x->method = http_method_str(c->parser.method);
	x->path = (const char *)c->url.data;
	q = strchr((char *)c->url.data, '?');
	if (q != NULL) {
		*q = '\0';
		x->query = q + 1;
	} else {
		x->query = "";
	}
	x->body = c->body.data;
	x->body_len = c->body.len - 1;
	x->peer = c->peer;
	x->status = 200;
	x->content_type = "text/plain; charset=utf-8";
	c->pending = true;
	c->srv->opts.handle(c->srv->opts.ctx, x);
}

/* Parses what was read, up to the next whole request. */
static void parse_more(struct conn *c)
{
	while (!c->pending && !c->closing && c->refuse == 0 &&
	       c->in_off < c->in.len) {
		size_t n = http_parser_execute(&c->parser, &settings,
					       (const char *)c->in.data + c->in_off,
					       c->in.len - c->in_off);
		enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);

		c->in_off += n;
		if (c->refuse != 0)
			return;
		if (e != HPE_OK && e != HPE_PAUSED) {
			refuse(c, 400, http_errno_description(e));
			return;
		}
		if (c->complete)
			dispatch(c);
		else if (e == HPE_OK && n == 0)
			break;
	}
	if (c->in_off == c->in.len) {
		c->in.len = 0;
		c->in_off = 0;
	}
}

/* ---------------- connections ---------------- */

static void on_handle_closed(uv_handle_t *h)
{
	struct conn *c = h->data;

	if (--c->handles == 0 && !c->pending)
		free(c);
}

static void conn_close(struct conn *c)
{
	struct xd_http_server *srv = c->srv;

	if (c->closing)
		return;
	c->closing = true;
	xd_list_remove(&c->link);
	srv->nconns--;
	xd_buf_free(&c->in);
	xd_buf_free(&c->url);
	xd_buf_free(&c->body);
	uv_close((uv_handle_t *)&c->h.stream, on_handle_closed);
	uv_close((uv_handle_t *)&c->idle, on_handle_closed);
	/* after the closes: the handle count keeps `c` alive through a
	 * reply made from `gone` */
	if (c->pending && c->x.gone != NULL)
		c->x.gone(&c->x);
}

static void on_alloc(uv_handle_t *h, size_t suggested XD_UNUSED, uv_buf_t *b)
{
	struct conn *c = h->data;

	b->base = (char *)xd_buf_reserve(&c->in, READ_CHUNK);
	b->len = READ_CHUNK;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b XD_UNUSED)
{
	struct conn *c = s->data;

	if (n < 0) {
		conn_close(c);
		return;
	}
	if (c->lingering) {
		c->in.len = 0; /* dropped */
		c->in_off = 0;
		return;
	}
	c->in.len += (size_t)n;
	uv_timer_again(&c->idle);
	parse_more(c);
	/* with a request pending, what follows waits in `in`, read no more
	 * than a bounded amount ahead */
	if (c->pending && c->in.len - c->in_off > MAX_HEAD + c->srv->opts.max_body)
		uv_read_stop(&c->h.stream);
}

static void on_idle_linger(uv_timer_t *t)
{
	conn_close(t->data);
}

static void on_idle(uv_timer_t *t)
{
	struct conn *c = t->data;

	if (!c->pending)
		conn_close(c);
}

static void peer_of(struct conn *c)
{
	struct sockaddr_storage sa;
	int len = sizeof(sa);
	char host[INET6_ADDRSTRLEN];

	if (c->srv->unix_socket) {
		snprintf(c->peer, sizeof(c->peer), "unix");
		return;
	}
	if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&sa, &len) != 0 ||
	    getnameinfo((struct sockaddr *)&sa, (socklen_t)len, host,
			sizeof(host), NULL, 0, NI_NUMERICHOST) != 0) {
		snprintf(c->peer, sizeof(c->peer), "?");
		return;
	}
	snprintf(c->peer, sizeof(c->peer), "%s:%u", host,
		 ntohs(sa.ss_family == AF_INET6 ?
			       ((struct sockaddr_in6 *)&sa)->sin6_port :
			       ((struct sockaddr_in *)&sa)->sin_port));
}

static void on_connection(uv_stream_t *l, int status)
{
	struct xd_http_server *srv = l->data;
	struct conn *c;

	if (status != 0)
		return;
	c = xd_calloc(1, sizeof(*c));
	c->srv = srv;
	if (srv->unix_socket)
		uv_pipe_init(srv->loop, &c->h.pipe, 0);
	else
		uv_tcp_init(srv->loop, &c->h.tcp);
	uv_timer_init(srv->loop, &c->idle);
	c->h.stream.data = c;
	c->idle.data = c;
	c->handles = 2;
	xd_list_init(&c->link);
	xd_list_push_back(&srv->conns, &c->link);
	srv->nconns++;
	if (uv_accept(l, &c->h.stream) != 0 || srv->stopping ||
	    srv->nconns > srv->opts.max_connections) {
		conn_close(c);
		return;
	}
	peer_of(c);
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	uv_timer_start(&c->idle, on_idle, srv->opts.idle_ms, srv->opts.idle_ms);
	uv_read_start(&c->h.stream, on_alloc, on_read);
}

/* ---------------- the server ---------------- */

static int listen_tcp(struct xd_http_server *srv, const char *addr, char *why,
		      size_t why_len)
{
	char host[256], *port;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL;
	struct sockaddr_storage bound;
	int len = sizeof(bound), err;

	snprintf(host, sizeof(host), "%s", addr[0] == '[' ? addr + 1 : addr);
	port = strrchr(host, ':');
	if (port == NULL) {
		snprintf(why, why_len, "'%s': missing :port", addr);
		return -1;
	}
	*port++ = '\0';
	if (host[0] != '\0' && host[strlen(host) - 1] == ']')
		host[strlen(host) - 1] = '\0';
	err = getaddrinfo(host, port, &hints, &res);
	if (err != 0) {
		snprintf(why, why_len, "cannot resolve '%s': %s", host,
			 gai_strerror(err));
		return -1;
	}
	uv_tcp_init(srv->loop, &srv->listener.tcp);
	err = uv_tcp_bind(&srv->listener.tcp, res->ai_addr, 0);
	freeaddrinfo(res);
	if (err == 0)
		err = uv_listen(&srv->listener.stream, 64, on_connection);
	if (err != 0) {
		snprintf(why, why_len, "cannot listen on %s: %s", addr,
			 uv_strerror(err));
		return -1;
	}
	uv_tcp_getsockname(&srv->listener.tcp, (struct sockaddr *)&bound, &len);
	srv->port = ntohs(bound.ss_family == AF_INET6 ?
				  ((struct sockaddr_in6 *)&bound)->sin6_port :
				  ((struct sockaddr_in *)&bound)->sin_port);
	return 0;
}

static int listen_unix(struct xd_http_server *srv, const char *path, char *why,
		       size_t why_len)
{
	int err;

	/* a socket file left by a previous run would make bind fail */
	unlink(path);
	uv_pipe_init(srv->loop, &srv->listener.pipe, 0);
	err = uv_pipe_bind(&srv->listener.pipe, path);
	if (err == 0)
		err = uv_listen(&srv->listener.stream, 64, on_connection);
	if (err != 0) {
		snprintf(why, why_len, "cannot listen on unix:%s: %s", path,
			 uv_strerror(err));
		return -1;
	}
	return 0;
}

static void listener_closed(uv_handle_t *h)
{
	struct xd_http_server *srv = h->data;
	void (*done)(void *) = srv->done;
	void *arg = srv->done_arg;

	free(srv->listen);
	free(srv);
	if (done != NULL)
		done(arg);
}

int xd_http_start(struct xd_http_server **out, uv_loop_t *loop,
		  const struct xd_http_opts *opts, char *why, size_t why_len)
{
	struct xd_http_server *srv = xd_calloc(1, sizeof(*srv));
	int rc;

	settings.on_message_begin = on_message_begin;
	settings.on_url = on_url;
	settings.on_header_field = on_header_field;
	settings.on_header_value = on_header_value;
	settings.on_headers_complete = on_headers_complete;
	settings.on_body = on_body;
	settings.on_message_complete = on_message_complete;
	srv->loop = loop;
	srv->opts = *opts;
	srv->listen = xd_strdup(opts->listen);
	srv->opts.listen = srv->listen;
	xd_list_init(&srv->conns);
	srv->listener.stream.data = srv;
	srv->unix_socket = strncmp(opts->listen, "unix:", 5) == 0;
	rc = srv->unix_socket ? listen_unix(srv, opts->listen + 5, why, why_len) :
				listen_tcp(srv, opts->listen, why, why_len);
	if (rc != 0) {
		/* the handle was initialised: close it, then free */
		srv->listener.stream.data = srv;
		uv_close((uv_handle_t *)&srv->listener.stream, listener_closed);
		return -1;
	}
	*out = srv;
	return 0;
}

int xd_http_port(const struct xd_http_server *s)
{
	return s->unix_socket ? 0 : s->port;
}

void xd_http_stop(struct xd_http_server *s, void (*done)(void *arg),
		  void *arg)
{
	s->stopping = true;
	s->done = done;
	s->done_arg = arg;
	while (!xd_list_empty(&s->conns))
		conn_close(xd_container_of(s->conns.next, struct conn, link));
	if (s->unix_socket)
		unlink(s->listen + 5);
	uv_close((uv_handle_t *)&s->listener.stream, listener_closed);
}

/* ---------------- queries ---------------- */

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes `n` bytes of `s` into `out`; false if malformed or too long. */
static bool decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '+') {
			ch = ' ';
		} else if (ch == '%') {
			if (i + 2 >= n || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
				return false;
			ch = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
			i += 2;
		}
		if (ch == '\0' || o + 1 >= cap)
			return false;
		out[o++] = ch;
	}
	out[o] = '\0';
	return true;
}

int xd_http_query_get(const char *query, const char *key, char *out,
		      size_t cap)
{
	size_t klen = strlen(key);

	for (const char *p = query; *p != '\0';) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=')
			return decode(p + klen + 1, len - klen - 1, out, cap) ? 1 : -1;
		if (len == klen && strncmp(p, key, klen) == 0)
			return decode("", 0, out, cap) ? 1 : -1;
		p += len + (end != NULL);
	}
	return 0;
}
