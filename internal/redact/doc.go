// Package redact is the one list of what must not leave a node's output:
// keys, tokens and passwords, each class a POSIX extended regular
// expression matched within one line. The node redacts with sed before it
// reports (Sed renders the program into the reporter script); the manager
// redacts again with the same expressions in Go (Lines) before the text
// reaches a condition or an Event.
//
// It is shaped by the weaker of the two engines. Every pattern is POSIX ERE
// that GNU and BusyBox sed (glibc or musl regcomp) accept: no \b, \s, \d,
// lazy or look-around operators, and no backslash inside a bracket
// expression. Go compiles the same text with leftmost-longest matching, the
// semantics sed has, so both sides cut the same span out of a line; the
// corpus test holds them to identical output. A private key spans lines, so
// its class has an end pattern and works as a sed range does.
//
// Package redact imports the standard library only: the node reporter
// (package nodereport), the add-ons' apply script and the manager all use it.
package redact
