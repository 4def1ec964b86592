// Command script is the smallest program a bootstrap provider that renders
// POSIX shell would build: the provisioning model and the script
// renderer, nothing else of nodeboot. Against testdata/cloudinit it shows
// what adding a provisioner costs. TestConsumerWeight measures it.
package main

import (
	"fmt"
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/script"
)

func main() {
	p, err := provisioning.Get("script")
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
