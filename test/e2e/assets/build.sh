#!/usr/bin/env bash
# test/e2e/assets/build.sh
#
# Everything the e2e nodes run, built offline from the Go module proxy and
# Debian packages, and cached: the last line on stdout is the asset
# directory the e2e test reads (NODEBOOT_E2E_ASSETS).
#
#   bin/        kubeadm kubelet kube-proxy kube-controller-manager
#               kube-scheduler kube-apiserver kubectl etcd containerd
#               containerd-shim-runc-v2 ctr, the CNI plugins, flanneld,
#               coredns, pause
#   images/     OCI archives `ctr images import` reads, named under
#               $E2E_IMAGE_REPO (a reserved .invalid name: nothing can
#               ever be pulled): controlplane/ (kube-apiserver,
#               kube-controller-manager, kube-scheduler, etcd) and common/
#               (pause, kube-proxy, coredns, flannel, flannel-cni-plugin,
#               k8s-dns-node-cache, busybox)
#   rootfs/     a Debian bookworm node root: systemd, cloud-init,
#               containerd, runc, kubelet, kubeadm, kubectl, CNI plugins,
#               the units in node/ enabled. Nodes boot an overlay of it.
#
# Kubernetes is built the way ../shared/tools/envtest-assets.sh builds the
# envtest kube-apiserver (the same throwaway module, cgo and flags), so on a
# machine that built envtest's binaries the Go build cache already holds
# most of Kubernetes; kube-apiserver, kubectl and etcd are envtest's own.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/nodeboot-e2e. Each binary, image and
# the root carry a stamp of what made them; a warm run checks stamps only
# (seconds). Progress on stderr. Needs root (debootstrap, chroot).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
SHARED=$(cd "$REPO/../shared" && pwd)

K8S_VERSION=1.37.2
CONTAINERD_VERSION=2.4.2
CNI_VERSION=1.10.0
# flannel-io/cni-plugin is not served by the module proxy; its flannel
# plugin came from containernetworking/plugins, whose v0.9.1 still has it.
FLANNEL_CNI_SOURCE_VERSION=0.9.1
FLANNEL_CNI_IMAGE_TAG=v1.9.1-flannel1
FLANNEL_VERSION=0.28.4
COREDNS_VERSION=1.14.6
PAUSE_TAG=3.10.2
NODE_CACHE_TAG=1.26.4
BUSYBOX_TAG=e2e
E2E_IMAGE_REPO=${E2E_IMAGE_REPO:-e2e.invalid}

CACHE=${NODEBOOT_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodeboot-e2e}
OUT=$CACHE/v1
BIN=$OUT/bin
mkdir -p "$BIN" "$OUT/images/controlplane" "$OUT/images/common" "$CACHE/debs"

