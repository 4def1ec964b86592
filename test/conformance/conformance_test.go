// Package conformance runs provisioning/conformance's Cases through every
// native provisioner and the real tool that consumes its output: Debian's
// cloud-init (cloudinit-apply), the Ignition engine (ignition-apply, then
// the provisioner's own first-boot units run in the applied root as systemd
// would start them), and the script in a chroot. Each Case either gives its
// State or is refused with ErrUnsupported at a field Capabilities does not
// list.
package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	v31 "github.com/coreos/ignition/v2/config/v3_1/types"
	ign24 "github.com/flatcar/ignition/config/v2_4"
	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/internal/third_party/flatcar/v24tov31"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
	"github.com/nodeboot/nodeboot/provisioning/script"
	"github.com/nodeboot/nodeboot/test/testenv"

	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// target is one format in one version, with the way its output reaches a
// node.
type target struct {
	format, version string
	apply           func(t *testing.T, c conformance.Case, data []byte) conformance.Node
}

func (tg target) String() string {
	if tg.version == "" {
		return tg.format
	}
	return tg.format + "@" + tg.version
}

var targets = []target{
	{cloudinit.Format, cloudinit.VersionPlain, bootCloudInit},
	{"ignition", "3.4.0", bootIgnition},
	{script.Format, "", runScript},
	{"ignition", provisioning.VersionCABPK, bootLegacyIgnition},
}

// departures are where CABPK's dialects keep CABPK's bytes against the
// Plan's meaning: each changes a case's State to what those bytes do, and
// is a row of the README's meaning table ("One Plan, one meaning").
var departures = map[string]func(c string, w *conformance.State){
	"ignition@" + provisioning.VersionCABPK: func(c string, w *conformance.State) {
		if d := legacyIgnitionDepartures[c]; d != nil {
			d(w)
		}
		if c != "node" {
			return
		}
		// One bash script: pre1's variable and cd reach pre2, and the exit 0
		// after "installed" ends the script, so the bootstrap command, the
		// sentinel and the post command never run, and no error says so.
		w.Log = []string{"pre1", "pre2 var=leaked pwd=/tmp", "installed"}
		var files []conformance.File
		for _, f := range w.Files {
			if f.Path != conformance.Sentinel {
				files = append(files, f)
			}
		}
		w.Files, w.Absent = files, append(w.Absent, conformance.Sentinel)
		// Enabled by Ignition, so started by systemd at boot, never after
		// the pre commands.
		w.Units[0].StartedAfter = ""
		// /etc/sudoers.d/jane.doe: sudo skips a file whose name has a dot.
		w.Users[0].Sudo = ""
	},
}

// TestConformance renders every Case for every target and checks the node
// the real tool made of it, or the refusal Capabilities predicts.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not booting nodes with the real tools")
	}
	testenv.RequireRoot(t)
	for _, tg := range targets {
		support, err := provisioning.Capabilities(tg.format, tg.version)
		require.NoError(t, err, tg.String())
		for _, c := range conformance.Cases() {
			t.Run(tg.String()+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				p, err := provisioning.Get(tg.format)
				require.NoError(t, err)
				out, err := p.Render(c.Plan(), provisioning.Options{Version: tg.version})
				if missing := c.Missing(support); len(missing) > 0 {
					require.NoError(t, conformance.Refused(err, missing), "Capabilities says %s lacks %v", tg, missing)
					return
				}
				require.NoError(t, err, "Capabilities says %s supports every element of the case", tg)
				if d := departures[tg.String()]; d != nil {
					d(c.Name, &c.Want)
				}
				node := tg.apply(t, c, out.Data)
				require.NoError(t, c.Verify(node), "%s: the node differs from the case's state", tg)
			})
		}
	}
}

// chroot runs argv inside root.
func chroot(root string) func(argv ...string) ([]byte, error) {
	return func(argv ...string) ([]byte, error) {
		cmd := exec.Command("chroot", append([]string{root}, argv...)...)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C"}
		return cmd.CombinedOutput()
	}
}

// runcmdFailed is how cloud-init 22.4 logs the exit code of runcmd.
var runcmdFailed = regexp.MustCompile(`Command: \['/var/lib/cloud/instance/scripts/runcmd'\]\nExit code: (\d+)`)

