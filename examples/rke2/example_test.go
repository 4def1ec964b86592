package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// An RKE2 server's first boot in every format: cloud-config and Ignition
// carry it; the script refuses the Plan at the one element it cannot
// express, the time servers, rather than boot a node without them.
func Example() {
	plan := Plan(Node{
		Server:     true,
		ServerURL:  "https://192.0.2.10:9345",
		Token:      "example-token",
		Version:    "v1.31.4+rke2r1",
		Admin:      "jane.doe",
		NTPServers: []string{"time.example.org"},
	})
	rs, err := Render(plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rs {
		if len(r.Unsupported) > 0 {
			fmt.Printf("%s: refused at %v\n", r.Suffix, r.Unsupported)
			continue
		}
		if r.Suffix == "ign" {
			var cfg struct{ Ignition struct{ Version string } }
			if err := json.Unmarshal(r.Data, &cfg); err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf("%s: Ignition spec %s\n", r.Suffix, cfg.Ignition.Version)
			continue
		}
		first, _, _ := bytes.Cut(r.Data, []byte("\n"))
		fmt.Printf("%s: %s\n", r.Suffix, first)
	}
	// Output:
	// cloud-config: #cloud-config
	// ign: Ignition spec 3.4.0
	// sh: refused at [ntp]
}
