package main

import (
	"flag"
	"fmt"
	"io"

	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
)

// inputFlags are the flags render, validate and diff share: which input,
// which KubeadmConfig, strictness and the add-on options the manager has.
type inputFlags struct {
	file, name string
	strict     bool
	addons     addonsctrl.ExtensionOptions
}

func (f *inputFlags) add(fs *flag.FlagSet, nameHelp string) {
	fs.StringVar(&f.file, "f", "", "input file, or - for standard input (default: the embedded example)")
	fs.StringVar(&f.name, "name", "", nameHelp)
	fs.BoolVar(&f.strict, "strict", false, "fail on every warning, as the manager's --strict does (the nodeboot.dev/strict annotation still decides per object)")
	fs.IntVar(&f.addons.MaxBytes, "addons-max-bytes", 16384, "size budget in bytes of bootstrap data that carries FirstBootAddons from the input, as the manager's flag (a Cluster's nodeboot.dev/bootstrap-data-max-bytes overrides it); 0 turns it off")
	fs.BoolVar(&f.addons.Compress, "addons-compress", true, "compress bootstrap data that carries FirstBootAddons from the input, as the manager's flag")
}

// parse parses args into fs and checks what the flags have in common; ok
// is false after it reported a usage error.
func (f *inputFlags) parse(cmd string, fs *flag.FlagSet, args []string, stderr io.Writer) (ok bool) {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "nodeboot %s: unexpected argument %q\n", cmd, fs.Arg(0))
		return false
	}
	if f.addons.MaxBytes < 0 {
		fmt.Fprintf(stderr, "nodeboot %s: --addons-max-bytes must not be negative\n", cmd)
		return false
	}
	return true
}