GO=$(command -v go || echo /usr/local/go/bin/go)
export GOWORK=off GO111MODULE=on
START=$SECONDS
log() { printf 'e2e-assets: [%4ds] %s\n' $((SECONDS - START)) "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root (debootstrap, chroot)"

exec 9>"$CACHE/.lock"
flock 9

WORK=$(mktemp -d /tmp/nodeboot-e2e-assets.XXXXXX)
cleanup() {
	local rc=$?
	[[ -n ${ROOTFS_PID:-} ]] && kill "$ROOTFS_PID" 2>/dev/null
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT

# stamp NAME RECIPE: true when NAME was built from RECIPE already.
fresh() { [[ -f "$OUT/.stamp.$1" && $(cat "$OUT/.stamp.$1") == "$2" ]]; }
stamp() { printf '%s' "$2" >"$OUT/.stamp.$1"; }

# --- the node root's Debian base (debootstrap; network bound, so it runs in
# the background while the compilers use the cores) ----------------------------
ROOT_PKGS=python3-cffi-backend,locales,systemd,systemd-sysv,dbus,cloud-init,iproute2,iptables,runc,ca-certificates,curl,wget,sudo,kmod,procps,netbase,busybox-static,python3,util-linux,mount,less
BASE_TAR=$CACHE/bookworm-$(printf '%s' "$ROOT_PKGS" | sha256sum | cut -c1-12).tar
mirror() {
	{ grep -hsE '^[[:space:]]*URIs:' /etc/apt/sources.list.d/*.sources | awk '{for(i=2;i<=NF;i++) print $i}' || true
		grep -hsE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
			sed -E 's/\[[^]]*\]//' | awk '{print $2}' || true
	} | { grep -v -- '-security' || true; } | { grep -E '^https?://' || true; } | head -1
}
build_base() {
	local m b=$WORK/base
	m=${DEBOOTSTRAP_MIRROR:-$(mirror)}
	[[ -n $m ]] || { echo "no Debian mirror in the apt sources; set DEBOOTSTRAP_MIRROR" >&2; return 1; }
	mkdir -p "$b"
	if ! debootstrap --variant=minbase --include="$ROOT_PKGS" --cache-dir="$CACHE/debs" bookworm "$b" "$m" >"$WORK/debootstrap.log" 2>&1; then
		tail -30 "$WORK/debootstrap.log" >&2
		return 1
	fi
	rm -rf "$b"/var/cache/apt/archives/*.deb "$b"/var/lib/apt/lists/*_Packages
	tar --numeric-owner -C "$b" -cf "$BASE_TAR.tmp" . && mv "$BASE_TAR.tmp" "$BASE_TAR"
	rm -rf "$b"
}
ROOTFS_PID=""
if [[ ! -s $BASE_TAR ]]; then
	command -v debootstrap >/dev/null || die "debootstrap is not installed (.ci/run installs it)"
	log "debootstrap bookworm (background; about 3-6 min cold)"
	build_base 9>&- &
	ROOTFS_PID=$!
fi

# --- Kubernetes, as envtest-assets.sh builds it --------------------------------
log "envtest assets (kube-apiserver, etcd, kubectl)"
ENVTEST_DIR=$("$SHARED/tools/envtest-assets.sh" 9>&- | tail -1)

k8s_module() { # DIR: the throwaway module envtest-assets.sh writes, same go.mod
	local m=$1 gomod minor staging
	minor=${K8S_VERSION#1.}; minor=${minor%%.*}
	staging=v0.${K8S_VERSION#1.}
	mkdir -p "$m"
	gomod=$(cd "$m" && GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')
	[[ -f $gomod ]] || die "could not download k8s.io/kubernetes@v$K8S_VERSION"
	{
		printf 'module envtest-assets/k8s\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\n' "$K8S_VERSION"
		sed -nE 's#^[[:space:]]*(replace[[:space:]]+)?([^[:space:]]+)[[:space:]]+=>[[:space:]]+\./staging/.*#\2#p' "$gomod" |
			sort -u | while read -r mod; do printf 'replace %s => %s %s\n' "$mod" "$mod" "$staging"; done
	} >"$m/go.mod"
	K8S_LDFLAGS="-s -w"
	for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		K8S_LDFLAGS+=" -X $v.gitVersion=v$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
	done
}

K8S_BINS=(kubeadm kubelet kube-proxy kube-controller-manager kube-scheduler)
recipe="k8s v$K8S_VERSION cgo envtest-module"
if ! fresh k8s "$recipe" || ! for b in "${K8S_BINS[@]}"; do [[ -x $BIN/$b ]] || exit 1; done; then
	k8s_module "$WORK/k8s"
	pkgs=(); for b in "${K8S_BINS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
	log "building ${K8S_BINS[*]} v$K8S_VERSION (warm Go cache after envtest: about 5-8 min)"
	(cd "$WORK/k8s" && GOFLAGS=-mod=mod "$GO" build -ldflags "$K8S_LDFLAGS" -o "$WORK/k8s/out/" "${pkgs[@]}") >&2
	for b in "${K8S_BINS[@]}"; do install -m 0755 "$WORK/k8s/out/$b" "$BIN/$b"; done
	stamp k8s "$recipe"
fi
for b in kube-apiserver kubectl etcd; do
	cmp -s "$ENVTEST_DIR/$b" "$BIN/$b" 2>/dev/null || install -m 0755 "$ENVTEST_DIR/$b" "$BIN/$b"
done

# go_build NAME RECIPE MODULE@VERSION ENV LDFLAGS PKG:OUT...: a throwaway module
# requiring MODULE, so its dependencies resolve as its own go.mod says.
go_build() {
	local name=$1 recipe=$2 req=$3 env=$4 ld=$5 m=$WORK/$1 p
	shift 5
	fresh "$name" "$recipe" && return 0
	mkdir -p "$m/out"
	printf 'module e2e-assets/%s\n\ngo 1.26.0\n\nrequire %s %s\n' "$name" "${req%@*}" "${req#*@}" >"$m/go.mod"
	# GO_EXTRA_REQ: "module@version ..." raised above what MVS picks, where
	# the proxy does not serve the version the module asks for.
	for p in ${GO_EXTRA_REQ:-}; do printf 'require %s %s\n' "${p%@*}" "${p#*@}" >>"$m/go.mod"; done
	log "building $name ($req)"
	for p in "$@"; do
		(cd "$m" && env $env GOFLAGS=-mod=mod "$GO" build -trimpath ${GO_TAGS:+-tags "$GO_TAGS"} -ldflags "$ld" -o "$BIN/${p#*:}" "${p%%:*}") >&2
	done
	stamp "$name" "$recipe"
}

CT=github.com/containerd/containerd/v2
GO_TAGS=no_btrfs,no_zfs,no_devmapper,no_aufs go_build containerd "v$CONTAINERD_VERSION static" "$CT@v$CONTAINERD_VERSION" "CGO_ENABLED=0" \
	"-s -w -X $CT/version.Version=v$CONTAINERD_VERSION -X $CT/version.Revision=module-proxy" \
	"$CT/cmd/containerd:containerd" "$CT/cmd/containerd-shim-runc-v2:containerd-shim-runc-v2" "$CT/cmd/ctr:ctr"

CNI=github.com/containernetworking/plugins
go_build cni "v$CNI_VERSION static" "$CNI@v$CNI_VERSION" "CGO_ENABLED=0" "-s -w" \
	"$CNI/plugins/main/bridge:bridge" "$CNI/plugins/ipam/host-local:host-local" \
	"$CNI/plugins/main/loopback:loopback" "$CNI/plugins/meta/portmap:portmap"
go_build flannel-cni "v$FLANNEL_CNI_SOURCE_VERSION static" "$CNI@v$FLANNEL_CNI_SOURCE_VERSION" "CGO_ENABLED=0" "-s -w" \
	"$CNI/plugins/meta/flannel:flannel"

FL=github.com/flannel-io/flannel
# flanneld needs cgo (its UDP backend). flannel asks for tencentcloud-sdk-go common v1.3.79, which the module proxy
# does not serve; v1.3.103 is the nearest it does.
GO_EXTRA_REQ=github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common@v1.3.103 \
	go_build flanneld "v$FLANNEL_VERSION cgo tencent-common-v1.3.103" "$FL@v$FLANNEL_VERSION" "CGO_ENABLED=1" \
	"-s -w -X $FL/pkg/version.Version=v$FLANNEL_VERSION" "$FL:flanneld"

# CoreDNS with upstream's plugin.cfg less its cloud and tracing backends
# (route53, azure, clouddns, etcd, nomad, trace: the AWS, Azure, Google,
# etcd, Nomad and Datadog clients, more than half of its cold build). Its
# own coremain and every other plugin, as upstream builds them: main.go is
# upstream's core/plugin/zplugin.go with those imports left out.
CD=github.com/coredns/coredns
CD_DROP='azure|clouddns|etcd|nomad|route53|trace'
recipe="v$COREDNS_VERSION static without $CD_DROP"
if ! fresh coredns "$recipe"; then
	m=$WORK/coredns
	mkdir -p "$m"
	printf 'module e2e-assets/coredns\n\ngo 1.26.0\n\nrequire %s v%s\n' "$CD" "$COREDNS_VERSION" >"$m/go.mod"
	(cd "$m" && GOFLAGS=-mod=mod "$GO" mod download "$CD@v$COREDNS_VERSION") >&2
	zplugin=$(cd "$m" && GOFLAGS=-mod=mod "$GO" list -m -f '{{.Dir}}' "$CD")/core/plugin/zplugin.go
	[[ -f $zplugin ]] || die "coredns: no $zplugin"
	{
		printf 'package main\n\nimport (\n\t"github.com/coredns/coredns/coremain"\n'
		grep -E '^\s*_ "' "$zplugin" | grep -vE "/plugin/($CD_DROP)\"\$"
		printf ')\n\nfunc main() { coremain.Run() }\n'
	} >"$m/main.go"
	grep -q '/plugin/kubernetes"' "$m/main.go" || die "coredns: plugin list not found in $zplugin"
	log "building coredns ($CD@v$COREDNS_VERSION without $CD_DROP)"
	(cd "$m" && CGO_ENABLED=0 GOFLAGS=-mod=mod "$GO" build -trimpath -ldflags "-s -w" -o "$BIN/coredns" .) >&2
	stamp coredns "$recipe"
fi

for tool in pause probe; do
	recipe="$tool $(cat "$REPO"/test/e2e/tools/$tool/*.go | sha256sum | cut -c1-16)"
	if ! fresh "$tool" "$recipe"; then
		log "building $tool"
		(cd "$REPO" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$BIN/$tool" ./test/e2e/tools/$tool) >&2
		stamp "$tool" "$recipe"
	fi
done

# --- the node root ---------------------------------------------------------------
if [[ -n $ROOTFS_PID ]]; then
	log "waiting for debootstrap"
	wait "$ROOTFS_PID" || die "debootstrap failed"
	ROOTFS_PID=""
	log "Debian base cached: $BASE_TAR ($(du -h "$BASE_TAR" | cut -f1))"
	find "$CACHE" -maxdepth 1 -name 'bookworm-*.tar' ! -name "$(basename "$BASE_TAR")" -delete
fi

# binary_stamps: the recipes of the binaries (not of the root and images
# built from them, whose stamps would otherwise feed their own recipes and
# rebuild them on every run).
binary_stamps() {
	local f
	for f in "$OUT"/.stamp.*; do
		case ${f##*/.stamp.} in rootfs | images) ;; *) cat "$f" ;; esac
	done
}