// bootCloudInit applies the user data with cloudinit-apply, systemctl
// replaced by the tool's argument-recording stub.
func bootCloudInit(t *testing.T, c conformance.Case, data []byte) conformance.Node {
	t.Helper()
	tool := testenv.Tool(t, "cloudinit-apply")
	dir := t.TempDir()
	ud := filepath.Join(dir, "user-data")
	require.NoError(t, os.WriteFile(ud, data, 0o600))
	root := filepath.Join(dir, "root")
	args := []string{root, ud}
	if c.Metadata != nil {
		md := filepath.Join(dir, "meta-data")
		require.NoError(t, os.WriteFile(md, []byte(conformance.NoCloudMetaData(c.Metadata)), 0o600))
		args = append(args, md)
	}
	cmd := exec.Command(tool, args...)
	cmd.Env = append(os.Environ(), "STUB_CMDS=systemctl")
	if c.Want.ExitCode != 0 {
		// A failing command fails cloud-init's scripts_user module, as it must.
		cmd.Env = append(cmd.Env, "CI_ALLOW_FAILED_MODULES=scripts-user")
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 && onlyChownClearedModes(out) {
		// The tool checks write_files against the document, and cloud-init
		// itself loses these bits (a CABPK dialect departure): the case's
		// State says what the node must have.
		t.Logf("cloudinit-apply: cloud-init cleared setuid/setgid bits:\n%s", out)
		err = nil
	}
	require.NoError(t, err, "cloudinit-apply:\n%s", out)
	events, err := conformance.ReadEvents(root, "/var/log/validators-stub-calls.log")
	require.NoError(t, err)
	n := conformance.Node{Root: root, Run: chroot(root), Events: events}
	log, err := os.ReadFile(filepath.Join(root, "var/log/cloud-init.log"))
	require.NoError(t, err)
	if m := runcmdFailed.FindSubmatch(log); m != nil {
		n.ExitCode, _ = strconv.Atoi(string(m[1]))
	}
	return n
}

// modeCheckFailed is cloudinit-apply's line for a file whose mode differs
// from its write_files entry.
var modeCheckFailed = regexp.MustCompile(`^\s*FAIL \S+ mode ([0-7]{4}) .*<- mode want ([1-7][0-7]{3})$`)

// onlyChownClearedModes reports whether every check cloudinit-apply failed
// is a mode that lost setuid or setgid and nothing else, as chown after
// chmod leaves it.
func onlyChownClearedModes(out []byte) bool {
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "FAIL ") {
			continue
		}
		m := modeCheckFailed.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		got, _ := strconv.ParseUint(m[1], 8, 32)
		want, _ := strconv.ParseUint(m[2], 8, 32)
		if got != want&^0o6000 {
			return false
		}
		n++
	}
	return n > 0
}

// newRoot unpacks the Debian root cloudinit-apply caches (dash as /bin/sh,
// bash, sudo, useradd), with the systemctl stub installed and systemd
// looking alive, so units are enabled and started through the stub.
func newRoot(t *testing.T) string {
	t.Helper()
	tarball := rootTarball(t)
	root := overlayRoot(t, tarball)
	if root == "" {
		root = t.TempDir()
		// Ignition writes ssh keys as the user, who must reach the home
		// directory through the test's temporary directories.
		require.NoError(t, os.Chmod(root, 0o755))
		require.NoError(t, os.Chmod(filepath.Dir(root), 0o755))
		out, err := exec.Command("tar", unpackArgs(tarball, root)...).CombinedOutput()
		require.NoError(t, err, "unpack root: %s", out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/local/bin/systemctl"), []byte(conformance.SystemctlStub), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755))
	return root
}

var buildRoot sync.Once

// rootTarball is cloudinit-apply's cached root, built by a first run of
// the tool when missing.
func rootTarball(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("VALIDATORS_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			base = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "validators")
	}
	tarball := filepath.Join(cache, "bookworm-cloudinit-rootfs.tar.gz")
	buildRoot.Do(func() {
		if _, err := os.Stat(tarball); err == nil {
			return
		}
		dir := t.TempDir()
		ud := filepath.Join(dir, "user-data")
		require.NoError(t, os.WriteFile(ud, []byte("#cloud-config\n{}\n"), 0o600))
		out, err := exec.Command(testenv.Tool(t, "cloudinit-apply"), filepath.Join(dir, "root"), ud).CombinedOutput()
		require.NoError(t, err, "cloudinit-apply (to build the cached root):\n%s", out)
	})
	return tarball
}

// runScript runs the script in a chroot, as root, with /bin/sh.
func runScript(t *testing.T, _ conformance.Case, data []byte) conformance.Node {
	t.Helper()
	root := newRoot(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "nodeboot.sh"), data, 0o700))
	var stderr bytes.Buffer
	cmd := exec.Command("unshare", "--mount", "--net", "--pid", "--fork", "chroot", root, "/nodeboot.sh")
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C"}
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	n := conformance.Node{Root: root, Run: chroot(root)}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "run script: %v", err)
		n.ExitCode = ee.ExitCode()
	}
	t.Logf("script output:\n%s", stderr.String())
	events, err := conformance.ReadEvents(root)
	require.NoError(t, err)
	n.Events = events
	return n
}

