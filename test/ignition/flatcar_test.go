package ignition

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	v31 "github.com/coreos/ignition/v2/config/v3_1/types"
	ign23 "github.com/flatcar/ignition/config/v2_3"
	v23 "github.com/flatcar/ignition/config/v2_3/types"
	ign24 "github.com/flatcar/ignition/config/v2_4"
	v24 "github.com/flatcar/ignition/config/v2_4/types"
	"github.com/stretchr/testify/require"
	"github.com/vincent-petithory/dataurl"

	"github.com/nodeboot/nodeboot/internal/third_party/flatcar/v24tov31"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// Flatcar Container Linux from 3185 on runs Ignition v2 (spec 3) and turns a
// spec-2 config into spec 3 while it parses it. Flatcar's Ignition is
// upstream's plus patches (flatcar/scripts,
// sdk_container/src/third_party/coreos-overlay/sys-apps/ignition/files):
//
//   - 0003-config-v3_7-convert-ignition-2.x-to-3.x.patch: in
//     ParseCompatibleVersion of the newest config package, a config whose major
//     version is not 3 is parsed with github.com/flatcar/ignition/config/v2_4
//     (Ignition 0.36.2: a 2.3.0 config is parsed by v2_3 and translated up to
//     2.4), handed to v24tov31.Translate(cfg, map[string]string{}), marshalled
//     as 3.1.0 JSON and then parsed like any 3.x config, translated up to the
//     newest spec.
//   - 0001-config-add-ignition-translation.patch, with 0010 and 0015 on top:
//     config/v24tov31, "a merge from flatcar/ign-converter", and the helpers
//     it adds to config/util.
//
// The test does the same with the same code: the real 0.36.2 parser, and
// Flatcar's v24tov31 and util files vendored unchanged (bar import paths) in
// internal/third_party/flatcar, whose README gives their source and commits;
// they are vendored because no module that holds them can be fetched. The
// validator is upstream ignition-validate and the engine upstream Ignition
// v2.25.0, which parses 3.1.0 and translates it up as Flatcar's chain does.
//
// Two properties of the real translator show in what this test writes: the
// units come out in Go map order, so a translated config's bytes vary from
// run to run, and util.FSGeneration numbers the "/tmp/<name>-ign<N>" paths it
// gives unmapped filesystems with process-wide counters.

// flatcarHazards lists what in CABPK's output stops a Flatcar node from
// booting, per vector: the error Flatcar's translation or the real engine
// gives. The rest of such a config is still applied, without what is
// refused (dropped) or with what a user would add to get past it (fixed).
var flatcarHazards = map[string]struct {
	translate string
	dropped   func(*v24.Config)
	apply     string
	fixed     func(*v31.Config)
}{
	"ign-init-all-features-v1.35": {
		// diskSetup.partitions with layout: true becomes "partitions": [{}],
		// which spec 2 reads as "the next free slot" and spec 3 rejects;
		// kubernetes-sigs/cluster-api#7679 shows this error on a real Flatcar.
		translate: "error at $.storage.disks.0.partitions.0: a partition number >= 1 or a label must be specified",
		dropped:   func(c *v24.Config) { c.Storage.Disks = nil },
		// users[].primaryGroup becomes --gid capi, and neither CABPK nor a
		// Flatcar image creates that group; spec-2 Ignition runs the same
		// useradd, so this is not the translation's doing.
		apply: "useradd: group 'capi' does not exist",
		fixed: func(c *v31.Config) { c.Passwd.Groups = append(c.Passwd.Groups, v31.PasswdGroup{Name: "capi"}) },
	},
}

// flatcarVector is one ign-* vector on its way through Flatcar.
type flatcarVector struct {
	name   string
	legacy v23.Config // what the expectations come from
	// translated is what Flatcar's translation gives; applied is what is
	// applied and checked, the same unless a hazard needs a fix.
	translated, applied []byte
}

