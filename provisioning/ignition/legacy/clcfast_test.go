package legacy

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	clct "github.com/flatcar/container-linux-config-transpiler/config"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"
	"github.com/flatcar/ignition/config/validate"
	"github.com/stretchr/testify/require"
	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning/internal/sharedtest"
)

// The transpiler is the oracle: whatever fastCLC accepts, the transpiler
// must read to the same config with an empty report. What fastCLC declines
// goes to the transpiler, so only acceptance needs proof.

// transpile is the transpiler's verdict: the config and whether its parse
// and conversion reported anything at all.
func transpile(data []byte) (ign23types.Config, bool) {
	cfg, ast, r := clct.Parse(data)
	if len(r.Entries) > 0 {
		return ign23types.Config{}, false
	}
	out, r := clct.Convert(cfg, "", ast)
	return out, len(r.Entries) == 0
}

// checkWalk fails when cleanByWalk and Ignition's reflective validation
// disagree on what the transpiler reads from data.
func checkWalk(t testing.TB, data []byte) {
	t.Helper()
	cfg, ast, r := clct.Parse(data)
	if r.IsFatal() {
		return
	}
	want := len(validate.ValidateWithoutSource(reflect.ValueOf(cfg)).Entries) == 0
	// etcd and flannel embed an interface, which the walk never calls
	// clean: only the other way round would be wrong.
	opaque := cfg.Etcd != nil || cfg.Flannel != nil
	if got := cleanByWalk(&cfg); got != want && !(opaque && !got) {
		t.Fatalf("cleanByWalk says %v, validate.Validate %v, for the CLC of %q", got, want, data)
	}
	out, r := clct.Convert(cfg, "", ast)
	if r.IsFatal() {
		return
	}
	want = len(validate.ValidateWithoutSource(reflect.ValueOf(out)).Entries) == 0
	if got := cleanByWalk(&out); got != want {
		t.Fatalf("cleanByWalk says %v, validate.Validate %v, for the Ignition config of %q", got, want, data)
	}
}

// checkFastCLC fails when fastCLC accepts data and the transpiler
// disagrees; it returns whether fastCLC accepted it.
func checkFastCLC(t testing.TB, data []byte) bool {
	t.Helper()
	checkWalk(t, data)
	got, ok := fastCLC(data)
	if !ok {
		return false
	}
	want, clean := transpile(data)
	if !clean {
		cfg, ast, r := clct.Parse(data)
		_, r2 := clct.Convert(cfg, "", ast)
		t.Fatalf("fastCLC accepted a config the transpiler reports on:\n%q\nparse: %s\nconvert: %s", data, r, r2)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fastCLC and the transpiler read different configs from:\n%q\nfast: %+v\ntranspiler: %+v", data, got, want)
	}
	return true
}

// fastCLCAccepted are configs the fast path must take (or it is no faster).
var fastCLCAccepted = []string{
	"systemd:\n  units:\n  - name: containerd.service\n    enabled: true\n    dropins:\n    - name: 10-limits.conf\n      contents: |\n        [Service]\n        LimitNOFILE=1048576\nstorage:\n  files:\n  - path: /etc/extra-from-clc\n    filesystem: root\n    mode: 0644\n    contents:\n      inline: extra\n# 12\n",
	"storage:\n  files:\n    - path: /etc/a\n      mode: 420\n      overwrite: true\n      append: false\n      user:\n        id: 0\n      group:\n        name: core\n      contents:\n        inline: |\n          line 1\n\n            indented\n          tab\there\n\n\n",
	"storage:\n  directories:\n  - path: /opt/x\n    mode: 0755\n    user:\n      id: 500\n",
	"# leading comment\n\nsystemd:\n  # inside\n  units:\n    -   name: a.service\n        enable: true\n        mask: false\n        contents: |\n          [Unit]\n          Description=a\n\n          [Service]\n          ExecStart=/bin/true\n\n          [Install]\n          WantedBy=multi-user.target\n",
	"systemd:\n  units:\n  - name: b.service\n    enabled: false\n",
}

