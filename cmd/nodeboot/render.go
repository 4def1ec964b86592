package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
)

//go:embed example.yaml
var example []byte

type renderFlags struct {
	inputFlags
	outDir string
	sizes  bool
}

func render(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f renderFlags
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.add(fs, "the KubeadmConfig to render when the input has several")
	fs.StringVar(&f.outDir, "o", "", "write DIR/bootstrap-data and DIR/format instead of printing the data")
	fs.BoolVar(&f.sizes, "sizes", false, "report the size in bytes of each part of the output on standard error")
	if !f.parse("render", fs, args, stderr) {
		return 2
	}
	input, err := readInput(f.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "nodeboot render: %v\n", err)
		return 1
	}
	out, format, err := renderBytes(input, f, stderr)
	if err != nil {
		var invalid *bootstrap.InvalidError
		if errors.As(err, &invalid) {
			for _, p := range invalid.Problems {
				fmt.Fprintf(stderr, "%s: %s: %s\n", p.Object, p.Path, p.Message)
			}
		} else {
			fmt.Fprintf(stderr, "nodeboot render: %v\n", err)
		}
		return 1
	}
	if f.outDir == "" {
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "nodeboot render: %v\n", err)
			return 1
		}
		return 0
	}
	if err := writeDir(f.outDir, out, format); err != nil {
		fmt.Fprintf(stderr, "nodeboot render: %v\n", err)
		return 1
	}
	return 0
}

func readInput(file string, stdin io.Reader) ([]byte, error) {
	switch file {
	case "":
		return example, nil
	case "-":
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}

// renderBytes builds and renders; warnings go to stderr, never stdout.
// FirstBootAddons in the input are applied to the selected Cluster as the
// manager's add-on extension applies them (kubelet settings, then the init
// node's add-ons, budget and compression).
func renderBytes(input []byte, f renderFlags, stderr io.Writer) ([]byte, string, error) {
	set, err := manifest.Parse(bytes.NewReader(input))
	if err != nil {
		return nil, "", err
	}
	objs, err := readAddonObjects(input)
	if err != nil {
		return nil, "", err
	}
	in, err := set.Input(f.name)
	if err != nil {
		return nil, "", err
	}
	in.Strict = f.strict
	ext, err := objs.extension(f.addons)
	if err != nil {
		return nil, "", err
	}
	ctx := context.Background()
	if ext != nil {
		if err := ext.MutateConfig(ctx, in.Cluster, in.Config); err != nil {
			return nil, "", err
		}
	}
	res, err := bootstrap.Build(ctx, *in)
	if err != nil {
		return nil, "", err
	}
	if ext != nil {
		if err := ext.MutatePlan(ctx, in.Cluster, in.Config, res); err != nil {
			return nil, "", err
		}
	}
	out, err := res.Render()
	if err != nil {
		return nil, "", err
	}
	obj := "KubeadmConfig " + res.Config.Namespace + "/" + res.Config.Name
	for _, w := range out.Warnings {
		fmt.Fprintf(stderr, "warning: %s: %s: %s\n", obj, w.Path, w.Message)
	}
	if f.sizes {
		keys := make([]string, 0, len(out.Sizes))
		for k := range out.Sizes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(stderr, "size: %s: %d bytes\n", k, out.Sizes[k])
		}
	}
	return out.Data, out.Format, nil
}

// writeDir stores the output as the reference vectors do. The data may hold
// private keys, so both files are readable by their owner only.
func writeDir(dir string, data []byte, format string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bootstrap-data"), data, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "format"), []byte(format), 0o600)
}
