// Package util is the config/util/translate.go file that Flatcar's Ignition
// patches add to upstream's config/util: the helpers and error types that
// ../v24tov31 uses, vendored for tests only. See ../README.md.
package util
