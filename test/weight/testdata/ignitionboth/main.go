// Command ignitionboth is the ignition consumer with both dialects linked,
// as package ignition was before the dialects became packages of their own
// and as nodeboot's own programs link it: the native dialect and CABPK's
// Ignition 2.3 (ignition/legacy). TestConsumerWeight measures what the
// legacy dialect adds to a native-only consumer.
package main

import (
	"fmt"
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

func main() {
	p, err := provisioning.Get("ignition")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, version := range []string{provisioning.VersionCABPK, "3.4.0"} {
		opts := provisioning.Options{Version: version}
		if len(os.Args) > 1 {
			opts.AdditionalConfig = []byte(os.Args[1])
		}
		out, err := p.Render(&provisioning.Plan{Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}}}, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(version, len(out.Data))
	}
}
