package lab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec is one node to boot. Exactly one of UserData and Ignition is set.
type Spec struct {
	// Name is the hostname, the machine name and the Kubernetes node name.
	Name string
	// IP is the node's address on the lab bridge.
	IP netip.Addr
	// ControlPlane nodes also get the control-plane images.
	ControlPlane bool
	// UserData is a NoCloud seed's user-data, which cloud-init runs at boot:
	// a #cloud-config, a ## template: jinja cloud-config or a script.
	UserData []byte
	// Ignition is an Ignition 3.x config, applied to the root by the real
	// Ignition engine before systemd starts, as Flatcar's initramfs does.
	Ignition []byte
	// IgnitionApply is the ../shared/tools/ignition-apply script.
	IgnitionApply string
}

// Node is a running node container.
type Node struct {
	Spec
	lab     *Lab
	dir     string
	root    string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	cgroups []string

	started time.Time

	mu      sync.Mutex
	stopped bool
}

// Started is when the node's container started.
func (n *Node) Started() time.Time { return n.started }

// Dir is the node's work directory: its logs stay there after Stop.
func (n *Node) Dir() string { return n.dir }

// Root is the node's root directory as the test process sees it.
func (n *Node) Root() string { return n.root }

// Boot prepares the node's root and starts systemd in it.
func (l *Lab) Boot(ctx context.Context, s Spec) (*Node, error) {
	if (s.UserData == nil) == (s.Ignition == nil) {
		return nil, fmt.Errorf("lab: node %s: set exactly one of UserData and Ignition", s.Name)
	}
	if len(s.Name) > 11 {
		// nspawn names the host side of the veth "vb-<machine>", at most
		// 15 characters, and hashes longer names into a clash-prone form.
		return nil, fmt.Errorf("lab: node name %q is longer than 11 characters", s.Name)
	}
	n := &Node{Spec: s, lab: l, dir: filepath.Join(l.Work, "nodes", s.Name), done: make(chan struct{})}
	if err := l.add(n); err != nil {
		return nil, err
	}
	if err := n.prepare(); err != nil {
		n.cleanup()
		l.remove(n)
		return nil, err
	}
	if err := n.start(ctx); err != nil {
		_ = n.Stop()
		return nil, err
	}
	return n, nil
}

func (n *Node) prepare() error {
	if err := os.RemoveAll(n.dir); err != nil {
		return err
	}
	for _, d := range []string{"upper", "work", "root", "containerd", "logs"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			return err
		}
	}
	n.root = filepath.Join(n.dir, "root")
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", filepath.Join(n.lab.Assets, "rootfs"), filepath.Join(n.dir, "upper"), filepath.Join(n.dir, "work"))
	if out, err := exec.Command("mount", "-t", "overlay", "overlay", "-o", opts, n.root).CombinedOutput(); err != nil {
		return fmt.Errorf("mount the node root: %w: %s", err, out)
	}
	machineID := make([]byte, 16)
	_, _ = rand.Read(machineID)
	prefix := n.lab.Prefix.Bits()
	files := map[string]string{
		"/etc/hostname":   n.Name + "\n",
		"/etc/hosts":      "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n" + n.IP.String() + " " + n.Name + "\n",
		"/etc/machine-id": hex.EncodeToString(machineID) + "\n",
		"/etc/resolv.conf": "# the lab bridge: nothing answers, nothing is reachable beyond it\n" +
			"nameserver " + n.lab.Gateway().String() + "\noptions timeout:1 attempts:1\n",
		"/etc/e2e/network.env": "ADDRESS=" + netip.PrefixFrom(n.IP, prefix).String() + "\nGATEWAY=" + n.lab.Gateway().String() + "\n",
	}
	if n.UserData != nil {
		files["/var/lib/cloud/seed/nocloud/user-data"] = string(n.UserData)
		files["/var/lib/cloud/seed/nocloud/meta-data"] = "instance-id: " + n.Name + "-" + hex.EncodeToString(machineID[:4]) + "\nlocal-hostname: " + n.Name + "\n"
	} else {
		files["/etc/cloud/cloud-init.disabled"] = "Ignition node: no cloud-init, as on Flatcar\n"
	}
	for p, body := range files {
		full := filepath.Join(n.root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		_ = os.Remove(full) // a symlink in the base root must not be followed
		mode := fs.FileMode(0o644)
		if strings.HasPrefix(p, "/var/lib/cloud/seed/") {
			mode = 0o600
		}
		if err := os.WriteFile(full, []byte(body), mode); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(n.root, "var/log/journal"), 0o755); err != nil {
		return err
	}
	if n.Ignition != nil {
		return n.applyIgnition()
	}
	return nil
}

