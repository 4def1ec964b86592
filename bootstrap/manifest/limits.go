package manifest

// The limits every reader of nodeboot input applies. They are in one place so
// the CLI, the tests and the README name the same numbers; each is hit with
// an error wrapping ErrTooLarge that names the document, object or field,
// never a silently shortened input.
const (
	// MaxInputBytes bounds everything the CLI reads from one -f file or
	// standard input. An endless source (/dev/zero, a pipe that never closes)
	// stops here, with memory bounded by the limit.
	MaxInputBytes = 32 << 20

	// MaxDocumentBytes bounds one YAML document of the input. It is larger
	// than the API server's 3 MiB request limit because a `kubectl get -o
	// yaml` List of many objects is one document.
	MaxDocumentBytes = 8 << 20

	// MaxDocumentNodes bounds the YAML nodes (mappings, sequences, scalars,
	// aliases) of one document, so a document made of tiny nodes cannot cost
	// far more memory than its size suggests. They are counted from above
	// before the document is parsed (an empty value or key counts, a line
	// counts; ordinary YAML counts about twice its nodes), so a refused
	// document never gets built: at this bound the largest tree the reader
	// builds costs about 200 MB.
	MaxDocumentNodes = 1 << 19

	// MaxExpandedBytes bounds a document after YAML alias expansion (its
	// scalars' bytes plus one per node): aliases may not make a document
	// larger than a document may be ("billion laughs").
	MaxExpandedBytes = MaxDocumentBytes

	// MaxOutputBytes bounds rendered bootstrap data: the API server refuses
	// a Secret whose data exceeds 1 MiB, so larger data could never reach a
	// node through Cluster API.
	MaxOutputBytes = 1 << 20
)
