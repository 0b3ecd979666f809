// SPDX-License-Identifier: GPL-2.0
/*
 * ftv: an encrypted layer-3 tunnel whose packets travel as segments of a
 * fake TCP connection. This file only brings the pieces up and down.
 */

#include "allowedips.h"
#include "crypto.h"
#include "device.h"
#include "faketcp.h"
#include "fec.h"
#include "fec_code.h"
#include "flow.h"
#include "join.h"
#include "netlink.h"
#include "noise.h"
#include "queue.h"
#include "reorder.h"
#include "replay.h"
#include "segment.h"
#include "shape.h"
#include "token.h"

#include <linux/ftv.h>
#include <linux/module.h>
#include <net/rtnetlink.h>

static int __init ftv_selftests(void)
{
#ifdef DEBUG
	if (!ftv_allowedips_selftest() || !ftv_replay_selftest() ||
	    !ftv_faketcp_selftest() || !ftv_token_selftest() ||
	    !ftv_fec_code_selftest() || !ftv_shape_selftest() ||
	    !ftv_segment_selftest() || !ftv_join_selftest() ||
	    !ftv_reorder_selftest() || !ftv_flow_selftest() ||
	    !ftv_fec_loss_selftest()) {
		pr_err("self-tests failed\n");
		return -ENOTRECOVERABLE;
	}
#endif
	return 0;
}

static int __init ftv_mod_init(void)
{
	int ret;

	ret = ftv_allowedips_slab_init();
	if (ret)
		return ret;
	ret = ftv_fec_code_init();
	if (ret)
		goto err_allowedips;
	ret = ftv_selftests();
	if (ret)
		goto err_fec;
	ret = ftv_noise_init();
	if (ret)
		goto err_fec;
	ret = ftv_crypto_init();
	if (ret)
		goto err_fec;
	ret = ftv_queue_init();
	if (ret)
		goto err_crypto;
	ret = ftv_device_init();
	if (ret)
		goto err_queue;
	ret = ftv_genetlink_init();
	if (ret)
		goto err_device;
	pr_info("fake-TCP tunnel %s loaded\n", FTV_VERSION);
	return 0;

err_device:
	ftv_device_uninit();
err_queue:
	ftv_queue_uninit();
err_crypto:
	ftv_crypto_uninit();
err_fec:
	ftv_fec_code_uninit();
err_allowedips:
	ftv_allowedips_slab_uninit();
	return ret;
}

static void __exit ftv_mod_exit(void)
{
	ftv_genetlink_uninit();
	ftv_device_uninit();
	ftv_queue_uninit();
	ftv_crypto_uninit();
	ftv_fec_code_uninit();
	ftv_allowedips_slab_uninit();
}

module_init(ftv_mod_init);
module_exit(ftv_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Encrypted layer-3 tunnel over fake TCP");
MODULE_VERSION(FTV_VERSION);
MODULE_ALIAS_RTNL_LINK(KBUILD_MODNAME);
MODULE_ALIAS_GENL_FAMILY(FTV_GENL_NAME);
