package ignition_test

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
)

// A Plan rendered as native Ignition 3.4.0 through the provisioner registry,
// the way nodeboot's controller and CLI find it.
func Example() {
	p, err := provisioning.Get("ignition")
	if err != nil {
		panic(err)
	}
	out, err := p.Render(basePlan(), provisioning.Options{Version: "3.4.0"})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Format, out.Sizes["total"] == len(out.Data))
	// Output: ignition true
}
