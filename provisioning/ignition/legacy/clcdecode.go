package legacy

import (
	ctypes "github.com/flatcar/container-linux-config-transpiler/config/types"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"
)

// What fastCLC's parser read becomes the transpiler's CLC types here, as
// yaml.v3 decodes them, and then Ignition 2.3, as the transpiler converts
// them. Both handle only the keys clcfast.go lists.

// decodeFastCLC is yaml.v3's Decode of doc into the CLC types, for the keys
// the fast path knows; ok=false for any other key or value.
func decodeFastCLC(doc *fnode, in *ctypes.Config) bool {
	return eachKey(doc, func(k string, v *fnode) bool {
		switch k {
		case "systemd":
			return eachKey(v, func(k string, v *fnode) bool {
				return k == "units" && eachItem(v, func(v *fnode) bool {
					var u ctypes.SystemdUnit
					ok := eachKey(v, func(k string, v *fnode) bool {
						switch k {
						case "name":
							return fastStr(v, &u.Name)
						case "enable":
							return fastBool(v, &u.Enable)
						case "enabled":
							u.Enabled = new(bool)
							return fastBool(v, u.Enabled)
						case "mask":
							return fastBool(v, &u.Mask)
						case "contents":
							return fastStr(v, &u.Contents)
						case "dropins":
							return eachItem(v, func(v *fnode) bool {
								var d ctypes.SystemdUnitDropIn
								ok := eachKey(v, func(k string, v *fnode) bool {
									switch k {
									case "name":
										return fastStr(v, &d.Name)
									case "contents":
										return fastStr(v, &d.Contents)
									}
									return false
								})
								u.Dropins = append(u.Dropins, d)
								return ok
							})
						}
						return false
					})
					in.Systemd.Units = append(in.Systemd.Units, u)
					return ok
				})
			})
		case "storage":
			return eachKey(v, func(k string, v *fnode) bool {
				switch k {
				case "files":
					return eachItem(v, func(v *fnode) bool {
						var f ctypes.File
						ok := eachKey(v, func(k string, v *fnode) bool {
							switch k {
							case "append":
								return fastBool(v, &f.Append)
							case "contents":
								return eachKey(v, func(k string, v *fnode) bool {
									return k == "inline" && fastStr(v, &f.Contents.Inline)
								})
							}
							return fastNode(k, v, &f.Filesystem, &f.Path, &f.Mode, &f.Overwrite, &f.User, &f.Group)
						})
						in.Storage.Files = append(in.Storage.Files, f)
						return ok
					})
				case "directories":
					return eachItem(v, func(v *fnode) bool {
						var d ctypes.Directory
						ok := eachKey(v, func(k string, v *fnode) bool {
							return fastNode(k, v, &d.Filesystem, &d.Path, &d.Mode, &d.Overwrite, &d.User, &d.Group)
						})
						in.Storage.Directories = append(in.Storage.Directories, d)
						return ok
					})
				}
				return false
			})
		}
		return false
	})
}

// fastNode decodes the keys files and directories share.
func fastNode(k string, v *fnode, fs, path *string, mode **int, overwrite **bool, user **ctypes.FileUser, group **ctypes.FileGroup) bool {
	switch k {
	case "filesystem":
		return fastStr(v, fs)
	case "path":
		return fastStr(v, path)
	case "mode":
		*mode = new(int)
		return fastInt(v, *mode)
	case "overwrite":
		*overwrite = new(bool)
		return fastBool(v, *overwrite)
	case "user":
		*user = &ctypes.FileUser{}
		return fastOwner(v, &(*user).Id, &(*user).Name)
	case "group":
		*group = &ctypes.FileGroup{}
		return fastOwner(v, &(*group).Id, &(*group).Name)
	}
	return false
}

func fastOwner(v *fnode, id **int, name *string) bool {
	return eachKey(v, func(k string, v *fnode) bool {
		switch k {
		case "id":
			*id = new(int)
			return fastInt(v, *id)
		case "name":
			return fastStr(v, name)
		}
		return false
	})
}

