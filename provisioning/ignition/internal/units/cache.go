// Package units is the systemd unit handling both Ignition dialects share:
// the memory of units their validators found clean.
//
// Parsing a systemd unit is the costliest check left on generated configs
// (go-systemd's lexer runs in a goroutine of its own), and the units repeat:
// the bootstrap unit is a constant and mount units repeat across the
// Machines of a template. Validation is a function of the unit's name,
// whether it is enabled and its contents, so a unit found clean once is
// clean again; units with findings are checked every time, so that their
// reports are the validator's own.
package units

import "sync"

// Key is what a unit's validation reads.
type Key struct {
	Name    string
	Enabled bool
	// Contents as the dialect's validator sees them; a dialect whose
	// contents may be absent encodes that in the string.
	Contents string
}

// MaxClean bounds the memory of a CleanSet; when it is full it starts over.
const MaxClean = 512

// CleanSet remembers the units one validator passed without a finding. Each
// dialect keeps its own, since their validators differ. The zero CleanSet is
// empty and ready; it is safe for concurrent use.
type CleanSet struct {
	mu   sync.Mutex
	seen map[Key]struct{}
}

// Has reports whether k was added and not yet forgotten.
func (c *CleanSet) Has(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.seen[k]
	return ok
}

// Add remembers k as clean.
func (c *CleanSet) Add(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil || len(c.seen) >= MaxClean {
		c.seen = make(map[Key]struct{}, 16)
	}
	c.seen[k] = struct{}{}
}
