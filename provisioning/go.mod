module github.com/nodeboot/nodeboot/provisioning

go 1.24.0

require (
	github.com/coreos/butane v0.26.0
	github.com/coreos/go-semver v0.3.1
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/coreos/ignition/v2 v2.25.0
	github.com/coreos/vcontext v0.0.0-20230201181013-d72178a18687
	github.com/flatcar/container-linux-config-transpiler v0.9.4
	github.com/flatcar/ignition v0.36.2
	github.com/google/go-cmp v0.7.0
	github.com/stretchr/testify v1.12.1
	github.com/vincent-petithory/dataurl v1.0.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/ajeddeloh/go-json v0.0.0-20200220154158-5ae607161559 // indirect
	github.com/alecthomas/units v0.0.0-20210208195552-ff826a37aa15 // indirect
	github.com/aws/aws-sdk-go-v2 v1.40.1 // indirect
	github.com/clarketm/json v1.17.1 // indirect
	github.com/coreos/go-json v0.0.0-20230131223807-18775e0fb4fb // indirect
	github.com/coreos/go-systemd v0.0.0-20191104093116-d3cd4ed1dbcf // indirect
	github.com/rogpeppe/go-internal v1.14.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	go4.org v0.0.0-20201209231011-d4a079459e60 // indirect
)
