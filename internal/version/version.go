// Package version reports what a nodeboot binary was built from, read from
// the build information the Go toolchain embeds (runtime/debug): the main
// module's version (the VCS tag, or a pseudo-version, "+dirty" for a
// modified tree; "(devel)" for go run and tests), the VCS commit and the Go
// version. Nothing has to be passed at link time; a release build may still
// set the version with -ldflags "-X github.com/nodeboot/nodeboot/internal/version.override=v0.1.0".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// override, when set at link time, replaces the module version.
var override string

// Info is what a binary was built from.
type Info struct {
	// Version is the main module's version: a tag such as v0.1.0, a
	// pseudo-version, or "(devel)" when the toolchain knows none.
	Version string
	// Commit is the VCS revision, with "-dirty" when the tree was modified;
	// "unknown" when the build recorded none (-buildvcs=false, no .git).
	Commit string
	// CommitTime is the revision's commit time (RFC 3339), or empty.
	CommitTime string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Get reads the running binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts Info from build information (nil gives the
// "unknown" values), applying the link-time override.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: "(devel)", Commit: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		var goos, goarch, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.CommitTime = s.Value
			case "vcs.modified":
				modified = s.Value
			case "GOOS":
				goos = s.Value
			case "GOARCH":
				goarch = s.Value
			}
		}
		if info.Commit != "unknown" && modified == "true" {
			info.Commit += "-dirty"
		}
		if goos != "" && goarch != "" {
			info.Platform = goos + "/" + goarch
		}
	}
	if override != "" {
		info.Version = override
	}
	return info
}

// Line is the one line `--version` prints:
// "NAME VERSION (commit COMMIT, GOVERSION, PLATFORM)".
func (i Info) Line(name string) string {
	return fmt.Sprintf("%s %s (commit %s, %s, %s)", name, i.Version, i.Commit, i.GoVersion, i.Platform)
}
