package butane_test

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"

	// The renderer, and Butane for its additional config: without the
	// second import Butane input is ignition.ErrButaneNotLinked.
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// A provider that accepts Butane additional config imports this package
// beside the renderer; nothing else changes.
func Example() {
	r, err := provisioning.Get("ignition")
	if err != nil {
		panic(err)
	}
	out, err := r.Render(&provisioning.Plan{
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
	}, provisioning.Options{
		Version:          "3.4.0",
		AdditionalConfig: []byte("variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n  - path: /etc/motd\n    contents:\n      inline: hello\n"),
	})
	fmt.Println(err, out.Format, len(out.Warnings))
	// Output: <nil> ignition 0
}
