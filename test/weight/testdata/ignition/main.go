// Command ignition is the smallest program a bootstrap provider that renders
// native Ignition would build: the provisioning model and the Ignition
// renderer with only the native dialect (ignition/v3), with an Ignition JSON
// additional config read from its argument, so every path of the renderer
// stays reachable for the linker. It does not import ignition/butane: Butane
// input must fail with ignition.ErrButaneNotLinked (exit status 3), and the
// program must link neither Butane nor package testing. It does not import
// ignition/legacy either: CABPK's dialect must fail with
// ignition.ErrUnknownVersion (exit status 4, argument "cabpk"), and the
// program must link neither the legacy dialect nor the Container Linux
// Config transpiler. TestConsumerWeight measures it.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

func main() {
	p, err := provisioning.Get(ignition.Format)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := provisioning.Options{Version: "3.4.0"}
	switch {
	case len(os.Args) > 1 && os.Args[1] == ignition.VersionCABPK:
		opts.Version = ignition.VersionCABPK
	case len(os.Args) > 1:
		opts.AdditionalConfig = []byte(os.Args[1])
	}
	out, err := p.Render(&provisioning.Plan{}, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, ignition.ErrButaneNotLinked) {
			os.Exit(3)
		}
		if errors.Is(err, ignition.ErrUnknownVersion) {
			os.Exit(4)
		}
		os.Exit(1)
	}
	fmt.Println(len(out.Data))
}
