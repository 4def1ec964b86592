package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/nodeboot/nodeboot", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "5a081f7abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	got := FromBuildInfo(bi)
	want := Info{Version: "v0.1.0", Commit: "5a081f7abc-dirty", CommitTime: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8", Platform: "linux/arm64"}
	if got != want {
		t.Errorf("FromBuildInfo = %+v, want %+v", got, want)
	}
	if line := got.Line("manager"); line != "manager v0.1.0 (commit 5a081f7abc-dirty, go1.26.8, linux/arm64)" {
		t.Errorf("Line = %q", line)
	}
}

func TestFromBuildInfoUnknown(t *testing.T) {
	got := FromBuildInfo(nil)
	if got.Version != "(devel)" || got.Commit != "unknown" || got.GoVersion != runtime.Version() {
		t.Errorf("FromBuildInfo(nil) = %+v", got)
	}
	// A clean tree: no -dirty.
	got = FromBuildInfo(&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}})
	if got.Commit != "abc" || got.Version != "(devel)" {
		t.Errorf("clean tree: %+v", got)
	}
}

func TestOverride(t *testing.T) {
	override = "v9.9.9"
	defer func() { override = "" }()
	if got := FromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-x"}}); got.Version != "v9.9.9" {
		t.Errorf("override ignored: %+v", got)
	}
}

// TestGet: a test binary has build information; Get never panics.
func TestGet(t *testing.T) {
	if got := Get(); got.GoVersion == "" || got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("Get = %+v", got)
	}
}
