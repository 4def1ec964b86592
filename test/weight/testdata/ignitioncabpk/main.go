// Command ignitioncabpk is the smallest program of a provider that renders
// only CABPK's Ignition 2.3 (a drop-in for CABPK's bytes): the provisioning
// model and the Ignition renderer with only the legacy dialect
// (ignition/legacy), with a Container Linux Config additional config read
// from its argument. It must link neither the native dialect nor Butane nor
// package testing. TestConsumerWeight measures it.
package main

import (
	"fmt"
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
)

func main() {
	p, err := provisioning.Get("ignition")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := provisioning.Options{Version: provisioning.VersionCABPK}
	if len(os.Args) > 1 {
		opts.AdditionalConfig = []byte(os.Args[1])
	}
	out, err := p.Render(&provisioning.Plan{Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}}}, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(len(out.Data))
}
