package ignition

import "sync"

// Parsing a systemd unit is the costliest check left on generated configs
// (go-systemd's lexer runs in a goroutine of its own), and the units repeat:
// the bootstrap unit is a constant and mount units repeat across the
// Machines of a template. Validation is a function of the unit's name,
// whether it is enabled and its contents, so a unit found clean once is
// clean again; units with findings are checked every time, so that their
// reports are the validator's own.

// unitKey is what a unit's validation reads.
type unitKey struct {
	name     string
	enabled  bool
	contents string
}

// maxCleanUnits bounds the memory of a cleanSet; when it is full it starts
// over.
const maxCleanUnits = 512

type cleanSet struct {
	mu   sync.Mutex
	seen map[unitKey]struct{}
}

// cleanUnits and cleanV3Units remember the units the legacy (Ignition 2.3)
// and native (v3) validators passed without a finding.
var cleanUnits, cleanV3Units cleanSet

func (c *cleanSet) has(k unitKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.seen[k]
	return ok
}

func (c *cleanSet) add(k unitKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil || len(c.seen) >= maxCleanUnits {
		c.seen = make(map[unitKey]struct{}, 16)
	}
	c.seen[k] = struct{}{}
}
