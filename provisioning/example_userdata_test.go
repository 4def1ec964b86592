package provisioning_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// A provider's user adds a cloud-config document and a script of their own
// (CAPRKE2's additionalUserData). cloud-init gets multi-part MIME: the
// Plan's cloud-config first, then each document with its type. CABPK's
// dialect has no place for them and refuses, at the document's type.
func ExampleUserData() {
	plan := &provisioning.Plan{
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "systemctl start rke2-server"}},
		UserData: []provisioning.UserData{
			{Type: provisioning.UserDataCloudConfig, Content: "#cloud-config\npackages: [jq]\n"},
			{Type: provisioning.UserDataShellScript, Content: "#!/bin/sh\necho hello > /run/hello\n"},
		},
	}
	cc, _ := provisioning.Get("cloud-config")
	out, err := cc.Render(plan, provisioning.Options{})
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(string(out.Data), "\n") {
		if strings.HasPrefix(l, "Content-Type:") {
			fmt.Println(strings.Fields(l)[1])
		}
	}
	_, err = cc.Render(plan, provisioning.Options{Version: provisioning.VersionCABPK})
	var ps provisioning.Problems
	fmt.Println(errors.Is(err, provisioning.ErrUnsupported), errors.As(err, &ps) && ps[0].Path.String() == "userData[0].type")
	// Output:
	// multipart/mixed;
	// text/cloud-config;
	// text/cloud-config;
	// text/x-shellscript;
	// true true
}
