package objname

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestWithSuffix(t *testing.T) {
	if got := WithSuffix("cp-0", ".x"); got != "cp-0.x" {
		t.Fatalf("short name: %q", got)
	}
	a, b := strings.Repeat("a", 253), strings.Repeat("a", 252)+"b"
	ga, gb := WithSuffix(a, ".nodeboot-addons"), WithSuffix(b, ".nodeboot-addons")
	if len(ga) != 253 || len(gb) != 253 || ga == gb || !strings.HasSuffix(ga, ".nodeboot-addons") {
		t.Fatalf("long names: %q %q", ga, gb)
	}
}

// TestWithSuffixValidForEveryValidName: for every valid object name up to
// the 253-character limit, with a dot or a dash at each place the name may
// be cut, the suffixed name is a valid object name (DNS-1123 subdomain),
// and distinct names give distinct names.
func TestWithSuffixValidForEveryValidName(t *testing.T) {
	suffixes := []string{".nodeboot-report", ".nodeboot-addons", "-x", ".y"}
	seen := map[string]string{}
	for _, suffix := range suffixes {
		clear(seen)
		for n := 1; n <= validation.DNS1123SubdomainMaxLength; n++ {
			for _, sep := range []byte{'.', '-'} {
				for at := max(1, n-40); at < n-1; at++ {
					name := []byte(strings.Repeat("a", n))
					name[at] = sep
					if sep == '-' && at+1 < n-1 {
						name[at+1] = '-'
					}
					if errs := validation.IsDNS1123Subdomain(string(name)); len(errs) > 0 {
						continue
					}
					got := WithSuffix(string(name), suffix)
					if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
						t.Fatalf("WithSuffix(%q (%d characters), %q) = %q: %v", name, n, suffix, got, errs)
					}
					if prev, dup := seen[got]; dup && prev != string(name) {
						t.Fatalf("%q and %q both give %q", prev, name, got)
					}
					seen[got] = string(name)
				}
			}
		}
	}
}
