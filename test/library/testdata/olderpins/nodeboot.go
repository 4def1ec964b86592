package main

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane" // Butane additional config
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"     // native Ignition v3
	"github.com/nodeboot/nodeboot/provisioning/script"
)

func init() { render = renderNode }

// renderNode renders one k3s server's Plan in the library's three formats
// and prints each one's size.
func renderNode(clusterName string) error {
	plan := &provisioning.Plan{
		Files: []provisioning.File{{Path: "/etc/rancher/k3s/config.yaml", Permissions: "0600", Content: "cluster: " + clusterName + "\n"}},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhaseBootstrap, Script: "k3s server --cluster-init"},
		},
		Sentinel: "/run/k3s-bootstrap/success",
	}
	for _, o := range []struct {
		format string
		opts   provisioning.Options
	}{
		{cloudinit.Format, provisioning.Options{Version: cloudinit.VersionPlain}},
		{ignition.Format, provisioning.Options{Version: "3.4.0", AdditionalConfig: []byte("variant: flatcar\nversion: 1.1.0\n")}},
		{script.Format, provisioning.Options{}},
	} {
		p, err := provisioning.Get(o.format)
		if err != nil {
			return err
		}
		out, err := p.Render(plan, o.opts)
		if err != nil {
			return fmt.Errorf("%s: %w", o.format, err)
		}
		fmt.Printf("%s %d\n", o.format, len(out.Data))
	}
	return nil
}
