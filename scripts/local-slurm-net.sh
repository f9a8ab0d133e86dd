# Network of the multi-host local Slurm cluster (LOCAL_SLURM_NODES > 1); sourced by
# local-slurm-start.sh and local-slurm-stop.sh, not run on its own.
#
# One network namespace per compute host, each with a veth pair whose outer end sits on a
# bridge in the root namespace; the bridge has the controller's address. Addresses come from
# one private /24 and exist only on that bridge and inside those namespaces; the namespaces
# get no default route, so their traffic stays among the hosts, the bridge and loopback.
# An optional token-bucket limit on each host's outer veth slows traffic between hosts
# (each transfer from one host to another leaves the bridge through the receiver's veth);
# traffic inside a host goes over its own loopback and is not limited.
#
# Everything created is written to $NET_MANIFEST, one line per object, before it is
# created; network_down removes exactly the objects listed there, in reverse order.
# Needs: log, die (from the sourcing script), $STATE.

NET_MANIFEST=$STATE/network.list
NET_BRIDGE=dlperfbr0
NET_PREFIX=10.213.57        # private (RFC 1918) /24 of the bridge and the hosts
NET_BRIDGE_ADDR=$NET_PREFIX.1
NET_NODE_PREFIX=dlnode      # host names: dlnode1, dlnode2, ...
NET_HOSTS_MARK='# local-slurm-start.sh multi-host cluster'

net_node_name() { echo "$NET_NODE_PREFIX$1"; }          # index (1-based) -> host name
net_node_addr() { echo "$NET_PREFIX.$((10 + $1))"; }    # index -> address
net_veth() { echo "dlperfv$1"; }                        # index -> outer veth (root namespace)

net_record() { printf '%s\n' "$*" >>"$NET_MANIFEST"; }

# Lines of /etc/hosts without ours. /etc/hosts is rewritten in place (truncate + write),
# never replaced, since it may be a bind mount.
net_hosts_without_ours() { grep -vF -- "$NET_HOSTS_MARK" /etc/hosts || true; }

# The token-bucket limit of each host's link: $1 = Mbit/s, empty = none.
net_apply_limit() {
  local mbit=$1 i veth burst
  for ((i = 1; i <= NODES; i++)); do
    veth=$(net_veth "$i")
    if [[ -z $mbit ]]; then
      tc qdisc del dev "$veth" root 2>/dev/null || true
      continue
    fi
    # 10 ms of traffic at the rate (at least 4 KiB), so the limit holds at any rate.
    burst=$((mbit * 1250))
    ((burst >= 4096)) || burst=4096
    tc qdisc replace dev "$veth" root tbf rate "${mbit}mbit" burst "$burst" latency 50ms ||
      die "tc could not limit $veth to $mbit Mbit/s (the kernel needs the tbf qdisc)"
  done
  printf '%s\n' "$mbit" >"$STATE/network.limit"
}

# Build the bridge, the namespaces and their links for $NODES hosts (no-op if the
# recorded network has the same hosts), then apply the link limit $LINK_MBIT.
network_up() {
  local i ns addr veth want have
  want="nodes=$NODES prefix=$NET_PREFIX"
  have=$(cat "$STATE/network.shape" 2>/dev/null || true)
  if [[ -s $NET_MANIFEST && $have == "$want" ]] && ip link show "$NET_BRIDGE" >/dev/null 2>&1; then
    net_apply_limit "$LINK_MBIT"
    return 0
  fi
  network_down
  ip link show "$NET_BRIDGE" >/dev/null 2>&1 &&
    die "a link named $NET_BRIDGE exists but was not created by this script; remove it or stop what made it"
  for ((i = 1; i <= NODES; i++)); do
    ns=$(net_node_name "$i")
    ip netns list | grep -qw -- "^$ns" &&
      die "a network namespace named $ns exists but was not created by this script; remove it (ip netns del $ns) or stop what made it"
  done
  : >"$NET_MANIFEST"
  net_record bridge "$NET_BRIDGE"
  ip link add "$NET_BRIDGE" type bridge
  # No IPv6 link-local addresses either: the links carry only the addresses given here.
  ip link set dev "$NET_BRIDGE" addrgenmode none
  ip addr add "$NET_BRIDGE_ADDR/24" dev "$NET_BRIDGE"
  ip link set "$NET_BRIDGE" up
  local hosts_lines=""
  for ((i = 1; i <= NODES; i++)); do
    ns=$(net_node_name "$i")
    addr=$(net_node_addr "$i")
    veth=$(net_veth "$i")
    net_record netns "$ns"
    ip netns add "$ns"
    net_record link "$veth"
    ip link add "$veth" type veth peer name "${veth}p"
    ip link set dev "$veth" addrgenmode none
    ip link set dev "${veth}p" addrgenmode none
    ip link set "${veth}p" netns "$ns"
    ip -n "$ns" link set "${veth}p" name eth0
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip link set "$veth" master "$NET_BRIDGE"
    ip link set "$veth" up
    hosts_lines+="$addr $ns $NET_HOSTS_MARK"$'\n'
  done
  net_record hosts
  local kept
  kept=$(net_hosts_without_ours)
  printf '%s\n%s' "$kept" "$hosts_lines" >/etc/hosts
  printf '%s\n' "$want" >"$STATE/network.shape"
  log "network: bridge $NET_BRIDGE ($NET_BRIDGE_ADDR), hosts $(for ((i = 1; i <= NODES; i++)); do printf '%s=%s ' "$(net_node_name "$i")" "$(net_node_addr "$i")"; done)"
  net_apply_limit "$LINK_MBIT"
}

# Remove what $NET_MANIFEST lists (and nothing else), newest first.
network_down() {
  [[ -f $NET_MANIFEST ]] || return 0
  local kind name kept
  while read -r kind name; do
    case $kind in
      hosts)
        kept=$(net_hosts_without_ours)
        printf '%s\n' "$kept" >/etc/hosts
        ;;
      link) ip link del "$name" 2>/dev/null || true ;; # also removes the peer inside the namespace
      netns) ip netns del "$name" 2>/dev/null || true ;;
      bridge) ip link del "$name" 2>/dev/null || true ;;
      *) log "network: unknown entry '$kind $name' in $NET_MANIFEST; skipped" ;;
    esac
  done < <(tac "$NET_MANIFEST")
  rm -f "$NET_MANIFEST" "$STATE/network.shape" "$STATE/network.limit"
  log "network: removed the hosts' namespaces, links, bridge and host names"
}
