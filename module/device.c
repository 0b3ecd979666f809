// SPDX-License-Identifier: GPL-2.0
/*
 * The ftv net_device: a layer-3 point-to-point interface with no link-layer
 * header. Its outer segments live in the namespace it was created in, which
 * may differ from the one it is moved to; the receive hook is registered in
 * that creating namespace while it has at least one ftv device.
 */

#include "device.h"
#include "log.h"
#include "conn.h"
#include "peer.h"
#include "listen.h"
#include "open.h"
#include "receive.h"
#include "send.h"

#include <linux/if_arp.h>
#include <linux/moduleparam.h>
#include <linux/icmp.h>
#include <linux/ip.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/rtnetlink.h>
#include <net/icmp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/rtnetlink.h>

struct workqueue_struct *ftv_wq;

/**
 * struct ftv_net - per-namespace state, for the namespaces outer traffic
 *	lives in
 * @devices: ftv devices created here (RCU readers in the hook; RTNL)
 * @hooks: the receive hooks, registered while @devices is not empty
 */
struct ftv_net {
	struct list_head devices;
	struct nf_hook_ops hooks[2];
};

static unsigned int ftv_net_id __read_mostly;

static struct ftv_net *ftv_net(struct net *net)
{
	return net_generic(net, ftv_net_id);
}

static const struct device_type ftv_device_type = { .name = KBUILD_MODNAME };

/* Checksums are finished and superpackets split in our transmit path,
 * before sealing, so the stack may leave both to us.
 */
#define FTV_FEATURES (NETIF_F_HW_CSUM | NETIF_F_RXCSUM | NETIF_F_SG | \
		      NETIF_F_GSO_SOFTWARE | NETIF_F_HIGHDMA)

/**
 * ftv_device_is_ftv - whether @dev is an ftv device
 * @dev: any net_device
 *
 * Return: true for ftv devices.
 */
bool ftv_device_is_ftv(const struct net_device *dev)
{
	return dev->rtnl_link_ops && !strcmp(dev->rtnl_link_ops->kind,
					     KBUILD_MODNAME);
}

/**
 * ftv_device_copy_identity - snapshot the device's static key pair
 * @fdev: the device
 * @out: receives the keys; the caller zeroes it after use
 *
 * Return: false if no private key is set.
 */
bool ftv_device_copy_identity(struct ftv_device *fdev,
			      struct ftv_identity *out)
{
	struct ftv_identity *identity;
	bool ok = false;

	rcu_read_lock();
	identity = rcu_dereference(fdev->identity);
	if (identity) {
		memcpy(out, identity, sizeof(*out));
		ok = true;
	}
	rcu_read_unlock();
	return ok;
}

static void identity_free_rcu(struct rcu_head *rcu)
{
	kfree_sensitive(container_of(rcu, struct ftv_identity, rcu));
}

/**
 * ftv_identity_new - a static key pair from a private key
 * @private_key: the private key; all zero means none
 *
 * The part of replacing a device's key that can fail, done before
 * anything is changed.
 *
 * Return: the identity, NULL for none, or ERR_PTR(-ENOMEM or -EINVAL).
 */
struct ftv_identity *ftv_identity_new(const u8 private_key[FTV_KEY_SIZE])
{
	static const u8 no_psk[FTV_KEY_SIZE];
	struct ftv_identity *identity;

	if (!memchr_inv(private_key, 0, FTV_KEY_SIZE))
		return NULL;
	identity = kzalloc(sizeof(*identity), GFP_KERNEL);
	if (!identity)
		return ERR_PTR(-ENOMEM);
	memcpy(identity->private_key, private_key, FTV_KEY_SIZE);
	curve25519_clamp_secret(identity->private_key);
	if (!curve25519_generate_public(identity->public_key,
					identity->private_key)) {
		kfree_sensitive(identity);
		return ERR_PTR(-EINVAL);
	}
	ftv_token_key(&identity->token_key, identity->public_key, no_psk);
	return identity;
}

