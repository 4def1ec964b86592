package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Node is a root directory after a first boot, as a runner observed it.
type Node struct {
	// Root is the node's root directory on the host.
	Root string
	// Run runs a command inside the node (a chroot of Root) and returns
	// its combined output; nil skips what needs it (`sudo -l -U`).
	Run func(argv ...string) ([]byte, error)
	// Events are the commands' log lines and the systemctl calls, in the
	// order they happened, without timestamps (see ReadEvents).
	Events []string
	// ExitCode is the exit status the boot's commands ended with.
	ExitCode int
}

// ReadEvents reads LogFile and the other logs under root (same
// "<timestamp> <text>" lines, such as a tool's stub log) and merges them in
// time order. Missing logs are empty.
func ReadEvents(root string, others ...string) ([]string, error) {
	type event struct {
		at   float64
		text string
	}
	var all []event
	for _, name := range append([]string{LogFile}, others...) {
		f, err := os.Open(filepath.Join(root, name)) //nolint:gosec // G304: a log inside the node the caller names
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			at, text, _ := strings.Cut(s.Text(), " ")
			t, err := strconv.ParseFloat(at, 64)
			if err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("%s: line %q has no timestamp", name, s.Text())
			}
			all = append(all, event{t, strings.Join(strings.Fields(text), " ")})
		}
		_ = f.Close() // read only: nothing to flush
		if err := s.Err(); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = e.text
	}
	return out, nil
}

// Verify returns every way n differs from c.Want, joined, or nil.
func (c Case) Verify(n Node) error {
	v := &verifier{n: n}
	w := c.Want
	for _, f := range w.Files {
		v.file(f)
	}
	for _, p := range w.Absent {
		if _, err := os.Lstat(v.path(p)); !errors.Is(err, os.ErrNotExist) {
			v.failf("%s exists, it must not", p)
		}
	}
	for _, u := range w.Users {
		v.user(u)
	}
	for _, u := range w.Units {
		v.unit(u)
	}
	for _, ct := range w.Contains {
		v.contains(ct)
	}
	var lines []string
	for _, e := range n.Events {
		if !strings.HasPrefix(e, "systemctl ") {
			lines = append(lines, e)
		}
	}
	if strings.Join(lines, "\n") != strings.Join(w.Log, "\n") {
		v.failf("the commands logged %q, want %q", lines, w.Log)
	}
	if n.ExitCode != w.ExitCode {
		v.failf("the commands ended with exit code %d, want %d", n.ExitCode, w.ExitCode)
	}
	return errors.Join(v.errs...)
}

type verifier struct {
	n    Node
	errs []error
}

func (v *verifier) failf(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

func (v *verifier) path(p string) string { return filepath.Join(v.n.Root, p) }

func (v *verifier) file(f File) {
	fi, err := os.Stat(v.path(f.Path))
	if err != nil {
		v.failf("%s: %v", f.Path, err)
		return
	}
	data, err := os.ReadFile(v.path(f.Path))
	if err != nil {
		v.failf("%s: %v", f.Path, err)
		return
	}
	if string(data) != f.Content {
		v.failf("%s holds %q, want %q", f.Path, data, f.Content)
	}
	if got := fi.Mode().Perm() | fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky); got != f.Mode {
		v.failf("%s has mode %04o, want %04o", f.Path, got, f.Mode)
	}
	st := fi.Sys().(*syscall.Stat_t)
	owner := v.name("passwd", st.Uid) + ":" + v.name("group", st.Gid)
	if owner != f.Owner {
		v.failf("%s is owned by %s, want %s", f.Path, owner, f.Owner)
	}
}

// entries reads an account database of the node: name -> fields.
func (v *verifier) entries(db string) map[string][]string {
	data, err := os.ReadFile(v.path("/etc/" + db))
	if err != nil {
		v.failf("/etc/%s: %v", db, err)
		return nil
	}
	out := map[string][]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Split(l, ":"); len(f) >= 3 {
			out[f[0]] = f
		}
	}
	return out
}

func (v *verifier) name(db string, id uint32) string {
	for name, f := range v.entries(db) {
		if f[2] == strconv.FormatUint(uint64(id), 10) {
			return name
		}
	}
	return strconv.FormatUint(uint64(id), 10)
}

func (v *verifier) user(u User) {
	pw, ok := v.entries("passwd")[u.Name]
	if !ok || len(pw) < 7 {
		v.failf("user %s does not exist", u.Name)
		return
	}
	groups := v.entries("group")
	for _, g := range u.Groups {
		gr, ok := groups[g]
		if !ok || len(gr) < 4 {
			v.failf("group %s of %s does not exist", g, u.Name)
			continue
		}
		if !contains(strings.Split(gr[3], ","), u.Name) {
			v.failf("%s is not a member of %s", u.Name, g)
		}
	}
	if len(u.SSHKeys) > 0 {
		keys := v.authorizedKeys(pw[5])
		for _, k := range u.SSHKeys {
			if !contains(keys, k) {
				v.failf("%s's authorized keys lack %q", u.Name, k)
			}
		}
	}
	if u.Sudo != "" && v.n.Run != nil {
		out, err := v.n.Run("sudo", "-l", "-U", u.Name)
		if err != nil || !strings.Contains(string(out), u.Sudo) {
			v.failf("sudo -l -U %s does not list %q (err %v):\n%s", u.Name, u.Sudo, err, out)
		}
	}
}

// authorizedKeys are the keys sshd reads for a home directory: the
// authorized_keys file and, where Ignition puts them, the fragments in
// authorized_keys.d.
func (v *verifier) authorizedKeys(home string) []string {
	files := []string{filepath.Join(home, ".ssh/authorized_keys")}
	frags, _ := filepath.Glob(v.path(filepath.Join(home, ".ssh/authorized_keys.d/*")))
	for _, f := range frags {
		files = append(files, strings.TrimPrefix(f, v.n.Root))
	}
	var keys []string
	for _, f := range files {
		data, err := os.ReadFile(v.path(f))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				keys = append(keys, l)
			}
		}
	}
	return keys
}

