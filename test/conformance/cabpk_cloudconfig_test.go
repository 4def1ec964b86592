package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// cabpkCloudConfig is CABPK's cloud-config dialect, applied by cloud-init
// as the plain dialect is.
var cabpkCloudConfig = target{cloudinit.Format, provisioning.VersionCABPK, bootCloudInit}

// conformanceTargets are every provisioner and dialect: TestConformance's
// targets and CABPK's cloud-config.
func conformanceTargets() []target {
	out := append([]target(nil), targets...)
	for _, tg := range out {
		if tg.String() == cabpkCloudConfig.String() {
			return out
		}
	}
	return append(out, cabpkCloudConfig)
}

// cabpkCloudConfigDepartures are where CABPK's cloud-config bytes mean
// something else than the Plan, by Case: the rows of the README's meaning
// table, as the node shows them.
var cabpkCloudConfigDepartures = map[string]func(w *conformance.State){
	// bootcmd is one /bin/sh script too: the first boot command's
	// variable reaches the second.
	"boot-commands": func(w *conformance.State) {
		w.Log = []string{"boot one", "boot two saw boot one's variable", "bootstrap"}
	},
	// write_files sets the mode before the owner (root:root by default),
	// and chown clears setuid, and setgid on a group-executable file (a
	// warning at the field).
	"file-modes": func(w *conformance.State) {
		for i := range w.Files {
			w.Files[i].Mode &^= os.ModeSetuid | os.ModeSetgid
		}
	},
	// All runcmd lines are one /bin/sh script without -e: a failing
	// command stops nothing, the script ends with the last line's status,
	// and the bootstrap line's "&& echo success" writes the sentinel.
	"failing-command": func(w *conformance.State) {
		w.Log = []string{"pre1", "pre2", "after-failure", "pre3", "bootstrap", "post"}
		w.ExitCode = 0
		w.Absent = nil
		w.Files = append(w.Files, conformance.File{Path: conformance.Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"})
	},
}

// legacyIgnitionDepartures are CABPK's Ignition 2.3 departures for the
// element cases, by Case.
var legacyIgnitionDepartures = map[string]func(w *conformance.State){
	// CABPK writes the hash as it is whatever lockPassword says (a
	// warning): the password is usable.
	"accounts": func(w *conformance.State) {
		for i, ct := range w.Contains {
			w.Contains[i].Text = strings.Replace(ct.Text, ":!", ":", 1)
		}
	},
}

// nothingRan is the node cloud-init leaves when it cannot parse the user
// data (a "{{ }}" under CABPK's jinja header, an unquoted ": " in a sudo
// rule), which the CABPK dialect warns of ("runs none of"): no file,
// no command, no sentinel.
func nothingRan(p *provisioning.Plan, warnings provisioning.Problems, w *conformance.State) bool {
	found := false
	for _, pr := range warnings {
		found = found || strings.Contains(pr.Message, "runs none of")
	}
	if !found {
		return false
	}
	absent := []string{}
	for _, f := range p.Files {
		absent = append(absent, f.Path)
	}
	if p.Sentinel != "" {
		absent = append(absent, p.Sentinel)
	}
	*w = conformance.State{Absent: absent}
	return true
}

// TestConformanceCABPKCloudConfig runs every Case through CABPK's
// cloud-config dialect and Debian's cloud-init, with the dialect's
// departures from the Plan's meaning as the expected state.
func TestConformanceCABPKCloudConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not booting nodes with the real tools")
	}
	testenv.RequireRoot(t)
	for _, c := range conformance.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			runCase(t, cabpkCloudConfig, c, cabpkCloudConfigDepartures[c.Name])
		})
	}
}

// bootUnprocessed applies user data cloud-init is expected to give up on.
// cloudinit-apply fails when a part handler failed (a jinja syntax error),
// since then nothing ran; that failure is the expected outcome here, and
// the node is checked for having nothing of the Plan.
func bootUnprocessed(t *testing.T, _ conformance.Case, data []byte) conformance.Node {
	t.Helper()
	dir := t.TempDir()
	ud := filepath.Join(dir, "user-data")
	require.NoError(t, os.WriteFile(ud, data, 0o600))
	root := filepath.Join(dir, "root")
	cmd := exec.Command(testenv.Tool(t, "cloudinit-apply"), root, ud)
	cmd.Env = append(os.Environ(), "STUB_CMDS=systemctl")
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "cloud-init could not process the user data") {
		t.Fatalf("cloudinit-apply: %v\n%s", err, out)
	}
	events, err := conformance.ReadEvents(root, "/var/log/validators-stub-calls.log")
	require.NoError(t, err)
	return conformance.Node{Root: root, Run: chroot(root), Events: events}
}
