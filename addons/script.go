package addons

import (
	_ "embed"

	"github.com/nodeboot/nodeboot/internal/shellscript"
)

//go:embed apply.sh
var source string

// script is apply.sh as the node gets it: the comment lines, which only its
// maintainers read, are left out of the bootstrap data (the file has no
// here-documents, so no '#' line is data). The shebang stays.
var script = shellscript.StripComments(source)

// Script returns the apply step (apply.sh without its comment lines). Its
// environment overrides exist for tests and unusual images:
// NODEBOOT_ADDONS_DIR (default: the script's directory),
// NODEBOOT_ADDONS_KUBECONFIG, NODEBOOT_ADDONS_TIMEOUT (seconds) and
// NODEBOOT_KUBECTL.
func Script() string { return script }
