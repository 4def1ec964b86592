package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// defaultGCPercent is the manager's garbage-collection target unless GOGC
// is set. Almost all of a manager's heap is long-lived informer caches, and
// Go's default (GOGC=100) lets the heap grow to twice what is live before
// collecting. At 1,011 configs in test/scale it took peak RSS from 105 to
// 86 MiB; the collector's extra CPU is not separated from load noise in
// the measurements so far (docs: set GOGC=100 to go back to Go's default).
const defaultGCPercent = 25

// memoryLimitShare is the part of the container's memory limit the Go
// runtime is told to stay under (GOMEMLIMIT), unless GOMEMLIMIT is set: near
// the limit the collector runs more often instead of the Pod being killed.
const memoryLimitShare = 0.9

// cgroupLimitFiles are where the container's memory limit is read: cgroup
// v2, then v1.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// setMemoryDefaults applies defaultGCPercent and a soft memory limit from
// the container's limit; GOGC and GOMEMLIMIT in the environment win. It
// returns what it set (-1: nothing), for the start-up log.
func setMemoryDefaults() (gcPercent int, limit int64) {
	gcPercent, limit = -1, -1
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(defaultGCPercent)
		gcPercent = defaultGCPercent
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		if l := containerMemoryLimit(cgroupLimitFiles); l > 0 {
			limit = int64(float64(l) * memoryLimitShare)
			debug.SetMemoryLimit(limit)
		}
	}
	return gcPercent, limit
}

// containerMemoryLimit is the first limit found in files, in bytes; 0 when
// there is none ("max", a v1 "unlimited" value, no cgroup file).
func containerMemoryLimit(files []string) int64 {
	for _, f := range files {
		raw, err := os.ReadFile(f) //nolint:gosec // G304: fixed cgroup paths
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		// cgroup v1 reports "no limit" as a huge page-aligned number.
		if err != nil || v <= 0 || v >= 1<<60 {
			return 0
		}
		return v
	}
	return 0
}
