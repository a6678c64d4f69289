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

/* The kernel gives every network namespace's lo this index (LOOPBACK_IFINDEX). */
#define SBX_LOOPBACK_IFINDEX 1

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

	/*
	 * A new network namespace's loopback device is always ifindex 1, so the change names it
	 * directly instead of asking the kernel for it first (one round trip fewer). Were it
	 * missing, the change fails with ENODEV.
	 */
	_cleanup_(rtnl_link_putp) struct rtnl_link *lo = rtnl_link_alloc();
	if (!lo)
		return -ENOMEM;
	rtnl_link_set_ifindex(lo, SBX_LOOPBACK_IFINDEX);

	_cleanup_(rtnl_link_putp) struct rtnl_link *change = rtnl_link_alloc();
	if (!change)
		return -ENOMEM;
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, lo, change, 0);
	if (r < 0)
		return nl_to_errno(r);
	return 0;
}
