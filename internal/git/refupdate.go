package git

import (
	"context"
	"fmt"
	"strings"
)

// RefUpdate is one ref change of an UpdateRefs transaction: New set
// points Ref at New; Delete deletes it. Old, when set, is the commit Ref
// must be at for the transaction to go ahead (the compare of a
// compare-and-swap); "" checks nothing.
type RefUpdate struct {
	Ref    string
	New    string
	Old    string
	Delete bool
}

// UpdateRefs applies updates in one git process as one transaction (`git
// update-ref --stdin`: start, the updates, prepare, commit): all of them
// or, when one cannot be made (a ref is not at its Old, a ref's lock is
// held), none.
func UpdateRefs(ctx context.Context, dir string, updates ...RefUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("start\n")
	for _, u := range updates {
		if u.Ref == "" || strings.ContainsAny(u.Ref+u.New+u.Old, " \n\x00") {
			return fmt.Errorf("updating refs: bad ref update %+v", u)
		}
		switch {
		case u.Delete:
			b.WriteString("delete " + u.Ref)
		case u.New == "":
			return fmt.Errorf("updating refs: no new value for %s", u.Ref)
		default:
			b.WriteString("update " + u.Ref + " " + u.New)
		}
		// An empty old value given would mean "must not exist": none is
		// given when nothing is checked.
		if u.Old != "" {
			b.WriteString(" " + u.Old)
		}
		b.WriteByte('\n')
	}
	b.WriteString("prepare\ncommit\n")
	_, err := runInput(ctx, dir, nil, b.String(), "update-ref", "--stdin")
	return err
}
