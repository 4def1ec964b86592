package provisioning_test

import (
	"errors"
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"

	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit" // registers "cloud-config"
)

// A caller tells input it must fix (ErrInvalid) from a feature the chosen
// provisioner lacks (ErrUnsupported) without reading messages, and still
// gets every problem with its field path from errors.As.
func Example_errorClasses() {
	p, _ := provisioning.Get("cloud-config")
	plan := &provisioning.Plan{
		Files:    []provisioning.File{{Path: "", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()}},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "k3s agent"}},
	}
	_, err := p.Render(plan, provisioning.Options{Version: "9"})
	fmt.Println("invalid:", errors.Is(err, provisioning.ErrInvalid))
	fmt.Println("unsupported:", errors.Is(err, provisioning.ErrUnsupported))
	var problems provisioning.Problems
	if errors.As(err, &problems) {
		for _, pr := range problems {
			fmt.Printf("%s (unsupported: %v)\n", pr.Path, errors.Is(pr, provisioning.ErrUnsupported))
		}
	}

	_, err = p.Render(nil, provisioning.Options{})
	fmt.Println("nil plan:", errors.Is(err, provisioning.ErrNilPlan), errors.Is(err, provisioning.ErrInvalid))
	// Output:
	// invalid: true
	// unsupported: true
	// spec.files[0].path (unsupported: false)
	// options.version (unsupported: true)
	// nil plan: true true
}

// Paths are built from typed elements and compared as values; String is
// only for people.
func ExamplePath() {
	files := provisioning.NewPath("spec", "files")
	content := files.Index(2).Field("content")
	fmt.Println(content)
	fmt.Println(content.HasPrefix(files), content.HasPrefix(provisioning.NewPath("spec", "users")))

	rest, _ := content.TrimPrefix(files)
	fmt.Println(rest.Elements()[0].Index)

	addon := provisioning.ObjectRef{Kind: "FirstBootAddon", Namespace: "ns", Name: "cni"}
	fmt.Println(provisioning.NewPath("manifest").In(addon))
	fmt.Println(provisioning.NewPath("metadata", "annotations").Key("example.com/mode"))
	// Output:
	// spec.files[2].content
	// true false
	// 2
	// FirstBootAddon ns/cni.manifest
	// metadata.annotations[example.com/mode]
}

// Provisioner packages define their own sentinels with NewError, in one of
// the two classes.
func ExampleNewError() {
	errNoSwap := provisioning.NewError(provisioning.ErrUnsupported, "swap is not supported")
	var ps provisioning.Problems
	ps.Wrapf(provisioning.NewPath("mounts").Index(1), errNoSwap, "entry %d", 1)
	err := ps.Err()
	fmt.Println(err)
	fmt.Println(errors.Is(err, errNoSwap), errors.Is(err, provisioning.ErrUnsupported), errors.Is(err, provisioning.ErrInvalid))
	// Output:
	// mounts[1]: swap is not supported: entry 1
	// true true false
}