// fastCLCDeclined are configs the fast path must leave to the transpiler:
// YAML it does not read itself, or a finding the transpiler reports.
var fastCLCDeclined = []string{
	"",
	"# only a comment\n",
	"storage:\n  files:\n  - path: /etc/a\n    contents:\n      inline: x\n",           // no mode: a warning
	"storage:\n  files:\n  - path: etc/a\n    mode: 0644\n",                            // relative path
	"systemd:\n  units:\n  - name: a.unknown\n",                                        // bad unit name
	"systemd:\n  units:\n  - name: a.service\n    contents: \"[Unit]\"\n",              // quoted
	"systemd:\n  units:\n  - name: a.service\n    enabled: yes\n",                      // YAML 1.1 bool
	"systemd:\n  units:\n  - name: a.service\n    enabled: true\n    enabled: false\n", // repeated key
	"systemd:\n  units:\n  - name: a.service\n    color: red\n",                        // unknown key
	"systemd:\n  units:\n  - name: a.service\n    contents: |-\n      [Unit]\n",        // chomping indicator
	"systemd:\n  units:\n  - name: a.service\n    contents: |\n      [Unit]\n      \n", // whitespace-only line
	"systemd:\n  units:\n  - name: a.service\n    contents: |\n      [Unit]",           // no final line break
	"systemd:\n\tunits: []\n",                                                                                  // tab
	"systemd:\n  units:\n  - name: a.service # comment\n",                                                      // trailing comment
	"systemd:\n  units:\n  - name: a\n      .service\n",                                                        // continuation
	"storage:\n  files:\n  - path: /etc/a\n    mode: 0o644\n",                                                  // YAML 1.2 octal
	"storage:\n  files:\n  - path: /etc/a\n    mode: 0644\n    contents:\n      local: x\n",                    // local file
	"storage:\n  directories:\n  - path: /opt/x\n    mode: 0755\n    user:\n      name: core\n      id: 500\n", // id and name
	"passwd:\n  users:\n  - name: core\n",                                                                      // not a fast key
	"passwd:\n  users:\n  - name: core\n    ssh_authorized_keys:\n    - ssh-ed25519 AAAA\n  groups:\n  - name: g\n",
	"storage:\n  disks:\n  - device: /dev/sdb\n    partitions:\n    - label: x\n  filesystems:\n  - name: d\n    mount:\n      device: /dev/sdb1\n      format: ext4\n  links:\n  - path: /a\n    target: /b\n  raid:\n  - name: r\n    level: raid1\n    devices: [/dev/a, /dev/b]\n",
	"networkd:\n  units:\n  - name: 10-e.network\n    contents: |\n      [Match]\n      Name=eth0\n",
	"etcd:\n  version: 3.0.0\nlocksmith:\n  reboot_strategy: reboot\nupdate:\n  group: stable\ndocker:\n  flags: [--x]\n",
	"ignition:\n  config:\n    append:\n    - source: http://example.com/x\n  timeouts:\n    http_total: 5\n",
	"storage:\n  files:\n  - path: /etc/a\r\n    mode: 0644\n", // CR
}

