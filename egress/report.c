/* SPDX-License-Identifier: MIT */
/*
 * The parent's side of the report channel (egress.h): one recvmsg is one frame; the frame is
 * authenticated, checked against what the channel permits now, and decoded field by field.
 * The proxy is treated as hostile: it parses hostile bytes, so it may be compromised.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress.h"

int egr_reader_init(struct egr_reader *rd, const uint8_t key[WIRE_KEY_LEN])
{
	memset(rd, 0, sizeof(*rd));
	rd->mac = wire_mac_new(key);
	return rd->mac ? 0 : -ENOMEM;
}

void egr_reader_done(struct egr_reader *rd)
{
	if (!rd)
		return;
	rd->mac = wire_mac_free(rd->mac);
}

/* Decodes an authentic payload of type into *out, given what was seen before. */
static int decode(struct egr_reader *rd, const struct wire_hdr *h, struct wire_rd *payload,
		  struct egr_report *out)
{
	struct egr_report rep;
	memset(&rep, 0, sizeof(rep));
	rep.type = h->type;
	if (rd->finished)
		return -EPROTO;
	switch (h->type) {
	case WIRE_EGRESS_READY:
		if (rd->ready || !wire_done(payload))
			return rd->ready ? -EPROTO : -EBADMSG;
		rd->ready = true;
		break;
	case WIRE_EGRESS_FAILED:
		if (rd->ready)
			return -EPROTO;
		if (wire_get_egress_failed(payload, &rep.failed_err, rep.failed_step) < 0)
			return -EBADMSG;
		rd->finished = true;
		break;
	case WIRE_EGRESS_CONN:
		if (!rd->ready)
			return -EPROTO;
		if (wire_get_egress_conn(payload, &rep.conn) < 0)
			return -EBADMSG;
		break;
	case WIRE_EGRESS_LIMIT:
		if (!rd->ready)
			return -EPROTO;
		if (wire_get_egress_limit(payload, &rep.limit_which, &rep.limit) < 0)
			return -EBADMSG;
		if (rd->limits & (1u << rep.limit_which))
			return -EPROTO;
		rd->limits |= (uint8_t)(1u << rep.limit_which);
		break;
	default:
		return -EPROTO;
	}
	*out = rep;
	return 0;
}

int egr_reader_recv(struct egr_reader *rd, int fd, struct egr_report *out)
{
	uint8_t buf[WIRE_MAX_FRAME];
	/* Room for one descriptor's worth of ancillary data, only to see that some came. */
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	ssize_t n;
	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -EPIPE;
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EBADMSG;
	if (msg.msg_controllen > 0) {
		/* No frame carries a descriptor: close any that came, and refuse the frame. */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
					int got;
					memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
					(void)close(got);
				}
		return -EBADMSG;
	}
	struct wire_hdr h;
	struct wire_rd payload;
	int r = wire_open(rd->mac, WIRE_DIR_TO_SUPERVISOR, rd->seq, buf, (size_t)n, &h, &payload);
	if (r < 0)
		return r;
	r = decode(rd, &h, &payload, out);
	if (r < 0)
		return r;
	rd->seq++;
	return 0;
}

static const char *reason_name(uint8_t reason)
{
	switch (reason) {
	case WIRE_EGRESS_OK:
		return "ok";
	case WIRE_EGRESS_DENY_RULE:
		return "deny entry";
	case WIRE_EGRESS_NOT_ALLOWED:
		return "not in allow";
	case WIRE_EGRESS_ADDRESS:
		return "address not allowed";
	case WIRE_EGRESS_SNI:
		return "TLS server name differs";
	case WIRE_EGRESS_BAD_REQUEST:
		return "bad request";
	case WIRE_EGRESS_RESOLVE:
		return "does not resolve";
	case WIRE_EGRESS_UPSTREAM:
		return "unreachable";
	case WIRE_EGRESS_MAX_CONNECTIONS:
		return "max_connections reached";
	case WIRE_EGRESS_MAX_BYTES:
		return "max_bytes reached";
	case WIRE_EGRESS_INCOMPLETE:
		return "incomplete request";
	case WIRE_EGRESS_ERROR:
		return "proxy error";
	}
	return "?";
}

void egr_conn_describe(const struct wire_egress_conn *c, char *buf, size_t cap)
{
	if (cap == 0)
		return;
	const char *verdict = c->verdict == WIRE_EGRESS_ALLOWED  ? "allowed"
			      : c->verdict == WIRE_EGRESS_DENIED ? "denied"
								 : "refused";
	char target[WIRE_EGRESS_MAX_HOST + 16] = "";
	if (c->kind != WIRE_EGRESS_KIND_NONE) {
		bool v6 = strchr(c->host, ':') != NULL;
		(void)snprintf(target, sizeof(target), " %s%s%s:%u", v6 ? "[" : "", c->host,
			       v6 ? "]" : "", c->port);
	}
	char why[WIRE_EGRESS_MAX_RULE + 64];
	if (c->reason == WIRE_EGRESS_DENY_RULE)
		(void)snprintf(why, sizeof(why), "deny entry %s", c->rule);
	else if (c->reason == WIRE_EGRESS_OK && c->rule[0])
		(void)snprintf(why, sizeof(why), "by %s", c->rule);
	else
		(void)snprintf(why, sizeof(why), "%s", reason_name(c->reason));
	if (c->verdict == WIRE_EGRESS_ALLOWED)
		(void)snprintf(buf, cap, "%s%s (%s; %llu bytes up, %llu down)", verdict, target, why,
			       (unsigned long long)c->bytes_up, (unsigned long long)c->bytes_down);
	else
		(void)snprintf(buf, cap, "%s%s (%s)", verdict, target, why);
}
