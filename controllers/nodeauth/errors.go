package nodeauth

import "errors"

var (
	// ErrUnauthorized: the request's credential is not the config's, or
	// there is no such config or credential. Which one is never said.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotReady: the index has not listed the credentials yet (the
	// manager is starting); the node should retry.
	ErrNotReady = errors.New("the credential index is not synced yet")
)