/**
 * ftv_device_set_identity - replace the static key pair
 * @fdev: the device
 * @identity: from ftv_identity_new(), taken over; NULL removes the key
 *
 * Sessions made with the old key end: they authenticated an identity the
 * device no longer has.
 *
 * Return: 0, or -ENOMEM: the key is replaced, but the SYN tokens of some
 * peers with a pre-shared key could not be renewed.
 */
int ftv_device_set_identity(struct ftv_device *fdev,
			    struct ftv_identity *identity)
{
	struct ftv_identity *old;
	struct ftv_peer *peer;

	lockdep_assert_held(&fdev->device_update_lock);
	old = rcu_replace_pointer(fdev->identity, identity,
				  lockdep_is_held(&fdev->device_update_lock));
	if (old && identity &&
	    !memcmp(old->private_key, identity->private_key, FTV_KEY_SIZE)) {
		call_rcu(&old->rcu, identity_free_rcu);
		return 0;
	}
	if (old)
		call_rcu(&old->rcu, identity_free_rcu);
	list_for_each_entry(peer, &fdev->peer_list, peer_list)
		ftv_peer_reset_session(peer);
	return ftv_token_update_all(fdev);
}

/**
 * ftv_device_serial_cpu - the CPU a new connection sends from
 * @fdev: the device
 *
 * Connections take the online CPUs in turn, so that many peers' sending
 * and delivery spread over them.
 *
 * Return: a CPU number.
 */
int ftv_device_serial_cpu(struct ftv_device *fdev)
{
	unsigned int n = (unsigned int)atomic_inc_return(&fdev->next_cpu) %
			 num_online_cpus();
	int cpu;

	for_each_online_cpu(cpu)
		if (!n--)
			return cpu;
	return cpumask_first(cpu_online_mask);
}

/**
 * ftv_device_port_in_use - whether another device listens on @port
 * @net: the creating namespace
 * @port: TCP port, host order
 * @except: device to ignore (the one being configured)
 *
 * Return: true if taken.
 */
bool ftv_device_port_in_use(struct net *net, u16 port,
			    const struct ftv_device *except)
{
	struct ftv_device *fdev;

	ASSERT_RTNL();
	list_for_each_entry(fdev, &ftv_net(net)->devices, device_list)
		if (fdev != except && fdev->listen_port == port)
			return true;
	return false;
}

static bool pull_daddr(struct sk_buff *skb, int *family, const void **daddr)
{
	if (skb->protocol == htons(ETH_P_IP) &&
	    pskb_network_may_pull(skb, sizeof(struct iphdr))) {
		*family = AF_INET;
		*daddr = &ip_hdr(skb)->daddr;
		return true;
	}
	if (skb->protocol == htons(ETH_P_IPV6) &&
	    pskb_network_may_pull(skb, sizeof(struct ipv6hdr))) {
		*family = AF_INET6;
		*daddr = &ipv6_hdr(skb)->daddr;
		return true;
	}
	return false;
}

static void no_route(struct sk_buff *skb, int family)
{
	if (family == AF_INET)
		icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_HOST_UNREACH, 0);
	else
		icmpv6_ndo_send(skb, ICMPV6_DEST_UNREACH, ICMPV6_ADDR_UNREACH,
				0);
}

/*
 * What a local TCP sender may keep queued on this host, as a shift of its
 * pacing rate: 7 is about 8 ms of it, where TCP's own default (10) is about
 * one. A packet spends that and more in ftv before it leaves (its crypt
 * job, then the connection's order), and TCP small queues counts it as
 * queued all the while; held to a millisecond, four streams over a 200 ms
 * path kept half their congestion window in flight, which then stopped
 * growing (not limited by it), and carried 120 Mbit/s where 8 ms of
 * budget carries 150. It also sizes the sender's TSO bursts (a
 * millisecond of a 50 Mbit/s stream is five segments), so fewer, larger
 * jobs. mac80211 raises the same budget to the same 7 for Wi-Fi
 * aggregation; ftv_xmit() sets it on each packet's sending socket, so
 * only traffic that ftv carries gets it.
 */
