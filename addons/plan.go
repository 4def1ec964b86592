package addons

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Defaults of Options.
const (
	DefaultDir        = "/etc/kubernetes/addons"
	DefaultKubeconfig = "/etc/kubernetes/admin.conf"
	DefaultTimeout    = 5 * time.Minute
	// IndexFile lists the add-ons for apply.sh, one per line, tab-separated:
	// name, version, sha256, file, url ("-" for empty fields) and, only for
	// a URL with its own CA bundle or a credential, the bundle's file ("-"
	// for none) and the credential's file.
	IndexFile = "addons.list"
	// ScriptFile is the apply step.
	ScriptFile = "apply.sh"
	// FieldManager is the server-side apply field manager of every object.
	FieldManager = "nodeboot"
	// RecordNamespace and RecordName locate the ConfigMap the node writes.
	RecordNamespace = "kube-system"
	RecordName      = "nodeboot-addons"
)

// Options tune where the add-ons go on the node and how long the apply step
// waits for the API server.
type Options struct {
	// Dir holds the manifests, the index and the script. Default DefaultDir.
	Dir string
	// Kubeconfig the step uses. Default DefaultKubeconfig (kubeadm's admin.conf).
	Kubeconfig string
	// Timeout bounds the whole step: fetching, waiting for the API server,
	// applying (no apply is started or left running past it); the record of
	// the results is written afterwards, within 30 s. Default
	// DefaultTimeout.
	Timeout time.Duration
}

var safePath = regexp.MustCompile(`^/[A-Za-z0-9._/-]+$`)

func (o Options) withDefaults() (Options, provisioning.Problems) {
	var ps provisioning.Problems
	if o.Dir == "" {
		o.Dir = DefaultDir
	}
	if o.Kubeconfig == "" {
		o.Kubeconfig = DefaultKubeconfig
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	for field, p := range map[string]string{"dir": o.Dir, "kubeconfig": o.Kubeconfig} {
		if !safePath.MatchString(p) || path.Clean(p) != p {
			ps.Errorf(provisioning.NewPath("options", field), "must be a clean absolute path of letters, digits and '._-/', got %q", p)
		}
	}
	if o.Timeout < time.Second {
		ps.Errorf(provisioning.NewPath("options", "timeout"), "must be at least 1s, got %s", o.Timeout)
	}
	return o, ps
}

// Contribute adds the add-ons to an init control-plane Plan: one manifest file
// per inline add-on (mode 0600), the index and the apply script, and the step
// that runs it, placed right after the bootstrap command so the add-ons exist
// before the user's post-bootstrap commands run. Plans of joining nodes and an
// empty list are left untouched. Invalid add-ons return an error wrapping
// ErrInvalidAddon and the provisioning.Problems naming each field; the Plan
// is then unchanged.
func Contribute(plan *provisioning.Plan, list []Addon, opts Options) error {
	if plan.Role != provisioning.RoleInit || len(list) == 0 {
		return nil
	}
	opts, ps := opts.withDefaults()
	ps = append(ps, Validate(list)...)
	if err := ps.Err(); err != nil {
		return fmt.Errorf("%w:\n%w", ErrInvalidAddon, err)
	}
	sorted := slices.Clone(list)
	slices.SortStableFunc(sorted, func(a, b Addon) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
	})
	var files []provisioning.File
	var index strings.Builder
	// once adds a file the add-ons share (a CA bundle, a credential) the
	// first time it is needed.
	once := func(name, content string) {
		if !slices.ContainsFunc(files, func(f provisioning.File) bool { return f.Path == path.Join(opts.Dir, name) }) {
			files = append(files, provisioning.File{Path: path.Join(opts.Dir, name), Owner: "root:root", Permissions: "0600", Content: content})
		}
	}
	for _, a := range sorted {
		name := fmt.Sprintf("%03d-%s.yaml", a.Order, a.Name)
		url, extra := "-", ""
		if a.URL != "" {
			url, extra = fetchColumns(a, once)
		} else {
			files = append(files, provisioning.File{
				Path: path.Join(opts.Dir, name), Owner: "root:root", Permissions: "0600",
				Content: string(a.Manifest), Origin: a.Origin,
			})
		}
		fmt.Fprintf(&index, "%s\t%s\t%s\t%s\t%s%s\n", a.Name, cmp.Or(a.Version, "-"), a.digest(), name, url, extra)
	}
	files = append(files,
		provisioning.File{Path: path.Join(opts.Dir, IndexFile), Owner: "root:root", Permissions: "0600", Content: index.String()},
		provisioning.File{Path: path.Join(opts.Dir, ScriptFile), Owner: "root:root", Permissions: "0700", Content: Script()},
	)
	plan.Files = append(plan.Files, files...)
	step := provisioning.Command{Phase: provisioning.PhasePost, Script: command(opts, Digest([]byte(index.String())))}
	at := len(plan.Commands)
	for i, c := range plan.Commands {
		if c.Phase == provisioning.PhaseBootstrap {
			at = i + 1
		}
	}
	plan.Commands = slices.Insert(plan.Commands, at, step)
	return nil
}

// command is the apply step's shell command; settings other than the
// defaults travel as environment variables the script reads.
func command(o Options, indexDigest string) string {
	var env []string
	if o.Kubeconfig != DefaultKubeconfig {
		env = append(env, "NODEBOOT_ADDONS_KUBECONFIG="+o.Kubeconfig)
	}
	if o.Timeout != DefaultTimeout {
		env = append(env, "NODEBOOT_ADDONS_TIMEOUT="+strconv.Itoa(int(o.Timeout.Round(time.Second)/time.Second)))
	}
	return strings.Join(append(env, "/bin/sh", path.Join(o.Dir, ScriptFile), indexDigest), " ")
}
