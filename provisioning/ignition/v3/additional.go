package ignitionv3

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/coreos/vcontext/report"
	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// butaneVariants are the Butane variants whose output boots the operating
// systems nodeboot targets.
var butaneVariants = map[string]bool{"flatcar": true, "fcos": true}

// userConfig reads the additional config into the dialect's types: Butane
// (YAML with variant and version keys) is translated first, Ignition JSON is
// parsed as is; older spec versions are translated up by Ignition itself.
// Butane needs the translator package ignition/butane registers
// (RegisterButane); without it Butane is ErrButaneNotLinked.
func userConfig(raw []byte, strict bool, d *dialect, at provisioning.Path, ps *provisioning.Problems) any {
	ign := raw
	if t := bytes.TrimSpace(raw); !isButane(raw) && (len(t) == 0 || t[0] != '{') {
		ps.Wrapf(at, ignition.ErrAdditionalConfig, "for Ignition %s it must be Butane (with variant and version keys) or Ignition JSON; a Container Linux Config works with the legacy dialect only", d.version)
		return nil
	}
	if isButane(raw) {
		var head struct {
			Variant string `yaml:"variant"`
			Version string `yaml:"version"`
		}
		_ = yaml.Unmarshal(raw, &head)
		if !butaneVariants[head.Variant] {
			ps.Wrapf(at, ignition.ErrAdditionalConfig, "Butane variant %q is not supported (use flatcar or fcos)", head.Variant)
			return nil
		}
		if strings.Contains(head.Version, "experimental") {
			ps.Wrapf(at, ignition.ErrAdditionalConfig, "experimental Butane version %q is not supported", head.Version)
			return nil
		}
		translate := ignition.RegisteredButane()
		if translate == nil {
			ps.Wrapf(at, ignition.ErrButaneNotLinked, "Butane additional config needs package github.com/nodeboot/nodeboot/provisioning/ignition/butane; give Ignition JSON instead")
			return nil
		}
		out, r, err := translate(raw)
		if !reportInto(ps, at, "Butane", r, err, strict) {
			return nil
		}
		ign = out
	}
	cfg, r, err := d.parseCompatible(ign)
	if !reportInto(ps, at, "Ignition", r, err, strict) {
		return nil
	}
	return cfg
}

// isButane tells Butane from Ignition JSON: Butane is YAML with top-level
// variant and version keys.
func isButane(raw []byte) bool {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return false
	}
	var head map[string]any
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return false
	}
	_, variant := head["variant"]
	_, version := head["version"]
	return variant && version
}

// reportInto adds a translation or parse report to ps; warnings become
// errors when strict. It returns false when the config cannot be used.
func reportInto(ps *provisioning.Problems, at provisioning.Path, what string, r report.Report, err error, strict bool) bool {
	ok := err == nil && !r.IsFatal()
	for _, e := range r.Entries {
		msg := e.String()
		switch {
		case e.Kind == report.Error, strict && e.Kind == report.Warn:
			ps.Wrapf(at, ignition.ErrAdditionalConfig, "%s: %s", what, msg)
			ok = false
		case e.Kind == report.Warn:
			ps.Warnf(at, "%s: %s", what, msg)
		}
	}
	if err != nil && !r.IsFatal() {
		ps.Wrapf(at, ignition.ErrAdditionalConfig, "%s: %v", what, err)
	}
	return ok
}

// bootstrapOwned is what the user's additional config may not touch: the
// files nodeboot generates for the bootstrap (the kubeadm config,
// certificates and other files with no input field of their own), its
// scripts, the sentinel and the run-once stamp, and its units. Merged as the
// child, the user's config would win over any of them; a node whose
// bootstrap was replaced, removed or disabled never joins, or runs what it
// was not given.
func bootstrapOwned(p *provisioning.Plan) (paths map[string]bool, units map[string]bool) {
	paths = map[string]bool{bootstrapScript: true, doneStamp: true}
	units = map[string]bool{bootstrapUnit: true}
	if len(p.BootCommands) > 0 {
		paths[bootcmdScript] = true
		units[bootcmdUnit] = true
	}
	if p.Sentinel != "" {
		paths[p.Sentinel] = true
	}
	for i := range p.Files {
		if f := &p.Files[i]; f.Origin.IsZero() || f.BootstrapInput {
			paths[f.Path] = true
		}
	}
	return paths, units
}

// userView is the part of a parsed user config protectGenerated reads, the
// same in every 3.x version.
type userView struct {
	Ignition struct {
		Config struct {
			Merge   []json.RawMessage `json:"merge"`
			Replace struct {
				Source *string `json:"source"`
			} `json:"replace"`
		} `json:"config"`
	} `json:"ignition"`
	Storage struct {
		Files       []struct{ Path string } `json:"files"`
		Directories []struct{ Path string } `json:"directories"`
		Links       []struct{ Path string } `json:"links"`
	} `json:"storage"`
	Systemd struct {
		Units []struct{ Name string } `json:"units"`
	} `json:"systemd"`
}

// protectGenerated reports every entry of the user's config that would
// replace, remove or disable what nodeboot generates for the bootstrap
// (bootstrapOwned): a file, directory or link at one of its paths, a file or
// link where one of its parent directories must be, any entry for one of its
// units (contents, drop-ins, enabled: false and mask all change what runs),
// and ignition.config.replace, which discards the generated config whole.
// Problems name the entry and the path or unit, which are not secret; never
// contents.
func protectGenerated(p *provisioning.Plan, user any, at provisioning.Path, ps *provisioning.Problems) {
	raw, err := json.Marshal(user)
	var v userView
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		ps.Wrapf(at, ignition.ErrAdditionalConfig, "%v", err)
		return
	}
	paths, units := bootstrapOwned(p)
	if v.Ignition.Config.Replace.Source != nil {
		ps.Wrapf(at, ignition.ErrAdditionalConfig, "ignition.config.replace would discard the config nodeboot generates for the bootstrap")
	}
	if len(v.Ignition.Config.Merge) > 0 {
		ps.Warnf(at, "ignition.config.merge: a config fetched at boot is merged over the generated one and cannot be checked here; it must not replace the bootstrap files or units")
	}
	check := func(kind string, i int, p string, parentToo bool) {
		switch {
		case paths[p]:
			ps.Wrapf(at, ignition.ErrAdditionalConfig, "storage.%s[%d] (%s): may not replace a file nodeboot generates for the bootstrap", kind, i, p)
		case parentToo:
			under := ""
			for owned := range paths {
				if strings.HasPrefix(owned, strings.TrimSuffix(p, "/")+"/") && (under == "" || owned < under) {
					under = owned
				}
			}
			if under != "" {
				ps.Wrapf(at, ignition.ErrAdditionalConfig, "storage.%s[%d] (%s): may not stand where a directory of %s, which nodeboot generates for the bootstrap, must be", kind, i, p, under)
			}
		}
	}
	for i, f := range v.Storage.Files {
		check("files", i, f.Path, true)
	}
	for i, d := range v.Storage.Directories {
		check("directories", i, d.Path, false)
	}
	for i, l := range v.Storage.Links {
		check("links", i, l.Path, true)
	}
	for i, u := range v.Systemd.Units {
		if units[u.Name] {
			ps.Wrapf(at, ignition.ErrAdditionalConfig, "systemd.units[%d] (%s): may not change a unit nodeboot generates for the bootstrap", i, u.Name)
		}
	}
}