func TestFastCLCMatchesTranspiler(t *testing.T) {
	for i, c := range fastCLCAccepted {
		require.True(t, checkFastCLC(t, []byte(c)), "accepted[%d] was declined:\n%s", i, c)
	}
	for i, c := range fastCLCDeclined {
		_, ok := fastCLC([]byte(c))
		require.False(t, ok, "declined[%d] was accepted:\n%s", i, c)
	}
	// Past the size bound the transpiler decides, however plain the config.
	head := "storage:\n  files:\n  - path: /etc/big\n    mode: 0644\n    contents:\n      inline: |\n"
	under := head + strings.Repeat("        line\n", (fastCLCMaxBytes-len(head))/13)
	require.True(t, checkFastCLC(t, []byte(under)), "a config of %d bytes was declined", len(under))
	_, ok := fastCLC([]byte(under + "        line\n"))
	require.False(t, ok, "a config over fastCLCMaxBytes was accepted")
	// Every vector's additional config.
	vectorAccepted := 0
	for _, v := range referenceVectors(t, "ign-") {
		for _, c := range vectorCLCs(t, filepath.Join(v, "input.yaml")) {
			if checkFastCLC(t, []byte(c)) {
				vectorAccepted++
			}
		}
	}
	require.NotZero(t, vectorAccepted, "no vector's additionalConfig took the fast path")
	// Generated configs in the subset, laid out in YAML's many ways, and
	// mutations of them and of the seeds.
	r := rand.New(rand.NewPCG(1, 2))
	accepted, clean := 0, 0
	for range 1500 {
		doc := genFastCLC(r)
		if checkFastCLC(t, []byte(doc)) {
			accepted++
		}
		if _, ok := transpile([]byte(doc)); ok {
			clean++
		}
		for range 2 {
			checkFastCLC(t, []byte(mutateCLC(r, doc)))
		}
	}
	for _, c := range append(append([]string(nil), fastCLCAccepted...), fastCLCDeclined...) {
		for range 200 {
			checkFastCLC(t, []byte(mutateCLC(r, c)))
		}
	}
	// Most generated configs the transpiler finds nothing in are in the
	// fast path's subset; if it declines them it is not being exercised.
	require.Greater(t, accepted, clean*2/3, "the fast path accepted %d of the %d generated configs without findings", accepted, clean)
}

// referenceVectors are CABPK's reference vectors whose names start with
// prefix. None is a failure: the fast path must be checked on CABPK's inputs.
func referenceVectors(t *testing.T, prefix string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(sharedtest.Dir(t), "cabpk-vectors", prefix+"*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no reference vectors %s* in the shared directory", prefix)
	}
	return dirs
}

// vectorCLCs returns the additionalConfig strings of a vector's input.
func vectorCLCs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	for _, doc := range strings.Split(string(data), "\n---") {
		var obj map[string]any
		if yaml.Unmarshal([]byte(doc), &obj) != nil {
			continue
		}
		var find func(v any)
		find = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if s, ok := x.(string); ok && k == "additionalConfig" {
						out = append(out, s)
					}
					find(x)
				}
			case []any:
				for _, x := range v {
					find(x)
				}
			}
		}
		find(obj)
	}
	return out
}

// Values the generator draws from: ordinary ones, and ones YAML reads
// otherwise or the validators refuse.
var (
	genNames    = []string{"a.service", "kubelet.service", "x@1.service", "data.mount", "t.timer", "bad", "a.conf", "true", "1", "~", "null", "-x.service", "a b.service", "...", "a:b.service", "0x10.service"}
	genPaths    = []string{"/etc/a", "/opt/b/c.conf", "/etc/x y", "relative", "/", "/etc/a#b", "/etc/[a]", "/etc/a,b", "/etc/'q'", "2001-12-14", "/etc/a%20"}
	genInts     = []string{"0", "0644", "0755", "420", "644", "01777", "08", "0o644", "0x1ff", "1e3", "-1", "+5", "1_0", "99999999999", "00"}
	genBools    = []string{"true", "false", "yes", "True", "on", "1"}
	genScalars  = []string{"extra", "x", "<<", "=", "!", "a!b", "a&b", "a*b", "a|b", "a>b", "a%b", "a@b", "a`b", "a,b", "a[b]", "a{b}", "a'b", "a\"b", "...", "---x", "a:b", "a::", "0644", "1.5", ".inf", "2001-12-14", "a: b", "#x", "a #b", "'q'", "\"q\"", "*a", "&a x", "!!str x", "|", ">", "@x", "`x", "%x", "[x]", "{x}", "-", "- x", "?x", "x:", "é", "x\ty"}
	genContents = []string{"[Unit]\nDescription=x\n", "[Service]\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n", "[Unit]\n  Indented=1\n", "not a unit\n", "[Service]\nEnvironment=\"A=b c\"\n", "\n[Unit]\n", "# c\n[Unit]\n", "[Unit]\n\n\n", "  lead\n", "\ttab\n", "a\u2028b\n", "x\r\ny\n", "é\n"}
)