// TestLegacyAppliedAsFlatcar takes CABPK's Ignition 2.3 output for every
// ign-* vector, checks nodeboot renders the same bytes, translates it the way
// Flatcar's Ignition does, validates the results with ignition-validate in one
// call and applies each with the real Ignition engine.
func TestLegacyAppliedAsFlatcar(t *testing.T) {
	validateTool := testenv.Tool(t, "ignition-validate")
	applyTool := testenv.Tool(t, "ignition-apply")
	testenv.RequireRoot(t)
	dir := t.TempDir()
	var vectors []flatcarVector
	var files []string
	write := func(name string, data []byte) {
		file := filepath.Join(dir, name+".ign")
		require.NoError(t, os.WriteFile(file, data, 0o600))
		files = append(files, file)
	}
	for _, vdir := range testenv.Vectors(t, "ign-") {
		name := filepath.Base(vdir)
		hazard := flatcarHazards[name]
		raw, err := os.ReadFile(filepath.Join(vdir, "bootstrap-data"))
		require.NoError(t, err)
		out, err := build(t, vdir).Render()
		require.NoError(t, err, name)
		require.Equal(t, string(raw), string(out.Data), "%s: nodeboot's legacy output", name)

		legacy, r, err := ign23.Parse(raw)
		require.NoError(t, err, "%s: %s", name, r.String())
		require.Equal(t, "2.3.0", legacy.Ignition.Version, name)
		cfg24, r, err := ign24.Parse(raw)
		require.NoError(t, err, "%s: %s", name, r.String())
		translated, err := v24tov31.Translate(cfg24, map[string]string{})
		if hazard.translate != "" {
			require.Error(t, err, name)
			require.Equal(t, hazard.translate, strings.TrimSpace(err.Error()), "%s: Flatcar's translation", name)
			hazard.dropped(&cfg24)
			translated, err = v24tov31.Translate(cfg24, map[string]string{})
		}
		require.NoError(t, err, "%s: Flatcar's translation", name)
		v := flatcarVector{name: name, legacy: legacy}
		v.translated, err = json.Marshal(translated)
		require.NoError(t, err)
		write(name, v.translated)
		v.applied = v.translated
		if hazard.fixed != nil {
			hazard.fixed(&translated)
			v.applied, err = json.Marshal(translated)
			require.NoError(t, err)
			write(name+"-fixed", v.applied)
		}
		vectors = append(vectors, v)
	}

	out, err := exec.Command(validateTool, append([]string{"--spec", "3.1.0"}, files...)...).CombinedOutput()
	require.NoError(t, err, "ignition-validate:\n%s", out)
	valid := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "OK ") {
			valid++
		}
	}
	require.Equal(t, len(files), valid, "ignition-validate:\n%s", out)

	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			if want := flatcarHazards[v.name].apply; want != "" {
				root := seedRoot(t)
				cfg := filepath.Join(t.TempDir(), "config.ign")
				require.NoError(t, os.WriteFile(cfg, v.translated, 0o600))
				out, err := exec.Command(applyTool, root, cfg).CombinedOutput()
				require.Error(t, err, "ignition-apply:\n%s", out)
				require.Contains(t, string(out), want)
			}
			root := apply(t, v.applied)
			require.NoError(t, checkFlatcarRoot(root, v.legacy))

			// The same root against a wrong expectation must be refused, or
			// the checks above prove nothing.
			wrongMode := mutateFile(t, v.legacy, "/etc/kubeadm.yml", func(f *v23.File) { f.Mode = intP(0o644) })
			require.ErrorContains(t, checkFlatcarRoot(root, wrongMode), "/etc/kubeadm.yml: mode 0600, want 0644")
			wrongData := mutateFile(t, v.legacy, "/etc/kubeadm.sh", func(f *v23.File) { f.Contents.Source = "data:,kubeadm%20reset%0A" })
			require.ErrorContains(t, checkFlatcarRoot(root, wrongData), "/etc/kubeadm.sh: content differs")
		})
	}
}

// mutateFile returns a deep copy of cfg with change applied to the file at p.
func mutateFile(t *testing.T, cfg v23.Config, p string, change func(*v23.File)) v23.Config {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	var out v23.Config
	require.NoError(t, json.Unmarshal(raw, &out))
	for i := range out.Storage.Files {
		if out.Storage.Files[i].Path == p {
			change(&out.Storage.Files[i])
			return out
		}
	}
	t.Fatalf("no file %s to mutate", p)
	return out
}

func intP(i int) *int { return &i }

func boolP(b bool) *bool { return &b }

// kubeadmCommand finds the kubeadm init/join line of CABPK's /etc/kubeadm.sh.
var kubeadmCommand = regexp.MustCompile(`(?m)^\s*(kubeadm (init|join)\b.*)$`)