#define FTV_PACING_SHIFT 7

static netdev_tx_t ftv_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct ftv_device *fdev = netdev_priv(dev);
	const void *daddr;
	struct ftv_peer *peer;
	int family;

	if (unlikely(!pull_daddr(skb, &family, &daddr)))
		goto err;
	rcu_read_lock_bh();
	peer = ftv_allowedips_lookup(&fdev->allowedips, family, daddr);
	if (unlikely(!peer)) {
		rcu_read_unlock_bh();
		no_route(skb, family);
		goto err;
	}
	sk_pacing_shift_update(skb->sk, FTV_PACING_SHIFT);
	/* skb passed on: sent or staged, and freed by whoever ends it. A
	 * GSO superpacket stays whole until a crypt worker splits it.
	 */
	ftv_send_packet(peer, skb);
	rcu_read_unlock_bh();
	return NETDEV_TX_OK;

err:
	DEV_STATS_INC(dev, tx_errors);
	kfree_skb(skb);
	return NETDEV_TX_OK;
}

static int ftv_open(struct net_device *dev)
{
	return 0;
}

static int ftv_stop(struct net_device *dev)
{
	return 0;
}

static const struct net_device_ops ftv_netdev_ops = {
	.ndo_open = ftv_open,
	.ndo_stop = ftv_stop,
	.ndo_start_xmit = ftv_xmit,
	.ndo_get_stats64 = dev_get_tstats64,
};

/* Kill every connection and wait until all of them are freed. */
static void close_conns(struct ftv_device *fdev)
{
	struct ftv_peer *peer;

	ftv_conn_close_device(fdev);
	mutex_lock(&fdev->device_update_lock);
	list_for_each_entry(peer, &fdev->peer_list, peer_list)
		ftv_peer_reset_session(peer);
	mutex_unlock(&fdev->device_update_lock);
	ftv_conn_wait_all(fdev);
}

static void ftv_destruct(struct net_device *dev)
{
	struct ftv_device *fdev = netdev_priv(dev);

	ftv_conn_close_device(fdev);
	mutex_lock(&fdev->device_update_lock);
	ftv_peer_remove_all(fdev);
	mutex_unlock(&fdev->device_update_lock);
	cancel_work_sync(&fdev->handshake_work);
	cancel_delayed_work_sync(&fdev->gc_work);
	skb_queue_purge(&fdev->handshake_queue);
	/* Connections hold their peers; the last ones go a grace period
	 * after their peers were removed.
	 */
	ftv_conn_wait_all(fdev);
	/* No connection, so no job left anywhere. */
	ftv_crypt_queue_uninit(&fdev->encrypt_queue);
	ftv_crypt_queue_uninit(&fdev->decrypt_queue);
	ftv_cells_uninit(fdev->cells);
	ftv_conn_table_uninit(fdev);
	kfree_sensitive(rcu_dereference_protected(fdev->identity, true));
	ftv_token_uninit(fdev);
	free_percpu(dev->tstats);
	ftv_dev_dbg(dev, "device destroyed\n");
}

static void ftv_setup(struct net_device *dev)
{
	struct ftv_device *fdev = netdev_priv(dev);

	dev->netdev_ops = &ftv_netdev_ops;
	dev->header_ops = NULL;
	dev->hard_header_len = 0;
	dev->addr_len = 0;
	dev->needed_headroom = FTV_SEND_HEADROOM;
	dev->needed_tailroom = FTV_TAG_SIZE;
	dev->type = ARPHRD_NONE;
	dev->flags = IFF_POINTOPOINT | IFF_NOARP;
	dev->priv_flags |= IFF_NO_QUEUE;
	dev->features |= FTV_FEATURES;
	dev->hw_features |= FTV_FEATURES;
	dev->hw_enc_features |= FTV_FEATURES;
	ftv_compat_set_lltx(dev);
	/* Keep the inner route on packets we are given: ICMP errors and
	 * path MTU updates for their senders need it.
	 */
	netif_keep_dst(dev);
	dev->mtu = FTV_DEFAULT_MTU;
	dev->min_mtu = IPV4_MIN_MTU;
	dev->max_mtu = IP_MAX_MTU - FTV_OUTER_MAX_HLEN - FTV_DATA_OVERHEAD;
	SET_NETDEV_DEVTYPE(dev, &ftv_device_type);
	memset(fdev, 0, sizeof(*fdev));
	fdev->dev = dev;
}