// applyIgnition runs the real Ignition engine's fetch and files stages on
// the root, then enables the units Ignition's preset file names, as systemd
// does with presets on a Flatcar first boot.
func (n *Node) applyIgnition() error {
	cfg := filepath.Join(n.dir, "logs", "ignition.json")
	if err := os.WriteFile(cfg, n.Ignition, 0o600); err != nil {
		return err
	}
	out, err := exec.Command(n.IgnitionApply, n.root, cfg).CombinedOutput()
	_ = os.WriteFile(filepath.Join(n.dir, "logs", "ignition-apply.log"), out, 0o600)
	if err != nil {
		return fmt.Errorf("ignition-apply: %w\n%s", err, out)
	}
	presets, err := os.ReadFile(filepath.Join(n.root, "etc/systemd/system-preset/20-ignition.preset"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var enable []string
	sc := bufio.NewScanner(bytes.NewReader(presets))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "enable" {
			enable = append(enable, f[1])
		}
	}
	if len(enable) == 0 {
		return nil
	}
	args := append([]string{n.root, "systemctl", "preset"}, enable...)
	if out, err := exec.Command("chroot", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("systemctl preset %v: %w: %s", enable, err, out)
	}
	return nil
}

// hostCgroups creates this node's cgroup in every hierarchy, under the
// test's own, so two nodes' kubelets never share (and clean up) each
// other's /kubepods.
func (n *Node) hostCgroups() error {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return err
	}
	rel := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			rel["unified"] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			rel[strings.TrimPrefix(c, "name=")] = f[2]
		}
	}
	hier, err := filepath.Glob("/sys/fs/cgroup/*")
	if err != nil {
		return err
	}
	leaf := "e2e-" + n.lab.RunID + "-" + n.Name
	for _, h := range hier {
		r, ok := rel[filepath.Base(h)]
		if !ok {
			continue
		}
		parent := filepath.Join(h, r)
		d := filepath.Join(parent, leaf)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", d, err)
		}
		n.cgroups = append(n.cgroups, d)
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(parent, f)); err == nil {
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					return fmt.Errorf("cgroup %s: %w", f, err)
				}
			}
		}
	}
	return nil
}

func (n *Node) start(ctx context.Context) error {
	if err := n.hostCgroups(); err != nil {
		return err
	}
	console, err := os.Create(filepath.Join(n.dir, "logs", "console.log"))
	if err != nil {
		return err
	}
	args := []string{
		"--register=no", "--keep-unit", "--quiet",
		"--directory=" + n.root, "--machine=" + n.Name, "--hostname=" + n.Name, "--boot",
		"--network-bridge=" + n.lab.Bridge,
		"--private-users=no", "--capability=all",
		"--system-call-filter=add_key keyctl request_key bpf perf_event_open",
		"--resolv-conf=off", "--timezone=off", "--link-journal=no", "--console=pipe",
		"--bind=/dev/kmsg",
		"--bind=" + filepath.Join(n.dir, "containerd") + ":/var/lib/containerd",
		"--bind-ro=" + n.lab.ImagesDir("common") + ":/opt/e2e/images/common",
	}
	if n.ControlPlane {
		args = append(args, "--bind-ro="+n.lab.ImagesDir("controlplane")+":/opt/e2e/images/controlplane")
	}
	// The launcher joins the node's cgroups, then becomes systemd-nspawn.
	var join strings.Builder
	for _, d := range n.cgroups {
		fmt.Fprintf(&join, "echo $$ > %s/cgroup.procs && ", shq(d))
	}
	script := join.String() + `exec systemd-nspawn "$@"`
	n.cmd = exec.Command("sh", append([]string{"-c", script, "nspawn"}, args...)...)
	n.cmd.Env = append(os.Environ(), "SYSTEMD_NSPAWN_API_VFS_WRITABLE=yes")
	n.cmd.Stdin = nil
	n.cmd.Stdout, n.cmd.Stderr = console, console
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	n.started = time.Now()
	if err := n.cmd.Start(); err != nil {
		console.Close()
		return err
	}
	go func() {
		n.waitErr = n.cmd.Wait()
		console.Close()
		close(n.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := n.initPID(); err == nil {
			return nil
		}
		select {
		case <-n.done:
			b, _ := os.ReadFile(filepath.Join(n.dir, "logs", "console.log"))
			return fmt.Errorf("systemd-nspawn for %s exited: %w\n%s", n.Name, n.waitErr, b)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s: no init process after 30s", n.Name)
}

// initPID is the host PID of the node's systemd: the first descendant of
// systemd-nspawn that is PID 1 of its own PID namespace.
func (n *Node) initPID() (int, error) {
	if n.cmd == nil || n.cmd.Process == nil {
		return 0, errors.New("not started")
	}
	queue := []int{n.cmd.Process.Pid}
	for depth := 0; depth < 4 && len(queue) > 0; depth++ {
		var next []int
		for _, pid := range queue {
			for _, c := range children(pid) {
				if nsPIDIsOne(c) {
					return c, nil
				}
				next = append(next, c)
			}
		}
		queue = next
	}
	return 0, errors.New("no init process yet")
}

func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if v, err := strconv.Atoi(f); err == nil {
				out = append(out, v)
			}
		}
	}
	return out
}

