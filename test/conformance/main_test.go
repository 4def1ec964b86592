package conformance

import (
	"flag"
	"os"
	"testing"
)

// TestMain lets every Case of every target boot at once unless -parallel
// says otherwise: a boot mostly waits on cloud-init's or Ignition's
// stages, so running them two at a time (the default on two cores) would
// triple the suite's time for no saving.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "16")
	}
	code := m.Run()
	removeSharedRoot()
	os.Exit(code)
}