var startVerb = regexp.MustCompile(`^systemctl (start|restart|reload-or-restart|enable --now|try-restart) (.+)$`)

func (v *verifier) unit(u Unit) {
	if u.Contents != "" {
		if data, err := os.ReadFile(v.path(provisioning.UnitFile(u.Name))); err != nil || string(data) != u.Contents {
			v.failf("unit %s: file %s does not hold the unit (err %v)", u.Name, provisioning.UnitFile(u.Name), err)
		}
	}
	for name, want := range u.DropIns {
		p := provisioning.DropInFile(u.Name, name)
		if data, err := os.ReadFile(v.path(p)); err != nil || string(data) != want {
			v.failf("unit %s: drop-in %s does not hold %q (err %v)", u.Name, p, want, err)
		}
	}
	if !u.Enabled {
		return
	}
	if !v.enabled(u.Name) {
		v.failf("unit %s is not enabled (no systemctl enable, preset or wants link)", u.Name)
	}
	if u.StartedAfter == "" {
		return
	}
	after := -1
	for i, e := range v.n.Events {
		if e == u.StartedAfter {
			after = i
		}
	}
	if after < 0 {
		v.failf("unit %s: %q was never logged, so it cannot have started after it", u.Name, u.StartedAfter)
		return
	}
	for _, e := range v.n.Events[after+1:] {
		if m := startVerb.FindStringSubmatch(e); m != nil && contains(strings.Fields(m[2]), u.Name) {
			return
		}
	}
	v.failf("unit %s is not started after %q; events: %q", u.Name, u.StartedAfter, v.n.Events)
}

// enabled: a systemctl enable call, a preset that enables the unit (what
// Ignition writes), or a link in a .wants directory.
func (v *verifier) enabled(unit string) bool {
	for _, e := range v.n.Events {
		if f := strings.Fields(e); len(f) >= 3 && f[0] == "systemctl" && f[1] == "enable" && contains(f[2:], unit) {
			return true
		}
	}
	presets, _ := filepath.Glob(v.path("/etc/systemd/system-preset/*.preset"))
	for _, p := range presets {
		data, _ := os.ReadFile(p) //nolint:gosec // G304: a preset file inside the node
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Join(strings.Fields(l), " ") == "enable "+unit {
				return true
			}
		}
	}
	links, _ := filepath.Glob(v.path("/etc/systemd/system/*.wants/" + unit))
	return len(links) > 0
}

func (v *verifier) contains(c Contains) {
	for _, p := range c.Paths {
		if data, err := os.ReadFile(v.path(p)); err == nil && strings.Contains(string(data), c.Text) {
			return
		}
	}
	v.failf("none of %v contains %q", c.Paths, c.Text)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Missing lists the Elements c uses that s does not support: a format with
// any must refuse c's Plan (see Refused).
func (c Case) Missing(s provisioning.Support) []provisioning.Element {
	var out []provisioning.Element
	for _, e := range c.Uses {
		if !s.Supports(e) {
			out = append(out, e)
		}
	}
	return out
}

var index = regexp.MustCompile(`\[[0-9]+\]`)

// Refused checks that err, from rendering c's Plan, is ErrUnsupported
// with a problem at the field of each missing Element.
func Refused(err error, missing []provisioning.Element) error {
	if !errors.Is(err, provisioning.ErrUnsupported) {
		return fmt.Errorf("rendering must fail with ErrUnsupported for %v, got %w", missing, err)
	}
	var ps provisioning.Problems
	if !errors.As(err, &ps) {
		return fmt.Errorf("the error carries no Problems: %w", err)
	}
	var errs []error
	for _, e := range missing {
		field, _, _ := strings.Cut(string(e), "=")
		found := false
		for _, p := range ps {
			path := index.ReplaceAllString(p.Path.String(), "")
			if errors.Is(p.Err, provisioning.ErrUnsupported) && (path == field || strings.HasPrefix(path, field+".")) {
				found = true
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("no ErrUnsupported problem at %s in %w", field, ps))
		}
	}
	return errors.Join(errs...)
}

// Classes checks that err, from a provisioner's Render or Check, is in the
// error classes the Plan's contract gives it: errors.Is(err,
// provisioning.ErrInvalid) exactly when invalid, errors.Is(err,
// provisioning.ErrUnsupported) exactly when unsupported, and errors.Is with
// each non-nil error of also. Callers match with errors.Is, never on a
// message, so the classes are what a provider's caller can rely on. A nil
// err always fails (Classes checks errors the caller expects), and a
// failure names err's text without wrapping it, so the report itself is in
// no class.
func Classes(err error, invalid, unsupported bool, also ...error) error {
	if err == nil {
		return errors.New("no error")
	}
	var errs []error
	if got := errors.Is(err, provisioning.ErrInvalid); got != invalid {
		errs = append(errs, fmt.Errorf("errors.Is(ErrInvalid) = %v, want %v: %s", got, invalid, err.Error()))
	}
	if got := errors.Is(err, provisioning.ErrUnsupported); got != unsupported {
		errs = append(errs, fmt.Errorf("errors.Is(ErrUnsupported) = %v, want %v: %s", got, unsupported, err.Error()))
	}
	for _, a := range also {
		if a != nil && !errors.Is(err, a) {
			errs = append(errs, fmt.Errorf("errors.Is(%q) = false: %s", a.Error(), err.Error()))
		}
	}
	return errors.Join(errs...)
}
