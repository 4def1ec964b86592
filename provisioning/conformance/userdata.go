package conformance

import "github.com/nodeboot/nodeboot/provisioning"

// userDataCases: free-form user data of each type beside a Plan whose
// file, bootstrap command and sentinel must still be there.
func userDataCases() []Case {
	return []Case{userDataCloudConfigCase(), userDataShellScriptCase(), userDataIgnitionCase(), userDataMixedCase()}
}

// userDataPlan is the Plan beside the user data: a file, a bootstrap and
// a post command, the sentinel.
func userDataPlan(u provisioning.UserData) *provisioning.Plan {
	return &provisioning.Plan{
		Role:  provisioning.RoleJoinWorker,
		Files: []provisioning.File{{Path: "/etc/conformance/plan.conf", Permissions: "0644", Content: "from the plan\n"}},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhaseBootstrap, Script: log("bootstrap")},
			{Phase: provisioning.PhasePost, Script: log("post")},
		},
		Sentinel: Sentinel,
		UserData: []provisioning.UserData{u},
	}
}

var userDataFiles = []File{
	{Path: "/etc/conformance/plan.conf", Content: "from the plan\n", Mode: 0o644, Owner: "root:root"},
	{Path: Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"},
}

// userDataCloudConfigCase: a cloud-config document's write_files and
// runcmd take effect beside the Plan's, its runcmd after the Plan's
// commands: cloud-init's merge appends them, it does not replace the
// Plan's.
func userDataCloudConfigCase() Case {
	doc := userCloudConfig
	return Case{
		Name: "user-data-cloud-config",
		Plan: func() *provisioning.Plan {
			return userDataPlan(provisioning.UserData{Type: provisioning.UserDataCloudConfig, Content: doc})
		},
		Uses: []provisioning.Element{provisioning.ElementFiles, provisioning.ElementCommands, provisioning.ElementSentinel, provisioning.ElementUserDataCloudConfig},
		Want: State{
			Files: append([]File{userFile}, userDataFiles...),
			Log:   []string{"bootstrap", "post", "user-runcmd"},
		},
	}
}

// userDataMixedCase: a cloud-config document and a shell script in one
// Plan, both taking effect, the script last.
func userDataMixedCase() Case {
	return Case{
		Name: "user-data-mixed",
		Plan: func() *provisioning.Plan {
			p := userDataPlan(provisioning.UserData{Type: provisioning.UserDataCloudConfig, Content: userCloudConfig})
			p.UserData = append(p.UserData, provisioning.UserData{Type: provisioning.UserDataShellScript, Content: userScript})
			return p
		},
		Uses: []provisioning.Element{
			provisioning.ElementFiles, provisioning.ElementCommands, provisioning.ElementSentinel,
			provisioning.ElementUserDataCloudConfig, provisioning.ElementUserDataShellScript,
		},
		Want: State{
			Files: append([]File{userFile}, userDataFiles...),
			Log:   []string{"bootstrap", "post", "user-runcmd", "user-script"},
		},
	}
}

var (
	userCloudConfig = "#cloud-config\nwrite_files:\n  - path: /etc/conformance/user.conf\n    permissions: '0600'\n    content: |\n      from the user\n" +
		"runcmd:\n  - '" + log("user-runcmd") + "'\n"
	userFile   = File{Path: "/etc/conformance/user.conf", Content: "from the user\n", Mode: 0o600, Owner: "root:root"}
	userScript = "#!/bin/sh\nset -e\n" + log("user-script") + "\n"
)

// userDataShellScriptCase: a shell script runs once, after the Plan's
// commands, by its own interpreter.
func userDataShellScriptCase() Case {
	script := userScript
	return Case{
		Name: "user-data-shell-script",
		Plan: func() *provisioning.Plan {
			return userDataPlan(provisioning.UserData{Type: provisioning.UserDataShellScript, Content: script})
		},
		Uses: []provisioning.Element{provisioning.ElementFiles, provisioning.ElementCommands, provisioning.ElementSentinel, provisioning.ElementUserDataShellScript},
		Want: State{
			Files: userDataFiles,
			Log:   []string{"bootstrap", "post", "user-script"},
		},
	}
}

// userDataIgnitionCase: an Ignition config merged over the Plan's writes
// its file.
func userDataIgnitionCase() Case {
	cfg := `{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/etc/conformance/merged.conf","mode":420,` +
		`"contents":{"source":"data:,merged%20by%20Ignition%0A"}}]}}`
	return Case{
		Name: "user-data-ignition",
		Plan: func() *provisioning.Plan {
			return userDataPlan(provisioning.UserData{Type: provisioning.UserDataIgnition, Content: cfg})
		},
		Uses: []provisioning.Element{provisioning.ElementFiles, provisioning.ElementCommands, provisioning.ElementSentinel, provisioning.ElementUserDataIgnition},
		Want: State{
			Files: append([]File{{Path: "/etc/conformance/merged.conf", Content: "merged by Ignition\n", Mode: 0o644, Owner: "root:root"}}, userDataFiles...),
			Log:   []string{"bootstrap", "post"},
		},
	}
}
