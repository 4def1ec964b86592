package addons

import (
	"sort"
	"strings"
)

// Record is what the apply step recorded for one add-on in ConfigMap
// kube-system/nodeboot-addons: keys <name>.version, <name>.sha256,
// <name>.result ("applied", "failed: ..." or "not applied: ...") and
// <name>.objects (one "kind.group/name" per line, as kubectl -o name prints).
type Record struct {
	Version string
	SHA256  string
	Result  string
	Objects []string
}

// Applied reports whether the node applied the add-on.
func (r Record) Applied() bool { return r.Result == "applied" }

// ParseRecord reads the record ConfigMap's data, keyed by add-on name.
func ParseRecord(data map[string]string) map[string]Record {
	out := map[string]Record{}
	for k, v := range data {
		i := strings.LastIndexByte(k, '.')
		if i <= 0 {
			continue
		}
		name, attr := k[:i], k[i+1:]
		r := out[name]
		switch attr {
		case "version":
			r.Version = v
		case "sha256":
			r.SHA256 = v
		case "result":
			r.Result = v
		case "objects":
			r.Objects = strings.Fields(v)
			sort.Strings(r.Objects)
		default:
			continue
		}
		out[name] = r
	}
	return out
}
