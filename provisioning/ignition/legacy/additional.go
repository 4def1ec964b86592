package legacy

import (
	"crypto/sha256"
	"sync"

	ign23types "github.com/flatcar/ignition/config/v2_3/types"
)

// The user's additional CLC is read as the transpiler reads it, because its
// warnings and errors are CABPK's: by fastCLC when the config is in the
// subset it reads exactly and the transpiler would report nothing, by the
// transpiler itself otherwise. Every Machine of a MachineDeployment carries
// the same additionalConfig from its template, so the result is kept for
// the last few distinct configs. The key is the content's hash and the
// strict flag; the result is never modified after it is stored
// (appendLegacy copies into a new config), so renders can share it.

// clcCacheSize bounds the cache: entries hold the converted config of an
// input of bounded size, so the cache's memory is bounded too.
const clcCacheSize = 64

type clcKey struct {
	sum    [sha256.Size]byte
	strict bool
}

type clcResult struct {
	cfg      ign23types.Config
	warnings string
	err      error
}

var clcCache = struct {
	sync.Mutex
	entries map[clcKey]*clcResult
	order   []clcKey // insertion order; the oldest is evicted first
}{entries: map[clcKey]*clcResult{}}

// cachedCLCToIgnition is clcToIgnition, remembered.
func cachedCLCToIgnition(data []byte, strict bool) (ign23types.Config, string, error) {
	key := clcKey{sha256.Sum256(data), strict}
	clcCache.Lock()
	res, ok := clcCache.entries[key]
	clcCache.Unlock()
	if ok {
		return res.cfg, res.warnings, res.err
	}
	cfg, warnings, err := clcToIgnition(data, strict)
	res = &clcResult{cfg, warnings, err}
	clcCache.Lock()
	defer clcCache.Unlock()
	if _, ok := clcCache.entries[key]; !ok {
		if len(clcCache.order) >= clcCacheSize {
			delete(clcCache.entries, clcCache.order[0])
			clcCache.order = clcCache.order[1:]
		}
		clcCache.entries[key] = res
		clcCache.order = append(clcCache.order, key)
	}
	return cfg, warnings, err
}
