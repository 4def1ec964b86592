package testenv

import (
	"bytes"
	"sync"
)

// OutputBuffer collects a child process's output for a test. It keeps the
// last 4 MiB once more than 8 MiB arrived: a manager at scale logs a lot,
// and only the tail is ever shown.
type OutputBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *OutputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 8<<20 {
		keep := b.buf.Bytes()[b.buf.Len()-(4<<20):]
		b.buf = *bytes.NewBuffer(append([]byte(nil), keep...))
	}
	return b.buf.Write(p)
}

func (b *OutputBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