func nsPIDIsOne(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			return len(f) >= 2 && f[len(f)-1] == "1"
		}
	}
	return false
}

// Exec runs a command inside the node (all of its namespaces, its root).
func (n *Node) Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	pid, err := n.initPID()
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	full := append([]string{"-t", strconv.Itoa(pid), "-m", "-u", "-i", "-n", "-p", "-r", "-w", "--", name}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", full...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.Bytes(), err
}

// Running reports whether the node's container is still up.
func (n *Node) Running() bool {
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// CollectLogs saves the journal and cloud-init's logs into the node's log
// directory and returns the directory.
func (n *Node) CollectLogs(ctx context.Context) string {
	logs := filepath.Join(n.dir, "logs")
	if n.Running() {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		out, _ := n.Exec(cctx, "journalctl", "--no-pager", "-o", "short-precise", "-b")
		cancel()
		_ = os.WriteFile(filepath.Join(logs, "journal.log"), out, 0o600)
	}
	for _, f := range []string{"var/log/cloud-init.log", "var/log/cloud-init-output.log"} {
		if b, err := os.ReadFile(filepath.Join(n.root, f)); err == nil {
			_ = os.WriteFile(filepath.Join(logs, filepath.Base(f)), b, 0o600)
		}
	}
	// Every container's log, as kubelet keeps them: pods/<ns>_<pod>_<uid>/<container>/N.log.
	_ = filepath.WalkDir(filepath.Join(n.root, "var/log/pods"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(filepath.Join(n.root, "var/log"), p)
		b, err := os.ReadFile(p)
		if err == nil {
			dst := filepath.Join(logs, rel)
			_ = os.MkdirAll(filepath.Dir(dst), 0o755)
			_ = os.WriteFile(dst, b, 0o600)
		}
		return nil
	})
	return logs
}

// Stop shuts the node down (systemd's orderly shutdown, then a kill after
// 30 s), unmounts its root and removes its cgroups and disk state; the logs
// directory stays.
func (n *Node) Stop() error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return nil
	}
	n.stopped = true
	n.mu.Unlock()
	defer n.lab.remove(n)
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.done:
		case <-time.After(30 * time.Second):
			if pid, err := n.initPID(); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
			select {
			case <-n.done:
			case <-time.After(10 * time.Second):
			}
		}
	}
	return n.cleanup()
}

func (n *Node) cleanup() error {
	var errs []error
	if n.root != "" {
		if out, err := exec.Command("umount", "-l", n.root).CombinedOutput(); err != nil && !strings.Contains(string(out), "not mounted") {
			errs = append(errs, fmt.Errorf("umount %s: %w: %s", n.root, err, out))
		}
	}
	for _, d := range n.cgroups {
		if err := removeCgroup(d); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range []string{"upper", "work", "containerd", "root"} {
		if err := os.RemoveAll(filepath.Join(n.dir, d)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCgroupOnce removes a cgroup and every cgroup under it, deepest
// first, once, without waiting (a cgroup directory holds control files rm
// cannot remove; rmdir can, once no process is left in it).
func removeCgroupOnce(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var last error
	for _, d := range dirs {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			last = fmt.Errorf("rmdir %s: %w", d, err)
		}
	}
	return last
}

// removeCgroup removes a cgroup tree, retrying for a few seconds while its
// last processes exit.
func removeCgroup(dir string) error {
	var last error
	for range 20 {
		if last = removeCgroupOnce(dir); last == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return last
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
