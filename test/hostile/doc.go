// Package hostile holds the hostile-input suite: inputs a tenant, a template
// or a Secret could carry that must end in a clear, bounded error (never a
// hang, an unbounded allocation, a Secret in a message or a silently
// changed node). Each case states its expected exit, message and limits.
package hostile
