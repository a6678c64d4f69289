/* SPDX-License-Identifier: MIT */
/*
 * Resolving a name once, for the addresses the proxy checks and then connects to: the same
 * list, never a second lookup that could answer differently.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "egress.h"

static bool seen(const struct egr_ip *list, size_t n, const struct egr_ip *ip)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&list[i], ip, sizeof(*ip)) == 0)
			return true;
	return false;
}

int egr_resolve(const struct egr_host *host, struct egr_ip *out, size_t cap)
{
	if (cap == 0)
		return -EINVAL;
	if (host->type != EGR_HOST_NAME) {
		out[0] = host->ip;
		return 1;
	}
	/*
	 * No AI_ADDRCONFIG: it would make the resolver open a netlink socket, which the
	 * proxy's filter refuses; an address family the host cannot reach just fails to connect
	 * and the next address is tried.
	 */
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	int r = getaddrinfo(host->text, NULL, &hints, &res);
	switch (r) {
	case 0:
		break;
	case EAI_NONAME:
	case EAI_NODATA:
	case EAI_ADDRFAMILY:
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	default:
		return -EIO;
	}
	size_t n = 0;
	for (const struct addrinfo *ai = res; ai && n < cap; ai = ai->ai_next) {
		struct egr_ip ip;
		memset(&ip, 0, sizeof(ip));
		if (ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(struct sockaddr_in)) {
			const struct sockaddr_in *sin = (const struct sockaddr_in *)ai->ai_addr;
			ip.family = 4;
			memcpy(ip.b, &sin->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6 &&
			   ai->ai_addrlen >= sizeof(struct sockaddr_in6)) {
			const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ai->ai_addr;
			ip.family = 6;
			memcpy(ip.b, &sin6->sin6_addr, 16);
			egr_ip_canonical(&ip);
		} else {
			continue;
		}
		if (!seen(out, n, &ip))
			out[n++] = ip;
	}
	freeaddrinfo(res);
	return n ? (int)n : -ENOENT;
}