// bootIgnition applies the config with ignition-apply to the Debian root,
// then does what systemd does next for the provisioner's own units: it
// runs the ExecStart of each enabled unit the Plan did not ask for (the
// boot commands before the first-boot commands), in the root, and checks
// every unit file with systemd's verifier.
func bootIgnition(t *testing.T, c conformance.Case, data []byte) conformance.Node {
	t.Helper()
	tool := testenv.Tool(t, "ignition-apply")
	root := newRoot(t)
	cfg := filepath.Join(t.TempDir(), "config.ign")
	require.NoError(t, os.WriteFile(cfg, data, 0o600))
	out, err := exec.Command(tool, root, cfg).CombinedOutput()
	require.NoError(t, err, "ignition-apply:\n%s", out)
	if c.Metadata != nil {
		standInMetadata(t, root, c.Metadata)
	}

	planUnits := map[string]bool{}
	for _, u := range c.Plan().Units {
		planUnits[u.Name] = true
	}
	units, err := filepath.Glob(filepath.Join(root, "etc/systemd/system/*.service"))
	require.NoError(t, err)
	var early, late, written []string
	for _, u := range units {
		name := filepath.Base(u)
		if fi, err := os.Lstat(u); err != nil || !fi.Mode().IsRegular() {
			continue // the image's aliases
		}
		written = append(written, u)
		content, err := os.ReadFile(u)
		require.NoError(t, err)
		if planUnits[name] || !enabledByPreset(t, root, name) {
			continue
		}
		if strings.Contains(string(content), "WantedBy=sysinit.target") {
			early = append(early, u)
		} else {
			late = append(late, u)
		}
	}
	n := conformance.Node{Root: root, Run: chroot(root)}
	for _, u := range append(early, late...) {
		content, _ := os.ReadFile(u)
		m := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindSubmatch(content)
		require.NotNil(t, m, "%s has no ExecStart", u)
		cmd := exec.Command("unshare", "--mount", "--net", "--pid", "--fork", "chroot", root, "/bin/sh", "-c", environmentFiles(t, u, content)+"cd / && exec "+string(m[1]))
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C"}
		out, err := cmd.CombinedOutput()
		t.Logf("%s:\n%s", filepath.Base(u), out)
		if err != nil {
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "run %s: %v", u, err)
			n.ExitCode = ee.ExitCode()
			break // systemd would not start what is ordered after a failed oneshot
		}
	}
	verifyUnits(t, root, written)
	events, err := conformance.ReadEvents(root)
	require.NoError(t, err)
	n.Events = events
	return n
}

// metadataAgent is the unit that writes /run/metadata/flatcar on Flatcar.
const metadataAgent = "coreos-metadata.service"

// standInMetadata does what Flatcar's metadata agent does before the
// units that need it: it writes the instance metadata as an environment
// file. The agent's unit is written too, a stand-in that does nothing, so
// systemd's verifier resolves the dependencies on it.
func standInMetadata(t *testing.T, root string, m map[provisioning.NodeValue]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run/metadata"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "run/metadata/flatcar"), []byte(conformance.FlatcarMetadata(m)), 0o644))
	unit := "[Unit]\nDescription=stand-in for Flatcar's metadata agent\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/lib/systemd/system", metadataAgent), []byte(unit), 0o644))
}

