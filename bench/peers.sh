#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The many-peers section of make bench (BENCH_PEERS=N), sourced by
# bench/guest.sh: one device with N peers, each a random public key with
# one /32, for ftv and for WireGuard in the same boot, in turn, each in a
# namespace of its own. Measured for each:
#
#   peers_setconf  seconds for setconf of the whole file
#   peers_show     seconds for ftvctl show DEV --json, wg show DEV dump
#   peers_mem      kernel memory (unreclaimable slab, vmalloc, per-CPU)
#                  per peer, in KB, from /proc/meminfo before and after
#   peers_peerdel  seconds to remove one peer among them
#   peers_linkdel  seconds for ip link del of the device; for WireGuard
#                  only up to BENCH_PEERS_WG_LINKDEL peers (20000 by
#                  default): it removes each peer after a grace period of
#                  its own, under RTNL (1754 s at 10^5 on 2026-11-27), and
#                  its device is left to the end of the VM above that
#   peers_ping     for ftv, 1 if a ping through a real peer among the N
#                  got through (the real peer is in a second namespace)
#
# Needs from guest.sh: say, SAMPLES, LOGS and selftests/lib.sh.

# peers_conf FILE N : N peers after what FILE holds (the same INI for
# ftvctl and wg)
peers_conf()
{
	"$PYTHON" - "$1" "$2" <<'EOF'
import base64, os, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "a") as f:
    for i in range(n):
        key = base64.b64encode(os.urandom(32)).decode()
        # 10.64.0.0 to 10.127.255.255: 4 million /32s, none of them
        # the real peer's
        a = 64 + (i >> 16)
        f.write(f"[Peer]\nPublicKey = {key}\n"
                f"AllowedIPs = 10.{a}.{(i >> 8) & 255}.{i & 255}/32\n\n")
EOF
}

# kernel_kb : unreclaimable slab + vmalloc + per-CPU memory, in KB
kernel_kb()
{
	awk '/^(SUnreclaim|VmallocUsed|Percpu):/ { kb += $2 } END { print kb }' \
		/proc/meminfo
}

# timed VAR CMD... : run CMD, its wall time in seconds into VAR
timed()
{
	local var=$1 t0 rc
	shift
	t0=$EPOCHREALTIME
	"$@"
	rc=$?
	printf -v "$var" '%s' "$(awk -v a="$t0" -v b="$EPOCHREALTIME" \
		'BEGIN { printf "%.3f", b - a }')"
	return "$rc"
}

peers_sample()	# peers_sample CONFIG TEST METRIC VALUE
{
	printf '{"repeat":%d,"config":"%s","test":"%s","rc":0,"%s":%s}\n' \
		"$PEERS_REPEAT" "$1" "$2" "$3" "$4" >>"$SAMPLES"
}

