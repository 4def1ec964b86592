package addons

import _ "embed"

//go:embed apply.sh
var script string

// Script returns the apply step (apply.sh). Its environment overrides exist
// for tests and unusual images: NODEBOOT_ADDONS_DIR (default: the script's
// directory), NODEBOOT_ADDONS_KUBECONFIG, NODEBOOT_ADDONS_TIMEOUT (seconds)
// and NODEBOOT_KUBECTL.
func Script() string { return script }