var environmentFile = regexp.MustCompile(`(?m)^EnvironmentFile=(-?)(.*)$`)

// environmentFiles is the shell that loads a unit's EnvironmentFile=s, as
// systemd does before ExecStart: a file without "-" must exist. A unit
// that reads the metadata agent's file must also be ordered after the
// agent, or systemd may start it before the file is written.
func environmentFiles(t *testing.T, unit string, content []byte) string {
	t.Helper()
	var sh strings.Builder
	for _, m := range environmentFile.FindAllSubmatch(content, -1) {
		f := string(m[2])
		if strings.HasPrefix(f, "/run/metadata/") {
			after := regexp.MustCompile(`(?m)^After=.*\b` + regexp.QuoteMeta(metadataAgent) + `\b`)
			require.True(t, after.Match(content), "%s reads %s but is not ordered after %s", unit, f, metadataAgent)
		}
		if string(m[1]) == "-" {
			sh.WriteString("[ ! -e " + f + " ] || ")
		}
		sh.WriteString("{ set -a && . " + f + " && set +a; } && ")
	}
	return sh.String()
}

func enabledByPreset(t *testing.T, root, unit string) bool {
	t.Helper()
	presets, err := filepath.Glob(filepath.Join(root, "etc/systemd/system-preset/*.preset"))
	require.NoError(t, err)
	for _, p := range presets {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		if bytes.Contains(data, []byte("enable "+unit+"\n")) {
			return true
		}
	}
	return false
}

// bootLegacyIgnition turns CABPK's Ignition 2.3 into spec 3 as Flatcar's
// Ignition does (the 0.36.2 parser, then Flatcar's v24tov31, as
// test/ignition's TestLegacyAppliedAsFlatcar) and boots that.
func bootLegacyIgnition(t *testing.T, c conformance.Case, data []byte) conformance.Node {
	t.Helper()
	cfg, r, err := ign24.Parse(data)
	require.NoError(t, err, r.String())
	translated, err := v24tov31.Translate(cfg, map[string]string{})
	require.NoError(t, err, "Flatcar's translation")
	// A departure that fails the whole boot (a README row): the legacy
	// layout does not create the groups a user names, so useradd fails.
	// The group is added here, as a user would, to check the rest.
	added := map[string]bool{}
	for _, u := range c.Plan().Users {
		for _, g := range strings.Split(u.Groups, ",") {
			if g = strings.TrimSpace(g); g != "" && !added[g] {
				added[g] = true
				translated.Passwd.Groups = append(translated.Passwd.Groups, v31.PasswdGroup{Name: g})
			}
		}
	}
	spec3, err := json.Marshal(translated)
	require.NoError(t, err)
	return bootIgnition(t, c, spec3)
}

// verifyUnits runs systemd's own unit verifier on the applied root.
func verifyUnits(t *testing.T, root string, units []string) {
	t.Helper()
	if len(units) == 0 {
		return
	}
	// .ci/run installs it (systemd, through systemd-container); a machine
	// without it must not pass with the units unverified.
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze is needed to verify the units: %v", err)
	}
	// The Debian root has no systemd; the host's units stand in for the
	// image's (sysinit.target and the rest every unit's start job needs).
	sys := filepath.Join(root, "usr/lib/systemd/system")
	require.NoError(t, os.MkdirAll(sys, 0o755))
	if out, err := exec.Command("cp", "-an", "/usr/lib/systemd/system/.", sys).CombinedOutput(); err != nil {
		t.Fatalf("copy the host's units: %v\n%s", err, out)
	}
	args := []string{"verify", "--root=" + root, "--man=no", "--generators=no"}
	for _, u := range units {
		args = append(args, strings.TrimPrefix(u, root))
	}
	out, err := exec.Command(analyze, args...).CombinedOutput()
	require.NoError(t, err, "systemd-analyze %s:\n%s", strings.Join(args, " "), out)
	if len(bytes.TrimSpace(out)) > 0 {
		t.Logf("systemd-analyze verify:\n%s", out)
	}
}