func eachKey(n *fnode, f func(k string, v *fnode) bool) bool {
	if n == nil || n.kind != 'm' {
		return false
	}
	for i, k := range n.keys {
		if !f(k, n.vals[i]) {
			return false
		}
	}
	return true
}

func eachItem(n *fnode, f func(v *fnode) bool) bool {
	if n == nil || n.kind != 's' {
		return false
	}
	for _, v := range n.items {
		if !f(v) {
			return false
		}
	}
	return true
}

// fastStr: yaml.v3 decodes any non-null scalar into a string as written;
// the parser has left only scalars that are not null.
func fastStr(n *fnode, out *string) bool {
	if n == nil || n.kind != 'v' {
		return false
	}
	*out = n.s
	return true
}

func fastBool(n *fnode, out *bool) bool {
	if n == nil || n.kind != 'v' || n.block {
		return false
	}
	switch n.s {
	case "true":
		*out = true
	case "false":
		*out = false
	default:
		return false
	}
	return true
}

// fastInt accepts decimal integers and octal ones with a leading 0, of at
// most nine digits: yaml.v3 reads both with strconv.ParseInt(s, 0, 64).
func fastInt(n *fnode, out *int) bool {
	if n == nil || n.kind != 'v' || n.block || len(n.s) > 9 {
		return false
	}
	s, base := n.s, 10
	if len(s) > 1 && s[0] == '0' {
		s, base = s[1:], 8
	}
	v := 0
	for i := 0; i < len(s); i++ {
		d := int(s[i]) - '0'
		if d < 0 || d >= base {
			return false
		}
		v = v*base + d
	}
	*out = v
	return true
}

// convertFastCLC is the transpiler's conversion of the keys fastCLC
// accepts: its files, then its directories, then its units (the order of
// its converters), with the same defaults.
func convertFastCLC(in *ctypes.Config) ign23types.Config {
	out := ign23types.Config{Ignition: ign23types.Ignition{Version: "2.3.0"}}
	for _, f := range in.Storage.Files {
		if f.Mode == nil {
			f.Mode = ptrTo(ctypes.DefaultFileMode)
		}
		if f.Filesystem == "" {
			f.Filesystem = "root"
		}
		nf := ign23types.File{
			Node:          ign23types.Node{Filesystem: f.Filesystem, Path: f.Path, Overwrite: f.Overwrite},
			FileEmbedded1: ign23types.FileEmbedded1{Mode: f.Mode, Append: f.Append},
		}
		nf.User, nf.Group = fastOwners(f.User, f.Group)
		nf.Contents.Source = legacyDataURL(f.Contents.Inline)
		out.Storage.Files = append(out.Storage.Files, nf)
	}
	for _, d := range in.Storage.Directories {
		if d.Mode == nil {
			d.Mode = ptrTo(ctypes.DefaultDirMode)
		}
		if d.Filesystem == "" {
			d.Filesystem = "root"
		}
		nd := ign23types.Directory{
			Node:               ign23types.Node{Filesystem: d.Filesystem, Path: d.Path, Overwrite: d.Overwrite},
			DirectoryEmbedded1: ign23types.DirectoryEmbedded1{Mode: d.Mode},
		}
		nd.User, nd.Group = fastOwners(d.User, d.Group)
		out.Storage.Directories = append(out.Storage.Directories, nd)
	}
	out.Systemd.Units = legacyUnits(in.Systemd.Units)
	return out
}

func fastOwners(u *ctypes.FileUser, g *ctypes.FileGroup) (*ign23types.NodeUser, *ign23types.NodeGroup) {
	var nu *ign23types.NodeUser
	var ng *ign23types.NodeGroup
	if u != nil {
		nu = &ign23types.NodeUser{ID: u.Id, Name: u.Name}
	}
	if g != nil {
		ng = &ign23types.NodeGroup{ID: g.Id, Name: g.Name}
	}
	return nu, ng
}
