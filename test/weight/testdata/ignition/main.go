// Command ignition is the smallest program a bootstrap provider that renders
// native Ignition would build: the provisioning model and the Ignition
// renderer with an Ignition JSON additional config read from its argument,
// so every path of the renderer stays reachable for the linker. It does not
// import ignition/butane: Butane input must fail with
// ignition.ErrButaneNotLinked (exit status 3), and the program must link
// neither Butane nor package testing. TestConsumerWeight measures it.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/nodeboot/nodeboot/ignition"
	"github.com/nodeboot/nodeboot/provisioning"
)

func main() {
	p, err := provisioning.Get(ignition.Format)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := provisioning.Options{Version: "3.4.0"}
	if len(os.Args) > 1 {
		opts.AdditionalConfig = []byte(os.Args[1])
	}
	out, err := p.Render(&provisioning.Plan{}, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, ignition.ErrButaneNotLinked) {
			os.Exit(3)
		}
		os.Exit(1)
	}
	fmt.Println(len(out.Data))
}
