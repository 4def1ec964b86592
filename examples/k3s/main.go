package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "k3s:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("k3s", flag.ContinueOnError)
	out := fs.String("out", "out", "directory the rendered files are written to")
	server := fs.String("server", "https://192.0.2.10:6443", "the k3s server's supervisor URL")
	tokenPath := fs.String("token-file", "", "file with the join token (default: a new random token)")
	k3sURL := fs.String("k3s-url", "https://github.com/k3s-io/k3s/releases/download/v1.31.4%2Bk3s1/k3s", "where to download k3s when the image has none")
	k3sSHA := fs.String("k3s-sha256", "", "sha256 the downloaded k3s binary must have")
	sshKey := fs.String("ssh-key", "", "public key of an ops account with sudo (default: no account)")
	installCmd := fs.String("install-command", "", "shell command that installs /usr/local/bin/k3s instead of the download")
	plans := fs.Bool("plans", false, "print the Plans as JSON on stdout (they hold the token) and render nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	token, err := readToken(*tokenPath)
	if err != nil {
		return err
	}
	node := func(isServer bool) Node {
		return Node{Server: isServer, ServerURL: *server, Token: token, K3sURL: *k3sURL, K3sSHA256: *k3sSHA, InstallCommand: *installCmd, SSHKey: *sshKey}
	}
	if *plans {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"server": Plan(node(true)), "agent": Plan(node(false))})
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return err
	}
	for name, isServer := range map[string]bool{"server": true, "agent": false} {
		data, err := Render(Plan(node(isServer)))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		suffixes := make([]string, 0, len(data))
		for s := range data {
			suffixes = append(suffixes, s)
		}
		sort.Strings(suffixes)
		for _, s := range suffixes {
			// The data holds the join token: owner-only.
			f := filepath.Join(*out, name+"."+s)
			if err := os.WriteFile(f, data[s], 0o600); err != nil {
				return err
			}
			fmt.Println(f)
		}
	}
	return nil
}

func readToken(path string) (string, error) {
	if path == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return hex.EncodeToString(b), nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Size() > 4096 {
		return "", fmt.Errorf("-token-file: %d bytes, a token is at most 4096", fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	token := string(b)
	for len(token) > 0 && (token[len(token)-1] == '\n' || token[len(token)-1] == '\r') {
		token = token[:len(token)-1]
	}
	if token == "" {
		return "", fmt.Errorf("-token-file: the file is empty")
	}
	return token, nil
}
