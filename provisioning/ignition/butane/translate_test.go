package butane

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	butaneconfig "github.com/coreos/butane/config"
	"github.com/coreos/butane/config/common"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// Butane's all-variant registry is the oracle for Translate: the same
// input must give the same bytes, report and error through both, for every
// version the registry holds of an accepted variant.

// butaneBodies exercise the sugar the variants translate differently
// (storage, systemd, and for fcos boot_device); each is tried with every
// version and the results compared, so a body a version rejects compares its
// errors.
var butaneBodies = []string{
	"",
	"storage:\n  files:\n  - path: /etc/nodeboot\n    mode: 0644\n    contents:\n      inline: hello\n  directories:\n  - path: /opt/nodeboot\nsystemd:\n  units:\n  - name: nodeboot.service\n    enabled: true\n    contents: |\n      [Service]\n      ExecStart=/bin/true\n",
	"boot_device:\n  mirror:\n    devices: [/dev/sda, /dev/sdb]\n",
	"storage:\n  files:\n  - path: relative\n",
	"unknown_key: 1\n",
}

// accepted are the Butane variants package ignition accepts (its
// butaneVariants); TestAcceptedMatchesIgnition holds the two together.
var accepted = map[string]bool{"flatcar": true, "fcos": true}

// TestAcceptedMatchesIgnition: every variant Butane knows is refused by
// ignition before translation exactly when it is not in accepted, so the
// translators table serves every variant ignition lets through.
func TestAcceptedMatchesIgnition(t *testing.T) {
	plan := &provisioning.Plan{Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}}}
	for _, variant := range []string{"flatcar", "fcos", "openshift", "r4e", "fiot"} {
		config := "variant: " + variant + "\nversion: 99.0.0\n"
		_, err := (&ignition.Renderer{}).Render(plan, provisioning.Options{Version: "3.4.0", AdditionalConfig: []byte(config)})
		refused := err != nil && strings.Contains(err.Error(), "Butane variant \""+variant+"\" is not supported")
		if err == nil || refused == accepted[variant] {
			t.Errorf("%s: ignition refuses it before translation %v, accepted here %v (%v)", variant, refused, accepted[variant], err)
		}
	}
}

func sameTranslation(t *testing.T, input string) {
	t.Helper()
	want, wantReport, wantErr := butaneconfig.TranslateBytes([]byte(input), common.TranslateBytesOptions{})
	got, gotReport, gotErr := Translate([]byte(input))
	if string(got) != string(want) {
		t.Errorf("%q: output differs from Butane's:\n got %s\nwant %s", input, got, want)
	}
	if gotReport.String() != wantReport.String() {
		t.Errorf("%q: report differs from Butane's:\n got %s\nwant %s", input, gotReport.String(), wantReport.String())
	}
	if !reflect.DeepEqual(gotErr, wantErr) {
		t.Errorf("%q: error differs from Butane's: got %v, want %v", input, gotErr, wantErr)
	}
}

func TestTranslatorsMatchButane(t *testing.T) {
	for variant := range accepted {
		if len(translators[variant]) == 0 {
			t.Errorf("accepted variant %s has no translators", variant)
		}
	}
	for variant := range translators {
		if !accepted[variant] {
			t.Errorf("translators for %s, which ignition does not accept", variant)
		}
	}
	// Probe Butane's registry, which is unexported, with every plausible
	// version: each stable version it holds must be in our table (so a
	// Butane upgrade that adds flatcar 1.2.0 fails here until it is added),
	// and each we list must be one it holds.
	registered := 0
	for variant := range accepted {
		for major := 1; major <= 2; major++ {
			for minor := 0; minor <= 20; minor++ {
				version := fmt.Sprintf("%d.%d.0", major, minor)
				head := fmt.Sprintf("variant: %s\nversion: %s\n", variant, version)
				_, _, err := butaneconfig.TranslateBytes([]byte(head), common.TranslateBytesOptions{})
				inButane := !errors.As(err, new(common.ErrUnknownVersion))
				_, inOurs := translators[variant][version]
				if inButane != inOurs {
					t.Errorf("%s %s: in Butane's registry %v, in translators %v", variant, version, inButane, inOurs)
				}
				if !inButane {
					continue
				}
				registered++
				for _, body := range butaneBodies {
					sameTranslation(t, head+body)
				}
			}
		}
	}
	if registered != 9 {
		t.Errorf("found %d stable flatcar and fcos versions in Butane v0.26.0's registry, want 9 (fcos 1.0-1.6, flatcar 1.0-1.1)", registered)
	}
}

func TestTranslateButaneErrorsMatchButane(t *testing.T) {
	for _, input := range []string{
		"variant: flatcar\nversion: [\n",               // not YAML
		"version: 1.1.0\n",                             // no variant
		"variant: flatcar\nversion: 1.1\n",             // not semver
		"variant: flatcar\nversion: 01.1.0\n",          // semver, canonical 1.1.0
		"variant: flatcar\nversion: 1.1.0+build\n",     // build metadata
		"variant: flatcar\nversion: 9.0.0\n",           // unknown version
		"variant: openshift\nversion: 4.14.0\n",        // a variant we do not link
		"variant: fcos\nversion: 1.7.0-experimental\n", // refused before translation
	} {
		if strings.Contains(input, "openshift") || strings.Contains(input, "experimental") {
			// Butane translates these; we must refuse them as unknown.
			if _, _, err := Translate([]byte(input)); err == nil {
				t.Errorf("%q: translated by a variant nodeboot does not link", input)
			} else if !errors.As(err, new(common.ErrUnknownVersion)) {
				t.Errorf("%q: error %v, want common.ErrUnknownVersion", input, err)
			}
			continue
		}
		sameTranslation(t, input)
	}
}
