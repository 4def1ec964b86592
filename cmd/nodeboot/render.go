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
				fmt.Fprintf(stderr, "%s: %s\n", p.Object, p.Problem)
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

// readInput reads the -f input, at most manifest.MaxInputBytes of it: an
// endless source (/dev/zero, a pipe) stops there with an error, memory
// bounded by the limit. os.ReadFile would trust a size of 0 from /dev/zero
// and read forever.
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "" {
		return example, nil
	}
	return readSource("-f", file, stdin, manifest.MaxInputBytes, "manifest.MaxInputBytes")
}

// readSource reads what a file flag names ("-" for stdin) through the one
// bounded reader every input of the CLI goes through: an endless source
// (/dev/zero, a pipe that never closes) stops at limit, with memory bounded
// by it.
func readSource(flagName, file string, stdin io.Reader, limit int, limitName string) ([]byte, error) {
	if file == "-" {
		return readLimited(stdin, "standard input", limit, limitName)
	}
	f, err := os.Open(file) //nolint:gosec // G304: the file the user named on the command line
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s %s: is a directory", flagName, file)
	}
	return readLimited(f, file, limit, limitName)
}

// readBounded reads a named file of at most limit bytes.
func readBounded(file string, limit int, limitName string) ([]byte, error) {
	return readSource("", file, nil, limit, limitName)
}

func readLimited(r io.Reader, name string, limit int, limitName string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, manifest.TooLarge("%s: larger than %d bytes (%s)", name, limit, limitName)
	}
	return data, nil
}

// checkOutputSize refuses bootstrap data no Secret could hold, as the API
// server would refuse the controller's Secret.
func checkOutputSize(ref string, out []byte) error {
	if len(out) > manifest.MaxOutputBytes {
		return manifest.TooLarge("%s: rendered bootstrap data is larger than %d bytes (manifest.MaxOutputBytes), more than a Secret holds", ref, manifest.MaxOutputBytes)
	}
	return nil
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
	if err := checkOutputSize(obj, out.Data); err != nil {
		return nil, "", err
	}
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
// private keys, so both files are readable by their owner only: each is
// written to a fresh temporary file in dir (0600, O_EXCL, so nothing planted
// there is followed) and renamed over its name, which replaces a symlink or
// a world-readable file instead of writing through it. The pair is replaced
// together: on an error no new file is left and the old pair is restored.
func writeDir(dir string, data []byte, format string) (err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{{"bootstrap-data", data}, {"format", []byte(format)}}
	var temps, backups []string
	defer func() {
		for _, t := range temps {
			_ = os.Remove(t)
		}
		for _, b := range backups {
			_ = os.Remove(b)
		}
	}()
	for _, f := range files {
		target := filepath.Join(dir, f.name)
		if fi, err := os.Lstat(target); err == nil && fi.IsDir() {
			return fmt.Errorf("-o %s: %s is a directory", dir, f.name)
		}
		tmp, err := createPrivate(dir, f.name, f.data)
		if err != nil {
			return err
		}
		temps = append(temps, tmp)
	}
	// Hard links keep the old pair (a planted symlink is linked as the link
	// itself) until both renames succeeded.
	old := make([]string, len(files))
	for i, f := range files {
		target := filepath.Join(dir, f.name)
		if _, err := os.Lstat(target); err != nil {
			continue
		}
		b := temps[i] + ".old"
		if err := os.Link(target, b); err != nil {
			return err
		}
		old[i] = b
		backups = append(backups, b)
	}
	for i, f := range files {
		if err := os.Rename(temps[i], filepath.Join(dir, f.name)); err != nil {
			for j, g := range files[:i] {
				restore(old[j], filepath.Join(dir, g.name))
			}
			return err
		}
	}
	temps = nil
	return nil
}

// restore puts back the file a rename replaced, or removes the new one when
// there was none.
func restore(backup, target string) {
	if backup == "" {
		_ = os.Remove(target)
		return
	}
	_ = os.Rename(backup, target)
}

func createPrivate(dir, name string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return "", werr
	}
	return f.Name(), nil
}
