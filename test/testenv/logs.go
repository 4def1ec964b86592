package testenv

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// LogBuffer holds every log line of a test process, for scans that prove
// no secret was logged.
type LogBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

// CaptureLogs sends controller-runtime's and client-go's logs (ours among
// them) into a buffer, at verbosity 4; NODEBOOT_TEST_LOGS=1 also prints them.
func CaptureLogs() *LogBuffer {
	l := &LogBuffer{}
	logger := funcr.New(func(prefix, args string) { l.write(prefix + " " + args) }, funcr.Options{Verbosity: 4})
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	return l
}

func (l *LogBuffer) write(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.WriteString(s)
	l.buf.WriteByte('\n')
	if os.Getenv("NODEBOOT_TEST_LOGS") != "" {
		fmt.Fprintln(os.Stderr, s)
	}
}

// String is everything logged so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