static void gc_work(struct work_struct *work)
{
	struct ftv_device *fdev = container_of(to_delayed_work(work),
					       struct ftv_device, gc_work);

	ftv_conn_gc(fdev);
	/* Every second: a join that does not come up goes within a second
	 * of its timeout (it gets nothing meanwhile). The walks stop at the
	 * first connection not due.
	 */
	queue_delayed_work(ftv_wq, &fdev->gc_work, HZ);
}

static int register_hooks(struct net *net, struct ftv_net *fnet)
{
	static const struct nf_hook_ops templates[2] = {
		{
			.hook = ftv_receive_hook,
			.pf = NFPROTO_IPV4,
			.hooknum = NF_INET_PRE_ROUTING,
			/* Before defragmentation and conntrack: our segments
			 * are never fragments, and conntrack must not see
			 * half of a connection.
			 */
			.priority = NF_IP_PRI_CONNTRACK_DEFRAG - 1,
		},
		{
			.hook = ftv_receive_hook,
			.pf = NFPROTO_IPV6,
			.hooknum = NF_INET_PRE_ROUTING,
			.priority = NF_IP6_PRI_CONNTRACK_DEFRAG - 1,
		},
	};

	memcpy(fnet->hooks, templates, sizeof(templates));
	fnet->hooks[0].priv = &fnet->devices;
	fnet->hooks[1].priv = &fnet->devices;
	return nf_register_net_hooks(net, fnet->hooks, ARRAY_SIZE(fnet->hooks));
}

/* Join the creating namespace's device list; the first one in registers
 * the receive hooks.
 */
static int attach_to_net(struct ftv_device *fdev, struct net *net)
{
	struct ftv_net *fnet = ftv_net(net);
	int ret;

	ASSERT_RTNL();
	if (list_empty(&fnet->devices)) {
		ret = register_hooks(net, fnet);
		if (ret)
			return ret;
	}
	fdev->creating_net = net;
	list_add_tail_rcu(&fdev->device_list, &fnet->devices);
	return 0;
}

static void detach_from_net(struct ftv_device *fdev)
{
	struct net *net = fdev->creating_net;
	struct ftv_net *fnet;

	ASSERT_RTNL();
	if (!net)
		return;
	fnet = ftv_net(net);
	list_del_rcu(&fdev->device_list);
	WRITE_ONCE(fdev->creating_net, NULL);
	if (list_empty(&fnet->devices))
		nf_unregister_net_hooks(net, fnet->hooks,
					ARRAY_SIZE(fnet->hooks));
}

/**
 * ftv_device_find_owner - the device, and connection, a segment is for
 * @devices: the creating namespace's ftv devices (RCU list)
 * @tuple: the segment's tuple, seen from this side
 * @fdev: receives the device
 * @conn: receives the connection, or NULL if the segment is for the
 *	device's listen port and no connection
 *
 * Called under RCU; the connection is only good while it lasts.
 *
 * Return: whether a device of @devices owns the tuple.
 */
bool ftv_device_find_owner(struct list_head *devices,
			   const struct ftv_tuple *tuple,
			   struct ftv_device **fdev, struct ftv_conn **conn)
{
	struct ftv_device *dev;
	u16 port;

