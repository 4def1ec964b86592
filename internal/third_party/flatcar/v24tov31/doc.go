// Package v24tov31 is Flatcar's Ignition translator from spec 2.4 (and, via
// github.com/flatcar/ignition/config/v2_4, every 2.x) to spec 3.1, vendored
// from the flatcar/scripts Ignition patch series for tests only. See
// ../README.md for its source, version and the import-path edits made.
package v24tov31
