package objname

import (
	"strings"
	"testing"
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