	list_for_each_entry_rcu(dev, devices, device_list) {
		*conn = ftv_conn_lookup(dev, tuple);
		port = READ_ONCE(dev->listen_port);
		if (*conn || (port && tuple->local_port == htons(port))) {
			*fdev = dev;
			return true;
		}
	}
	return false;
}

/* Generations of every device come from here: none repeats (2^64
 * changes would take centuries), so a dump's cursor cannot mistake
 * another device, or this one's peer list after a change, for the list it
 * was taken from (netlink.c).
 */
static atomic64_t ftv_generations = ATOMIC64_INIT(0);

#ifdef DEBUG
/* Debug builds let a test move the counter, to show that a dump's cursor
 * survives what 2^32 requests would do to a 32-bit one.
 */
static int generation_set(const char *val, const struct kernel_param *kp)
{
	u64 v;
	int ret = kstrtou64(val, 0, &v);

	if (!ret)
		atomic64_set(&ftv_generations, v);
	return ret;
}

static int generation_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", (u64)atomic64_read(&ftv_generations));
}

static const struct kernel_param_ops generation_ops = {
	.set = generation_set,
	.get = generation_get,
};
module_param_cb(generation, &generation_ops, NULL, 0644);
MODULE_PARM_DESC(generation, "The last configuration generation given out");
#endif

/**
 * ftv_device_changed - give @fdev's configuration a new generation
 * @fdev: the device
 *
 * Called on every change of the peer list and on configuration requests.
 */
void ftv_device_changed(struct ftv_device *fdev)
{
	lockdep_assert_held(&fdev->device_update_lock);
	fdev->generation = atomic64_inc_return(&ftv_generations);
}

static int init_private(struct ftv_device *fdev)
{
	struct net_device *dev = fdev->dev;
	int ret;

	mutex_init(&fdev->device_update_lock);
	INIT_LIST_HEAD(&fdev->peer_list);
	INIT_LIST_HEAD(&fdev->device_list);
	hash_init(fdev->peer_hashtable);
	fdev->generation = atomic64_inc_return(&ftv_generations);
	fdev->shape = true;
	ftv_allowedips_init(&fdev->allowedips, &fdev->device_update_lock);
	get_random_bytes(&fdev->cookie_key, sizeof(fdev->cookie_key));
	ret = ftv_conn_table_init(fdev);
	if (ret)
		return ret;
	ret = ftv_token_init(fdev);
	if (ret)
		goto err_conns;
	ftv_ratelimiter_init(&fdev->ratelimiter);
	skb_queue_head_init(&fdev->handshake_queue);
	INIT_WORK(&fdev->handshake_work, ftv_listen_handshake_worker);
	INIT_DELAYED_WORK(&fdev->gc_work, gc_work);
	dev->tstats = netdev_alloc_pcpu_stats(struct pcpu_sw_netstats);
	if (!dev->tstats) {
		ret = -ENOMEM;
		goto err_tokens;
	}
	ret = ftv_crypt_queue_init(&fdev->encrypt_queue, ftv_send_crypt,
				   ftv_send_serial);
	if (ret)
		goto err_stats;
	ret = ftv_crypt_queue_init(&fdev->decrypt_queue, ftv_open_crypt,
				   ftv_open_serial);
	if (ret)
		goto err_encrypt;
	ret = ftv_cells_init(&fdev->cells, dev);
	if (ret)
		goto err_decrypt;
	return 0;

err_decrypt:
	ftv_crypt_queue_uninit(&fdev->decrypt_queue);
err_encrypt:
	ftv_crypt_queue_uninit(&fdev->encrypt_queue);
err_stats:
	free_percpu(dev->tstats);
err_tokens:
	ftv_token_uninit(fdev);
err_conns:
	ftv_conn_table_uninit(fdev);
	return ret;
}

/* ftv takes no link attributes: what it needs comes over genetlink. */
static int create_link(struct net *src_net, struct net_device *dev,
		       struct netlink_ext_ack *extack)
{
	struct ftv_device *fdev = netdev_priv(dev);
	int ret;

