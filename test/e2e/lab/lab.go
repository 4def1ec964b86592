// Package lab runs Kubernetes nodes as containers on one machine, offline,
// for nodeboot's end-to-end test: each node is a Debian root (built by
// test/e2e/assets/build.sh) booted with systemd as PID 1 by systemd-nspawn
// in a network namespace of its own, joined to one bridge that lives in the
// test's own network namespace. Nothing routes out of it: the bridge's
// address is the nodes' only gateway, and every address the test uses is in
// namespaces the test made.
//
// The quirks of this machine that a cloud VM does not have are handled here,
// once, as ../shared/e2e-notes.md found them: read-only cgroup v1 mounts
// inside nspawn (a unit in the root remounts them), no CAP_SYS_RESOURCE
// (containerd's restrict_oom_score_adj, in the root), host cgroups shared
// between nodes (each node's launcher moves into cgroups of its own in
// every hierarchy), no default route without a gateway (the bridge address).
package lab

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// EnvInside marks the re-executed test process that runs inside the lab's
// private network and mount namespaces.
const EnvInside = "NODEBOOT_E2E_LAB"

// Reexec runs this process again inside new network and mount namespaces
// and returns its exit code; inside returns false when this process already
// is that child. TestMain calls it first.
func Reexec() (code int, inside bool) {
	if os.Getenv(EnvInside) == "1" {
		return 0, true
	}
	args := append([]string{"--net", "--mount", "--propagation", "private", "--", os.Args[0]}, os.Args[1:]...)
	cmd := exec.Command("unshare", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), EnvInside+"=1")
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), false
		}
		fmt.Fprintf(os.Stderr, "lab: unshare: %v\n", err)
		return 2, false
	}
	return 0, false
}

// Lab is the test's network: a bridge in this process's network namespace
// and the node containers on it.
type Lab struct {
	// Assets is the directory test/e2e/assets/build.sh printed.
	Assets string
	// Work holds the nodes' roots and logs.
	Work string
	// Bridge is the name of the bridge the nodes join.
	Bridge string
	// Prefix is the nodes' network; its first address is the bridge's.
	Prefix netip.Prefix
	// RunID names this run's cgroups and machines apart from a leftover run.
	RunID string

	mu    sync.Mutex
	nodes map[string]*Node
	used  map[netip.Addr]bool
}

// New brings the bridge up. It must run inside the namespaces Reexec made.
func New(assets, work, runID string) (*Lab, error) {
	if os.Getenv(EnvInside) != "1" {
		return nil, errors.New("lab: not inside the lab's namespaces (call lab.Reexec from TestMain)")
	}
	l := &Lab{
		Assets: assets, Work: work, Bridge: "nbr0", RunID: runID,
		Prefix: netip.MustParsePrefix("10.99.0.0/24"),
		nodes:  map[string]*Node{}, used: map[netip.Addr]bool{},
	}
	gw := l.Gateway()
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", l.Bridge, "type", "bridge"},
		{"addr", "add", netip.PrefixFrom(gw, l.Prefix.Bits()).String(), "dev", l.Bridge},
		{"link", "set", l.Bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	// The bridge only switches: no bridged frame goes through this
	// namespace's netfilter.
	_ = os.WriteFile("/proc/sys/net/bridge/bridge-nf-call-iptables", []byte("0"), 0o644)
	// Every node is a container with systemd, journald, containerd and a
	// kubelet, each holding inotify instances, and the kernel counts them
	// per user across containers: its default of 128 is what about a dozen
	// nodes use up, and the next containerd then starts without its CRI
	// plugin ("couldn't initialize inotify: too many open files"), so that
	// node never joins (seen on a loaded 2-core machine). The limits are
	// the kernel's, not the namespace's: raise them, never lower them, as
	// kind asks of its users for the same reason.
	for _, lim := range []struct {
		path  string
		floor int
	}{
		{"/proc/sys/fs/inotify/max_user_instances", 8192},
		{"/proc/sys/fs/inotify/max_user_watches", 524288},
	} {
		if err := raiseLimit(lim.path, lim.floor); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	removeStaleCgroups()
	return l, nil
}

// Gateway is the bridge's address: the nodes' default route and the address
// the management side (API server, managers) serves nodes on.
func (l *Lab) Gateway() netip.Addr { return l.Prefix.Addr().Next() }

// Allocate reserves the next free node address from start (inclusive).
func (l *Lab) Allocate(start int) (netip.Addr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.Prefix.Addr()
	for range start {
		a = a.Next()
	}
	for ; l.Prefix.Contains(a); a = a.Next() {
		if !l.used[a] && a != l.Gateway() {
			l.used[a] = true
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("lab: no free address in %s from .%d", l.Prefix, start)
}

// Release returns an address to the pool.
func (l *Lab) Release(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.used, a)
}

// Node returns a running node by name.
func (l *Lab) Node(name string) *Node {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nodes[name]
}

// StopAll stops every node still running.
func (l *Lab) StopAll() {
	l.mu.Lock()
	var ns []*Node
	for _, n := range l.nodes {
		ns = append(ns, n)
	}
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range ns {
		wg.Go(func() { _ = n.Stop() })
	}
	wg.Wait()
}

func (l *Lab) add(n *Node) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.nodes[n.Name]; ok {
		return fmt.Errorf("lab: node %s exists", n.Name)
	}
	l.nodes[n.Name] = n
	return nil
}

func (l *Lab) remove(n *Node) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nodes[n.Name] == n {
		delete(l.nodes, n.Name)
	}
}

// ImagesDir is the directory of one image set (controlplane, common).
func (l *Lab) ImagesDir(set string) string { return filepath.Join(l.Assets, "images", set) }

// Bin is a binary of the assets.
func (l *Lab) Bin(name string) string { return filepath.Join(l.Assets, "bin", name) }

// removeStaleCgroups removes node cgroups an interrupted run left behind
// (empty ones only: rmdir refuses a cgroup that still holds a process).
func removeStaleCgroups() {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/e2e-*")
	more, _ := filepath.Glob("/sys/fs/cgroup/*/*/*/e2e-*")
	for _, d := range append(dirs, more...) {
		_ = removeCgroupOnce(d)
	}
}

// raiseLimit sets the kernel limit at path to min when it is lower.
func raiseLimit(path string, minimum int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("lab: read %s: %w", path, err)
	}
	cur, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("lab: %s: %w", path, err)
	}
	if cur >= minimum {
		return nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(minimum)), 0o644); err != nil {
		return fmt.Errorf("lab: raise %s from %d to %d (a dozen nodes need it): %w", path, cur, minimum, err)
	}
	return nil
}