# Everything that makes the root, so a change to any of it rebuilds it.
root_recipe=$( {
	echo "$BASE_TAR"
	binary_stamps
	sha256sum <"$0"
	(cd "$HERE/node" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
} | sha256sum | cut -c1-16)

if ! fresh rootfs "$root_recipe" || [[ ! -d $OUT/rootfs/etc ]]; then
	log "assembling the node root"
	rm -rf --one-file-system "$OUT/rootfs.new"
	mkdir -p "$OUT/rootfs.new"
	R=$OUT/rootfs.new
	tar --numeric-owner -C "$R" -xf "$BASE_TAR"
	cp -a "$HERE/node/." "$R/"
	for b in kubeadm kubelet kubectl containerd containerd-shim-runc-v2 ctr; do install -m 0755 "$BIN/$b" "$R/usr/local/bin/$b"; done
	mkdir -p "$R/opt/cni/bin" "$R/etc/cni/net.d" "$R/etc/containerd" "$R/opt/e2e/images" "$R/etc/kubernetes/manifests"
	for b in bridge host-local loopback portmap; do install -m 0755 "$BIN/$b" "$R/opt/cni/bin/$b"; done
	# containerd's defaults, with the two changes this machine needs: no
	# CAP_SYS_RESOURCE in the bounding set, so runc must not raise
	# oom_score_adj; and the sandbox image under the e2e repository.
	"$BIN/containerd" config default >"$WORK/config.toml"
	sed -E -e "s#^([[:space:]]*)sandbox = .*#\1sandbox = '$E2E_IMAGE_REPO/pause:$PAUSE_TAG'#" \
		-e 's#^([[:space:]]*)restrict_oom_score_adj = false#\1restrict_oom_score_adj = true#' \
		"$WORK/config.toml" >"$R/etc/containerd/config.toml"
	grep -q "sandbox = '$E2E_IMAGE_REPO/pause:$PAUSE_TAG'" "$R/etc/containerd/config.toml" || die "containerd config: no sandbox image line to set"
	grep -q 'restrict_oom_score_adj = true' "$R/etc/containerd/config.toml" || die "containerd config: no restrict_oom_score_adj to set"
	# cloud-init's locale module sets en_US.UTF-8, as on a cloud image.
	sed -i 's/^# *\(en_US.UTF-8 UTF-8\)/\1/' "$R/etc/locale.gen"
	chroot "$R" /usr/sbin/locale-gen >/dev/null
	mkdir -p "$R/lib/modules"
	printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$R/etc/hosts"
	: >"$R/etc/machine-id"
	# Units: ours, and systemd-networkd for the node's static address.
	for u in e2e-cgroup-rw.service:sysinit.target containerd.service:multi-user.target \
		e2e-images.service:multi-user.target kubelet.service:multi-user.target \
		e2e-network.service:network-online.target e2e-network.service:multi-user.target; do
		mkdir -p "$R/etc/systemd/system/${u#*:}.wants"
		unit=${u%%:*}
		src=/etc/systemd/system/$unit
		[[ -f $R$src ]] || src=/lib/systemd/system/$unit
		ln -sf "$src" "$R/etc/systemd/system/${u#*:}.wants/$unit"
	done
	# Nothing in a node container needs these, and some hang without hardware.
	for u in systemd-timesyncd.service e2scrub_reap.service apt-daily.timer apt-daily-upgrade.timer \
		systemd-networkd.service systemd-networkd.socket systemd-networkd-wait-online.service; do
		ln -sf /dev/null "$R/etc/systemd/system/$u"
	done
	echo 'root:e2e' | chroot "$R" chpasswd 2>/dev/null || true
	rm -rf --one-file-system "$OUT/rootfs"
	mv "$OUT/rootfs.new" "$OUT/rootfs"
	stamp rootfs "$root_recipe"
fi

# --- images ------------------------------------------------------------------------
# libs BINARY...: the shared libraries the binaries load, from the node root.
copy_with_libs() { # DEST BINARY...
	local dest=$1 f lib
	shift
	for f in "$@"; do
		mkdir -p "$dest$(dirname "$f")"
		cp -a "$OUT/rootfs$f" "$dest$f"
		chroot "$OUT/rootfs" ldd "$f" 2>/dev/null | awk '/=>/ {print $3} /^[[:space:]]*\/lib/ {print $1}' | while read -r lib; do
			[[ -n $lib && -e "$OUT/rootfs$lib" ]] || continue
			mkdir -p "$dest$(dirname "$lib")"
			cp -L "$OUT/rootfs$lib" "$dest$lib"
		done
	done
}
copy_with_libs_host() { # DEST BINARY: a binary built here, its libs from the node root
	local dest=$1 f=$2 to=$3 lib
	install -D -m 0755 "$f" "$dest$to"
	ldd "$f" 2>/dev/null | awk '/=>/ {print $3} /^[[:space:]]*\/lib/ {print $1}' | while read -r lib; do
		[[ -n $lib && -e "$OUT/rootfs$lib" ]] || continue
		mkdir -p "$dest$(dirname "$lib")"
		cp -L "$OUT/rootfs$lib" "$dest$lib"
	done
}

images_recipe=$( {
	cat "$OUT/.stamp.rootfs"
	binary_stamps
	sha256sum <"$0"
	cat "$REPO"/test/e2e/tools/ociimage/*.go | sha256sum
	(cd "$HERE/images" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	echo "$E2E_IMAGE_REPO"
} | sha256sum | cut -c1-16)

if ! fresh images "$images_recipe"; then
	log "building images"
	OCI=$WORK/ociimage
	(cd "$REPO" && "$GO" build -o "$OCI" ./test/e2e/tools/ociimage) >&2
	S=$WORK/img
	rm -rf "$OUT/images/controlplane"/*.tar "$OUT/images/common"/*.tar
	label=(-label "org.opencontainers.image.description=nodeboot e2e image, built offline by test/e2e/assets/build.sh")

	# The userland layer shared by every image that runs a shell or the
	# netfilter tools: BusyBox, iptables (nft backend, as Debian's default)
	# and iproute2, with their libraries, from the node root.
	U=$S/userland
	mkdir -p "$U/bin" "$U/tmp" "$U/run" "$U/etc" "$U/var/run"
	chmod 1777 "$U/tmp"
	cp "$OUT/rootfs/bin/busybox" "$U/bin/busybox"
	for a in $(chroot "$OUT/rootfs" /bin/busybox --list); do
		case $a in busybox | ip | iptables* | ip6tables*) continue ;; esac
		ln -sf busybox "$U/bin/$a"
	done
	copy_with_libs "$U" /usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /bin/ip
	# The extensions iptables loads at run time, with their own libraries
	# (libxt_statistic needs libm, which kube-proxy's rules use).
	copy_with_libs "$U" $(cd "$OUT/rootfs" && ls usr/lib/x86_64-linux-gnu/xtables/*.so | sed 's#^#/#')
	for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
		ln -sf xtables-nft-multi "$U/usr/sbin/$t"
		ln -sf xtables-nft-multi "$U/usr/sbin/${t/tables/tables-nft}"
		ln -sf xtables-legacy-multi "$U/usr/sbin/${t/tables/tables-legacy}"
	done
	mkdir -p "$U/sbin" && ln -sf ../bin/ip "$U/sbin/ip"
	cp "$OUT/rootfs/etc/protocols" "$OUT/rootfs/etc/services" "$U/etc/"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$U/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$U/etc/group"
	printf 'hosts: files dns\n' >"$U/etc/nsswitch.conf"
	EMPTY='-entrypoint []'

	# check_libs LAYER...: every ELF file of the layers, stacked, finds its
	# shared libraries inside them (a missing one shows only at run time,
	# as "Couldn't load match" or a container that never starts).
	check_libs() {
		local m=$WORK/check.$RANDOM f missing
		mkdir -p "$m"
		for f in "$@"; do cp -a "$f/." "$m/"; done
		[[ -x $m/lib64/ld-linux-x86-64.so.2 ]] || { rm -rf "$m"; return 0; }
		missing=$(cd "$m" && find . -type f \( -perm -u+x -o -name '*.so*' \) -print | while read -r f; do
			head -c4 "$f" | grep -q ELF || continue
			case $f in */ld-linux*) continue ;; *.so*) ;; *) grep -qa ld-linux-x86-64 "$f" || continue ;; esac
			{ chroot "$m" /lib64/ld-linux-x86-64.so.2 --list "${f#.}" 2>&1 || true; } 2>/dev/null | { grep -E 'not found|error while loading' || true; } | sed "s#^#${f#.}: #"
		done)
		rm -rf "$m"
		[[ -z $missing ]] || die "image layers $*: missing libraries:\n$missing"
	}

	one() { # NAME... -- ociimage args
		local names=()
		while [[ $1 != -- ]]; do names+=(-name "$E2E_IMAGE_REPO/$1"); shift; done
		shift
		"$OCI" "${names[@]}" "${label[@]}" "$@"
	}

	check_libs "$U"
	mkdir -p "$S/pause" && install -m 0755 "$BIN/pause" "$S/pause/pause"
	one "pause:$PAUSE_TAG" -- -o "$OUT/images/common/pause.tar" -layer "$S/pause" -entrypoint '["/pause"]'

	C=$S/controlplane
	for b in kube-apiserver kube-controller-manager kube-scheduler etcd; do copy_with_libs_host "$C" "$BIN/$b" "/usr/local/bin/$b"; done
	check_libs "$U" "$C"
	one "kube-apiserver:v$K8S_VERSION" "kube-controller-manager:v$K8S_VERSION" "kube-scheduler:v$K8S_VERSION" "etcd:$("$BIN/etcd" --version | sed -n 's/^etcd Version: //p')" -- \
		-o "$OUT/images/controlplane/controlplane.tar" -layer "$U" -layer "$C"

	P=$S/kube-proxy
	copy_with_libs_host "$P" "$BIN/kube-proxy" /usr/local/bin/kube-proxy
	check_libs "$U" "$P"
	one "kube-proxy:v$K8S_VERSION" -- -o "$OUT/images/common/kube-proxy.tar" -layer "$U" -layer "$P"

	D=$S/coredns
	install -D -m 0755 "$BIN/coredns" "$D/coredns"
	mkdir -p "$D/etc" && printf 'root:x:0:0:root:/root:/bin/false\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/false\n' >"$D/etc/passwd"
	one "coredns:v$COREDNS_VERSION" -- -o "$OUT/images/common/coredns.tar" -layer "$D" -entrypoint '["/coredns"]'

	F=$S/flannel
	copy_with_libs_host "$F" "$BIN/flanneld" /opt/bin/flanneld
	check_libs "$U" "$F"
	one "flannel:v$FLANNEL_VERSION" -- -o "$OUT/images/common/flannel.tar" -layer "$U" -layer "$F" -entrypoint '["/opt/bin/flanneld"]'

	FC=$S/flannel-cni
	install -D -m 0755 "$BIN/flannel" "$FC/flannel"
	"$OCI" -name "$E2E_IMAGE_REPO/flannel-cni-plugin:$FLANNEL_CNI_IMAGE_TAG" -o "$OUT/images/common/flannel-cni-plugin.tar" -layer "$U" -layer "$FC" \
		-label "org.opencontainers.image.description=the flannel CNI plugin of containernetworking/plugins v$FLANNEL_CNI_SOURCE_VERSION (flannel-io/cni-plugin is not served by the module proxy)"

	N=$S/node-cache
	install -D -m 0755 "$BIN/coredns" "$N/coredns"
	install -D -m 0755 "$HERE/images/node-cache/node-cache" "$N/node-cache"
	"$OCI" -name "$E2E_IMAGE_REPO/k8s-dns-node-cache:$NODE_CACHE_TAG" -o "$OUT/images/common/node-cache.tar" -layer "$U" -layer "$N" \
		-entrypoint '["/node-cache"]' \
		-label "org.opencontainers.image.description=stand-in for k8s.io/dns node-cache (module not served): its setup in sh, then CoreDNS v$COREDNS_VERSION"

	W=$S/workload
	install -D -m 0755 "$BIN/probe" "$W/bin/probe"
	one "busybox:$BUSYBOX_TAG" -- -o "$OUT/images/common/busybox.tar" -layer "$U" -layer "$W" -entrypoint '["/bin/sh"]'
	stamp images "$images_recipe"
fi

cat >"$OUT/versions.env" <<EOF
K8S_VERSION=v$K8S_VERSION
ETCD_TAG=$("$BIN/etcd" --version | sed -n 's/^etcd Version: //p')
COREDNS_TAG=v$COREDNS_VERSION
FLANNEL_VERSION=v$FLANNEL_VERSION
FLANNEL_CNI_IMAGE_TAG=$FLANNEL_CNI_IMAGE_TAG
NODE_CACHE_TAG=$NODE_CACHE_TAG
PAUSE_TAG=$PAUSE_TAG
BUSYBOX_TAG=$BUSYBOX_TAG
IMAGE_REPO=$E2E_IMAGE_REPO
CONTAINERD_VERSION=v$CONTAINERD_VERSION
EOF
log "ready: $OUT"
echo "$OUT"
