// Package objname makes names of objects that belong to another object.
package objname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxName is the longest name a Secret or ConfigMap may have.
const maxName = 253

// WithSuffix is name+suffix, or, when that would be longer than an object
// name may be, name cut short with a hash of the whole name before the
// suffix, so that distinct long names stay distinct. For a valid object
// name (a DNS-1123 subdomain) and a suffix that is one, or starts with a
// dot or dash followed by one, the result is a valid object name.
func WithSuffix(name, suffix string) string {
	if len(name)+len(suffix) <= maxName {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name))
	// A cut after a dot would start a label with the hash's dash
	// ("a.-1f2e3d4c" is not a valid name). A valid name starts with a
	// letter or digit, so trimming cannot empty it.
	head := strings.TrimRight(name[:maxName-len(suffix)-9], ".-")
	return head + "-" + hex.EncodeToString(sum[:4]) + suffix
}
