package conformance

import (
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// The instance metadata of the node-values Case: a host name, a private
// address from the documentation range, an EC2-shaped instance ID.
const (
	metaName = "node-7"
	metaIPv4 = "192.0.2.77"
	metaID   = "i-0c0nf0rmance7"
)

// nodeValueCases: per-node values from the instance metadata, in a file
// and in a command.
func nodeValueCases() []Case {
	return []Case{nodeValuesCase(), missingValueCase()}
}

// missingValueCase: a value the instance metadata lacks stops the boot
// before any command, with a failure, rather than writing a node named
// after an empty or placeholder value.
func missingValueCase() Case {
	c := nodeValuesCase()
	c.Name = "node-values-missing"
	c.Metadata = map[provisioning.NodeValue]string{provisioning.NodeName: metaName, provisioning.NodeInstanceID: metaID}
	// What a format writes into the file before it finds the value
	// missing differs (cloud-init writes its placeholder), so only the
	// commands and the sentinel are the State.
	c.Want = State{Absent: []string{Sentinel}, ExitCode: 1}
	return c
}

// nodeValuesCase: a file whose content has the node's name, local IPv4
// and instance ID between literal text that looks like a template (and
// must stay as it is), and a command that reads the same values.
func nodeValuesCase() Case {
	v := provisioning.Value
	lit := provisioning.Literal
	content := provisioning.Text{
		lit("node-name: "), v(provisioning.NodeName), lit("\nnode-ip: "), v(provisioning.NodeLocalIPv4),
		lit("\ninstance: {"), v(provisioning.NodeInstanceID), lit("}\nliteral: {{ ds.meta_data.local_hostname }} {% raw %}\n"),
	}
	want := "node-name: " + metaName + "\nnode-ip: " + metaIPv4 + "\ninstance: {" + metaID + "}\nliteral: {{ ds.meta_data.local_hostname }} {% raw %}\n"
	return Case{
		Name: "node-values",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role: provisioning.RoleJoinWorker,
				Files: []provisioning.File{
					{Path: "/etc/conformance/node.yaml", Permissions: "0640", Template: content},
				},
				Commands: []provisioning.Command{
					{Phase: provisioning.PhasePre, Template: provisioning.Text{
						lit(`echo "$(date +%s.%N) values `), v(provisioning.NodeName), lit(" "), v(provisioning.NodeLocalIPv4),
						lit(" "), v(provisioning.NodeInstanceID), lit(`" >> ` + LogFile),
					}},
					{Phase: provisioning.PhaseBootstrap, Script: log("bootstrap")},
				},
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{
			provisioning.ElementFiles, provisioning.ElementFileTemplate, provisioning.ElementCommands,
			provisioning.ElementCommandTemplate, provisioning.ElementSentinel,
		},
		Metadata: map[provisioning.NodeValue]string{
			provisioning.NodeName: metaName, provisioning.NodeLocalIPv4: metaIPv4, provisioning.NodeInstanceID: metaID,
		},
		Want: State{
			Files: []File{
				{Path: "/etc/conformance/node.yaml", Content: want, Mode: 0o640, Owner: "root:root"},
				{Path: Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"},
			},
			Log: []string{"values " + metaName + " " + metaIPv4 + " " + metaID, "bootstrap"},
		},
	}
}

// NoCloudMetaData is m as cloud-init's NoCloud meta-data file, the seed
// cloudinit-apply takes: instance-id, local-hostname and local-ipv4 (what
// EC2's metadata names the address).
func NoCloudMetaData(m map[provisioning.NodeValue]string) string {
	id := m[provisioning.NodeInstanceID]
	if id == "" {
		id = "iid-conformance"
	}
	out := "instance-id: " + id + "\n"
	if n := m[provisioning.NodeName]; n != "" {
		out += "local-hostname: " + n + "\n"
	}
	if ip := m[provisioning.NodeLocalIPv4]; ip != "" {
		out += "local-ipv4: " + ip + "\n"
	}
	return out
}

// FlatcarMetadata is m as Flatcar's coreos-metadata.service writes it on
// EC2, to /run/metadata/flatcar: what a runner without the agent puts in
// its place.
func FlatcarMetadata(m map[provisioning.NodeValue]string) string {
	var b strings.Builder
	for _, kv := range [...]struct {
		v   provisioning.NodeValue
		key string
	}{
		{provisioning.NodeName, "COREOS_EC2_HOSTNAME"},
		{provisioning.NodeLocalIPv4, "COREOS_EC2_IPV4_LOCAL"},
		{provisioning.NodeInstanceID, "COREOS_EC2_INSTANCE_ID"},
	} {
		if val := m[kv.v]; val != "" {
			b.WriteString(kv.key + "=" + val + "\n")
		}
	}
	return b.String()
}
