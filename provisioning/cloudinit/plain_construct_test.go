package cloudinit

import (
	"strings"
	"testing"
)

// FuzzCloudConfigProblem: the check of a user's cloud-config part takes
// any text without panicking or looping (aliases may name an ancestor, a
// merge key its own mapping), and its answer never quotes a value.
func FuzzCloudConfigProblem(f *testing.F) {
	for _, s := range []string{
		"a: &x {<<: *x}\n", "a: &x [*x]\n", "<<: [{a: 1}, *y]\n", "k: &l [1]\n*l : x\n", "a: !!int 0x_\n",
		"a: !!binary 'YQ= =='\n", "a: 2001-12-14 21:59:43.5 -99:00\n", "? [a]\n: b\n", "a: !!set [1]\n", "a: !s3cret\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		if len(content) > 4096 {
			return
		}
		msg := cloudConfigProblem(content)
		// Fixed texts and line numbers only: a distinctive run of the
		// content in the message is a leak.
		for _, w := range strings.Fields(content) {
			if len(w) >= 12 && strings.Contains(msg, w) {
				t.Fatalf("the answer %q quotes the content's %q", msg, w)
			}
		}
	})
}