// checkFlatcarRoot checks an applied root against the spec-2.3 config it came
// from, as spec-2 Ignition would have applied it: files, units, users, and
// CABPK's kubeadm bootstrap in particular. It returns every mismatch.
func checkFlatcarRoot(root string, cfg v23.Config) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	passwd, err := readTable(filepath.Join(root, "etc/passwd"))
	if err != nil {
		return err
	}
	group, err := readTable(filepath.Join(root, "etc/group"))
	if err != nil {
		return err
	}

	// Files: a later entry for a path replaces an earlier one unless it appends.
	type want struct {
		file v23.File
		data []byte
	}
	var paths []string
	files := map[string]*want{}
	for _, f := range cfg.Storage.Files {
		if f.Filesystem != "root" {
			fail("%s: on filesystem %q, which this check does not map", f.Path, f.Filesystem)
			continue
		}
		data, err := legacyContents(f.Contents)
		if err != nil {
			fail("%s: %v", f.Path, err)
			continue
		}
		w, ok := files[f.Path]
		switch {
		case !ok:
			paths = append(paths, f.Path)
			files[f.Path] = &want{file: f, data: data}
		case f.Append:
			w.data = append(w.data, data...)
		default:
			*w = want{file: f, data: data}
		}
	}
	for _, p := range paths {
		w := files[p]
		st, err := os.Lstat(filepath.Join(root, p))
		if err != nil || !st.Mode().IsRegular() {
			fail("%s: not written (%v)", p, err)
			continue
		}
		mode := os.FileMode(0o644)
		if w.file.Mode != nil {
			mode = os.FileMode(*w.file.Mode)
		}
		if st.Mode().Perm() != mode {
			fail("%s: mode %04o, want %04o", p, st.Mode().Perm(), mode)
		}
		got, err := os.ReadFile(filepath.Join(root, p))
		if err != nil || !bytes.Equal(got, w.data) {
			fail("%s: content differs from the 2.3 source (%d bytes, want %d; %v)", p, len(got), len(w.data), err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if uid, err := nodeID(passwd, w.file.User); err != nil || uid != int(sys.Uid) {
			fail("%s: uid %d, want %d (%v)", p, sys.Uid, uid, err)
		}
		if gid, err := nodeGroupID(group, w.file.Group); err != nil || gid != int(sys.Gid) {
			fail("%s: gid %d, want %d (%v)", p, sys.Gid, gid, err)
		}
	}

	// Units: spec-2 Ignition writes each entry in turn, so the last contents
	// and the last drop-in of each name win.
	presets, err := readPresets(root)
	if err != nil {
		fail("presets: %v", err)
	}
	type unitWant struct {
		contents *string
		dropins  map[string]string
		enabled  *bool
		mask     bool
	}
	var unitNames []string
	units := map[string]*unitWant{}
	for _, u := range cfg.Systemd.Units {
		w, ok := units[u.Name]
		if !ok {
			w = &unitWant{dropins: map[string]string{}}
			units[u.Name] = w
			unitNames = append(unitNames, u.Name)
		}
		if u.Contents != "" {
			c := u.Contents
			w.contents = &c
		}
		for _, d := range u.Dropins {
			w.dropins[d.Name] = d.Contents
		}
		if u.Enable || (u.Enabled != nil && *u.Enabled) {
			w.enabled = boolP(true)
		} else if u.Enabled != nil && w.enabled == nil {
			no := false
			w.enabled = &no
		}
		w.mask = w.mask || u.Mask
	}
	for _, name := range unitNames {
		w := units[name]
		unitPath := filepath.Join(root, "etc/systemd/system", name)
		if w.contents != nil {
			if got, err := os.ReadFile(unitPath); err != nil || string(got) != *w.contents {
				fail("unit %s: file missing or different (%v)", name, err)
			}
		}
		for d, contents := range w.dropins {
			if got, err := os.ReadFile(filepath.Join(unitPath+".d", d)); err != nil || string(got) != contents {
				fail("unit %s: drop-in %s missing or different (%v)", name, d, err)
			}
		}
		if w.enabled != nil {
			line := "enable " + name
			if !*w.enabled {
				line = "disable " + name
			}
			if !presets[line] {
				fail("unit %s: no preset %q", name, line)
			}
		}
		if w.mask {
			if target, err := os.Readlink(unitPath); err != nil || target != "/dev/null" {
				fail("unit %s: not masked (%v)", name, err)
			}
		}
	}

	// Users.
	shadow, err := readTable(filepath.Join(root, "etc/shadow"))
	if err != nil {
		fail("shadow: %v", err)
	}
	for _, u := range cfg.Passwd.Users {
		entry, ok := passwd[u.Name]
		if !ok {
			fail("user %s: not in /etc/passwd", u.Name)
			continue
		}
		home := "/home/" + u.Name
		if u.HomeDir != "" {
			home = u.HomeDir
		}
		if len(entry) < 7 || entry[5] != home {
			fail("user %s: passwd entry %q, want home %s", u.Name, strings.Join(entry, ":"), home)
			continue
		}
		if g := group[u.PrimaryGroup]; u.PrimaryGroup != "" && (len(g) < 3 || g[2] != entry[3]) {
			fail("user %s: gid %s is not group %s", u.Name, entry[3], u.PrimaryGroup)
		}
		if u.Shell != "" && entry[6] != u.Shell {
			fail("user %s: shell %s, want %s", u.Name, entry[6], u.Shell)
		}
		for _, g := range u.Groups {
			if members := group[string(g)]; len(members) < 4 || !contains(strings.Split(members[3], ","), u.Name) {
				fail("user %s: not in group %s", u.Name, g)
			}
		}
		if u.PasswordHash != nil {
			if s := shadow[u.Name]; len(s) < 2 || s[1] != *u.PasswordHash {
				fail("user %s: /etc/shadow hash differs from passwordHash", u.Name)
			}
		}
		if len(u.SSHAuthorizedKeys) > 0 {
			keys, err := os.ReadFile(filepath.Join(root, home, ".ssh/authorized_keys.d/ignition"))
			lines := strings.Split(string(keys), "\n")
			for _, k := range u.SSHAuthorizedKeys {
				if err != nil || !contains(lines, string(k)) {
					fail("user %s: ssh key %.30q... not in %s/.ssh/authorized_keys.d/ignition (%v)", u.Name, k, home, err)
				}
			}
		}
	}

	// CABPK's bootstrap: the script, its config and the unit that runs it.
	script, yml := files["/etc/kubeadm.sh"], files["/etc/kubeadm.yml"]
	switch {
	case script == nil || yml == nil:
		fail("the 2.3 config has no /etc/kubeadm.sh or /etc/kubeadm.yml")
	default:
		for _, c := range []struct {
			w    *want
			mode int
		}{{script, 0o700}, {yml, 0o600}} {
			if c.w.file.Mode == nil || *c.w.file.Mode != c.mode {
				fail("%s: the 2.3 config does not give CABPK's mode %04o", c.w.file.Path, c.mode)
			}
		}
		cmd := kubeadmCommand.FindSubmatch(script.data)
		if cmd == nil {
			fail("/etc/kubeadm.sh in the 2.3 config runs no kubeadm init/join")
		} else if got, err := os.ReadFile(filepath.Join(root, "etc/kubeadm.sh")); err != nil || !bytes.Contains(got, cmd[1]) {
			fail("/etc/kubeadm.sh: applied script lacks %q (%v)", cmd[1], err)
		}
	}
	if u := units["kubeadm.service"]; u == nil || u.contents == nil || u.enabled == nil || !*u.enabled {
		fail("the 2.3 config has no enabled kubeadm.service with contents")
	} else if !strings.Contains(*u.contents, "ExecStart=/bin/bash /etc/kubeadm.sh") {
		fail("kubeadm.service does not run /etc/kubeadm.sh")
	}
	return errors.Join(errs...)
}

// legacyContents decodes a spec-2 file source, which CABPK always inlines.
func legacyContents(c v23.FileContents) ([]byte, error) {
	if c.Source == "" {
		return nil, nil
	}
	u, err := dataurl.DecodeString(c.Source)
	if err != nil {
		return nil, fmt.Errorf("source is not a data URL: %w", err)
	}
	if c.Compression != "gzip" {
		return u.Data, nil
	}
	z, err := gzip.NewReader(bytes.NewReader(u.Data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// readTable reads /etc/passwd, group or shadow into name -> fields.
func readTable(p string) (map[string][]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Split(s.Text(), ":")
		out[fields[0]] = fields
	}
	return out, s.Err()
}

// readPresets collects the lines of every preset file Ignition wrote.
func readPresets(root string) (map[string]bool, error) {
	dir := filepath.Join(root, "etc/systemd/system-preset")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			out[strings.TrimSpace(line)] = true
		}
	}
	return out, nil
}

// nodeID is the uid a spec-2 node's user means; root when unset.
func nodeID(passwd map[string][]string, u *v23.NodeUser) (int, error) {
	if u == nil {
		return 0, nil
	}
	return tableID(passwd, u.ID, u.Name)
}

func nodeGroupID(group map[string][]string, g *v23.NodeGroup) (int, error) {
	if g == nil {
		return 0, nil
	}
	return tableID(group, g.ID, g.Name)
}

func tableID(table map[string][]string, id *int, name string) (int, error) {
	switch {
	case id != nil:
		return *id, nil
	case name == "":
		return 0, nil
	}
	entry, ok := table[name]
	if !ok || len(entry) < 3 {
		return -1, fmt.Errorf("%s unknown in the target", name)
	}
	return strconv.Atoi(entry[2])
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
