package ignitionv3

import (
	"encoding/base64"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/nodeboot/nodeboot/provisioning"
)

// addUserData carries each Ignition UserData as an inline child config of
// the generated one, in ignition.config.merge: Ignition fetches the data:
// URL and merges it over the parent at boot with its own merge rules, the
// child winning, so the document reaches the node as the user wrote it.
// It is checked here as Ignition will read it (the dialect's parser, so a
// newer spec than the dialect's is refused) and held to what
// AdditionalConfig is held to: it may not replace what the bootstrap needs.
// Other types are refused at their type: Ignition applies neither
// cloud-config nor a script.
func addUserData(b *v3Builder, p *provisioning.Plan, d *dialect, ps *provisioning.Problems) {
	provisioning.RefuseUserData(ps, p, v3Name, provisioning.UserDataIgnition)
	for i := range p.UserData {
		u := &p.UserData[i]
		if u.Type != provisioning.UserDataIgnition || len(u.Content) > provisioning.MaxUserDataBytes {
			continue
		}
		at := provisioning.FieldPath(u.Origin, provisioning.NewPath("userData").Index(i), "content")
		cfg, r, err := d.parseCompatible([]byte(u.Content))
		if err != nil || r.IsFatal() {
			ps.Errorf(at, "must be an Ignition config of spec %s or older (JSON): %s", d.version, parseFailure(err, r.String()))
			continue
		}
		var found provisioning.Problems
		protectGenerated(b.plan, cfg, at, &found)
		*ps = append(*ps, found...)
		if found.Err() != nil {
			continue
		}
		b.cfg.Ignition.Config.Merge = append(b.cfg.Ignition.Config.Merge, types.Resource{
			Source: ptrTo("data:;base64," + base64.StdEncoding.EncodeToString([]byte(u.Content))),
		})
	}
}

// parseFailure is what Ignition's parser said, without the config's
// content: its report names positions and fields, its error the cause.
func parseFailure(err error, report string) string {
	if report != "" {
		return report
	}
	if err != nil {
		return err.Error()
	}
	return "not a valid config"
}
