/* SPDX-License-Identifier: MIT */
/*
 * Network namespace set-up through rtnetlink (libnl-route-3): only lo, and it is up.
 */
#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "cleanup.h"
#include "sandbox.h"

DEFINE_CLEANUP(struct nl_sock *, nl_socket_free)
DEFINE_CLEANUP(struct rtnl_link *, rtnl_link_put)

/* libnl reports its own error numbers; narrow them to one errno. */
static int nl_to_errno(int nlerr)
{
	switch (-nlerr) {
	case NLE_PERM:
		return -EPERM;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OBJ_NOTFOUND:
	case NLE_NODEV:
		return -ENODEV;
	default:
		return -EIO;
	}
}

int sbx_net_lo_up(void)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	int r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0)
		return nl_to_errno(r);

	_cleanup_(rtnl_link_putp) struct rtnl_link *lo = NULL;
	r = rtnl_link_get_kernel(sk, 0, "lo", &lo);
	if (r < 0)
		return nl_to_errno(r);

	_cleanup_(rtnl_link_putp) struct rtnl_link *change = rtnl_link_alloc();
	if (!change)
		return -ENOMEM;
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, lo, change, 0);
	if (r < 0)
		return nl_to_errno(r);
	return 0;
}
