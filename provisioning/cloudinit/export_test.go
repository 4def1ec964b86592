package cloudinit

import "github.com/nodeboot/nodeboot/provisioning"

// PlainEmitted renders the plain document of p twice, by emitPlain and by
// yaml.v3 alone, and says whether emitPlain wrote it (else the renderer
// uses yaml.v3's bytes).
func PlainEmitted(p *provisioning.Plan) (emitted, yamlv3 []byte, ok bool, err error) {
	ps, p := checkPlain(p, provisioning.Options{Version: VersionPlain})
	if err := ps.Err(); err != nil {
		return nil, nil, false, err
	}
	d := plainDocument(p.WithCommandTemplates())
	emitted, ok = emitPlain([]byte(plainHeader), d)
	yamlv3, err = encodePlain(d)
	return emitted, yamlv3, ok, err
}
