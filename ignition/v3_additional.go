package ignition

import (
	"bytes"
	"encoding/json"
	"strings"

	butane "github.com/coreos/butane/config"
	butanecommon "github.com/coreos/butane/config/common"
	"github.com/coreos/vcontext/report"
	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
)

// butaneVariants are the Butane variants whose output boots the operating
// systems nodeboot targets.
var butaneVariants = map[string]bool{"flatcar": true, "fcos": true}

// userConfig reads the additional config into the dialect's types: Butane
// (YAML with variant and version keys) is translated first, Ignition JSON is
// parsed as is; older spec versions are translated up by Ignition itself.
func userConfig(raw []byte, strict bool, d *dialect, ps *provisioning.Problems) any {
	ign := raw
	if t := bytes.TrimSpace(raw); !isButane(raw) && (len(t) == 0 || t[0] != '{') {
		ps.Errorf(additionalConfigPath, "%v: for Ignition %s it must be Butane (with variant and version keys) or Ignition JSON; a Container Linux Config works with the legacy dialect only", ErrAdditionalConfig, d.version)
		return nil
	}
	if isButane(raw) {
		var head struct {
			Variant string `yaml:"variant"`
			Version string `yaml:"version"`
		}
		_ = yaml.Unmarshal(raw, &head)
		if !butaneVariants[head.Variant] {
			ps.Errorf(additionalConfigPath, "%v: Butane variant %q is not supported (use flatcar or fcos)", ErrAdditionalConfig, head.Variant)
			return nil
		}
		if strings.Contains(head.Version, "experimental") {
			ps.Errorf(additionalConfigPath, "%v: experimental Butane version %q is not supported", ErrAdditionalConfig, head.Version)
			return nil
		}
		out, r, err := butane.TranslateBytes(raw, butanecommon.TranslateBytesOptions{})
		if !reportInto(ps, "Butane", r, err, strict) {
			return nil
		}
		ign = out
	}
	cfg, r, err := d.parseCompatible(ign)
	if !reportInto(ps, "Ignition", r, err, strict) {
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
func reportInto(ps *provisioning.Problems, what string, r report.Report, err error, strict bool) bool {
	ok := err == nil && !r.IsFatal()
	for _, e := range r.Entries {
		msg := e.String()
		switch {
		case e.Kind == report.Error, strict && e.Kind == report.Warn:
			ps.Errorf(additionalConfigPath, "%v: %s: %s", ErrAdditionalConfig, what, msg)
			ok = false
		case e.Kind == report.Warn:
			ps.Warnf(additionalConfigPath, "%s: %s", what, msg)
		}
	}
	if err != nil && !r.IsFatal() {
		ps.Errorf(additionalConfigPath, "%v: %s: %v", ErrAdditionalConfig, what, err)
	}
	return ok
}
