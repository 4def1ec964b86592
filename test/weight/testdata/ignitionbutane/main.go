// Command ignitionbutane is the program of a provider that also takes
// Butane additional config: the ignition consumer plus a blank import of
// ignition/butane, with a Butane or Ignition JSON additional config read from
// its argument. TestConsumerWeight measures what opting into Butane costs
// and checks that only the Butane variants ignition accepts are linked.
package main

import (
	"fmt"
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

func main() {
	p, err := provisioning.Get("ignition")
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
		os.Exit(1)
	}
	fmt.Println(len(out.Data))
}
