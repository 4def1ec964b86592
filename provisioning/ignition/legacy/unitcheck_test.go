package legacy

import (
	"math/rand/v2"
	"strings"
	"testing"

	ign23types "github.com/flatcar/ignition/config/v2_3/types"
	"github.com/stretchr/testify/require"
)

// checkQuickUnit fails when quickUnit answers and Ignition's own unit and
// drop-in validation (go-systemd's lexer) disagrees; it returns whether
// quickUnit answered.
func checkQuickUnit(t testing.TB, contents string) bool {
	t.Helper()
	_, _, ok := quickUnit(contents)
	for _, enabled := range []bool{false, true} {
		for _, name := range []string{"a.service", "a.mount"} {
			u := ign23types.Unit{Name: name, Enabled: &enabled, Contents: contents}
			want := len(u.ValidateContents().Entries) == 0
			if clean, known := quickUnitClean(&u); known && clean != want {
				t.Fatalf("quickUnit says clean=%v, Ignition %v, for enabled=%v %q: %s", clean, want, enabled, contents, u.ValidateContents())
			}
			require.Equal(t, want, unitContentsClean(&u))
		}
	}
	for _, name := range []string{"10-a.conf", "a.service"} {
		d := ign23types.SystemdDropin{Name: name, Contents: contents}
		if got, want := dropinClean(&d), len(d.Validate().Entries) == 0; got != want {
			t.Fatalf("dropinClean says %v, Ignition %v, for %q in %s", got, want, contents, name)
		}
	}
	return ok
}

var quickUnitSeeds = []string{
	"",
	"[Unit]\nDescription=x\n",
	"[Unit]\nDescription = Mount etcd_disk\n\n[Mount]\nWhat=/dev/sdb\nWhere=/var/lib/etcd\nOptions=\n\n[Install]\nWantedBy=multi-user.target\n",
	"# c\n; c\n\n[Service]\nLimitNOFILE=1048576\n",
	"[Service]\nExecStart=/bin/true\n[Install]\n",
	"[Install]\nWantedBy=multi-user.target",
	"[Unit]   \nA=\n=b\nA#=b\n",
	"[Unit] x\n",
	"[Unit\nA=b\n",
	"A=b\n[Unit]\n",
	"[Unit]\nnoequals\n",
	"[Unit]\nA=b\\\nc\n",
	"[Unit]\n# c \\\nA=b\n",
	"[Unit]\n  A=b\n",
	"[Unit]\r\nA=b\r\n",
	"[Unit]\nA=b\\ \n",
	"[Unit]\nA=é\n",
	"\t\n[Unit]\n\tA=b\n",
	"[Unit]\nA=" + strings.Repeat("x", 2100) + "\n",
	"[]\n=\n",
	"[Install]\n[Unit]\nA=b\n",
}

func TestQuickUnitMatchesSystemd(t *testing.T) {
	answered := 0
	for _, c := range quickUnitSeeds {
		if checkQuickUnit(t, c) {
			answered++
		}
	}
	require.GreaterOrEqual(t, answered, 8, "quickUnit answered for too few ordinary units")
	for _, c := range quickUnitSeeds[1:4] {
		_, _, ok := quickUnit(c)
		require.True(t, ok, "quickUnit declined an ordinary unit: %q", c)
	}
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "[]=#; \t\n\r\\Ax"
	lines := []string{"[Unit]", "[Install]", "[Service]", "A=b", "WantedBy=multi-user.target", "", " ", "# c", "; c", "A=b\\", "[Unit] ", "[X] y", "A", "=", "\t", "[Mount]"}
	for range 4000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(lines[r.IntN(len(lines))])
			if r.IntN(6) > 0 {
				b.WriteByte('\n')
			}
		}
		c := []byte(b.String())
		for range r.IntN(3) {
			if len(c) > 0 {
				c[r.IntN(len(c))] = alphabet[r.IntN(len(alphabet))]
			}
		}
		checkQuickUnit(t, string(c))
	}
}

// FuzzQuickUnit holds quickUnit to go-systemd's lexer on arbitrary text.
func FuzzQuickUnit(f *testing.F) {
	for _, c := range quickUnitSeeds {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, contents string) {
		if len(contents) > 4096 {
			return
		}
		checkQuickUnit(t, contents)
	})
}
