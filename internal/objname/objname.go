// Package objname makes names of objects that belong to another object.
package objname

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxName is the longest name a Secret or ConfigMap may have.
const maxName = 253

// WithSuffix is name+suffix, or, when that would be longer than an object
// name may be, name cut short with a hash of the whole name before the
// suffix, so that distinct long names stay distinct.
func WithSuffix(name, suffix string) string {
	if len(name)+len(suffix) <= maxName {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxName-len(suffix)-9] + "-" + hex.EncodeToString(sum[:4]) + suffix
}