	ret = init_private(fdev);
	if (ret)
		return ret;
	ret = register_netdevice(dev);
	if (ret)
		goto err_private;
	/* From here on the destructor says "destroyed", whatever fails. */
	ftv_dev_dbg(dev, "device created\n");
	ret = attach_to_net(fdev, src_net);
	if (ret)
		goto err_unregister;
	/* Set only now, so that a failed register_netdevice() does not
	 * call it for us on top of our own unwinding.
	 */
	dev->priv_destructor = ftv_destruct;
	dev->needs_free_netdev = true;
	queue_delayed_work(ftv_wq, &fdev->gc_work, HZ);
	return 0;

err_unregister:
	/* Registered: the destructor frees what init_private() made. */
	dev->priv_destructor = ftv_destruct;
	dev->needs_free_netdev = true;
	unregister_netdevice(dev);
	return ret;
err_private:
	ftv_cells_uninit(fdev->cells);
	ftv_crypt_queue_uninit(&fdev->decrypt_queue);
	ftv_crypt_queue_uninit(&fdev->encrypt_queue);
	free_percpu(dev->tstats);
	ftv_token_uninit(fdev);
	ftv_conn_table_uninit(fdev);
	return ret;
}

FTV_COMPAT_NEWLINK(ftv_newlink, create_link)

static void ftv_dellink(struct net_device *dev, struct list_head *head)
{
	detach_from_net(netdev_priv(dev));
	unregister_netdevice_queue(dev, head);
}

static struct rtnl_link_ops ftv_link_ops __read_mostly = {
	.kind = KBUILD_MODNAME,
	.priv_size = sizeof(struct ftv_device),
	.setup = ftv_setup,
	.newlink = ftv_newlink,
	.dellink = ftv_dellink,
};

static int __net_init ftv_net_init(struct net *net)
{
	INIT_LIST_HEAD(&ftv_net(net)->devices);
	return 0;
}

/*
 * The creating namespace is going away: devices that were moved elsewhere
 * outlive it but can no longer send or receive outer segments. Their
 * connections hold sockets and routes of the namespace, so they go now,
 * before it does.
 */
static void __net_exit ftv_net_pre_exit(struct net *net)
{
	struct ftv_device *fdev, *tmp;
	LIST_HEAD(closing);

	rtnl_lock();
	list_for_each_entry_safe(fdev, tmp, &ftv_net(net)->devices,
				 device_list) {
		detach_from_net(fdev);
		dev_hold(fdev->dev);
		list_add_tail(&fdev->close_entry, &closing);
	}
	rtnl_unlock();
	list_for_each_entry_safe(fdev, tmp, &closing, close_entry) {
		list_del(&fdev->close_entry);
		close_conns(fdev);
		dev_put(fdev->dev);
	}
}

static struct pernet_operations ftv_net_ops = {
	.init = ftv_net_init,
	.pre_exit = ftv_net_pre_exit,
	.id = &ftv_net_id,
	.size = sizeof(struct ftv_net),
};

/**
 * ftv_device_init - register the link type and per-namespace state
 *
 * Return: 0 or a negative errno.
 */
int __init ftv_device_init(void)
{
	int ret;

	ftv_wq = alloc_workqueue("ftv", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!ftv_wq)
		return -ENOMEM;
	ret = register_pernet_device(&ftv_net_ops);
	if (ret)
		goto err_wq;
	ret = rtnl_link_register(&ftv_link_ops);
	if (ret)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_device(&ftv_net_ops);
err_wq:
	destroy_workqueue(ftv_wq);
	return ret;
}

/**
 * ftv_device_uninit - undo ftv_device_init(); removes every device
 */
void ftv_device_uninit(void)
{
	rtnl_link_unregister(&ftv_link_ops);
	unregister_pernet_device(&ftv_net_ops);
	/* Connections are freed by RCU callbacks that queue work. */
	rcu_barrier();
	destroy_workqueue(ftv_wq);
}