func pickStr(r *rand.Rand, vs []string) string { return vs[r.IntN(len(vs))] }

// genLayout is one way of indenting: per level, and whether a sequence
// sits at its key's column.
type genLayout struct {
	step     int
	seqInset bool
	dashGap  int
	comments bool
}

type genWriter struct {
	b strings.Builder
	l genLayout
	r *rand.Rand
}

func (w *genWriter) line(col int, s string) {
	if w.l.comments && w.r.IntN(8) == 0 {
		fmt.Fprintf(&w.b, "%s# c\n", strings.Repeat(" ", w.r.IntN(col+3)))
	}
	if w.r.IntN(10) == 0 {
		w.b.WriteString("\n")
	}
	fmt.Fprintf(&w.b, "%s%s\n", strings.Repeat(" ", col), s)
}

// scalar writes key: value, as a plain scalar or a literal block.
func (w *genWriter) scalar(col int, key, v string, block bool) {
	if !block {
		w.line(col, key+": "+v)
		return
	}
	w.line(col, key+": |")
	in := col + 1 + w.r.IntN(4)
	for _, l := range strings.SplitAfter(v, "\n") {
		l = strings.TrimSuffix(l, "\n")
		if l == "" {
			w.b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&w.b, "%s%s\n", strings.Repeat(" ", in), l)
	}
}

// seq writes key: and a sequence of items, each written by item at the
// item's column; the first call of line in item follows the dash.
func (w *genWriter) seq(col int, key string, n int, item func(col int, first func(string))) {
	w.line(col, key+":")
	dash := col
	if w.l.seqInset {
		dash = col + w.l.step
	}
	for range n {
		icol := dash + 2 + w.l.dashGap
		used := false
		item(icol, func(s string) {
			if !used {
				used = true
				fmt.Fprintf(&w.b, "%s-%s%s\n", strings.Repeat(" ", dash), strings.Repeat(" ", w.l.dashGap+1), s)
				return
			}
			w.line(icol, s)
		})
	}
}

