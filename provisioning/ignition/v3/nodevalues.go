package ignitionv3

import (
	"path"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Per-node values in Ignition v3 come from the image's metadata agent, as
// Flatcar documents for units that need the node's address or name:
// coreos-metadata.service (Afterburn) writes the instance metadata as an
// environment file, /run/metadata/flatcar, and a unit reads it with
// EnvironmentFile=; Fedora CoreOS's afterburn.service writes
// /run/metadata/afterburn. Ignition itself writes only static content, so
// the first-boot unit is wired to both agents and its script fills in the
// Plan's templated files and exports the values for the commands, before
// any of them runs.
//
// The variables are the platform's: which one is set says which cloud the
// node is on, and exactly one platform's are. The names are those of
// container-linux-config-transpiler's dynamic data (its templating table,
// COREOS_ prefix, EC2 and GCE for AWS and GCP) and of Afterburn's
// attribute list (AFTERBURN_ prefix).
var metadataVars = map[provisioning.NodeValue][]string{
	provisioning.NodeName: {
		"COREOS_EC2_HOSTNAME", "COREOS_GCE_HOSTNAME", "COREOS_OPENSTACK_HOSTNAME", "COREOS_DIGITALOCEAN_HOSTNAME",
		"COREOS_PACKET_HOSTNAME", "COREOS_VAGRANT_VIRTUALBOX_HOSTNAME", "COREOS_CUSTOM_HOSTNAME",
		"AFTERBURN_AWS_HOSTNAME", "AFTERBURN_GCP_HOSTNAME", "AFTERBURN_OPENSTACK_HOSTNAME", "AFTERBURN_DIGITALOCEAN_HOSTNAME",
		"AFTERBURN_PACKET_HOSTNAME", "AFTERBURN_ALIYUN_HOSTNAME", "AFTERBURN_EXOSCALE_LOCAL_HOSTNAME",
		"AFTERBURN_CLOUDSTACK_LOCAL_HOSTNAME", "AFTERBURN_IBMCLOUD_LOCAL_HOSTNAME", "AFTERBURN_VAGRANT_VIRTUALBOX_HOSTNAME",
		"AFTERBURN_CUSTOM_HOSTNAME",
	},
	provisioning.NodeLocalIPv4: {
		"COREOS_EC2_IPV4_LOCAL", "COREOS_GCE_IP_LOCAL_0", "COREOS_OPENSTACK_IPV4_LOCAL", "COREOS_DIGITALOCEAN_IPV4_PRIVATE_0",
		"COREOS_PACKET_IPV4_PRIVATE_0", "COREOS_AZURE_IPV4_DYNAMIC", "COREOS_VAGRANT_VIRTUALBOX_PRIVATE_IPV4",
		"COREOS_CUSTOM_PRIVATE_IPV4",
		"AFTERBURN_AWS_IPV4_LOCAL", "AFTERBURN_GCP_IP_LOCAL_0", "AFTERBURN_OPENSTACK_IPV4_LOCAL", "AFTERBURN_DIGITALOCEAN_IPV4_PRIVATE_0",
		"AFTERBURN_PACKET_IPV4_PRIVATE_0", "AFTERBURN_AZURE_IPV4_DYNAMIC", "AFTERBURN_ALIYUN_IPV4_PRIVATE",
		"AFTERBURN_EXOSCALE_LOCAL_IPV4", "AFTERBURN_CLOUDSTACK_IPV4_LOCAL", "AFTERBURN_VAGRANT_VIRTUALBOX_PRIVATE_IPV4",
		"AFTERBURN_CUSTOM_PRIVATE_IPV4",
	},
	provisioning.NodeInstanceID: {
		"COREOS_EC2_INSTANCE_ID", "COREOS_OPENSTACK_INSTANCE_ID", "COREOS_OPENSTACK_INSTANCE_UUID",
		"AFTERBURN_AWS_INSTANCE_ID", "AFTERBURN_OPENSTACK_INSTANCE_ID", "AFTERBURN_ALIYUN_INSTANCE_ID",
		"AFTERBURN_EXOSCALE_INSTANCE_ID", "AFTERBURN_CLOUDSTACK_INSTANCE_ID", "AFTERBURN_IBMCLOUD_INSTANCE_ID",
		"AFTERBURN_IBMCLOUD_CLASSIC_INSTANCE_ID",
	},
}

// Metadata environment files and the units that write them; Wants= on a
// unit the image lacks is a no-op, so one wiring serves both images.
const (
	metadataUnits     = "coreos-metadata.service afterburn.service"
	flatcarMetadata   = "/run/metadata/flatcar"
	afterburnMetadata = "/run/metadata/afterburn"
)

// metadataWiring is what the first-boot unit adds when the Plan has
// per-node values: ordered after the metadata agents, with their files as
// its environment ("-": the other image's file is absent).
func metadataWiring() (unitPart, servicePart string) {
	return "Wants=" + metadataUnits + "\nAfter=" + metadataUnits + "\n",
		"EnvironmentFile=-" + flatcarMetadata + "\nEnvironmentFile=-" + afterburnMetadata + "\n"
}

// nodeValuesScript is the start of the first-boot script of a Plan with
// per-node values: each value the Plan uses exported from the first
// metadata variable that is set (or the boot stops, naming it), then the
// templated files written with their mode, content and owner.
func nodeValuesScript(p *provisioning.Plan, used []provisioning.NodeValue) string {
	if len(used) == 0 {
		return ""
	}
	var s strings.Builder
	s.WriteString("# Per-node values from the instance metadata (" + flatcarMetadata + ", " + afterburnMetadata + ").\n")
	s.WriteString("nb_value() {\n\tnb_var=$1 nb_name=$2\n\tshift 2\n\tfor nb_c in \"$@\"; do\n" +
		"\t\tif [ -n \"${!nb_c:-}\" ]; then export \"$nb_var=${!nb_c}\"; return 0; fi\n\tdone\n" +
		"\techo \"nodeboot: the instance metadata has no $nb_name (none of $*)\" >&2\n\texit 1\n}\n")
	for _, v := range used {
		s.WriteString("nb_value " + v.Env() + " " + string(v) + " " + strings.Join(metadataVars[v], " ") + "\n")
	}
	for i := range p.Files {
		f := &p.Files[i]
		if len(f.Template) == 0 {
			continue
		}
		mode := f.Permissions
		if mode == "" {
			mode = "0644"
		}
		q := shellQuote(f.Path)
		s.WriteString("# " + p.FilePath(i).String() + "\nmkdir -p " + shellQuote(path.Dir(f.Path)) + "\n")
		redirect := ">"
		if f.Append != nil && *f.Append {
			redirect = ">>"
			s.WriteString("[ -e " + q + " ] || { : > " + q + " && chmod " + mode + " " + q + "; }\n")
		} else {
			// The mode is set before any content is written.
			s.WriteString(": > " + q + "\nchmod " + mode + " " + q + "\n")
		}
		s.WriteString("printf '%s'")
		for _, part := range f.Template {
			if part.Value != "" {
				s.WriteString(` "$` + part.Value.Env() + `"`)
			} else if part.Literal != "" {
				s.WriteString(" " + shellQuote(part.Literal))
			}
		}
		s.WriteString(" " + redirect + " " + q + "\n")
		if f.Owner != "" {
			s.WriteString("chown " + shellQuote(f.Owner) + " " + q + "\n")
		}
	}
	return s.String()
}
