package ignition_test

import (
	"net/url"
	"strings"
	"testing"

	v34 "github.com/coreos/ignition/v2/config/v3_4"
	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// TestV3NTPConfiguresBothClients: Flatcar runs systemd-timesyncd, Fedora
// CoreOS chronyd; servers reach whichever the image runs, and enabled: false
// configures nothing, as cloud-init's ntp module skips itself (the Plan's
// meaning of NTP.Enabled).
func TestV3NTPConfiguresBothClients(t *testing.T) {
	p := basePlan()
	p.NTP = &provisioning.NTP{Servers: []string{"time1.example.com", "time2.example.com"}}
	cfg, _, err := v34.Parse(render(t, p, provisioning.Options{Version: "3.4.0"}).Data)
	require.NoError(t, err)
	files := map[string]string{}
	for _, f := range cfg.Storage.Files {
		if f.Contents.Source != nil {
			data, err := url.PathUnescape(strings.TrimPrefix(*f.Contents.Source, "data:,"))
			require.NoError(t, err)
			files[f.Path] = data
		}
	}
	require.Equal(t, "[Time]\nNTP=time1.example.com time2.example.com\n", files["/etc/systemd/timesyncd.conf.d/10-nodeboot.conf"])
	chrony := strings.Split(files["/etc/chrony.conf"], "\n")
	require.Equal(t, []string{"server time1.example.com iburst", "server time2.example.com iburst"}, chrony[:2])

	p.NTP.Enabled = new(bool)
	cfg, _, err = v34.Parse(render(t, p, provisioning.Options{Version: "3.4.0"}).Data)
	require.NoError(t, err)
	for _, u := range cfg.Systemd.Units {
		require.NotContains(t, []string{"systemd-timesyncd.service", "chronyd.service"}, u.Name, "enabled: false leaves the time clients as the image has them")
	}
	for _, f := range cfg.Storage.Files {
		require.NotContains(t, []string{"/etc/chrony.conf", "/etc/systemd/timesyncd.conf.d/10-nodeboot.conf"}, f.Path)
	}
}

// TestLegacyWarnsOfExitZero: legacy Ignition's kubeadm.sh is one bash
// script, so an exit 0 in a pre command skips the bootstrap command and the
// sentinel; CABPK's bytes stay and the command gets a warning.
func TestLegacyWarnsOfExitZero(t *testing.T) {
	p := basePlan()
	p.Commands = append([]provisioning.Command{{Phase: provisioning.PhasePre, Script: "exit 0"}}, p.Commands...)
	var paths []string
	for _, pr := range (&ignition.Renderer{}).Check(p, provisioning.Options{Version: provisioning.VersionCABPK}).Warnings() {
		paths = append(paths, pr.Path.String())
	}
	require.Contains(t, paths, "commands[0]")
}
