// Command cloudinit is the smallest program a bootstrap provider that renders
// cloud-config would build: the provisioning model and the cloud-init
// renderer, nothing else of nodeboot. TestConsumerWeight measures it.
package main

import (
	"fmt"
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

func main() {
	p, err := provisioning.Get("cloud-config")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := p.Render(&provisioning.Plan{}, provisioning.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(len(out.Data))
}
