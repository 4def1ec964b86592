package controllers_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// managerLabel is the pprof goroutine label startManager puts on each
// manager's goroutines (children inherit it), valued with the manager's name.
const managerLabel = "nodeboot-test-manager"

// ourCode is the prefix of nodeboot's functions, test code included: a
// goroutine of a stopped manager still running any of it is stuck in ours.
const ourCode = "github.com/nodeboot/nodeboot/"

// knownUpstreamStall is the one stack a stopped manager may leave behind:
// Cluster API's ClusterCache sends cluster events on an unbuffered channel
// without watching its context, so when the consuming controller stops
// first the send never returns and shutdown waits out the grace period.
// That is upstream (CABPK's manager has it too), not ours.
const knownUpstreamStall = "sigs.k8s.io/cluster-api/controllers/clustercache.(*clusterCache).sendEventsToClusterSources"

// settle is how long goroutines of a stopped manager get to finish (the one
// that ran Start is still returning) before they count as stuck.
const settle = 2 * time.Second

// judgeShutdown decides on a stopped manager from mgr.Start's error and the
// goroutines still labelled with its name. It fails on any of them running
// nodeboot's code, clean stop or not; a grace-period stall is excused (and
// described in excused) only when this manager's goroutines hold the known
// ClusterCache send.
func judgeShutdown(startErr error, name string) (verdict error, excused string) {
	var left []goroutineRecord
	for deadline := time.Now().Add(settle); ; time.Sleep(50 * time.Millisecond) {
		left = managerGoroutines(name)
		if len(ours(left)) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if stuck := ours(left); len(stuck) > 0 {
		var b strings.Builder
		for _, g := range stuck {
			fmt.Fprintf(&b, "\n%d goroutine(s):\n\t%s", g.count, strings.Join(g.frames, "\n\t"))
		}
		return fmt.Errorf("manager %s stopped (%w) with goroutines stuck in nodeboot's code:%s", name, startErr, b.String()), ""
	}
	switch {
	case startErr == nil || errors.Is(startErr, context.Canceled):
		return nil, ""
	case strings.Contains(startErr.Error(), "grace period") && holds(left, knownUpstreamStall):
		return nil, fmt.Sprintf("%v (Cluster API ClusterCache event send blocked at shutdown)", startErr)
	}
	return fmt.Errorf("manager %s: %w", name, startErr), ""
}

// goroutineRecord is one record of the goroutine profile: count goroutines
// with these labels and frames (function names, innermost first).
type goroutineRecord struct {
	count  int
	labels string
	frames []string
}

// managerGoroutines returns the live goroutines labelled with manager name.
func managerGoroutines(name string) []goroutineRecord {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		panic(err)
	}
	want := strconv.Quote(managerLabel) + ":" + strconv.Quote(name)
	var out []goroutineRecord
	for _, g := range parseGoroutines(buf.Bytes()) {
		if strings.Contains(g.labels, want) {
			out = append(out, g)
		}
	}
	return out
}

// parseGoroutines reads pprof's debug=1 goroutine profile: records of
// "N @ pcs", an optional "# labels: {...}" line and "#\tpc\tfunc+off\tfile:line"
// frames, separated by blank lines.
func parseGoroutines(profile []byte) []goroutineRecord {
	var out []goroutineRecord
	var cur *goroutineRecord
	sc := bufio.NewScanner(bytes.NewReader(profile))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			cur = nil
		case cur == nil && strings.Contains(line, " @ "):
			n, _ := strconv.Atoi(line[:strings.Index(line, " @ ")])
			out = append(out, goroutineRecord{count: n})
			cur = &out[len(out)-1]
		case cur != nil && strings.HasPrefix(line, "# labels: "):
			cur.labels = strings.TrimPrefix(line, "# labels: ")
		case cur != nil && strings.HasPrefix(line, "#\t"):
			if f := strings.Split(line, "\t"); len(f) >= 3 {
				fn := f[2]
				if i := strings.LastIndex(fn, "+0x"); i > 0 {
					fn = fn[:i]
				}
				cur.frames = append(cur.frames, fn)
			}
		}
	}
	return out
}

// ours returns the records with a frame of nodeboot's code.
func ours(gs []goroutineRecord) []goroutineRecord {
	var out []goroutineRecord
	for _, g := range gs {
		for _, f := range g.frames {
			if strings.HasPrefix(f, ourCode) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

func holds(gs []goroutineRecord, fn string) bool {
	for _, g := range gs {
		for _, f := range g.frames {
			if f == fn {
				return true
			}
		}
	}
	return false
}
