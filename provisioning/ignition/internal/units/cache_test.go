package units

import "testing"

func TestCleanSet(t *testing.T) {
	var c CleanSet
	k := Key{Name: "a.service", Enabled: true, Contents: "[Unit]\n"}
	if c.Has(k) {
		t.Fatal("empty set has a key")
	}
	c.Add(k)
	if !c.Has(k) || c.Has(Key{Name: "a.service", Contents: "[Unit]\n"}) {
		t.Fatal("Has does not match the whole key")
	}
	for i := range MaxClean {
		c.Add(Key{Name: string(rune('a' + i%26)), Contents: string(rune(i))})
	}
	if c.Has(k) {
		t.Fatal("a full set did not start over")
	}
}