# peers_one KIND N : the measurements for KIND (ftv or wireguard)
peers_one()
{
	local kind=$1 n=$2 conf key t mem0 mem1 ok=0 dev shown want

	ns_create PA PB || return 1
	conf=$LOGS/peers-$kind.conf
	if [ "$kind" = ftv ]; then
		dev=ftv0
		ftv_keypair pa && ftv_keypair pb || return 1
		key=$(cat "$FTV_TMP/pa.key")
		printf '[Interface]\nPrivateKey = %s\nListenPort = %d\n\n' \
			"$key" "$FTV_PORT" >"$conf"
		# The real peer first: B, reached over a veth pair.
		printf '[Peer]\nPublicKey = %s\nAllowedIPs = 10.9.0.2/32\n\n' \
			"$(pubkey_of pb)" >>"$conf"
		veth_pair "$PA" veth0 "$PB" veth0 &&
			ip -n "$PA" addr add 10.0.0.1/24 dev veth0 &&
			ip -n "$PB" addr add 10.0.0.2/24 dev veth0 || return 1
		ip -n "$PA" link add name ftv0 type ftv &&
			ip -n "$PA" addr add 10.9.0.1/24 dev ftv0 &&
			ip -n "$PA" link set ftv0 up || return 1
		ip -n "$PB" link add name ftv0 type ftv &&
			ip -n "$PB" addr add 10.9.0.2/24 dev ftv0 &&
			ip -n "$PB" link set ftv0 up &&
			nsx "$PB" "$FTVCTL" set ftv0 private-key "$FTV_TMP/pb.key" \
				listen-port "$FTV_PORT" &&
			nsx "$PB" "$FTVCTL" peer add ftv0 "$(pubkey_of pa)" \
				endpoint "10.0.0.1:$FTV_PORT" allowed-ips 10.9.0.1/32 ||
			return 1
	else
		dev=wg0
		key=$(wg genkey)
		printf '[Interface]\nPrivateKey = %s\nListenPort = %d\n\n' \
			"$key" 51821 >"$conf"
		ip -n "$PA" link add name wg0 type wireguard || return 1
	fi
	peers_conf "$conf" "$n" || return 1

	sync
	mem0=$(kernel_kb)
	if [ "$kind" = ftv ]; then
		timed t nsx "$PA" "$FTVCTL" setconf ftv0 "$conf" \
			>"$LOGS/peers-$kind-setconf.log" 2>&1 || return 1
	else
		timed t nsx "$PA" wg setconf wg0 "$conf" \
			>"$LOGS/peers-$kind-setconf.log" 2>&1 || return 1
	fi
	mem1=$(kernel_kb)
	peers_sample "$kind" peers_setconf seconds "$t"
	peers_sample "$kind" peers_mem kb_per_peer \
		"$(awk -v a="$mem0" -v b="$mem1" -v n="$n" \
			'BEGIN { printf "%.3f", (b - a) / n }')"
	say "peers, $kind: setconf of $n peers $t s, $(awk -v a="$mem0" \
		-v b="$mem1" -v n="$n" 'BEGIN { printf "%.3f", (b - a) / n }') KB each"

	if [ "$kind" = ftv ]; then
		timed t nsx "$PA" "$FTVCTL" show ftv0 --json \
			>"$LOGS/peers-$kind-show" 2>&1 || return 1
	else
		timed t nsx "$PA" wg show wg0 dump \
			>"$LOGS/peers-$kind-show" 2>&1 || return 1
	fi
	peers_sample "$kind" peers_show seconds "$t"
	# Every peer once: ftvctl's JSON has one line per peer, wg's dump one
	# per peer after the interface's.
	if [ "$kind" = ftv ]; then
		shown=$(grep -c '^ *{"public_key"' "$LOGS/peers-$kind-show")
	else
		shown=$(($(wc -l <"$LOGS/peers-$kind-show") - 1))
	fi
	say "peers, $kind: show $t s, $(wc -c <"$LOGS/peers-$kind-show") bytes, $shown peers"
	want=$n
	[ "$kind" = ftv ] && want=$((n + 1))	# and the real peer
	[ "$shown" -eq "$want" ] ||
		say "peers, $kind: show listed $shown peers, not $want"

	if [ "$kind" = ftv ]; then
		# B knows A's endpoint and opens the connection.
		connect_ping "$PB" 10.9.0.1 60 && ok=1
		peers_sample "$kind" peers_ping ok "$ok"
		say "peers, ftv: a ping through the real peer among them: $ok"
	fi

	# One peer among them: not the real one.
	key=$(awk '/^PublicKey/ { n++; if (n == 2) { print $3; exit } }' "$conf")
	if [ "$kind" = ftv ]; then
		timed t nsx "$PA" "$FTVCTL" peer del ftv0 "$key" || return 1
	else
		timed t nsx "$PA" wg set wg0 peer "$key" remove || return 1
	fi
	peers_sample "$kind" peers_peerdel seconds "$t"

	if [ "$kind" = wireguard ] && [ "$n" -gt "${BENCH_PEERS_WG_LINKDEL:-20000}" ]; then
		say "peers, wireguard: one peer removed; the device is not deleted above ${BENCH_PEERS_WG_LINKDEL:-20000} peers"
		return 0
	fi
	timed t ip -n "$PA" link del "$dev" || return 1
	peers_sample "$kind" peers_linkdel seconds "$t"
	say "peers, $kind: one peer removed in the rest, link deleted in $t s"
	ip netns del "$PA"
	ip netns del "$PB"
}

# peers_bench N REPEATS : both kinds, alternating which goes first
peers_bench()
{
	local n=$1 repeats=$2 kind

	# A WireGuard device left undeleted keeps its namespace's name.
	if [ "$n" -gt "${BENCH_PEERS_WG_LINKDEL:-20000}" ] && [ "$repeats" -gt 1 ]; then
		say "peers: one repeat, not $repeats, above ${BENCH_PEERS_WG_LINKDEL:-20000} peers"
		repeats=1
	fi
	for ((PEERS_REPEAT = 1; PEERS_REPEAT <= repeats; PEERS_REPEAT++)); do
		for kind in $( ((PEERS_REPEAT % 2)) && echo "ftv wireguard" ||
			       echo "wireguard ftv"); do
			peers_one "$kind" "$n" ||
				say "peers, $kind: failed (logs in $LOGS)"
		done
	done
}