// genFastCLC writes a random config in the fast path's subset of keys.
func genFastCLC(r *rand.Rand) string {
	w := &genWriter{r: r, l: genLayout{step: 1 + r.IntN(4), seqInset: r.IntN(2) == 0, dashGap: r.IntN(3), comments: r.IntN(3) == 0}}
	odd := func() bool { return r.IntN(12) == 0 }
	val := func(good string, pool []string) string {
		if odd() {
			return pickStr(r, pool)
		}
		return good
	}
	s := w.l.step
	sections := []func(){
		func() {
			w.line(0, "systemd:")
			w.seq(s, "units", 1+r.IntN(3), func(c int, first func(string)) {
				first("name: " + val(pickStr(r, genNames[:5]), append(genNames, genScalars...)))
				if r.IntN(2) == 0 {
					w.line(c, "enabled: "+val("true", genBools))
				}
				if r.IntN(4) == 0 {
					w.line(c, "enable: "+val("true", genBools))
				}
				if r.IntN(5) == 0 {
					w.line(c, "mask: "+val("false", genBools))
				}
				if r.IntN(2) == 0 {
					w.scalar(c, "contents", val(genContents[r.IntN(2)], genContents), true)
				}
				if r.IntN(2) == 0 {
					w.seq(c, "dropins", 1+r.IntN(2), func(c int, first func(string)) {
						first("name: " + val("10-x.conf", append(genNames, genScalars...)))
						w.scalar(c, "contents", val("[Service]\nLimitNOFILE=1\n", genContents), true)
					})
				}
			})
		},
		func() {
			w.line(0, "storage:")
			dirs := r.IntN(3) == 0
			if !dirs || r.IntN(2) == 0 {
				w.seq(s, "files", 1+r.IntN(3), func(c int, first func(string)) {
					first("path: " + val(pickStr(r, genPaths[:2]), append(genPaths, genScalars...)))
					if r.IntN(3) == 0 {
						w.line(c, "filesystem: "+val("root", genScalars))
					}
					if r.IntN(8) > 0 {
						w.line(c, "mode: "+val(pickStr(r, genInts[:4]), genInts))
					}
					if r.IntN(4) == 0 {
						w.line(c, "overwrite: "+val("true", genBools))
					}
					if r.IntN(6) == 0 {
						w.line(c, "append: "+val("true", genBools))
					}
					for _, owner := range []string{"user", "group"} {
						if r.IntN(4) == 0 {
							w.line(c, owner+":")
							if r.IntN(2) == 0 || odd() {
								w.line(c+s, "id: "+val("0", genInts))
							} else {
								w.line(c+s, "name: "+val("core", genScalars))
							}
						}
					}
					if r.IntN(4) > 0 {
						w.line(c, "contents:")
						block := r.IntN(2) == 0
						v := val("extra", genScalars)
						if block {
							v = val("some\ncontent\n", genContents)
						}
						w.scalar(c+s, "inline", v, block)
					}
				})
			}
			if dirs {
				w.seq(s, "directories", 1+r.IntN(2), func(c int, first func(string)) {
					first("path: " + val("/opt/d", genPaths))
					if r.IntN(6) > 0 {
						w.line(c, "mode: "+val("0755", genInts))
					}
				})
			}
		},
	}
	r.Shuffle(len(sections), func(i, j int) { sections[i], sections[j] = sections[j], sections[i] })
	for _, f := range sections[:1+r.IntN(2)] {
		f()
	}
	return w.b.String()
}

// mutateCLC changes a few bytes of doc, preferring YAML's syntax.
func mutateCLC(r *rand.Rand, doc string) string {
	const alphabet = " \n-:#|>'\"&*!?,[]{}%@`~\t\r0aZ.\\"
	b := []byte(doc)
	for range 1 + r.IntN(3) {
		i := 0
		if len(b) > 0 {
			i = r.IntN(len(b) + 1)
		}
		c := alphabet[r.IntN(len(alphabet))]
		switch r.IntN(3) {
		case 0:
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		case 1:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		default:
			if i < len(b) {
				b[i] = c
			}
		}
	}
	return string(b)
}

// FuzzFastCLC holds the fast path to the transpiler on arbitrary input.
func FuzzFastCLC(f *testing.F) {
	for _, c := range append(append([]string(nil), fastCLCAccepted...), fastCLCDeclined...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		checkFastCLC(t, data)
	})
}

// TestFastCLCWarningsUnchanged: through clcToIgnition, strict or not, an
// accepted config gives the transpiler's config and no warning.
func TestFastCLCWarningsUnchanged(t *testing.T) {
	for _, c := range fastCLCAccepted {
		want, clean := transpile([]byte(c))
		require.True(t, clean)
		for _, strict := range []bool{false, true} {
			cfg, warnings, err := clcToIgnition([]byte(c), strict)
			require.NoError(t, err)
			require.Empty(t, warnings)
			require.Equal(t, want, cfg)
		}
	}
}

// BenchmarkAdditionalCLC: the vector's additionalConfig through the fast
// path and through the transpiler.
func BenchmarkAdditionalCLC(b *testing.B) {
	data := []byte(fastCLCAccepted[0])
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := fastCLC(data); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("transpiler", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := transpile(data); !ok {
				b.Fatal("not clean")
			}
		}
	})
}
